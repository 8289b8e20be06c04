package locksim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/usercode"
)

// User code (issue 24): a team's own lock, or a real lock library, bound
// to a scenario client in place of locksim's model of its algorithm.

// UserLock is a lock as user code implements it: the two methods a team
// writes around its library (Obtain one attempt, Release). See
// usercode.Lock.
type UserLock = usercode.Lock

// UserExtender is the optional extension step of a UserLock: a lock with
// an Extend method has it called every extend_every of the scenario's
// lock while it is held, and a failed extension ends the client's belief
// (the lock is lost). See usercode.Extender.
type UserExtender = usercode.Extender

// Held is a lock user code obtained: its optional fencing token, the
// validity it computed, its value. See usercode.Held.
type Held = usercode.Held

// Proc is the process environment of a user client's incarnation: Redis
// clients on simulated connections, its clocks (with the scenario's clock
// faults), a seeded random stream, goroutines, a log into the trace. See
// usercode.Proc.
type Proc = usercode.Proc

// LockParams are a user client's lock parameters from its scenario (Proc.Lock).
type LockParams = usercode.LockParams

// UserOptions tune RunUser.
type UserOptions struct {
	_ struct{}

	// Seed is the run's seed; 0 means the scenario's own seed.
	Seed uint64
	// CheckTimeout bounds each linearizability check.
	CheckTimeout time.Duration
	// KeepTrace keeps every event, for Result.WriteTrace and WriteReport.
	KeepTrace bool
	// Clients binds scenario clients by name to a factory of user code,
	// called at the client's start and at each restart with that
	// incarnation's Proc. The factory builds clients and must not block.
	// Clients not named here run locksim's model.
	Clients map[string]func(*Proc) UserLock
	// HangAfter is the real time after which code blocked outside the
	// simulation is reported (the process then exits with status 3);
	// 0 means 30 s.
	HangAfter time.Duration
	// ProcClock says the code reads its wall clock through Proc.Now, where
	// wall-clock faults of its client (clock-jump, clock-strobe, an
	// initial offset) act; without it such faults on a bound client are
	// refused when the run starts (the code's time.Now never sees them).
	ProcClock bool
	// CheckDeterminism runs the scenario twice and fails with the first
	// diverging event when the traces differ (user code that escapes the
	// simulation: a real socket, the global math/rand, crypto/rand).
	CheckDeterminism bool
}

