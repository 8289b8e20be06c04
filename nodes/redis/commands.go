package redis

import (
	"math"
	"strconv"
	"strings"

	"github.com/locksim/locksim/sim"
)

// cmdSpec is one entry of the command table: the full name used in error
// texts, the arity (negative: at least -arity arguments, counting the
// command name), whether it is a write command (CMD_WRITE: refused with
// READONLY on a replica and with NOREPLICAS without enough good replicas)
// and the implementation. Container commands (SCRIPT, CONFIG) have
// subcommands.
type cmdSpec struct {
	name  string
	arity int
	write bool
	run   func(n *Node, a []string) Value
	subs  map[string]*cmdSpec
	// noScript is CMD_NOSCRIPT (set from notAllowedInScripts).
	noScript bool
	// asking is CMD_ASKING: served in a slot this node imports without
	// the client's ASKING (RESTORE-ASKING).
	asking bool
}

// Arities and flags follow the Redis 7.2 command table (src/commands.def).
var commands map[string]*cmdSpec

func init() {
	list := []*cmdSpec{
		{name: "get", arity: 2, run: cmdGet},
		{name: "set", arity: -3, write: true, run: cmdSet},
		{name: "setnx", arity: 3, write: true, run: cmdSetNX},
		{name: "getset", arity: 3, write: true, run: cmdGetSet},
		{name: "del", arity: -2, write: true, run: cmdDel},
		{name: "exists", arity: -2, run: cmdExists},
		{name: "pttl", arity: 2, run: cmdPTTL},
		{name: "ttl", arity: 2, run: cmdTTL},
		{name: "expire", arity: -3, write: true, run: cmdExpire},
		{name: "pexpire", arity: -3, write: true, run: cmdPExpire},
		{name: "expireat", arity: -3, write: true, run: cmdExpireAt},
		{name: "pexpireat", arity: -3, write: true, run: cmdPExpireAt},
		{name: "incr", arity: 2, write: true, run: cmdIncr},
		{name: "decr", arity: 2, write: true, run: cmdDecr},
		{name: "incrby", arity: 3, write: true, run: cmdIncrBy},
		{name: "decrby", arity: 3, write: true, run: cmdDecrBy},
		// Transactions (multi.go); all are NOSCRIPT (R 7.2.4
		// src/commands/{multi,exec,discard,watch,unwatch}.json).
		{name: "multi", arity: 1, run: cmdMulti, noScript: true},
		{name: "exec", arity: 1, run: cmdExec, noScript: true},
		{name: "discard", arity: 1, run: cmdDiscard, noScript: true},
		{name: "watch", arity: -2, run: cmdWatch, noScript: true},
		{name: "unwatch", arity: 1, run: cmdUnwatch, noScript: true},
		{name: "hexists", arity: 3, run: cmdHExists},
		{name: "hget", arity: 3, run: cmdHGet},
		{name: "hincrby", arity: 4, write: true, run: cmdHIncrBy},
		{name: "hset", arity: -4, write: true, run: cmdHSet},
		{name: "dbsize", arity: 1, run: cmdDBSize},
		{name: "flushall", arity: -1, write: true, run: cmdFlushAll},
		{name: "publish", arity: 3, run: cmdPublish},
		{name: "ping", arity: -1, run: cmdPing},
		{name: "wait", arity: 3, run: cmdWait},
		{name: "replicaof", arity: 3, run: cmdReplicaOf},
		{name: "slaveof", arity: 3, run: cmdReplicaOf},
		{name: "role", arity: 1, run: cmdRole},
		{name: "info", arity: -1, run: cmdInfo},
		{name: "eval", arity: -3, run: cmdEval},
		{name: "evalsha", arity: -3, run: cmdEvalSHA},
		{name: "debug", arity: -2, run: cmdDebug},
		{name: "cluster", arity: -2, run: cmdCluster},
		{name: "asking", arity: 1, run: cmdAsking},
		{name: "readwrite", arity: 1, run: cmdReadWrite},
		{name: "readonly", arity: 1, run: cmdReadOnly},
		// Slot migration (cluster_migrate.go; R 7.0.15
		// src/commands/{migrate,restore,restore-asking}.json).
		{name: "migrate", arity: -6, write: true, run: cmdMigrate},
		{name: "restore", arity: -4, write: true, run: cmdRestore},
		{name: "restore-asking", arity: -4, write: true, asking: true, run: cmdRestore},
		{name: "script", arity: -2, subs: map[string]*cmdSpec{
			"load":   {name: "script|load", arity: 3, run: cmdScriptLoad},
			"exists": {name: "script|exists", arity: -3, run: cmdScriptExists},
			"flush":  {name: "script|flush", arity: -2, run: cmdScriptFlush},
		}},
		{name: "config", arity: -2, subs: map[string]*cmdSpec{
			"rewrite": {name: "config|rewrite", arity: 2, run: cmdConfigRewrite},
			"get":     {name: "config|get", arity: -3, run: notModelled("CONFIG GET")},
			"set":     {name: "config|set", arity: -4, run: notModelled("CONFIG SET")},
		}},
	}
	commands = make(map[string]*cmdSpec, len(list))
	for _, c := range list {
		c.noScript = c.noScript || notAllowedInScripts[c.name]
		commands[c.name] = c
		if len(c.name) < len(cmdShapes) {
			sh := &cmdShapes[len(c.name)][c.name[0]&31]
			*sh = append(*sh, c)
		}
	}
}

