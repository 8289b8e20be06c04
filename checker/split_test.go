package checker

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// withPieceMin sets pieceMinOps for one test.
func withPieceMin(t *testing.T, n int) {
	t.Helper()
	saved := pieceMinOps
	pieceMinOps = n
	t.Cleanup(func() { pieceMinOps = saved })
}

// unsplit is the reference: porcupine on the whole history at once, as the
// checker ran it before histories were split.
func unsplit(model porcupine.Model, ops []porcupine.Operation) Verdict {
	return verdictOf(porcupine.CheckOperationsTimeout(model, ops, time.Minute))
}

// randomBeliefs generates beliefs on locks A and B, one after another with
// small gaps (quiet points), ties (a belief starting when the previous one
// ended, no quiet point), attempts that start before earlier beliefs end
// (waiting clients), zero-length and open beliefs, and, with probability
// pOverlap per belief, a belief that starts before the previous ones ended.
// If one is set, exactly one belief of a random lock, at a random position,
// overlaps as well.
func randomBeliefs(rng *rand.Rand, pOverlap float64, one bool) []sim.Belief {
	oneLock := rng.IntN(2)
	var bs []sim.Belief
	for l, lock := range []string{"A", "B"} {
		var t sim.Time
		n := 2 + rng.IntN(40)
		at := -1
		if one && l == oneLock {
			at = 1 + rng.IntN(n-1)
		}
		for i := 0; i < n; i++ {
			start := t + sim.Time(rng.IntN(3))
			if i > 0 && (i == at || rng.Float64() < pOverlap) {
				start = t - sim.Time(1+rng.IntN(4))
			}
			start = max(start, 0)
			end := start + sim.Time(rng.IntN(6))
			attempt := max(start-sim.Time(rng.IntN(8)), 0)
			b := onLock(lock, bel(fmt.Sprintf("c%d", rng.IntN(3)), attempt, start, end))
			if i == n-1 && rng.IntN(6) == 0 {
				b = open(b)
			}
			bs = append(bs, b)
			t = max(t, end)
		}
	}
	rng.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	return bs
}

// randomSections generates critical sections on the resources of locks A
// and B served by a simulated storage node, mostly one after another, with
// overlapping sections with probability pOverlap, and rejected and lost
// writes; with probability pMutate per section, its read value is shifted
// by one (a read the storage node never served). If one is set, exactly one
// section of a random resource, at a random position, has its read shifted.
func randomSections(rng *rand.Rand, pOverlap, pMutate float64, one bool) []sim.Section {
	oneLock := rng.IntN(2)
	type event struct {
		at    sim.Time
		sec   int
		write bool
	}
	var secs []sim.Section
	for l, lock := range []string{"A", "B"} {
		var t sim.Time
		first := len(secs)
		var events []event
		n := 1 + rng.IntN(40)
		at := -1
		if one && l == oneLock {
			at = first + rng.IntN(n)
		}
		for i := 0; i < n; i++ {
			read := t + sim.Time(rng.IntN(3))
			if i > 0 && rng.Float64() < pOverlap {
				read = t - sim.Time(1+rng.IntN(4))
			}
			read = max(read, 0)
			write := read + sim.Time(rng.IntN(5))
			k := len(secs)
			secs = append(secs, sim.Section{Client: fmt.Sprintf("c%d", rng.IntN(3)), Lock: lock, BeliefID: -1,
				ReadSent: read, ReadAt: read, WriteSent: write, WriteAt: write, ResultAt: write})
			events = append(events, event{read, k, false}, event{write, k, true})
			t = max(t, write)
		}
		// The storage node serves the events of one instant in the order
		// they were generated.
		sort.SliceStable(events, func(i, j int) bool { return events[i].at < events[j].at })
		var value int64
		for _, e := range events {
			x := &secs[e.sec]
			if !e.write {
				x.Read, x.ReadValue = true, value
				continue
			}
			x.Written, x.WriteValue = true, x.ReadValue+1
			switch rng.IntN(8) {
			case 0:
				x.Outcome = sim.WriteRejected
			case 1:
				x.Outcome = sim.WriteLost
			default:
				x.Outcome = sim.WriteAccepted
				value = x.ReadValue + 1
			}
		}
		for k := first; k < len(secs); k++ {
			if k == at || rng.Float64() < pMutate {
				secs[k].ReadValue += int64(1 - 2*rng.IntN(2))
			}
		}
	}
	return secs
}

