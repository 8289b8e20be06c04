package scenarios

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/suggest"
	"github.com/locksim/locksim/sim"
)

// nameRE is the rule of scenario names (SCENARIO_FORMAT.md: [a-z0-9-]+),
// starting with a letter as every identifier a user types on a command line
// or sees as a file name (issue 14).
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// processNameRE is the rule of process names: letters, digits, '_', '-' and
// '.', starting with a letter. Names reach file names, command lines, traces
// and HTML reports; markup or spaces in them have no use (issue 14).
var processNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// Parse reads a scenario file. file names the source in error messages.
// Every problem found is reported (as Errors), each with file, line and
// field; unknown fields are errors.
func Parse(file string, data []byte) (*Scenario, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, Errors{yamlError(file, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Msg: "a scenario file holds one YAML document; found a second one"}}
	}
	expanded, yerr := expandAliases(file, &doc)
	if yerr != nil {
		return nil, Errors{yerr}
	}
	origin := map[*yaml.Node]string{}
	merged, yerr := resolveExtends(file, expanded, nil, origin)
	if yerr != nil {
		return nil, Errors{yerr}
	}
	return fromNode(file, merged, origin)
}

// yamlError turns a YAML syntax error into an Error with its line.
func yamlError(file string, err error) *Error {
	msg := err.Error()
	line := 0
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &line)
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if line > 0 {
		msg = strings.TrimSpace(regexp.MustCompile(`^line \d+: `).ReplaceAllString(msg, ""))
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg}
}

// FromNode builds a scenario from a YAML document tree (Parse's second
// half; sweeps and fuzzing edit the tree and call it again).
func FromNode(file string, doc *yaml.Node) (*Scenario, error) {
	return fromNode(file, doc, nil)
}

// fromNode is FromNode naming, for each node in origin, the base file
// that set it (extends:) in its errors.
func fromNode(file string, doc *yaml.Node, origin map[*yaml.Node]string) (*Scenario, error) {
	r := &reader{file: file, origin: origin}
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, Errors{{File: file, Msg: "the file is empty"}}
		}
		root = root.Content[0]
	}
	s := &Scenario{File: file, Doc: doc}
	o := r.mapping(root, "")
	if o.n == nil && root.Kind != yaml.MappingNode {
		return nil, r.errs
	}
	if n, v, ok := o.scalar("name"); !ok {
		r.errf(root, "name", "required field is missing")
	} else if !nameRE.MatchString(v) {
		r.errf(n, "name", "%q must use only a-z, 0-9 and '-', starting with a letter", v)
	} else {
		s.Name = v
	}
	o.str("title", &s.Title)
	o.str("source", &s.Source)
	o.str("why", &s.Why)
	o.boolean("twin", &s.Twin)
	if o.str("not_twin", &s.NotTwin) {
		switch {
		case strings.TrimSpace(s.NotTwin) == "":
			r.errf(o.get("not_twin"), "not_twin", "must say why the scenario is not twin-checked")
		case s.Twin:
			r.errf(o.get("not_twin"), "not_twin", "a scenario is twin: true or says why not (not_twin), not both")
		}
	}
	s.Seed = 1
	o.uint64("seed", &s.Seed)
	if !o.has("duration") {
		r.errf(root, "duration", "required field is missing (virtual time to simulate, e.g. 60s)")
	}
	if o.duration("duration", &s.Duration) {
		switch {
		case s.Duration <= 0:
			r.errf(o.get("duration"), "duration", "must be positive, got %s", s.Duration)
		case s.Duration > MaxDuration:
			r.errf(o.get("duration"), "duration", "%s is more than the %s of virtual time a scenario may run: a lock story needs seconds to hours (the longest measured run is 24h), so this is more likely a unit typed for another; for a long contention test, stop it with --max-events instead", fmtHours(s.Duration), fmtHours(MaxDuration))
		}
	}
	s.Links = r.network(o.get("network"), &s.Network)
	// Every process kind reads its own section (kinds.go).
	for _, k := range kinds {
		k.read(r, o, s)
	}
	for i, n := range o.list("clients") {
		s.Clients = append(s.Clients, r.client(n, fmt.Sprintf("clients[%d]", i)))
	}
	for i, n := range o.list("faults") {
		s.Faults = append(s.Faults, r.fault(n, fmt.Sprintf("faults[%d]", i)))
	}
	s.Expect = r.expect(o.get("expect"))
	o.done()
	if len(r.errs) == 0 {
		validate(r, s, root)
	} else {
		r.errs = append(r.errs, validateBeside(r, s, root)...)
	}
	if len(r.errs) > 0 {
		return nil, r.errs
	}
	return s, nil
}