// cmdShapes holds the command table by the length of a name and its first
// letter (case folded), for lookupCommand: a bucket holds one or two
// commands, so a lookup is a length check and a byte compare or two rather
// than a lower-cased copy and a string hash (this runs for every command
// and every redis.call of a script; the map alone was about 3% of a
// Redlock cycle's CPU).
var cmdShapes [24][32][]*cmdSpec

// lookupCommand finds a top-level command by its name in any case; the
// same as lookupLower(commands, name).
func lookupCommand(name string) *cmdSpec {
	if len(name) == 0 || len(name) >= len(cmdShapes) {
		return lookupLower(commands, name)
	}
	for _, c := range cmdShapes[len(name)][name[0]&31] {
		if asciiEqualFold(name, c.name) {
			return c
		}
	}
	return nil
}

func notModelled(what string) func(*Node, []string) Value {
	return func(*Node, []string) Value { return errNotModelled(what) }
}

// resolve finds the command (or subcommand) of argv and checks its arity
// (lookupCommand and commandCheckArity, R 7.2.4 src/server.c:3740-3795).
// lookupLower finds a command by its name in any case without allocating:
// the compiler does not copy m[string(b)] lookups, and command names are
// short ASCII (this runs for every command, so it is on the hot path).
func lookupLower(m map[string]*cmdSpec, name string) *cmdSpec {
	var buf [24]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(name)]
	}
	b := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return m[string(b)]
}

// lowerOpt is strings.ToLower for an option of SET: the option names are
// short ASCII, so those are returned as constants without allocating
// (strings.ToLower of "NX" allocates, and SET runs for every lock attempt);
// anything else goes through strings.ToLower.
func lowerOpt(s string) string {
	for _, o := range setOptions {
		if len(s) == len(o) && asciiEqualFold(s, o) {
			return o
		}
	}
	return strings.ToLower(s)
}

// setOptions are the option names of SET, in lower case.
var setOptions = [...]string{"nx", "xx", "get", "keepttl", "ex", "px", "exat", "pxat"}

// asciiEqualFold reports whether s, folded to lower case byte by byte (ASCII
// only), equals lower. For s of ASCII letters this is strings.ToLower(s) ==
// lower; a non-ASCII byte never matches an ASCII one.
func asciiEqualFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func resolve(a []string) (*cmdSpec, *Value) {
	if len(a) == 0 {
		v := errUnknownCommand([]string{""})
		return nil, &v
	}
	spec := lookupCommand(a[0])
	if spec == nil {
		v := errUnknownCommand(a)
		if name := strings.ToLower(a[0]); realCommands[name] && name != "hello" {
			// A command of real Redis the node does not implement: a
			// limit of the simulation, said as one. HELLO keeps the
			// unknown-command reply of a Redis before 6, on which
			// clients fall back to RESP2 (go-redis v9 does, redis.go:1027).
			v = errNotModelled(strings.ToUpper(a[0]))
		}
		return nil, &v
	}
	if spec.subs != nil && len(a) >= 2 {
		sub := lookupLower(spec.subs, a[1])
		if sub == nil {
			v := errUnknownSubcommand(a[0], a[1])
			if realCommands[spec.name+"|"+strings.ToLower(a[1])] {
				v = errNotModelled(strings.ToUpper(a[0] + " " + a[1]))
			}
			return nil, &v
		}
		spec = sub
	}
	if (spec.arity > 0 && spec.arity != len(a)) || len(a) < -spec.arity {
		v := errArity(spec.name)
		return nil, &v
	}
	return spec, nil
}

