package reports

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/sim"
)

// clockSeg is the clock state in force from a true time on.
type clockSeg struct {
	from sim.Time
	st   sim.ClockState
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
	return &ClockHistory{Proc: proc, segs: []clockSeg{{st: sim.NewClockState(init.Offset, init.DriftPPB)}}}
}

func (h *ClockHistory) last() sim.ClockState { return h.segs[len(h.segs)-1].st }

// jump applies a clock-jump event (Kernel.JumpWall: no re-anchoring).
func (h *ClockHistory) jump(t sim.Time, d time.Duration) {
	st := h.last()
	st.Jump(d)
	h.segs = append(h.segs, clockSeg{from: t, st: st, jump: true})
}

// drift applies a clock-drift event (Kernel.SetDrift: re-anchor, then set
// the rate).
func (h *ClockHistory) drift(t sim.Time, ppb int64) {
	st := h.last()
	st.SetRate(t, ppb)
	h.segs = append(h.segs, clockSeg{from: t, st: st})
}

// at returns the clock state in force at t (after every change at t).
func (h *ClockHistory) at(t sim.Time) sim.ClockState {
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
func (h *ClockHistory) Wall(t sim.Time) int64 { return h.at(t).Read(sim.Wall, t) }

// Mono returns the monotonic reading at t.
func (h *ClockHistory) Mono(t sim.Time) int64 { return h.at(t).Read(sim.Mono, t) }

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
		// The wall clock increases within a segment: the kernel's own
		// solution (the time a timer on it would fire).
		if t := s.st.When(sim.Wall, deadline, lo); t != sim.Never && t < end && t <= to {
			return t, true
		}
	}
	return 0, false
}

// changes returns the times at which the clocks changed, with whether the
// change was a jump.
func (h *ClockHistory) changes() []clockSeg { return h.segs[1:] }

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
			d, ok := e.Fields.Duration("step")
			if !ok {
				return nil, fmt.Errorf("trace event %d (clock-jump of %s): no step field (a trace written before events had typed fields: run the scenario again)", e.Seq, e.Proc)
			}
			add(e.Proc).jump(e.At, d)
		case sim.KindClockDrift:
			ppb, ok := e.Fields.Int("ppb")
			if !ok {
				return nil, fmt.Errorf("trace event %d (clock-drift of %s): no ppb field (a trace written before events had typed fields: run the scenario again)", e.Seq, e.Proc)
			}
			add(e.Proc).drift(e.At, ppb)
		}
	}
	return out, nil
}