// MaxDuration is the longest virtual time a scenario may run. A run of
// more than a thousand hours is refused (exit 2) rather than warned about:
// at the kernel's speed it would run for hours of CPU before an event
// budget stops it (exit 3), while a lock story needs seconds to hours and
// the longest run locksim measures is 24h (a memory bound); the budget
// tests and the flat-memory checks run 1000h.
const MaxDuration = 1000 * time.Hour

// fmtHours writes a long duration in hours ("100000h"), as a user types
// it, rather than time.Duration's "100000h0m0s".
func fmtHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// validateBeside validates a scenario whose reading found errors, so that
// a file with several mistakes reports them all at once, and returns the
// validation's errors that stand on their own: those in a top-level entry
// (clients[0], faults[2], expect, ...) where reading found nothing wrong.
// An error in an entry that was misread may only follow from the misread
// value (a missing name, a zero duration), so those are left for the next
// run; after an error in a top-level field (name, duration, a whole
// section) nothing is added. Validation was written for a scenario read
// without errors: should it fail on a half-read one, the reading's errors
// alone are reported.
func validateBeside(r *reader, s *Scenario, root *yaml.Node) (out Errors) {
	bad := map[string]bool{}
	for _, e := range r.errs {
		top := topEntry(e.Path)
		if top == e.Path && !strings.Contains(top, "[") {
			return nil // a top-level field: everything else may follow from it
		}
		bad[top] = true
	}
	v := &reader{file: r.file, origin: r.origin}
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	validate(v, s, root)
	for _, e := range v.errs {
		if !bad[topEntry(e.Path)] {
			out = append(out, e)
		}
	}
	return out
}

// topEntry is the top-level entry a field path lies in: "clients[0]" for
// "clients[0].lock.ttl", "expect" for "expect.max_wait", "duration" for
// "duration".
func topEntry(path string) string {
	if i := strings.IndexAny(path, "."); i >= 0 {
		path = path[:i]
	}
	if i := strings.Index(path, "]"); i >= 0 {
		return path[:i+1]
	}
	return path
}

func (r *reader) network(n *yaml.Node, dst *sim.NetConfig) []LinkSpec {
	// Default: 1ms..3ms one-way, no loss (locksim's default, a LAN).
	dst.Latency = sim.Range{Lo: 1e6, Hi: 3e6}
	o := r.mapping(n, "network")
	o.rng("latency", &dst.Latency)
	if o.float("loss", &dst.Loss) && (dst.Loss < 0 || dst.Loss > 1) {
		r.errf(o.get("loss"), "network.loss", "must be a probability in [0, 1], got %g", dst.Loss)
	}
	var links []LinkSpec
	for i, ln := range o.list("links") {
		path := fmt.Sprintf("network.links[%d]", i)
		lo := r.mapping(ln, path)
		var l LinkSpec
		if !lo.str("from", &l.From) {
			r.errf(ln, path+".from", "required field is missing")
		}
		if !lo.str("to", &l.To) {
			r.errf(ln, path+".to", "required field is missing")
		}
		if !lo.duration("extra", &l.Extra) {
			r.errf(ln, path+".extra", "required field is missing (the added one-way latency)")
		} else if l.Extra <= 0 {
			r.errf(lo.get("extra"), path+".extra", "must be positive")
		}
		lo.done()
		links = append(links, l)
	}
	o.done()
	if dst.Latency.Lo < 0 {
		r.errf(n, "network.latency", "must not be negative")
	}
	return links
}

func (r *reader) clock(o *obj, path string) ClockSpec {
	var c ClockSpec
	n := o.get("clock")
	if n == nil {
		return c
	}
	co := r.mapping(n, join(path, "clock"))
	co.duration("offset", &c.Offset)
	if co.float("drift", &c.Drift) {
		if _, err := sim.RateFromDrift(c.Drift); err != nil {
			r.errf(co.get("drift"), join(path, "clock.drift"), "%v", err)
		}
	}
	co.done()
	return c
}

