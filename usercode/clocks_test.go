package usercode

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/faults"
)

// wallUntilLock computes its validity from Proc.Now, the client's wall
// clock: compared with time.Now it would never pass.
type wallUntilLock struct{ *ownLock }

func (w wallUntilLock) Obtain(ctx context.Context) (*Held, error) {
	h, err := w.ownLock.Obtain(ctx)
	if h != nil {
		h.Until = w.p.Now().Add(w.ttl)
	}
	return h, err
}

// TestWallClockDeadlineIsRefused: a Held.Until on the client's wall clock
// silently never expired; the run now fails with an error that names the
// client and the clock to use.
func TestWallClockDeadlineIsRefused(t *testing.T) {
	s := builtin(t, "single-gc-pause")
	bind := func(p *Proc) Lock { return wallUntilLock{newOwnLock(p).(*ownLock)} }
	_, err := Run(t, s, Options{Clients: map[string]func(*Proc) Lock{"c1": bind, "c2": newOwnLock}})
	var ce *ClockError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "c1", ce.Client)
	assert.Equal(t, "Held.Until", ce.What)
	assert.Contains(t, err.Error(), "compute the deadline from time.Now")
	assert.Contains(t, err.Error(), "client's wall clock (Proc.Now")
}

// TestWallClockFaultOnUserClientIsRefused: a clock jump of a user client
// reaches nothing the code reads through time.Now: refused at the start,
// naming the fault, unless the code says it reads Proc.Now.
func TestWallClockFaultOnUserClientIsRefused(t *testing.T) {
	s := parse(t, oneClient("500ms", `
  - at: 1s
    kind: clock-jump
    node: c1
    by: +30s
`))
	bind := map[string]func(*Proc) Lock{"c1": newOwnLock}
	_, err := Run(t, s, Options{Clients: bind})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "faults[0] (")
	assert.Contains(t, err.Error(), "clock-jump")
	assert.Contains(t, err.Error(), "cannot act on client c1")
	assert.Contains(t, err.Error(), "Options.ProcClock")
	_, err = Run(t, s, Options{Clients: bind, ProcClock: true})
	require.NoError(t, err)
}

// TestFuzzDrawsNoWallClockFaultOnUserClients: the schedules drawn for a
// campaign keep clock jumps of servers and drop those of bound clients.
func TestFuzzDrawsNoWallClockFaultOnUserClients(t *testing.T) {
	specs := []faults.Spec{{Kind: "clock-jump", Node: "A"}, {Kind: "clock-jump", Node: "c1"}, {Kind: "clock-strobe", Node: "c1"}, {Kind: "pause", Node: "c1"}, {Kind: "clock-jump", Node: "c2"}}
	got := actingFaults(specs, Options{Clients: map[string]func(*Proc) Lock{"c1": newOwnLock}})
	var kept []string
	for _, f := range got {
		kept = append(kept, f.Kind+" "+f.Node)
	}
	assert.Equal(t, []string{"clock-jump A", "pause c1", "clock-jump c2"}, kept)
	assert.Len(t, actingFaults(specs, Options{ProcClock: true, Clients: map[string]func(*Proc) Lock{"c1": newOwnLock}}), len(specs))
}
