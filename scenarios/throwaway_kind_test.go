package scenarios

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// This file walks through docs/design/extending.md's "Adding a node kind" with a
// throwaway kind that exists in this test only: a node (toyNode, standing
// for its own package), a kind declared with its section, accessor and
// lane role, and one registration line. Nothing else in the tree knows it,
// yet the scenario format reads, validates, lists, targets and builds it.

// toyNode stands for the node package: a server that answers nothing.
type toyNode struct{}

func (toyNode) Init(*sim.Env)                             {}
func (toyNode) Receive(*sim.Env, sim.ProcID, sim.Message) {}
func (toyNode) Fire(*sim.Env, any)                        {}

// ToySpec is one toy server.
type ToySpec struct {
	Name  string
	Clock ClockSpec
}

const toySection = "toykv"

const roleToy Role = "toykv"

var toyKind = &ProcKind{
	Name: "toykv", Section: toySection, What: "a toy server",
	read: func(r *reader, top *obj, s *Scenario) {
		var out []ToySpec
		for i, n := range top.list(toySection) {
			path := fmt.Sprintf("toykv[%d]", i)
			sp := ToySpec{}
			o := r.mapping(n, path)
			o.str("name", &sp.Name)
			sp.Clock = r.clock(o, path)
			o.done()
			out = append(out, sp)
		}
		setSection(s, toySection, out)
	},
	procs: func(s *Scenario) []Proc {
		var out []Proc
		for i, t := range toys(s) {
			out = append(out, Proc{Name: t.Name, Path: fmt.Sprintf("toykv[%d].name", i), Clock: t.Clock, Role: roleToy, Note: "toy"})
		}
		return out
	},
	build: func(b *builder) error {
		for _, t := range toys(b.s) {
			if err := b.add(t.Name, t.Clock, func() sim.Process { return toyNode{} }); err != nil {
				return err
			}
		}
		return nil
	},
}

// toys is the kind's typed accessor.
func toys(s *Scenario) []ToySpec { return sectionOf[[]ToySpec](s, toySection) }

// registerToy is the one registration line (before storage), undone when
// the test ends.
func registerToy(t *testing.T) {
	saved := kinds
	kinds = append(append(append([]*ProcKind(nil), saved[:len(saved)-1]...), toyKind), saved[len(saved)-1])
	t.Cleanup(func() { kinds = saved })
}

const toyWorld = `name: toy
duration: 5s
redis:
  - name: A
toykv:
  - name: K1
  - name: K2
    clock: {offset: 1s}
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 2s}
    workload: {start: 0s, cycles: 1, hold: 1s}
`

func TestThrowawayKind(t *testing.T) {
	// Without the registration line the section is an unknown field.
	_, err := Parse("toy.yaml", []byte(toyWorld))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "toykv")

	registerToy(t)
	s, err := Parse("toy.yaml", []byte(toyWorld))
	require.NoError(t, err)
	assert.Equal(t, []ToySpec{{Name: "K1"}, {Name: "K2", Clock: ClockSpec{Offset: 1e9}}}, toys(s))
	assert.Equal(t, []string{"A", "K1", "K2", "storage", "c1"}, s.Processes())
	var roles []Role
	for _, p := range s.ServersOf(toyKind) {
		assert.Same(t, toyKind, p.Kind)
		roles = append(roles, p.Role)
	}
	assert.Equal(t, []Role{roleToy, roleToy}, roles)

	w, err := Build(s, 1, false)
	require.NoError(t, err)
	_, ok := w.Kernel.Lookup("K2")
	require.True(t, ok)
	out, err := Run(s, 1, Options{})
	require.NoError(t, err)
	assert.NotEmpty(t, out.TraceHash)

	tests := []struct {
		name, yaml, want string
	}{
		{"duplicate name across kinds", "toykv:\n  - name: A\n", "toy.yaml:6: toykv[0].name: name \"A\" is already used by a Redis server"},
		{"unknown field", "toykv:\n  - name: K\n    port: 1\n", "toykv[0].port"},
		{"fault target", "toykv:\n  - name: K\nfaults: [{at: 1s, kind: pause, node: Z, for: 1s}]\n", "faults[0].node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: toy\nduration: 5s\nredis:\n  - name: A\n" + tt.yaml
			_, err := Parse("toy.yaml", []byte(src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// A fault may target a toy server.
	_, err = Parse("toy.yaml", []byte(toyWorld+"faults: [{at: 1s, kind: pause, node: K1, for: 1s}]\n"))
	require.NoError(t, err)
}
