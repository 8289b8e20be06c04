package locksim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/sim"
)

// isKeyKind reports whether a summary shows events of the kind. A switch,
// not a map: the kernel asks it of every event of a run whose trace is not
// kept (a map lookup was 8% of simrun run's CPU).
func isKeyKind(k sim.Kind) bool {
	switch k {
	case sim.KindAcquired, sim.KindReleased, sim.KindLockLost,
		sim.KindFault, sim.KindCrash, sim.KindRestart,
		"key-expired", "resource-applied", "resource-rejected",
		"promoted", "switch-master", "session-expired", "loaded",
		clients.KindClient: // only those with clients.RefusedField or ReleaseFailedField (keyEvents.add)
		return true
	}
	return false
}

// DefaultKeyEvents is how many key events a summary shows by default: a
// screen. The rest are counted and found in the trace.
const DefaultKeyEvents = 40

// keyEvents keeps what a summary prints of a trace, fed one event at a
// time: with a limit of max > 0, the first max-max/4 key events, the last
// max/4 and how many lay between (with their span); with no limit, all of
// them. Its memory is bounded by the limit, whatever the run's length.
type keyEvents struct {
	head, tail  int // head < 0: keep every key event in first
	first       []sim.Event
	last        []tailEvent // a ring of the latest tail events once full
	next        int         // the oldest event of last, once full
	omitted     int
	omittedFrom sim.Time
	omittedTo   sim.Time
}

// tailEvent is an event of the summary's tail: its text and fields are
// copied into buffers the ring reuses, so that once the ring is full a
// key event costs no allocation, however long the run (the kernel lends
// the events, sim.Config.TraceBorrow).
type tailEvent struct {
	ev     sim.Event // without Text and Fields
	text   []byte
	fields sim.Attrs
}

func (t *tailEvent) set(e *sim.Event) {
	t.ev = *e
	t.ev.Text, t.ev.Fields = "", nil
	t.text = append(t.text[:0], e.Text...)
	t.fields = append(t.fields[:0], e.Fields...)
	for _, a := range e.Fields {
		if a.Groups != nil {
			t.fields = e.Fields.Clone() // groups are the caller's: copied deep
			break
		}
	}
}

func (t *tailEvent) event() sim.Event {
	e := t.ev
	e.Text = string(t.text)
	e.Fields = t.fields.Clone()
	return e
}

// newKeyEvents keeps n key events (Options.KeyEvents: 0 the default,
// negative all).
func newKeyEvents(n int) *keyEvents {
	switch {
	case n < 0:
		return &keyEvents{head: -1}
	case n == 0:
		n = DefaultKeyEvents
	}
	// The start and the end of the story; the middle is in the trace.
	return &keyEvents{head: n - n/4, tail: n / 4}
}

// add records e if it is a key event. e may be lent (valid only during
// the call): what is kept is copied.
func (k *keyEvents) add(e *sim.Event) {
	if !isKeyKind(e.Kind) || (e.Kind == "loaded" && e.At == 0) {
		return
	}
	if e.Kind == clients.KindClient {
		_, refused := e.Fields.String(clients.RefusedField)
		_, failed := e.Fields.String(clients.ReleaseFailedField)
		if !refused && !failed {
			return
		}
	}
	if k.head < 0 || len(k.first) < k.head {
		k.first = append(k.first, e.Clone())
		return
	}
	if len(k.last) < k.tail {
		k.last = append(k.last, tailEvent{})
		k.last[len(k.last)-1].set(e)
		return
	}
	// The oldest of the tail falls into the omitted middle (with no tail,
	// e itself does).
	out := e.At
	if k.tail > 0 {
		out = k.last[k.next].ev.At
		k.last[k.next].set(e)
		k.next = (k.next + 1) % k.tail
	}
	if k.omitted == 0 {
		k.omittedFrom = out
	}
	k.omitted++
	k.omittedTo = out
}

// lastEvents returns the kept tail, oldest first.
func (k *keyEvents) lastEvents() []sim.Event {
	out := make([]sim.Event, 0, len(k.last))
	for i := range k.last {
		out = append(out, k.last[(k.next+i)%len(k.last)].event())
	}
	return out
}

