package checker

import (
	"sort"
	"time"

	"github.com/locksim/locksim/sim"
)

// freeStretches are the sorted, disjoint stretches of one lock in which it
// was free and no fault acted, with a segment tree over their lengths, so
// that each wait asks for the longest stretch inside it, and the first one
// longer than its bound, in O(log n) instead of visiting every stretch it
// spans (waits of many contending clients span many stretches each, which
// made the liveness check O(waits x clients)).
type freeStretches struct {
	ws   []Window
	size int             // a power of two, at least len(ws)
	tree []time.Duration // tree[size+i] = length of ws[i]; tree[k] = max of its children
}

func newFreeStretches(ws []Window) *freeStretches {
	size := 1
	for size < len(ws) {
		size *= 2
	}
	f := &freeStretches{ws: ws, size: size, tree: make([]time.Duration, 2*size)}
	for i, w := range ws {
		f.tree[size+i] = w.End.Sub(w.Start)
	}
	for k := size - 1; k >= 1; k-- {
		f.tree[k] = max(f.tree[2*k], f.tree[2*k+1])
	}
	return f
}

// rangeMax returns the longest length among ws[l..r] (0 if l > r).
func (f *freeStretches) rangeMax(l, r int) time.Duration {
	var m time.Duration
	for l, r = l+f.size, r+f.size+1; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			m = max(m, f.tree[l])
			l++
		}
		if r&1 == 1 {
			r--
			m = max(m, f.tree[r])
		}
	}
	return m
}

// firstLonger returns the first index in [l, r] whose length exceeds bound,
// or -1.
func (f *freeStretches) firstLonger(l, r int, bound time.Duration) int {
	return f.first(1, 0, f.size-1, l, r, bound)
}

func (f *freeStretches) first(k, lo, hi, l, r int, bound time.Duration) int {
	if hi < l || lo > r || f.tree[k] <= bound {
		return -1
	}
	if lo == hi {
		return lo
	}
	mid := (lo + hi) / 2
	if i := f.first(2*k, lo, mid, l, r, bound); i >= 0 {
		return i
	}
	return f.first(2*k+1, mid+1, hi, l, r, bound)
}

// within returns the stretches inside [from, to] as the index range [l, r]
// of ws (empty when l > r): ws[l] and ws[r] may stick out and must be
// clipped (clipped), the others lie inside.
func (f *freeStretches) within(from, to sim.Time) (l, r int) {
	l = sort.Search(len(f.ws), func(i int) bool { return f.ws[i].End > from })
	r = sort.Search(len(f.ws), func(i int) bool { return f.ws[i].Start >= to }) - 1
	return l, r
}

// clipped returns ws[i] clipped to [from, to], and whether anything is left.
func (f *freeStretches) clipped(i int, from, to sim.Time) (Window, bool) {
	w := Window{Start: maxTime(f.ws[i].Start, from), End: minTime(f.ws[i].End, to)}
	return w, w.End > w.Start
}

// longest returns the longest stretch of the wait [from, to], clipped to it,
// and whether there is any.
func (f *freeStretches) longest(from, to sim.Time) (time.Duration, bool) {
	l, r := f.within(from, to)
	if l > r {
		return 0, false
	}
	var d time.Duration
	found := false
	for _, i := range []int{l, r} {
		if w, ok := f.clipped(i, from, to); ok {
			d, found = max(d, w.End.Sub(w.Start)), true
		}
	}
	if l+1 <= r-1 {
		d, found = max(d, f.rangeMax(l+1, r-1)), true
	}
	return d, found
}

// firstOver returns the first stretch of the wait [from, to], clipped to
// it, that is longer than bound.
func (f *freeStretches) firstOver(from, to sim.Time, bound time.Duration) (Window, bool) {
	l, r := f.within(from, to)
	if l > r {
		return Window{}, false
	}
	if w, ok := f.clipped(l, from, to); ok && w.End.Sub(w.Start) > bound {
		return w, true
	}
	if l+1 <= r-1 {
		if i := f.firstLonger(l+1, r-1, bound); i >= 0 {
			return f.ws[i], true
		}
	}
	if r > l {
		if w, ok := f.clipped(r, from, to); ok && w.End.Sub(w.Start) > bound {
			return w, true
		}
	}
	return Window{}, false
}
