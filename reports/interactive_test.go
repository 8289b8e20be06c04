package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// chromium returns the headless browser's path; under CI=true a missing
// one fails the test, elsewhere it skips loudly.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install chromium; .ci/run installs it): the interactive report cannot be tested")
	}
	t.Log("SKIPPING: chromium is not installed (apt-get install chromium): the interactive report's rendering is not tested")
	t.Skip("chromium missing")
	return ""
}

// TestInteractiveTimelineRenders loads a run's index.html in headless
// Chromium and checks the DOM its script built: one circle.ev per event in
// the first view, each with its text; the faults and the violation
// windows as bands.
func TestInteractiveTimelineRenders(t *testing.T) {
	bin := chromium(t)
	run, _ := runOf(t, "redlock-clock-jump")
	files, err := RenderRun(run)
	require.NoError(t, err)
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	require.NoError(t, os.WriteFile(page, files["index.html"], 0o644))
	assert.NotContains(t, string(files["index.html"]), "<script src", "self-contained: no script is fetched")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1400,1000", "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	dom := string(out)

	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	want := 0
	var acquired sim.Event
	for _, e := range run.Trace[:min(len(run.Trace), MaxInteractiveEvents)] {
		if e.At <= tl.View {
			want++
			if e.Kind == "acquired" && e.Proc == "c2" && acquired.Kind == "" {
				acquired = e
			}
		}
	}
	require.NotZero(t, want)
	evs := regexp.MustCompile(`<circle [^>]*class="ev"[^>]*data-text="([^"]*)"`).FindAllStringSubmatch(dom, -1)
	assert.Len(t, evs, want, "one element per event in the first view")
	require.NotEmpty(t, acquired.Kind)
	found := false
	for _, m := range evs {
		if strings.Contains(m[1], fmt.Sprintf("c2 acquired: %s", acquired.Text)) {
			found = true
		}
	}
	assert.True(t, found, "c2's acquired event is drawn with its text")
	assert.Regexp(t, `class="fault" data-kind="group"`, dom, "the partition sides are fault bands")
	assert.Regexp(t, `class="violation" data-kind="`+checker.KindLockSafety+`"`, dom, "the lock-safety window is a band")
	assert.Contains(t, dom, "events drawn")

	// The availability strip: one row per lock under the lanes, a bar
	// per bin in which the lock stood free while someone waited.
	av := run.Result.Stats.Availability
	require.NotNil(t, av)
	bars := 0
	for b, d := range av.Locks[0].Unavailable {
		if d > 0 && sim.Time(time.Duration(b)*av.Bin) <= tl.View {
			bars++
		}
	}
	assert.Contains(t, dom, av.Locks[0].Lock+" free, waited")
	assert.Equal(t, bars, strings.Count(dom, `class="avail" data-lock="`+av.Locks[0].Lock+`"`), "one bar per bin with unavailable time")
}

// TestInteractiveTimelineCarriesAvailability: the page's data has the
// run's availability strip (checker.Availability), bins and all, for the
// script to draw under the lanes.
func TestInteractiveTimelineCarriesAvailability(t *testing.T) {
	run, _ := runOf(t, "redlock-clock-jump")
	av := run.Result.Stats.Availability
	require.NotNil(t, av, "redlock-clock-jump has a client waiting while the lock is free")
	files, err := RenderRun(run)
	require.NoError(t, err)
	want, err := json.Marshal(av)
	require.NoError(t, err)
	assert.Contains(t, string(files["index.html"]), `"avail":`+string(want))
	assert.Contains(t, string(files["index.html"]), "red strips under the lanes")
}

// TestInteractiveTimelineIsBounded: a long run's page carries at most
// MaxInteractiveEvents events and says how many it left out.
func TestInteractiveTimelineIsBounded(t *testing.T) {
	run, _ := runOf(t, "redlock-clock-jump")
	long := make([]sim.Event, 0, MaxInteractiveEvents+1234)
	for len(long) < MaxInteractiveEvents+1234 {
		for _, e := range run.Trace {
			if len(long) == cap(long) {
				break
			}
			e.Seq = uint64(len(long) + 1)
			long = append(long, e)
		}
	}
	run.Trace = long
	files, err := RenderRun(run)
	require.NoError(t, err)
	html := string(files["index.html"])
	assert.Contains(t, html, fmt.Sprintf("%d events drawn, 1234 left out", MaxInteractiveEvents))
	assert.Contains(t, html, `"left_out":1234`)
	assert.Equal(t, MaxInteractiveEvents, strings.Count(html, `"seq":`))
}