// process runs one client command: lookup, arity, the NOREPLICAS and
// READONLY checks of processCommand (R 7.2.4 src/server.c:4048-4061), then
// the command, or, inside MULTI, its queueing (server.c:4147-4156). A
// command rejected by these checks flags the client's transaction
// (rejectCommand, server.c:3700-3710); EXEC is checked with the flags of
// the commands it queued (server.c:3897-3900).
func (n *Node) process(a []string) Value {
	spec, errv := resolve(a)
	if errv != nil {
		n.flagTransaction()
		return *errv
	}
	exec := spec.name == "exec"
	// Cluster redirection before anything else but arity
	// (processCommand, R 7.0.15 src/server.c:3690-3716): not for the
	// master's stream; inside MULTI each command is checked as it is
	// queued, and EXEC checks what it queued again.
	if n.cl != nil && !n.cur.fromMaster && !n.loading {
		if v := n.clusterRedirect(spec, a); v != nil {
			return n.rejectCommand(*v, exec)
		}
	}
	if n.cfg.MaxMemory > 0 {
		// maxmemory: evict first, then refuse the commands that need memory
		// (server.c:3976-4004); inside MULTI every command but EXEC and
		// DISCARD is refused (server.c:3990-3998), and EXEC is refused when
		// it queued one that needs memory.
		oom := !n.performEvictions()
		deny := denyOOM[spec.name] || (exec && n.execQueuedDenyOOM()) ||
			(n.inMulti() && !exec && spec.name != "discard")
		if oom && deny {
			return n.rejectCommand(errOOM, exec)
		}
		// Saved for the script the command may run (scriptVerifyOOM):
		// "otherwise if we check OOM in the first write within script,
		// memory used by lua stack and arguments might interfere"
		// (R 7.0.15 src/server.c:3869-3874).
		n.mem.preCommandOOM = oom
	}
	if spec.write || (exec && n.execQueuedWrites()) {
		if !n.goodReplicasOK() {
			return n.rejectCommand(errNoReplicas, exec)
		}
		if n.isReplica() && n.cfg.ReplicaReadOnly && !n.cur.fromMaster {
			return n.rejectCommand(errReadOnly, exec)
		}
	}
	if n.inMulti() {
		switch spec.name {
		case "exec", "discard", "multi", "watch":
		default:
			return n.queueCommand(spec, a)
		}
	}
	return n.runSpec(spec, a)
}

// runSpec runs a command with its name in the execution context (for the
// history's KeyActs: which command acted on another client's key).
func (n *Node) runSpec(spec *cmdSpec, a []string) Value {
	prev := n.cur.name
	n.cur.name = spec.name
	v := spec.run(n, a)
	n.cur.name = prev
	return v
}

// ---- strings ----

const (
	setNX = 1 << iota
	setXX
	setEX
	setPX
	setKeepTTL
	setGet
	setEXAT
	setPXAT
)

// parseSetOptions is parseExtendedStringArgumentsOrReply for SET
// (R 7.2.4 src/t_string.c:204-297).
func parseSetOptions(a []string) (flags int, expire string, ok bool) {
	for j := 3; j < len(a); j++ {
		opt := lowerOpt(a[j])
		next := j < len(a)-1
		switch {
		case opt == "nx" && flags&setXX == 0:
			flags |= setNX
		case opt == "xx" && flags&setNX == 0:
			flags |= setXX
		case opt == "get":
			flags |= setGet
		case opt == "keepttl" && flags&(setEX|setEXAT|setPX|setPXAT) == 0:
			flags |= setKeepTTL
		case opt == "ex" && flags&(setKeepTTL|setEXAT|setPX|setPXAT) == 0 && next:
			flags |= setEX
			expire = a[j+1]
			j++
		case opt == "px" && flags&(setKeepTTL|setEX|setEXAT|setPXAT) == 0 && next:
			flags |= setPX
			expire = a[j+1]
			j++
		case opt == "exat" && flags&(setKeepTTL|setEX|setPX|setPXAT) == 0 && next:
			flags |= setEXAT
			expire = a[j+1]
			j++
		case opt == "pxat" && flags&(setKeepTTL|setEX|setEXAT|setPX) == 0 && next:
			flags |= setPXAT
			expire = a[j+1]
			j++
		default:
			return 0, "", false
		}
	}
	return flags, expire, true
}

