package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/locksim/locksim/sim"
)

// A Property is one question the checker answers about a history, as a
// value (the shape of cockroachdb's asim assertions: a value that judges a
// history and says why): its name and words (About), how it is judged on a
// whole history (Judge) and on a history handed over in pieces (Stream).
// Each property lives in one file; the registry below lists them, in the
// order every output names them (JSON keys, summaries, the expect block,
// the order of Result.Violations).
//
// Adding a property is that file plus one line in registry: Check, Stream,
// the expect block of a scenario, the JSON and text outputs, twin mode,
// the reports and fuzzing all iterate the registry (docs/design/extending.md,
// "Adding a property").
type Property interface {
	// About names and describes the property. It returns the same value
	// on every call.
	About() About
	// Judge judges a whole history h (valid: see ValidateHistory) with
	// opts: its verdict and its violations explained in words.
	Judge(h *sim.History, opts Options) Judgement
	// Stream returns a judge of a history handed over in pieces (see
	// Stream), for one run.
	Stream(opts Options) PieceJudge
}

// About names and describes a property.
type About struct {
	// Name is the property's key, spelled once: in JSON ("lock_safety":
	// "holds"), in a scenario's expect block, in summaries.
	Name string
	// Title is the name in words ("lock safety"), for text outputs.
	Title string
	// Kind is the Violation.Kind of its violations ("lock-safety"), the
	// name fuzzing knows the property by.
	Kind string
	// Short is its label where space is short: the word of simrun list
	// ("expect: lock violated"), the column of tables (LOCK), and, for a
	// property fuzzing can target, a name a user may type (simrun fuzz
	// --check lock).
	Short string
	// Explains says in one sentence what the verdict holds means (the
	// tooltip of the property in the HTML report's table of verdicts; Doc
	// says it at length).
	Explains string
	// Doc is the property's reference text (Markdown): when each verdict
	// it may have is given, and what the explanation names. simrun docs
	// writes it into docs/reference/properties.md; every verdict of Expect
	// other than holds and violated is named in it in backquotes.
	Doc string
	// Expect lists the verdicts a scenario's expect block may claim for
	// it, the first two being holds and violated.
	Expect []Verdict
	// Fuzz says whether a fuzz campaign can target the property: search
	// for runs that violate it and shrink them.
	Fuzz Fuzzing
}

// Fuzzing says whether a fuzz campaign targets a property.
type Fuzzing int

const (
	// NotFuzzed: a campaign cannot target the property.
	NotFuzzed Fuzzing = iota
	// FuzzOnRequest: a campaign targets it when asked (simrun fuzz
	// --check).
	FuzzOnRequest
	// FuzzByDefault: a campaign targets it when asked, and by default
	// when the base scenario expects it to hold (or expects none of these
	// to hold).
	FuzzByDefault
)

// Judgement is a property's judgement of one history.
type Judgement struct {
	Verdict Verdict
	// Violations explain a Violated verdict, in true-time order; a verdict
	// that is not Violated has none.
	Violations []Violation
	// explain, when set, computes the violations that come before
	// Violations, and the page to draw, once every property has its
	// verdict (Check calls it in registry order after judging them all):
	// an explanation that walks the whole history again then runs when
	// the verdicts' own work is garbage, as it did before properties were
	// values (BenchmarkCheck's peak heap on an illegal history).
	explain func() ([]Violation, *page)
	// details records what the property found beyond its verdict in the
	// fields of Result that belong to it (liveness: the longest wait, the
	// fault-free windows, the note).
	details func(*Result)
	// page is the illegal piece to draw when the check was verbose.
	page *page
}

// page is what a property draws of its illegal piece with porcupine: the
// piece, its client rows, the violations to annotate and the file name.
type page struct {
	piece pieceCheck
	rows  []string
	vs    []Violation
	file  string
}

// PieceJudge judges a history handed over in pieces (Stream), carrying
// from piece to piece what the property needs and nothing more.
type PieceJudge interface {
	// Piece judges the next piece p (whose Faults are every fault so far)
	// and reports whether the property holds on it with nothing to
	// explain; when it does not, why says what was found ("lock safety
	// violated"), and the run is judged whole.
	Piece(p *sim.History) (clean bool, why string)
	// Final is the judgement once every piece was clean and forgotten;
	// h holds the run's faults and end only.
	Final(h *sim.History) Judgement
}

// registry lists the properties in output order. One line per property.
var registry = []Property{
	lockSafety{},
	resourceSafety{},
	livenessProperty{},
	tokenOrder{},
}

// Properties returns the registered properties in output order.
func Properties() []Property {
	return append([]Property(nil), registry...)
}

// Lookup returns the property named name (About().Name).
func Lookup(name string) (Property, bool) {
	for _, p := range registry {
		if p.About().Name == name {
			return p, true
		}
	}
	return nil, false
}

