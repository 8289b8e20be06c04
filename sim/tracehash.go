package sim

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// traceHash is the trace hash function: XXH3-128 (Yann Collet's xxHash,
// doc/xxhash_spec.md, "XXH3 algorithm"; github.com/zeebo/xxh3 implements
// it and checks its output against the reference C code) of the canonical
// encoding, computed twice, with seeds 0 and hashSeed2, the two 128-bit
// results concatenated (big-endian) into the 32 bytes the trace hash has
// always had. XXH3's output is defined by its spec on every platform (the
// vector code paths compute the same values as the scalar one), so the
// hash is the same on every machine and GOMAXPROCS.
//
// NB: XXH3 is not a cryptographic hash: the trace hash identifies a run
// (determinism tests, matching a trace file to its result) and no one
// forges traces; SHA-256 cost about 7% of a Redlock lock cycle's CPU.
type traceHash struct {
	a, b *xxh3.Hasher
}

// hashSeed2 seeds the second half of the trace hash (the 64-bit golden
// ratio constant: any fixed odd value would do).
const hashSeed2 = 0x9E3779B97F4A7C15

func newTraceHash() traceHash {
	return traceHash{a: xxh3.NewSeed(0), b: xxh3.NewSeed(hashSeed2)}
}

func (h traceHash) Write(p []byte) {
	h.a.Write(p)
	h.b.Write(p)
}

func (h traceHash) sum() [32]byte {
	var out [32]byte
	x, y := h.a.Sum128(), h.b.Sum128()
	binary.BigEndian.PutUint64(out[0:], x.Hi)
	binary.BigEndian.PutUint64(out[8:], x.Lo)
	binary.BigEndian.PutUint64(out[16:], y.Hi)
	binary.BigEndian.PutUint64(out[24:], y.Lo)
	return out
}
