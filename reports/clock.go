package reports

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// clockState mirrors the kernel's clock of a process (sim/clock.go): both
// clocks are affine functions of true time, reading(t) = base +
// scaled(t - anchor, ppb). A wall-clock jump moves the wall base; a rate
// change re-anchors both clocks. The arithmetic is the kernel's, in
// integers, so that reconstructed readings are exact.
type clockState struct {
	anchor   sim.Time
	wallBase int64
	monoBase int64
	ppb      int64
}

// scaled is sim's scaled: d*(1e9+ppb)/1e9, exactly.
func scaled(d, ppb int64) int64 {
	if ppb == 0 {
		return d
	}
	q, r := d/sim.PPB, d%sim.PPB
	return d + q*ppb + r*ppb/sim.PPB
}

// unscaled is sim's unscaled: the smallest d >= 0 with scaled(d, ppb) >=
// want, or math.MaxInt64.
func unscaled(want, ppb int64) int64 {
	if want <= 0 {
		return 0
	}
	if ppb == 0 {
		return want
	}
	r := uint64(sim.PPB + ppb)
	x, up := uint64(want), true
	if ppb < 0 {
		x, up = uint64(want-1), false
	}
	hi, lo := bits.Mul64(x, sim.PPB)
	if hi >= r {
		return math.MaxInt64
	}
	d, rem := bits.Div64(hi, lo, r)
	if !up || rem != 0 {
		d++
	}
	if d > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d)
}

func (c clockState) wall(t sim.Time) int64 { return c.wallBase + scaled(int64(t-c.anchor), c.ppb) }
func (c clockState) mono(t sim.Time) int64 { return c.monoBase + scaled(int64(t-c.anchor), c.ppb) }

// clockSeg is the clock state in force from a true time on.
type clockSeg struct {
	from sim.Time
	st   clockState
	// jump is true when the segment begins with a wall-clock step.
	jump bool
}

// ClockHistory is a process's clocks over a run, reconstructed from its
// initial clock and the trace's clock-jump and clock-drift events.
type ClockHistory struct {
	Proc string
	segs []clockSeg
}

// newClockHistory starts a process's clocks as the kernel does (Kernel.Add:
// wall base Epoch+offset, monotonic base 0, anchor 0).
func newClockHistory(proc string, init Clock) *ClockHistory {
	return &ClockHistory{Proc: proc, segs: []clockSeg{{st: clockState{wallBase: sim.Epoch + int64(init.Offset), ppb: init.DriftPPB}}}}
}

func (h *ClockHistory) last() clockState { return h.segs[len(h.segs)-1].st }

// jump applies a clock-jump event (Kernel.JumpWall: no re-anchoring).
func (h *ClockHistory) jump(t sim.Time, d time.Duration) {
	st := h.last()
	st.wallBase += int64(d)
	h.segs = append(h.segs, clockSeg{from: t, st: st, jump: true})
}

// drift applies a clock-drift event (Kernel.SetDrift: re-anchor, then set
// the rate).
func (h *ClockHistory) drift(t sim.Time, ppb int64) {
	st := h.last()
	st = clockState{anchor: t, wallBase: st.wall(t), monoBase: st.mono(t), ppb: ppb}
	h.segs = append(h.segs, clockSeg{from: t, st: st})
}

// at returns the clock state in force at t (after every change at t).
func (h *ClockHistory) at(t sim.Time) clockState {
	st := h.segs[0].st
	for _, s := range h.segs[1:] {
		if s.from > t {
			break
		}
		st = s.st
	}
	return st
}

// Wall returns the wall-clock reading (ns since the Unix epoch) at t.
func (h *ClockHistory) Wall(t sim.Time) int64 { return h.at(t).wall(t) }

// Mono returns the monotonic reading at t.
func (h *ClockHistory) Mono(t sim.Time) int64 { return h.at(t).mono(t) }

// WallOffset is the wall clock's offset from true time at t, as
// sim.Kernel.ClockOffset computes it.
func (h *ClockHistory) WallOffset(t sim.Time) time.Duration {
	return time.Duration(h.Wall(t) - sim.Epoch - int64(t))
}

// MonoOffset is the monotonic clock's offset from true time at t.
func (h *ClockHistory) MonoOffset(t sim.Time) time.Duration {
	return time.Duration(h.Mono(t) - int64(t))
}

// WallReaches returns the first true time in [from, to] at which the wall
// clock reads at least deadline (ns since the Unix epoch), and false if it
// never does in that span.
func (h *ClockHistory) WallReaches(deadline int64, from, to sim.Time) (sim.Time, bool) {
	for i, s := range h.segs {
		end := sim.Never
		if i+1 < len(h.segs) {
			end = h.segs[i+1].from
		}
		lo := s.from
		if lo < from {
			lo = from
		}
		if lo > to || lo >= end {
			continue // outside the span, or replaced at the same instant
		}
		if s.st.wall(lo) >= deadline {
			return lo, true
		}
		// The wall clock increases within a segment: solve from the anchor.
		d := unscaled(deadline-s.st.wallBase, s.st.ppb)
		if d == math.MaxInt64 || d >= int64(sim.Never-s.st.anchor) {
			continue
		}
		if t := s.st.anchor + sim.Time(d); t < end && t <= to {
			return t, true
		}
	}
	return 0, false
}

// changes returns the times at which the clocks changed, with whether the
// change was a jump.
func (h *ClockHistory) changes() []clockSeg { return h.segs[1:] }

// parseJump parses a clock-jump event's text ("+30s", "-5s"): the kernel
// writes a time.Duration's String, which is exact.
func parseJump(text string) (time.Duration, error) {
	return time.ParseDuration(strings.TrimPrefix(text, "+"))
}

// parseDrift parses a clock-drift event's text ("10000000 ppb").
func parseDrift(text string) (int64, error) {
	n, ok := strings.CutSuffix(text, " ppb")
	if !ok {
		return 0, fmt.Errorf("clock-drift text %q: want \"N ppb\"", text)
	}
	return strconv.ParseInt(n, 10, 64)
}

// Clocks reconstructs every process's clocks from the setup's initial
// clocks and the trace, in lane order (clients, then servers), followed by
// any other process that changed its clock.
func Clocks(setup Setup, trace []sim.Event) ([]*ClockHistory, error) {
	init := map[string]Clock{}
	for _, c := range setup.Clocks {
		init[c.Proc] = c
	}
	var out []*ClockHistory
	byName := map[string]*ClockHistory{}
	add := func(name string) *ClockHistory {
		if h := byName[name]; h != nil {
			return h
		}
		h := newClockHistory(name, init[name])
		byName[name] = h
		out = append(out, h)
		return h
	}
	for _, c := range setup.Clients {
		add(c)
	}
	for _, s := range setup.Servers {
		add(s.Name)
	}
	for _, e := range trace {
		switch e.Kind {
		case sim.KindClockJump:
			d, err := parseJump(e.Text)
			if err != nil {
				return nil, fmt.Errorf("trace event %d (clock-jump of %s): %v", e.Seq, e.Proc, err)
			}
			add(e.Proc).jump(e.At, d)
		case sim.KindClockDrift:
			ppb, err := parseDrift(e.Text)
			if err != nil {
				return nil, fmt.Errorf("trace event %d: %v", e.Seq, err)
			}
			add(e.Proc).drift(e.At, ppb)
		}
	}
	return out, nil
}
