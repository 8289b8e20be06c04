package fuzz

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksim/locksim/internal/outdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func prepareDir(t *testing.T, dir string) *outdir.Dir {
	t.Helper()
	d, err := outdir.Prepare(dir)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		err  string
	}{
		{in: "0/1", want: Shard{0, 1}},
		{in: "2/3", want: Shard{2, 3}},
		{in: "3/3", err: "K must be from 0 to 2"},
		{in: "-1/3", err: "K must be from 0 to 2"},
		{in: "1/0", err: "N must be at least 1"},
		{in: "1", err: "want K/N"},
		{in: "a/b", err: "want K/N"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestShardRangesPartition: for any N the shards' ranges tile 0..total-1.
func TestShardRangesPartition(t *testing.T) {
	for _, total := range []int{0, 1, 2, 7, 100, 1001} {
		for n := 1; n <= 9; n++ {
			next := 0
			for k := 0; k < n; k++ {
				f, e := Shard{k, n}.Range(total)
				require.Equal(t, next, f, "total %d shard %d/%d", total, k, n)
				require.LessOrEqual(t, f, e)
				next = e
			}
			assert.Equal(t, total, next, "total %d, %d shards", total, n)
		}
	}
}

// TestEachPrefix: a cancelled pool has done exactly a prefix of the runs.
func TestEachPrefix(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		ctx, cancel := context.WithCancel(context.Background())
		var started atomic.Int64
		seen := map[int]bool{}
		done := Each(ctx, 10, -1, workers, func(run int) int {
			if started.Add(1) == 40 {
				cancel()
			}
			return run * 2
		}, func(run, r int) {
			assert.Equal(t, run*2, r)
			seen[run] = true
		})
		require.GreaterOrEqual(t, done, 40)
		for i := 10; i < 10+done; i++ {
			assert.True(t, seen[i], "run %d missing (workers %d)", i, workers)
		}
		assert.Len(t, seen, done)
		cancel()
	}
}

// TestShardedCampaignEqualsWhole: the shards of a campaign, merged, give
// the whole campaign's findings, for several N and worker counts.
func TestShardedCampaignEqualsWhole(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	whole, err := Run(context.Background(), Config{Base: base, Seed: 7, Runs: 60, Workers: 2})
	require.NoError(t, err)
	require.NotEmpty(t, whole.Findings, "the test needs findings to compare")
	for _, n := range []int{2, 3, 7} {
		var recs []FuzzRecord
		cfg := Config{Base: base, Seed: 7, Runs: 60}
		for k := 0; k < n; k++ {
			c := cfg
			c.Shard, c.Workers = Shard{k, n}, 1+k%3
			require.NoError(t, Prepare(&c))
			part, err := Run(context.Background(), c)
			require.NoError(t, err)
			f, e := c.Shard.Range(60)
			assert.Equal(t, e-f, part.Runs)
			assert.Equal(t, f, part.First)
			recs = append(recs, Record(c, part))
		}
		require.NoError(t, Prepare(&cfg))
		merged, err := MergeFuzz(cfg, 60, recs)
		require.NoError(t, err)
		assert.Equal(t, JSON(whole), JSON(merged), "%d shards", n)
	}
}

func TestCheckSet(t *testing.T) {
	id := Identity{Command: "fuzz", Base: "b", BaseHash: "h", Seed: 1, Total: 10}
	m := func(k, n int, id Identity) *Manifest {
		f, e := Shard{k, n}.Range(id.Total)
		return &Manifest{Identity: id, Shard: k, Shards: n, First: f, End: e, Done: e - f}
	}
	other := id
	other.Seed = 2
	interrupted := m(1, 3, id)
	interrupted.Done, interrupted.Interrupted = 1, true
	tests := []struct {
		name string
		ms   []*Manifest
		err  string
	}{
		{name: "complete", ms: []*Manifest{m(2, 3, id), m(0, 3, id), m(1, 3, id)}},
		{name: "missing", ms: []*Manifest{m(0, 3, id), m(2, 3, id)}, err: "missing shards: 1/3 (runs 3..5)"},
		{name: "duplicated", ms: []*Manifest{m(0, 3, id), m(1, 3, id), m(1, 3, id), m(2, 3, id)}, err: "shard 1/3 given 2 times"},
		{name: "mixed seeds", ms: []*Manifest{m(0, 2, id), m(1, 2, other)}, err: "mixed campaigns"},
		{name: "mixed N", ms: []*Manifest{m(0, 2, id), m(1, 3, id)}, err: "mixed campaigns"},
		{name: "interrupted", ms: []*Manifest{m(0, 3, id), interrupted, m(2, 3, id)}, err: "shard 1/3 in d1 is incomplete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs := make([]string, len(tt.ms))
			for i := range dirs {
				dirs[i] = "d" + string(rune('0'+i))
			}
			err := CheckSet(dirs, tt.ms)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestVerdictCodes(t *testing.T) {
	runs := []Verdicts{{Lock: "holds", Resource: "violated", Liveness: "not-judged"}, {Lock: "unknown", Resource: "", Liveness: "holds"}}
	s := EncodeVerdicts(runs)
	assert.Equal(t, "hvnu-h", s)
	back, err := DecodeVerdicts(s, 2)
	require.NoError(t, err)
	assert.Equal(t, runs, back)
	_, err = DecodeVerdicts("hvx", 1)
	assert.Error(t, err)
}

// A shard's record keeps each run's numbers, so merged shards aggregate
// them as an unsharded campaign does (issue 25).
func TestVerdictRecordNumbers(t *testing.T) {
	runs := []Verdicts{
		{Lock: "holds", Numbers: RunNumbers{Known: true, Grants: 3, LatencyP50: 1500 * time.Millisecond, HasLatency: true, Unavailable: 2 * time.Second}},
		{Lock: "holds", Numbers: RunNumbers{Known: true}},
	}
	rec := RecordOf(runs)
	assert.Equal(t, [][3]int64{{3, int64(1500 * time.Millisecond), int64(2 * time.Second)}, {0, -1, 0}}, rec.Numbers)
	back, err := rec.Decode(2)
	require.NoError(t, err)
	assert.Equal(t, runs, back)

	// A manifest written before the numbers were kept: verdicts only.
	old, err := VerdictRecord{Verdicts: "h--h--"}.Decode(2)
	require.NoError(t, err)
	assert.False(t, old[0].Numbers.Known)
	assert.Empty(t, RecordOf(old).Numbers)

	for _, bad := range []VerdictRecord{
		{Verdicts: "h--h--", Numbers: [][3]int64{{1, 1, 1}}},
		{Verdicts: "h--h--", Numbers: [][3]int64{{1, 1, 1}, {-1, 0, 0}}},
	} {
		_, err := bad.Decode(2)
		assert.Error(t, err)
	}
}