// expect reads the expect block: max_wait, min_grants, and a verdict for any property
// of the checker's registry, which says which verdicts it may be expected
// to have.
func (r *reader) expect(n *yaml.Node) Expect {
	var e Expect
	o := r.mapping(n, "expect")
	if o.duration("max_wait", &e.MaxWait) && e.MaxWait <= 0 {
		r.errf(o.get("max_wait"), "expect.max_wait", "must be positive")
	}
	if o.integer(ExpectMinGrants, &e.MinGrants) && e.MinGrants < 1 {
		r.errf(o.get(ExpectMinGrants), "expect."+ExpectMinGrants, "must be at least 1")
	}
	if o.has(ExpectLivenessWindow) {
		e.LivenessWindow = r.livenessWindow(o.get(ExpectLivenessWindow))
	}
	known := append(checker.Names(), "max_wait", ExpectMinGrants, ExpectLivenessWindow)
	for _, kn := range o.keys() {
		if kn.Value == "max_wait" || kn.Value == ExpectMinGrants || kn.Value == ExpectLivenessWindow {
			continue
		}
		p, ok := checker.Lookup(kn.Value)
		if !ok {
			list := append([]string(nil), known...)
			sort.Strings(list)
			r.errf(kn, "expect."+kn.Value, "unknown property %q (known: %s)%s", kn.Value, strings.Join(list, ", "), suggest.DidYouMean(kn.Value, known))
			o.known = append(o.known, kn.Value) // reported here, not again by done
			continue
		}
		var v string
		if !o.str(kn.Value, &v) {
			continue
		}
		allowed := p.About().Expect
		if !slices.Contains(allowed, checker.Verdict(v)) {
			words := make([]string, len(allowed))
			for i, a := range allowed {
				words[i] = string(a)
			}
			r.errf(o.get(kn.Value), "expect."+kn.Value, "unknown verdict %q (allowed: %s)", v, strings.Join(words, ", "))
			continue
		}
		e.Set(kn.Value, checker.Verdict(v))
	}
	o.done()
	return e
}

// livenessWindowRE is a liveness window's start given as a fault of the
// schedule: faults[N].
var livenessWindowRE = regexp.MustCompile(`^faults\[([0-9]+)\]$`)

// livenessWindow reads expect.liveness_window: {after: TIME|faults[N],
// within: D}; whether faults[N] exists and TIME lies inside the run is
// checked with the whole scenario (validate).
func (r *reader) livenessWindow(n *yaml.Node) *checker.LivenessWindow {
	const path = "expect." + ExpectLivenessWindow
	o := r.mapping(n, path)
	w := &checker.LivenessWindow{}
	switch an, after, ok := o.scalar("after"); {
	case an == nil:
		r.errf(n, path+".after", "required: the instant the window starts (a true time such as 10s, or faults[N]: when that fault stopped acting)")
	case !ok:
	case livenessWindowRE.MatchString(after):
		i, err := strconv.Atoi(livenessWindowRE.FindStringSubmatch(after)[1])
		if err != nil {
			r.errf(an, path+".after", "%q: no such fault", after)
			break
		}
		w.Fault = i + 1
	default:
		d, err := sim.ParseDuration(after)
		if err != nil {
			r.errf(an, path+".after", "%q is neither a true time (10s) nor a fault of the schedule (faults[N])", after)
			break
		}
		if d < 0 {
			r.errf(an, path+".after", "must not be negative")
		}
		w.At = sim.At(d)
	}
	if !o.has("within") {
		r.errf(n, path+".within", "required: how long the lock may stand free while a client waits, inside the window")
	} else if o.duration("within", &w.Within) && w.Within <= 0 {
		r.errf(o.get("within"), path+".within", "must be positive")
	}
	o.done()
	return w
}

