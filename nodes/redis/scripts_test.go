package redis

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func TestScriptSHAs(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Scripts {
		sum := sha1.Sum([]byte(s.Source))
		assert.Equal(t, hex.EncodeToString(sum[:]), s.SHA, s.Name)
		assert.False(t, seen[s.SHA], "duplicate script %s", s.Name)
		seen[s.SHA] = true
		got, ok := ScriptBySHA(strings.ToUpper(s.SHA))
		assert.True(t, ok)
		assert.Equal(t, s.Name, got.Name)
	}
	assert.Equal(t, []string{"EVALSHA", ScriptRedsyncTouch.SHA, "1", "k", "v", "100"}, ScriptRedsyncTouch.EvalSHA([]string{"k"}, "v", "100"))
}

// TestScripts runs each lock script through its cases (one world per
// table row, steps in order).
func TestScripts(t *testing.T) {
	type call struct {
		args []string
		want Value
	}
	lock := []string{"lock"}
	h := []string{"h"}
	unlock := func(field, latch string) []string {
		return ScriptRedissonUnlock.Eval([]string{"h", "ch", latch}, "0", "30000", field, "publish", "60000")
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{"stock-decrement", []call{
			{ScriptStockDecrement.Eval([]string{"stock"}), Int(-1)},
			{[]string{"SET", "stock", "2"}, OK()},
			{ScriptStockDecrement.Eval([]string{"stock"}), Int(1)},
			{ScriptStockDecrement.Eval([]string{"stock"}), Int(0)},
			{ScriptStockDecrement.Eval([]string{"stock"}), Int(-1)},
			{[]string{"GET", "stock"}, Bulk("0")},
			{[]string{"SET", "stock", " 0x10 "}, OK()},
			{ScriptStockDecrement.Eval([]string{"stock"}), Err("ERR value is not an integer or out of range script: " + ScriptStockDecrement.SHA + ", on @user_script:3.")},
		}},
		{"compare-and-delete", []call{
			{ScriptCompareAndDelete.Eval(lock, "a"), Int(0)},
			{[]string{"SET", "lock", "a", "PX", "1000"}, OK()},
			{ScriptCompareAndDelete.Eval(lock, "b"), Int(0)},
			{ScriptCompareAndDelete.Eval(lock, "a"), Int(1)},
			{[]string{"EXISTS", "lock"}, Int(0)},
		}},
		{"redsync-delete", []call{
			{ScriptRedsyncDelete.Eval(lock, "a"), Int(-1)},
			{[]string{"SET", "lock", "a"}, OK()},
			{ScriptRedsyncDelete.Eval(lock, "b"), Int(0)},
			{ScriptRedsyncDelete.Eval(lock, "a"), Int(1)},
		}},
		{"redsync-touch", []call{
			{ScriptRedsyncTouch.Eval(lock, "a", "5000"), Int(0)},
			{[]string{"SET", "lock", "a", "PX", "1000"}, OK()},
			{ScriptRedsyncTouch.Eval(lock, "b", "5000"), Int(0)},
			{ScriptRedsyncTouch.Eval(lock, "a", "5000"), Int(1)},
			{[]string{"PTTL", "lock"}, Int(5000)},
		}},
		{"redsync-touch-setnx-reacquires", []call{
			{ScriptRedsyncTouchSetNX.Eval(lock, "a", "5000"), Int(1)},
			{[]string{"GET", "lock"}, Bulk("a")},
			{ScriptRedsyncTouchSetNX.Eval(lock, "b", "5000"), Int(0)},
			{ScriptRedsyncTouchSetNX.Eval(lock, "a", "7000"), Int(1)},
			{[]string{"PTTL", "lock"}, Int(7000)},
		}},
		{"redisson-reentrant", []call{
			{ScriptRedissonLock.Eval(h, "30000", "c:1"), Nil()},
			{ScriptRedissonLock.Eval(h, "30000", "c:1"), Nil()},
			{[]string{"HGET", "h", "c:1"}, Bulk("2")},
			{ScriptRedissonLock.Eval(h, "30000", "c:2"), Int(30000)},
			{unlock("c:2", "l1"), Nil()},
			{unlock("c:1", "l2"), Int(0)},
			{unlock("c:1", "l2"), Int(0)}, // latched: an idempotent retry
			{[]string{"HGET", "h", "c:1"}, Bulk("1")},
			{unlock("c:1", "l3"), Int(1)},
			{[]string{"EXISTS", "h"}, Int(0)},
			{ScriptRedissonLock.Eval(h, "30000", "c:2"), Nil()},
		}},
		{"redisson-renew", []call{
			{ScriptRedissonLock.Eval(h, "1000", "c:1"), Nil()},
			{ScriptRedissonRenew.Eval([]string{"h", "x"}, "30000", "c:1", "c:1"), Array(Int(1), Int(0))},
			{[]string{"PTTL", "h"}, Int(30000)},
			{ScriptRedissonRenew.Eval(h, "30000", "c:2"), Array(Int(0))},
		}},
		{"errors", []call{
			{[]string{"HSET", "h", "f", "1"}, Int(1)},
			{ScriptCompareAndDelete.Eval(h, "a"), Err("WRONGTYPE Operation against a key holding the wrong kind of value script: " + ScriptCompareAndDelete.SHA + ", on @user_script:1.")},
			{ScriptCompareAndDelete.Eval(nil, "a"), Err("ERR Lua redis lib command arguments must be strings or integers script: " + ScriptCompareAndDelete.SHA + ", on @user_script:1.")},
			{[]string{"EVAL", "return 1", "0"}, errUnknownScript()},
			{[]string{"SCRIPT", "LOAD", "return 1"}, errUnknownScript()},
			{[]string{"EVALSHA", ScriptRedissonRenew.SHA, "0"}, errNoScript},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 0, nodeSpec{name: "A", cfg: master()})
			for i, c := range tt.calls {
				assert.Equal(t, c.want, w.do("A", c.args...), "call %d: %q", i, c.args)
			}
		})
	}
}

