// Command simrun runs locksim scenarios: list the catalogue, run a named
// scenario or a scenario file, replay a recorded result.
//
// Exit codes: one table for every command (internal/exit Table), printed
// in every command's help and in docs/guide/exit-codes.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locksim/locksim/internal/buildinfo"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/suggest"
	"github.com/locksim/locksim/internal/termsafe"
)

// Exit codes (internal/exit).
const (
	exitOK           = exit.OK
	exitMismatch     = exit.Mismatch
	exitBadInput     = exit.BadInput
	exitInconclusive = exit.Inconclusive
)

// exitError carries an exit code out of a command.
type exitError = exit.Error

var (
	badInput = exit.BadInputf
	withCode = exit.With
)

// version may be set by the build (-ldflags "-X main.version=..."); when it
// is not, versionString reads the module version and the VCS revision that
// the go command records in the binary (go install, go build in a clone).
var version = ""

// versionString is what simrun version prints: the module version (a tag,
// a pseudo-version, or "(devel)" for a build in a clone), the VCS revision
// and time and whether the tree was modified, and the Go version.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	return buildinfo.Describe("simrun", version, bi, ok)
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "simrun",
		Short: "simrun runs deterministic experiments on distributed locks",
		Long: `simrun runs locksim scenarios: deterministic simulations of Redis,
Redlock, Redisson, ZooKeeper and fencing-token locks under faults (clock jumps,
pauses, crashes, partitions, failovers), and checks lock safety, resource
safety and liveness.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{Code: exitBadInput, Err: fmt.Errorf("%v%s\n\n%s", err, flagSuggestion(cmd, err), cmd.UsageString())}
	})
	root.AddCommand(newVersionCmd(), newListCmd(), newRunCmd(), newReplayCmd())
	for _, f := range extraCommands {
		root.AddCommand(f())
	}
	// Cobra's completion command prints its help and exits 0 for a shell
	// it does not know (simrun completion tcsh): refuse it, exit 2.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				return nil
			}
			c.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					var shells []string
					for _, sc := range cmd.Commands() {
						shells = append(shells, sc.Name())
					}
					return &exitError{Code: exitBadInput, Err: fmt.Errorf("completion: unknown shell %q (known: %s)", args[0], strings.Join(shells, ", "))}
				}
				return nil
			}
		}
	}
	withExitCodes(root)
	return root
}

// withExitCodes makes the help of cmd and of every command under it end
// its text with the one table of exit codes (internal/exit), through the
// help template (inherited by sub-commands), so that the commands' Long
// texts, which the reference docs render, stay free of it.
func withExitCodes(cmd *cobra.Command) {
	cmd.SetHelpTemplate(`{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}` + exit.Help() + `

{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}`)
}

// extraCommands are the commands defined in other files of this package
// (fuzz, shrink, sweep, report, ...), each appended by an init function.
// Cobra lists commands sorted by name, so the order does not matter.
var extraCommands []func() *cobra.Command

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print simrun's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return nil
		},
	}
}

// run executes simrun with args and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	// Everything simrun prints may carry text from a file (a title, a
	// name, a value in an error): control characters in it are escaped,
	// never sent raw to the terminal (issue 33 item 12).
	stdout, stderr = termsafe.NewWriter(stdout), termsafe.NewWriter(stderr)
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.Err != nil && ee.Error() != "" {
			fmt.Fprintln(stderr, "simrun:", ee.Error())
		}
		return ee.Code
	}
	// Errors from cobra itself: unknown command, wrong number of arguments.
	fmt.Fprintln(stderr, "simrun:", err)
	if cmd != nil {
		fmt.Fprintln(stderr)
		fmt.Fprint(stderr, cmd.UsageString())
	}
	return exitBadInput
}

// defaultGCPercent is simrun's garbage-collector setting when GOGC is not
// set. simrun's heap is small and short-lived (a run's world, its history
// and trace), and at Go's default of 100 the collector ran about 90 times a
// second during fuzzing; 400 measured +23% to +29% runs per second for
// 12 to 15 MB more heap (issue 15). The memory budget (--max-memory) sets a
// soft limit too, so the collector still works hard near the budget.
const defaultGCPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// flagSuggestion is "; did you mean --seed?" for an unknown flag close to
// one of cmd's flags (pflag's error: "unknown flag: --sed"), or "".
func flagSuggestion(cmd *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	close := suggest.Closest(name, names)
	if len(close) == 0 {
		return ""
	}
	for i := range close {
		close[i] = "--" + close[i]
	}
	return "; did you mean " + strings.Join(close, " or ") + "?"
}
