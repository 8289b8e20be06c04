package reports

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// spansOf returns a lane's spans of a kind as "start..end" strings.
func spansOf(l *Lane, k SpanKind) []string {
	var out []string
	for _, s := range l.Spans {
		if s.Kind == k {
			out = append(out, fmt.Sprintf("%s..%s", s.Start, s.End))
		}
	}
	return out
}

// TestTimelineMatchesHistory checks that the beliefs and critical sections
// reconstructed from the trace are the ones the kernel recorded in the
// history, for every built-in scenario (pauses, crashes, failovers,
// fencing, continuous contention).
func TestTimelineMatchesHistory(t *testing.T) {
	cat, err := scenarios.Catalogue()
	require.NoError(t, err)
	for _, sc := range cat {
		name := sc.Name
		t.Run(name, func(t *testing.T) {
			run, o := runOf(t, name)
			tl, err := BuildTimeline(run)
			require.NoError(t, err)
			for _, c := range run.Setup.Clients {
				lane := tl.Lane(c)
				require.NotNil(t, lane)
				var wantB, wantS []string
				for _, b := range o.History.Beliefs {
					if b.Client == c {
						wantB = append(wantB, fmt.Sprintf("%s..%s", b.Start, b.End))
					}
				}
				for _, s := range o.History.Sections {
					if s.Client == c {
						wantS = append(wantS, s.ReadSent.String())
					}
				}
				sort.Strings(wantB)
				gotB := spansOf(lane, SpanBelief)
				sort.Strings(gotB)
				assert.Equal(t, wantB, gotB, "beliefs of %s", c)
				var gotS []string
				for _, s := range lane.Spans {
					if s.Kind == SpanSection {
						gotS = append(gotS, s.Start.String())
					}
				}
				sort.Strings(wantS)
				sort.Strings(gotS)
				assert.Equal(t, wantS, gotS, "sections of %s", c)
			}
		})
	}
}

// TestTimelineRedlockClockJump checks the server lanes of Kleppmann's
// example: C holds c1's key until its clock jumps (the key is logically
// expired from the jump on, although the expiry cycle deletes it later),
// then c2's; A and B hold c1's key until c1 releases it.
func TestTimelineRedlockClockJump(t *testing.T) {
	run, _ := runOf(t, "redlock-clock-jump")
	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	assert.Equal(t, "c1 c2 A B C D E storage network", laneNames(tl))
	held := func(lane string) []string {
		var out []string
		for _, s := range tl.Lane(lane).Spans {
			if s.Kind == SpanHeld {
				out = append(out, s.Label+" "+s.Start.String()+".."+s.End.String())
			}
		}
		return out
	}
	assert.Equal(t, []string{"c1 0.002s..5.126s"}, held("A"))
	assert.Equal(t, []string{"c1 0.010s..0.212s", "c2 1.101s..6.219s"}, held("C"))
	assert.Equal(t, []string{"c2 1.104s..6.228s"}, held("D"))
	var marks []string
	for _, m := range tl.Lane("C").Marks {
		marks = append(marks, m.Label)
	}
	assert.Equal(t, []string{"clock +30s"}, marks)
	require.Len(t, tl.Shades, 2)
	assert.Equal(t, "lock-safety", tl.Shades[0].Kind)
	// Each window is shaded on the lanes it involves only: the two clients,
	// and the resource for a lost update.
	assert.ElementsMatch(t, []string{"c1", "c2"}, tl.Shades[0].Lanes)
	assert.Equal(t, "resource-safety", tl.Shades[1].Kind)
	assert.ElementsMatch(t, []string{"c1", "c2", "storage"}, tl.Shades[1].Lanes)
	// Both halves of the lost update: each client read 0, then wrote 1.
	reads := func(lane string) []string {
		var out []string
		for _, m := range tl.Lane(lane).Marks {
			if m.Kind == MarkRead {
				out = append(out, m.Label)
			}
		}
		return out
	}
	assert.Equal(t, []string{"r=0"}, reads("c1"))
	assert.Equal(t, []string{"r=0"}, reads("c2"))
	assert.Equal(t, []string{"c1 r=0", "c2 r=0"}, reads("storage"))
	assert.Equal(t, sim.At(7*time.Second), tl.View, "the story ends at 6.2s of 30s")
	var parts []string
	for _, s := range tl.Lane(networkLane).Spans {
		parts = append(parts, fmt.Sprintf("%s row %d", s.Label, s.Row))
	}
	assert.Equal(t, []string{"[c1 A B C] | [D E] row 0", "[c2 C D E] | [A B] row 1"}, parts)
}

