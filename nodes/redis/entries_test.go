package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeletedEntriesReused: the entry of a deleted key is reused by the next
// new key (recycleEntries) and carries nothing of the key it held: no
// deadline, no hash, the new value, and the memory account of a fresh key.
func TestDeletedEntriesReused(t *testing.T) {
	tests := []struct {
		name   string
		delete []string // deletes the key "a"
	}{
		{name: "DEL", delete: []string{"DEL", "a"}},
		{name: "PEXPIRE in the past", delete: []string{"PEXPIRE", "a", "0"}},
		{name: "script", delete: ScriptCompareAndDelete.Eval([]string{"a"}, "one")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: DefaultConfig()})
			assert.True(t, w.do("A", "SET", "a", "one", "PX", "60000").IsOK())
			used := w.node("A").mem.used
			w.do("A", tt.delete...)
			n := w.node("A")
			require.Len(t, n.freeEntries, 1, "the deleted key's entry is free after the event")
			free := n.freeEntries[0]
			assert.True(t, w.do("A", "SET", "b", "two").IsOK())
			assert.Same(t, free, n.db["b"], "reused")
			assert.Equal(t, Bulk("two"), w.do("A", "GET", "b"))
			assert.Equal(t, Int(-1), w.do("A", "PTTL", "b"), "no deadline carried over")
			assert.Equal(t, Nil(), w.do("A", "GET", "a"))
			assert.Equal(t, Int(1), w.do("A", "DBSIZE"))
			assert.Equal(t, used-sizeOf("a", &entry{str: "one", hasExp: true})+sizeOf("b", &entry{str: "two"}), n.mem.used)
		})
	}
}
