package checker

import (
	"fmt"
	"path"
	"strings"

	"github.com/locksim/locksim/sim"
)

// Key losses (sim.KeyLoss) are the server's own causes of an overlap: a key
// that expired or was evicted, a ZooKeeper session whose ephemeral node went
// with it, a MySQL connection killed with its row lock. No fault need
// precede them, so without them an explanation could only say "no fault
// preceded the overlap".

// lossesOf returns the losses of lock's key held by holder in h from from
// (inclusive) to to (exclusive), in the order they happened. A loss whose
// server knew another holder (a waiting contender's ZooKeeper node) is not
// the holder's; one whose server could not tell (sim.KeyLoss.Holder empty:
// Redis, memcached) counts.
//
// The window runs from the first holder's belief to the second holder's
// belief: the key the first holder was granted existed from its grant on,
// and the loss that let the second one in came before the second grant,
// which came before the second belief. Simplifications: the history does
// not say which servers granted the first holder's lock, so a loss of the
// key on any server counts (with a quorum lock, a server that never granted
// it may lose a key of an earlier holder in the window: its value would
// tell, but the checker does not know the clients' values); and a loss between
// the first grant and the first belief (while the reply was on its way) is
// not named.
func lossesOf(h *sim.History, lock, holder string, from, to sim.Time) []sim.KeyLoss {
	var out []sim.KeyLoss
	for _, l := range h.KeyLosses {
		if l.At >= from && l.At < to && lossOfLock(l, lock) && (l.Holder == "" || l.Holder == holder) {
			out = append(out, l)
		}
	}
	return out
}

// lossOfLock reports whether l removed the key of lock: the key itself
// (Redis, memcached, a MySQL row: the lock's name is its key, clients'
// LockConfig.Key) or a child of the lock's znode (ZooKeeper: the lock is
// the parent znode "/<key>" and each contender's ephemeral node a child).
func lossOfLock(l sim.KeyLoss, lock string) bool {
	if l.Key == lock {
		return true
	}
	return l.Cause == sim.LossSessionExpired && path.Dir(l.Key) == "/"+lock
}

// lossClause tells how the server(s) lost a's lock key before b got it:
// `A evicted the lock key "lock" at 0.950s (maxmemory 1450 bytes, policy
// volatile-lru) while c1 believed it held the lock, then c2 acquired it at
// 1.003s`. Consecutive losses alike but for the server (a quorum's keys
// expiring one after the other) make one item: `A, B and C expired the lock
// key "lock" between 10.028s and 10.036s (its TTL ran out)`. It returns ""
// when no loss of the key falls between a's and b's beliefs.
func lossClause(h *sim.History, a, b sim.Belief) string {
	ls := lossesOf(h, a.Lock, a.Client, a.Start, b.Start)
	if len(ls) == 0 {
		return ""
	}
	digits := digitsFor([2]sim.Time{ls[0].At, ls[len(ls)-1].At}, [2]sim.Time{ls[len(ls)-1].At, b.Start})
	var items []string
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && ls[j].Cause == ls[i].Cause && ls[j].Key == ls[i].Key && ls[j].Detail == ls[i].Detail {
			j++
		}
		if len(items) == maxListed {
			items = append(items, fmt.Sprintf("%d more losses of the key", len(ls)-i))
			break
		}
		items = append(items, lossText(ls[i:j], digits, "lock key"))
		i = j
	}
	who := b.Client
	if who == a.Client {
		who += " again"
	}
	return fmt.Sprintf("%s while %s believed it held the lock, then %s acquired it at %s",
		joinAnd(items), a.Client, who, fmtAt(b.Start, digits))
}

