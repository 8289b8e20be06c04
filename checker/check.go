package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/sim"
)

// Verdict is the answer to one of the checker's questions.
type Verdict string

const (
	// Holds means the property was checked and holds.
	Holds Verdict = "holds"
	// Violated means the property was checked and does not hold; Result
	// explains how.
	Violated Verdict = "violated"
	// Unknown means porcupine ran out of time before deciding. It is an
	// outcome of its own and never counts as a pass.
	Unknown Verdict = "unknown"
	// NotJudged is a liveness verdict only: no wait bound was given, or the
	// faults settled only after the run ended, so there was nothing to judge.
	// It is neither a pass nor a violation.
	NotJudged Verdict = "not-judged"
)

// DefaultTimeout is the porcupine timeout of a check when Options.Timeout is
// not set.
const DefaultTimeout = 10 * time.Second

// Options tune Check.
type Options struct {
	// Timeout bounds each porcupine check: the check of each piece of a
	// lock's or a resource's history (the checker cuts histories at quiet
	// points, see pieceMinOps); zero or negative means DefaultTimeout. A
	// piece that runs out of time makes the verdict Unknown, unless another
	// piece is illegal.
	Timeout time.Duration
	// MaxWait is the liveness bound per client name. A client missing from
	// the map uses DefaultMaxWait; a bound of zero or less means the client's
	// waits are measured but never judged.
	MaxWait map[string]time.Duration
	// DefaultMaxWait is the liveness bound of clients missing from MaxWait.
	// When it is zero and MaxWait gives no positive bound, liveness is not
	// judged at all (verdict NotJudged).
	DefaultMaxWait time.Duration
	// Settle is how long an instantaneous fault (a clock jump, a drift
	// change, a drop, a restart, a promotion) counts as acting for liveness:
	// the settling time the lock algorithm needs. The scenario runner sets
	// the longest lease of the scenario's clients (their ttl, Redisson's
	// lease, ZooKeeper's session timeout): after one lease every grant made
	// before the fault has expired or been renewed under the changed
	// conditions. Zero means the largest liveness bound.
	Settle time.Duration
	// Window, when set, is the window over which liveness is judged
	// instead of the fault-free windows, with its own bound for every
	// client (expect.liveness_window; LivenessWindow).
	Window *LivenessWindow
	// NetworkLoss is the scenario's segment loss probability. A loss of 1
	// (nothing is ever delivered) is a fault that acts over the whole run;
	// a lower loss is the network's normal behaviour under TCP.
	NetworkLoss float64
	// Visualize makes Check draw porcupine's HTML visualization of each
	// illegal history into Result.Pages (PageLock, PageResource): of the
	// first piece that holds a violation (see pieceMinOps), with a note on a
	// row tagged "piece" saying which, the faults that meet it drawn on a
	// row tagged "faults" and the violations on a row tagged "violations".
	Visualize bool
}

// Window is a span of true time.
//
// In JSON its ends are written as Go durations since the run's start,
// exact to the nanosecond ("1.109368638s"), like every other time and
// duration of a result (virtual_time, longest_wait): one convention,
// read back by time.ParseDuration. Integers (nanoseconds, as results
// written before this convention had) are still read.
type Window struct {
	Start sim.Time `json:"start"`
	End   sim.Time `json:"end"`
}

type windowJSON struct {
	Start json.RawMessage `json:"start"`
	End   json.RawMessage `json:"end"`
}

// MarshalJSON writes the ends as duration strings.
func (w Window) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Start string `json:"start"`
		End   string `json:"end"`
	}{time.Duration(w.Start).String(), time.Duration(w.End).String()})
}

// UnmarshalJSON reads duration strings, or integers of nanoseconds.
func (w *Window) UnmarshalJSON(b []byte) error {
	var raw windowJSON
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	read := func(m json.RawMessage, field string) (sim.Time, error) {
		var s string
		if err := json.Unmarshal(m, &s); err == nil {
			d, err := time.ParseDuration(s)
			if err != nil {
				return 0, fmt.Errorf("window %s: %w", field, err)
			}
			return sim.Time(d), nil
		}
		var n int64
		if err := json.Unmarshal(m, &n); err != nil {
			return 0, fmt.Errorf("window %s: want a duration such as \"1.5s\", got %s", field, m)
		}
		return sim.Time(n), nil
	}
	var err error
	if w.Start, err = read(raw.Start, "start"); err != nil {
		return err
	}
	w.End, err = read(raw.End, "end")
	return err
}

