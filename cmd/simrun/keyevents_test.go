package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// TestKeyEventsKeepsWhatTheSummaryPrints feeds traces of every length to
// the bounded collector and compares it with the whole list of key events:
// the first events, the last ones, and the omitted middle with its span.
func TestKeyEventsKeepsWhatTheSummaryPrints(t *testing.T) {
	for _, max := range []int{0, 1, 4, 5, 40} {
		for n := 0; n <= 60; n++ {
			t.Run(fmt.Sprintf("max=%d/n=%d", max, n), func(t *testing.T) {
				k := newKeyEvents(max)
				var all []sim.Event
				for i := 0; i < n; i++ {
					// Every other event is not a key event.
					noise := sim.Event{Seq: uint64(2 * i), At: sim.Time(10 * i), Kind: sim.KindSend}
					e := sim.Event{Seq: uint64(2*i + 1), At: sim.Time(10*i + 1), Kind: sim.KindAcquired}
					k.add(&noise)
					k.add(&e)
					all = append(all, e)
				}
				shown := append(append([]sim.Event(nil), k.first...), k.lastEvents()...)
				if max <= 0 || n <= max {
					assert.Equal(t, append([]sim.Event{}, all...), append([]sim.Event{}, shown...), "everything is shown")
					assert.Zero(t, k.omitted)
					return
				}
				tail := max / 4
				head := max - tail
				assert.Equal(t, all[:head], k.first)
				assert.Equal(t, all[n-tail:], append([]sim.Event{}, k.lastEvents()...))
				assert.Equal(t, n-max, k.omitted)
				assert.Equal(t, all[head].At, k.omittedFrom)
				assert.Equal(t, all[n-tail-1].At, k.omittedTo)
			})
		}
	}
	t.Run("the initial load is not a key event", func(t *testing.T) {
		k := newKeyEvents(0)
		k.add(&sim.Event{Kind: "loaded", At: 0})
		k.add(&sim.Event{Kind: "loaded", At: 5})
		assert.Len(t, k.first, 1)
	})
}

// TestTraceStreamsTheSameBytes checks that --trace alone, which streams the
// trace to its file as the run goes without keeping it, writes the same
// bytes as the kept trace --out writes, and that the summary is the same.
func TestTraceStreamsTheSameBytes(t *testing.T) {
	dir := t.TempDir()
	streamed := filepath.Join(dir, "streamed.jsonl")
	r1 := simrun("run", quick, "--trace", streamed)
	require.Equal(t, exitOK, r1.code, r1.stderr)
	r2 := simrun("run", quick, "--out", filepath.Join(dir, "out"))
	require.Equal(t, exitOK, r2.code, r2.stderr)
	a, err := os.ReadFile(streamed)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "out", "trace.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, a)
	assert.True(t, bytes.Equal(a, b), "streamed and kept traces differ")
	// The summaries differ only in where they say the full trace is.
	norm := func(s string) string {
		return strings.NewReplacer(streamed, "TRACE", filepath.Join(dir, "out", "trace.jsonl"), "TRACE").Replace(s)
	}
	assert.Equal(t, norm(r2.stdout), norm(r1.stdout))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file is left behind")
}
