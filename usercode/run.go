package usercode

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Options tune a run of user code.
type Options struct {
	_ struct{}

	// Seed is the run's seed; 0 means the scenario's own seed.
	Seed uint64
	// KeepTrace keeps every event of the run (the trace hash is computed
	// either way).
	KeepTrace bool
	// CheckTimeout bounds each linearizability check (0: the default).
	CheckTimeout time.Duration
	// Clients binds scenario clients, by name, to user code: the factory
	// is called at the client's start and at every restart, with the
	// incarnation's process environment, and must not block (build
	// clients; talk to servers in Obtain). Clients not named here run
	// locksim's model of their algorithm.
	Clients map[string]func(*Proc) Lock
	// Reference names, by client, the algorithm of locksim's model that the
	// code implements ("redis-single": SET NX PX, compare-and-delete), for
	// telling an inherent finding from the code's own (Whose); a client
	// not named here is compared with its scenario lock block's algorithm.
	Reference map[string]string
	// ProcClock says the code reads its wall clock through Proc.Now, where
	// wall-clock faults (clock-jump, clock-strobe, an initial offset) of
	// its client act; without it they are refused when the run starts,
	// since the code's time.Now never sees them (clocks.go).
	ProcClock bool
	// HangAfter is how long, in real time, the simulation waits for user
	// code that blocks outside the simulation (a real socket, a mutex never
	// released, a busy loop) before it reports the hang and exits the
	// process with status 3 (a blocked goroutine cannot be interrupted).
	// 0 means 30 s.
	HangAfter time.Duration
}