// Violation is one way in which a property failed, in words.
type Violation struct {
	// Kind is the About().Kind of the property it violates
	// (KindLockSafety, ...).
	Kind string `json:"kind"`
	// Lock is the lock (and protected resource) concerned.
	Lock string `json:"lock"`
	// Clients are the clients involved, in the order the explanation names
	// them.
	Clients []string `json:"clients"`
	// Windows are the true-time spans of the violation: the overlap of two
	// beliefs, the section whose read went stale, or the excessive wait.
	Windows []Window `json:"windows"`
	// Explanation tells what happened in one or two sentences.
	Explanation string `json:"explanation"`
}

// Result holds the verdicts on one history and what explains them.
type Result struct {
	// Verdicts holds the verdict of every registered property, in
	// registry order (Properties).
	Verdicts Verdicts `json:"verdicts"`

	// Violations lists the violations of each property in registry order,
	// each group in true-time order. A property whose verdict is not
	// Violated contributes none.
	Violations []Violation `json:"violations"`
	// ViolationsOmitted is the number of violations left out of
	// Violations beyond the first MaxViolations.
	ViolationsOmitted int `json:"violations_omitted,omitempty"`

	// LongestWait is the longest wait measured for liveness and
	// LongestWaitClient the client that waited it (empty if nobody waited).
	LongestWait       time.Duration `json:"longest_wait"`
	LongestWaitClient string        `json:"longest_wait_client"`
	// LivenessFrom is the start of the first fault-free window long enough
	// to judge liveness (see CheckLiveness), 0 if none.
	LivenessFrom sim.Time `json:"liveness_from"`
	// LivenessWindows are the fault-free windows in which liveness was
	// judged.
	LivenessWindows []Window `json:"liveness_windows,omitempty"`
	// LivenessNote says how liveness was judged, or why it was not.
	LivenessNote string `json:"liveness_note,omitempty"`

	// Stats are the run's numbers (grants, sections, attempts, latency,
	// unavailability, writes, sales: stats.go).
	Stats Stats `json:"stats"`
	// Vacuous says, one sentence each, where a verdict had little or
	// nothing to judge: a safety property not used for want of a grant or
	// a section, a lock safety that holds over a single grant (Vacuity).
	Vacuous []string `json:"vacuous,omitempty"`

	// Fencing tells, when the lock failed but the resource stayed safe, how
	// fencing saved it (or that no write conflicted).
	Fencing string `json:"fencing,omitempty"`

	// HistoryErr is set when the history cannot be interpreted (see
	// ValidateHistory, a *HistoryError): then nothing was judged and every
	// verdict is Unknown.
	HistoryErr error `json:"-"`

	// Pages are porcupine's visualizations of the illegal histories
	// (Options.Visualize), in PageNames order, and VisualizationErr the
	// first error met drawing them.
	Pages            []Page `json:"-"`
	VisualizationErr error  `json:"-"`
}

// Page is one HTML page of porcupine's visualization: its file name in a
// report folder and its bytes.
type Page struct {
	Name string
	HTML []byte
}

// The file names of porcupine's pages in a report: the one place they are
// spelled.
const (
	PageLock     = "lock.html"
	PageResource = "resource.html"
)

// PageNames are the pages a report may hold, in report order.
var PageNames = []string{PageLock, PageResource}

// PageOf returns the HTML of the named page, nil when there is none.
func PageOf(pages []Page, name string) []byte {
	for _, p := range pages {
		if p.Name == name {
			return p.HTML
		}
	}
	return nil
}

// MaxViolations is how many violations a Result lists in full: a long run
// that keeps failing (a lock broken every cycle for hours) would otherwise
// print one explanation per cycle. The rest are counted in
// ViolationsOmitted. The visualizations annotate every violation.
const MaxViolations = 100

// Check judges a history: each registered property in registry order
// (lock safety and resource safety with porcupine, liveness and token
// order directly), and explains every violation in words. A nil history
// is an empty one. A history that breaks the invariants of ValidateHistory
// is not judged: Result.HistoryErr names the offending records and every
// verdict is Unknown.
func Check(h *sim.History, opts Options) Result {
	h = orEmpty(h)
	if err := ValidateHistory(h); err != nil {
		return Result{Verdicts: allUnknown(), HistoryErr: err}
	}
	var r Result
	var pages []*page
	var lockViolations []Violation
	js := make([]Judgement, len(registry))
	for i, p := range registry {
		js[i] = p.Judge(h, opts)
	}
	for i, p := range registry {
		j := js[i]
		if j.explain != nil {
			vs, pg := j.explain()
			j.Violations, j.page = append(vs, j.Violations...), pg
		}
		js[i] = Judgement{}
		name := p.About().Name
		r.add(name, j)
		if j.page != nil {
			pages = append(pages, j.page)
		}
		if name == LockSafety {
			lockViolations = j.Violations
		}
	}
	if r.Verdicts.Of(LockSafety) == Violated && r.Verdicts.Of(ResourceSafety) == Holds {
		r.Fencing = fencingStory(h, lockViolations)
	}
	if n := len(r.Violations) - MaxViolations; n > 0 {
		r.Violations, r.ViolationsOmitted = r.Violations[:MaxViolations:MaxViolations], n
	}
	r.Stats = StatsOf(h)
	r.Vacuous = Vacuity(r.Verdicts, r.Stats)
	if opts.Visualize {
		for _, pg := range pages {
			r.visualize(pg.piece, pg.rows, h, pg.vs, pg.file)
		}
	}
	return r
}

