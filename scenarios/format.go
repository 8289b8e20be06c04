package scenarios

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
)

// Scenario is one experiment, parsed and validated (SCENARIO_FORMAT.md).
type Scenario struct {
	Name   string
	Title  string
	Source string
	// Sets are the PATH=VALUE edits WithSets made (simrun run --set), in
	// order; every run's record names them in its replay command.
	Sets []string
	// Why explains why the expected verdict follows from the model (built-in
	// scenarios carry one; an extension of the core format).
	Why string
	// Warnings are what Parse found legal but unsafe to read naively, one
	// sentence each (a Redlock client's fencing token taken from one node:
	// validateMeaning); every run's record carries them.
	Warnings []string
	// Twin marks a scenario whose verdicts real mode reproduces on real
	// servers (simrun twin; the twin suite checks every marked catalogue
	// scenario).
	Twin bool
	// NotTwin says in one line why a scenario whose servers real mode can
	// start is not twin-checked (the twin suite's coverage test requires
	// Twin or NotTwin of every such catalogue scenario).
	NotTwin  string
	Seed     uint64
	Duration time.Duration

	Network sim.NetConfig
	// Links add a fixed one-way latency to some links for the whole run:
	// topology (a client near some servers and far from others), not a
	// fault, so liveness is judged with them in place.
	Links []LinkSpec
	// sections holds each process kind's parsed section, by its Section
	// (kinds.go): a kind adds no field here; its file declares a typed
	// accessor (Scenario.Redis, Scenario.ZK, ...).
	sections []parsedSection
	Clients  []ClientSpec
	Resource ResourceSpec
	Faults   []faults.Spec
	Expect   Expect

	// File is where the scenario came from ("catalogue/NAME.yaml" for
	// built-ins); Doc is its YAML tree, kept so that sweeps and fuzzing can
	// change fields and re-parse, and shrinking can write a file back.
	// A scenario made by WithFaults has no Doc until it is asked for
	// (Tree): fuzz runs never write theirs.
	File string
	Doc  *yaml.Node
	// pending builds Doc on demand for a scenario made by WithFaults.
	pending *pendingDoc
	// procs is the world's process index, for checking fault schedules.
	procs *procIndex
}

// LinkSpec is a one-way link with extra latency.
type LinkSpec struct {
	From, To string
	Extra    time.Duration
}

// ClockSpec is a process's initial clock state.
type ClockSpec struct {
	Offset time.Duration
	Drift  float64
}

// RedisSpec is one Redis server.
type RedisSpec struct {
	Name               string
	AppendOnly         bool
	AppendFsync        string
	ReplicaOf          string
	ReplicationDelay   sim.Range
	MinReplicasToWrite int
	MinReplicasMaxLag  time.Duration
	// ReplDisklessSyncDelay is repl-diskless-sync-delay (whole seconds,
	// default 5s as Redis 7.0.15): how long a master waits before it
	// starts a full sync (nodes/redis startPendingSync).
	ReplDisklessSyncDelay time.Duration
	// MaxMemory (bytes of the model's per-key accounting; 0 = no limit),
	// MaxMemoryPolicy and MaxMemorySamples are maxmemory,
	// maxmemory-policy and maxmemory-samples (nodes/redis memory.go).
	MaxMemory        int64
	MaxMemoryPolicy  string
	MaxMemorySamples int
	Clock            ClockSpec
}

// SentinelSpec configures Sentinel processes monitoring one master.
type SentinelSpec struct {
	Master          string
	Names           []string // process names, s1..sN by default
	Quorum          int
	DownAfter       time.Duration
	FailoverTimeout time.Duration
	Clock           ClockSpec
}

// ZKSpec configures the ZooKeeper-style session service (an extension of
// the core format, needed by the zookeeper algorithm).
type ZKSpec struct {
	Name      string
	TickTime  time.Duration
	LockDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the negotiated session
	// timeout (minSessionTimeout, maxSessionTimeout of zoo.cfg); 0: 2 and
	// 20 ticks.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	Clock             ClockSpec
}

// ClientSpec is one lock client.
type ClientSpec struct {
	Name     string
	Lock     clients.LockConfig
	Workload clients.Workload
	Clock    ClockSpec
}

// ResourceSpec is the protected storage service.
type ResourceSpec struct {
	Name    string // "storage" unless given
	Fencing string
}

// Expect holds the expected verdicts.
type Expect struct {
	// Verdicts maps the name of a property of the checker's registry
	// (checker.Lookup) to the verdict expected of it, one of the verdicts
	// its About().Expect allows; a property missing from it is not
	// expected.
	Verdicts map[string]checker.Verdict
	// MaxWait is the liveness bound of every client (expect.max_wait).
	MaxWait time.Duration
	// MinGrants is the number of grants (belief periods) the scenario's
	// story needs (expect.min_grants): a run with fewer does not match,
	// and says so, however its verdicts came out (a safety verdict over
	// fewer grants than the story needs is vacuous). 0: no minimum.
	MinGrants int
	// LivenessWindow is the window over which the story claims progress
	// (expect.liveness_window: {after: TIME|faults[N], within: D}): liveness
	// is judged from then to the end of the run, with bound D for every
	// client, instead of in the fault-free windows. Nil: the fault-free
	// windows.
	LivenessWindow *checker.LivenessWindow
}

// ExpectLivenessWindow is the expect block's key of Expect.LivenessWindow,
// also its key in a record's expected map.
const ExpectLivenessWindow = "liveness_window"

// ExpectMinGrants is the expect block's key of Expect.MinGrants, also its
// key in a record's expected map.
const ExpectMinGrants = "min_grants"

// Of returns the verdict expected of the property named name, "" when
// none is.
func (e Expect) Of(name string) checker.Verdict { return e.Verdicts[name] }

// Set expects verdict v of the property named name ("" removes the
// expectation).
func (e *Expect) Set(name string, v checker.Verdict) {
	if v == "" {
		delete(e.Verdicts, name)
		return
	}
	if e.Verdicts == nil {
		e.Verdicts = map[string]checker.Verdict{}
	}
	e.Verdicts[name] = v
}

// Expected returns the expected verdicts in registry order.
func (e Expect) Expected() checker.Verdicts { return checker.VerdictsFrom(e.Verdicts) }