// Run runs the scenario with the named clients bound to user code, and
// judges the history as for any run (the same verdicts, explanations and
// trace hash).
//
// The user code runs inside a testing/synctest bubble whose clock is the
// simulation's, which is why Run takes the *testing.T of a test (or of a
// fuzz target's function): Go offers bubbles to tests only. Every goroutine
// the code starts, directly or through a library, belongs to the bubble.
// The simulation runs one kernel event at a time and, between events, lets
// the user goroutines run until all of them are durably blocked (waiting
// on a simulated connection, a timer, a channel): so the same scenario and
// seed give the same trace at any GOMAXPROCS, as long as the code blocks
// only on those. What escapes (a real socket, the global math/rand,
// crypto/rand reaching the trace through lock values) makes runs differ:
// CheckDeterminism names the first diverging event. Limits: a library's own
// time.Now reads the true (bubble) time, not the client's clock with its
// faults (LimitNote; Proc.Now reads the client's clock); goroutines woken by
// their own timers at the same nanosecond run concurrently.
//
// When the code got a reply that exists only because of a limit of
// locksim (limits.go), Run returns the outcome, inconclusive, with an
// *UnsupportedError.
//
// Runs in one process take turns, and each empties the process's
// sync.Pools when it ends (bubbles.go).
func Run(t *testing.T, s *scenarios.Scenario, opt Options) (*scenarios.Outcome, error) {
	if err := checkClients(s, opt.Clients); err != nil {
		return nil, err
	}
	if err := checkClockFaults(s, opt); err != nil {
		return nil, err
	}
	seed := s.Seed
	if opt.Seed != 0 {
		seed = opt.Seed
	}
	limit := opt.HangAfter
	if limit <= 0 {
		limit = 30 * time.Second
	}
	if _, told := noted.LoadOrStore(t, true); !told {
		t.Log("locksim: " + LimitNote)
	}
	end := runTurn()
	defer end()
	wd := &watchdog{limit: limit, calls: map[string]string{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go wd.run(s.Name, seed, stop, done)
	defer func() { close(stop); <-done }()
	var (
		o   *scenarios.Outcome
		err error
		w   *world
	)
	func() {
		defer func() {
			// Code still blocked in the bubble when the run ended makes
			// synctest panic ("main bubble goroutine has exited but
			// blocked goroutines remain"); the run found it first
			// (world.blocked) and reports it as an error. The blocked
			// goroutines stay parked, on channels of a bubble that no
			// longer exists.
			if v := recover(); v != nil {
				if w == nil || w.hang == nil {
					panic(v)
				}
				o, err = nil, w.hang
			}
		}()
		synctest.Test(t, func(*testing.T) {
			o, w, err = runBubble(s, seed, opt, wd)
		})
	}()
	if w != nil {
		w.over.Store(true)
		if err == nil && o != nil {
			explainUnfinished(o, w.unfinished)
		}
		if err == nil && o != nil && len(w.limits) > 0 {
			o.MarkUnsupported(w.limits)
			return o, &UnsupportedError{Scenario: s.Name, Seed: seed, Replies: w.limits}
		}
	}
	return o, err
}

// noted holds the tests told LimitNote (once each).
var noted sync.Map

// checkClients refuses names that are not lock clients of the scenario.
func checkClients(s *scenarios.Scenario, bound map[string]func(*Proc) Lock) error {
	if len(bound) == 0 {
		return fmt.Errorf("usercode: Options.Clients binds no client of scenario %s", s.Name)
	}
	have := map[string]bool{}
	var names []string
	for _, c := range s.Clients {
		have[c.Name] = true
		names = append(names, c.Name)
	}
	var bad []string
	for n, f := range bound {
		if !have[n] {
			bad = append(bad, n)
		} else if f == nil {
			return fmt.Errorf("usercode: Options.Clients[%q]: nil factory", n)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("usercode: Options.Clients: scenario %s has no lock client %s (its clients: %s)", s.Name, strings.Join(bad, ", "), strings.Join(names, ", "))
	}
	return nil
}

func runBubble(s *scenarios.Scenario, seed uint64, opt Options, wd *watchdog) (o *scenarios.Outcome, w *world, err error) {
	bopt := scenarios.BuildOptions{Client: func(name string, cfg clients.Config) func() sim.Process {
		f, ok := opt.Clients[name]
		if !ok {
			return nil
		}
		return func() sim.Process {
			in := &instance{w: w, name: name, cfg: cfg, factory: f}
			return clients.NewUser(cfg, starter{in})
		}
	}}
	sopt := scenarios.Options{KeepTrace: opt.KeepTrace, CheckTimeout: opt.CheckTimeout, Visualize: opt.KeepTrace, Describe: true}
	func() {
		defer func() {
			if v := recover(); v != nil {
				fs, ok := v.(failureSignal)
				if !ok {
					panic(v)
				}
				o, err = nil, fs.err
			}
		}()
		o, err = scenarios.RunWith(s, seed, sopt, bopt, func(wo *scenarios.World) error {
			w = newWorld(wo.Kernel, wd)
			w.scenario = s.Name
			w.kinds = map[string]string{}
			for _, sp := range s.Servers() {
				if k := sp.Kind; k != nil && (k.Name == scenarios.KindRedis || k.Name == scenarios.KindSentinel) {
					w.redis = append(w.redis, sp.Name)
				} else if k != nil {
					w.kinds[sp.Name] = k.What
				}
			}
			for _, c := range s.Clients {
				w.kinds[c.Name] = "a lock client"
			}
			wo.Kernel.SetDriver(w)
			wo.Kernel.Observe(w.resumed)
			return nil
		})
	}()
	if w != nil {
		w.finish()
	}
	return o, w, err
}

// starter sets the instance's process id at its start.
type starter struct{ *instance }

func (s starter) Start(env *sim.Env, lost func(string)) {
	s.id = env.ID()
	s.instance.Start(env, lost)
}

// CheckDeterminism runs the scenario twice with the same seed and compares
// the traces event by event. It returns nil when they are the same, and
// otherwise an error naming the first event that differs, in both runs:
// user code escaped the simulation there (a real socket, the global
// math/rand, crypto/rand in a lock value, a goroutine outside the bubble).
func CheckDeterminism(t *testing.T, s *scenarios.Scenario, opt Options) error {
	opt.KeepTrace = true
	a, err := Run(t, s, opt)
	if err != nil {
		return err
	}
	b, err := Run(t, s, opt)
	if err != nil {
		return err
	}
	i := sim.FirstDivergence(a.Trace, b.Trace)
	if i < 0 {
		return nil
	}
	return &DivergenceError{Scenario: s.Name, Seed: a.Seed, Index: i, First: eventAt(a.Trace, i), Second: eventAt(b.Trace, i)}
}

func eventAt(tr []sim.Event, i int) string {
	if i >= len(tr) {
		return "(the trace ended)"
	}
	e := tr[i]
	return fmt.Sprintf("#%d at %v: %s %s %s %s", e.Seq, time.Duration(e.At), e.Kind, e.Proc, e.Peer, e.Text)
}

// DivergenceError says where two runs of the same scenario and seed first
// differed.
type DivergenceError struct {
	Scenario      string
	Seed          uint64
	Index         int
	First, Second string
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("%s seed %d is not deterministic: user code escaped the simulation; the traces first differ at event %d:\n  first run:  %s\n  second run: %s", e.Scenario, e.Seed, e.Index, e.First, e.Second)
}

// run polls the root's waits on real time (outside the bubble).
func (d *watchdog) run(scenario string, seed uint64, stop, done chan struct{}) {
	defer close(done)
	const tick = 50 * time.Millisecond
	tk := time.NewTicker(tick)
	defer tk.Stop()
	var last uint64
	var stuck time.Duration
	for {
		select {
		case <-stop:
			return
		case <-tk.C:
		}
		g := d.gen.Load()
		if !d.in.Load() || g != last {
			last, stuck = g, 0
			continue
		}
		stuck += tick
		if stuck < d.limit {
			continue
		}
		fmt.Fprint(os.Stderr, d.report(scenario, seed, stuck))
		os.Exit(3)
	}
}

// report names the hang: the virtual time, the user calls in flight and
// the goroutines' stacks.
func (d *watchdog) report(scenario string, seed uint64, stuck time.Duration) string {
	d.mu.Lock()
	at := d.at
	var calls []string
	for c, what := range d.calls {
		calls = append(calls, "client "+c+": "+what)
	}
	d.mu.Unlock()
	sort.Strings(calls)
	if len(calls) == 0 {
		calls = []string{"(no lock call in flight: a goroutine of the code itself)"}
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return fmt.Sprintf("locksim: %s seed %d: user code blocked outside the simulation (a real socket, a mutex never released, a busy loop) for %v of real time at virtual time %v:\n  %s\ngoroutines:\n%s\n",
		scenario, seed, stuck, at, strings.Join(calls, "\n  "), buf)
}

// explainUnfinished completes the liveness explanation of a client whose
// Obtain (or Release) never returned before the run ended: the history
// shows only a wait that never ended, and the checker cannot tell a lock
// that stayed taken from code that waited on something else; the call in
// flight says which.
func explainUnfinished(o *scenarios.Outcome, calls []string) {
	for i := range o.Violations {
		v := &o.Violations[i]
		if v.Kind != checker.KindLiveness {
			continue
		}
		var named []string
		for _, c := range calls {
			for _, cl := range v.Clients {
				if strings.HasPrefix(c, "client "+cl+": ") && !strings.Contains(c, "Proc.Go") {
					named = append(named, strings.TrimPrefix(c, "client "))
				}
			}
		}
		if len(named) == 0 {
			continue
		}
		v.Explanation = strings.TrimSuffix(v.Explanation, ".") + "; the user code's call had not returned when the run ended (its context was cancelled then): " + strings.Join(named, "; ") + "."
	}
}
