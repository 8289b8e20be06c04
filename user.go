package locksim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/locksim/locksim/usercode"
)

// User code (issue 24): a team's own lock, or a real lock library, bound
// to a scenario client in place of locksim's model of its algorithm.

// UserLock is a lock as user code implements it: the two methods a team
// writes around its library (Obtain one attempt, Release). See
// usercode.Lock.
type UserLock = usercode.Lock

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
func RunUser(t *testing.T, s *Scenario, opt UserOptions) (*Result, error) {
	if s == nil || s.s == nil {
		return nil, errors.New("locksim.RunUser: nil scenario")
	}
	if t == nil {
		return nil, errors.New("locksim.RunUser: nil *testing.T")
	}
	uo := usercode.Options{Seed: opt.Seed, KeepTrace: opt.KeepTrace, CheckTimeout: opt.CheckTimeout, HangAfter: opt.HangAfter}
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
	if err != nil {
		return nil, fmt.Errorf("locksim.RunUser %s: %w", s.s.Name, err)
	}
	r := ResultOf(o, 0)
	return r, nil
}
