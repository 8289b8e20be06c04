package redis

// Differential conformance suite: the same command sequences run against the
// simulated node (in a sim kernel, driven by a tiny client process) and
// against a real redis-server (through go-redis), and every reply is
// compared. The real server's replies are the specification.
//
// Timing: the suite runs in exact mode (exact_test.go): the real server's
// wall clock is frozen with realmode/clockshift and stepped exactly as the
// model's virtual time, every command at its own millisecond, a sleep a
// clock step. Expiry and PTTL therefore see the same instant on both sides
// whatever the machine's load, and every reply is compared exactly. What a
// real server does in real time (a replica's sync) is awaited as a
// condition, never slept for.
//
// redis-server must be installed (apt-get install -y redis-server). When it
// is missing the suite skips loudly, and fails when CI=true.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/sim"
)

// ---- real servers ----

func redisServerPath(t *testing.T) string {
	t.Helper()
	return simtest.NeedBinaries(t, "the differential conformance suite against real Redis", "apt-get install -y redis-server", "redis-server")[0]
}

type realServer struct {
	port int
	rdb  *goredis.Client
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := launch.FreePort("127.0.0.1")
	require.NoError(t, err)
	return port
}

// startReal starts a redis-server with no persistence on a free loopback
// port and stops it when the test ends.
func startReal(t *testing.T, path string, extra ...string) *realServer {
	t.Helper()
	port := freePort(t)
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--dir", t.TempDir(), "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"}
	proc := exec.Command(path, append(args, extra...)...)
	require.NoError(t, proc.Start())
	t.Cleanup(func() {
		_ = proc.Process.Kill()
		_ = proc.Wait()
	})
	rdb := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2,
		MaxRetries: -1, DisableIdentity: true, PoolSize: 32})
	t.Cleanup(func() { _ = rdb.Close() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := rdb.Ping(context.Background()).Err(); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "redis-server on port %d did not answer PING", port)
		time.Sleep(20 * time.Millisecond)
	}
	return &realServer{port: port, rdb: rdb}
}

// do runs a command on the real server and converts the reply.
func (s *realServer) do(t *testing.T, args []string) Value {
	t.Helper()
	ia := make([]any, len(args))
	for i, a := range args {
		ia[i] = a
	}
	res, err := s.rdb.Do(context.Background(), ia...).Result()
	return fromGoRedis(t, res, err)
}

// fromGoRedis converts a go-redis result to a Value. NB: go-redis returns
// status and bulk replies alike as strings; the comparison treats them as
// one kind, and TestConformanceReplyKinds checks kinds with raw RESP.
func fromGoRedis(t *testing.T, res any, err error) Value {
	if errors.Is(err, goredis.Nil) {
		return Nil()
	}
	var rerr goredis.Error
	if errors.As(err, &rerr) {
		return Err(rerr.Error())
	}
	require.NoError(t, err)
	switch x := res.(type) {
	case nil:
		return Nil()
	case string:
		return Bulk(x)
	case int64:
		return Int(x)
	case []any:
		out := make([]Value, len(x))
		for i, e := range x {
			if er, ok := e.(error); ok {
				out[i] = fromGoRedis(t, nil, er)
				continue
			}
			out[i] = fromGoRedis(t, e, nil)
		}
		return Array(out...)
	}
	t.Fatalf("unexpected go-redis result %T %v", res, res)
	return Value{}
}

// same compares a model reply with a real one: status and bulk are one
// kind (go-redis cannot tell them apart), integers may differ by tol.
func same(model, real Value, tol int64) bool {
	str := func(k Kind) bool { return k == KindStatus || k == KindBulk }
	switch {
	case str(model.Kind) && str(real.Kind):
		return model.Str == real.Str
	case model.Kind != real.Kind:
		return false
	case model.Kind == KindInt:
		d := model.Int - real.Int
		return d <= tol && -d <= tol
	case model.Kind == KindError:
		return model.Str == real.Str
	case model.Kind == KindArray:
		if len(model.Array) != len(real.Array) {
			return false
		}
		for i := range model.Array {
			if !same(model.Array[i], real.Array[i], tol) {
				return false
			}
		}
	}
	return true
}

// ---- sequences ----

// step is one step of a sequence: a command to node (0: master, 1: replica),
// or a sleep. Arguments may hold deadlines relative to the moment of sending:
// "@ms+N" is now+N as Unix ms, "@s+N" now+N as Unix seconds.
type step struct {
	node  int
	args  []string
	margs []string // the model's arguments when they differ (host names)
	sleep time.Duration
	tol   int64             // tolerance for integer replies
	skip  bool              // do not compare
	view  func(Value) Value // compare only this view of both replies

	// Exact mode only (exact_test.go): actions between commands, and the
	// longest a command may block.
	jump    time.Duration // step every server's wall clock by jump
	crash   string        // "kill" (SIGKILL) or "shutdown" (SHUTDOWN) node
	restart bool          // restart node on its data directory
	block   time.Duration // the command blocks until this much wall time passes
	// await, if set, is polled on the real servers, without stepping the
	// clock, until it holds: what the servers do in real time (a replica's
	// sync) finishes before the next step. The model does nothing.
	await     func() bool
	awaitWhat string
}