// WriteSummary prints what simrun run prints of a run: the scenario, the
// key events, the verdicts against the expected ones with the
// explanation, the trace hash and the command that replays the run.
// traceAt says where the whole trace is, for the line that counts the key
// events left out.
func (r *Result) WriteSummary(w io.Writer, traceAt string) {
	o, keys := r.rec, r.keys
	if o.Setup != nil && o.Setup.Title != "" {
		fmt.Fprintf(w, "%s: %s\n", o.Scenario, o.Setup.Title)
	} else {
		fmt.Fprintln(w, o.Scenario)
	}
	if o.Setup != nil && o.Setup.Source != "" {
		fmt.Fprintf(w, "source: %s\n", o.Setup.Source)
	}
	if o.Setup != nil && strings.TrimSpace(o.Setup.Why) != "" {
		fmt.Fprintln(w, "why (the scenario's story):")
		for _, l := range wrap(strings.Join(strings.Fields(o.Setup.Why), " "), 76) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "seed %d, %s of virtual time, %d events\n\n", o.Seed, o.VirtualTime, o.Events)
	for _, warn := range o.Warnings {
		fmt.Fprintf(w, "WARNING: %s\n\n", warn)
	}
	fmt.Fprintln(w, "key events:")
	for _, e := range keys.first {
		printKeyEvent(w, e)
	}
	if keys.omitted > 0 {
		fmt.Fprintf(w, "  ... %d key events omitted (%s to %s); all of them: --events 0, the full trace: %s\n", keys.omitted, keys.omittedFrom, keys.omittedTo, traceAt)
	}
	for _, e := range keys.lastEvents() {
		printKeyEvent(w, e)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "verdicts:")
	line := func(name string, got, want checker.Verdict) {
		mark := ""
		if want != "" {
			if got == want {
				mark = fmt.Sprintf("(expected %s: ok)", want)
			} else {
				mark = fmt.Sprintf("(expected %s: MISMATCH)", want)
			}
		}
		fmt.Fprintf(w, "  %-16s %-10s %s\n", name, got, mark)
	}
	for _, j := range o.Verdicts {
		title := j.Property
		if p, ok := checker.Lookup(j.Property); ok {
			title = p.About().Title
		}
		line(title, j.Verdict, checker.Verdict(o.Expected[j.Property]))
		fmt.Fprintf(w, "      why: %s\n", r.verdictWhy(j.Property, j.Verdict))
	}
	if len(o.Unsupported) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "INCONCLUSIVE: locksim could not run what the code sent (a limit of the simulation, not of the code), so no verdict holds or is violated:")
		for _, u := range o.Unsupported {
			fmt.Fprintf(w, "  - %s\n", u)
		}
	}
	if len(o.Violations) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "explanation:")
		for _, v := range o.Violations {
			fmt.Fprintf(w, "  - %s\n", v.Explanation)
		}
		if o.ViolationsOmitted > 0 {
			fmt.Fprintf(w, "  - and %d more violations, not listed (the first %d are)\n", o.ViolationsOmitted, checker.MaxViolations)
		}
	}
	if o.Fencing != "" {
		fmt.Fprintf(w, "  fencing: %s\n", o.Fencing)
	}
	for _, v := range o.Vacuous {
		fmt.Fprintf(w, "  VACUOUS: %s\n", v)
	}
	if o.Stats != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "numbers:")
		for _, l := range o.Stats.Lines() {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "\ntrace hash %s\n", o.TraceHash)
	verdict := "MATCHED the expected verdicts"
	if !o.Matched {
		verdict = "did NOT match the expected verdicts"
	}
	if o.Inconclusive {
		verdict = "INCONCLUSIVE (" + o.InconclusiveWhy() + ")"
	}
	fmt.Fprintf(w, "%s (replay: simrun run %s --seed %d)\n", verdict, o.ReplayArgs(), o.Seed)
}

func printKeyEvent(w io.Writer, e sim.Event) {
	fmt.Fprintf(w, "  %10s  %-6s %-16s %s\n", e.At, e.Proc, e.Kind, sim.ReadableText(&e))
}

// EventText is event i of a trace in one line, for divergence reports.
func EventText(tr []sim.Event, i int) string {
	if i < 0 || i >= len(tr) {
		return "(no event: the trace ended)"
	}
	e := tr[i]
	return fmt.Sprintf("#%d %s %s %s %s %s", e.Seq, e.At, e.Kind, e.Proc, e.Peer, e.Text)
}

