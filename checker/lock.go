package checker

import (
	"fmt"
	"html"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/sim"
)

// LockOp is the kind of an operation of the lock model.
type LockOp int

const (
	// Acquire is the operation that ends when a client starts believing it
	// holds the lock.
	Acquire LockOp = iota
	// Release is the moment a client stops believing it holds the lock.
	Release
)

// LockInput is the input of a lock-model operation. The model compares only
// Op and Grant; Client, Name and Lock are carried for partitioning,
// visualization rows and descriptions.
type LockInput struct {
	Op     LockOp
	Client int    // porcupine client id (index of Name among the clients)
	Name   string // client name, e.g. "c1"
	Lock   string // lock name; operations are partitioned by it
	// Grant identifies the belief period the operation belongs to: a
	// release frees the lock only if its own grant holds it. LockOperations
	// numbers the beliefs; hand-built operations with one grant at a time
	// per client may use the client id.
	//
	// NB: keying ownership by client instead lets porcupine order a
	// zero-length belief's release before its acquire (both at one instant)
	// and so hide a belief nested in another of the same client, which the
	// overlap computation reports: the two views would disagree.
	Grant int
}

// LockOutput is the output of a lock-model operation. OK is false for an
// acquire that did not grant the lock, which the model treats as a no-op;
// LockOperations never emits one, because failed attempts create no belief
// and dropping them keeps the search from blowing up.
type LockOutput struct {
	OK bool
}

// free is the lock-model state of a lock nobody holds; any other state is the
// client id of the owner.
const free = -1

// LockModel is porcupine's owner-aware mutex over belief periods. The state is
// the owner's grant (-1 when free). An acquire that was granted requires a
// free lock and makes its grant the owner; a release requires its grant to
// be the owner and frees the lock. Operations are partitioned by lock name, so
// each lock is checked on its own.
//
// With LockOperations' encoding (acquire returns when the belief starts,
// release is a point at the moment the belief ends) a history is legal if and
// only if no two belief periods of a lock overlap; periods that merely touch
// at one instant are legal, because porcupine's intervals are closed.
var LockModel = porcupine.Model{
	Partition: partitionBy(func(op porcupine.Operation) string { return op.Input.(LockInput).Lock }),
	Init:      func() interface{} { return free },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		owner, in, out := state.(int), input.(LockInput), output.(LockOutput)
		switch in.Op {
		case Acquire:
			if !out.OK {
				return true, owner
			}
			if owner != free {
				return false, owner
			}
			return true, in.Grant
		case Release:
			if owner != in.Grant {
				return false, owner
			}
			return true, free
		}
		return false, owner
	},
	Hash: func(state interface{}) uint64 { return uint64(state.(int) + 1) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(LockInput), output.(LockOutput)
		who := in.Name
		if who == "" {
			who = fmt.Sprintf("client %d", in.Client)
		}
		switch {
		case in.Op == Release:
			return who + " release"
		case out.OK:
			return who + " acquire"
		default:
			return who + " acquire (failed)"
		}
	},
	DescribeState: func(state interface{}) string {
		if owner := state.(int); owner != free {
			return fmt.Sprintf("held by grant %d", owner)
		}
		return "free"
	},
}

// lockModelNamed returns LockModel with states described by the name of the
// client of each grant (grants[i] is the belief of grant i), for
// visualizations. The names are HTML-escaped: porcupine's visualization puts
// descriptions into the page with innerHTML.
func lockModelNamed(grants []*sim.Belief) porcupine.Model {
	m := LockModel
	m.DescribeState = func(state interface{}) string {
		owner := state.(int)
		switch {
		case owner == free:
			return "free"
		case owner >= 0 && owner < len(grants):
			return "held by " + html.EscapeString(grants[owner].Client)
		default:
			return fmt.Sprintf("held by grant %d", owner)
		}
	}
	return m
}

// LockOperations encodes the belief periods of h as lock-model operations,
// two per belief:
//
//   - Acquire: Call = AttemptStart, Return = Start (the moment the client
//     concluded it holds the lock);
//   - Release: Call = Return = End (the moment it stopped believing). A belief
//     still open when the run stopped ends at h.End.
//
// Failed attempts have no belief and so are dropped. A client's id is the
// index of its name among the sorted names of the clients that believed.
// Operations come out sorted by lock, belief start, client and belief ID.
func LockOperations(h *sim.History) []porcupine.Operation {
	beliefs := sortedBeliefs(h)
	return appendLockOps(nil, beliefs, 0, clientIDs(beliefClients(h)), h.End, true)
}

// granted is the output of every operation LockOperations emits, boxed once.
var granted interface{} = LockOutput{OK: true}

// appendLockOps appends the operations of bs (a run of sortedBeliefs whose
// first belief is grant first) to ops, with their metadata if meta.
func appendLockOps(ops []porcupine.Operation, bs []*sim.Belief, first int, ids map[string]int, runEnd sim.Time, meta bool) []porcupine.Operation {
	for k, b := range bs {
		grant := first + k
		id := ids[b.Client]
		start, end := b.Start, beliefEnd(*b, runEnd)
		call := b.AttemptStart
		if call > start || call < 0 {
			call = start
		}
		var md interface{}
		if meta {
			m := fmt.Sprintf("belief %d (%s)", b.ID, endReason(*b))
			if b.HasToken {
				m += fmt.Sprintf(", token %d", b.Token)
			}
			md = html.EscapeString(m) // porcupine shows metadata with innerHTML
		}
		ops = append(ops,
			porcupine.Operation{
				ClientId: id,
				Input:    LockInput{Op: Acquire, Client: id, Name: b.Client, Lock: b.Lock, Grant: grant},
				Call:     int64(call),
				Output:   granted,
				Return:   int64(start),
				Metadata: md,
			},
			porcupine.Operation{
				ClientId: id,
				Input:    LockInput{Op: Release, Client: id, Name: b.Client, Lock: b.Lock, Grant: grant},
				Call:     int64(end),
				Output:   granted,
				Return:   int64(end),
				Metadata: md,
			})
	}
	return ops
}

