package sim

import "time"

// History is what the checker needs from a run, recorded in true time by the
// processes through their Env. The simulator is omniscient: every outcome that
// some process knows (for example whether the storage node accepted a write)
// is recorded as ground truth, never left unknown.
type History struct {
	// Wants are the periods during which a client wanted a lock: from the
	// moment its workload decided to acquire until it got the lock, gave up,
	// crashed or the run ended. Liveness is judged on them.
	Wants []Want
	// Attempts are the individual acquire attempts (one try of an algorithm).
	Attempts []Attempt
	// Beliefs are the periods during which a client believed it held a lock.
	Beliefs []Belief
	// Sections are the critical sections: one read and one write of the
	// protected resource each.
	Sections []Section
	// Faults are the faults the fault schedule applied, in order.
	Faults []FaultRecord
	// Counter are the operations on stock counters (counter.go): loads,
	// purchases and reads, in the order they began.
	Counter []CounterOp
	// KeyLosses are the keys servers removed on their own (keyloss.go): an
	// expiry, an eviction, a session's ephemeral node, a killed
	// connection's row lock; in the order they happened.
	KeyLosses []KeyLoss
	// KeyActs are the commands of one client that acted on a key another
	// client had stored (keyloss.go): a former holder's extension, DEL or
	// overwrite landing on the next holder's lock; in the order they
	// happened, kept whole across streamed pieces.
	KeyActs []KeyAct `json:",omitempty"`
	// Roles are the servers' promotions and demotions (promotion.go), in
	// the order they happened; kept whole across streamed pieces.
	Roles []RoleChange `json:",omitempty"`
	// Clocks are the processes whose clocks did not start in step with
	// true time: the scenario's initial clock settings (ClockSpec: an
	// offset of the wall clock, a rate error), in the order the processes
	// were added. They are no faults (nothing happened at any instant),
	// but they act from the start, and the explanations name them as a
	// cause.
	Clocks []ClockRecord `json:",omitempty"`
	// End is the true time at which the run stopped.
	End Time
	// Since, WaitsIn and WaitsOut are set only on the pieces of a
	// streamed history (stream.go): Since is the time of the cut the
	// piece begins at (0 for the first piece, and for a whole history),
	// WaitsIn the waits that ran across that cut, WaitsOut those that run
	// across the piece's End (the next piece's WaitsIn; none but under
	// contention). A want lies in the piece in which it ended (or the
	// last); the checker joins a wait's wants by client and lock.
	Since    Time       `json:",omitempty"`
	WaitsIn  []OpenWait `json:",omitempty"`
	WaitsOut []OpenWait `json:",omitempty"`
}

// OpenWait is a wait in progress: Client has wanted Lock since Start (its
// first want since it last got the lock or crashed with a want open) and
// has not got it yet.
type OpenWait struct {
	Client string
	Lock   string
	Start  Time
}

// ClockRecord is one process's initial clock setting (Kernel.Add's
// ClockSpec).
type ClockRecord struct {
	Proc string
	// Offset of the wall clock from true time at the start.
	Offset time.Duration
	// DriftPPB is the rate error of both clocks in parts per billion.
	DriftPPB int64
}

// Want is a period during which a client wanted a lock.
type Want struct {
	Client string
	Lock   string
	Start  Time
	// End is when the want ended; Open is true when the run ended first.
	End Time
	// Got is true when the client acquired the lock at End.
	Got  bool
	Open bool
	// Reason says why the want ended without the lock: "gave-up", "crashed",
	// "run-end"; empty when Got.
	Reason string
}

// Attempt is one acquire attempt.
type Attempt struct {
	Client string
	Lock   string
	Start  Time
	End    Time
	OK     bool
	Open   bool // the run ended (or the client crashed) before the attempt finished
}

// BeliefEnd says why a belief period ended.
type BeliefEnd string

const (
	// EndReleased: the client sent its release.
	EndReleased BeliefEnd = "released"
	// EndLost: the client learned that it lost the lock (an extend failed, a
	// session expired notification, a reply saying the key is gone).
	EndLost BeliefEnd = "lost"
	// EndExpired: the client's algorithm checked the validity it computed and
	// found, on its own clock, that it had passed.
	EndExpired BeliefEnd = "expired"
	// EndCrashed: the client process crashed.
	EndCrashed BeliefEnd = "crashed"
	// EndRunEnd: the run ended while the client still believed.
	EndRunEnd BeliefEnd = "run-end"
)

// Belief is a period during which a client believed it held a lock. Start is
// the moment the client concluded it holds the lock; AttemptStart is the start
// of the attempt that led to it (the call time of the acquire operation in the
// mutex model).
type Belief struct {
	ID           int
	Client       string
	Lock         string
	AttemptStart Time
	Start        Time
	End          Time
	Open         bool // still open (only while the run is in progress)
	Reason       BeliefEnd
	// Token is the fencing token obtained with the lock, if any.
	Token    int64
	HasToken bool
	// Validity is the validity the client's algorithm computed for the
	// lock at the grant, or at its last extension (Env.BeliefValidity):
	// the zero Validity for an algorithm that computes none.
	Validity Validity
}

// Validity is how long a client's algorithm counts a lock as valid, as it
// computed it (Redlock's step 3, reference §4.1: validity = ttl − elapsed
// − drift, measured on the client's clock; redsync likewise, reference
// §4.2). The explanations name a holder that went on believing past it.
type Validity struct {
	// At is the true time at which the validity was computed: the grant,
	// or the extension that recomputed it.
	At Time
	// TTL, Elapsed and Drift are the terms: the key's time to live, the
	// time the attempt (or extension) took on the client's clock, and the
	// clock-drift allowance. The validity left at At is TTL − Elapsed −
	// Drift.
	TTL, Elapsed, Drift time.Duration
	// Rule says how the algorithm computed the drift, in words, for the
	// explanations ("the drift factor 0.01 × ttl + 2ms, as redlock-rb
	// computes it").
	Rule string
	// Checked is true when the algorithm checks the validity before it
	// acts on the lock (Redlock's validity_check, redsync always); false
	// when it computes it and ignores it.
	Checked bool
	// Extended is true when an extension recomputed the validity.
	Extended bool
}

