package checker

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

func cs(c int, call, ret, read int64, w WriteResult) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Input: ResourceInput{Client: c}, Call: call, Output: ResourceOutput{Read: read, Write: w}, Return: ret}
}

// TestResourceModelReferenceTable runs every history of the Model 2 table in
// reference/porcupine.md, strict column, through ResourceModel.
func TestResourceModelReferenceTable(t *testing.T) {
	tests := []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"3 sequential sections reading 0, 1, 2",
			[]porcupine.Operation{cs(0, 0, 10, 0, Accepted), cs(1, 20, 30, 1, Accepted), cs(2, 40, 50, 2, Accepted)}, porcupine.Ok},
		{"overlapping sections read 0 and 1, both accepted",
			[]porcupine.Operation{cs(0, 0, 30, 0, Accepted), cs(1, 10, 40, 1, Accepted)}, porcupine.Ok},
		{"overlapping sections both read 0, both accepted (lost update)",
			[]porcupine.Operation{cs(0, 0, 30, 0, Accepted), cs(1, 10, 40, 0, Accepted)}, porcupine.Illegal},
		{"same, but the older one's write fenced",
			[]porcupine.Operation{cs(0, 0, 30, 0, Rejected), cs(1, 10, 40, 0, Accepted)}, porcupine.Ok},
		{"fenced section read a value that never existed",
			[]porcupine.Operation{cs(0, 0, 10, 0, Accepted), cs(1, 20, 30, 7, Rejected)}, porcupine.Illegal},
		{"second reads 0 after 0->1 completed",
			[]porcupine.Operation{cs(0, 0, 10, 0, Accepted), cs(1, 20, 30, 0, Accepted)}, porcupine.Illegal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, porcupine.CheckOperationsTimeout(ResourceModel, tt.ops, 10*time.Second))
		})
	}
}

// counterexample is the write-only fencing history from reference/porcupine.md:
// the lease of c1 ends mid-section, c0 reads before c1's write lands, and
// both writes are accepted because each token is the largest seen so far.
func counterexample() []sim.Section {
	return []sim.Section{
		sect("c2", 1, s(15), s(18), 0, sim.WriteAccepted),
		sect("c1", 2, s(27), s(61), 1, sim.WriteAccepted),
		sect("c0", 3, s(44), s(80), 1, sim.WriteAccepted),
	}
}

// TestCheckResourceDropsAWriteWithoutARead: CheckResource alone drops a
// section whose write was decided without a read (Check refuses such a
// history, see testdata/histories/invalid.txt); the other resource verdicts
// are in testdata/histories/resource.txt.
func TestCheckResourceDropsAWriteWithoutARead(t *testing.T) {
	noRead := sect("c1", 1, s(27), s(30), 0, sim.WriteAccepted)
	noRead.Read = false
	h := history(s(100), nil, []sim.Section{sect("c0", 2, s(20), s(25), 0, sim.WriteAccepted), noRead})
	assert.Equal(t, Holds, CheckResource(h, 0))
	noRead.Read = true
	h = history(s(100), nil, []sim.Section{sect("c0", 2, s(20), s(25), 0, sim.WriteAccepted), noRead})
	assert.Equal(t, Violated, CheckResource(h, 0), "with its read, the same section is a stale read")
}

func TestResourceOperationsEncoding(t *testing.T) {
	h := history(s(100), nil, []sim.Section{
		sect("c1", 2, s(27), s(61), 1, sim.WriteAccepted),
		sect("c0", 3, s(44), s(80), 1, sim.WriteRejected),
		sect("c0", 4, s(81), 0, 1, sim.WriteNone),
	})
	h.Sections[0].ReadSent, h.Sections[0].ResultAt = s(26), s(62)
	ops := ResourceOperations(h)
	require.Len(t, ops, 2)
	assert.Equal(t, int64(s(27)), ops[0].Call, "the call is the storage node's read")
	assert.Equal(t, int64(s(61)), ops[0].Return, "the return is the storage node's write")
	assert.Equal(t, ResourceInput{Client: 1, Name: "c1", Lock: "L", Section: 0, Token: 2, HasToken: true}, ops[0].Input)
	assert.Equal(t, ResourceOutput{Read: 1, Write: Accepted}, ops[0].Output)
	assert.Equal(t, ResourceOutput{Read: 1, Write: Rejected}, ops[1].Output)
	assert.Equal(t, 0, ops[1].ClientId)
}

// TestResourceModelMatchesGroundTruth simulates a storage node with no
// fencing, write-only fencing and mark-mode fencing on random overlapping
// sections, and checks that the resource verdict is Violated exactly when an
// accepted write's read was stale when the write landed (a lost update), and
// that the explanation then names a lost update.
func TestResourceModelMatchesGroundTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	type event struct {
		at    sim.Time
		sec   int
		write bool
	}
	var violated, held int
	for run := 0; run < 400; run++ {
		mode := run % 3 // 0 none, 1 write-only fencing, 2 mark mode
		n := 2 + rng.IntN(5)
		secs := make([]sim.Section, n)
		var events []event
		slots := rng.Perm(4 * n) // distinct times: no ties to resolve
		for i := range secs {
			a, b := sim.Time(slots[2*i]+1), sim.Time(slots[2*i+1]+1)
			if a > b {
				a, b = b, a
			}
			secs[i] = sim.Section{ID: i, Client: []string{"c0", "c1", "c2"}[i%3], Lock: "L", BeliefID: -1,
				Token: int64(i + 1), HasToken: true, ReadSent: a, ReadAt: a, WriteSent: b, WriteAt: b}
			events = append(events, event{a, i, false}, event{b, i, true})
		}
		sort.Slice(events, func(i, j int) bool { return events[i].at < events[j].at })

		var value, maxToken int64
		truth := false
		for _, e := range events {
			x := &secs[e.sec]
			switch {
			case !e.write:
				if mode == 2 && x.Token < maxToken {
					x.ReadRejected = true
					continue
				}
				if mode == 2 {
					maxToken = x.Token
				}
				x.Read, x.ReadValue = true, value
			case x.Read:
				x.Written, x.WriteValue = true, x.ReadValue+1
				switch {
				case rng.IntN(6) == 0:
					x.Outcome = sim.WriteLost
				case mode != 0 && x.Token < maxToken:
					x.Outcome = sim.WriteRejected
				default:
					x.Outcome = sim.WriteAccepted
					if x.ReadValue != value {
						truth = true
					}
					value, maxToken = x.ReadValue+1, max(maxToken, x.Token)
				}
			}
		}
		h := &sim.History{Sections: secs, End: sim.Time(4*n + 2)}
		v := CheckResource(h, 0)
		require.NotEqual(t, Unknown, v)
		if !assert.Equal(t, truth, v == Violated, "run %d (mode %d): %+v", run, mode, secs) {
			return
		}
		if truth {
			violated++
			for _, x := range explainResource(h) {
				assert.NotEmpty(t, x.Clients, "run %d: %s", run, x.Explanation)
			}
		} else {
			held++
		}
	}
	assert.Greater(t, violated, 40)
	assert.Greater(t, held, 40)
}
