package simtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Model is what one package's interaction test adds to the shared steps:
// the steps that configure its world, how the world starts, and its own
// steps once it runs. RunInteractions drives it.
type Model interface {
	// SetupSteps are the commands that configure the world; they must come
	// before every other step.
	SetupSteps() []string
	// Setup handles one setup step.
	Setup(a *Args, td *datadriven.TestData)
	// Start builds and starts the world as configured, at the first step
	// that is not a setup step, and returns the shared steps to run
	// against it and, for a model a test talks to, the conversation (do,
	// send, wait); nil when it has none.
	Start(t testing.TB) (*Steps, *Conversation)
	// Steps are the model's own commands once the world runs.
	Steps() []string
	// Step handles one of them.
	Step(a *Args, td *datadriven.TestData) string
}

// RunInteractions runs every step file under dir (testdata/interactions,
// say) against a fresh Model per file: setup steps first, then the
// conversation's steps, the shared steps and the model's own. An unknown
// command, a setup step after the world started or a leftover argument
// fails at its file:line.
func RunInteractions(t *testing.T, dir string, newModel func(t *testing.T) Model) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		r := &interaction{m: newModel(t)}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string { return r.step(t, td) })
	})
}

// interaction is the state of one step file.
type interaction struct {
	m     Model
	steps *Steps // nil until the world starts
	conv  *Conversation
}

func (r *interaction) step(t testing.TB, td *datadriven.TestData) string {
	a := NewArgs(t, td)
	if slices.Contains(r.m.SetupSteps(), td.Cmd) {
		if r.steps != nil {
			a.Fatalf("a setup step (%s) must come before every other step", strings.Join(r.m.SetupSteps(), ", "))
		}
		r.m.Setup(a, td)
		return ""
	}
	if r.steps == nil {
		r.steps, r.conv = r.m.Start(t)
	}
	if r.conv != nil {
		if out, ok := r.conv.Run(t, td, a); ok {
			return out
		}
	}
	if out, ok := r.steps.Run(t, td, a); ok {
		return out
	}
	if slices.Contains(r.m.Steps(), td.Cmd) {
		return r.m.Step(a, td)
	}
	known := slices.Concat(r.m.SetupSteps(), r.m.Steps(), SharedSteps)
	if r.conv != nil {
		known = append(known, ConversationSteps...)
	}
	Unknown(t, td, known...)
	return ""
}

// NoSteps is embedded by a Model that has no steps of its own.
type NoSteps struct{}

// Steps implements Model.
func (NoSteps) Steps() []string { return nil }

// Step implements Model.
func (NoSteps) Step(*Args, *datadriven.TestData) string { return "" }