// TestSplitAgreesWithUnsplit is the soundness test of the split: on
// thousands of random histories, legal and illegal, checking piece by piece
// (pieces as small as one belief or one section) gives porcupine's verdict
// on the whole history. It also checks that the illegal histories put their
// first violation in every position (first, middle, last piece), so that
// the value carried across cuts and the state at a cut are exercised.
func TestSplitAgreesWithUnsplit(t *testing.T) {
	for _, minOps := range []int{1, 2, 6} {
		t.Run(fmt.Sprintf("pieceMinOps=%d", minOps), func(t *testing.T) {
			withPieceMin(t, minOps)
			rng := rand.New(rand.NewPCG(15, uint64(minOps)))
			type tally struct{ holds, violated, first, middle, last, multi int }
			var lock, res tally
			count := func(tl *tally, p pieceCheck) {
				if p.count > 1 {
					tl.multi++
				}
				if p.verdict != Violated {
					tl.holds++
					return
				}
				tl.violated++
				switch {
				case p.index == 1:
					tl.first++
				case p.index == p.count:
					tl.last++
				default:
					tl.middle++
				}
			}
			for i := 0; i < 1500; i++ {
				// Legal histories, one violation anywhere, several.
				mode := i % 3
				h := history(100, randomBeliefs(rng, []float64{0, 0, 0.1}[mode], mode == 1),
					randomSections(rng, []float64{0, 0, 0.05}[mode], []float64{0, 0, 0.03}[mode], mode == 1))
				h.End = 1000

				want := unsplit(LockModel, LockOperations(h))
				got := checkLock(h, time.Minute, false)
				require.Equal(t, want, got.verdict, "lock, history %d: %v", i, h.Beliefs)
				count(&lock, got)

				want = unsplit(ResourceModel, ResourceOperations(h))
				got = checkResource(h, time.Minute, false)
				require.Equal(t, want, got.verdict, "resource, history %d: %v", i, h.Sections)
				count(&res, got)
			}
			for name, tl := range map[string]tally{"lock": lock, "resource": res} {
				assert.Greater(t, tl.holds, 300, name)
				assert.Greater(t, tl.violated, 300, name)
				assert.Greater(t, tl.multi, 1000, "%s: most histories are split", name)
				assert.Greater(t, tl.first, 30, name)
				assert.Greater(t, tl.middle, 30, name)
				assert.Greater(t, tl.last, 10, name)
			}
		})
	}
}

func TestCuts(t *testing.T) {
	t.Run("lock", func(t *testing.T) {
		bs := sortedBeliefs(history(s(100), []sim.Belief{
			bel("c1", 0, s(1), s(2)),
			bel("c2", 0, s(2), s(3)), // starts when c1's ends: no quiet point
			bel("c1", s(1), s(4), s(10)),
			bel("c2", s(3), s(5), s(6)), // inside c1's: no quiet point
			bel("c3", s(3), s(11), s(12)),
			onLock("M", bel("c1", 0, s(11), s(12))), // another lock
			onLock("M", open(bel("c1", 0, s(20), 0))),
		}, nil))
		assert.Equal(t, []int{0, 2, 4, 5, 6}, lockCuts(bs, s(100), 1))
		assert.Equal(t, []int{0, 4, 5}, lockCuts(bs, s(100), 6), "a piece holds at least 6 operations (3 beliefs)")
	})
	t.Run("resource", func(t *testing.T) {
		secs := checkedSections(history(s(100), nil, []sim.Section{
			sect("c1", 1, s(1), s(2), 0, sim.WriteAccepted),
			sect("c2", 2, s(2), s(3), 1, sim.WriteAccepted), // read when c1's write was decided
			sect("c1", 3, s(4), s(9), 2, sim.WriteRejected),
			sect("c2", 4, s(5), s(6), 2, sim.WriteAccepted),
			sect("c2", 5, s(10), s(11), 3, sim.WriteAccepted),
		}))
		assert.Equal(t, []int{0, 2, 4}, resourceCuts(secs, 1))
		assert.Equal(t, []int{0, 4}, resourceCuts(secs, 3))
	})
}

