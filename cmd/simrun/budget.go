package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/locksim/locksim"
	"github.com/locksim/locksim/sim"
	"github.com/spf13/cobra"
)

// budgetFlags are the --max-events and --max-memory flags that bound every
// run a command makes (DESIGN: no unbounded run).
type budgetFlags struct {
	events int64
	memory string
	work   string
}

func addBudgetFlags(cmd *cobra.Command, b *budgetFlags) {
	cmd.Flags().Int64Var(&b.events, "max-events", sim.DefaultMaxEvents, "event budget of each run, in kernel events (messages delivered, timers fired; not the trace events the summary counts): a run that executes more stops with exit 3")
	cmd.Flags().StringVar(&b.work, "max-work", "", fmt.Sprintf("work budget of each run, in bytes of event content (every message, command and value the run records; e.g. 64GiB; 0 = none): a run that records more stops with exit 3 (default %s)", sim.FormatBytes(sim.DefaultMaxWork)))
	cmd.Flags().StringVar(&b.memory, "max-memory", "", fmt.Sprintf("memory budget of the process (e.g. 512MiB, 8GiB; 0 = none): a run whose heap outgrows it stops with exit 3 "+
		"(default %d%% of the memory this process may use or of 2 GiB, whichever is smaller: %s here)", sim.DefaultBudgetPercent, sim.FormatBytes(sim.DefaultMaxMemory())))
	// The reference states the rule, not this machine's figure.
	_ = cmd.Flags().SetAnnotation("max-memory", docUsageAnnotation, []string{fmt.Sprintf("memory budget of the process (e.g. 512MiB, 8GiB; 0 = none): a run whose heap outgrows it stops with exit 3 "+
		"(default %d%% of the memory this process may use or of 2 GiB, whichever is smaller)", sim.DefaultBudgetPercent)})
}

// apply checks the flags and sets them on opt; bad values are exit 2.
func (b budgetFlags) apply(opt *locksim.Options) error {
	if b.events <= 0 {
		return badInput("--max-events: must be a positive number of events (got %d)", b.events)
	}
	mem := sim.DefaultMaxMemory()
	if b.memory != "" {
		var err error
		if mem, err = sim.ParseBytes(b.memory); err != nil {
			return badInput("--max-memory: %v", err)
		}
	}
	if b.work != "" {
		w, err := sim.ParseBytes(b.work)
		if err != nil {
			return badInput("--max-work: %v", err)
		}
		opt.MaxWork = w
		if w == 0 {
			opt.MaxWork = -1
		}
	}
	opt.MaxEvents = b.events
	if mem == 0 {
		opt.MaxMemory = -1
	} else {
		opt.MaxMemory = mem
	}
	// The garbage collector works harder as the heap nears the budget, so
	// that garbage alone never trips it, and never lets the process grow
	// past the memory it may use (issue 28: under a limit, the runtime's
	// own out-of-memory crash came before the budget). A GOMEMLIMIT the
	// user set wins.
	if os.Getenv("GOMEMLIMIT") == "" {
		if lim := sim.RuntimeMemoryLimit(mem); lim > 0 {
			debug.SetMemoryLimit(lim)
		}
	}
	return nil
}

// budgetError turns a budget stop into exit 3 with the kernel's message
// (which names the budget, what consumed it and the flag that raises it);
// other errors pass through unchanged.
func budgetError(err error) error {
	var be *sim.ErrBudget
	var me *sim.ErrMemory
	var we *sim.ErrWork
	if errors.As(err, &me) && me.Budget == sim.DefaultMaxMemory() {
		return withCode(exitInconclusive, fmt.Errorf("run stopped: %w (the budget was %s)", err, sim.DefaultBudgetNote()))
	}
	if errors.As(err, &be) || errors.As(err, &me) || errors.As(err, &we) {
		return withCode(exitInconclusive, fmt.Errorf("run stopped: %w", err))
	}
	return err
}
