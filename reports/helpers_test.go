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
)

// The tests run real scenarios (scenarios is a test-only import: the
// package itself never imports it) and convert them as cmd/simrun does.

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
	o, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true, Describe: true})
	require.NoError(t, err)
	st, err := o.ReportSetup()
	require.NoError(t, err)
	var res Result
	data, err := json.Marshal(o)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	return &Run{Setup: st, Result: res, Trace: o.Trace, Command: "simrun run " + s.Name + " --seed 1"}, o
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
