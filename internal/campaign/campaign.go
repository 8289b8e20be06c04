package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"

	"encoding/json"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
)

// Package campaign is what simrun's campaigns (fuzz, sweep, matrix) and
// merge share: the output folder of a campaign, its manifest
// (campaign.json, the campaign's identity and results, which simrun merge
// reads), a shard's runs on the worker pool, the progress bar and Ctrl-C.

// Interruptible returns a context that the first SIGINT (Ctrl-C) or
// SIGTERM (a Kubernetes pod being stopped) cancels, so that a campaign
// stops starting runs, finishes the ones under way and writes what it
// found; a second signal kills the process as usual. The context's cause
// (context.Cause) is then an *Interrupt naming the signal, from which
// InterruptError takes the exit code (130, 143). interrupted tells whether
// a signal came; stop releases the signal handler.
func Interruptible(parent context.Context) (ctx context.Context, interrupted func() bool, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs) // the next signal terminates
			cancel(&Interrupt{Signal: sig})
		case <-quit:
		}
	}()
	var once sync.Once
	return ctx, func() bool {
			var in *Interrupt
			return errors.As(context.Cause(ctx), &in)
		}, func() {
			once.Do(func() {
				signal.Stop(sigs)
				close(quit)
			})
		}
}

// Interrupt is the cause of an Interruptible context cancelled by a
// signal.
type Interrupt struct{ Signal os.Signal }

func (in *Interrupt) Error() string { return "interrupted by " + SignalName(in.Signal) }

// Code is the exit code of a process the signal ended, 128 + its number
// (the shell's convention): 130 for SIGINT, 143 for SIGTERM.
func (in *Interrupt) Code() int {
	if s, ok := in.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exit.Interrupted
}

// SignalName is SIGINT or SIGTERM (the name a user sends).
func SignalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// InterruptError is nil when ctx was not interrupted by a signal; else an
// error with the signal's exit code (130, 143) saying "interrupted by
// SIG...: " and what (what the campaign wrote).
func InterruptError(ctx context.Context, what string) error {
	var in *Interrupt
	if !errors.As(context.Cause(ctx), &in) {
		return nil
	}
	return exit.With(in.Code(), fmt.Errorf("%v: %s", in, what))
}

// Same reports whether a folder's manifest is of the campaign id
// (and the same shard): its results may be replaced without --force. The
// total may differ (a --time campaign does as many runs as it can).
func Same(m *fuzz.Manifest, id fuzz.Identity, shard fuzz.Shard) bool {
	return m.Command == id.Command && m.Base == id.Base && m.BaseHash == id.BaseHash && m.Seed == id.Seed &&
		strings.Join(m.Params, ";") == strings.Join(id.Params, ";") && m.Shard == shard.K && m.Shards == shard.N
}

// ClaimMergedOut claims --out (path) for the whole campaign a merge of
// shards writes, fuzz's or explore's: nil without a path (a nil
// *outdir.Dir closes as a no-op).
func ClaimMergedOut(path string, id fuzz.Identity, force bool) (*outdir.Dir, error) {
	if path == "" {
		return nil, nil
	}
	return ClaimOut("--out", path, id, fuzz.Whole, force, fuzz.FindingPatterns...)
}

// ClaimOut prepares the output folder of a campaign. A folder holding the
// results of another campaign (another base, seed, parameters or shard,
// per its campaign.json; or result files without a campaign.json), a
// run's report (result.json), or the incomplete outputs of another
// stopped campaign (outdir.IncompleteFile) is refused unless force: a
// second campaign must never overwrite the findings of a first one or
// leave a mix of both. With force, the other campaign's files are removed
// when this one's are written (replaceOthers). Files matching patterns
// that this run does not write are removed after it writes (removeStale).
func ClaimOut(flag, path string, id fuzz.Identity, shard fuzz.Shard, force bool, patterns ...string) (*outdir.Dir, error) {
	return claim(flag, path, id, shard, force, false, patterns)
}

