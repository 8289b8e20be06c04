package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/realmode"
	"github.com/locksim/locksim/scenarios"
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

Exit codes: 0 every real run gives the simulator's verdicts; 1 some real run
differs (both explanations and both reports' paths are printed); 2 bad input
or a scenario real mode cannot run; 3 inconclusive or internal error.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.runs < 1 {
				return badInput("--runs: %d is not a number of runs (allowed: 1 or more)", f.runs)
			}
			return twinScenario(cmd.OutOrStdout(), args[0], f)
		},
	}
	cmd.Flags().IntVar(&f.runs, "runs", 1, "number of real runs")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the table")
	cmd.Flags().StringVar(&f.outDir, "out", "", "write both reports into this folder (default: a new folder under the system's temporary directory)")
	return cmd
}

func twinScenario(stdout io.Writer, arg string, f twinFlags) error {
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
		return realError(s, err)
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		printTwin(stdout, s, res)
	}
	switch {
	case !res.Agree:
		return withCode(exitMismatch, nil)
	case res.Inconclusive:
		return withCode(exitInconclusive, nil)
	}
	return nil
}

func printTwin(w io.Writer, s *scenarios.Scenario, res *realmode.TwinResult) {
	fmt.Fprintf(w, "%s: %s\n\n", s.Name, s.Title)
	props := locksim.Properties()
	head := fmt.Sprintf("%-18s %-6s ", "run", "seed")
	for _, p := range props {
		head += fmt.Sprintf("%-12s ", p.About().Short)
	}
	fmt.Fprintln(w, head+"agrees")
	row := func(name string, r realmode.TwinRun, agrees string) {
		line := fmt.Sprintf("%-18s %-6d ", name, r.Seed)
		for _, p := range props {
			line += fmt.Sprintf("%-12s ", r.Verdicts.Of(p.About().Name))
		}
		fmt.Fprintln(w, line+agrees)
	}
	row("simulator", res.Simulator, "")
	for i, r := range res.Real {
		a := "yes"
		if !r.Agrees {
			a = "NO"
		}
		row(fmt.Sprintf("real #%d", i+1), r, a)
	}
	fmt.Fprintln(w)
	if res.Agree {
		fmt.Fprintf(w, "every real run gives the simulator's verdicts; reports under %s\n", filepath.Dir(res.Simulator.Report))
		return
	}
	fmt.Fprintln(w, "real mode disagrees with the simulator:")
	fmt.Fprintf(w, "  simulator (report %s):\n    %s\n", res.Simulator.Report, twinText(res.Simulator.Explanation))
	for i, r := range res.Real {
		if !r.Agrees {
			fmt.Fprintf(w, "  real #%d, seed %d (report %s):\n    %s\n", i+1, r.Seed, r.Report, twinText(r.Explanation))
		}
	}
}

func twinText(s string) string {
	if s == "" {
		return "(no violation)"
	}
	return s
}
