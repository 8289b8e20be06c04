package checker

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/sim"
)

// LivenessWindow is a window over which a scenario claims progress
// (expect.liveness_window): from a named instant to the end of the run,
// the lock must not stand free for longer than Within while a client
// waits for it. It replaces the fault-free windows of the liveness
// property for that run: the scenario names the window because its story
// is about progress despite what still acts in it (a master gone for
// good, replaced by a failover), or because the story's progress comes
// after a fault the property would otherwise leave out.
//
// The instant is a true time (At), or the moment a fault of the schedule
// stopped acting (Fault, 1 + its index in the scenario's faults list):
// the heal of a partition, the end of a pause, the restart of a crashed
// node, the instant of a crash without restart or of an instantaneous
// fault; the first record of that fault when it acted more than once.
// A fault that never acted leaves no window (not judged, with the
// reason).
type LivenessWindow struct {
	At    sim.Time
	Fault int
	// Within is the bound of every client inside the window.
	Within time.Duration
}

// Name says how the scenario names the window's start: "faults[1]" or
// "10s".
func (w LivenessWindow) Name() string {
	if w.Fault > 0 {
		return fmt.Sprintf("faults[%d]", w.Fault-1)
	}
	return w.At.Duration().String()
}

// start finds the window's start in h: false when the named fault has
// not acted (yet: a piece of a streamed history may precede it).
func (w LivenessWindow) start(h *sim.History) (sim.Time, bool) {
	if w.Fault == 0 {
		return w.At, true
	}
	for _, f := range h.Faults {
		if f.Spec != w.Fault {
			continue
		}
		end := f.At
		if f.Until > 0 {
			end = f.Until // sim.Never: a partition that never heals
		}
		return end, true
	}
	return 0, false
}

// windowed returns the options liveness judges with under the named
// window: every client bound by Within.
func windowed(opts Options) Options {
	if opts.Window == nil {
		return opts
	}
	opts.MaxWait, opts.DefaultMaxWait = nil, opts.Window.Within
	return opts
}

// livenessWindows are the windows in which liveness is judged: the named
// window when the scenario names one, else the fault-free windows (the
// complement of the fault spans).
func livenessWindows(h *sim.History, opts Options, spans []Window) []Window {
	w := opts.Window
	if w == nil {
		return complement(spans, 0, h.End)
	}
	start, ok := w.start(h)
	if !ok || start >= h.End {
		return nil
	}
	return []Window{{Start: start, End: h.End}}
}

// namedWindowNote is the liveness note under a named window: how it was
// judged (verdict Holds or Violated), or why it could not be.
func namedWindowNote(h *sim.History, opts Options, windows []Window, judged bool) string {
	w := opts.Window
	what := "after " + w.Name()
	if w.Fault > 0 {
		what += " stopped acting"
	}
	if len(windows) == 0 {
		if _, ok := w.start(h); !ok {
			return fmt.Sprintf("not judged: the window the scenario names (%s) never began: %s never acted", what, w.Name())
		}
		return fmt.Sprintf("not judged: the window the scenario names (%s) begins at or after the end of the run (%s)", what, h.End)
	}
	win := windows[0]
	if !judged {
		return fmt.Sprintf("not judged: the window the scenario names (%s, %s to %s) is no longer than its bound of %s", what, win.Start, win.End, w.Within)
	}
	return fmt.Sprintf("judged over the window the scenario names (%s, %s to %s), bound %s", what, win.Start, win.End, w.Within)
}
