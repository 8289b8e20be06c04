package usercode

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// One time base.
//
// User code reads two clocks: time.Now, the bubble's clock, which is the
// simulation's true time (it starts at 2000-01-01 UTC and never jumps),
// and Proc.Now, the client's wall clock as the kernel keeps it (it starts
// at sim.Epoch, 2026-01-01 UTC, plus the client's offset, and carries its
// clock faults). A deadline the code hands back (Held.Until, UntilFunc)
// is compared with time.Now; one computed from Proc.Now lies 26 years
// ahead of it and would never pass. It is refused instead, with the
// clock to use (ClockError).
//
// Clock faults that move only the wall clock (clock-jump, clock-strobe, an
// initial offset) reach user code only through Proc.Now: a library reads
// time.Now. Unless Options.ProcClock says the code reads Proc.Now, they
// are refused when the run starts (a fault that cannot act would make a
// finding or a clean run mean nothing), and the fuzzer does not draw them
// for the bound clients. Rate faults (clock-drift, an initial drift) act
// on the client's monotonic clock, hence on the workload's timers (hold,
// think, retries, extend_every) and Proc.After and Proc.Sleep: allowed.

// ClockError is a deadline of user code on the wrong clock.
type ClockError struct {
	Client string
	What   string // "Held.Until", "Held.UntilFunc"
	At     time.Duration
	// Deadline is what the code returned; Now the simulation's clock
	// (time.Now in the code) and Wall the client's wall clock (Proc.Now)
	// at that moment.
	Deadline, Now, Wall time.Time
}

func (e *ClockError) Error() string {
	return fmt.Sprintf("user code of client %s returned %s %s at virtual time %v: that is a time on the client's wall clock (Proc.Now, now %s), but locksim compares deadlines with time.Now, the simulation's clock (now %s), where it would never pass: compute the deadline from time.Now (as redsync's Mutex.Until does), or leave it zero",
		e.Client, e.What, e.Deadline.Format(time.RFC3339Nano), e.At, e.Wall.Format(time.RFC3339Nano), e.Now.Format(time.RFC3339Nano))
}

// checkDeadline returns a *ClockError when d is closer to the client's
// wall clock than to the bubble's (root).
func (in *instance) checkDeadline(what string, d time.Time) error {
	if d.IsZero() {
		return nil
	}
	now := in.w.epoch.Add(time.Duration(in.w.k.Now()))
	wall := in.proc.Now()
	if absDur(d.Sub(wall)) < absDur(d.Sub(now)) {
		return &ClockError{Client: in.name, What: what, At: time.Duration(in.w.k.Now()), Deadline: d, Now: now, Wall: wall}
	}
	return nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// wallOnly reports whether a fault kind moves only the wall clock.
func wallOnly(kind string) bool {
	return kind == faults.KindClockJump || kind == faults.KindClockStrobe
}

// checkClockFaults refuses the scenario's wall-clock faults on clients
// bound to user code that does not read Proc.Now.
func checkClockFaults(s *scenarios.Scenario, opt Options) error {
	if opt.ProcClock {
		return nil
	}
	const how = "user code reads time.Now, the simulation's true time, which no wall-clock fault moves (only Proc.Now sees them): remove it, aim it at a server, or set Options.ProcClock if the code reads its wall clock through Proc.Now"
	for _, c := range s.Clients {
		if _, ok := opt.Clients[c.Name]; ok && c.Clock.Offset != 0 {
			return fmt.Errorf("usercode: %s: clients[%s].clock.offset %v cannot act on client %s: %s", s.Name, c.Name, c.Clock.Offset, c.Name, how)
		}
	}
	for i, f := range s.Faults {
		if _, ok := opt.Clients[f.Node]; ok && wallOnly(f.Kind) {
			return fmt.Errorf("usercode: %s: faults[%d] (%s) cannot act on client %s: %s", s.Name, i, f.String(), f.Node, how)
		}
	}
	return nil
}

// actingFaults drops from a drawn schedule the wall-clock faults on bound
// clients that cannot act on them (checkClockFaults).
func actingFaults(specs []faults.Spec, opt Options) []faults.Spec {
	if opt.ProcClock {
		return specs
	}
	out := specs[:0:0]
	for _, f := range specs {
		if _, ok := opt.Clients[f.Node]; ok && wallOnly(f.Kind) {
			continue
		}
		out = append(out, f)
	}
	return out
}
