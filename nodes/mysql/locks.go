package mysql

// Row locks: a per-key lock queue with InnoDB's modes and its queueing rule,
// on the unique key only (one lock per key instead of InnoDB's record, gap
// and next-key locks on index pages).

// lockMode is the mode of a lock request.
type lockMode uint8

const (
	// modeS is a shared record lock (LOCK_S | LOCK_REC_NOT_GAP): the
	// duplicate-key check of an INSERT that finds the key
	// (row_ins_duplicate_error_in_clust, storage/innobase/row/row0ins.cc).
	modeS lockMode = iota + 1
	// modeX is an exclusive record lock (LOCK_X | LOCK_REC_NOT_GAP): SELECT
	// ... FOR UPDATE, UPDATE and DELETE of an existing row, and the implicit
	// lock of an inserted row.
	modeX
	// modeGap stands for the gap lock a locking read, UPDATE or DELETE of a
	// missing key takes under REPEATABLE READ. Gap locks never conflict with
	// each other or with record locks; they only block other transactions'
	// inserts (MySQL manual innodb-locking.html, "Gap Locks": "Gap locks in
	// InnoDB are purely inhibitive").
	modeGap
	// modeInsert is the insert intention lock an INSERT of a missing key
	// takes; it waits for other transactions' gap locks on the key
	// (innodb-locking.html, "Insert Intention Locks").
	modeInsert
)

var modeNames = [...]string{"?", "S", "X", "GAP", "INSERT_INTENTION"}

func (m lockMode) String() string { return modeNames[m] }

// conflicts reports whether a request in mode req must wait for another
// transaction's lock in mode held (InnoDB's lock_mode_compatible matrix
// restricted to the modes above, with lock_rec_has_to_wait's gap rules).
func conflicts(req, held lockMode) bool {
	switch req {
	case modeS:
		return held == modeX
	case modeX:
		return held == modeS || held == modeX
	case modeInsert:
		return held == modeGap
	}
	return false // modeGap never waits
}

// covers reports whether a granted lock in mode held makes a new request in
// mode req of the same transaction unnecessary.
func covers(held, req lockMode) bool {
	return held == req || held == modeX && req == modeS
}

// lockReq is one lock request in a key's queue.
type lockReq struct {
	trx     *trx
	mode    lockMode
	granted bool
}

// entry is one key of a table: its committed image, the uncommitted image of
// the transaction that changed it (which holds an X lock on it), and its
// lock queue in request order.
type entry struct {
	tab   *table
	key   string
	exist bool // committed image
	value string
	dirty *trx // the transaction with uncommitted changes, or nil
	dExst bool // its image
	dVal  string
	locks []*lockReq
}

// heldBy reports whether t holds a granted lock on the key.
func (e *entry) heldBy(t *trx) bool {
	for _, r := range e.locks {
		if r.trx == t && r.granted {
			return true
		}
	}
	return false
}

// physical reports whether a record for the key is in the index: committed,
// or inserted or delete-marked by a transaction not yet finished. (A
// committed DELETE's record is purged at once; see the package doc.)
func (e *entry) physical() bool { return e.exist || e.dirty != nil }

// current is the newest image: what a locking read sees.
func (e *entry) current() (bool, string) {
	if e.dirty != nil {
		return e.dExst, e.dVal
	}
	return e.exist, e.value
}

// view is what a nonlocking read of t sees: its own changes, else the
// committed image.
func (e *entry) view(t *trx) (bool, string) {
	if e.dirty == t && t != nil {
		return e.dExst, e.dVal
	}
	return e.exist, e.value
}

// mustWait reports whether a new request of t in mode conflicts with a lock
// of another transaction anywhere in the queue, granted or waiting
// (lock_rec_other_has_conflicting checks the whole queue, so a newcomer
// queues behind earlier waiters).
func (e *entry) mustWait(t *trx, mode lockMode) bool {
	for _, r := range e.locks {
		if r.trx != t && conflicts(mode, r.mode) {
			return true
		}
	}
	return false
}

