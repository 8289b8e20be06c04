package fuzz

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func builtin(t testing.TB, name string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Builtin(name)
	require.NoError(t, err)
	return s
}

// TestRunSeed pins the documented formula: the (run+1)-th SplitMix64
// output from the campaign seed. 16294208416658607535 (0xe220a8397b1dcdaf)
// is SplitMix64's well-known first output for seed 0.
func TestRunSeed(t *testing.T) {
	tests := []struct {
		campaign uint64
		run      int
		want     uint64
	}{
		{0, 0, 16294208416658607535},
		{1, 0, 10451216379200822465},
		{1, 1, 13757245211066428519},
		{42, 999, 7352439375932947048},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d", tt.campaign, tt.run), func(t *testing.T) {
			assert.Equal(t, tt.want, RunSeed(tt.campaign, tt.run))
		})
	}
	seen := map[uint64]bool{}
	for i := 0; i < 10000; i++ {
		seen[RunSeed(1, i)] = true
	}
	assert.Len(t, seen, 10000)
}

// findingsText summarises a campaign's findings for comparison.
func findingsText(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "runs %d\n", res.Runs)
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "%d run %d seed %d %v kept=%v %v %s\n", f.Number, f.Run, f.Seed, f.Kinds, f.Kept, specStrings(f.Faults), f.Explanation)
	}
	return b.String()
}

// TestCampaignSameForAnyWorkerCount: the findings of a campaign do not
// depend on how many workers ran it.
func TestCampaignSameForAnyWorkerCount(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	var first string
	for _, w := range []int{1, 2, 3} {
		res, err := Run(context.Background(), Config{Base: base, Seed: 5, Runs: 300, Workers: w})
		require.NoError(t, err)
		require.Empty(t, res.Errors)
		require.NotEmpty(t, res.Findings, "the test needs findings to compare")
		got := findingsText(res)
		if first == "" {
			first = got
			continue
		}
		assert.Equal(t, first, got, "workers %d", w)
	}
}

// TestClockJumpCampaign is issue 7's acceptance run: fuzzing
// redlock-clock-jump with clock jumps only finds lock violations; a shrunk
// finding and the finding itself replay from their files (the run matches
// their expect block). Without partitions, c2 can only win a majority
// while c1 holds all five masters when three of their clocks jump past
// the key's expiry, so the shrunk schedule is three forward jumps on three
// different masters.
func TestClockJumpCampaign(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	res, err := Run(context.Background(), Config{Base: base, Seed: 1, Runs: 2000, Workers: 2, Kinds: []string{"clock-jump"}, Keep: 1})
	require.NoError(t, err)
	require.Empty(t, res.Errors)
	require.NotEmpty(t, res.Findings)
	assert.Equal(t, []string{checker.KindLockSafety, checker.KindResourceSafety}, res.Checks)
	for _, f := range res.Findings {
		assert.Equal(t, checker.KindLockSafety, f.Kind())
		for _, s := range f.Faults {
			assert.Equal(t, "clock-jump", s.Kind)
		}
	}
	require.NoError(t, ShrinkFindings(context.Background(), base, res, 2, ShrinkOptions{}))
	f := res.Findings[0]
	require.NotNil(t, f.Shrunk)
	r := f.Shrunk
	assert.Len(t, r.After, 3, "%v", specStrings(r.After))
	nodes := map[string]bool{}
	for _, s := range r.After {
		assert.Equal(t, "clock-jump", s.Kind)
		assert.Positive(t, s.By)
		assert.Contains(t, []string{"A", "B", "C", "D", "E"}, s.Node)
		nodes[s.Node] = true
	}
	assert.Len(t, nodes, 3, "three different masters")
	assert.Len(t, r.Removed, len(r.Before)-len(r.After))

	dir := t.TempDir()
	require.NoError(t, WriteFindings(prepareDir(t, dir), base, res))
	require.Equal(t, filepath.Join(dir, "finding-1.yaml"), f.File)
	require.Equal(t, filepath.Join(dir, "finding-1.shrunk.yaml"), f.ShrunkFile)
	for _, path := range []string{f.File, f.ShrunkFile} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		text := string(data)
		assert.True(t, strings.HasPrefix(text, "# simrun fuzz finding 1"), text)
		assert.Contains(t, text, fmt.Sprintf("campaign seed 1, run %d", f.Run))
		assert.Contains(t, text, ReplayCommand(path, f.Seed))
		assert.NotContains(t, text, "why:")
		s, err := scenarios.Load(path)
		require.NoError(t, err)
		assert.Equal(t, f.Seed, s.Seed, "the file's seed is the run seed")
		assert.Equal(t, checker.Violated, s.Expect.Of(checker.LockSafety))
		o, err := scenarios.Run(s, s.Seed, scenarios.Options{})
		require.NoError(t, err)
		assert.True(t, o.Matched, "%s: %s", path, verdictsText(o.Verdicts))
	}
	shrunk, err := os.ReadFile(f.ShrunkFile)
	require.NoError(t, err)
	assert.Contains(t, string(shrunk), "removed faults[")
}

