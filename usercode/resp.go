package usercode

import (
	"errors"
	"strconv"

	"github.com/locksim/locksim/nodes/redis"
)

// RESP at the connection boundary: the bytes a real client writes are
// parsed into the same redis.Request values locksim's own clients send, and
// the node's redis.Reply values are encoded back into RESP2 bytes, so the
// node models do not change (issue 24). go-redis sends every command as an
// array of bulk strings (RESP2 "multibulk", the only request form parsed
// here; inline commands are refused).

var errInline = errors.New("locksim usercode: only RESP arrays of bulk strings are accepted as commands")

// parseCommand parses one command from the front of b. It returns the
// command's arguments and the number of bytes it took, or n == 0 when b
// holds no whole command yet.
func parseCommand(b []byte) (args []string, n int, err error) {
	if len(b) == 0 {
		return nil, 0, nil
	}
	if b[0] != '*' {
		return nil, 0, errInline
	}
	count, i, ok, err := parseLine(b, 1)
	if !ok || err != nil {
		return nil, 0, err
	}
	if count < 0 || count > 1<<20 {
		return nil, 0, errors.New("locksim usercode: bad RESP array length")
	}
	args = make([]string, 0, count)
	for range count {
		if i >= len(b) {
			return nil, 0, nil
		}
		if b[i] != '$' {
			return nil, 0, errInline
		}
		size, j, ok, err := parseLine(b, i+1)
		if !ok || err != nil {
			return nil, 0, err
		}
		if size < 0 || size > 512<<20 {
			return nil, 0, errors.New("locksim usercode: bad RESP bulk length")
		}
		if j+int(size)+2 > len(b) {
			return nil, 0, nil
		}
		args = append(args, string(b[j:j+int(size)]))
		i = j + int(size) + 2
	}
	return args, i, nil
}

// parseLine reads an integer terminated by CRLF at b[from:], returning it
// and the index after the CRLF; ok is false when the line is incomplete.
func parseLine(b []byte, from int) (v int64, next int, ok bool, err error) {
	for i := from; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			v, err := strconv.ParseInt(string(b[from:i]), 10, 64)
			if err != nil {
				return 0, 0, false, errors.New("locksim usercode: bad RESP length")
			}
			return v, i + 2, true, nil
		}
	}
	return 0, 0, false, nil
}

// appendValue encodes a reply value in RESP2 (a nil is the null bulk
// string, as Redis answers a missing key or a Lua nil).
func appendValue(b []byte, v redis.Value) []byte {
	switch v.Kind {
	case redis.KindNil:
		return append(b, "$-1\r\n"...)
	case redis.KindStatus:
		return append(append(append(b, '+'), v.Str...), "\r\n"...)
	case redis.KindError:
		return append(append(append(b, '-'), v.Str...), "\r\n"...)
	case redis.KindInt:
		return append(strconv.AppendInt(append(b, ':'), v.Int, 10), "\r\n"...)
	case redis.KindBulk:
		b = strconv.AppendInt(append(b, '$'), int64(len(v.Str)), 10)
		return append(append(append(b, "\r\n"...), v.Str...), "\r\n"...)
	case redis.KindArray:
		b = append(strconv.AppendInt(append(b, '*'), int64(len(v.Array)), 10), "\r\n"...)
		for _, e := range v.Array {
			b = appendValue(b, e)
		}
		return b
	}
	return append(b, "-ERR locksim: unknown reply kind\r\n"...)
}