// ClaimRegenerated is ClaimOut for a campaign whose outputs are
// regenerated whole (sweep, matrix): an earlier campaign of the same
// command in path is replaced without force; another command's is not.
func ClaimRegenerated(flag, path string, id fuzz.Identity, shard fuzz.Shard, force bool) (*outdir.Dir, error) {
	return claim(flag, path, id, shard, force, true, fuzz.FindingPatterns)
}

func claim(flag, path string, id fuzz.Identity, shard fuzz.Shard, force, sameCommand bool, patterns []string) (*outdir.Dir, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: required", flag)
	}
	what := fmt.Sprintf("simrun %s, shard %s", id.Describe(), shard)
	other := false // path holds another campaign's files, replaced with force
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		switch w, incomplete := outdir.Incomplete(path); {
		case incomplete && w != what:
			if !force {
				return nil, fmt.Errorf("%s %s holds the incomplete outputs of a stopped run (%s): give another folder, or --force to replace them", flag, path, w)
			}
			other = true
		case incomplete: // this campaign, stopped: written again whole
		case exists(filepath.Join(path, fuzz.ManifestFile)):
			m, err := fuzz.ReadManifest(path)
			if err != nil {
				if !force {
					return nil, fmt.Errorf("%s: %v; give another folder, or --force to replace it", flag, err)
				}
				other = true
			} else if !Same(m, id, shard) && !(sameCommand && m.Command == id.Command) {
				if !force {
					return nil, fmt.Errorf("%s %s holds the results of another campaign (%s, shard %d/%d); this one is %s, shard %s: give another folder, or --force to replace them", flag, path, m.Describe(), m.Shard, m.Shards, id.Describe(), shard)
				}
				other = true
			}
		case exists(filepath.Join(path, runResultFile)):
			if !force {
				return nil, fmt.Errorf("%s %s holds a run's report (%s): give another folder, or --force to replace it", flag, path, runResultFile)
			}
			other = true
		default:
			for _, p := range patterns {
				if names, _ := filepath.Glob(filepath.Join(path, p)); len(names) > 0 {
					if !force {
						return nil, fmt.Errorf("%s %s holds %s of an earlier campaign without its %s: give another folder, or --force to replace them", flag, path, filepath.Base(names[0]), fuzz.ManifestFile)
					}
					other = true
				}
			}
		}
	}
	d, err := outdir.Claim(path, what)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	if other {
		d.OnComplete(func() error { return replaceOthers(d, id.Command) })
	}
	return d, nil
}

// runResultFile is the record a run's report folder holds (simrun run
// --out, real --out).
const runResultFile = "result.json"

// campaignFiles are the files of every campaign command's folder, and
// campaignDirs its sub-folders, by the command that writes them.
var (
	campaignFiles = []string{"finding-*.yaml", "sweep.png", "sweep.svg", "sweep.csv",
		"matrix.png", "matrix.svg", "matrix.csv", "matrix.md", "matrix.html",
		fuzz.BaseFile, fuzz.ManifestFile}
	campaignDirs = map[string]string{"points": "sweep", "worlds": "matrix", "cases": "matrix"}
)