// TestShrinkRedlockAllKinds: with every fault kind, Redlock findings
// shrink to one or two faults, most often a single pause of the holder
// past the ttl. NB: a few need three: a partition cuts the holder off from
// the resource, its write waits for the 5s resource timeout while it still
// believes it holds the lock, and the other faults only shift the timing
// so that the next holder wins within those milliseconds.
func TestShrinkRedlockAllKinds(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	res, err := Run(context.Background(), Config{Base: base, Seed: 1, Runs: 200, Workers: 2, Keep: 3})
	require.NoError(t, err)
	require.NotEmpty(t, res.Findings)
	require.NoError(t, ShrinkFindings(context.Background(), base, res, 2, ShrinkOptions{}))
	small, pauses := 0, 0
	for _, f := range res.Findings {
		if !f.Kept {
			assert.Nil(t, f.Shrunk)
			continue
		}
		require.NotNil(t, f.Shrunk, "finding %d", f.Number)
		n := len(f.Shrunk.After)
		assert.LessOrEqual(t, n, 3, "finding %d: %v", f.Number, specStrings(f.Shrunk.After))
		if n <= 2 {
			small++
		}
		if n == 1 && f.Shrunk.After[0].Kind == "pause" && f.Shrunk.After[0].Node == "c1" {
			pauses++
		}
		assert.Equal(t, f.Kind(), f.Shrunk.Kind)
		assert.Equal(t, checker.Violated, Verdict(f.Shrunk.Outcome, f.Kind()))
		assert.LessOrEqual(t, f.Shrunk.DurationAfter, f.Shrunk.DurationBefore)
	}
	assert.GreaterOrEqual(t, small, 2, "findings that shrank to one or two faults")
	assert.GreaterOrEqual(t, pauses, 1, "findings that shrank to one pause of c1")
}

// TestFencedBaselineResourceHolds is a short version of issue 7's second
// acceptance run: INCR tokens and a marking resource keep the resource
// safe under partitions, drops, delays and pauses.
func TestFencedBaselineResourceHolds(t *testing.T) {
	base := builtin(t, "fenced-baseline")
	res, err := Run(context.Background(), Config{Base: base, Seed: 1, Runs: 200, Workers: 2, Kinds: []string{"partition", "drop", "delay", "pause"}})
	require.NoError(t, err)
	assert.Equal(t, []string{checker.KindResourceSafety}, res.Checks)
	assert.Equal(t, 200, res.Runs)
	assert.Empty(t, res.Errors)
	assert.Empty(t, res.Findings, findingsText(res))
}

// TestCampaignStops: a campaign bounded by its context stops starting
// runs, and the runs it reports are the first ones.
func TestCampaignStops(t *testing.T) {
	base := builtin(t, "redlock-clock-jump")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	res, err := Run(ctx, Config{Base: base, Seed: 1, Workers: 2, Progress: func(p Progress) {
		calls++
		assert.Equal(t, calls, p.Runs)
		if p.Runs == 40 {
			cancel()
		}
	}})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Runs, 40)
	assert.Less(t, res.Runs, 40+10)
	for _, f := range res.Findings {
		assert.Less(t, f.Run, res.Runs)
	}
	// The same runs as an unbounded campaign of that many runs.
	again, err := Run(context.Background(), Config{Base: base, Seed: 1, Runs: res.Runs, Workers: 1})
	require.NoError(t, err)
	assert.Equal(t, findingsText(again), findingsText(res))
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{name: "defaults", cfg: Config{Base: builtin(t, "redlock-clock-jump"), Runs: 1}},
		{name: "promote without replica", cfg: Config{Base: builtin(t, "redlock-clock-jump"), Kinds: []string{"promote"}}, err: "--faults: fault kind promote needs a Redis replica"},
		{name: "promote with replica", cfg: Config{Base: builtin(t, "single-failover"), Kinds: []string{"promote", "crash"}}},
		{name: "unknown kind", cfg: Config{Base: builtin(t, "redlock-clock-jump"), Kinds: []string{"flood"}}, err: `--faults: unknown fault kind "flood"`},
		{name: "negative runs", cfg: Config{Base: builtin(t, "redlock-clock-jump"), Runs: -1}, err: "--runs must not be negative"},
		{name: "negative workers", cfg: Config{Base: builtin(t, "redlock-clock-jump"), Workers: -2}, err: "--workers must be at least 1"},
		{name: "no checks", cfg: Config{Base: builtin(t, "redlock-clock-jump"), Checks: []string{}}, err: "--check: no property"},
		{name: "no base", cfg: Config{}, err: "no base scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			err := Prepare(&cfg)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Positive(t, cfg.Workers)
			assert.Equal(t, DefaultKeep, cfg.Keep)
			assert.NotEmpty(t, cfg.Kinds)
			assert.NotEmpty(t, cfg.Checks)
		})
	}
}