// TestTimelineServers checks what servers held across a crash with an
// fsynced AOF (the key comes back from disk), on a ZooKeeper service (the
// holder is the lowest znode's owner) and with fencing (rejected writes).
func TestTimelineServers(t *testing.T) {
	t.Run("fsync always restores the key", func(t *testing.T) {
		run, _ := runOf(t, "redlock-crash-fsync-always")
		tl, err := BuildTimeline(run)
		require.NoError(t, err)
		var labels []string
		for _, s := range tl.Lane("C").Spans {
			if s.Kind == SpanHeld || s.Kind == SpanDown {
				labels = append(labels, s.Label)
			}
		}
		assert.Equal(t, []string{"c1", "c1 (from disk)", "c2", "down"}, labels)
	})
	t.Run("memcached item vanishes at the restart", func(t *testing.T) {
		run, _ := runOf(t, "memcached-add-restart")
		tl, err := BuildTimeline(run)
		require.NoError(t, err)
		var held []string
		var crash sim.Time
		for _, s := range tl.Lane("M").Spans {
			if s.Kind == SpanHeld {
				held = append(held, s.Label+" "+s.Start.String()+".."+s.End.String())
			}
			if s.Kind == SpanDown {
				crash = s.Start
			}
		}
		require.NotZero(t, crash, "M crashes")
		require.Len(t, held, 2, "%v", held)
		assert.Regexp(t, `^c1 0\.00\ds\.\.`+regexp.QuoteMeta(crash.String())+`$`, held[0], "c1's item is gone when M crashes")
		assert.Regexp(t, `^c2 2\.0`, held[1], "c2 stores its item after the restart")
	})
	t.Run("mysql row lock released when the connection dies", func(t *testing.T) {
		run, _ := runOf(t, "mysql-for-update-pause")
		tl, err := BuildTimeline(run)
		require.NoError(t, err)
		var held []string
		for _, s := range tl.Lane("D").Spans {
			if s.Kind == SpanHeld {
				held = append(held, s.Label+" "+s.Start.String()+".."+s.End.String())
			}
		}
		// c1's FOR UPDATE lock from its grant until wait_timeout (10s
		// after its last statement) closes the connection and the
		// rollback frees the row; c2's waiting SELECT ... FOR UPDATE gets
		// it then and holds it to its COMMIT. The lock row's creation
		// (an autocommit INSERT's lock, released at once) is no bar.
		assert.Equal(t, []string{"c1 0.025s..10.025s", "c2 10.025s..12.037s"}, held)
		var marks []string
		for _, m := range tl.Lane("D").Marks {
			marks = append(marks, m.At.String()+" "+m.Label)
		}
		assert.Equal(t, []string{"10.025s c1's connection closed (wait_timeout)"}, marks)
	})
	t.Run("mysql lock row stays after its holder crashes", func(t *testing.T) {
		run, _ := runOf(t, "mysql-insert-lock-no-expiry")
		tl, err := BuildTimeline(run)
		require.NoError(t, err)
		// The committed row is the lock: c1's stays to the end of the run;
		// the row locks of the INSERT and of c2's failed INSERTs are
		// released at once and draw nothing.
		assert.Equal(t, []string{"c1 0.005s..60.000s open"}, heldSpans(tl.Lane("D")))
	})
	t.Run("mysql lock row across a server restart", func(t *testing.T) {
		s, err := scenarios.Parse("restart.yaml", []byte(`
name: mysql-insert-server-restart
duration: 10s
network: {latency: 1ms..3ms}
mysql: [{name: D}]
clients:
  - {name: c1, lock: {algorithm: mysql-insert, node: D, table: locks}, workload: {cycles: 1, hold: 3s}}
  - {name: c2, lock: {algorithm: mysql-insert, node: D, table: locks}, workload: {start: 1s, cycles: 1, hold: 1s, think: 1s}}
faults:
  - {at: 1s, kind: crash, node: D, mode: process, restart_after: 500ms}
`))
		require.NoError(t, err)
		run, _ := runScenario(t, s)
		tl, err := BuildTimeline(run)
		require.NoError(t, err)
		// The crash ends the bar; the committed row comes back from the
		// redo log at the restart (innodb_flush_log_at_trx_commit = 1)
		// until c1's DELETE; then c2's row.
		assert.Equal(t, []string{"c1 0.005s..1.000s", "c1 (from disk) 1.500s..3.020s", "c2 3.642s..4.654s"}, heldSpans(tl.Lane("D")))
	})
	t.Run("zookeeper holder and rejected write", func(t *testing.T) {
		run, _ := runOf(t, "zk-session-expiry-pause-fenced")
		tl, err := BuildTimeline(run)
		require.NoError(t, err)
		var held []string
		for _, s := range tl.Lane("zk").Spans {
			held = append(held, s.Label+" "+s.Start.String()+".."+s.End.String())
		}
		assert.Equal(t, []string{"c1 0.006s..12.000s", "c2 12.000s..14.016s"}, held)
		var marks []string
		for _, m := range tl.Lane("c1").Marks {
			marks = append(marks, m.Label)
		}
		assert.Contains(t, marks, "w=1 rejected")
		assert.Contains(t, marks, "r=0 t=3", "a fenced read shows the token it carried")
		assert.Contains(t, spansOf(tl.Lane("c1"), SpanPause), "0.113s..20.113s")
		assert.Nil(t, tl.Lane(networkLane), "no partition, no network lane")
	})
}