// EventTexts renders event i of two traces that diverge there, as
// EventText does; when the two read the same (times apart by less than
// the millisecond EventText shows, or events apart only in their typed
// fields), it renders both with the time in nanoseconds and the fields, so
// that the difference shows ("recorded: #10 0.001s deliver zk c2 #2" twice
// was all a replay with another seed said).
func EventTexts(a, b []sim.Event, i int) (string, string) {
	x, y := EventText(a, i), EventText(b, i)
	if x != y || i < 0 || i >= len(a) || i >= len(b) {
		return x, y
	}
	full := func(e sim.Event) string {
		t := fmt.Sprintf("#%d t=%dns %s %s %s %s", e.Seq, int64(e.At), e.Kind, e.Proc, e.Peer, e.Text)
		if len(e.Fields) > 0 {
			f, _ := json.Marshal(e.Fields)
			t += " fields=" + string(f)
		}
		return t
	}
	return full(a[i]), full(b[i])
}

// DivergenceText is the block that names the first diverging event i of
// two traces, each line labelled ("recorded", "now").
func DivergenceText(a, b []sim.Event, i int, labelA, labelB string) string {
	x, y := EventTexts(a, b, i)
	w := max(len(labelA), len(labelB)) + 1
	return fmt.Sprintf("first diverging event #%d:\n  %-*s %s\n  %-*s %s\n", i+1, w, labelA+":", x, w, labelB+":", y)
}

// verdictWhy says in one line why property name got verdict v in this run:
// for a violation, the first explanation (all of them follow under
// "explanation:"); for a verdict that holds, what holding means, the
// numbers it held over and, for the lock's safety, the grants an
// algorithm refused on its own check (the event that decides a run such
// as redlock-pause-in-flight, otherwise only in the trace); for a
// property with nothing to judge, what it lacked.
func (r *Result) verdictWhy(name string, v checker.Verdict) string {
	why := r.verdictReason(name, v)
	if note := r.rec.LivenessNote; name == checker.Liveness && note != "" && v == checker.NotJudged {
		return note // it says why liveness was not judged
	}
	if note := r.rec.LivenessNote; name == checker.Liveness && note != "" && why != note {
		// Where liveness looked: whatever its verdict, the windows it
		// judged (or why it judged none).
		why += "; " + note
	}
	return why
}

// verdictReason is verdictWhy without liveness's note.
func (r *Result) verdictReason(name string, v checker.Verdict) string {
	o := r.rec
	p, known := checker.Lookup(name)
	var about checker.About
	if known {
		about = p.About()
	}
	var st checker.Stats
	if o.Stats != nil {
		st = *o.Stats
	}
	switch v {
	case checker.Violated:
		n, first := 0, ""
		for _, x := range o.Violations {
			if known && x.Kind != about.Kind {
				continue
			}
			if n == 0 {
				first = x.Explanation
			}
			n++
		}
		if n == 0 {
			return "violated (the explanation is among those below)"
		}
		if n > 1 {
			return fmt.Sprintf("%s (and %d more below)", first, n-1)
		}
		return first
	case checker.Holds:
		why := "it held"
		if about.Explains != "" {
			why = about.Explains
		}
		switch name {
		case checker.LockSafety:
			why += fmt.Sprintf(" (over %d grants)", st.Grants)
			if refused := r.refusedGrants(); refused != "" {
				why += "; " + refused
			}
		case checker.ResourceSafety:
			why += fmt.Sprintf(" (over %d accepted and %d rejected writes)", st.WritesAccepted, st.WritesRejected)
		}
		return why
	case checker.NotUsed:
		for _, x := range o.Vacuous {
			if about.Title != "" && strings.HasPrefix(x, about.Title) {
				return x
			}
		}
		if about.Title != "" {
			return fmt.Sprintf("nothing in this run for %s to judge", about.Title)
		}
	case checker.NotJudged:
		return "not judged"
	}
	if o.Inconclusive {
		return "the checker could not decide in time"
	}
	return string(v)
}

// refusedGrants lists the key events in which an algorithm refused a grant
// its servers gave (clients.RefusedField), or "".
func (r *Result) refusedGrants() string {
	if r.keys == nil {
		return ""
	}
	var parts []string
	events := append(append([]sim.Event(nil), r.keys.first...), r.keys.lastEvents()...)
	for _, e := range events {
		check, ok := e.Fields.String(clients.RefusedField)
		if e.Kind != clients.KindClient || !ok {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s refused the grant at %s by its %s check: %s", e.Proc, e.At, check, e.Text))
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more refusals (key events)", len(parts)-3))
	}
	return strings.Join(parts, "; ")
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
