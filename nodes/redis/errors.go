package redis

import (
	"strconv"
	"strings"
)

// Error replies, with the exact texts of Redis 7.0/7.2 (R 7.2.4
// src/server.c createSharedObjects and the command implementations cited
// where they are used). The conformance suite checks them against a real
// redis-server.
var (
	errSyntax        = Err("ERR syntax error")
	errNotInteger    = Err("ERR value is not an integer or out of range")
	errWrongType     = Err("WRONGTYPE Operation against a key holding the wrong kind of value")
	errOverflow      = Err("ERR increment or decrement would overflow")
	errHashNotInt    = Err("ERR hash value is not an integer")
	errNoScript      = Err("NOSCRIPT No matching script. Please use EVAL.")
	errReadOnly      = Err("READONLY You can't write against a read only replica.")
	errNoReplicas    = Err("NOREPLICAS Not enough good replicas to write.")
	errWaitOnReplica = Err("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
	errUnblocked     = Err("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
)

// errArity is addReplyErrorArity (R 7.2.4 src/server.c:3786-3795).
func errArity(fullname string) Value {
	return Err("ERR wrong number of arguments for '" + fullname + "' command")
}

// errExpireTime is addReplyErrorExpireTime.
func errExpireTime(cmd string) Value {
	return Err("ERR invalid expire time in '" + cmd + "' command")
}

// errUnknownCommand is R 7.2.4 src/server.c:3769-3778: up to 128 bytes of
// arguments, each quoted, newlines replaced by spaces.
func errUnknownCommand(args []string) Value {
	var b strings.Builder
	for i := 1; i < len(args) && b.Len() < 128; i++ {
		a := args[i]
		if max := 128 - b.Len(); len(a) > max {
			a = a[:max]
		}
		b.WriteString("'" + a + "' ")
	}
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	if len(name) > 128 {
		name = name[:128]
	}
	return Err(sanitize("ERR unknown command '" + name + "', with args beginning with: " + b.String()))
}

// errUnknownSubcommand is R 7.2.4 src/server.c:3759-3767.
func errUnknownSubcommand(cmd, sub string) Value {
	if len(sub) > 128 {
		sub = sub[:128]
	}
	return Err(sanitize("ERR unknown subcommand '" + sub + "'. Try " + strings.ToUpper(cmd) + " HELP."))
}

// errNotModelled answers a real Redis command or option that the simulator
// does not implement.
func errNotModelled(what string) Value {
	return Err(sanitize("ERR locksim: " + what + " is not modelled by the simulated Redis node"))
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// parseLL is string2ll (R 7.2.4 src/util.c), which getLongLongFromObject
// uses: no sign other than a leading '-', no leading zeros, no spaces, at
// most 20 characters (LONG_STR_SIZE 21, src/util.h:51), no overflow.
func parseLL(s string) (int64, bool) {
	if len(s) == 0 || len(s) >= 21 {
		return 0, false
	}
	if len(s) == 1 && s[0] >= '0' && s[0] <= '9' {
		return int64(s[0] - '0'), true
	}
	p := s
	if p[0] == '-' {
		p = p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var u int64
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, false
		}
		u = u*10 + int64(p[i]-'0')
	}
	if len(p) <= 18 {
		// At most 18 digits cannot overflow (10^18 < 2^63): the value as
		// accumulated, without strconv's second pass.
		if s[0] == '-' {
			return -u, true
		}
		return u, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
