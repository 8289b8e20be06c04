package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pooledMsg is a pooled message that records its recycling: a receiver
// that reads it after Recycle sees recycled set.
type pooledMsg struct {
	n        int
	recycled int
}

func (m *pooledMsg) Recycle() { m.recycled++ }

func (m *pooledMsg) AppendTrace(b []byte) []byte { return append(b, "pooled"...) }

// TestPooledMessagesRecycledOnce: the kernel recycles a pooled message
// sent with SendPooled exactly once, after the receiver's Receive returned
// (never before), or when the message is lost (its destination crashed);
// one sent with Send is never recycled.
func TestPooledMessagesRecycledOnce(t *testing.T) {
	tests := []struct {
		name      string
		crashAt   time.Duration // of the destination, 0 for none
		plain     bool          // sent with Send, not SendPooled
		delivered bool
		recycled  int
	}{
		{name: "delivered", delivered: true, recycled: 1},
		{name: "lost to a crash", crashAt: ms / 2, recycled: 1},
		{name: "sent with Send: left to the GC", plain: true, delivered: true, recycled: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(Config{Seed: 1})
			m := &pooledMsg{n: 7}
			var during []int
			w.add("a", hooks{init: func(env *Env) {
				to, _ := env.Lookup("b")
				if tt.plain {
					env.Send(to, m)
					return
				}
				env.SendPooled(to, m)
			}})
			b := w.add("b", hooks{recv: func(env *Env, from ProcID, got Message) {
				p, ok := got.(*pooledMsg)
				require.True(t, ok)
				during = append(during, p.recycled) // not yet recycled
			}})
			if tt.crashAt > 0 {
				w.at(tt.crashAt, func() { w.k.Crash(b, CrashClean) })
			}
			w.run(time.Second)
			if tt.delivered {
				assert.Equal(t, []int{0}, during, "recycled only after Receive returned")
			} else {
				assert.Empty(t, during)
			}
			assert.Equal(t, tt.recycled, m.recycled, "recycled exactly once, if sent pooled")
		})
	}
}
