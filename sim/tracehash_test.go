package sim

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hashBytes hashes b as the tracer does when it is fed chunks of the given
// sizes (the rest in one last chunk): whole blocks consumed, the remainder
// carried to the next chunk.
func hashBytes(b []byte, chunks ...int) [32]byte {
	h := newTraceHash()
	var pending []byte
	for _, c := range chunks {
		if c > len(b) {
			c = len(b)
		}
		pending = append(pending, b[:c]...)
		b = b[c:]
		pending = pending[:copy(pending, pending[h.blocks(pending):])]
	}
	pending = append(pending, b...)
	pending = pending[:copy(pending, pending[h.blocks(pending):])]
	return h.sum(pending)
}

func testBytes(n int, seed uint64) []byte {
	r := NewRand(seed, "tracehash")
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint64())
	}
	return b
}

// TestTraceHashChunking checks that the hash of a byte stream does not
// depend on how the tracer's buffer splits it.
func TestTraceHashChunking(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 4096, 5000} {
		b := testBytes(n, uint64(n)+1)
		whole := hashBytes(b)
		for _, chunks := range [][]int{{1}, {7, 9}, {31, 1, 33}, {32, 32}, {4095, 2}, {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}} {
			assert.Equal(t, whole, hashBytes(b, chunks...), "n=%d chunks=%v", n, chunks)
		}
	}
}

// TestTraceHashLengthAndPadding checks that inputs differing only in
// trailing zeros, or in length, hash differently.
func TestTraceHashLengthAndPadding(t *testing.T) {
	seen := map[[32]byte]int{}
	for n := 0; n <= 96; n++ {
		h := hashBytes(make([]byte, n))
		prev, dup := seen[h]
		require.False(t, dup, "%d and %d zero bytes hash alike", n, prev)
		seen[h] = n
	}
}

// TestTraceHashAvalanche flips each bit of inputs of several lengths and
// checks that about half of the 256 output bits flip each time, and never
// few of them: every input bit reaches every lane's output.
func TestTraceHashAvalanche(t *testing.T) {
	for _, n := range []int{1, 8, 31, 32, 40, 200} {
		b := testBytes(n, 7+uint64(n))
		base := hashBytes(b)
		total, flips := 0, 0
		for i := 0; i < 8*n; i++ {
			b[i/8] ^= 1 << (i % 8)
			h := hashBytes(b)
			b[i/8] ^= 1 << (i % 8)
			d := 0
			for j := range h {
				d += bits.OnesCount8(h[j] ^ base[j])
			}
			require.Greater(t, d, 90, "n=%d bit %d flips only %d output bits", n, i, d)
			require.Less(t, d, 166, "n=%d bit %d flips %d output bits", n, i, d)
			total += d
			flips++
		}
		mean := float64(total) / float64(flips)
		assert.InDelta(t, 128, mean, 3, "n=%d: mean output bits flipped", n)
	}
}

// TestTraceHashEachFieldChanges re-hashes a recorded trace with one field
// of one event changed, for every event and every field the hash covers
// (time, kind, process, peer, message number, text; the order is the
// sequence number): each change must change the hash. Typed fields
// (Event.Fields) are not hashed: they repeat what the text says.
func TestTraceHashEachFieldChanges(t *testing.T) {
	k := traceWorld(true, 1)
	evs := k.Trace()
	require.Greater(t, len(evs), 20)
	base, err := HashEvents(evs, k.Lookup)
	require.NoError(t, err)
	require.Equal(t, k.TraceHash(), base)
	names := []string{"", "a", "b"}
	other := func(s string) string {
		for _, n := range names {
			if n != s {
				if _, ok := k.Lookup(n); ok || n == "" {
					return n
				}
			}
		}
		return s
	}
	mutations := []struct {
		name string
		f    func(evs []Event, i int) bool
	}{
		{"time", func(evs []Event, i int) bool {
			for j := i; j < len(evs); j++ {
				evs[j].At++
			}
			return true
		}},
		{"kind", func(evs []Event, i int) bool {
			if _, carries := msgKinds[evs[i].Kind]; carries {
				return false // its message number is required or parsed: covered below
			}
			evs[i].Kind += "x"
			return true
		}},
		{"kind coded", func(evs []Event, i int) bool {
			switch evs[i].Kind {
			case KindTimer:
				evs[i].Kind = KindFault
			case KindFault:
				evs[i].Kind = KindTimer
			default:
				return false
			}
			return true
		}},
		{"proc", func(evs []Event, i int) bool { evs[i].Proc = other(evs[i].Proc); return true }},
		{"peer", func(evs []Event, i int) bool { evs[i].Peer = other(evs[i].Peer); return true }},
		{"message number", func(evs []Event, i int) bool {
			n, rest, ok := cutMsgNumber(evs[i].Text)
			if !ok || evs[i].Kind == KindSend {
				return false // a send's number is implied by its order
			}
			evs[i].Text = "#" + itoa(n+1)
			if rest != "" {
				evs[i].Text += " " + rest
			}
			return true
		}},
		{"text", func(evs []Event, i int) bool { evs[i].Text += "x"; return true }},
		{"text byte", func(evs []Event, i int) bool {
			if evs[i].Text == "" {
				return false
			}
			b := []byte(evs[i].Text)
			b[len(b)-1]++
			evs[i].Text = string(b)
			return true
		}},
		{"order", func(evs []Event, i int) bool {
			if i+1 >= len(evs) || evs[i+1].At != evs[i].At || evs[i].Equal(&evs[i+1]) {
				return false
			}
			evs[i], evs[i+1] = evs[i+1], evs[i]
			return true
		}},
		{"dropped", func(evs []Event, i int) bool { evs[i].Kind = "gone"; return true }},
	}
	for _, m := range mutations {
		tried := 0
		for i := range evs {
			mut := append([]Event(nil), evs...)
			if !m.f(mut, i) {
				continue
			}
			if m.name == "dropped" {
				mut = append(mut[:i], mut[i+1:]...)
			}
			tried++
			h, err := HashEvents(mut, k.Lookup)
			if err != nil {
				continue // a change HashEvents refuses (e.g. a send without its number) is caught anyway
			}
			require.NotEqual(t, base, h, "%s of event %d (%+v) does not change the hash", m.name, i+1, evs[i])
		}
		assert.Greater(t, tried, 0, m.name)
	}
}

func itoa(n uint64) string {
	return string(appendValue(nil, n))
}