// lossText renders losses alike but for the server, in time order: `A
// evicted the lock key "lock" at 0.950s (maxmemory 1450 bytes, policy
// volatile-lru)`, or `A and B expired the lock key "lock" between 10.028s
// and 10.032s (its TTL ran out)`. noun names the key: "lock key", "token
// counter key".
func lossText(ls []sim.KeyLoss, digits int, noun string) string {
	l := ls[0]
	var what string
	var notes []string
	switch l.Cause {
	case sim.LossExpired:
		what = fmt.Sprintf("expired the %s %q", noun, l.Key)
		notes = append(notes, "its TTL ran out")
	case sim.LossEvicted:
		what = fmt.Sprintf("evicted the %s %q", noun, l.Key)
	case sim.LossSessionExpired:
		what = fmt.Sprintf("expired the session of the lock node %q", l.Key)
	case sim.LossConnectionKilled:
		what = fmt.Sprintf("closed the connection holding the row lock %q and rolled it back", l.Key)
	case sim.LossRestart:
		what = fmt.Sprintf("restarted without the %s %q", noun, l.Key)
	case sim.LossResync:
		what = fmt.Sprintf("dropped the %s %q", noun, l.Key)
	case sim.LossRemovedByClient:
		what = fmt.Sprintf("removed the %s %q, which %s had set, on a %s", noun, l.Key, l.Holder, l.Detail)
		l.Detail = ""
	case sim.LossOverwritten:
		what = fmt.Sprintf("overwrote the %s %q, which %s had set, on a %s", noun, l.Key, l.Holder, l.Detail)
		l.Detail = ""
	default:
		what = fmt.Sprintf("removed the %s %q", noun, l.Key)
		notes = append(notes, string(l.Cause))
	}
	if l.Detail != "" {
		notes = append(notes, l.Detail)
	}
	var nodes []string
	for _, x := range ls {
		nodes = append(nodes, x.Node)
	}
	s := fmt.Sprintf("%s %s at %s", joinAnd(uniqueInOrder(nodes)), what, fmtAt(l.At, digits))
	if last := ls[len(ls)-1].At; last != l.At {
		s = fmt.Sprintf("%s %s between %s and %s", joinAnd(uniqueInOrder(nodes)), what, fmtAt(l.At, digits), fmtAt(last, digits))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

// tokenCounterKey is the key of a lock's fencing-token counter: the
// clients INCR "<key>:token" on Redis (clients/single.go incrToken) and
// "incr <key>:token" on memcached (clients/memcached.go), where the
// lock's name is its key.
func tokenCounterKey(lock string) string { return lock + ":token" }

// counterLossClause tells how a server lost lock's token counter key
// between from (inclusive) and to (exclusive), so that the counter counted
// from the start again and handed out tokens it had handed out before:
// `A evicted the token counter key "lock:token" at 2.000s (maxmemory 1450
// bytes, policy allkeys-lru), and the token counter went backwards from 3
// to 0: the tokens counted from the start again` (the highest token issued
// before the loss, when there was one). It returns "" when there is no such loss.
func counterLossClause(h *sim.History, lock string, from, to sim.Time) string {
	key := tokenCounterKey(lock)
	var ls []sim.KeyLoss
	for _, l := range h.KeyLosses {
		if l.Key == key && l.At >= from && l.At < to {
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		return ""
	}
	digits := digitsFor([2]sim.Time{ls[0].At, ls[len(ls)-1].At})
	var items []string
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && ls[j].Cause == ls[i].Cause && ls[j].Detail == ls[i].Detail {
			j++
		}
		if len(items) == maxListed {
			items = append(items, fmt.Sprintf("%d more losses of the key", len(ls)-i))
			break
		}
		items = append(items, lossText(ls[i:j], digits, "token counter key"))
		i = j
	}
	// The counter starts again from 0: below every token issued before.
	if hi, ok := highestToken(h, lock, ls[0].At); ok && hi > 0 {
		return joinAnd(items) + fmt.Sprintf(", and the token counter went backwards from %d to 0: the tokens counted from the start again", hi)
	}
	return joinAnd(items) + ", and the tokens counted from the start again"
}

// actsClause names the commands of the overlap's clients that acted on a
// lock key another of them had stored (sim.History.KeyActs) from the
// first belief's start to the end of the last overlap: `c1's PEXPIRE at
// 30.112s acted on the lock key "lock" that c2 had set (on A)`. A former
// holder's extension that moved the new holder's deadline, and took the
// success as its own, is named here and nowhere else; an act that was
// also a loss the loss clause names (a DEL of the key before the second
// grant) is left to it. It returns "" when there is none.
func actsClause(h *sim.History, g []overlap, digits int) string {
	if len(h.KeyActs) == 0 {
		return ""
	}
	a := g[0].a
	in := map[string]bool{a.Client: true}
	end := a.Start
	for _, o := range g {
		in[o.b.Client] = true
		end = maxTime(end, o.end)
	}
	named := map[[2]string]sim.Time{}
	for _, l := range lossesOf(h, a.Lock, a.Client, a.Start, g[0].b.Start) {
		named[[2]string{l.Node, l.Key}] = l.At
	}
	var items []string
	n := 0
	for _, x := range h.KeyActs {
		if x.At < a.Start || x.At > end || x.Key != a.Lock || !in[x.Client] || !in[x.Holder] {
			continue
		}
		if at, ok := named[[2]string{x.Node, x.Key}]; ok && at == x.At {
			continue
		}
		n++
		if len(items) == maxListed {
			continue
		}
		items = append(items, fmt.Sprintf("%s's %s at %s acted on the lock key %q that %s had set (on %s)", x.Client, x.Command, fmtAt(x.At, digits), x.Key, x.Holder, x.Node))
	}
	if n > len(items) {
		items = append(items, fmt.Sprintf("%d more such commands", n-len(items)))
	}
	return joinAnd(items)
}