// CheckLock decides lock safety for h with porcupine and LockModel, giving up
// after timeout (DefaultTimeout if timeout <= 0) on any one piece (see
// pieceMinOps).
func CheckLock(h *sim.History, timeout time.Duration) Verdict {
	return checkLock(orEmpty(h), withDefault(timeout), false).verdict
}

// checkLock checks each lock of h piece by piece, cut at quiet points (see
// pieceMinOps for why that is exact).
func checkLock(h *sim.History, timeout time.Duration, verbose bool) pieceCheck {
	bs := sortedBeliefs(h)
	ids := clientIDs(beliefClients(h))
	var buf []porcupine.Operation
	var ins []LockInput
	ops := func(from, to int, meta bool) []porcupine.Operation {
		if meta {
			return appendLockOps(nil, bs[from:to], from, ids, h.End, true)
		}
		buf, ins = appendLockOpsFast(buf[:0], ins[:0], bs[from:to], from, ids, h.End)
		return buf
	}
	full := lockModelNamed(bs)
	full.Partition = nil // a piece holds one lock
	model := func(from, to int) (porcupine.Model, porcupine.Model) { return lockModelFast, full }
	return checkPieces(len(bs), lockCuts(bs, h.End, pieceMinOps), timeout, verbose, ops, model)
}

// The fast path of the lock check allocates nothing per operation beyond
// porcupine's own: inputs are pointers into one slice per piece (boxing a
// pointer does not allocate, boxing a LockInput does), and the state is the
// acquire's input of the owning grant (a pointer) or lockFree, not the
// grant's number (which, above 255, Go boxes on the heap at every step).

// lockFree is lockModelFast's state of a free lock.
var lockFree = &LockInput{Grant: free}

// lockModelFast is LockModel over appendLockOpsFast's operations: the same
// rules, for one lock (no partition).
var lockModelFast = porcupine.Model{
	Init: func() interface{} { return lockFree },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		owner, in := state.(*LockInput), input.(*LockInput)
		switch in.Op {
		case Acquire:
			if !output.(LockOutput).OK {
				return true, owner
			}
			if owner != lockFree {
				return false, owner
			}
			return true, in
		case Release:
			if owner.Grant != in.Grant {
				return false, owner
			}
			return true, lockFree
		}
		return false, owner
	},
	// Equal is ==: one pointer per grant (its acquire's input).
	Hash: func(state interface{}) uint64 { return uint64(state.(*LockInput).Grant + 1) },
}

// appendLockOpsFast appends the operations of bs as appendLockOps does
// without metadata, with pointer inputs kept in ins (reused: its old
// contents must no longer be in use).
func appendLockOpsFast(ops []porcupine.Operation, ins []LockInput, bs []*sim.Belief, first int, ids map[string]int, runEnd sim.Time) ([]porcupine.Operation, []LockInput) {
	if cap(ins) < 2*len(bs) {
		ins = make([]LockInput, 0, 2*len(bs))
	}
	for k, b := range bs {
		grant := first + k
		id := ids[b.Client]
		start, end := b.Start, beliefEnd(*b, runEnd)
		call := b.AttemptStart
		if call > start || call < 0 {
			call = start
		}
		ins = append(ins,
			LockInput{Op: Acquire, Client: id, Name: b.Client, Lock: b.Lock, Grant: grant},
			LockInput{Op: Release, Client: id, Name: b.Client, Lock: b.Lock, Grant: grant})
		acq, rel := &ins[len(ins)-2], &ins[len(ins)-1]
		ops = append(ops,
			porcupine.Operation{ClientId: id, Input: acq, Call: int64(call), Output: granted, Return: int64(start)},
			porcupine.Operation{ClientId: id, Input: rel, Call: int64(end), Output: granted, Return: int64(end)})
	}
	return ops, ins
}

// beliefEnd is the end of b in true time: a belief still open when the run
// stopped ends at the end of the run. An end before the start (which a
// well-formed history never has) is clamped to the start.
func beliefEnd(b sim.Belief, runEnd sim.Time) sim.Time {
	end := b.End
	if b.Open {
		end = runEnd
	}
	if end < b.Start {
		end = b.Start
	}
	return end
}

// endReason describes why b ended.
func endReason(b sim.Belief) string {
	switch {
	case b.Open:
		return string(sim.EndRunEnd)
	case b.Reason == "":
		return "ended"
	default:
		return string(b.Reason)
	}
}

// sortedBeliefs returns h's beliefs sorted by lock, start, client and ID:
// pointers into h, not copies, so that the checker's memory beyond the
// history is a word per record.
func sortedBeliefs(h *sim.History) []*sim.Belief {
	bs := make([]*sim.Belief, len(h.Beliefs))
	for i := range h.Beliefs {
		bs[i] = &h.Beliefs[i]
	}
	sort.SliceStable(bs, func(i, j int) bool {
		a, b := bs[i], bs[j]
		if a.Lock != b.Lock {
			return a.Lock < b.Lock
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Client != b.Client {
			return a.Client < b.Client
		}
		return a.ID < b.ID
	})
	return bs
}

// beliefClients returns the sorted names of the clients that ever believed.
func beliefClients(h *sim.History) []string {
	names := make([]string, 0, len(h.Beliefs))
	for _, b := range h.Beliefs {
		names = append(names, b.Client)
	}
	return uniqueSorted(names)
}