// add records a property's judgement in r.
func (r *Result) add(name string, j Judgement) {
	r.Verdicts = append(r.Verdicts, Judged{Property: name, Verdict: j.Verdict})
	r.Violations = append(r.Violations, j.Violations...)
	if j.details != nil {
		j.details(r)
	}
}

// visualize draws porcupine's visualization of the illegal piece p as the
// page name, with a note saying which piece it is, h's faults and the given
// violations that touch the piece as annotations, and its client rows
// labelled with rows (the client names in porcupine client id order), and
// records the page or the error in r. Showing one piece, not the whole
// history, keeps the page
// (and porcupine's work to draw it) the size of the piece.
func (r *Result) visualize(p pieceCheck, rows []string, h *sim.History, vs []Violation, name string) {
	info := p.info
	info.AddAnnotations(append([]porcupine.Annotation{p.pieceNote()}, annotations(h, vs, p.from, p.to)...))
	var page bytes.Buffer
	if err := porcupine.Visualize(p.model, info, &page); err != nil {
		if r.VisualizationErr == nil {
			r.VisualizationErr = fmt.Errorf("checker: drawing %s: %w", name, err)
		}
		return
	}
	r.Pages = append(r.Pages, Page{Name: name, HTML: labelRows(canonicalData(page.Bytes()), rows)})
}

// canonicalData makes porcupine's page the same bytes on every run.
// Porcupine (v1.3.1, visualization.go computeVisualizationData) lists each
// partition's partial linearizations in the order it walks a Go map, so
// the page's "data" differed between two runs of the same seed. It sorts
// them, and points each operation's "Largest" at the longest partial
// linearization that contains it, the first in sorted order on a tie, as
// porcupine means it to. If the page does not have the expected shape, it
// is left as porcupine wrote it.
func canonicalData(page []byte) []byte {
	const prefix = "const data = "
	i := bytes.Index(page, []byte(prefix))
	if i < 0 || bytes.Count(page, []byte(prefix)) != 1 {
		return page
	}
	start := i + len(prefix)
	end := bytes.IndexByte(page[start:], '\n')
	if end < 0 {
		return page
	}
	line := bytes.TrimSpace(page[start : start+end])
	semi := bytes.HasSuffix(line, []byte(";"))
	line = bytes.TrimSuffix(line, []byte(";"))
	var data map[string]json.RawMessage
	if json.Unmarshal(line, &data) != nil {
		return page
	}
	type step struct {
		Index            int
		StateDescription string
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(data["Partitions"], &parts) != nil {
		return page
	}
	for _, p := range parts {
		var lins [][]step
		if json.Unmarshal(p["PartialLinearizations"], &lins) != nil {
			return page
		}
		key := func(l []step) string {
			b, _ := json.Marshal(l)
			return string(b)
		}
		sort.SliceStable(lins, func(a, b int) bool { return key(lins[a]) < key(lins[b]) })
		largest := map[string]int{}
		for li, l := range lins {
			for _, st := range l {
				k := strconv.Itoa(st.Index)
				if cur, ok := largest[k]; !ok || len(l) > len(lins[cur]) {
					largest[k] = li
				}
			}
		}
		lb, err1 := json.Marshal(lins)
		gb, err2 := json.Marshal(largest) // encoding/json sorts map keys
		if err1 != nil || err2 != nil {
			return page
		}
		p["PartialLinearizations"], p["Largest"] = lb, gb
	}
	pb, err := json.Marshal(parts)
	if err != nil {
		return page
	}
	data["Partitions"] = pb
	out, err := json.Marshal(data)
	if err != nil {
		return page
	}
	if semi {
		out = append(out, ';')
	}
	var b bytes.Buffer
	b.Write(page[:start])
	b.Write(out)
	b.Write(page[start+end:])
	return b.Bytes()
}

// Porcupine's visualization (v1.3.1, visualization/index.js) labels the
// rows of the clients with their ids: "0", "1". labelRows makes it show the
// client names: it declares them as a JSON array at the top of the script
// and looks them up where the labels are computed. The labels are set with
// textContent there, so a name is never parsed as HTML; JSON encoding
// escapes '<', '>' and '&', so a name cannot end the script either. If the
// script does not have the expected shape (another porcupine version), the
// page is left as porcupine wrote it.
func labelRows(page []byte, rows []string) []byte {
	const (
		anchor = "const SVG_NS = 'http://www.w3.org/2000/svg'"
		label1 = "i < realClients ? i.toString() : sortedTags[i - realClients]"
		label2 = "i < realClients ? i : sortedTags[i - realClients]"
	)
	if bytes.Count(page, []byte(anchor)) != 1 || bytes.Count(page, []byte(label1)) != 1 || bytes.Count(page, []byte(label2)) != 1 {
		return page
	}
	names, err := json.Marshal(rows)
	if err != nil {
		return page
	}
	out := bytes.Replace(page, []byte(anchor), []byte(anchor+"\nconst LOCKSIM_ROWS = "+string(names)), 1)
	out = bytes.Replace(out, []byte(label1), []byte("i < realClients ? (LOCKSIM_ROWS[i] ?? i.toString()) : sortedTags[i - realClients]"), 1)
	out = bytes.Replace(out, []byte(label2), []byte("i < realClients ? (LOCKSIM_ROWS[i] ?? i) : sortedTags[i - realClients]"), 1)
	return out
}

// annotations draws h's faults (tag "faults") and vs (tag "violations")
// that meet the span [from, to] of the piece shown.
func annotations(h *sim.History, vs []Violation, from, to sim.Time) []porcupine.Annotation {
	var as []porcupine.Annotation
	for _, f := range h.Faults {
		end := effectEnd(f)
		if end == sim.Never || end > h.End {
			end = h.End
		}
		if end < from || f.At > to {
			continue
		}
		details := f.Text
		if len(f.Targets) > 0 {
			details += " (" + joinAnd(f.Targets) + ")"
		}
		as = append(as, porcupine.Annotation{
			Tag:             "faults",
			Start:           int64(f.At),
			End:             int64(end),
			Description:     f.Kind,
			Details:         details,
			BackgroundColor: "#ffd8a8",
		})
	}
	for _, v := range vs {
		for _, w := range v.Windows {
			if w.End < from || w.Start > to {
				continue
			}
			as = append(as, porcupine.Annotation{
				Tag:             "violations",
				Start:           int64(w.Start),
				End:             int64(w.End),
				Description:     v.Kind,
				Details:         v.Explanation,
				BackgroundColor: "#ffa8a8",
			})
		}
	}
	return as
}

// linearize runs porcupine, always with a timeout, unless an exact
// shortcut decides the operations without its search (sequential.go).
// Verbose runs (which only illegal pieces get) always go to porcupine and
// also return the information a visualization needs. It is a variable so
// that tests can observe the timeout Check passes.
var linearize = func(model porcupine.Model, ops []porcupine.Operation, timeout time.Duration, verbose bool) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	if verbose {
		return porcupine.CheckOperationsVerbose(model, ops, timeout)
	}
	if res, ok := fastVerdict(model, ops); ok {
		return res, porcupine.LinearizationInfo{}
	}
	return porcupine.CheckOperationsTimeout(model, ops, timeout), porcupine.LinearizationInfo{}
}

