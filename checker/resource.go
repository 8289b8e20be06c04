package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/sim"
)

// WriteResult is the storage node's decision about the write of a critical
// section, as the resource model sees it.
type WriteResult int

const (
	// Accepted means the storage node applied the write.
	Accepted WriteResult = iota
	// Rejected means the storage node refused the write (fencing); the write
	// is a no-op.
	Rejected
)

// ResourceInput is the input of a resource-model operation: who ran the
// critical section, with which fencing token, on which lock's resource. The
// model itself reads none of it; Lock partitions the operations.
type ResourceInput struct {
	Client   int    // porcupine client id (index of Name among the clients)
	Name     string // client name, e.g. "c1"
	Lock     string // lock (and so resource) name; operations are partitioned by it
	Section  int    // Section.ID
	Token    int64
	HasToken bool
}

// ResourceOutput is the output of a resource-model operation: the value the
// section read and what became of its write (of Read+1).
type ResourceOutput struct {
	Read  int64
	Write WriteResult
}

// ResourceModel is porcupine's fetch-and-increment counter, one operation per
// critical section. The state is the resource's value (an int64, initially 0,
// the storage node's initial value). An accepted section is legal iff the
// state equals the value it read, and it sets the state to that value plus
// one. A rejected section (its write was fenced off) changes nothing but must
// still have read the current value: this is the strict mode, exact here
// because every read is the storage node's ground truth. Operations are
// partitioned by lock name, one resource per lock.
//
// Two overlapping sections that both read v and were both accepted are
// illegal: that is a lost update.
var ResourceModel = porcupine.Model{
	Partition: partitionBy(func(op porcupine.Operation) string { return op.Input.(ResourceInput).Lock }),
	Init:      func() interface{} { return int64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		value, out := state.(int64), output.(ResourceOutput)
		if out.Read != value {
			return false, value
		}
		if out.Write == Accepted {
			return true, value + 1
		}
		return true, value
	},
	Hash: func(state interface{}) uint64 { return uint64(state.(int64)) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(ResourceInput), output.(ResourceOutput)
		who := in.Name
		if who == "" {
			who = fmt.Sprintf("client %d", in.Client)
		}
		if in.HasToken {
			who += fmt.Sprintf(" [token %d]", in.Token)
		}
		verdict := "accepted"
		if out.Write == Rejected {
			verdict = "rejected"
		}
		return fmt.Sprintf("%s read %d, write %d %s", who, out.Read, out.Read+1, verdict)
	},
	DescribeState: func(state interface{}) string { return fmt.Sprintf("%d", state.(int64)) },
}

// ResourceOperations encodes the critical sections of h as resource-model
// operations, one per section whose write reached the storage node:
//
//   - Call = ReadAt, when the storage node served the read;
//   - Return = WriteAt, when the storage node decided about the write.
//
// The storage node is the single point of serialization of the resource, so
// its own times bound exactly the span in which the section's effect can
// take place: the value read is the state at ReadAt and the write takes
// effect (or is refused) at WriteAt. The client's send and receive times
// (ReadSent, ResultAt) would widen the interval, adding concurrency (what
// makes porcupine slow) and freedom to reorder that can hide a lost update;
// the storage node's times are exact.
//
// Sections whose write did not take effect are dropped: abandoned sections
// (no write), writes lost on the way (WriteLost) and sections whose read was
// refused (fencing in mark mode). Their reads are ground truth and cannot be
// wrong, so they constrain nothing; as always-legal operations they would
// only make the search exponential on illegal histories. A decided write
// without a read, or after a refused read, cannot be interpreted (the
// workload writes the value it read plus one): Check refuses such a history
// (ValidateHistory) rather than drop the section silently.
func ResourceOperations(h *sim.History) []porcupine.Operation {
	secs := checkedSections(h)
	return appendResourceOps(nil, secs, clientIDs(sectionClients(secs)), true)
}

// appendResourceOps appends the operations of secs to ops, with their
// metadata if meta.
func appendResourceOps(ops []porcupine.Operation, secs []*sim.Section, ids map[string]int, meta bool) []porcupine.Operation {
	for _, s := range secs {
		id := ids[s.Client]
		w := Accepted
		if s.Outcome == sim.WriteRejected {
			w = Rejected
		}
		var md interface{}
		if meta {
			m := fmt.Sprintf("section %d", s.ID)
			if s.BeliefID >= 0 {
				m += fmt.Sprintf(", belief %d", s.BeliefID)
			}
			md = m
		}
		ops = append(ops, porcupine.Operation{
			ClientId: id,
			Input:    ResourceInput{Client: id, Name: s.Client, Lock: s.Lock, Section: s.ID, Token: s.Token, HasToken: s.HasToken},
			Call:     int64(s.ReadAt),
			Output:   ResourceOutput{Read: s.ReadValue, Write: w},
			Return:   int64(s.WriteAt),
			Metadata: md,
		})
	}
	return ops
}

// CheckResource decides resource safety for h with porcupine and
// ResourceModel, giving up after timeout (DefaultTimeout if timeout <= 0) on
// any one piece (see pieceMinOps).
func CheckResource(h *sim.History, timeout time.Duration) Verdict {
	return checkResource(orEmpty(h), withDefault(timeout), false).verdict
}

