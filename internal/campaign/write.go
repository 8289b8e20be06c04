package campaign

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
)

// Write is what fuzz, merge and explore do with a campaign's
// result before they print it: shrink the findings (when asked), write them,
// the manifest and the JUnit file, and remove the previous campaign's
// findings from the folder.
func Write(stderr io.Writer, ctx context.Context, d *outdir.Dir, base *scenarios.Scenario, baseYAML []byte, cfg fuzz.Config, res *fuzz.Result, m *fuzz.Manifest, shrink bool, junit string) error {
	return write(stderr, ctx, d, base, baseYAML, cfg, res, m, func() any { return fuzz.Record(cfg, res) }, shrink, junit)
}

// write is Write with the manifest's record of the results (record is
// called after the findings are written).
func write(stderr io.Writer, ctx context.Context, d *outdir.Dir, base *scenarios.Scenario, baseYAML []byte, cfg fuzz.Config, res *fuzz.Result, m *fuzz.Manifest, record func() any, shrink bool, junit string) error {
	if shrink && len(res.Findings) > 0 {
		fmt.Fprintln(stderr, "shrinking the written findings...")
		if err := fuzz.ShrinkFindings(ctx, base, res, cfg.Workers, fuzz.ShrinkOptions{}); err != nil {
			return exit.With(exit.Inconclusive, fmt.Errorf("internal error while shrinking: %w", err))
		}
	}
	if d != nil {
		if err := d.Begin(); err != nil {
			return exit.With(exit.BadInput, fmt.Errorf("--out: %w", err))
		}
		if err := fuzz.WriteFindings(d, base, res); err != nil {
			return exit.With(exit.BadInput, fmt.Errorf("--out: %w", err))
		}
		if err := WriteManifest(d, m, baseYAML, record()); err != nil {
			return exit.With(exit.BadInput, fmt.Errorf("--out: %w", err))
		}
		if err := d.RemoveStale(fuzz.FindingPatterns...); err != nil {
			return exit.With(exit.BadInput, fmt.Errorf("--out: %w", err))
		}
		if err := d.Complete(); err != nil {
			return exit.With(exit.BadInput, fmt.Errorf("--out: %w", err))
		}
	}
	if junit != "" {
		var buf bytes.Buffer
		err := fuzz.WriteJUnit(&buf, res)
		if err == nil {
			err = outdir.WriteFileAtomic(junit, buf.Bytes())
		}
		if err != nil {
			return exit.With(exit.BadInput, fmt.Errorf("--junit: %w", err))
		}
	}
	return nil
}

// FinishFuzz writes and prints a whole campaign's result (simrun fuzz
// without --shard, and simrun merge of fuzz shards): shrinks the kept
// findings when asked, writes the finding files, campaign.json and
// base.yaml into d (removing finding files of an earlier run), the JUnit
// report, and prints the summary or JSON; its error carries fuzz's exit
// code.
func FinishFuzz(stdout, stderr io.Writer, ctx context.Context, d *outdir.Dir, base *scenarios.Scenario, baseYAML []byte, cfg fuzz.Config, res *fuzz.Result, m *fuzz.Manifest, shrink, jsonOut bool, junit string) error {
	if err := Write(stderr, ctx, d, base, baseYAML, cfg, res, m, shrink, junit); err != nil {
		return err
	}
	if jsonOut {
		if err := fuzz.WriteJSON(stdout, res); err != nil {
			return exit.With(exit.Inconclusive, err)
		}
	} else {
		fuzz.WriteSummary(stdout, res)
	}
	if err := InterruptError(ctx, Wrote(fmt.Sprintf("%d runs", res.Runs), res, d, junit)); err != nil {
		return err
	}
	switch {
	case len(res.Findings) > 0:
		return exit.With(exit.Mismatch, nil)
	case len(res.Errors) > 0 || len(res.Inconclusive) > 0:
		return exit.With(exit.Inconclusive, nil)
	}
	return nil
}

// Wrote says what an interrupted campaign wrote before it stopped
// (the exit 130, 143 message).
func Wrote(done string, res *fuzz.Result, d *outdir.Dir, junit string) string {
	msg := "stopped after " + done
	if d != nil {
		msg += fmt.Sprintf("; wrote the findings so far (%d violating runs) and %s in %s", len(res.Findings), fuzz.ManifestFile, d.Path())
	}
	if junit != "" {
		msg += "; the JUnit report in " + junit
	}
	return msg
}
