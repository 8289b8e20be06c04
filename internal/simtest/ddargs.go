package simtest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Args reads the arguments of one datadriven step strictly: every argument
// must be consumed by the step, so that a typo (a misspelt key, a stray
// word) fails loudly at its file:line instead of being ignored. Call Done
// after reading.
//
// A step's arguments are words: "key=value" (one value), "key=(a, b)"
// (several), or a bare "word" (a positional argument, read in order with
// Pos or Rest).
type Args struct {
	t    testing.TB
	td   *datadriven.TestData
	used []bool
}

// NewArgs starts reading td's arguments.
func NewArgs(t testing.TB, td *datadriven.TestData) *Args {
	return &Args{t: t, td: td, used: make([]bool, len(td.CmdArgs))}
}

// Fatalf fails the test at the step's file:line.
func (a *Args) Fatalf(format string, args ...any) {
	a.t.Helper()
	a.td.Fatalf(a.t, "%s: %s", a.td.Cmd, fmt.Sprintf(format, args...))
}

// find returns the index of the keyed argument, or -1.
func (a *Args) find(key string) int {
	for i, c := range a.td.CmdArgs {
		if c.Key == key && len(c.Vals) > 0 {
			return i
		}
	}
	return -1
}

// Has reports whether key=... was given (without consuming it).
func (a *Args) Has(key string) bool { return a.find(key) >= 0 }

// Vals returns the values of key=... (nil when absent) and consumes it.
func (a *Args) Vals(key string) []string {
	i := a.find(key)
	if i < 0 {
		return nil
	}
	a.used[i] = true
	return a.td.CmdArgs[i].Vals
}

// String returns key's single value, or def when absent.
func (a *Args) String(key, def string) string {
	a.t.Helper()
	v := a.Vals(key)
	switch len(v) {
	case 0:
		return def
	case 1:
		return v[0]
	}
	a.Fatalf("%s takes one value, got %d (%s)", key, len(v), strings.Join(v, ", "))
	return ""
}

// Required returns key's single value; its absence fails the step.
func (a *Args) Required(key string) string {
	a.t.Helper()
	if !a.Has(key) {
		a.Fatalf("missing %s=...", key)
	}
	return a.String(key, "")
}

// OneOf returns key's value, def when absent, and fails unless it is one of
// allowed.
func (a *Args) OneOf(key, def string, allowed ...string) string {
	a.t.Helper()
	v := a.String(key, def)
	for _, x := range allowed {
		if v == x {
			return v
		}
	}
	a.Fatalf("%s=%s: unknown value (allowed: %s)", key, v, strings.Join(allowed, ", "))
	return ""
}

// Duration returns key's value as a Go duration ("1.5s", "-20s"), or def.
func (a *Args) Duration(key string, def time.Duration) time.Duration {
	a.t.Helper()
	if !a.Has(key) {
		return def
	}
	return a.ParseDuration(key, a.String(key, ""))
}

// ParseDuration parses s as a Go duration for the argument named what.
func (a *Args) ParseDuration(what, s string) time.Duration {
	a.t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		a.Fatalf("%s: %q is not a duration (like 1s, 250ms, -20s)", what, s)
	}
	return d
}

// Int returns key's value as an integer, or def.
func (a *Args) Int(key string, def int) int {
	a.t.Helper()
	if !a.Has(key) {
		return def
	}
	s := a.String(key, "")
	n, err := strconv.Atoi(s)
	if err != nil {
		a.Fatalf("%s: %q is not an integer", key, s)
	}
	return n
}

// Keys returns the keys of the key=value arguments not consumed yet, in the
// order given (without consuming them).
func (a *Args) Keys() []string {
	var out []string
	for i, c := range a.td.CmdArgs {
		if !a.used[i] && len(c.Vals) > 0 {
			out = append(out, c.Key)
		}
	}
	return out
}

// Bool returns whether the bare word flag was given (and consumes it).
func (a *Args) Bool(flag string) bool {
	for i, c := range a.td.CmdArgs {
		if !a.used[i] && c.Key == flag && len(c.Vals) == 0 {
			a.used[i] = true
			return true
		}
	}
	return false
}

// Pos returns the next positional (bare) argument; its absence fails the
// step with what names it.
func (a *Args) Pos(what string) string {
	a.t.Helper()
	for i, c := range a.td.CmdArgs {
		if !a.used[i] && len(c.Vals) == 0 {
			a.used[i] = true
			return c.Key
		}
	}
	a.Fatalf("missing %s", what)
	return ""
}

// Rest returns the positional arguments not consumed yet.
func (a *Args) Rest() []string {
	var out []string
	for i, c := range a.td.CmdArgs {
		if !a.used[i] && len(c.Vals) == 0 {
			a.used[i] = true
			out = append(out, c.Key)
		}
	}
	return out
}

// Done fails the step if an argument was not consumed.
func (a *Args) Done() {
	a.t.Helper()
	var left []string
	for i, c := range a.td.CmdArgs {
		if !a.used[i] {
			left = append(left, c.String())
		}
	}
	if len(left) > 0 {
		a.Fatalf("unexpected arguments: %s", strings.Join(left, " "))
	}
}

// NoInput fails the step if it has input lines.
func (a *Args) NoInput() {
	a.t.Helper()
	if strings.TrimSpace(a.td.Input) != "" {
		a.Fatalf("takes no input lines")
	}
}

// Unknown fails the step for a command the test does not know, naming the
// ones it does.
func Unknown(t testing.TB, td *datadriven.TestData, known ...string) {
	t.Helper()
	sort.Strings(known)
	td.Fatalf(t, "unknown command %q (known: %s)", td.Cmd, strings.Join(known, ", "))
}

// Words splits a line into words at blanks; a word in double quotes may
// hold blanks and Go escapes ("a b", "\n").
func Words(line string) ([]string, error) {
	var out []string
	s := strings.TrimSpace(line)
	for s != "" {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("bad quoted word in %q: %v", line, err)
			}
			w, _ := strconv.Unquote(q)
			out = append(out, w)
			s = strings.TrimLeft(s[len(q):], " \t")
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = strings.TrimLeft(s[i:], " \t")
	}
	return out, nil
}

// Failure runs fn with a testing.TB whose Fatalf (and so a step's Args
// failure, or td.Fatalf) stops fn and is returned as the message instead of
// failing t; "" when fn did not fail. It lets a test check that a step
// file's mistakes are refused, and with which words.
func Failure(t *testing.T, fn func(tb testing.TB)) (msg string) {
	f := &fatalTB{T: t}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatalStop); !ok {
				panic(r)
			}
			msg = f.msg
		}
	}()
	fn(f)
	return ""
}

// fatalTB records a step's failure instead of ending the test.
type fatalTB struct {
	*testing.T
	msg string
}

type fatalStop struct{}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(fatalStop{})
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(fatalStop{})
}

// LineFailure reads the request line words with read, as a conversation
// step at f.txt:1 would, and returns the failure it raised ("" if none):
// for tests that a package's request grammar refuses a mistake loudly.
func LineFailure(t *testing.T, words string, read func(a *Args, words []string)) string {
	ws, err := Words(words)
	if err != nil {
		t.Fatalf("%q: %v", words, err)
	}
	td := &datadriven.TestData{Pos: "f.txt:1", Cmd: "do"}
	return Failure(t, func(tb testing.TB) { read(NewArgs(tb, td), ws) })
}