// Names returns the names of the registered properties in output order.
func Names() []string {
	out := make([]string, len(registry))
	for i, p := range registry {
		out[i] = p.About().Name
	}
	return out
}

// Register adds p at the end of the registry and returns the function that
// removes it again: for tests that show a property reaching every output
// with one registration (a built-in property is a line in registry). A
// name, title or kind already registered, or an empty one, is a
// programming error and panics.
func Register(p Property) (undo func()) {
	a := p.About()
	if a.Name == "" || a.Title == "" || a.Kind == "" || a.Short == "" || len(a.Expect) == 0 {
		panic(fmt.Sprintf("checker.Register: property %q needs a name, a title, a kind, a short label and the verdicts it may be expected to have", a.Name))
	}
	for _, q := range registry {
		b := q.About()
		if b.Name == a.Name || b.Title == a.Title || b.Kind == a.Kind || b.Short == a.Short {
			panic(fmt.Sprintf("checker.Register: property %q clashes with %q", a.Name, b.Name))
		}
	}
	saved := registry
	registry = append(append([]Property(nil), saved...), p)
	return func() { registry = saved }
}

// Judged is one property's verdict.
type Judged struct {
	Property string  // About().Name
	Verdict  Verdict // Holds, Violated, Unknown, NotJudged or NotUsed
}

// Verdicts is the verdict of each property, one per registered property in
// registry order. In JSON it is an object keyed by property name, in that
// order: {"lock_safety": "holds", ...}.
type Verdicts []Judged

// Of returns the verdict on the property named name, "" if there is none.
func (vs Verdicts) Of(name string) Verdict {
	for _, j := range vs {
		if j.Property == name {
			return j.Verdict
		}
	}
	return ""
}

// Any reports whether some verdict is v.
func (vs Verdicts) Any(v Verdict) bool {
	for _, j := range vs {
		if j.Verdict == v {
			return true
		}
	}
	return false
}

// MarshalJSON writes the verdicts as an object in registry order.
func (vs Verdicts) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, j := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(j.Property)
		v, _ := json.Marshal(j.Verdict)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object of verdicts: the registered properties in
// registry order, then any other key in name order (a result written with
// a property this build does not have).
func (vs *Verdicts) UnmarshalJSON(data []byte) error {
	var m map[string]Verdict
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*vs = VerdictsFrom(m)
	return nil
}

// VerdictsFrom orders a map of verdicts by name: the registered properties
// in registry order, then the other names sorted. A registered property
// missing from m is left out.
func VerdictsFrom(m map[string]Verdict) Verdicts {
	out := Verdicts{}
	seen := map[string]bool{}
	for _, p := range registry {
		n := p.About().Name
		if v, ok := m[n]; ok {
			out = append(out, Judged{n, v})
			seen[n] = true
		}
	}
	var rest []string
	for n := range m {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		out = append(out, Judged{n, m[n]})
	}
	return out
}

// allUnknown is the verdicts of a history that could not be judged.
func allUnknown() Verdicts {
	out := make(Verdicts, len(registry))
	for i, p := range registry {
		out[i] = Judged{p.About().Name, Unknown}
	}
	return out
}

// FlatJSON marshals v, a struct, with the verdicts vs as keys of its own
// object, placed just before its key before (at the end when v has no
// such key): the shape in which results have always written their
// verdicts ("lock_safety": "holds", ..., "violations": [...]).
func FlatJSON(v any, vs Verdicts, before string) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return body, nil
	}
	obj, err := vs.MarshalJSON()
	if err != nil {
		return nil, err
	}
	members := obj[1 : len(obj)-1]
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("checker.FlatJSON: %T is not written as a JSON object", v)
	}
	var out []byte
	// The first `,"before":` is the key: inside a string its quotes would
	// be escaped. The key may also come first: `{"before":`.
	k, _ := json.Marshal(before)
	switch {
	case bytes.HasPrefix(body, append([]byte{'{'}, append(k, ':')...)):
		out = append(append(append([]byte{'{'}, members...), ','), body[1:]...)
	case bytes.Contains(body, append(append([]byte{','}, k...), ':')):
		at := bytes.Index(body, append(append([]byte{','}, k...), ':'))
		out = append(append(append([]byte(nil), body[:at+1]...), members...), body[at:]...)
	case len(body) == 2:
		out = append(append([]byte{'{'}, members...), '}')
	default:
		out = append(append(append(append([]byte(nil), body[:len(body)-1]...), ','), members...), '}')
	}
	return out, nil
}

// ReadFlat reads the verdicts of the registered properties from the keys
// of a JSON object written by FlatJSON (other keys are ignored).
func ReadFlat(data []byte) (Verdicts, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, err
	}
	vs := map[string]Verdict{}
	for _, p := range registry {
		name := p.About().Name
		raw, ok := keys[name]
		if !ok {
			continue
		}
		var v Verdict
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		vs[name] = v
	}
	return VerdictsFrom(vs), nil
}