// TestTimelineImage renders Kleppmann's example and checks the SVG's text:
// every lane, the fault labels and the legend.
func TestTimelineImage(t *testing.T) {
	run, _ := runOf(t, "redlock-clock-jump")
	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	img, err := TimelineImage(tl, "redlock-clock-jump")
	require.NoError(t, err)
	w, h := requirePNG(t, img.PNG)
	assert.Equal(t, 1400, w)
	assert.Greater(t, h, 500)
	texts := strings.Join(svgTexts(t, img.SVG), "\n")
	for _, want := range []string{"c1", "c2", "A", "B", "C", "D", "E", "storage", "network", "clock +30s", "true time (s)",
		"[c2 C D E]", "[A B]", "w=1", "believes it holds the lock (colour = client)", "server holds the lock key (colour = holder)",
		"lock safety violated (window)", "resource safety violated (window)", "wall-clock jump",
		"resource read (r=value, t=token)", "r=0", "c2 r=0"} {
		assert.Contains(t, texts, want)
	}
	assert.NotContains(t, texts, "paused", "no pause in this scenario, so none in the legend")
}

// TestRenderRunDeterministic renders the same run twice and a copy of its
// trace: the bytes of every file must be identical.
func TestRenderRunDeterministic(t *testing.T) {
	run, _ := runOf(t, "single-failover")
	a, err := RenderRun(run)
	require.NoError(t, err)
	again := *run
	again.Trace = append([]sim.Event(nil), run.Trace...)
	b, err := RenderRun(&again)
	require.NoError(t, err)
	require.Len(t, a, 5)
	for name := range a {
		assert.Equal(t, a[name], b[name], "%s differs between two renderings", name)
	}
}