func TestDefaultChecks(t *testing.T) {
	tests := []struct {
		name   string
		expect scenarios.Expect
		want   []string
	}{
		{name: "nothing expected: both safety properties", want: []string{checker.KindLockSafety, checker.KindResourceSafety}},
		{name: "only a violation expected (redlock-clock-jump)", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "violated"}}, want: []string{checker.KindLockSafety, checker.KindResourceSafety}},
		{name: "resource holds (fenced-baseline)", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.ResourceSafety: "holds"}}, want: []string{checker.KindResourceSafety}},
		{name: "lock violated, resource holds (single-gc-pause-fenced)", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "violated", checker.ResourceSafety: "holds"}}, want: []string{checker.KindResourceSafety}},
		{name: "lock holds (redlock-crash-fsync-always)", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.LockSafety: "holds"}}, want: []string{checker.KindLockSafety}},
		{name: "liveness holds is not checked by default", expect: scenarios.Expect{Verdicts: map[string]checker.Verdict{checker.Liveness: "holds"}}, want: []string{checker.KindLockSafety, checker.KindResourceSafety}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DefaultChecks(tt.expect))
		})
	}
}

func TestParseChecks(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "lock", want: []string{checker.KindLockSafety}},
		{in: "liveness, resource,lock", want: []string{checker.KindLockSafety, checker.KindResourceSafety, checker.KindLiveness}},
		{in: "resource-safety,resource", want: []string{checker.KindResourceSafety}},
		{in: "lock,speed", err: `unknown property "speed"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseChecks(tt.in)
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

func TestViolated(t *testing.T) {
	o := &scenarios.Outcome{Verdicts: checker.VerdictsFrom(map[string]checker.Verdict{checker.LockSafety: checker.Violated, checker.ResourceSafety: checker.Unknown, checker.Liveness: checker.Violated})}
	v, inc := Violated(o, []string{checker.KindResourceSafety, checker.KindLockSafety})
	assert.Equal(t, []string{checker.KindLockSafety}, v)
	assert.True(t, inc)
	v, inc = Violated(o, []string{checker.KindLiveness})
	assert.Equal(t, []string{checker.KindLiveness}, v)
	assert.False(t, inc)
}

// TestMaxFaultsFindingReadsBack: a finding of the largest schedule fuzz
// may draw (faults.MaxFaultsLimit faults) reads back as a scenario for every
// catalogue scenario, and a larger --max-faults is refused (issue 33 item
// 5: --max-faults 30000 wrote a finding of 8,106 faults that run and
// replay refused).
func TestMaxFaultsFindingReadsBack(t *testing.T) {
	rcj, err := scenarios.Builtin("redlock-clock-jump")
	require.NoError(t, err)
	cfg := Config{Base: rcj, Runs: 1, MaxFaults: faults.MaxFaultsLimit + 1}
	err = Prepare(&cfg)
	require.EqualError(t, err, fmt.Sprintf("--max-faults must be at most %d, got %d (a finding holds its schedule, and a larger one could not be read back)", faults.MaxFaultsLimit, faults.MaxFaultsLimit+1))

	names := scenarios.BuiltinNames()
	if testing.Short() {
		names = []string{"redlock-clock-jump", "sentinel-failover-default-timings"}
	}
	for _, name := range names {
		base, err := scenarios.Builtin(name)
		require.NoError(t, err)
		w := WorldOf(base)
		var longest []faults.Spec
		for seed := uint64(1); seed <= 8; seed++ {
			if _, specs := Schedule(w, seed, nil, faults.MaxFaultsLimit); len(specs) > len(longest) {
				longest = specs
			}
		}
		if len(longest) == 0 {
			continue // no fault kind applies
		}
		require.Greater(t, len(longest), faults.MaxFaultsLimit/2, name)
		v, err := Variant(base, longest, []string{"lock-safety"}, 1, "t", "s")
		require.NoError(t, err, name)
		file, err := FileBytes(v, []string{"header"})
		require.NoError(t, err, name)
		_, err = scenarios.Parse(name+".yaml", file)
		require.NoError(t, err, "%s: a finding of %d faults", name, len(longest))
	}
}

// TestRunErrorOf: a budget stop is said as such, never as an internal
// error (issue 33 item 2: fuzz and sweep showed a memory-budget stop as
// "internal error").
func TestRunErrorOf(t *testing.T) {
	for _, err := range []error{&sim.ErrMemory{Budget: 1 << 20}, &sim.ErrBudget{Budget: 5}, &sim.ErrWork{Budget: 1 << 30}, fmt.Errorf("point 0: %w", &sim.ErrWork{Budget: 1 << 30})} {
		assert.True(t, strings.HasPrefix(RunErrorOf(err).Error(), "run stopped: "), "%v", err)
	}
	assert.Equal(t, "internal error: boom", RunErrorOf(errors.New("boom")).Error())
}