// replaceOthers removes, once a campaign of command has written its files
// into d (with --force over another's), every other campaign file and
// sub-folder, and a run's report, that it did not write: the folder then
// holds this campaign's set alone.
func replaceOthers(d *outdir.Dir, command string) error {
	names := append(append([]string(nil), campaignFiles...), runResultFile, "trace.jsonl")
	names = append(append(names, reports.RunFiles...), checker.PageNames...)
	if err := d.RemoveStale(names...); err != nil {
		return err
	}
	for sub, owner := range campaignDirs {
		if owner != command {
			if err := os.RemoveAll(filepath.Join(d.Path(), sub)); err != nil {
				return err
			}
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// WriteShard writes a shard's campaign.json and base.yaml into d, the
// folder marked incomplete in between (outdir.Claim).
func WriteShard(d *outdir.Dir, m *fuzz.Manifest, base []byte, results any) error {
	if err := d.Begin(); err != nil {
		return err
	}
	if err := WriteManifest(d, m, base, results); err != nil {
		return err
	}
	return d.Complete()
}

// WriteManifest writes the campaign's campaign.json and base.yaml into d.
func WriteManifest(d *outdir.Dir, m *fuzz.Manifest, base []byte, results any) error {
	data, err := m.Encode(results)
	if err != nil {
		return err
	}
	if base != nil {
		if err := d.WriteFile(fuzz.BaseFile, base); err != nil {
			return err
		}
	}
	return d.WriteFile(fuzz.ManifestFile, data)
}

// ParseShard parses --shard (empty: the whole campaign).
func ParseShard(s string) (fuzz.Shard, error) {
	if s == "" {
		return fuzz.Whole, nil
	}
	sh, err := fuzz.ParseShard(s)
	if err != nil {
		return sh, exit.BadInputf("--shard: %v", err)
	}
	return sh, nil
}

// Version is the version recorded in a campaign's identity: shards
// of different simrun builds are not merged, since a change to the model or
// the generator changes what a seed does. It is set, the version given at
// build time (simrun's -ldflags -X main.version), else the module version, followed by
// the VCS revision when the build recorded one (go build with -buildvcs).
func Version(set string) string {
	v := set
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v == "" || v == "dev" {
		v = bi.Main.Version
	}
	for _, st := range bi.Settings {
		switch {
		case st.Key == "vcs.revision":
			v += " " + st.Value
		case st.Key == "vcs.modified" && st.Value == "true":
			v += "+modified"
		}
	}
	return v
}

// RunVerdicts runs job for the run numbers [first, end) on the worker pool
// (fuzz.Each) and returns their verdicts in run order and the runs that
// failed; done < end-first when ctx was cancelled.
func RunVerdicts(ctx context.Context, first, end, workers int, prog *Progress, job func(run int) (fuzz.Verdicts, error)) (verdicts []fuzz.Verdicts, errs []fuzz.RunError, done int) {
	type result struct {
		v   fuzz.Verdicts
		err error
	}
	verdicts = make([]fuzz.Verdicts, end-first)
	done = fuzz.Each(ctx, first, end, workers, func(run int) result {
		v, err := job(run)
		return result{v, err}
	}, func(run int, r result) {
		verdicts[run-first] = r.v
		if r.err != nil {
			errs = append(errs, fuzz.RunError{RunRef: fuzz.RunRef{Run: run}, Err: fuzz.RunErrorOf(r.err).Error()})
		}
		prog.Add()
	})
	sort.Slice(errs, func(i, j int) bool { return errs[i].Run < errs[j].Run })
	return verdicts[:done], errs, done
}

// JoinVerdicts concatenates the verdict records of a complete shard set
// (checked by fuzz.CheckSet) in run order.
func JoinVerdicts(dirs []string, ms []*fuzz.Manifest) ([]fuzz.Verdicts, error) {
	recs, err := DecodeResults[fuzz.VerdictRecord](dirs, ms)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ms[order[a]].First < ms[order[b]].First })
	var out []fuzz.Verdicts
	for _, i := range order {
		if len(recs[i].Errors) > 0 {
			return nil, exit.BadInputf("%s: run %d failed in this shard: %s", dirs[i], recs[i].Errors[0].Run, recs[i].Errors[0].Err)
		}
		v, err := recs[i].Decode(ms[i].Done)
		if err != nil {
			return nil, exit.BadInputf("%s: %v", filepath.Join(dirs[i], fuzz.ManifestFile), err)
		}
		out = append(out, v...)
	}
	return out, nil
}

// RunShard runs a verdict campaign's share of total runs (the runs of
// shard, the whole campaign when it is not sharded) on workers, with a
// progress bar labelled what, and returns the verdicts by run and the
// shard's manifest. An internal error of any run is exit 3 and returns no
// manifest. An interrupt (SIGINT, SIGTERM) returns the verdicts of the
// runs done (a prefix of the shard's), a manifest marked Interrupted, and
// the error to end with (exit 130, 143) once the caller wrote what it
// can (Stopped).
func RunShard(stderr io.Writer, what string, id fuzz.Identity, shard fuzz.Shard, total, workers int, quiet bool,
	job func(run int) (fuzz.Verdicts, error)) ([]fuzz.Verdicts, *fuzz.Manifest, error) {
	ctx, interrupted, stop := Interruptible(context.Background())
	defer stop()
	first, end := shard.Range(total)
	label := what
	if shard.N > 1 {
		label += " shard " + shard.String()
	}
	prog := NewProgress(stderr, end-first, label, quiet)
	verdicts, errs, done := RunVerdicts(ctx, first, end, workers, prog, job)
	prog.Done()
	if len(errs) > 0 {
		// The error says whether a budget stopped the run or something
		// went wrong inside locksim (fuzz.RunErrorOf; issue 33: a budget
		// stop was shown as an internal error).
		return nil, nil, exit.With(exit.Inconclusive, fmt.Errorf("run %d: %s", errs[0].Run, errs[0].Err))
	}
	m := &fuzz.Manifest{Identity: id, Shard: shard.K, Shards: shard.N, First: first, End: end, Done: done}
	if interrupted() {
		m.Interrupted = true
		return verdicts, m, InterruptError(ctx, fmt.Sprintf("stopped after %d of %d runs", done, end-first))
	}
	return verdicts, m, nil
}

// Stopped is the error an interrupted campaign ends with after writing:
// the interrupt's (exit 130, 143), saying what was written.
func Stopped(interrupt error, wrote string) error {
	return exit.With(exit.CodeOf(interrupt), fmt.Errorf("%v; %s", interrupt, wrote))
}

// DropIfEmpty removes d's folder when it is empty (a campaign interrupted
// before it had anything to write created it): an interrupted campaign
// leaves the previous --out as it was, never an empty one.
func DropIfEmpty(d *outdir.Dir) {
	if entries, err := os.ReadDir(d.Path()); err == nil && len(entries) == 0 {
		_ = os.Remove(d.Path())
	}
}

// DecodeResults decodes each shard's results into a T, in the order of ms.
func DecodeResults[T any](dirs []string, ms []*fuzz.Manifest) ([]T, error) {
	out := make([]T, len(ms))
	for i, m := range ms {
		if err := json.Unmarshal(m.Results, &out[i]); err != nil {
			return nil, exit.BadInputf("%s: results: %v", filepath.Join(dirs[i], fuzz.ManifestFile), err)
		}
	}
	return out, nil
}

// WholeManifest is the manifest of the whole campaign a set of shards
// makes.
func WholeManifest(id fuzz.Identity) *fuzz.Manifest {
	return &fuzz.Manifest{Identity: id, Shard: 0, Shards: 1, First: 0, End: id.Total, Done: id.Total}
}

// ReadBase reads a campaign's base.yaml from dir and checks it against the
// identity's hash.
func ReadBase(dir string, id fuzz.Identity) (*scenarios.Scenario, []byte, error) {
	path := filepath.Join(dir, fuzz.BaseFile)
	data, err := scenarios.ReadFile(path)
	if err != nil {
		return nil, nil, exit.BadInputf("%s: %v", dir, err)
	}
	if h := fuzz.Hash(data); h != id.BaseHash {
		return nil, nil, exit.BadInputf("%s: its SHA-256 %.12s is not the campaign's %.12s (edited after the campaign?)", path, h, id.BaseHash)
	}
	s, err := scenarios.Parse(path, data)
	if err != nil {
		return nil, nil, exit.BadInputf("%v", err)
	}
	return s, data, nil
}