func cmd(args ...string) step              { return step{args: args} }
func on(node int, args ...string) step     { return step{node: node, args: args} }
func timed(tol int64, args ...string) step { return step{args: args, tol: tol} }
func sleep(d time.Duration) step           { return step{sleep: d} }

// infoField compares one field of an INFO reply.
func infoField(node int, section, field string) step {
	return step{node: node, args: []string{"INFO", section}, view: func(v Value) Value {
		for _, line := range strings.Split(v.Str, "\r\n") {
			if strings.HasPrefix(line, field+":") {
				return Bulk(line)
			}
		}
		return Bulk(field + " missing")
	}}
}

// roleFields compares the given elements of a ROLE reply.
func roleFields(node int, idx ...int) step {
	return step{node: node, args: []string{"ROLE"}, view: func(v Value) Value {
		var out []Value
		for _, i := range idx {
			if i < len(v.Array) {
				out = append(out, v.Array[i])
			}
		}
		return Array(out...)
	}}
}

// ttlTol marks PTTL-like replies that a real-time comparison would need a
// tolerance for; exact mode (exactMismatches) compares them without one,
// since both sides read the same frozen instant.
const ttlTol = 25

// resolveArgs replaces deadline placeholders using the wall clock now.
func resolveArgs(args []string, now time.Time) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "@ms"):
			d, _ := strconv.ParseInt(a[3:], 10, 64)
			out[i] = strconv.FormatInt(now.UnixMilli()+d, 10)
		case strings.HasPrefix(a, "@s"):
			d, _ := strconv.ParseInt(a[2:], 10, 64)
			out[i] = strconv.FormatInt(now.Unix()+d, 10)
		default:
			out[i] = a
		}
	}
	return out
}

// played is a command as the real server saw it.
type played struct {
	step
	at   time.Duration // since the start of the sequence
	real Value
}

// mismatches compares the two runs and describes every difference.
func mismatches(plays []played, model []Value) []string {
	var out []string
	for i, p := range plays {
		m, r := model[i], p.real
		if p.view != nil {
			m, r = p.view(m), p.view(r)
		}
		if p.skip || same(m, r, p.tol) {
			continue
		}
		out = append(out, fmt.Sprintf("step %d at %v on node %d: %q\n\treal:  %v\n\tmodel: %v", i, p.at.Round(time.Millisecond), p.node, p.args, r, m))
	}
	return out
}

func single() []nodeSpec { return []nodeSpec{{name: "A", cfg: DefaultConfig()}} }

// ---- fixed sequences ----

