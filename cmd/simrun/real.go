package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/campaign"
	"github.com/locksim/locksim/realmode"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/scenarios"
)

func init() { extraCommands = append(extraCommands, newRealCmd, newTwinCmd) }

func newRealCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "real NAME|FILE",
		Short: "Run a scenario against real Redis, Sentinel, memcached, MariaDB and ZooKeeper processes",
		Long: `Run a scenario in real mode: locksim's own lock clients and storage service,
driven in real time, against real redis-server, redis-sentinel, memcached,
mariadbd and ZooKeeper (java) processes that simrun starts on addresses of 127.0.0.0/8 in a private temporary
directory and stops by PID on every exit (Ctrl-C too). Faults: pauses
(SIGSTOP/SIGCONT), crashes (SIGKILL, or SHUTDOWN for mode clean) and restarts
on the same data directory, power loss where it equals a kill, server clocks
through a preload library, client clocks directly, partitions, cuts and delays
through a fault-injecting proxy, promote (REPLICAOF NO ONE). A scenario that
needs more (Chubby's lock-delay, power loss with appendfsync everysec, drops
between two servers) is refused with exit 2 naming the fault and why.

Needs the scenario's servers (redis-server and redis-sentinel, memcached,
mariadb-server, zookeeper with a Java runtime) and, for server clocks, a C
compiler.`,
		Args: exactArgs(1, "NAME|FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return realScenario(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of the run (default: the scenario's seed)")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print one JSON object (with \"mode\": \"real\") instead of the summary")
	cmd.Flags().StringVar(&f.outDir, "out", "", "write the report (result.json, trace, checker visualizations) into this folder")
	cmd.Flags().IntVar(&f.events, "events", locksim.DefaultKeyEvents, "most key events the summary prints (0: all)")
	return cmd
}

// interruptible returns a context that Ctrl-C (SIGINT) or SIGTERM ends, so
// that real mode stops its servers before simrun exits with the signal's
// exit code (130, 143), as every command does.
func interruptible() (context.Context, func()) {
	ctx, _, stop := campaign.Interruptible(context.Background())
	return ctx, stop
}

// cleanStale removes the servers, mounts and temporary folders that real
// runs killed by SIGKILL left, and names them on stderr: the first thing
// real and twin do.
func cleanStale(stderr io.Writer) {
	done, err := realmode.CleanStale()
	for _, d := range done {
		fmt.Fprintf(stderr, "simrun: removed what a killed real run left: %s\n", d)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun: warning: %v\n", err)
	}
}

// realBeforeStart is realmode.Options.BeforeStart of every real run
// (nil; tests set it to take a server's port before it starts).
var realBeforeStart func(name, addr string)

// realOutcome runs s once in real mode and maps real mode's errors to exit
// codes.
func realOutcome(ctx context.Context, s *scenarios.Scenario, seed uint64, outDir string) (*scenarios.Outcome, error) {
	o, err := realmode.Run(ctx, s, seed, realmode.Options{Visualize: outDir != "", BeforeStart: realBeforeStart})
	if err != nil {
		return nil, realError(ctx, s, err)
	}
	return o, nil
}

// realError maps real mode's errors to exit codes: 2 when real mode cannot
// run the scenario here, 130 or 143 when a signal interrupted it (ctx is
// interruptible's), 3 when broken.
func realError(ctx context.Context, s *scenarios.Scenario, err error) error {
	var ue *realmode.UnsupportedError
	switch {
	case errors.As(err, &ue), errors.Is(err, realmode.ErrMissingBinary), errors.Is(err, realmode.ErrStart):
		return withCode(exitBadInput, err)
	case errors.Is(err, realmode.ErrInterrupted):
		if ie := campaign.InterruptError(ctx, err.Error()); ie != nil {
			return ie
		}
		return withCode(exitInconclusive, err)
	}
	return withCode(exitInconclusive, fmt.Errorf("internal error in the real run of %s: %w", s.Name, err))
}

func realScenario(stdout, stderr io.Writer, arg string, f runFlags) error {
	cleanStale(stderr)
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	seed := s.Seed
	if f.seedSet {
		seed = f.seed
	}
	if f.outDir != "" {
		if fileExists(filepath.Join(f.outDir, fuzz.ManifestFile)) {
			return badInput("--out: %s holds a campaign's results (%s): give another folder", f.outDir, fuzz.ManifestFile)
		}
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--out: %w", err))
		}
	}
	ctx, stop := interruptible()
	defer stop()
	o, err := realOutcome(ctx, s, seed, f.outDir)
	if err != nil {
		return err
	}
	if f.outDir != "" {
		if err := realmode.WriteOutputs(f.outDir, o); err != nil {
			return withCode(exitBadInput, fmt.Errorf("--out: %w", err))
		}
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(record.InMode{Mode: "real", Run: o}); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		fmt.Fprintln(stdout, "mode: real (real servers on loopback, in real time)")
		events := f.events
		if events == 0 {
			events = -1 // --events 0: all of them
		}
		locksim.ResultOf(o, events).WriteSummary(stdout, traceWhere(f))
		fmt.Fprintln(stdout, "NB: a real run is not replayable bit for bit (real time, real servers); the replay line above runs the simulator")
	}
	return outcomeCode(o)
}