// TestScriptTimeFrozen: within a script, time does not pass: a lock whose
// deadline is exactly the script's start time is valid for the whole
// script (reference 1.2).
func TestScriptTimeFrozen(t *testing.T) {
	w := newWorld(t, 0, nodeSpec{name: "A", cfg: master()})
	wall := w.K.ReadClock(w.ID("A"), sim.Wall) / int64(time.Millisecond)
	require.True(t, w.do("A", "SET", "lock", "a", "PXAT", itoa(wall+5)).IsOK())
	w.Advance(5 * time.Millisecond)
	assert.Equal(t, Int(1), w.do("A", ScriptRedsyncTouch.Eval([]string{"lock"}, "a", "1000")...))
}

// TestScriptCacheLostOnRestart: EVALSHA answers NOSCRIPT after a restart
// until the client sends EVAL again.
func TestScriptCacheLostOnRestart(t *testing.T) {
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
	s := ScriptCompareAndDelete
	assert.True(t, IsNoScript(w.do("A", s.EvalSHA([]string{"k"}, "v")...)))
	assert.Equal(t, Int(0), w.do("A", s.Eval([]string{"k"}, "v")...))
	assert.Equal(t, Int(0), w.do("A", s.EvalSHA([]string{"k"}, "v")...))
	w.K.Crash(w.ID("A"), sim.CrashProcess)
	w.K.Restart(w.ID("A"))
	assert.True(t, IsNoScript(w.do("A", s.EvalSHA([]string{"k"}, "v")...)))
}

// TestScriptCacheFlushed: SCRIPT FLUSH empties the cache, so EVALSHA of a
// script that just ran answers NOSCRIPT again (the node's memo of the last
// EVALSHA's script must not outlive the cache).
func TestScriptCacheFlushed(t *testing.T) {
	w := newWorld(t, 0, nodeSpec{name: "A", cfg: master()})
	s := ScriptCompareAndDelete
	assert.Equal(t, Int(0), w.do("A", s.Eval([]string{"k"}, "v")...))
	assert.Equal(t, Int(0), w.do("A", s.EvalSHA([]string{"k"}, "v")...))
	assert.Equal(t, Int(0), w.do("A", s.EvalSHA([]string{"k"}, "v")...))
	assert.True(t, w.do("A", "SCRIPT", "FLUSH").IsOK())
	assert.True(t, IsNoScript(w.do("A", s.EvalSHA([]string{"k"}, "v")...)))
	assert.True(t, IsNoScript(w.do("A", "EVALSHA", strings.ToUpper(s.SHA), "1", "k", "v")))
}