// TestIndexHTML checks the page's content and that every name is escaped.
func TestIndexHTML(t *testing.T) {
	// Names cannot carry markup (scenarios reject them; see
	// TestReportEscapesNames for names given to a report anyway); the title
	// is free text.
	s, err := scenarios.Parse("evil.yaml", []byte(`name: evil
title: <script>alert("t")</script>
seed: 1
duration: 10s
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 2s}
    workload: {start: 0s, cycles: 1, hold: 100ms}
faults:
  - at: 1s
    kind: pause
    node: A
    for: 1s
`))
	require.NoError(t, err)
	run, _ := runScenario(t, s)
	files, err := RenderRun(run)
	require.NoError(t, err)
	page := string(files["index.html"])
	assert.NotContains(t, page, "<script>alert")
	assert.Contains(t, page, "&lt;script&gt;")
	for _, want := range []string{"<h2>Verdicts</h2>", "<h2>Key events</h2>", "data:image/svg&#43;xml;base64,", run.Result.TraceHash, "simrun run evil --seed 1", "Also as <a href=\"timeline.png\">", ">token order</td>", `title="holds: the resource never accepted a lower fencing token`,
		// The numbers, and the note that one grant proves no safety.
		"<h2>Numbers</h2>", "<li>grants 1, critical sections completed 1, acquire attempts 1 (0 failed)</li>",
		`<p class="vacuous">Vacuous: lock safety holds over a single grant: no second holder could overlap it</p>`} {
		assert.Contains(t, page, want)
	}
	svgTexts(t, files["timeline.svg"])
	svgTexts(t, files["clocks.svg"])
	requirePNG(t, files["clocks.png"])
}

// TestKeyEventsRelativeTimes: the HTML report's key events show the wall
// clock readings of an expiry as seconds from the run's start, as the
// summary does, not epoch milliseconds.
func TestKeyEventsRelativeTimes(t *testing.T) {
	s, err := scenarios.Parse("expire.yaml", []byte(`name: expire
seed: 1
duration: 10s
redis:
  - name: A
clients:
  - name: c1
    lock: {algorithm: redis-single, node: A, ttl: 2s}
    workload: {start: 0s, cycles: 1, hold: 100ms}
faults:
  - at: 50ms
    kind: pause
    node: c1
    for: 5s
`))
	require.NoError(t, err)
	run, _ := runScenario(t, s)
	files, err := RenderRun(run)
	require.NoError(t, err)
	page := string(files["index.html"])
	require.Contains(t, page, "<td>key-expired</td>")
	assert.Regexp(t, `<td>key-expired</td><td>&#34;lock&#34; deadline=&#43;2\.\d{3}s now=&#43;2\.\d{3}s</td>`, page)
	// Nor in the interactive timeline's event texts (its typed fields keep
	// the readings).
	assert.NotRegexp(t, `"text":"[^"]*=1767\d{9}`, page, "no raw epoch milliseconds")
}

// TestKeyEvents keeps what the summary shows and drops the rest.
func TestKeyEvents(t *testing.T) {
	tr := []sim.Event{
		{Seq: 1, Kind: "loaded", Proc: "A"},
		{Seq: 2, At: 5, Kind: sim.KindSend, Proc: "c1"},
		{Seq: 3, At: 6, Kind: sim.KindAcquired, Proc: "c1", Text: "lock"},
		{Seq: 4, At: 7, Kind: "loaded", Proc: "A"},
	}
	got := KeyEvents(tr)
	require.Len(t, got, 2)
	assert.Equal(t, uint64(3), got[0].Seq)
	assert.Equal(t, uint64(4), got[1].Seq)
}

func TestViewEnd(t *testing.T) {
	tests := []struct {
		name string
		last time.Duration
		end  time.Duration
		want time.Duration
	}{
		{"busy to the end", 55 * time.Second, 60 * time.Second, 60 * time.Second},
		{"story in the first seconds", 6200 * time.Millisecond, 30 * time.Second, 7 * time.Second},
		{"story in the first second", 300 * time.Millisecond, 30 * time.Second, 500 * time.Millisecond},
		{"story in the first 25 s of 90", 25 * time.Second, 90 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &Timeline{End: sim.At(tt.end), Lanes: []*Lane{{Name: "c1", Marks: []Mark{{At: sim.At(tt.last)}}}}}
			assert.Equal(t, sim.At(tt.want), viewEnd(tl))
		})
	}
}

