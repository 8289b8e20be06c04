package sim

import "strconv"

// Counter records: the flash-sale stories of issue 13, where the resource is
// a stock counter kept in Redis itself and no lock is taken. They are kept
// apart from the lock records (Wants, Attempts, Beliefs, Sections) so that
// the checker judges them as a function of these records alone, per key.
//
// Times are what a real client can know: when it sent the first command of
// an operation and when it had the final reply (the twin runs record the same
// against real Redis). Unlike the storage node's sections, no server-side
// point is recorded: Redis is the resource here, and an outcome the client
// never learned (a timeout, a connection that ended) stays unknown.

// KindCounter is the trace kind of the counter records (a stock loaded, a
// purchase or a read done).
const KindCounter Kind = "counter-op"

// CounterOpKind says what a counter operation was.
type CounterOpKind uint8

const (
	// CounterLoad is the initial SET of the declared stock.
	CounterLoad CounterOpKind = iota + 1
	// CounterPurchase is one purchase: the commands of one sale attempt of
	// a counter method (retries of WATCH included).
	CounterPurchase
	// CounterRead is a plain GET of the stock (each counter client reads it
	// once after its purchases).
	CounterRead
)

func (k CounterOpKind) String() string {
	switch k {
	case CounterLoad:
		return "load"
	case CounterPurchase:
		return "purchase"
	case CounterRead:
		return "read"
	}
	return "op" + strconv.Itoa(int(k))
}

// CounterOp is one operation on a stock counter.
type CounterOp struct {
	ID     int
	Client string
	// Node is the Redis process the operation's commands went to (the
	// master the client knew).
	Node string
	Key  string
	Kind CounterOpKind
	// Method is the counter method of a purchase ("get-set", "decr",
	// "watch", "script"); empty for loads and reads.
	Method string
	// Call is when the client sent the operation's first command; Return
	// when it had its final reply (or gave up: a timeout, the end of its
	// connection). Open is true while the operation is in progress, and
	// after Finish for one the run ended in.
	Call   Time
	Return Time
	Open   bool
	// Observed is the value the client saw: the GET reply of get-set,
	// watch (its last attempt) and reads, DECR's or the script's reply, the
	// loaded stock for a load. HasObserved is false when no such reply came.
	// Missing: the GET found no key (Observed is 0 then).
	Observed    int64
	HasObserved bool
	Missing     bool
	// Wrote is true when the client sent the write of the operation (SET,
	// DECR, EXEC, EVAL; the SET of a load). An operation that wrote nothing
	// changed nothing.
	Wrote bool
	// Known is true when the client learned the outcome of its write: a
	// reply came. A write without a reply may or may not have taken effect.
	Known bool
	// Sold is true when the client counts the purchase as a sale (the
	// write's reply said so).
	Sold bool
	// Attempts is the number of WATCH attempts of a purchase (1 for the
	// other methods); Conflicts those whose EXEC answered null.
	Attempts  int
	Conflicts int
	// Why says why an operation ended without its outcome, or without a
	// sale ("sold out", "timed out", "connection reset", "gave up after 16
	// conflicts").
	Why string
}

// CounterBegin records that the client sends the first command of a counter
// operation on key at node; it returns the operation's id.
func (e *Env) CounterBegin(kind CounterOpKind, method, node, key string) int {
	h := &e.k.hist
	id := len(h.Counter)
	h.Counter = append(h.Counter, CounterOp{ID: id, Client: e.p.name, Node: node, Key: key, Kind: kind, Method: method, Call: e.k.now, Open: true, Attempts: 1})
	e.p.open.counters = append(e.p.open.counters, id)
	return id
}

// CounterOp returns the open counter operation id for the client to fill
// in (Observed, Wrote, Attempts ...) before it ends it; nil if id is not
// open.
func (e *Env) CounterOp(id int) *CounterOp {
	if id < 0 || id >= len(e.k.hist.Counter) || !e.k.hist.Counter[id].Open {
		return nil
	}
	return &e.k.hist.Counter[id]
}

// CounterEnd records that operation id returned now, and emits a counter
// event describing it.
func (e *Env) CounterEnd(id int) {
	op := e.CounterOp(id)
	if op == nil {
		return
	}
	op.Return, op.Open = e.k.now, false
	o := e.k.owner(op.Client)
	o.open.counters = removeInt(o.open.counters, id)
	e.LogAttrs(KindCounter, op.Text(), Str("key", op.Key), Str("op", op.Kind.String()), Int64("id", int64(id)), Int64("observed", op.Observed), Str("outcome", op.Outcome()))
}

// Outcome is a one-word outcome of the operation: "sold", "not-sold",
// "unknown", "read", "loaded".
func (op CounterOp) Outcome() string {
	switch {
	case op.Wrote && !op.Known:
		return "unknown"
	case op.Kind == CounterLoad:
		return "loaded"
	case op.Kind == CounterRead:
		return "read"
	case op.Sold:
		return "sold"
	}
	return "not-sold"
}

// Text describes the operation in words for the trace: "stock purchase 3
// (decr): 7, sold".
func (op CounterOp) Text() string {
	b := append([]byte(op.Key), ' ')
	b = append(b, op.Kind.String()...)
	b = append(append(b, ' '), strconv.Itoa(op.ID)...)
	if op.Method != "" {
		b = append(append(append(b, " ("...), op.Method...), ')')
	}
	b = append(b, ": "...)
	switch {
	case op.Missing:
		b = append(b, "no key"...)
	case op.HasObserved:
		b = strconv.AppendInt(b, op.Observed, 10)
	default:
		b = append(b, "no value"...)
	}
	b = append(append(b, ", "...), op.Outcome()...)
	if op.Conflicts > 0 {
		b = append(strconv.AppendInt(append(b, " after "...), int64(op.Conflicts), 10), " conflicts"...)
	}
	if op.Why != "" {
		b = append(append(append(b, " ("...), op.Why...), ')')
	}
	return string(b)
}

// closeCounters ends the open counter operations of a process that crashed
// or whose run ended: they return now with the outcome they have (a write
// sent without a reply stays unknown). A crashed client's operation is over;
// at the end of the run it stays Open.
func (k *Kernel) closeCounters(p *proc, reason BeliefEnd) {
	for _, id := range p.open.counters {
		op := &k.hist.Counter[id]
		if !op.Open {
			continue
		}
		op.Return = k.now
		if reason == EndCrashed {
			op.Open = false
			if op.Why == "" {
				op.Why = "client crashed"
			}
		} else if op.Why == "" {
			op.Why = "run ended"
		}
	}
	p.open.counters = p.open.counters[:0]
}