func TestConformance(t *testing.T) {
	w := newExactWorld(t)
	w.start(launch.RedisOptions{Name: "A"})
	reset := []step{cmd("FLUSHALL"), cmd("SCRIPT", "FLUSH")}
	lock, val := "lock", "v1"
	cases := []struct {
		name  string
		steps []step
	}{
		{"errors", []step{
			cmd("NOSUCH"), cmd("nosuch", "a", "b"), cmd("SET"), cmd("SET", "k"), cmd("GET"), cmd("GET", "a", "b"),
			cmd("DEL"), cmd("EXISTS"), cmd("PTTL"), cmd("TTL", "a", "b"), cmd("PEXPIRE", "k"), cmd("EXPIRE"),
			cmd("PEXPIREAT", "k"), cmd("INCR"), cmd("HEXISTS", "h"), cmd("HINCRBY", "h", "f"), cmd("HGET", "h"),
			cmd("HSET", "h", "f"), cmd("HSET", "h", "f", "v", "g"), cmd("WAIT", "1"), cmd("REPLICAOF", "x"),
			cmd("EVAL"), cmd("EVALSHA", "x"), cmd("PING", "a", "b"), cmd("ROLE", "x"), cmd("SCRIPT"),
			cmd("SCRIPT", "nosuch"), cmd("SCRIPT", "LOAD"), cmd("PUBLISH", "ch"), cmd("DBSIZE", "x"),
			cmd("SET", "k", "v", "NX", "XX"), cmd("SETNX", "k"), cmd("SETNX", "sx", "1"), cmd("SETNX", "sx", "2"), cmd("GET", "sx"), cmd("SET", "k", "v", "PX"), cmd("SET", "k", "v", "PX", "0"),
			cmd("SET", "k", "v", "PX", "-1"), cmd("SET", "k", "v", "EX", "0"), cmd("SET", "k", "v", "PX", "abc"),
			cmd("SET", "k", "v", "PX", "10", "EX", "10"), cmd("SET", "k", "v", "KEEPTTL", "PX", "10"),
			cmd("SET", "k", "v", "PXAT", "0"), cmd("SET", "k", "v", "EXAT", "9223372036854775807"),
			cmd("SET", "k", "v", "PX", "9223372036854775807"), cmd("SET", "k", "v", "foo"), cmd("SET", "k", "v", "EX", "01"),
			cmd("SET", "k", "v", "EX", "+1"), cmd("SET", "k", "v", "EX", " 1"), cmd("SET", "k", "v", "PX", "1.5"),
			cmd("PEXPIRE", "k", "abc"), cmd("PEXPIRE", "k", "10", "foo"), cmd("PEXPIRE", "k", "10", "NX", "XX"),
			cmd("PEXPIRE", "k", "10", "GT", "LT"), cmd("EXPIRE", "k", "9223372036854775807"),
			cmd("PEXPIRE", "k", "9223372036854775807"), cmd("PEXPIREAT", "k", "-5"),
			cmd("HSET", "h", "f", "v"), cmd("GET", "h"), cmd("INCR", "h"), cmd("SET", "k", "v", "GET"),
			cmd("SET", "h", "v", "GET"), cmd("HGET", "k", "f"), cmd("HEXISTS", "k", "f"), cmd("HINCRBY", "k", "f", "1"),
			cmd("HINCRBY", "h", "f", "1"), cmd("HINCRBY", "h", "g", "x"), cmd("HINCRBY", "h", "g", "1"),
			cmd("HINCRBY", "h", "g", "9223372036854775807"), cmd("INCR", "k"), cmd("SET", "n", "9223372036854775807"),
			cmd("INCR", "n"), cmd("SET", "n", "-5"), cmd("INCR", "n"), cmd("SET", "n", "007"), cmd("INCR", "n"),
			cmd("WAIT", "a", "0"), cmd("WAIT", "0", "a"), cmd("WAIT", "0", "-1"), cmd("REPLICAOF", "host", "port"),
			cmd("REPLICAOF", "host", "70000"), cmd("REPLICAOF", "NO", "ONE"),
			cmd("EVAL", "return 1", "x"), cmd("EVAL", "return 1", "-1"), cmd("EVAL", "return 1", "2", "a"),
			cmd("EVALSHA", "abc", "0"), cmd("EVALSHA", "abc", "x"), cmd("EVALSHA", strings.Repeat("a", 40), "x"),
			cmd("EVALSHA", ScriptRedsyncDelete.SHA, "1", lock, val), cmd("EVALSHA", strings.Repeat("a", 40), "0"),
			cmd("FLUSHALL", "x"), cmd("FLUSHALL", "a", "b"), cmd("SCRIPT", "FLUSH", "x"),
		}},
		{"set-nx-xx-get", []step{
			cmd("SET", "k", "a", "NX"), cmd("SET", "k", "b", "NX"), cmd("GET", "k"), cmd("SET", "k", "c", "XX"),
			cmd("SET", "m", "c", "XX"), cmd("EXISTS", "k", "m", "k"), cmd("SET", "k", "d", "GET"),
			cmd("SET", "m", "e", "NX", "GET"), cmd("SET", "m", "f", "NX", "GET"), cmd("SET", "m", "g", "XX", "GET", "PX", "100000"),
			timed(ttlTol, "PTTL", "m"), cmd("SET", "m", "h", "KEEPTTL"), timed(ttlTol, "PTTL", "m"), cmd("SET", "m", "i"),
			cmd("PTTL", "m"), cmd("TTL", "m"), cmd("TTL", "nosuch"), cmd("DEL", "k", "m", "nosuch"), cmd("DBSIZE"),
		}},
		{"getset", []step{
			cmd("GETSET", "g", "1"), cmd("GETSET", "g", "2"), cmd("GET", "g"), cmd("SET", "g", "3", "PX", "100000"),
			cmd("GETSET", "g", "4"), cmd("PTTL", "g"), cmd("HSET", "h", "f", "v"), cmd("GETSET", "h", "x"),
			cmd("HGET", "h", "f"), cmd("GETSET", "g"), cmd("GETSET", "g", "a", "b"), cmd("SETNX", lock, "100"),
			cmd("GET", lock), cmd("GETSET", lock, "200"), cmd("GET", lock),
		}},
		{"expiry-over-time", []step{
			cmd("SET", lock, val, "NX", "PX", "200"), timed(ttlTol, "PTTL", lock), timed(1, "TTL", lock),
			cmd("SET", lock, "v2", "NX", "PX", "200"), sleep(60 * time.Millisecond), timed(ttlTol, "PTTL", lock),
			cmd("GET", lock), sleep(200 * time.Millisecond), cmd("GET", lock), cmd("PTTL", lock), cmd("EXISTS", lock),
			cmd("SET", lock, "v2", "NX", "PX", "100000"), cmd("GET", lock), timed(1, "TTL", lock),
			cmd("SET", "e", "x", "EX", "100"), timed(1, "TTL", "e"), timed(ttlTol, "PTTL", "e"),
			cmd("SET", "p", "x", "PXAT", "@ms+50"), timed(ttlTol, "PTTL", "p"), sleep(100 * time.Millisecond),
			cmd("GET", "p"), cmd("SET", "p", "x", "PXAT", "@ms-50"), cmd("GET", "p"), cmd("EXISTS", "p"),
			cmd("SET", "p", "x", "EXAT", "@s+100"), timed(ttlTol+1000, "PTTL", "p"),
			cmd("PEXPIRE", "p", "100"), timed(ttlTol, "PTTL", "p"), cmd("PEXPIRE", "p", "0"), cmd("EXISTS", "p"),
			cmd("SET", "p", "x"), cmd("EXPIRE", "p", "-1"), cmd("GET", "p"), cmd("PEXPIRE", "nosuch", "10"),
			cmd("SET", "p", "x"), cmd("PEXPIREAT", "p", "@ms+70"), timed(ttlTol, "PTTL", "p"), sleep(120 * time.Millisecond),
			cmd("PTTL", "p"), cmd("SET", "p", "x"), cmd("EXPIREAT", "p", "@s+100"), timed(1, "TTL", "p"),
			cmd("PEXPIRE", "p", "100000", "NX"), cmd("PEXPIRE", "p", "100000", "XX"), cmd("PEXPIRE", "p", "1000", "GT"),
			cmd("PEXPIRE", "p", "1000", "LT"), timed(ttlTol, "PTTL", "p"), cmd("SET", "q", "x"), cmd("PEXPIRE", "q", "10", "XX"),
			cmd("PEXPIRE", "q", "10000", "GT"), cmd("PEXPIRE", "q", "10000", "LT"), timed(ttlTol, "PTTL", "q"),
			cmd("INCR", "cnt"), cmd("INCR", "cnt"), cmd("PEXPIRE", "cnt", "100000"), cmd("INCR", "cnt"), timed(ttlTol, "PTTL", "cnt"),
			cmd("GET", "cnt"),
		}},
		{"wait-without-replicas", []step{
			cmd("SET", "k", "v"), cmd("WAIT", "0", "0"), exactBlock(50*time.Millisecond, "WAIT", "1", "50"), cmd("WAIT", "0", "100"), cmd("ROLE"),
		}},
		{"scripts-cache", []step{
			cmd("EVALSHA", ScriptCompareAndDelete.SHA, "1", lock, val), cmd("SCRIPT", "EXISTS", ScriptCompareAndDelete.SHA, "x"),
			cmd(ScriptCompareAndDelete.Eval([]string{lock}, val)...), cmd(ScriptCompareAndDelete.EvalSHA([]string{lock}, val)...),
			cmd("SCRIPT", "EXISTS", strings.ToUpper(ScriptCompareAndDelete.SHA)), cmd("SCRIPT", "LOAD", ScriptRedissonLock.Source),
			cmd("EVALSHA", strings.ToUpper(ScriptRedissonLock.SHA), "1", "h", "30000", "c:1"), cmd("SCRIPT", "FLUSH"),
			cmd(ScriptRedissonLock.EvalSHA([]string{"h"}, "30000", "c:1")...),
		}},
		{"redsync", []step{
			cmd("SET", lock, val, "NX", "PX", "8000"), cmd(ScriptRedsyncTouch.Eval([]string{lock}, "v2", "9000")...),
			cmd(ScriptRedsyncTouch.Eval([]string{lock}, val, "9000")...), timed(ttlTol, "PTTL", lock),
			cmd(ScriptRedsyncDelete.Eval([]string{lock}, "v2")...), cmd(ScriptRedsyncDelete.Eval([]string{lock}, val)...),
			cmd(ScriptRedsyncDelete.Eval([]string{lock}, val)...), cmd(ScriptRedsyncTouch.Eval([]string{lock}, val, "9000")...),
			cmd(ScriptRedsyncTouchSetNX.Eval([]string{lock}, val, "9000")...), timed(ttlTol, "PTTL", lock), cmd("GET", lock),
			cmd(ScriptRedsyncTouchSetNX.Eval([]string{lock}, "v2", "9000")...), cmd(ScriptRedsyncTouchSetNX.Eval([]string{lock}, val, "50")...),
			sleep(100 * time.Millisecond), cmd(ScriptCompareAndDelete.Eval([]string{lock}, val)...),
			cmd("SET", lock, val), cmd(ScriptCompareAndDelete.Eval([]string{lock}, val)...), cmd("EXISTS", lock),
			cmd(ScriptRedsyncTouch.Eval([]string{lock}, val, "-5")...), cmd("SET", lock, val),
			cmd(ScriptRedsyncTouch.Eval([]string{lock}, val, "-5")...), cmd("EXISTS", lock), cmd("SET", lock, val),
			cmd(ScriptRedsyncTouch.Eval([]string{lock}, val, "abc")...), cmd(ScriptRedsyncTouchSetNX.Eval([]string{"n"}, val, "abc")...),
			cmd(ScriptRedsyncTouchSetNX.Eval([]string{"n"}, val, "0")...),
			cmd("HSET", "h", "f", "1"), cmd(ScriptCompareAndDelete.Eval([]string{"h"}, val)...),
			cmd(ScriptRedsyncDelete.Eval([]string{"h"}, val)...), cmd(ScriptRedsyncTouchSetNX.Eval([]string{"h"}, val, "10")...),
			cmd(ScriptCompareAndDelete.Eval(nil)...), cmd(ScriptCompareAndDelete.Eval([]string{lock})...),
			cmd(ScriptRedsyncTouch.Eval([]string{lock}, val)...),
		}},
		{"redisson", []step{
			cmd(ScriptRedissonLock.Eval([]string{"h"}, "30000", "c:1")...), timed(ttlTol, "PTTL", "h"), cmd("HGET", "h", "c:1"),
			cmd(ScriptRedissonLock.Eval([]string{"h"}, "30000", "c:1")...), cmd("HGET", "h", "c:1"),
			timed(ttlTol, ScriptRedissonLock.Eval([]string{"h"}, "30000", "c:2")...),
			cmd(ScriptRedissonRenew.Eval([]string{"h", "x"}, "40000", "c:1", "c:9")...), timed(ttlTol, "PTTL", "h"),
			cmd(ScriptRedissonRenew.Eval([]string{"h"}, "40000", "c:2")...), cmd(ScriptRedissonRenew.Eval(nil, "40000")...),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:1"}, "0", "30000", "c:2", "publish", "60000")...),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:2"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:2"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd("HGET", "h", "c:1"), timed(ttlTol, "PTTL", "latch:2"),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:3"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd("EXISTS", "h"), cmd("GET", "latch:3"),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:4"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd(ScriptRedissonLock.Eval([]string{"h"}, "abc", "c:1")...), cmd("HGET", "h", "c:1"), cmd("PTTL", "h"),
			cmd("SET", "s", "x"), cmd(ScriptRedissonLock.Eval([]string{"s"}, "30000", "c:1")...),
			cmd(ScriptRedissonRenew.Eval([]string{"s"}, "30000", "c:1")...),
			cmd(ScriptRedissonUnlock.Eval([]string{"s", "ch", "latch:5"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd("SET", "latch:6", "abc"), cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:6"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd("SET", "latch:7", "2.5"), cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:7"}, "0", "30000", "c:1", "publish", "60000")...),
			cmd(ScriptRedissonLock.Eval([]string{"h"}, "30000", "c:1")...),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:8"}, "0", "30000", "c:1", "nosuchcmd", "60000")...),
			cmd("EXISTS", "h"),
			cmd(ScriptRedissonLock.Eval([]string{"h"}, "30000", "c:1")...),
			cmd(ScriptRedissonUnlock.Eval([]string{"h", "ch", "latch:9"}, "0", "30000", "c:1", "publish")...),
			cmd(ScriptRedissonRenew.Eval([]string{"h", "h"}, "1000", "c:1")...),
		}},
		// Issue 13's stock script: Lua's tonumber on every kind of stored
		// string, and DECR's errors on those it accepts.
		{"stock-decrement", func() []step {
			st := []string{"stock"}
			sell := func() step { return cmd(ScriptStockDecrement.Eval(st)...) }
			steps := []step{sell(), cmd("EXISTS", "stock"), cmd("SET", "stock", "2"), sell(), sell(), sell(), cmd("GET", "stock"),
				cmd(ScriptStockDecrement.EvalSHA(st)...), cmd("HSET", "h", "f", "1"), cmd(ScriptStockDecrement.Eval([]string{"h"})...),
				cmd(ScriptStockDecrement.Eval(nil)...)}
			for _, v := range []string{"-3", "0", "1", "007", "+5", " 5", "5 ", "\t5\n", "1.5", "0.5", "-0.5", "1e2", "1E2", "1e", ".5", "5.",
				"0x10", "0X1f", "0x", "0x1p4", "0x.8", "inf", "-inf", "Infinity", "nan", "NAN", "nan(1)", "abc", "5abc", "", " ", "9223372036854775807",
				"-9223372036854775808", "1e400", "-1e400", "1_000"} {
				steps = append(steps, cmd("SET", "stock", v), sell(), cmd("GET", "stock"))
			}
			return steps
		}()},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			checkExact(t, w, single(), append(append([]step{}, reset...), tt.steps...))
		})
	}
}