// blockers returns the transactions a waiting request waits for: those
// holding a conflicting granted lock, and those with a conflicting request
// ahead of it in the queue (lock_rec_has_to_wait_in_queue).
func (e *entry) blockers(w *lockReq, out []*trx) []*trx {
	ahead := true
	for _, r := range e.locks {
		if r == w {
			ahead = false
			continue
		}
		if r.trx == w.trx || !conflicts(w.mode, r.mode) || !(r.granted || ahead) {
			continue
		}
		dup := false
		for _, o := range out {
			if o == r.trx {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, r.trx)
		}
	}
	return out
}

// grantable reports whether waiting request w may now be granted.
func (e *entry) grantable(w *lockReq) bool {
	return len(e.blockers(w, nil)) == 0
}

// removeTrx removes every request of t from the queue.
func (e *entry) removeTrx(t *trx) {
	out := e.locks[:0]
	for _, r := range e.locks {
		if r.trx != t {
			out = append(out, r)
		}
	}
	for i := len(out); i < len(e.locks); i++ {
		e.locks[i] = nil
	}
	e.locks = out
}

// removeReq removes one request from the queue.
func (e *entry) removeReq(w *lockReq) {
	for i, r := range e.locks {
		if r == w {
			copy(e.locks[i:], e.locks[i+1:])
			e.locks[len(e.locks)-1] = nil
			e.locks = e.locks[:len(e.locks)-1]
			return
		}
	}
}

// inheritToGap turns the record locks left on a key whose record vanished
// (an insert rolled back, a delete committed) into gap locks, granted, as
// lock_rec_inherit_to_gap does: the waiters' lock waits end and their
// statements run again, now finding no record. This is what makes two
// inserters that both waited behind a third one's uncommitted insert deadlock
// when it rolls back (MySQL manual innodb-locks-set.html, the INSERT example
// with three sessions).
// It reports whether it converted any.
func (e *entry) inheritToGap() bool {
	any := false
	for _, r := range e.locks {
		if r.mode == modeS || r.mode == modeX {
			r.mode = modeGap
			any = true
		}
	}
	return any
}

// findCycle looks for a cycle in the waits-for graph through start (a
// waiting transaction) and returns its members in path order, start first,
// or nil. The search is depth-first in queue order, so it is deterministic.
// Like InnoDB it gives up after maxDeadlockSteps and then reports a deadlock
// with start alone (LOCK_MAX_N_STEPS_IN_DEADLOCK_CHECK in
// storage/innobase/lock/lock0lock.cc).
func findCycle(start *trx) []*trx {
	const maxDeadlockSteps = 1000000
	steps := 0
	onPath := map[*trx]bool{}
	done := map[*trx]bool{}
	var path []*trx
	var visit func(t *trx) bool
	visit = func(t *trx) bool {
		steps++
		if steps > maxDeadlockSteps {
			path = []*trx{start}
			return true
		}
		if t.waiting == nil {
			return false
		}
		onPath[t] = true
		path = append(path, t)
		for _, b := range t.waitEntry.blockers(t.waiting, nil) {
			if b == start {
				return true
			}
			if onPath[b] || done[b] {
				continue
			}
			if visit(b) {
				return true
			}
		}
		path = path[:len(path)-1]
		onPath[t] = false
		done[t] = true
		return false
	}
	if visit(start) {
		return path
	}
	return nil
}

// victim chooses the transaction of a deadlock cycle to roll back: the one
// with the smallest weight, where a transaction's weight is the number of
// rows it changed plus the number of locks it holds (InnoDB's TRX_WEIGHT,
// storage/innobase/include/trx0trx.h: undo_no plus the length of its lock
// list; MySQL manual innodb-deadlock-detection.html: "InnoDB tries to pick
// small transactions to roll back"). On a tie the requester, whose wait
// closed the cycle, is the victim (observed on MariaDB 10.11 by the
// conformance suite). Simplification: MariaDB also prefers to spare
// transactions that modified non-transactional tables; there are none here.
func victim(cycle []*trx) *trx {
	v := cycle[0]
	for _, t := range cycle[1:] {
		if t.weight() < v.weight() {
			v = t
		}
	}
	return v
}