// TestLayoutLabels checks that labels never overlap in a row, that the
// most important ones are placed first, and that those with no room are
// left out.
func TestLayoutLabels(t *testing.T) {
	width := func(s string) vg.Length { return vg.Length(10 * len(s)) }
	labels := []label{
		{x: 0, text: "tok 1", prio: 3},
		{x: 5, text: "crash", prio: 1},
		{x: 10, text: "pause", prio: 1},
		{x: 20, text: "w=1", prio: 2},
		{x: 500, text: "late", prio: 2},
		{x: 995, text: "edge", prio: 1},
	}
	got := layoutLabels(labels, 2, width, 0, 1000)
	var names []string
	for _, p := range got {
		names = append(names, fmt.Sprintf("%s@%v/%d", p.text, p.x0, p.row))
	}
	// crash and pause first; edge ends left of its anchor; w=1 takes no
	// room left, and tok 1 neither.
	assert.Equal(t, []string{"crash@6/0", "pause@11/1", "edge@950/0", "late@501/0"}, names)
	for i, a := range got {
		for _, b := range got[i+1:] {
			if a.row == b.row {
				overlap := a.x0 < b.x0+width(b.text)+labelGap && b.x0 < a.x0+width(a.text)+labelGap
				assert.False(t, overlap, "%s and %s overlap", a.text, b.text)
			}
		}
	}
}

// TestBusyTimeline draws a minute of five servers and three clients under
// every kind of fault and checks that every lane and fault is named.
func TestBusyTimeline(t *testing.T) {
	s, err := scenarios.Parse("busy.yaml", []byte(busyYAML))
	require.NoError(t, err)
	run, _ := runScenario(t, s)
	files, err := RenderRun(run)
	require.NoError(t, err)
	texts := strings.Join(svgTexts(t, files["timeline.svg"]), "\n")
	for _, want := range []string{"c1", "c2", "c3", "A", "B", "C", "D", "E", "storage", "network",
		"pause 12s", "clock +15s", "crash (power)", "restart", "drift +5%", "drop 3 → A", "delay +2s → E",
		"[c1 A B C]", "[c2 c3 D E]", "w=8 rejected", "c2 (from disk)", "tok 16"} {
		assert.Contains(t, texts, want)
	}
	w, _ := requirePNG(t, files["timeline.png"])
	assert.Equal(t, 1400, w)
}

// busyYAML is a minute of five Redlock servers and three fenced clients
// under a pause, a clock jump, a partition, a power loss, a drift change,
// dropped and delayed messages.
const busyYAML = `name: busy
seed: 3
duration: 60s
network:
  latency: 1ms..3ms
redis:
  - name: A
  - name: B
    appendonly: true
  - name: C
  - name: D
  - name: E
clients:
  - name: c1
    lock: {algorithm: redlock, nodes: [A, B, C, D, E], ttl: 10s, fencing_token: incr}
    workload: {start: 0s, cycles: 0, hold: 3s, think: 500ms}
  - name: c2
    lock: {algorithm: redlock, nodes: [A, B, C, D, E], ttl: 10s, fencing_token: incr}
    workload: {start: 1s, cycles: 0, hold: 3s, think: 500ms}
  - name: c3
    lock: {algorithm: redlock, nodes: [A, B, C, D, E], ttl: 10s, fencing_token: incr}
    workload: {start: 2s, cycles: 0, hold: 3s, think: 500ms}
resource:
  fencing: monotonic
faults:
  - {at: 5s, kind: pause, node: c1, for: 12s}
  - {at: 20s, kind: clock-jump, node: C, by: +15s}
  - {at: 20s, kind: partition, groups: [[c1, A, B, C], [c2, c3, D, E]], heal_after: 8s}
  - {at: 33s, kind: crash, node: B, mode: power, restart_after: 4s}
  - {at: 40s, kind: clock-drift, node: D, rate: 0.05}
  - {at: 45s, kind: drop, from: c2, to: A, count: 3}
  - {at: 50s, kind: delay, from: c3, to: E, by: 2s, for: 5s}
`