// expireMillis is getExpireMillisecondsOrReply (R 7.2.4
// src/t_string.c:165-193): the absolute deadline of an EX/PX/EXAT/PXAT
// argument. EX and PX add commandTimeSnapshot() (t_string.c:176-180).
func (n *Node) expireMillis(arg string, flags int, cmd string) (int64, *Value) {
	ms, ok := parseLL(arg)
	if !ok {
		return 0, &errNotInteger
	}
	seconds := flags&(setEX|setEXAT) != 0
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		v := errExpireTime(cmd)
		return 0, &v
	}
	if seconds {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		ms += n.now // may wrap, as in C; caught below
	}
	if ms <= 0 {
		v := errExpireTime(cmd)
		return 0, &v
	}
	return ms, nil
}

// cmdSet is setCommand/setGenericCommand (R 7.2.4 src/t_string.c:83-150).
// NB: a PXAT/EXAT deadline already in the past stores the key anyway (7.x
// SET does not call checkAlreadyExpired); it is expired at once and the next
// access or expiry cycle deletes it and propagates DEL.
func cmdSet(n *Node, a []string) Value {
	flags, expire, ok := parseSetOptions(a)
	if !ok {
		return errSyntax
	}
	key, val := a[1], a[2]
	var when int64
	if expire != "" {
		w, errv := n.expireMillis(expire, flags, "set")
		if errv != nil {
			return *errv
		}
		when = w
	}
	var old Value
	if flags&setGet != 0 {
		old = getGeneric(n, key)
		if old.IsErr() {
			return old
		}
	}
	found := n.lookup(key, true) != nil
	if (flags&setNX != 0 && found) || (flags&setXX != 0 && !found) {
		if flags&setGet != 0 {
			return old
		}
		return Nil()
	}
	n.setString(key, val, flags&setKeepTTL != 0 || expire != "")
	n.dirty++
	if expire != "" {
		n.setExpire(key, when)
		if flags&setPXAT == 0 {
			// Propagated as SET key value PXAT <abs-ms> (t_string.c:116-123).
			if n.keepsProp() {
				c := Cmd(n.carveWords(5))
				c[0], c[1], c[2], c[3], c[4] = "SET", key, val, "PXAT", n.carveInt(when)
				n.propagate(c)
			} else {
				n.dropProp()
			}
		} else {
			n.propagate(Cmd(a))
		}
	} else if flags&setGet != 0 {
		// Propagated without GET (t_string.c:133-149).
		c := Cmd{}
		for j, x := range a {
			if j >= 3 && strings.EqualFold(x, "get") {
				continue
			}
			c = append(c, x)
		}
		n.propagate(c)
	} else {
		n.propagate(Cmd(a))
	}
	n.logKeySet(key)
	if flags&setGet != 0 {
		return old
	}
	return OK()
}

// cmdSetNX is setnxCommand (R 7.2.4 src/t_string.c:setnxCommand): SET with
// NX and no expiry, answering :1 when it stored the key and :0 when the key
// existed. It is propagated as it is.
func cmdSetNX(n *Node, a []string) Value {
	key, val := a[1], a[2]
	if n.lookup(key, true) != nil {
		return Int(0)
	}
	n.setString(key, val, false)
	n.dirty++
	n.propagate(Cmd(a))
	n.logKeySet(key)
	return Int(1)
}

