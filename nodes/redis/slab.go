package redis

import (
	"strconv"
	"unsafe"
)

// Slabs for what a node keeps past the command that built it: the words of
// a command it propagates in a form of its own (SET ... PXAT, a script's
// redis.call) and the text of its numbers, the command list of an execution unit, and the AOF's
// records. Each is carved out of a chunk with its capacity capped at its
// length, so that an append to it copies instead of writing into its
// neighbour; a full chunk is replaced by a new one, never grown, so that
// what was carved out of it stays where it is. Chunks start small and
// double up to a bound, so that a node that writes little holds little.
// Nothing here changes what is propagated, written or traced: one
// allocation per chunk instead of one per command (issue 15).

const (
	slabMin = 8
	slabMax = 256
	// The byte slab's largest chunk: a few dozen timestamps.
	slabBytes = 1024
)

// slabCap is the capacity of the chunk after one of capacity c, with room
// for at least k items.
func slabCap(c, k int) int { return max(min(2*c, slabMax), slabMin, k) }

// carveWords returns k fresh words (a command's argv).
func (n *Node) carveWords(k int) []string {
	if len(n.wordSlab)+k > cap(n.wordSlab) {
		n.wordSlab = make([]string, 0, slabCap(cap(n.wordSlab), k))
	}
	i := len(n.wordSlab)
	n.wordSlab = n.wordSlab[:i+k]
	return n.wordSlab[i : i+k : i+k]
}

// carveUnit returns an empty command list with room for one command (most
// execution units propagate one; a longer one grows by append).
func (n *Node) carveUnit() []Cmd {
	if len(n.unitSlab)+1 > cap(n.unitSlab) {
		n.unitSlab = make([]Cmd, 0, slabCap(cap(n.unitSlab), 1))
	}
	i := len(n.unitSlab)
	n.unitSlab = n.unitSlab[:i+1]
	return n.unitSlab[i : i : i+1]
}

// carveRecord returns an AOF record of cmds (kept by the AOF file as a
// pointer: boxing the struct would allocate it on its own).
func (n *Node) carveRecord(cmds []Cmd) *aofRecord {
	if len(n.recSlab) == cap(n.recSlab) {
		n.recSlab = make([]aofRecord, 0, slabCap(cap(n.recSlab), 1))
	}
	n.recSlab = append(n.recSlab, aofRecord{Cmds: cmds})
	return &n.recSlab[len(n.recSlab)-1]
}

// carveInt returns the decimal text of v (strconv.FormatInt) with its bytes
// carved out of a byte slab that is never rewritten, so that the string
// stays valid as long as something keeps it.
func (n *Node) carveInt(v int64) string {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], v, 10)
	if cap(n.byteSlab)-len(n.byteSlab) < len(b) {
		n.byteSlab = make([]byte, 0, max(min(2*cap(n.byteSlab), slabBytes), 4*len(b)))
	}
	at := len(n.byteSlab)
	n.byteSlab = append(n.byteSlab, b...)
	return unsafe.String(&n.byteSlab[at], len(b))
}
