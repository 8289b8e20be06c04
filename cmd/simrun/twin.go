package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/realmode"
)

type twinFlags struct {
	runs    int
	jsonOut bool
	outDir  string
}

func newTwinCmd() *cobra.Command {
	var f twinFlags
	cmd := &cobra.Command{
		Use:   "twin NAME|FILE",
		Short: "Run a scenario in the simulator and in real mode and compare the verdicts",
		Long: `Run a scenario in the simulator (its seed) and --runs times in real mode (seeds
seed, seed+1, ...), and print the verdicts side by side.

A real run whose verdicts differ from the simulator's is a mismatch (both
explanations and both reports' paths are printed).`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.runs < 1 {
				return badInput("--runs: %d is not a number of runs (allowed: 1 or more)", f.runs)
			}
			return twinScenario(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	cmd.Flags().IntVar(&f.runs, "runs", 1, "number of real runs")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the table")
	cmd.Flags().StringVar(&f.outDir, "out", "", "write both reports into this folder (default: a new folder under the system's temporary directory)")
	return cmd
}

func twinScenario(stdout, stderr io.Writer, arg string, f twinFlags) error {
	cleanStale(stderr)
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	if err := realmode.Check(s); err != nil {
		return withCode(exitBadInput, err)
	}
	out := f.outDir
	if out == "" {
		if out, err = os.MkdirTemp("", "locksim-twin-"+s.Name+"-"); err != nil {
			return withCode(exitInconclusive, err)
		}
	}
	ctx, stop := interruptible()
	defer stop()
	res, err := realmode.TwinWith(ctx, s, f.runs, out, realmode.WriteOutputs, realmode.Options{BeforeStart: realBeforeStart})
	if err != nil {
		return realError(ctx, s, err)
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		realmode.WriteTwin(stdout, s, res)
	}
	switch {
	case !res.Agree:
		return withCode(exitMismatch, nil)
	case res.Inconclusive:
		return withCode(exitInconclusive, nil)
	}
	return nil
}