// TestConformanceReplyKinds checks reply kinds that go-redis cannot tell
// apart (status versus bulk), with a raw RESP2 connection.
func TestConformanceReplyKinds(t *testing.T) {
	path := redisServerPath(t)
	srv := startReal(t, path)
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", srv.port))
	require.NoError(t, err)
	defer conn.Close()
	rd := bufio.NewReader(conn)
	cmds := [][]string{
		{"FLUSHALL"}, {"SET", "k", "v"}, {"GET", "k"}, {"PING"}, {"PING", "x"}, {"SET", "k", "w", "NX"},
		{"SET", "k", "x", "GET"}, {"HSET", "h", "f", "1"}, {"HGET", "h", "f"}, {"SCRIPT", "LOAD", ScriptCompareAndDelete.Source},
		{"REPLICAOF", "NO", "ONE"}, {"INCR", "n"}, {"DEBUG", "SET-ACTIVE-EXPIRE", "1"},
		ScriptRedissonLock.Eval([]string{"h2"}, "1000", "c"), ScriptRedissonRenew.Eval([]string{"h2"}, "1000", "c"),
	}
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: DefaultConfig()})
	for _, c := range cmds {
		real := rawDo(t, conn, rd, c)
		model := w.do("A", c...)
		assert.Equal(t, real.Kind, model.Kind, "reply kind of %q: real %v, model %v", c, real, model)
		assert.True(t, same(model, real, 0), "reply of %q: real %v, model %v", c, real, model)
	}
}

