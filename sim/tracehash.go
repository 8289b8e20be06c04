package sim

import (
	"encoding/binary"
	"math/bits"
)

// traceHash is the trace hash function: a 256-bit, non-cryptographic hash
// of the canonical encoding of the events (tracer), written for this
// project. It replaced SHA-256, which was the largest single item of a
// fault-free Redlock cycle's CPU profile (about 8%; issue 28): a trace
// hash only has to tell two runs apart when anything their traces show
// differs, never to resist someone forging a trace.
//
// Construction. The input is read in 32-byte blocks of four little-endian
// words; word i of every block goes into lane i of four 64-bit lanes:
//
//	lane = rotl(lane + w*m1, 29) * m2
//
// For a fixed lane this step is injective in w, and for a fixed w a
// bijection of the lane (m1, m2 odd; add, rotate and multiply by an odd
// number are bijections of 64-bit words), so two inputs that differ in one
// block leave at least one lane different after it, and every later block
// keeps that lane different: such inputs never collide. The last partial
// block is padded with zeros, and the length in bytes is added to the
// finish, so inputs of different lengths differ too. The finish is a
// bijection of the 256-bit lane state (mix64 of each lane, then each lane
// in turn adds a mixed rotation of the one before it, twice around), so that every output bit
// depends on every lane; distinct lane states give distinct hashes. Inputs
// that differ in two or more blocks collide by chance with probability
// about 2^-64 (a lane's chain); TestTraceHashAvalanche checks that each
// input bit flips about half of the output bits.
//
// The four lanes are independent, so a block's four multiplies run in
// parallel; the whole costs a small fraction of SHA-256 per byte.
type traceHash struct {
	lanes [4]uint64
	n     uint64 // bytes consumed (whole blocks)
}

// Multipliers and seeds: random odd 64-bit constants drawn for this hash.
const (
	thM1 = 0xc9585f12ab39d3ed
	thM2 = 0x9e3779b97f4a7c15
	thM3 = 0xf3078094d3917797
	thS0 = 0x17690081d8e46bd9
	thS1 = 0xc38a17faa43d7d05
	thS2 = 0xc661b1d088714483
	thS3 = 0x6d94a061420180a5
)

func newTraceHash() traceHash {
	return traceHash{lanes: [4]uint64{thS0, thS1, thS2, thS3}}
}

// blocks consumes the whole 32-byte blocks of b and returns how many bytes
// it consumed (a multiple of 32).
func (h *traceHash) blocks(b []byte) int {
	l0, l1, l2, l3 := h.lanes[0], h.lanes[1], h.lanes[2], h.lanes[3]
	n := len(b) &^ 31
	for i := 0; i < n; i += 32 {
		p := b[i : i+32 : i+32]
		l0 = bits.RotateLeft64(l0+binary.LittleEndian.Uint64(p[0:8])*thM1, 29) * thM2
		l1 = bits.RotateLeft64(l1+binary.LittleEndian.Uint64(p[8:16])*thM1, 29) * thM2
		l2 = bits.RotateLeft64(l2+binary.LittleEndian.Uint64(p[16:24])*thM1, 29) * thM2
		l3 = bits.RotateLeft64(l3+binary.LittleEndian.Uint64(p[24:32])*thM1, 29) * thM2
	}
	h.lanes = [4]uint64{l0, l1, l2, l3}
	h.n += uint64(n)
	return n
}

// mix64 is a bijective avalanche of one word: xor-shifts and odd
// multiplies.
func mix64(x uint64) uint64 {
	x ^= x >> 32
	x *= thM3
	x ^= x >> 29
	x *= thM1
	x ^= x >> 32
	return x
}

// sum returns the hash of everything consumed followed by tail (shorter
// than a block), without changing h: a trace's hash may be read mid-run.
func (h *traceHash) sum(tail []byte) [32]byte {
	c := *h
	var last [32]byte
	copy(last[:], tail)
	if len(tail) > 0 {
		c.blocks(last[:])
	}
	total := h.n + uint64(len(tail))
	l := c.lanes
	l[0] += total
	for i := range l {
		l[i] = mix64(l[i])
	}
	for r := 0; r < 2; r++ {
		for i := range l {
			l[i] += bits.RotateLeft64(mix64(l[(i+3)&3]), 17+8*i)
		}
	}
	var out [32]byte
	for i := range l {
		binary.LittleEndian.PutUint64(out[8*i:], mix64(l[i]))
	}
	return out
}
