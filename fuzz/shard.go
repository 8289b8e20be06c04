package fuzz

import (
	"github.com/locksim/locksim/internal/outdir"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/bounded"
	"github.com/locksim/locksim/scenarios"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Shard is part K of N of a campaign (--shard K/N), K counted from 0 as a
// Kubernetes Indexed Job counts its completion indexes
// (JOB_COMPLETION_INDEX, kubernetes.io/docs/concepts/workloads/controllers/job,
// "Completion mode").
type Shard struct {
	K, N int
}

// Whole is the campaign unsharded.
var Whole = Shard{K: 0, N: 1}

// ParseShard parses "K/N" with 0 <= K < N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("want K/N (shard K of N, K from 0 to N-1, e.g. 0/4), got %q", s)
	case n < 1:
		return Shard{}, fmt.Errorf("N must be at least 1, got %q", s)
	case k < 0 || k >= n:
		return Shard{}, fmt.Errorf("K must be from 0 to %d (K counts from 0, as a Kubernetes completion index), got %q", n-1, s)
	}
	return Shard{K: k, N: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Range returns the run numbers [first, end) of shard s in a campaign of
// total runs: contiguous blocks, K×total/N to (K+1)×total/N, so the N
// shards partition the runs whatever N is, and each run keeps the run
// number (hence the run seed, RunSeed) it has in the whole campaign.
func (s Shard) Range(total int) (first, end int) {
	return int(int64(s.K) * int64(total) / int64(s.N)), int(int64(s.K+1) * int64(total) / int64(s.N))
}

// ManifestFile is the file in which a campaign (or a shard of one) records
// its identity and results, beside what it writes; simrun merge reads it.
const ManifestFile = "campaign.json"

// ManifestFormat names the manifest's format; merge refuses others.
const ManifestFormat = "locksim-campaign/1"

// Identity is what makes two shards parts of the same campaign: the
// command, the simrun version, the base scenario (name and SHA-256 of its
// canonical YAML), the campaign seed, the total runs, and every parameter
// that changes what runs (as "name=value" strings, in a fixed order).
type Identity struct {
	Command  string   `json:"command"`
	Version  string   `json:"version"`
	Base     string   `json:"base"`
	BaseHash string   `json:"base_sha256"`
	Seed     uint64   `json:"seed"`
	Total    int      `json:"total_runs"`
	Params   []string `json:"params"`
}

// Key is the identity as one comparable string.
func (id Identity) Key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d|%d|%s", id.Command, id.Version, id.Base, id.BaseHash, id.Seed, id.Total, strings.Join(id.Params, ";"))
}

// Describe names the identity for messages.
func (id Identity) Describe() string {
	return fmt.Sprintf("%s of %s (sha256 %.12s), seed %d, %d runs, %s, version %s", id.Command, id.Base, id.BaseHash, id.Seed, id.Total, strings.Join(id.Params, " "), id.Version)
}

// Hash returns the SHA-256 of data in hex (a base scenario's identity).
func Hash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// Manifest is the content of campaign.json.
type Manifest struct {
	Format string `json:"format"`
	Identity
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// First and End are the shard's planned runs [First, End); Done the
	// runs done, First..First+Done-1 (fewer than planned when the shard was
	// interrupted).
	First       int  `json:"first_run"`
	End         int  `json:"end_run"`
	Done        int  `json:"runs_done"`
	Interrupted bool `json:"interrupted,omitempty"`
	// Results is the command's own record of the runs (FuzzRecord,
	// VerdictRecord).
	Results json.RawMessage `json:"results"`
}

// Complete reports whether the shard did all its planned runs.
func (m *Manifest) Complete() bool { return !m.Interrupted && m.Done == m.End-m.First }

// MaxManifestBytes bounds a campaign manifest (campaign.json): it holds a
// short record per run, megabytes for a million runs.
const MaxManifestBytes = 512 << 20