func (r *reader) fault(n *yaml.Node, path string) faults.Spec {
	var s faults.Spec
	o := r.mapping(n, path)
	if o.has("at") {
		var at sim.Range
		if o.rng("at", &at) {
			if at.Lo < 0 {
				r.errf(o.get("at"), path+".at", "must not be negative")
			}
			s.At = &at
		}
	} else {
		o.known = append(o.known, "at")
	}
	if on := o.get("on"); on != nil {
		t := &faults.Trigger{Count: 1}
		to := r.mapping(on, path+".on")
		if !to.str("event", &t.Event) {
			r.errf(on, path+".on.event", "required field is missing (one of: %s)", strings.Join(allEvents(), ", "))
		}
		var client, node string
		to.str("client", &client)
		to.str("node", &node)
		switch {
		case client != "" && node != "":
			r.errf(on, path+".on", "give client or node, not both")
		case client != "":
			t.Proc = client
		case node != "":
			t.Proc = node
		default:
			r.errf(on, path+".on", "needs client: NAME or node: NAME (whose event fires the fault)")
		}
		if to.integer("count", &t.Count) && t.Count < 1 {
			r.errf(to.get("count"), path+".on.count", "must be at least 1, got %d", t.Count)
		}
		to.done()
		s.On = t
	}
	if s.At != nil && s.On != nil {
		r.errf(n, path, "give either at or on, not both")
	}
	if s.At == nil && s.On == nil && !o.has("at") {
		r.errf(n, path, "needs a trigger: at: DURATION or on: {event: E, client|node: X}")
	}
	if o.rng("after", &s.After) {
		switch {
		case s.At != nil:
			r.errf(o.get("after"), path+".after", "only applies to triggered faults (on:); with at: add the delay to at")
		case s.After.Lo < 0:
			// A fault cannot fire before the event that triggers it.
			r.errf(o.get("after"), path+".after", "must not be negative (a delay after the event), got %s", o.get("after").Value)
		}
	}
	kn, kind, given := o.scalar("kind")
	if !given {
		r.errf(n, path+".kind", "required field is missing (one of: %s)", strings.Join(faults.Kinds, ", "))
	}
	s.Kind = kind
	if d, ok := faults.Lookup(kind); ok {
		for _, f := range d.Fields {
			r.faultField(n, o, f, &s, path)
		}
	} else if given {
		// An empty kind ("") is as unknown as a misspelt one.
		r.errf(kn, path+".kind", "unknown fault kind %q (known: %s)", kind, strings.Join(faults.Kinds, ", "))
	}
	o.done()
	return s
}

func allEvents() []string {
	var out []string
	out = append(out, faults.ClientEvents...)
	out = append(out, TriggerEvents()...)
	return append(out, faults.AnyEvents...)
}

// faultField reads one field of a fault as its kind declares it (faults'
// kind table): its type fixes how it is read, and its check runs once it
// is read.
func (r *reader) faultField(n *yaml.Node, o *obj, f faults.Field, s *faults.Spec, path string) {
	fp := func() string { return path + "." + f.Name } // only for errors
	var present bool
	switch p := f.Ptr(s).(type) {
	case *string:
		present = o.str(f.Name, p)
	case *time.Duration:
		present = o.duration(f.Name, p)
	case *float64:
		present = o.float(f.Name, p)
	case *int:
		present = o.integer(f.Name, p)
	case *sim.Range:
		present = o.rng(f.Name, p)
	case **sim.Range:
		var v sim.Range
		if present = o.rng(f.Name, &v); present {
			*p = &v
		}
	case *[][]string:
		gn := o.get(f.Name)
		if gn == nil {
			break
		}
		if gn.Kind != yaml.SequenceNode || len(gn.Content) == 0 {
			r.errf(gn, fp(), "must be a list of groups like [[c1, A], [c2, B]]")
			return
		}
		present = true
		for i, g := range gn.Content {
			names, ok := r.strList(g, fmt.Sprintf("%s[%d]", fp(), i))
			if ok && len(names) == 0 {
				r.errf(g, fmt.Sprintf("%s[%d]", fp(), i), "a group needs at least one process")
			}
			*p = append(*p, names)
		}
	}
	switch {
	case !present && f.Required && !o.has(f.Name):
		// A value given but refused was reported above: one message.
		r.errf(n, fp(), "required for kind %s", s.Kind)
	case present && f.Check != nil:
		if msg := f.Check(s); msg != "" {
			r.errf(o.get(f.Name), fp(), "%s", msg)
		}
	}
}