// TestSplitCarriesTheValue checks that each piece of a resource starts
// from the value the earlier pieces left, not from zero: a read of 0 after
// two accepted writes is a violation, a read of 2 is not.
func TestSplitCarriesTheValue(t *testing.T) {
	withPieceMin(t, 1)
	for _, tt := range []struct {
		read int64
		want Verdict
	}{{2, Holds}, {0, Violated}, {1, Violated}, {3, Violated}} {
		h := history(s(100), nil, []sim.Section{
			sect("c1", 1, s(1), s(2), 0, sim.WriteAccepted),
			sect("c2", 2, s(3), s(4), 1, sim.WriteAccepted),
			sect("c1", 3, s(5), s(6), 2, sim.WriteRejected),
			sect("c2", 4, s(7), s(8), tt.read, sim.WriteAccepted),
		})
		p := checkResource(h, time.Minute, false)
		assert.Equal(t, 4, p.count)
		assert.Equal(t, tt.want, p.verdict, "read %d", tt.read)
	}
}

// TestSplitUnknown: a piece that times out makes the verdict Unknown, but an
// illegal piece anywhere decides Violated.
func TestSplitUnknown(t *testing.T) {
	withPieceMin(t, 1)
	h := history(s(100), []sim.Belief{
		bel("c1", 0, s(1), s(2)),
		bel("c2", 0, s(3), s(4)),
		bel("c1", 0, s(5), s(7)),
		bel("c2", 0, s(6), s(8)),
	}, nil)
	var calls int
	saved := linearize
	t.Cleanup(func() { linearize = saved })
	linearize = func(m porcupine.Model, ops []porcupine.Operation, timeout time.Duration, verbose bool) (porcupine.CheckResult, porcupine.LinearizationInfo) {
		calls++
		if calls == 2 {
			return porcupine.Unknown, porcupine.LinearizationInfo{}
		}
		return saved(m, ops, timeout, verbose)
	}
	p := checkLock(h, time.Minute, false)
	assert.Equal(t, Violated, p.verdict, "the third piece is illegal")
	assert.Equal(t, 3, p.index)

	calls = 0
	h.Beliefs = h.Beliefs[:3]
	assert.Equal(t, Unknown, checkLock(h, time.Minute, false).verdict, "legal pieces and one unknown")
}

// TestVisualizationShowsThePiece checks that the page of a long history
// with one violation shows the piece that holds it, with a note, and not the
// rest of the history.
func TestVisualizationShowsThePiece(t *testing.T) {
	withPieceMin(t, 4)
	h := genHistory(400, 3, false)
	// Make belief 200 overlap the next one: its holder was paused.
	h.Beliefs[200].End = h.Beliefs[201].Start + ms(2)
	h.Faults = []sim.FaultRecord{
		fault(h.Beliefs[200].Start, h.Beliefs[201].Start, "pause", "c2 was paused", "c2"),
		fault(ms(5), ms(6), "delay", "an early delay", "c0"),
	}
	r := Check(h, Options{Visualize: true})
	require.Equal(t, Violated, r.Verdicts.Of(LockSafety))
	require.Equal(t, Holds, r.Verdicts.Of(ResourceSafety))
	require.NoError(t, r.VisualizationErr)
	text := string(PageOf(r.Pages, PageLock))
	// (assert.True rather than Contains: the page is too long to print)
	assert.True(t, strings.Contains(text, "belief 200 ("), "the overlapping beliefs are shown")
	assert.True(t, strings.Contains(text, "belief 201 ("))
	assert.False(t, strings.Contains(text, "belief 100 ("), "beliefs of other pieces are not")
	assert.False(t, strings.Contains(text, "belief 0 ("))
	assert.True(t, strings.Contains(text, "c2 was paused"), "the faults of the piece are drawn")
	assert.False(t, strings.Contains(text, "an early delay"), "faults outside it are not")
	lockP := checkLock(h, time.Minute, true)
	note := fmt.Sprintf("piece %d of %d", lockP.index, lockP.count)
	assert.True(t, strings.Contains(text, note), "the note %q says which piece is shown", note)
	assert.Greater(t, lockP.count, 50)
}