// checkResource checks each resource of h piece by piece, cut at quiet
// points, each piece from the value the resource held at its cut (see
// pieceMinOps for why that is exact).
func checkResource(h *sim.History, timeout time.Duration, verbose bool) pieceCheck {
	return checkResourceFrom(h, timeout, verbose, nil)
}

// checkResourceFrom is checkResource with each resource starting from the
// value start gives it (0 if missing): the value it held at the start of
// h, a piece of a longer history cut at a quiet point (stream.go). When
// start is not nil it receives the value each resource of h holds at h's
// end: the start value plus the accepted writes.
func checkResourceFrom(h *sim.History, timeout time.Duration, verbose bool, start map[string]int64) pieceCheck {
	secs := checkedSections(h)
	ids := clientIDs(sectionClients(secs))
	var buf []porcupine.Operation
	var outs []ResourceOutput
	ops := func(from, to int, meta bool) []porcupine.Operation {
		if meta {
			return appendResourceOps(nil, secs[from:to], ids, true)
		}
		buf, outs = appendResourceOpsFast(buf[:0], outs[:0], secs[from:to], ids)
		return buf
	}
	// value is the resource's value at the start of the next piece: 0 (the
	// storage node's initial value) at a new resource, then the value
	// carried over plus the piece's accepted writes, whatever their order.
	var value int64
	model := func(from, to int) (porcupine.Model, porcupine.Model) {
		if from == 0 || secs[from].Lock != secs[from-1].Lock {
			value = start[secs[from].Lock]
		}
		full := ResourceModel
		full.Partition = nil // a piece holds one resource
		init := value
		full.Init = func() interface{} { return init }
		for _, s := range secs[from:to] {
			if s.Outcome == sim.WriteAccepted {
				value++
			}
		}
		if start != nil {
			start[secs[from].Lock] = value
		}
		return resourceModelFast(init, to-from), full
	}
	return checkPieces(len(secs), resourceCuts(secs, pieceMinOps), timeout, verbose, ops, model)
}

// resourceModelFast is ResourceModel for one piece of n operations of one
// resource starting at value init, over appendResourceOpsFast's operations,
// allocating nothing per step: a state is a pointer to a cell of a table of
// the values init..init+n (a step adds at most one, so no path leaves it),
// one cell per value, so that == on states compares values (boxing an
// int64 above 255 allocates at every step, boxing a pointer does not).
func resourceModelFast(init int64, n int) porcupine.Model {
	vals := make([]int64, n+1)
	for i := range vals {
		vals[i] = init + int64(i)
	}
	return porcupine.Model{
		Init: func() interface{} { return &vals[0] },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			v, out := state.(*int64), output.(*ResourceOutput)
			if out.Read != *v {
				return false, v
			}
			if out.Write == Accepted {
				return true, &vals[*v-init+1]
			}
			return true, v
		},
		Hash: func(state interface{}) uint64 { return uint64(*state.(*int64)) },
	}
}

// appendResourceOpsFast appends the operations of secs as
// appendResourceOps does without metadata, with no input (the model reads
// none) and pointer outputs kept in outs (reused: its old contents must no
// longer be in use).
func appendResourceOpsFast(ops []porcupine.Operation, outs []ResourceOutput, secs []*sim.Section, ids map[string]int) ([]porcupine.Operation, []ResourceOutput) {
	if cap(outs) < len(secs) {
		outs = make([]ResourceOutput, 0, len(secs))
	}
	for _, s := range secs {
		w := Accepted
		if s.Outcome == sim.WriteRejected {
			w = Rejected
		}
		outs = append(outs, ResourceOutput{Read: s.ReadValue, Write: w})
		ops = append(ops, porcupine.Operation{
			ClientId: ids[s.Client],
			Call:     int64(s.ReadAt),
			Output:   &outs[len(outs)-1],
			Return:   int64(s.WriteAt),
		})
	}
	return ops, outs
}

// checked reports whether s becomes a resource-model operation: it read the
// resource and the storage node accepted or rejected its write.
func checked(s sim.Section) bool {
	return s.Read && !s.ReadRejected && s.Written &&
		(s.Outcome == sim.WriteAccepted || s.Outcome == sim.WriteRejected)
}

// checkedSections returns the sections that become resource-model
// operations, sorted by lock, read time and ID: pointers into h, not
// copies.
func checkedSections(h *sim.History) []*sim.Section {
	n := 0
	for _, s := range h.Sections {
		if checked(s) {
			n++
		}
	}
	secs := make([]*sim.Section, 0, n)
	for i := range h.Sections {
		if checked(h.Sections[i]) {
			secs = append(secs, &h.Sections[i])
		}
	}
	sort.SliceStable(secs, func(i, j int) bool {
		a, b := secs[i], secs[j]
		if a.Lock != b.Lock {
			return a.Lock < b.Lock
		}
		if a.ReadAt != b.ReadAt {
			return a.ReadAt < b.ReadAt
		}
		return a.ID < b.ID
	})
	return secs
}

// sectionClients returns the sorted names of the clients of secs.
func sectionClients(secs []*sim.Section) []string {
	names := make([]string, 0, len(secs))
	for _, s := range secs {
		names = append(names, s.Client)
	}
	return uniqueSorted(names)
}
