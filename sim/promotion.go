package sim

// RoleChange is a server that became a master (a promotion: REPLICAOF NO
// ONE from Sentinel or a client, a Redis Cluster replica taking over its
// master's slots) or stopped being one (a demotion: a master told to
// replicate another node). The checker names promotions as the cause of an
// overlap or of a token counter going backwards (the promoted node may lack
// the lock key or hold an older counter), and a promotion whose former
// master was not demoted as split brain: two masters at once. A role change
// is a history record, no trace event (the node logs its own).
type RoleChange struct {
	At   Time
	Node string
	// Master is true for a promotion, false for a demotion.
	Master bool
	// Other is, for a promotion, the master the node replicated before
	// (empty when unknown); for a demotion, the master it now replicates.
	Other string
	// Cause says how, in words: "REPLICAOF NO ONE", "cluster failover".
	Cause string
	// Keys are the keys the promoted node held when it was promoted,
	// sorted, at most MaxRoleKeys of them (KeysCut says more were left
	// out, and then a key not listed may exist); none for a demotion.
	Keys    []RoleKey `json:",omitempty"`
	KeysCut bool      `json:",omitempty"`
	// LastWrite is, for a demotion, when the node last accepted a write
	// as a master (Env.WroteAsMaster), 0 when never: a write after
	// another node's promotion means two masters accepted writes.
	LastWrite Time `json:",omitempty"`
	// RunEnd marks no change but the state at the end of the run: the
	// node still accepted writes as a master (Master true, At the run's
	// end, LastWrite its last write). Kernel.Finish adds one for each
	// server that wrote as a master and was not demoted since.
	RunEnd bool `json:",omitempty"`
}

// RoleKey is one key a promoted node held, and its value when that is an
// integer (a token counter).
type RoleKey struct {
	Key   string
	Int   int64
	IsInt bool
}

// MaxRoleKeys bounds RoleChange.Keys: the checker asks about a lock key and
// its token counter, and a dataset larger than this (a cache filled to
// test eviction) is not copied into the history.
const MaxRoleKeys = 64

// RoleChanged records that this process, a server, changed role. Call it
// where the change takes effect. It adds to the history only (no trace
// event). Role changes are kept for the whole run, as faults are: a
// streamed piece carries all those so far.
func (e *Env) RoleChanged(r RoleChange) {
	r.At, r.Node = e.k.now, e.p.name
	if !r.Master {
		r.LastWrite = e.p.lastWrite
	}
	e.p.demoted = !r.Master
	e.k.hist.Roles = append(e.k.hist.Roles, r)
}

// HeldBefore reports whether the promoted node held key, and its integer
// value if it had one; known is false when Keys was cut and key is not
// listed.
func (r RoleChange) HeldBefore(key string) (held bool, v RoleKey, known bool) {
	for _, k := range r.Keys {
		if k.Key == key {
			return true, k, true
		}
	}
	return false, RoleKey{}, !r.KeysCut
}

// WroteAsMaster notes that this process, a server that is a master,
// accepted a write now. Only the latest is kept; a demotion carries it
// (RoleChange.LastWrite). Nothing goes to the trace.
func (e *Env) WroteAsMaster() { e.p.lastWrite, e.p.demoted = e.k.now, false }

// endRoles adds, at the end of the run, a RunEnd record for each process
// that wrote as a master and was not demoted since, in the order the
// processes were added.
func (k *Kernel) endRoles() {
	for _, p := range k.procs {
		if p.lastWrite > 0 && !p.demoted {
			k.hist.Roles = append(k.hist.Roles, RoleChange{At: k.now, Node: p.name, Master: true, RunEnd: true, LastWrite: p.lastWrite})
		}
	}
}