// Computed reports whether the algorithm computed a validity.
func (v Validity) Computed() bool { return v.TTL > 0 }

// Left is the validity left at At.
func (v Validity) Left() time.Duration { return v.TTL - v.Elapsed - v.Drift }

// Until is the true time at which the validity ends for a client whose
// clock keeps true time from At on (a clock fault moves the client's own
// reckoning; the explanations name those faults separately).
func (v Validity) Until() Time { return v.At + Time(v.Left()) }

// WriteOutcome is the storage node's ground truth about a write.
type WriteOutcome string

const (
	// WriteNone: no write was sent (the section was abandoned before writing).
	WriteNone WriteOutcome = ""
	// WriteAccepted: the storage node applied the write.
	WriteAccepted WriteOutcome = "accepted"
	// WriteRejected: the storage node refused the write (fencing).
	WriteRejected WriteOutcome = "rejected"
	// WriteLost: the write was sent but never reached the storage node
	// (dropped by the network, or the run ended while it was in flight).
	WriteLost WriteOutcome = "lost"
)

// Section is one critical section: the client reads the resource, spends its
// hold time, and writes value+1. Times are true times; zero means "did not
// happen" and the matching flag tells.
type Section struct {
	ID     int
	Client string
	Lock   string
	// BeliefID links the section to the belief period it ran under (-1 if none).
	BeliefID int
	Token    int64
	HasToken bool

	// ReadSent is when the client sent its read; ReadAt is when the storage
	// node served it (Read is true then) and ReadValue what it returned.
	ReadSent     Time
	ReadAt       Time
	Read         bool
	ReadValue    int64
	ReadRejected bool // the storage node refused the read (fencing mode mark)

	// WriteSent is when the client sent its write; WriteAt is when the
	// storage node decided, with the outcome in Outcome.
	WriteSent  Time
	WriteAt    Time
	Written    bool // the client sent a write
	WriteValue int64
	Outcome    WriteOutcome
	// ResultAt is when the client learned the outcome (0 if it never did).
	ResultAt Time
}

// FaultRecord is a fault as it was applied.
type FaultRecord struct {
	At   Time
	Kind string
	// Targets are the processes the fault touches (sorted as given).
	Targets []string
	// Text describes the fault in words, e.g. "C's wall clock jumped +30s".
	Text string
	// Until is when the fault stops acting: the end of a pause, a delay or a
	// partition with heal_after, the restart of a crashed node. It is 0 for an
	// instantaneous fault (a clock jump, a drift change, a drop of the next N
	// messages, a heal, a promotion) and for a crash without restart (the
	// node is gone for good; the rest of the system is expected to work
	// around it, so liveness is judged from then on). It is Never for a
	// fault that keeps acting (a partition without heal_after); a later heal
	// or restart fault is recorded as its own record.
	Until Time
	// Liveness says how the record bears on liveness; the fault's kind
	// declares it (faults' kind table), so the checker needs no list of
	// kinds.
	Liveness FaultLiveness
	// Spec is 1 + the index in the scenario's fault schedule of the fault
	// that made this record (faults[Spec-1]; one fault of the schedule may
	// make several records, one per firing or per process its selector
	// chose); 0 for a record made otherwise. Not part of the trace.
	Spec int
	// Ignored is true for a fault that changed nothing: the kernel ignored
	// it (a pause of a process already paused for longer, or not running; a
	// crash or restart of a process in no state for it). It is recorded so
	// the history is honest, and never named as a cause.
	Ignored bool
	// Fields are typed fields for the fault's trace event, for readers
	// that must not parse Text (the timeline draws an order fault's mark
	// from them). Like every event's fields, they are not hashed. Not part
	// of the history's JSON.
	Fields []Attr `json:"-"`
}

// Duration converts a true-time span to a time.Duration.
func (t Time) Duration() time.Duration { return time.Duration(t) }

// Len is the number of records in the history.
func (h *History) Len() int {
	return len(h.Wants) + len(h.Attempts) + len(h.Beliefs) + len(h.Sections) + len(h.Faults) + len(h.Counter) + len(h.KeyLosses)
}

// FaultLiveness is how a fault record bears on the liveness verdict
// (checker's activeSpans reads it; each fault kind declares its own).
type FaultLiveness uint8

const (
	// LiveSettles (the zero value): an instantaneous change (a clock jump,
	// a drift change, a promotion) acts for the settling time after it; a
	// record with Until acts until then.
	LiveSettles FaultLiveness = iota
	// LiveSpan: acts until Until (a pause); recorded without Until it
	// changed nothing.
	LiveSpan
	// LiveLink: a partition or link fault; acts until Until or the first
	// later LiveHeal record; recorded without Until it changed nothing
	// (or, for a drop of the next messages, is over at once).
	LiveLink
	// LiveCrash: recorded without Until, acts until a later LiveRestart
	// record of one of its targets, and without one is over at once (the
	// node is gone for good).
	LiveCrash
	// LiveRestart: settles like LiveSettles and ends a crash awaiting it.
	LiveRestart
	// LiveHeal: ends every LiveLink fault; not a fault itself.
	LiveHeal
	// LiveNone: not a fault to liveness: an order choice among the events
	// due at one instant (faults' kind order) is one a real system makes
	// at every instant, so liveness is judged across it.
	LiveNone
)
