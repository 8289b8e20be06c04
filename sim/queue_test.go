package sim

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQueueOrder pushes and pops events at random, with many equal times,
// and checks every pop against a sorted reference: (time, sequence) order.
func TestQueueOrder(t *testing.T) {
	tests := []struct {
		name  string
		times int64 // distinct times drawn from
		ops   int
	}{
		{"all equal", 1, 2000},
		{"few times", 5, 5000},
		{"many times", 1 << 40, 20000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRand(1, tt.name)
			var q queue
			var ref []event
			var seq uint64
			for i := 0; i < tt.ops; i++ {
				if q.len() == 0 || r.Intn(3) > 0 {
					seq++
					e := event{at: Time(r.Int63n(tt.times)), seq: seq, ik: uint32(seq)}
					q.push(e)
					at := sort.Search(len(ref), func(j int) bool { return e.less(&ref[j]) })
					ref = append(ref, event{})
					copy(ref[at+1:], ref[at:])
					ref[at] = e
					continue
				}
				require.Equal(t, ref[0], *q.peek())
				require.Equal(t, ref[0], q.pop())
				ref = ref[1:]
			}
			assert.Equal(t, len(ref), q.len())
		})
	}
}

func TestEventBefore(t *testing.T) {
	tests := []struct {
		name string
		a, b event
		want uint64
	}{
		{"earlier time", event{at: 1, seq: 9}, event{at: 2, seq: 1}, 1},
		{"later time", event{at: 2, seq: 1}, event{at: 1, seq: 9}, 0},
		{"same time, earlier seq", event{at: 5, seq: 1}, event{at: 5, seq: 2}, 1},
		{"same time, later seq", event{at: 5, seq: 2}, event{at: 5, seq: 1}, 0},
		{"equal", event{at: 5, seq: 2}, event{at: 5, seq: 2}, 0},
		{"Never", event{at: 0, seq: 1 << 63}, event{at: Never, seq: 0}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.a.before(&tt.b))
		})
	}
}

// TestQueueRemoveIf removes a share of the queued events in the middle of a
// random push/pop sequence and checks that the rest still pop in (time,
// sequence) order, against a sorted reference filtered the same way.
func TestQueueRemoveIf(t *testing.T) {
	tests := []struct {
		name   string
		times  int64
		n      int
		remove func(e *event) bool
	}{
		{"none", 1 << 20, 1000, func(*event) bool { return false }},
		{"all", 1 << 20, 1000, func(*event) bool { return true }},
		{"odd sequence numbers", 1 << 20, 3000, func(e *event) bool { return e.seq%2 == 1 }},
		{"nine in ten, equal times", 3, 3000, func(e *event) bool { return e.seq%10 != 0 }},
		{"a single event of many", 1 << 40, 5000, func(e *event) bool { return e.seq == 777 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRand(2, tt.name)
			var q queue
			var ref []event
			for seq := uint64(1); seq <= uint64(tt.n); seq++ {
				e := event{at: Time(r.Int63n(tt.times)), seq: seq, ik: uint32(seq)}
				q.push(e)
				ref = append(ref, e)
			}
			sort.Slice(ref, func(i, j int) bool { return ref[i].less(&ref[j]) })
			// Pop a tenth first, so the heap is not freshly built.
			for i := 0; i < tt.n/10; i++ {
				require.Equal(t, ref[0], q.pop())
				ref = ref[1:]
			}
			kept := ref[:0:0]
			for _, e := range ref {
				if !tt.remove(&e) {
					kept = append(kept, e)
				}
			}
			removed := q.removeIf(tt.remove)
			assert.Equal(t, len(ref)-len(kept), removed)
			require.Equal(t, len(kept), q.len())
			for _, want := range kept {
				require.Equal(t, want, q.pop())
			}
		})
	}
}