// rawDo sends one command in RESP2 and parses the reply.
func rawDo(t *testing.T, conn net.Conn, rd *bufio.Reader, args []string) Value {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := conn.Write([]byte(b.String()))
	require.NoError(t, err)
	return readRESP(t, rd)
}

func readRESP(t *testing.T, rd *bufio.Reader) Value {
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '+':
		return Status(line[1:])
	case '-':
		return Err(line[1:])
	case ':':
		n, _ := strconv.ParseInt(line[1:], 10, 64)
		return Int(n)
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return Nil()
		}
		buf := make([]byte, n+2)
		_, err := ioReadFull(rd, buf)
		require.NoError(t, err)
		return Bulk(string(buf[:n]))
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return Nil()
		}
		out := make([]Value, n)
		for i := range out {
			out[i] = readRESP(t, rd)
		}
		return Array(out...)
	}
	t.Fatalf("bad RESP line %q", line)
	return Value{}
}

func ioReadFull(rd *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := rd.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ---- randomized sequences ----

// genSequence generates a random sequence over a few keys, all prefixed so
// that sequences can run concurrently on one real server. Deadlines are
// either short (30 ms, expired after the 90 ms sleeps) or long (100 s).
func genSequence(r *sim.Rand, p string) []step {
	a, b, h := p+"a", p+"b", p+"h"
	keys := []string{a, b, h}
	vals := []string{"v1", "v2", "1", "10", "x"}
	fields := []string{"f1", "f2"}
	pick := func(xs []string) string { return xs[r.Intn(len(xs))] }
	ttl := func() string {
		if r.Chance(0.5) {
			return "30"
		}
		return "100000"
	}
	steps := []step{}
	for _, s := range Scripts {
		steps = append(steps, cmd("SCRIPT", "LOAD", s.Source))
	}
	n := 8 + r.Intn(16)
	for i := 0; i < n; i++ {
		k := pick(keys)
		switch x := r.Intn(30); {
		case x < 5:
			args := []string{"SET", k, pick(vals)}
			switch r.Intn(4) {
			case 1:
				args = append(args, "NX")
			case 2:
				args = append(args, "XX")
			}
			switch r.Intn(8) {
			case 0, 1, 2:
				args = append(args, "PX", ttl())
			case 3:
				args = append(args, "EX", "100")
			case 4:
				args = append(args, "PXAT", pick([]string{"@ms+30", "@ms-5", "@ms+100000"}))
			case 5:
				args = append(args, "EXAT", pick([]string{"@s+100", "@s-10"}))
			case 6:
				args = append(args, "KEEPTTL")
			}
			if r.Chance(0.2) {
				args = append(args, "GET")
			}
			if r.Chance(0.1) {
				args = []string{"SETNX", k, pick(vals)}
			}
			steps = append(steps, cmd(args...))
		case x < 7:
			steps = append(steps, cmd("GET", k))
		case x < 8:
			steps = append(steps, cmd("DEL", k, pick(keys)))
		case x < 9:
			steps = append(steps, cmd("EXISTS", k, pick(keys)))
		case x < 11:
			steps = append(steps, timed(ttlTol, "PTTL", k))
		case x < 12:
			steps = append(steps, timed(1, "TTL", k))
		case x < 14:
			args := []string{"PEXPIRE", k, pick([]string{"30", "100000", "-1", "0", "abc"})}
			if r.Chance(0.3) {
				args = append(args, pick([]string{"NX", "XX", "GT", "LT"}))
			}
			steps = append(steps, cmd(args...))
		case x < 15:
			steps = append(steps, cmd("EXPIRE", k, pick([]string{"100", "-1"})))
		case x < 16:
			steps = append(steps, cmd("PEXPIREAT", k, pick([]string{"@ms+30", "@ms-5", "@ms+100000"})))
		case x < 17:
			steps = append(steps, cmd("INCR", k))
		case x < 18:
			steps = append(steps, cmd("HINCRBY", k, pick(fields), pick([]string{"1", "-1", "5", "x"})))
		case x < 19:
			steps = append(steps, cmd("HEXISTS", k, pick(fields)))
		case x < 20:
			steps = append(steps, cmd("HGET", k, pick(fields)))
		case x < 21:
			steps = append(steps, cmd("HSET", k, pick(fields), pick(vals)))
		case x < 22:
			steps = append(steps, cmd(pick([]string{"SET", "GET", "INCR", "HGET", "PTTL"}), k, "extra", "args"))
		case x < 28:
			steps = append(steps, genScript(r, k, keys, vals, fields, ttl, p))
		default:
			steps = append(steps, sleep(90*time.Millisecond))
		}
	}
	return steps
}

func genScript(r *sim.Rand, k string, keys, vals, fields []string, ttl func() string, p string) step {
	pick := func(xs []string) string { return xs[r.Intn(len(xs))] }
	var args []string
	switch r.Intn(7) {
	case 0:
		args = ScriptCompareAndDelete.EvalSHA([]string{k}, pick(vals))
	case 1:
		args = ScriptRedsyncDelete.EvalSHA([]string{k}, pick(vals))
	case 2:
		args = ScriptRedsyncTouch.EvalSHA([]string{k}, pick(vals), ttl())
	case 3:
		args = ScriptRedsyncTouchSetNX.EvalSHA([]string{k}, pick(vals), ttl())
	case 4:
		return timed(ttlTol, ScriptRedissonLock.EvalSHA([]string{k}, ttl(), pick(fields))...)
	case 5:
		latch := p + "latch" + strconv.Itoa(r.Intn(3))
		args = ScriptRedissonUnlock.EvalSHA([]string{k, p + "ch", latch}, "0", ttl(), pick(fields), "publish", ttl())
	default:
		ks := []string{k}
		if r.Chance(0.5) {
			ks = append(ks, pick(keys))
		}
		args = ScriptRedissonRenew.EvalSHA(ks, ttl(), pick(fields), pick(fields))
	}
	return cmd(args...)
}

// TestConformanceRandom runs 500 seeded random sequences on both sides and
// compares every reply exactly (exact mode: the real servers' wall clocks
// are frozen and stepped with the model's). Each worker owns one real
// server and its clock, and runs its sequences one after another; each
// model run is a fresh kernel.
func TestConformanceRandom(t *testing.T) {
	const sequences = 500
	const workers = 4
	worlds := make([]*exactWorld, workers)
	for i := range worlds {
		worlds[i] = newExactWorld(t)
		worlds[i].start(launch.RedisOptions{Name: "A"})
	}
	results := make([][]string, sequences)
	var wg sync.WaitGroup
	jobs := make(chan int)
	for _, w := range worlds {
		wg.Add(1)
		go func(w *exactWorld) {
			defer wg.Done()
			for i := range jobs {
				steps := genSequence(sim.NewRand(uint64(i), "conformance"), fmt.Sprintf("s%d:", i))
				plays := runExact(t, w, steps)
				results[i] = exactMismatches(plays, runModelExact(t, single(), plays))
			}
		}(w)
	}
	for i := 0; i < sequences; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, fails := range results {
		if len(fails) > 0 {
			t.Errorf("sequence %d (seed %d) differs from real Redis:\n%s", i, i, strings.Join(fails, "\n"))
		}
	}
	t.Logf("%d random sequences compared exactly", sequences)
}

// ---- replication against two real servers ----

// TestConformanceReplication runs in exact mode: master and replica share
// one frozen wall clock (a replica judges expiry on its own clock for reads,
// src/db.c expireIfNeeded), so PTTL on the replica is compared exactly.
func TestConformanceReplication(t *testing.T) {
	w := newExactWorld(t)
	m := w.start(launch.RedisOptions{Name: "M"})
	r := w.start(launch.RedisOptions{Name: "R", ReplicaOf: m.srv.Addr()})
	// A condition, not a sleep: generous for a loaded machine, bounded.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(r.rs.do(t, []string{"INFO", "replication"}).Str, "master_link_status:up") {
		require.True(t, time.Now().Before(deadline), "real replica did not sync")
		time.Sleep(20 * time.Millisecond)
	}
	nodes := []nodeSpec{{name: "M", cfg: DefaultConfig()}, {name: "R", cfg: replicaOf("M")}}
	const M, R = 0, 1
	lockEval := ScriptRedissonLock.Eval([]string{"h"}, "100000", "c:1")
	steps := []step{
		// The model's replica syncs in virtual time; the real one already has.
		sleep(time.Second),
		on(M, "DEBUG", "SET-ACTIVE-EXPIRE", "0"),
		on(M, "SET", "k", "v", "PX", "300"), on(M, "WAIT", "1", "1000"),
		on(R, "GET", "k"), {node: R, args: []string{"PTTL", "k"}, tol: ttlTol}, on(R, "EXISTS", "k"),
		on(R, "SET", "x", "y"), on(R, "DEL", "k"), on(R, "INCR", "n"), on(R, "WAIT", "0", "0"),
		on(R, ScriptCompareAndDelete.Eval([]string{"k"}, "v")...), on(R, ScriptCompareAndDelete.Eval([]string{"k"}, "zz")...),
		on(R, ScriptRedissonLock.Eval([]string{"h"}, "100000", "c:1")...),
		on(M, lockEval...), on(M, "WAIT", "1", "1000"), on(R, "HEXISTS", "h", "c:1"), {node: R, args: []string{"PTTL", "h"}, tol: ttlTol},
		on(M, "SET", "c", "1"), on(M, "INCR", "c"), on(M, "PEXPIRE", "c", "100000"), on(M, "WAIT", "1", "1000"),
		on(R, "GET", "c"), {node: R, args: []string{"PTTL", "c"}, tol: ttlTol},
		sleep(400 * time.Millisecond),
		on(R, "GET", "k"), on(R, "EXISTS", "k"), on(R, "PTTL", "k"), on(R, "DBSIZE"),
		on(M, "DBSIZE"), on(M, "GET", "k"), on(M, "WAIT", "1", "1000"), on(R, "DBSIZE"), on(M, "DBSIZE"),
		on(M, "SET", "p", "x", "PXAT", "@ms-10"), on(M, "WAIT", "1", "1000"), on(R, "EXISTS", "p"), on(R, "DBSIZE"),
		on(M, "EXISTS", "p"), on(M, "WAIT", "1", "1000"), on(R, "DBSIZE"),
		on(M, "SET", "q", "x"), on(M, "PEXPIRE", "q", "-1"), on(M, "WAIT", "1", "1000"), on(R, "EXISTS", "q"),
		{node: M, args: []string{"WAIT", "2", "50"}, block: 50 * time.Millisecond},
		infoField(M, "replication", "role"), infoField(M, "replication", "connected_slaves"),
		infoField(R, "replication", "role"), infoField(R, "replication", "master_link_status"),
		infoField(R, "replication", "slave_priority"), infoField(R, "replication", "slave_read_only"),
		infoField(R, "replication", "connected_slaves"), roleFields(M, 0), roleFields(R, 0, 3),
		// Promotion: the replica's hidden expired key is deleted by the
		// promoted node's own expiry.
		on(M, "SET", "k2", "v", "PX", "100"), on(M, "WAIT", "1", "1000"), sleep(200 * time.Millisecond),
		on(R, "GET", "k2"), on(R, "DBSIZE"), on(R, "REPLICAOF", "NO", "ONE"), infoField(R, "replication", "role"),
		on(R, "GET", "k2"), on(R, "EXISTS", "k2"), on(R, "DBSIZE"), on(R, "SET", "z", "1"), on(R, "GET", "z"),
		on(R, "WAIT", "0", "0"),
	}
	checkExact(t, w, nodes, steps)
}