// RunUser runs the scenario with user code in place of the named clients
// and judges it as Run does: the scenario's workload drives the code
// (want, attempts, the critical section on the resource with the token,
// release) and records the same history, so the verdicts, explanations,
// reports and trace hash mean what they mean for a modelled client.
//
// It takes the *testing.T of a test (or of a fuzz target's function)
// because the code runs in a testing/synctest bubble, which Go offers to
// tests only: the bubble's clock is the simulation's, and every goroutine
// the code or its library starts belongs to it, so the same scenario and
// seed give the same trace at any GOMAXPROCS. Limits: a library's own
// time.Now reads the simulation's true time, not the client's clock with
// its offsets and jumps (Proc.Now does; the run's trace says so at every
// user client's start); goroutines woken by their own timers at the same
// nanosecond run concurrently. A panic in user code stops the run with an
// error naming the client, the virtual time and the panic (a panic in a
// goroutine the library started itself, not through Proc.Go, crashes the
// test binary as it would the service).
//
// A run in which the code got a reply that exists only because of a limit
// of locksim (a script the simulated Redis does not run, a command or
// option it does not model) is inconclusive: RunUser returns its Result
// (Inconclusive, every verdict unknown, the replies in its record's
// Unsupported with the client, the command and the time) together with an
// error wrapping *usercode.UnsupportedError.
func RunUser(t *testing.T, s *Scenario, opt UserOptions) (*Result, error) {
	if s == nil || s.s == nil {
		return nil, errors.New("locksim.RunUser: nil scenario")
	}
	if t == nil {
		return nil, errors.New("locksim.RunUser: nil *testing.T")
	}
	uo := usercode.Options{Seed: opt.Seed, KeepTrace: opt.KeepTrace, CheckTimeout: opt.CheckTimeout, HangAfter: opt.HangAfter, ProcClock: opt.ProcClock}
	uo.Clients = map[string]func(*usercode.Proc) usercode.Lock{}
	for name, f := range opt.Clients {
		uo.Clients[name] = f
	}
	if opt.CheckDeterminism {
		if err := usercode.CheckDeterminism(t, s.s, uo); err != nil {
			return nil, fmt.Errorf("locksim.RunUser %s: %w", s.s.Name, err)
		}
	}
	o, err := usercode.Run(t, s.s, uo)
	var limit *usercode.UnsupportedError
	if errors.As(err, &limit) && o != nil {
		// Inconclusive: the result too, for its summary, JSON and report.
		return ResultOf(o, 0), fmt.Errorf("locksim.RunUser %s: %w", s.s.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("locksim.RunUser %s: %w", s.s.Name, err)
	}
	r := ResultOf(o, 0)
	return r, nil
}

// UserFinding is a fault schedule under which user code violated a
// property, with the scenario files written. See usercode.Finding.
type UserFinding = usercode.Finding

// FuzzUserOptions tune FuzzUser and CheckUserSchedule.
type FuzzUserOptions struct {
	_ struct{}

	// Clients, HangAfter and CheckTimeout are as in UserOptions.
	Clients      map[string]func(*Proc) UserLock
	HangAfter    time.Duration
	CheckTimeout time.Duration
	// Kinds are the fault kinds drawn (nil: every kind that applies).
	Kinds []string
	// Checks are the properties that must hold, as simrun fuzz --check
	// takes them ("lock_safety", "resource_safety", "liveness", ...; nil:
	// those the base's expect block claims hold, else both safety
	// properties).
	Checks []string
	// Runs is the number of schedules FuzzUser tries (0: 100); Seed the
	// campaign seed (0: 1); MaxFaults bounds a schedule (0: default).
	Runs      int
	Seed      uint64
	MaxFaults int
	// ShrinkRuns bounds the shrink (0: 300).
	ShrinkRuns int
	// Reference names, by client, the algorithm of locksim's model that the
	// code implements (default: the client's lock block's algorithm): a
	// finding says whether that model violates the property on the same
	// world, seed and schedule too (inherent) or not (the code's own bug:
	// UserFinding.Whose).
	Reference map[string]string
	// ProcClock is as in UserOptions; without it the fuzzer draws no
	// wall-clock fault for a bound client.
	ProcClock bool
	// SkipInherent passes over schedules whose violations are inherent and
	// keeps searching for the code's own.
	SkipInherent bool
	// OutDir receives the scenario files ("": locksim-findings in the
	// working directory, the test's package directory: keep it as a CI
	// artifact).
	OutDir string
}

func (o FuzzUserOptions) usercode() (usercode.FuzzOptions, error) {
	fo := usercode.FuzzOptions{
		Options:      usercode.Options{HangAfter: o.HangAfter, CheckTimeout: o.CheckTimeout, Clients: map[string]func(*usercode.Proc) usercode.Lock{}, Reference: o.Reference, ProcClock: o.ProcClock},
		SkipInherent: o.SkipInherent,
		Kinds:        o.Kinds,
		Runs:         o.Runs,
		Seed:         o.Seed,
		MaxFaults:    o.MaxFaults,
		ShrinkRuns:   o.ShrinkRuns,
		OutDir:       o.OutDir,
	}
	for name, f := range o.Clients {
		fo.Options.Clients[name] = f
	}
	if len(o.Checks) > 0 {
		checks, err := fuzz.ParseChecks(strings.Join(o.Checks, ","))
		if err != nil {
			return fo, fmt.Errorf("FuzzUserOptions.Checks: %w", err)
		}
		fo.Checks = checks
	}
	return fo, nil
}

// FuzzUser fuzzes fault schedules against user code, as simrun fuzz does
// against locksim's models (the same generator, run seeds, properties and
// shrinking): it tries opt.Runs schedules on the base scenario's world (its
// own faults replaced), and at the first violation shrinks the schedule and
// writes the scenario file as found and shrunk. It returns nil when no
// schedule violated anything. Run it from a test in CI, on every change
// of the lock; CheckUserSchedule is the form for go test -fuzz.
func FuzzUser(t *testing.T, s *Scenario, opt FuzzUserOptions) (*UserFinding, error) {
	if s == nil || s.s == nil {
		return nil, errors.New("locksim.FuzzUser: nil scenario")
	}
	fo, err := opt.usercode()
	if err != nil {
		return nil, err
	}
	return usercode.Fuzz(t, s.s, fo)
}

// CheckUserSchedule decodes a native fuzz target's bytes into a fault
// schedule for s's world (as the FuzzSchedules target of simrun's fuzz
// package), runs it against the user code at seed and, on a violation,
// shrinks it and writes the scenario files:
//
//	f.Fuzz(func(t *testing.T, seed uint64, data []byte) {
//		fd, err := locksim.CheckUserSchedule(t, s, seed, data, opt)
//		if err != nil || fd != nil {
//			t.Fatal(fd, err)
//		}
//	})
func CheckUserSchedule(t *testing.T, s *Scenario, seed uint64, data []byte, opt FuzzUserOptions) (*UserFinding, error) {
	if s == nil || s.s == nil {
		return nil, errors.New("locksim.CheckUserSchedule: nil scenario")
	}
	fo, err := opt.usercode()
	if err != nil {
		return nil, err
	}
	return usercode.CheckSchedule(t, s.s, seed, data, fo)
}
