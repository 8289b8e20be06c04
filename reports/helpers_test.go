package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// The tests run real scenarios (scenarios is a test-only import: the
// package itself never imports it) and convert them as cmd/simrun does.

// setupOf converts a scenario into a Setup (a trimmed copy of cmd/simrun's
// reportSetup).
func setupOf(t *testing.T, s *scenarios.Scenario) Setup {
	t.Helper()
	st := Setup{Name: s.Name, Title: s.Title, Source: s.Source, Why: s.Why, File: s.File, Duration: s.Duration}
	clock := func(name string, c scenarios.ClockSpec) {
		if c == (scenarios.ClockSpec{}) {
			return
		}
		ppb, err := sim.RateFromDrift(c.Drift)
		require.NoError(t, err)
		st.Clocks = append(st.Clocks, Clock{Proc: name, Offset: c.Offset, DriftPPB: ppb})
	}
	seen := map[string]bool{}
	for _, c := range s.Clients {
		st.Clients = append(st.Clients, c.Name)
		if !seen[c.Lock.Key] {
			seen[c.Lock.Key] = true
			st.LockKeys = append(st.LockKeys, c.Lock.Key)
		}
		clock(c.Name, c.Clock)
	}
	for _, r := range s.Redis() {
		srv := Server{Name: r.Name, Role: RoleRedis, AOF: r.AppendOnly}
		if r.ReplicaOf != "" {
			srv.Role, srv.Note = RoleReplica, "replica of "+r.ReplicaOf
		}
		st.Servers = append(st.Servers, srv)
		clock(r.Name, r.Clock)
	}
	if sp := s.Sentinel(); sp != nil {
		for _, n := range sp.Names {
			st.Servers = append(st.Servers, Server{Name: n, Role: RoleSentinel, Note: "sentinel"})
		}
	}
	if s.ZK() != nil {
		st.Servers = append(st.Servers, Server{Name: s.ZK().Name, Role: RoleZooKeeper, Note: "zookeeper"})
	}
	st.Servers = append(st.Servers, Server{Name: s.Resource.Name, Role: RoleStorage})
	text, err := s.Marshal()
	require.NoError(t, err)
	st.YAML = string(text)
	return st
}

// runOf runs a built-in scenario (or a scenario text) with its seed and
// returns the report input and the outcome (with its history, to compare
// the reconstruction with).
func runOf(t *testing.T, name string) (*Run, *scenarios.Outcome) {
	t.Helper()
	s, err := scenarios.Builtin(name)
	require.NoError(t, err)
	return runScenario(t, s)
}

func runScenario(t *testing.T, s *scenarios.Scenario) (*Run, *scenarios.Outcome) {
	t.Helper()
	o, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true})
	require.NoError(t, err)
	var res Result
	data, err := json.Marshal(o)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	return &Run{Setup: setupOf(t, s), Result: res, Trace: o.Trace, Command: "simrun run " + s.Name + " --seed 1"}, o
}

// svgTexts parses an SVG document as XML and returns the contents of its
// text elements; it fails the test if the document is not well-formed.
func svgTexts(t *testing.T, svg []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []string
	inText := false
	sawSVG := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is not well-formed XML")
		switch x := tok.(type) {
		case xml.StartElement:
			if x.Name.Local == "svg" {
				sawSVG = true
			}
			inText = x.Name.Local == "text"
		case xml.CharData:
			if inText {
				out = append(out, strings.TrimSpace(string(x)))
			}
		case xml.EndElement:
			inText = false
		}
	}
	require.True(t, sawSVG, "no <svg> element")
	return out
}

// requirePNG decodes a PNG and returns its size.
func requirePNG(t *testing.T, b []byte) (int, int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err, "not a PNG")
	return img.Bounds().Dx(), img.Bounds().Dy()
}
