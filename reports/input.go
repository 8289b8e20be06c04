package reports

import (
	"time"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Role says what a server lane stands for; each process kind declares its
// own (scenarios.ProcKind).
type Role = scenarios.Role

// Server roles.
const (
	RoleRedis     = scenarios.RoleRedis
	RoleReplica   = scenarios.RoleReplica
	RoleSentinel  = scenarios.RoleSentinel
	RoleZooKeeper = scenarios.RoleZooKeeper
	RoleMemcached = scenarios.RoleMemcached
	RoleMySQL     = scenarios.RoleMySQL
	RoleFiller    = scenarios.RoleFiller
	RoleStorage   = scenarios.RoleStorage
)

// Server is one non-client process of the scenario.
type Server struct {
	Name string
	Role Role
	// Note is shown under the lane's name, e.g. "replica of M".
	Note string
	// AOF is true for a Redis node with appendonly on (which file a restart
	// loads from).
	AOF bool
}

// Clock is a process's initial clock state (the scenario's clock: block).
type Clock struct {
	Proc   string
	Offset time.Duration
	// DriftPPB is the rate error in parts per billion (sim.RateFromDrift).
	DriftPPB int64
}

// Setup is what a report needs to know of the scenario beyond the trace:
// names, roles, lock keys and initial clocks. cmd/simrun builds it from the
// scenario file (re-parsing a file is not re-running it).
type Setup struct {
	Name   string
	Title  string
	Source string
	Why    string
	// File is where the scenario came from ("catalogue/NAME.yaml" for
	// built-ins).
	File     string
	Duration time.Duration
	// Clients and Servers are the lanes, top to bottom, in scenario order.
	Clients []string
	Servers []Server
	// LockKeys are the keys (Redis) and parent znodes (ZooKeeper, without
	// the leading slash) whose holders are drawn.
	LockKeys []string
	// Clocks holds the initial clock of every process with a non-zero one;
	// processes missing from it start exact.
	Clocks []Clock
	// YAML is the scenario's text, shown in index.html.
	YAML string
}

// Result is the recorded outcome of the run: scenarios.Outcome itself, the
// one result type of a run (its JSON form is simrun's result.json; a report
// shows its verdicts, violations and trace hash).
type Result = scenarios.Outcome

// Run is everything a run's report is made of.
type Run struct {
	Setup  Setup
	Result Result
	// Trace is the full trace of the run (simrun run --out's trace.jsonl).
	Trace []sim.Event
	// End is the true time at which the run stopped (the scenario's
	// duration when zero).
	End sim.Time
	// Command reproduces the run, e.g. "simrun run redlock-clock-jump --seed 1".
	Command string
	// Visualizations are porcupine's HTML files beside index.html
	// (lock.html, resource.html) to link.
	Visualizations []string
}

func (r *Run) end() sim.Time {
	if r.End > 0 {
		return r.End
	}
	if r.Setup.Duration > 0 {
		return sim.Time(r.Setup.Duration)
	}
	if n := len(r.Trace); n > 0 {
		return r.Trace[n-1].At
	}
	return 0
}