// TestReportEscapesNames renames a client of a real run to markup (the
// scenario rules reject such a name; a report must be safe whatever it is
// given) and checks that index.html and the SVGs escape it.
func TestReportEscapesNames(t *testing.T) {
	const evil = `<img src=x onerror=alert(1)>`
	run, _ := runOf(t, "single-gc-pause")
	rename := func(s string) string { return strings.ReplaceAll(s, "c1", evil) }
	for i := range run.Setup.Clients {
		run.Setup.Clients[i] = rename(run.Setup.Clients[i])
	}
	for i := range run.Trace {
		e := &run.Trace[i]
		e.Proc, e.Peer, e.Text = rename(e.Proc), rename(e.Peer), rename(e.Text)
	}
	for i := range run.Result.Violations {
		v := &run.Result.Violations[i]
		v.Explanation = rename(v.Explanation)
		for j := range v.Clients {
			v.Clients[j] = rename(v.Clients[j])
		}
	}
	files, err := RenderRun(run)
	require.NoError(t, err)
	index := string(files["index.html"])
	assert.False(t, strings.Contains(index, evil), "index.html inserts the name unescaped")
	assert.True(t, strings.Contains(index, "&lt;img src=x onerror=alert(1)&gt;"), "index.html shows the name, escaped")
	for _, name := range []string{"timeline.svg", "clocks.svg"} {
		svg := files[name]
		assert.False(t, strings.Contains(string(svg), evil), "%s inserts the name unescaped", name)
		svgTexts(t, svg) // well-formed: the name did not break the markup
	}
	var shown bool
	for _, s := range svgTexts(t, files["timeline.svg"]) {
		shown = shown || strings.Contains(s, evil)
	}
	assert.True(t, shown, "the timeline labels the lane with the name, as text")
}

// TestStorageLaneOnlyWithLockClients: the protected resource gets a lane
// when lock clients can read and write it, and none in a flash sale of
// stock counters, where the storage node stays idle.
func TestStorageLaneOnlyWithLockClients(t *testing.T) {
	for _, tt := range []struct {
		name    string
		storage bool
	}{
		{"redis-counter-failover", false},
		{"single-gc-pause", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Builtin(tt.name)
			require.NoError(t, err)
			st, err := scenarios.SetupOf(s)
			require.NoError(t, err)
			has := false
			for _, sv := range st.Servers {
				has = has || sv.Lane == record.LaneResource
			}
			assert.Equal(t, tt.storage, has)
		})
	}
}

// TestEveryLaneIsDrawn: each lane a process kind may declare is one the
// timeline draws: plain, the resource's, or one with its held keys.
func TestEveryLaneIsDrawn(t *testing.T) {
	for _, l := range record.Lanes {
		_, keys := laneKeysOf[l]
		assert.True(t, l == record.LanePlain || l == record.LaneResource || keys, "lane %q has no drawing in laneKeysOf", l)
	}
}

// TestTimelineAvailabilityRow: the static timeline draws the run's
// availability strip as a row per lock under the lanes (labelled, in the
// legend), one red bar per bin in view in which the lock stood free while
// a client waited; without a strip, no row.
func TestTimelineAvailabilityRow(t *testing.T) {
	run, _ := runOf(t, "redlock-clock-jump")
	tl, err := BuildTimeline(run)
	require.NoError(t, err)
	require.NotNil(t, tl.Avail)
	require.Equal(t, run.Result.Stats.Availability, tl.Avail)
	img, err := TimelineImage(tl, "redlock-clock-jump")
	require.NoError(t, err)
	texts := strings.Join(svgTexts(t, img.SVG), "\n")
	assert.Contains(t, texts, "lock free,\nsomeone waiting")
	assert.Contains(t, texts, "lock free while a client waited (darker: more of the time)")
	_, withRow := requirePNG(t, img.PNG)

	tl.Avail = nil
	img, err = TimelineImage(tl, "redlock-clock-jump")
	require.NoError(t, err)
	texts = strings.Join(svgTexts(t, img.SVG), "\n")
	assert.NotContains(t, texts, "someone waiting")
	assert.NotContains(t, texts, "lock free while a client waited")
	_, without := requirePNG(t, img.PNG)
	assert.Greater(t, withRow, without, "the row adds height")
}

// heldSpans lists a lane's held spans as "LABEL START..END" (" open" for
// one the run ended in).
func heldSpans(l *Lane) []string {
	var out []string
	for _, s := range l.Spans {
		if s.Kind == SpanHeld {
			x := s.Label + " " + s.Start.String() + ".." + s.End.String()
			if s.Open {
				x += " open"
			}
			out = append(out, x)
		}
	}
	return out
}