// cmdGetSet is getsetCommand (R 7.2.4 src/t_string.c:425-436): the old value
// (nil when missing, WRONGTYPE for a hash, which is then left alone), then
// setKey(..., 0), which removes any TTL (db.c:313); propagated as SET key
// value. Deprecated since 6.2.0 (src/commands/getset.json:9-10) but still
// served, and the pre-2.6.12 SETNX lock recipe relies on it.
func cmdGetSet(n *Node, a []string) Value {
	key, val := a[1], a[2]
	old := getGeneric(n, key)
	if old.IsErr() {
		return old
	}
	n.setString(key, val, false)
	n.dirty++
	n.propagate(Cmd{"SET", key, val})
	n.logKeySet(key)
	return old
}

// getGeneric is getGenericCommand (R 7.2.4 src/t_string.c:316-327).
func getGeneric(n *Node, key string) Value {
	e := n.lookup(key, false)
	if e == nil {
		return Nil()
	}
	if e.isHash {
		return errWrongType
	}
	return Bulk(e.str)
}

func cmdGet(n *Node, a []string) Value { return getGeneric(n, a[1]) }

// cmdDel is delGenericCommand (R 7.2.4 src/db.c:718-734): expired keys are
// first expired (and that DEL propagated), then deleted keys counted.
func cmdDel(n *Node, a []string) Value {
	var deleted int64
	for _, k := range a[1:] {
		n.lookup(k, false) // expireIfNeeded
		if e, ok := n.db[k]; ok {
			n.noteRemoval(k, e, "DEL")
			n.removeKey(k)
			if !n.quiet {
				n.logBytes(EventKeyDel, appendQuote(n.scratch[:0], k), sim.Str("key", k))
			}
			deleted++
		}
	}
	if deleted > 0 {
		n.dirty += deleted
		n.propagate(Cmd(a))
	}
	return Int(deleted)
}

// cmdExists is existsCommand (R 7.2.4 src/db.c:746-754): a key named twice
// counts twice.
func cmdExists(n *Node, a []string) Value {
	var count int64
	for _, k := range a[1:] {
		if n.lookup(k, false) != nil {
			count++
		}
	}
	return Int(count)
}

// ttlGeneric is ttlGenericCommand (R 7.2.4 src/expire.c:692-710): -2 for a
// missing key, -1 without deadline, otherwise max(0, deadline - now),
// rounded to seconds for TTL.
func ttlGeneric(n *Node, key string, ms bool) Value {
	e := n.lookup(key, false)
	if e == nil {
		return Int(-2)
	}
	if !e.hasExp {
		return Int(-1)
	}
	ttl := e.exp - n.now
	if ttl < 0 {
		ttl = 0
	}
	if ms {
		return Int(ttl)
	}
	return Int((ttl + 500) / 1000)
}

func cmdPTTL(n *Node, a []string) Value { return ttlGeneric(n, a[1], true) }
func cmdTTL(n *Node, a []string) Value  { return ttlGeneric(n, a[1], false) }

const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// expireGeneric is expireGenericCommand (R 7.2.4 src/expire.c:541-670):
// basetime is commandTimeSnapshot() for EXPIRE/PEXPIRE and 0 for the AT
// forms (expire.c:667-690). A deadline already past on a master deletes the
// key and propagates DEL (checkAlreadyExpired, expire.c:478-486); otherwise
// the command propagates as PEXPIREAT <abs-ms> (expire.c:645-658).
func expireGeneric(n *Node, a []string, basetime int64, seconds bool) Value {
	key := a[1]
	cmd := strings.ToLower(a[0])
	var flag int
	nx, xx, gt, lt := false, false, false, false
	for _, opt := range a[3:] {
		switch strings.ToLower(opt) {
		case "nx":
			flag |= expNX
			nx = true
		case "xx":
			flag |= expXX
			xx = true
		case "gt":
			flag |= expGT
			gt = true
		case "lt":
			flag |= expLT
			lt = true
		default:
			return Err("ERR Unsupported option " + opt)
		}
	}
	if (nx && xx) || (nx && gt) || (nx && lt) {
		return Err("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if gt && lt {
		return Err("ERR GT and LT options at the same time are not compatible")
	}
	when, ok := parseLL(a[2])
	if !ok {
		return errNotInteger
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return errExpireTime(cmd)
		}
		when *= 1000
	}
	if when > math.MaxInt64-basetime {
		return errExpireTime(cmd)
	}
	when += basetime
	e := n.lookup(key, true)
	if e == nil {
		return Int(0)
	}
	if flag != 0 {
		current := int64(-1)
		if e.hasExp {
			current = e.exp
		}
		if flag&expNX != 0 && current != -1 {
			return Int(0)
		}
		if flag&expXX != 0 && current == -1 {
			return Int(0)
		}
		if flag&expGT != 0 && (when <= current || current == -1) {
			return Int(0)
		}
		if flag&expLT != 0 && current != -1 && when >= current {
			return Int(0)
		}
	}
	n.noteAct(key, e)
	if when <= n.now && !n.loading && !n.isReplica() {
		n.removeKey(key)
		n.logfAttrs(EventKeyDel, []sim.Attr{sim.Str("key", key), sim.Int64("deadline", when), sim.Str("why", "already past")}, "%s deadline=%d already past", strconv.Quote(key), when)
		n.dirty++
		n.propagate(Cmd{"DEL", key})
		return Int(1)
	}
	n.setExpire(key, when)
	n.dirty++
	c := Cmd{"PEXPIREAT", key, strconv.FormatInt(when, 10)}
	n.propagate(append(c, a[3:]...))
	return Int(1)
}

