// Package exit carries a command's exit code out of the code that decides
// it (DESIGN.md, "Command line"): 0 the verdicts match; 1 they do not; 2
// bad input (flags, files, names); 3 inconclusive (a checker timeout) or an
// internal error; 130 (143) interrupted by SIGINT (SIGTERM).
package exit

import (
	"errors"
	"fmt"
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
