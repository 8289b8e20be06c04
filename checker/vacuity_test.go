package checker

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestVacuity: each note on a verdict that judged little or nothing, and
// none where the verdict had something to judge.
func TestVacuity(t *testing.T) {
	v := func(lock, res Verdict) Verdicts {
		return Verdicts{{Property: LockSafety, Verdict: lock}, {Property: ResourceSafety, Verdict: res}}
	}
	tests := []struct {
		name string
		vs   Verdicts
		s    Stats
		want []string
	}{
		{"no grant", v(NotUsed, NotUsed), Stats{Attempts: 3, Failures: 3}, []string{
			"lock safety not used: no client was granted the lock (3 acquire attempts, 3 failed)",
			"resource safety not used: no critical section touched the resource",
		}},
		{"one grant", v(Holds, Holds), Stats{Attempts: 1, Grants: 1, WritesAccepted: 1}, []string{"lock safety holds over a single grant: no second holder could overlap it"}},
		{"judged", v(Violated, Holds), Stats{Attempts: 2, Grants: 2, WritesAccepted: 1, WritesRejected: 1}, nil},
		// Found with user code that returned no fencing token to a
		// monotonic resource (outsider3): every write was rejected and
		// resource safety said holds, with no note.
		{"every write rejected", v(Violated, Holds), Stats{Attempts: 2, Grants: 2, WritesRejected: 2}, []string{
			"resource safety holds, but the resource accepted no write (2 rejected): no update could be lost",
		}},
		{"every read rejected", v(Violated, Holds), Stats{Attempts: 2, Grants: 2}, []string{
			"resource safety holds, but the resource accepted no write (no write reached it): no update could be lost",
		}},
		{"violated with every write rejected is not vacuous", v(Violated, Violated), Stats{Grants: 2, WritesRejected: 2}, nil},
		{"no grant: the lock note says it", v(NotUsed, Holds), Stats{Attempts: 1, Failures: 1, WritesRejected: 1}, []string{"lock safety not used: no client was granted the lock (1 acquire attempts, 1 failed)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Vacuity(tt.vs, tt.s))
		})
	}
}
