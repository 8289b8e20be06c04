// Package exit carries a command's exit code out of the code that decides
// it, and holds the one table of exit codes (Table) that every simrun
// command's help and docs/guide/exit-codes.md print (DESIGN.md, "Command line").
package exit

import (
	"errors"
	"fmt"
	"strings"
)

// Exit codes.
const (
	// OK: the verdicts match the scenario's expect (or no violation when
	// nothing is expected); a campaign found nothing.
	OK = 0
	// Mismatch: the verdicts do not match; a campaign found violations;
	// two recorded runs differ.
	Mismatch = 1
	// BadInput: bad input (flags, files, names, a scenario field), with a
	// message naming the file, line and field.
	BadInput = 2
	// Inconclusive: no verdict (a checker timeout, a budget of events or
	// memory exhausted) or an internal error.
	Inconclusive = 3
	// Interrupted is a campaign stopped by SIGINT (Ctrl-C), after writing
	// what it found; SIGTERM is Terminated (128 + the signal's number).
	Interrupted = 130
	// Terminated: stopped by SIGTERM, after writing what it found.
	Terminated = 143
)

// Code is one row of the table of exit codes.
type Code struct {
	Code    int
	Meaning string
}

// Table is the meaning of every exit code, the same for every simrun
// command: an interrupt is 130 or 143 for every command, real and twin
// included.
var Table = []Code{
	{OK, "success: the verdicts match the scenario's expectations (no violation when it expects none), a campaign found nothing, the runs agree"},
	{Mismatch, "a mismatch: verdicts other than the expected ones, violations found, runs (or real and simulated verdicts) that differ"},
	{BadInput, "bad input: a flag, file, name or bound, an output folder holding something else, a scenario this mode cannot run"},
	{Inconclusive, "inconclusive: a checker timeout, a budget (events, memory, time) exhausted, or an internal error"},
	{Interrupted, "interrupted by SIGINT (Ctrl-C): servers stopped, outputs written so far are whole or marked incomplete"},
	{Terminated, "stopped by SIGTERM: as for SIGINT"},
}

// Help is the table as a command's help prints it.
func Help() string {
	var b strings.Builder
	b.WriteString("Exit codes (the same for every simrun command):\n")
	for _, c := range Table {
		line := fmt.Sprintf("  %-4d", c.Code)
		for _, w := range strings.Fields(c.Meaning) {
			if len(line)+1+len(w) > 79 {
				b.WriteString(line + "\n")
				line = "      "
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Markdown is the table as docs/guide/exit-codes.md holds it.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, c := range Table {
		fmt.Fprintf(&b, "| %d | %s |\n", c.Code, c.Meaning)
	}
	return b.String()
}

// Error is an error with the exit code it stands for (Err may be nil: the
// code alone, nothing to print).
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// BadInputf is exit 2 with a message.
func BadInputf(format string, args ...any) error {
	return &Error{Code: BadInput, Err: fmt.Errorf(format, args...)}
}

// With is err with the exit code code.
func With(code int, err error) error { return &Error{Code: code, Err: err} }

// CodeOf is the exit code an error stands for: its own, OK for nil,
// Inconclusive for an error without a code.
func CodeOf(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Inconclusive
}