// ReadManifest reads dir/campaign.json; the error names the file.
func ReadManifest(dir string) (*Manifest, error) {
	if err := outdir.CheckComplete(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ManifestFile)
	data, err := bounded.ReadFile(path, "a campaign manifest", MaxManifestBytes)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: no %s: not the output folder of a campaign or shard (simrun fuzz, explore, sweep or matrix --out)", dir, ManifestFile)
		}
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not a campaign manifest: %v", path, err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, m.Format, ManifestFormat)
	}
	if m.Shards < 1 || m.Shard < 0 || m.Shard >= m.Shards || m.Total < 0 {
		return nil, fmt.Errorf("%s: shard %d/%d of %d runs is not a shard", path, m.Shard, m.Shards, m.Total)
	}
	if f, e := (Shard{m.Shard, m.Shards}).Range(m.Total); f != m.First || e != m.End {
		return nil, fmt.Errorf("%s: shard %d/%d of %d runs should cover runs %d..%d, says %d..%d", path, m.Shard, m.Shards, m.Total, f, e-1, m.First, m.End-1)
	}
	return &m, nil
}

// CheckSet checks that manifests (read from dirs, in the same order) are
// the shards of one campaign, each exactly once, each complete. The error
// names the folders of a foreign campaign, the duplicated, missing and
// incomplete shards.
func CheckSet(dirs []string, ms []*Manifest) error {
	if len(ms) == 0 {
		return fmt.Errorf("no shard folders given")
	}
	var problems []string
	first := ms[0]
	for i, m := range ms[1:] {
		if m.Key() != first.Key() || m.Shards != first.Shards {
			problems = append(problems, fmt.Sprintf("%s belongs to another campaign than %s:\n    %s: %s, %d shards\n    %s: %s, %d shards",
				dirs[i+1], dirs[0], dirs[0], first.Describe(), first.Shards, dirs[i+1], m.Describe(), m.Shards))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("mixed campaigns: %s", strings.Join(problems, "; "))
	}
	seen := map[int][]string{}
	for i, m := range ms {
		seen[m.Shard] = append(seen[m.Shard], dirs[i])
		if !m.Complete() {
			problems = append(problems, fmt.Sprintf("shard %d/%d in %s is incomplete: %d of its %d runs done (interrupted: run it again)", m.Shard, m.Shards, dirs[i], m.Done, m.End-m.First))
		}
	}
	var missing []string
	for k := 0; k < first.Shards; k++ {
		switch d := seen[k]; {
		case len(d) == 0:
			f, e := (Shard{k, first.Shards}).Range(first.Total)
			missing = append(missing, fmt.Sprintf("%d/%d (runs %d..%d)", k, first.Shards, f, e-1))
		case len(d) > 1:
			problems = append(problems, fmt.Sprintf("shard %d/%d given %d times: %s", k, first.Shards, len(d), strings.Join(d, ", ")))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "missing shards: "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// Encode returns m with results as the bytes of campaign.json.
func (m *Manifest) Encode(results any) ([]byte, error) {
	m.Format = ManifestFormat
	data, err := json.Marshal(results)
	if err != nil {
		return nil, err
	}
	m.Results = data
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Verdict codes of VerdictRecord: one letter per verdict.
const verdictLetters = "hvun-"

// VerdictRecord is the results of a sweep or matrix shard: three letters
// per run (lock safety, resource safety, liveness), h holds, v violated,
// u unknown, n not judged, - none; runs in order from First. Three bytes a
// run keep a million-run shard's manifest at 3 MB.
type VerdictRecord struct {
	Verdicts string     `json:"verdicts"`
	Errors   []RunError `json:"errors,omitempty"`
	// Numbers are the runs' numbers (RunNumbers), one triple a run in the
	// order of Verdicts: grants, median acquisition latency in
	// nanoseconds (-1: no acquisition), unavailable time in nanoseconds.
	// Absent in manifests written before the numbers were kept: such
	// runs have no numbers.
	Numbers [][3]int64 `json:"numbers,omitempty"`
}

// Verdicts is one run's three verdicts, as sweep and matrix keep them,
// and the numbers they aggregate.
type Verdicts struct {
	Lock, Resource, Liveness checker.Verdict
	Numbers                  RunNumbers
}

// RunNumbers are the numbers of one run that sweep and matrix aggregate
// per point or cell (issue 25): a subset of checker.Stats.
type RunNumbers struct {
	// Known is false for a run whose numbers were not recorded (a
	// manifest written before they were kept).
	Known  bool
	Grants int
	// LatencyP50 is the median acquisition latency, HasLatency false
	// when no wait ended with the lock.
	LatencyP50  time.Duration
	HasLatency  bool
	Unavailable time.Duration
}

// NumbersOf is the numbers of st that sweep and matrix keep.
func NumbersOf(st checker.Stats) RunNumbers {
	return RunNumbers{Known: true, Grants: st.Grants, LatencyP50: st.Latency.P50, HasLatency: st.Latency.Count > 0, Unavailable: st.Unavailable}
}

// verdictsOf is the verdicts of o that sweep and matrix keep.
func verdictsOf(o *scenarios.Outcome) Verdicts {
	v := Verdicts{Lock: o.Verdicts.Of(checker.LockSafety), Resource: o.Verdicts.Of(checker.ResourceSafety), Liveness: o.Verdicts.Of(checker.Liveness)}
	if o.Stats != nil {
		v.Numbers = NumbersOf(*o.Stats)
	}
	return v
}

// RecordOf is the record of runs a shard's manifest keeps: their
// verdicts and, when every run has them, their numbers.
func RecordOf(runs []Verdicts) VerdictRecord {
	rec := VerdictRecord{Verdicts: EncodeVerdicts(runs)}
	nums := make([][3]int64, 0, len(runs))
	for _, r := range runs {
		if !r.Numbers.Known {
			return rec
		}
		p50 := int64(-1)
		if r.Numbers.HasLatency {
			p50 = int64(r.Numbers.LatencyP50)
		}
		nums = append(nums, [3]int64{int64(r.Numbers.Grants), p50, int64(r.Numbers.Unavailable)})
	}
	if len(nums) > 0 {
		rec.Numbers = nums
	}
	return rec
}

// Decode parses the record of n runs: their verdicts, and their numbers
// when the record has them.
func (r VerdictRecord) Decode(n int) ([]Verdicts, error) {
	out, err := DecodeVerdicts(r.Verdicts, n)
	if err != nil {
		return nil, err
	}
	if r.Numbers == nil {
		return out, nil
	}
	if len(r.Numbers) != n {
		return nil, fmt.Errorf("%d runs' numbers for %d runs", len(r.Numbers), n)
	}
	for i, t := range r.Numbers {
		if t[0] < 0 || t[1] < -1 || t[2] < 0 {
			return nil, fmt.Errorf("run %d: numbers %v: grants, latency and unavailable time cannot be negative", i, t)
		}
		out[i].Numbers = RunNumbers{Known: true, Grants: int(t[0]), HasLatency: t[1] >= 0, Unavailable: time.Duration(t[2])}
		if t[1] >= 0 {
			out[i].Numbers.LatencyP50 = time.Duration(t[1])
		}
	}
	return out, nil
}

// Violated reports whether any verdict is a violation.
func (v Verdicts) Violated() bool {
	return v.Lock == checker.Violated || v.Resource == checker.Violated || v.Liveness == checker.Violated
}

var verdictOrder = []checker.Verdict{checker.Holds, checker.Violated, checker.Unknown, checker.NotJudged, ""}

func verdictLetter(v checker.Verdict) byte {
	for i, w := range verdictOrder {
		if v == w {
			return verdictLetters[i]
		}
	}
	return '-'
}

// EncodeVerdicts renders runs as VerdictRecord.Verdicts.
func EncodeVerdicts(runs []Verdicts) string {
	b := make([]byte, 0, 3*len(runs))
	for _, r := range runs {
		b = append(b, verdictLetter(r.Lock), verdictLetter(r.Resource), verdictLetter(r.Liveness))
	}
	return string(b)
}

// DecodeVerdicts parses VerdictRecord.Verdicts; n is the expected run count.
func DecodeVerdicts(s string, n int) ([]Verdicts, error) {
	if len(s) != 3*n {
		return nil, fmt.Errorf("%d verdict letters for %d runs, want %d", len(s), n, 3*n)
	}
	out := make([]Verdicts, n)
	for i := range out {
		var v [3]checker.Verdict
		for j := 0; j < 3; j++ {
			k := strings.IndexByte(verdictLetters, s[3*i+j])
			if k < 0 {
				return nil, fmt.Errorf("run %d: verdict letter %q is none of %q", i, s[3*i+j], verdictLetters)
			}
			v[j] = verdictOrder[k]
		}
		out[i] = Verdicts{Lock: v[0], Resource: v[1], Liveness: v[2]}
	}
	return out, nil
}
