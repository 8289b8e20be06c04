package campaign

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/reports"
)

// TestPrintSweepListsViolatingSeeds: a sweep prints the seeds of every
// violating run of a point, not only the first one's replay (issue 25),
// and no such line for a point without violations.
func TestPrintSweepListsViolatingSeeds(t *testing.T) {
	many := make([]uint64, 25)
	for i := range many {
		many[i] = uint64(100 + i)
	}
	sw := &reports.Sweep{Scenario: "x", Seeds: 30, Params: []reports.SweepParam{{Path: "ttl"}}, Points: []reports.SweepPoint{
		{Values: []string{"1s"}, Replay: "simrun run p0.yaml --seed 7", Violating: []uint64{7, 9, 12}},
		{Values: []string{"2s"}, Replay: "simrun run p1.yaml --seed 1"},
		{Values: []string{"3s"}, Replay: "simrun run p2.yaml --seed 100", Violating: many},
	}}
	var b bytes.Buffer
	printSweep(&b, sw, "out")
	out := b.String()
	assert.Contains(t, out, "     violating seeds: 7, 9, 12\n")
	assert.Contains(t, out, "violating seeds: 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, and 5 more\n")
	assert.Equal(t, 2, bytes.Count(b.Bytes(), []byte("violating seeds")))
}
