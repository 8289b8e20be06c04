package scenarios

import "github.com/locksim/locksim/faults"

// SetStreamSizes sets the piece and retain sizes of streamed runs
// (Options.Stream) and returns the function that restores them.
func SetStreamSizes(piece, retain int) func() {
	p, r := streamPiece, streamRetain
	streamPiece, streamRetain = piece, retain
	return func() { streamPiece, streamRetain = p, r }
}

// WithFaultsYAML is WithFaults through the scenario's YAML tree, the
// reference the direct path is compared with.
func (s *Scenario) WithFaultsYAML(specs []faults.Spec) (*Scenario, error) {
	return s.withFaultsYAML(specs)
}

// WithoutTree returns a copy of s without its YAML tree (built or pending),
// for comparing scenarios made by the two paths.
func WithoutTree(s *Scenario) *Scenario {
	c := *s
	c.Doc, c.pending = nil, nil
	return &c
}

// Pending reports whether s's tree is yet to be built.
func Pending(s *Scenario) bool { return s.Doc == nil && s.pending != nil }