// verdictOf maps porcupine's result to a verdict. Anything but Ok and
// Illegal, a timeout in particular, is Unknown.
func verdictOf(r porcupine.CheckResult) Verdict {
	switch r {
	case porcupine.Ok:
		return Holds
	case porcupine.Illegal:
		return Violated
	default:
		return Unknown
	}
}

// withDefault returns timeout, or DefaultTimeout if it is not positive.
// Porcupine reads a zero timeout as "no limit", which the checker never uses.
func withDefault(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return DefaultTimeout
	}
	return timeout
}

// orEmpty returns h, or an empty history if h is nil.
func orEmpty(h *sim.History) *sim.History {
	if h == nil {
		return &sim.History{}
	}
	return h
}

// partitionBy returns a porcupine partition function grouping operations by
// key, partitions in key order and operations in their original order.
func partitionBy(key func(porcupine.Operation) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(ops []porcupine.Operation) [][]porcupine.Operation {
		index := map[string]int{}
		var keys []string
		var parts [][]porcupine.Operation
		for _, op := range ops {
			k := key(op)
			i, ok := index[k]
			if !ok {
				i = len(parts)
				index[k] = i
				keys = append(keys, k)
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		order := make([]int, len(parts))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
		sorted := make([][]porcupine.Operation, len(parts))
		for i, j := range order {
			sorted[i] = parts[j]
		}
		return sorted
	}
}

// clientIDs maps each of the sorted names to its index, the porcupine client
// id (zero-based, as visualizations need).
func clientIDs(sortedNames []string) map[string]int {
	ids := make(map[string]int, len(sortedNames))
	for i, n := range sortedNames {
		ids[n] = i
	}
	return ids
}

// uniqueSorted sorts names and removes duplicates, in place.
func uniqueSorted(names []string) []string {
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	return out
}
