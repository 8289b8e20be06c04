package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestTransactionsModel checks the model's transaction semantics without a
// real server (the differential suite compares them with Redis).
func TestTransactionsModel(t *testing.T) {
	tests := []struct {
		name  string
		steps [][]string
		want  []Value
	}{
		{"queue and exec", [][]string{{"MULTI"}, {"INCRBY", "n", "5"}, {"DECR", "n"}, {"GET", "n"}, {"EXEC"}},
			[]Value{OK(), replyQueued, replyQueued, replyQueued, Array(Int(5), Int(4), Bulk("4"))}},
		{"queue-time error aborts", [][]string{{"MULTI"}, {"INCRBY", "n"}, {"INCR", "n"}, {"EXEC"}, {"GET", "n"}},
			[]Value{OK(), errArity("incrby"), replyQueued, errExecAbort, Nil()}},
		{"run-time error does not stop the others", [][]string{{"SET", "s", "x"}, {"MULTI"}, {"INCR", "s"}, {"SET", "t", "1"}, {"EXEC"}},
			[]Value{OK(), OK(), replyQueued, replyQueued, Array(errNotInteger, OK())}},
		{"own write dirties the watch", [][]string{{"WATCH", "k"}, {"SET", "k", "1"}, {"MULTI"}, {"INCR", "k"}, {"EXEC"}, {"GET", "k"}},
			[]Value{OK(), OK(), OK(), replyQueued, Nil(), Bulk("1")}},
		{"unwatch clears", [][]string{{"WATCH", "k"}, {"SET", "k", "1"}, {"UNWATCH"}, {"MULTI"}, {"INCR", "k"}, {"EXEC"}},
			[]Value{OK(), OK(), OK(), OK(), replyQueued, Array(Int(2))}},
		{"nesting and misuse", [][]string{{"EXEC"}, {"DISCARD"}, {"MULTI"}, {"MULTI"}, {"WATCH", "k"}, {"DISCARD"}},
			[]Value{errExecNoMulti, errDiscardNoMult, OK(), errMultiNested, errWatchInMulti, OK()}},
		{"decrby overflow", [][]string{{"DECRBY", "n", "-9223372036854775808"}, {"SET", "n", "-9223372036854775808"}, {"DECR", "n"}},
			[]Value{Err("ERR decrement would overflow"), OK(), errOverflow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
			for i, s := range tt.steps {
				assert.Equal(t, tt.want[i], w.do("A", s...), "step %d %v", i, s)
			}
		})
	}
	t.Run("expiry since WATCH fails EXEC", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
		w.do("A", "DEBUG", "SET-ACTIVE-EXPIRE", "0")
		w.do("A", "SET", "lock", "v", "PX", "100")
		w.do("A", "WATCH", "lock")
		w.Advance(200 * time.Millisecond)
		w.do("A", "MULTI")
		w.do("A", "PING")
		assert.Equal(t, Nil(), w.do("A", "EXEC"))
	})
	t.Run("a restart forgets transactions", func(t *testing.T) {
		w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
		w.do("A", "MULTI")
		w.K.Crash(w.ID("A"), 0)
		w.K.Restart(w.ID("A"))
		w.Advance(10 * time.Millisecond)
		assert.Equal(t, errExecNoMulti, w.do("A", "EXEC"))
	})
}