// TestConformanceMinReplicas checks NOREPLICAS with min-replicas-to-write 1
// before and after a replica attaches. It runs in exact mode: the replica's
// sync is awaited as a condition (the link is up and the master counts a
// good replica) rather than a real-time sleep, and the replica's lag, which
// the master judges on its wall clock (src/replication.c
// refreshGoodSlavesCount: server.unixtime - repl_ack_time), is 0 on the
// frozen clock.
func TestConformanceMinReplicas(t *testing.T) {
	w := newExactWorld(t)
	m := w.start(launch.RedisOptions{Name: "M", MinReplicasToWrite: 1})
	r := w.start(launch.RedisOptions{Name: "R"})
	mcfg := DefaultConfig()
	mcfg.MinReplicasToWrite = 1
	nodes := []nodeSpec{{name: "M", cfg: mcfg}, {name: "R", cfg: DefaultConfig()}}
	const M, R = 0, 1
	info := func(n *exactNode, line string) bool {
		return strings.Contains(n.rs.do(t, []string{"INFO", "replication"}).Str, line)
	}
	synced := func() bool { return info(r, "master_link_status:up") && info(m, "min_slaves_good_slaves:1") }
	steps := []step{
		on(M, "SET", "a", "1"), on(M, "GET", "a"), on(M, "INCR", "n"), on(M, "DEL", "a"),
		on(M, ScriptCompareAndDelete.Eval([]string{"a"}, "1")...), on(M, ScriptRedissonLock.Eval([]string{"h"}, "1000", "c")...),
		infoField(M, "replication", "min_slaves_good_slaves"),
		{node: R, args: []string{"REPLICAOF", "127.0.0.1", strconv.Itoa(m.srv.Port())}, margs: []string{"REPLICAOF", "M", "6379"}},
		// The model's replica syncs in the virtual sleep; the real one in
		// real time, however long the machine's load makes it take.
		sleep(1500 * time.Millisecond), {await: synced, awaitWhat: "the real replica to sync and the master to count it"},
		infoField(R, "replication", "master_link_status"), infoField(M, "replication", "min_slaves_good_slaves"),
		on(M, "SET", "a", "1"), on(M, "WAIT", "1", "1000"), on(R, "GET", "a"),
		on(M, ScriptRedissonLock.Eval([]string{"h"}, "100000", "c")...), on(M, "WAIT", "1", "1000"), on(R, "HGET", "h", "c"),
		{node: R, args: []string{"REPLICAOF", "127.0.0.1", strconv.Itoa(m.srv.Port())}, margs: []string{"REPLICAOF", "M", "6379"}},
	}
	checkExact(t, w, nodes, steps)
}
