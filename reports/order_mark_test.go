package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TestTimelineOrderMark runs the explore --orders test base
// (fuzz/testdata/order-tie-pause.yaml) with an order fault added: one that
// acts gets a MarkOrder on the lane of the process whose event went
// first, at its instant, labelled with that event, in the static
// timeline (mark, SVG label, legend) and in the interactive data; one
// that moved nothing gets none, and no legend entry.
func TestTimelineOrderMark(t *testing.T) {
	base, err := os.ReadFile("../fuzz/testdata/order-tie-pause.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, fault string
		lane        string // "" when no mark is wanted
		at          sim.Time
		label       string
	}{
		// c1's and c2's SET NX reach A at 1ms; c2's goes first.
		{name: "delivery from c2", fault: "{at: 1ms, kind: order, node: A, from: c2}", lane: "A", at: sim.Time(1e6), label: "first: from c2"},
		// Without from: A's first due event, c1's SET (first already).
		{name: "first already", fault: "{at: 1ms, kind: order, node: A}"},
		// Nothing is due at A at 500ms.
		{name: "nothing due", fault: "{at: 500ms, kind: order, node: A, from: c2}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(string(base), "faults:\n", "faults:\n  - "+tc.fault+"\n", 1)
			s, err := scenarios.Parse("order.yaml", []byte(src))
			require.NoError(t, err)
			run, o := runScenario(t, s)
			require.Len(t, o.History.Faults, 2)
			assert.Equal(t, tc.lane == "", o.History.Faults[0].Ignored, o.History.Faults[0].Text)
			tl, err := BuildTimeline(run)
			require.NoError(t, err)
			var got []string
			for _, l := range tl.Lanes {
				for _, m := range l.Marks {
					if m.Kind == MarkOrder {
						got = append(got, l.Name+" "+m.At.String()+" "+m.Label)
					}
				}
			}
			names := legendTexts(tl)
			img, err := TimelineImage(tl, s.Name)
			require.NoError(t, err)
			texts := strings.Join(svgTexts(t, img.SVG), "\n")
			js, err := interactiveData(tl, run.Trace, nil)
			require.NoError(t, err)
			if tc.lane == "" {
				assert.Empty(t, got, "an order fault that moved nothing draws no mark")
				assert.NotContains(t, names, orderLegend)
				assert.NotContains(t, texts, "first:")
				assert.False(t, strings.Contains(string(js), `"marks"`), "no mark in the interactive data")
				return
			}
			assert.Equal(t, []string{tc.lane + " " + tc.at.String() + " " + tc.label}, got)
			assert.Contains(t, names, orderLegend)
			assert.Contains(t, texts, tc.label)
			assert.True(t, strings.Contains(string(js), `"marks":[{"kind":"order","t":1000000,"label":"first: from c2"}]`), "the interactive data carries the mark on its lane")
		})
	}
}

// TestOrderLabel: the label says which event went first, from the fault
// event's fields.
func TestOrderLabel(t *testing.T) {
	for _, tc := range []struct {
		fields sim.Attrs
		want   string
	}{
		{sim.Attrs{sim.Str("first", "A"), sim.Str("from", "c2")}, "first: from c2"},
		{sim.Attrs{sim.Str("first", "c1"), sim.Str("event", "timer")}, "first: timer"},
		{sim.Attrs{sim.Str("first", "A")}, "first: next event"},
	} {
		assert.Equal(t, tc.want, orderLabel(tc.fields))
	}
}

const orderLegend = "same-instant order: this event went first (order fault)"

func legendTexts(tl *Timeline) []string {
	var out []string
	for _, it := range timelineLegend(tl) {
		out = append(out, it.text)
	}
	return out
}

// TestInteractiveTimelineDrawsOrderMark loads the report of a run with an
// order fault that acted in headless Chromium: the page's script draws
// the mark on the lane whose event went first, with its label.
func TestInteractiveTimelineDrawsOrderMark(t *testing.T) {
	bin := chromium(t)
	base, err := os.ReadFile("../fuzz/testdata/order-tie-pause.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(base), "faults:\n", "faults:\n  - {at: 1ms, kind: order, node: A, from: c2}\n", 1)
	s, err := scenarios.Parse("order.yaml", []byte(src))
	require.NoError(t, err)
	run, _ := runScenario(t, s)
	files, err := RenderRun(run)
	require.NoError(t, err)
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	require.NoError(t, os.WriteFile(page, files["index.html"], 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1400,1000", "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	dom := string(out)
	assert.Equal(t, 1, strings.Count(dom, `class="mark" data-kind="order"`), "one order mark")
	assert.True(t, strings.Contains(dom, `class="mark-label">first: from c2</text>`), "the mark's label is drawn")
	assert.True(t, strings.Contains(dom, "<title>order fault 0.001s: first: from c2</title>"), "the mark's title names it")
}