func cmdExpire(n *Node, a []string) Value    { return expireGeneric(n, a, n.now, true) }
func cmdPExpire(n *Node, a []string) Value   { return expireGeneric(n, a, n.now, false) }
func cmdExpireAt(n *Node, a []string) Value  { return expireGeneric(n, a, 0, true) }
func cmdPExpireAt(n *Node, a []string) Value { return expireGeneric(n, a, 0, false) }

// incrDecr is incrDecrCommand (R 7.2.4 src/t_string.c:601-635): a missing
// key counts as 0, the value must be a 64-bit integer, the result must not
// overflow. The key keeps its deadline (the value is replaced in place).
func incrDecr(n *Node, a []string, incr int64) Value {
	key := a[1]
	e := n.lookup(key, true)
	var v int64
	if e != nil {
		if e.isHash {
			return errWrongType
		}
		x, ok := parseLL(e.str)
		if !ok {
			return errNotInteger
		}
		v = x
	}
	if (incr < 0 && v < 0 && incr < math.MinInt64-v) || (incr > 0 && v > 0 && incr > math.MaxInt64-v) {
		return errOverflow
	}
	v += incr
	s := strconv.FormatInt(v, 10)
	if e != nil {
		e.str = s
		n.keyModified(key)
	} else {
		n.setString(key, s, false)
	}
	n.dirty++
	n.propagate(Cmd(a))
	return Int(v)
}

func cmdIncr(n *Node, a []string) Value { return incrDecr(n, a, 1) }
func cmdDecr(n *Node, a []string) Value { return incrDecr(n, a, -1) }

// cmdIncrBy is incrbyCommand (t_string.c:645-650): the increment is parsed
// before the key is looked up.
func cmdIncrBy(n *Node, a []string) Value {
	incr, ok := parseLL(a[2])
	if !ok {
		return errNotInteger
	}
	return incrDecr(n, a, incr)
}

// cmdDecrBy is decrbyCommand (t_string.c:652-662): negating LLONG_MIN
// would overflow.
func cmdDecrBy(n *Node, a []string) Value {
	incr, ok := parseLL(a[2])
	if !ok {
		return errNotInteger
	}
	if incr == math.MinInt64 {
		return Err("ERR decrement would overflow")
	}
	return incrDecr(n, a, -incr)
}

// ---- hashes ----

func (n *Node) lookupHash(key string, write bool) (*entry, *Value) {
	e := n.lookup(key, write)
	if e != nil && !e.isHash {
		return nil, &errWrongType
	}
	return e, nil
}

// hashLookupWriteOrCreate is hashTypeLookupWriteOrCreate (R 7.2.4
// src/t_hash.c).
func (n *Node) hashLookupWriteOrCreate(key string) (*entry, bool, *Value) {
	e, errv := n.lookupHash(key, true)
	if errv != nil {
		return nil, false, errv
	}
	if e != nil {
		return e, false, nil
	}
	e = &entry{isHash: true, hash: map[string]string{}}
	n.db[key] = e
	n.forgetMemo()
	return e, true, nil
}

func cmdHExists(n *Node, a []string) Value {
	e, errv := n.lookupHash(a[1], false)
	if errv != nil {
		return *errv
	}
	if e == nil {
		return Int(0)
	}
	if _, ok := e.hash[a[2]]; ok {
		return Int(1)
	}
	return Int(0)
}

