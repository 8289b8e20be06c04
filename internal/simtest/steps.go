package simtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/locksim/locksim/sim"
)

// SharedSteps are the commands Steps.Run handles, for the grammar of every
// interaction test:
//
//	advance DUR          run the world for DUR of true time.
//	jump PROC DUR        step PROC's wall clock by DUR (negative: backwards).
//	pause PROC DUR       stop PROC for DUR (a GC pause, SIGSTOP); messages
//	                     to it wait.
//	crash PROC [mode=process|power|clean]
//	restart PROC
//	partition A,B C,D    cut the network between the groups.
//	cut FROM TO          drop every message from FROM to TO (one way).
//	heal                 remove every partition and cut.
//	events [kinds=(K, ...)] [proc=P]
//	    print the trace events since the previous events step, one a line
//	    as "TIME PROC KIND [>PEER] TEXT" (Steps.Kinds by default), or
//	    "(none)".
//	losses
//	    print the keys servers removed on their own (the history's key
//	    losses: expiries, evictions, expired sessions, killed connections)
//	    since the previous losses step, one a line as
//	    "TIME NODE CAUSE KEY [holder=P] [(DETAIL)]", or "(none)".
var SharedSteps = []string{"advance", "jump", "pause", "crash", "restart", "partition", "cut", "heal", "events", "losses"}

// Steps runs the shared steps of interaction tests against a world.
type Steps struct {
	W *World
	// Kinds are the event kinds "events" prints by default.
	Kinds []sim.Kind
	// Ended, once set, refuses every shared step with its words (a test
	// whose run was finished: "nothing may follow the check step").
	Ended  string
	mark   int
	losses int // key losses printed so far
}

// Known fails the step unless name is a process of the world.
func (s *Steps) Known(a *Args, name string) sim.ProcID {
	a.t.Helper()
	if !s.W.Has(name) {
		a.Fatalf("unknown process %q (known: %s)", name, strings.Join(s.W.Names(), ", "))
	}
	return s.W.ID(name)
}

// Run handles td if it is a shared step and reports whether it was.
func (s *Steps) Run(t testing.TB, td *datadriven.TestData, a *Args) (string, bool) {
	t.Helper()
	w, k := s.W, s.W.K
	if s.Ended != "" && slices.Contains(SharedSteps, td.Cmd) {
		a.Fatalf("%s", s.Ended)
	}
	switch td.Cmd {
	case "advance":
		d := a.ParseDuration("advance", a.Pos("duration"))
		a.Done()
		a.NoInput()
		if d < 0 {
			a.Fatalf("the duration must not be negative")
		}
		w.Advance(d)
	case "jump":
		id := s.Known(a, a.Pos("process"))
		d := a.ParseDuration("jump", a.Pos("duration"))
		a.Done()
		k.JumpWall(id, d)
	case "pause":
		id := s.Known(a, a.Pos("process"))
		d := a.ParseDuration("pause", a.Pos("duration"))
		a.Done()
		if d <= 0 {
			a.Fatalf("the pause must be positive")
		}
		k.Pause(id, d)
	case "crash":
		id := s.Known(a, a.Pos("process"))
		mode := map[string]sim.CrashMode{"process": sim.CrashProcess, "power": sim.CrashPower, "clean": sim.CrashClean}[a.OneOf("mode", "process", "process", "power", "clean")]
		a.Done()
		if k.Crashed(id) {
			a.Fatalf("%s is already crashed", k.Name(id))
		}
		k.Crash(id, mode)
	case "restart":
		id := s.Known(a, a.Pos("process"))
		a.Done()
		if !k.Crashed(id) {
			a.Fatalf("%s is not crashed", k.Name(id))
		}
		k.Restart(id)
	case "partition":
		var groups [][]sim.ProcID
		for _, g := range a.Rest() {
			var ids []sim.ProcID
			for _, n := range strings.Split(g, ",") {
				ids = append(ids, s.Known(a, n))
			}
			groups = append(groups, ids)
		}
		a.Done()
		if len(groups) < 2 {
			a.Fatalf("needs at least two groups (A,B C)")
		}
		k.Partition(groups)
	case "cut":
		from := s.Known(a, a.Pos("from"))
		to := s.Known(a, a.Pos("to"))
		a.Done()
		k.CutOneWay([]sim.ProcID{from}, []sim.ProcID{to})
	case "heal":
		a.Done()
		k.Heal()
	case "events":
		kinds := s.Kinds
		if vs := a.Vals("kinds"); vs != nil {
			kinds = nil
			for _, x := range vs {
				kinds = append(kinds, sim.Kind(x))
			}
		}
		proc := a.String("proc", "")
		if proc != "" {
			s.Known(a, proc)
		}
		a.Done()
		var b strings.Builder
		for _, line := range strings.SplitAfter(w.Since(s.mark, kinds...), "\n") {
			if line == "" {
				continue
			}
			if proc != "" {
				// "TIME PROC KIND ...": keep the lines of proc.
				if f := strings.Fields(line); len(f) < 2 || f[1] != proc {
					continue
				}
			}
			b.WriteString(line)
		}
		s.mark = w.Mark()
		if b.Len() == 0 {
			return "(none)\n", true
		}
		return b.String(), true
	case "losses":
		a.Done()
		a.NoInput()
		ls := k.History().KeyLosses
		var b strings.Builder
		for _, l := range ls[s.losses:] {
			fmt.Fprintf(&b, "%s %s %s %s", l.At, l.Node, l.Cause, l.Key)
			if l.Holder != "" {
				fmt.Fprintf(&b, " holder=%s", l.Holder)
			}
			if l.Detail != "" {
				fmt.Fprintf(&b, " (%s)", l.Detail)
			}
			b.WriteByte('\n')
		}
		s.losses = len(ls)
		if b.Len() == 0 {
			return "(none)\n", true
		}
		return b.String(), true
	default:
		return "", false
	}
	return "", true
}
