package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// result is what one simrun invocation produced.
type result struct {
	code           int
	stdout, stderr string
}

// simrun runs the command line in-process.
func simrun(args ...string) result {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// writeFile writes a file into dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// TestRoot checks the root command: help, version, and the exit code and
// stream of each kind of command-line error.
func TestRoot(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		// out and errs must appear on stdout and stderr; quiet is true when
		// stdout must stay empty.
		out   []string
		errs  []string
		quiet bool
	}{
		{name: "no arguments prints help", args: nil, code: exitOK, out: []string{"simrun runs locksim scenarios", "Available Commands:", "run ", "list ", "replay ", "Exit codes"}},
		{name: "help", args: []string{"help"}, code: exitOK, out: []string{"Usage:", "simrun [command]", "version "}},
		{name: "--help", args: []string{"--help"}, code: exitOK, out: []string{"Usage:", "simrun [command]"}},
		{name: "help of a command", args: []string{"help", "run"}, code: exitOK, out: []string{"simrun run NAME|FILE|DIR...", "--seed", "--json", "--trace", "--out", "--check-determinism"}},
		{name: "version", args: []string{"version"}, code: exitOK, out: []string{"simrun ", "github.com/locksim/locksim", "go1."}},
		{name: "version takes no argument", args: []string{"version", "x"}, code: exitBadInput, errs: []string{"simrun:", "Usage:"}, quiet: true},
		{name: "unknown command", args: []string{"frobnicate"}, code: exitBadInput, errs: []string{`unknown command "frobnicate"`, "Usage:", "simrun [command]"}, quiet: true},
		{name: "unknown root flag", args: []string{"--frobnicate"}, code: exitBadInput, errs: []string{"unknown flag: --frobnicate", "Usage:"}, quiet: true},
		{name: "unknown run flag", args: []string{"run", "redlock-clock-jump", "--frobnicate"}, code: exitBadInput, errs: []string{"unknown flag: --frobnicate", "simrun run NAME|FILE"}, quiet: true},
		{name: "bad flag value", args: []string{"run", "redlock-clock-jump", "--seed", "minus-one"}, code: exitBadInput, errs: []string{"--seed", "Usage:"}, quiet: true},
		{name: "run without argument", args: []string{"run"}, code: exitBadInput, errs: []string{"simrun run needs NAME|FILE|DIR (got 0 arguments)", "Usage:"}, quiet: true},
		{name: "run with two unknown names", args: []string{"run", "a", "b"}, code: exitBadInput, errs: []string{`"a" is neither a built-in scenario nor a file`}, quiet: true},
		{name: "replay without argument", args: []string{"replay"}, code: exitBadInput, errs: []string{"simrun replay needs RESULT.json"}, quiet: true},
		{name: "list takes no argument", args: []string{"list", "extra"}, code: exitBadInput, errs: []string{"extra", "simrun list"}, quiet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := simrun(tt.args...)
			assert.Equal(t, tt.code, r.code, "stderr: %s", r.stderr)
			for _, s := range tt.out {
				assert.Contains(t, r.stdout, s)
			}
			for _, s := range tt.errs {
				assert.Contains(t, r.stderr, s)
			}
			if tt.quiet {
				assert.Empty(t, r.stdout)
			}
			if tt.code == exitOK {
				assert.Empty(t, r.stderr)
			}
		})
	}
}

// TestExitError checks how run maps errors to exit codes and messages.
func TestExitError(t *testing.T) {
	assert.Equal(t, "", (&exitError{Code: exitMismatch}).Error())
	e := badInput("field %q is wrong", "x")
	var ee *exitError
	require.ErrorAs(t, e, &ee)
	assert.Equal(t, exitBadInput, ee.Code)
	assert.Equal(t, `field "x" is wrong`, e.Error())
}

// TestCompletionUnknownShell: a shell cobra cannot complete for is bad
// input (exit 2) naming the shells it can, not a help page and exit 0.
func TestCompletionUnknownShell(t *testing.T) {
	r := simrun("completion", "tcsh")
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, `unknown shell "tcsh" (known: bash, fish, powershell, zsh)`)
	r = simrun("completion", "bash")
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, "bash completion")
}

// TestWorkersBounded: every command with --workers refuses a count no
// machine can use (exit 2), as it refuses 0.
func TestWorkersBounded(t *testing.T) {
	for _, args := range [][]string{
		{"fuzz", "redlock-clock-jump", "--runs", "1"},
		{"sweep", "redlock-clock-jump", "--param", "faults[0].by=1s,2s", "--out", "/nonexistent-never-written"},
		{"matrix", "--out", "/nonexistent-never-written"},
		{"explore", "redlock-clock-jump"},
	} {
		for _, n := range []string{"0", "10000"} {
			r := simrun(append(args, "--workers", n)...)
			assert.Equal(t, exitBadInput, r.code, "%v --workers %s: %s", args, n, r.stderr)
			assert.Contains(t, r.stderr, "--workers", "%v --workers %s", args, n)
		}
	}
}

// TestDidYouMeanFlag: a misspelt flag names the flags it is close to
// (--sed is one letter from both --seed and --set).
func TestDidYouMeanFlag(t *testing.T) {
	r := simrun("run", "fenced-baseline", "--seeed", "3")
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "unknown flag: --seeed; did you mean --seed?")
	r = simrun("run", "fenced-baseline", "--sed", "3")
	assert.Equal(t, exitBadInput, r.code)
	assert.Contains(t, r.stderr, "unknown flag: --sed; did you mean --seed or --set?")
}