func cmdHGet(n *Node, a []string) Value {
	e, errv := n.lookupHash(a[1], false)
	if errv != nil {
		return *errv
	}
	if e == nil {
		return Nil()
	}
	if v, ok := e.hash[a[2]]; ok {
		return Bulk(v)
	}
	return Nil()
}

// cmdHIncrBy is hincrbyCommand (R 7.2.4 src/t_hash.c:635-670): the
// increment is parsed first, then the key looked up or created.
func cmdHIncrBy(n *Node, a []string) Value {
	incr, ok := parseLL(a[3])
	if !ok {
		return errNotInteger
	}
	e, created, errv := n.hashLookupWriteOrCreate(a[1])
	if errv != nil {
		return *errv
	}
	var v int64
	if s, ok := e.hash[a[2]]; ok {
		x, ok := parseLL(s)
		if !ok {
			return errHashNotInt
		}
		v = x
	}
	if (incr < 0 && v < 0 && incr < math.MinInt64-v) || (incr > 0 && v > 0 && incr > math.MaxInt64-v) {
		return errOverflow
	}
	v += incr
	e.hash[a[2]] = strconv.FormatInt(v, 10)
	n.noteHashAct(a[1], e, created)
	n.keyModified(a[1])
	n.dirty++
	n.propagate(Cmd(a))
	if created {
		n.logKeySet(a[1])
	}
	return Int(v)
}

// cmdHSet is hsetCommand (R 7.2.4 src/t_hash.c): field/value pairs.
func cmdHSet(n *Node, a []string) Value {
	if len(a)%2 == 1 {
		return errArity("hset")
	}
	e, created, errv := n.hashLookupWriteOrCreate(a[1])
	if errv != nil {
		return *errv
	}
	var added int64
	for i := 2; i < len(a); i += 2 {
		if _, ok := e.hash[a[i]]; !ok {
			added++
		}
		e.hash[a[i]] = a[i+1]
	}
	n.noteHashAct(a[1], e, created)
	n.keyModified(a[1])
	n.dirty += int64((len(a) - 2) / 2)
	n.propagate(Cmd(a))
	if created {
		n.logKeySet(a[1])
	}
	return Int(added)
}

// ---- server ----

func cmdDBSize(n *Node, a []string) Value { return Int(int64(len(n.db))) }

// cmdFlushAll is flushallCommand (R 7.2.4 src/db.c): empty the keyspace,
// save an RDB snapshot when save points are configured, propagate.
func cmdFlushAll(n *Node, a []string) Value {
	if len(a) > 2 || (len(a) == 2 && !strings.EqualFold(a[1], "sync") && !strings.EqualFold(a[1], "async")) {
		return errSyntax
	}
	removed := int64(len(n.db))
	for _, k := range n.sortedKeys() {
		n.logfAttrs(EventKeyDel, []sim.Attr{sim.Str("key", k), sim.Str("why", "flushall")}, "%s flushall", strconv.Quote(k))
	}
	n.flushData()
	n.dirty += removed
	if len(n.cfg.Save) > 0 && !n.loading {
		n.rdbSave("flushall")
	}
	n.dirty++
	n.propagate(Cmd(a))
	return OK()
}

// cmdPublish answers PUBLISH with 0 receivers. Simplification: the model
// has no subscribers, and PUBLISH is not propagated to replicas.
func cmdPublish(n *Node, a []string) Value { return Int(0) }

// cmdPing is pingCommand: PONG, or the argument echoed.
func cmdPing(n *Node, a []string) Value {
	switch len(a) {
	case 1:
		return Status("PONG")
	case 2:
		return Bulk(a[1])
	}
	return errArity("ping")
}

// cmdDebug implements DEBUG SET-ACTIVE-EXPIRE 0|1 (R src/debug.c), which
// the conformance suite uses to observe a replica hiding expired keys.
func cmdDebug(n *Node, a []string) Value {
	if strings.EqualFold(a[1], "set-active-expire") && len(a) == 3 {
		n.activeExpire = a[2] != "0"
		return OK()
	}
	return errNotModelled("DEBUG " + strings.ToUpper(a[1]))
}
