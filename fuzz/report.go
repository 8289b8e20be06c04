package fuzz

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
)

// Title and Source of a finding's scenario file.
func findingTitle(res *Result, f *Finding) string {
	return fmt.Sprintf("%s finding %d on %s: %s violated", res.command(), f.Number, res.Base, strings.Join(f.Kinds, " and "))
}

func findingSource(res *Result, f *Finding) string {
	if res.Command == "explore" {
		return fmt.Sprintf("simrun explore %s, schedule %d (seed %d)", res.Base, f.Run, f.Seed)
	}
	return fmt.Sprintf("simrun fuzz %s --seed %d, run %d (run seed %d)", res.Base, res.Seed, f.Run, f.Seed)
}

// FindingFile is the file name of finding n.
func FindingFile(n int) string { return fmt.Sprintf("finding-%d.yaml", n) }

// ShrunkFile is the file name of finding n, shrunk.
func ShrunkFile(n int) string { return fmt.Sprintf("finding-%d.shrunk.yaml", n) }

// ReplayCommand is the command that replays a scenario file at a seed.
func ReplayCommand(file string, seed uint64) string {
	return fmt.Sprintf("simrun run %s --seed %d", file, seed)
}

// FindingScenario returns the scenario of a finding: the base with the
// finding's schedule, its run seed as the default seed, and an expect block
// claiming what it violated, so that simrun run of it exits 0 while it
// reproduces.
func FindingScenario(base *scenarios.Scenario, res *Result, f *Finding) (*scenarios.Scenario, error) {
	return Variant(base, f.Faults, f.Kinds, f.Seed, findingTitle(res, f), findingSource(res, f))
}

// findingHeader is the comment at the top of a finding's file.
func findingHeader(res *Result, f *Finding, file string) []string {
	return []string{
		fmt.Sprintf("simrun %s finding %d: campaign seed %d, run %d, run seed %d, base %s.", res.command(), f.Number, res.Seed, f.Run, f.Seed, res.Base),
		fmt.Sprintf("Verdicts: %s (checked: %s).", verdictsText(f.Verdicts), strings.Join(res.Checks, ", ")),
		"Swarm: " + f.Swarm.String() + ".",
		"Explanation: " + f.Explanation,
		"Replay: " + ReplayCommand(file, f.Seed) + " (exits 0 while it reproduces).",
		"",
	}
}

// ShrinkFindings shrinks the kept findings of res on workers goroutines
// (each shrink is sequential and deterministic), keeping each finding's
// kind violated. It stops early when ctx is done; findings not shrunk by
// then keep Shrunk nil. Errors (a finding that does not reproduce) are
// returned joined, after every shrink has finished.
func ShrinkFindings(ctx context.Context, base *scenarios.Scenario, res *Result, workers int, opt ShrinkOptions) error {
	var todo []*Finding
	for _, f := range res.Findings {
		if f.Kept {
			todo = append(todo, f)
		}
	}
	if workers <= 0 {
		workers = 1
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(todo))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(todo) {
					return
				}
				f := todo[i]
				s, err := FindingScenario(base, res, f)
				if err != nil {
					errs[i] = fmt.Errorf("finding %d: %v", f.Number, err)
					continue
				}
				o := opt
				o.Kind = f.Kind()
				r, err := Shrink(s, f.Seed, o)
				if err != nil {
					errs[i] = fmt.Errorf("finding %d: %v", f.Number, err)
					continue
				}
				f.Shrunk = r
			}
		}()
	}
	wg.Wait()
	var msgs []string
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return nil
}

// ShrunkScenario returns the scenario of a shrink result: the shrunk
// scenario with an expect block claiming the kept violation, the shrink's
// seed as its default seed, and the given title and source.
func ShrunkScenario(r *ShrinkResult, title, source string) (*scenarios.Scenario, error) {
	return Variant(r.Scenario, r.After, []string{r.Kind}, r.Seed, title, source)
}

// FindingPatterns match the files WriteFindings writes (for
// outdir.Dir.RemoveStale).
var FindingPatterns = []string{"finding-*.yaml"}

// WriteFindings writes the kept findings of res into d as finding-N.yaml,
// and their shrunk versions as finding-N.shrunk.yaml (each atomically,
// never through a planted symlink), setting File and ShrunkFile.
func WriteFindings(d *outdir.Dir, base *scenarios.Scenario, res *Result) error {
	dir := d.Path()
	for _, f := range res.Findings {
		if !f.Kept {
			continue
		}
		s, err := FindingScenario(base, res, f)
		if err != nil {
			return fmt.Errorf("finding %d: %v", f.Number, err)
		}
		path := filepath.Join(dir, FindingFile(f.Number))
		data, err := FileBytes(s, findingHeader(res, f, path))
		if err != nil {
			return err
		}
		if err := d.WriteFile(FindingFile(f.Number), data); err != nil {
			return err
		}
		f.File = path
		if f.Shrunk == nil {
			continue
		}
		spath := filepath.Join(dir, ShrunkFile(f.Number))
		title := fmt.Sprintf("%s finding %d on %s, shrunk: %s violated", res.command(), f.Number, res.Base, f.Shrunk.Kind)
		ss, err := ShrunkScenario(f.Shrunk, title, findingSource(res, f)+", shrunk")
		if err != nil {
			return fmt.Errorf("finding %d, shrunk: %v", f.Number, err)
		}
		head := []string{
			fmt.Sprintf("simrun %s finding %d, shrunk: campaign seed %d, run %d, run seed %d, base %s.", res.command(), f.Number, res.Seed, f.Run, f.Seed, res.Base),
			fmt.Sprintf("Verdicts: %s.", verdictsText(f.Shrunk.Outcome.Verdicts)),
		}
		head = append(head, f.Shrunk.Header()...)
		head = append(head, "Replay: "+ReplayCommand(spath, f.Seed)+" (exits 0 while it reproduces).", "")
		data, err = FileBytes(ss, head)
		if err != nil {
			return err
		}
		if err := d.WriteFile(ShrunkFile(f.Number), data); err != nil {
			return err
		}
		f.ShrunkFile = spath
	}
	return nil
}

// replay returns the replay command of a finding, or how to get one.
func replay(f *Finding) string {
	if f.File != "" {
		return ReplayCommand(f.File, f.Seed)
	}
	return "(no file written: raise --keep or pass --out)"
}

// WriteSummary prints what a campaign found, grouped by kind.
func WriteSummary(w io.Writer, res *Result) {
	fmt.Fprintf(w, "fuzz %s: %d runs, campaign seed %d, faults %s, checking %s\n",
		res.Base, res.Runs, res.Seed, strings.Join(res.Kinds, ","), strings.Join(res.Checks, ", "))
	if len(res.Findings) == 0 {
		fmt.Fprintf(w, "no violation found in %d runs\n", res.Runs)
	} else {
		fmt.Fprintf(w, "found %d violating runs in %d runs\n", len(res.Findings), res.Runs)
	}
	byKind := res.ByKind()
	for _, kind := range Properties() {
		n := byKind[kind]
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %d runs\n", kind, n)
		shown, hidden := 0, 0
		for _, f := range res.Findings {
			if f.Kind() != kind {
				continue
			}
			if !f.Kept {
				hidden++
				continue
			}
			shown++
			fmt.Fprintf(w, "  finding %d: run %d, seed %d, %d faults (%s)\n", f.Number, f.Run, f.Seed, len(f.Faults), strings.Join(f.Kinds, ", "))
			if f.Explanation != "" {
				fmt.Fprintf(w, "    %s\n", f.Explanation)
			}
			fmt.Fprintf(w, "    replay: %s\n", replay(f))
			if f.Shrunk != nil {
				fmt.Fprintf(w, "    %s:\n", f.Shrunk.Summary())
				for _, s := range f.Shrunk.After {
					fmt.Fprintf(w, "      - %s\n", s)
				}
				if f.ShrunkFile != "" {
					fmt.Fprintf(w, "    replay shrunk: %s\n", ReplayCommand(f.ShrunkFile, f.Seed))
				}
			}
		}
		if hidden > 0 {
			fmt.Fprintf(w, "  ... and %d more runs (runs:", hidden)
			k := 0
			for _, f := range res.Findings {
				if f.Kind() == kind && !f.Kept {
					if k == 10 {
						fmt.Fprint(w, " ...")
						break
					}
					fmt.Fprintf(w, " %d", f.Run)
					k++
				}
			}
			fmt.Fprintln(w, "; raise --keep to write them)")
		}
	}
	if groups := Groups(res); len(groups) > 0 {
		fmt.Fprintf(w, "\n%d distinct signatures among the shrunk findings (property: the fault kinds and targets that remain):\n", len(groups))
		for _, g := range groups {
			nums := make([]string, len(g.Findings))
			for i, n := range g.Findings {
				nums[i] = fmt.Sprint(n)
			}
			fmt.Fprintf(w, "  %s: %s (findings %s)\n", g.Kind, g.Signature, strings.Join(nums, ", "))
		}
		writeInterchangeable(w, res.Symmetry)
	}
	if len(res.Inconclusive) > 0 {
		fmt.Fprintf(w, "\ninconclusive (a checker timeout) in %d runs, first: run %d seed %d\n", len(res.Inconclusive), res.Inconclusive[0].Run, res.Inconclusive[0].Seed)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "\nrun %d (seed %d) failed: %s\n", e.Run, e.Seed, e.Err)
	}
}

// writeInterchangeable names the classes of interchangeable processes
// under a list of groups, if there are any.
func writeInterchangeable(w io.Writer, y *Symmetry) {
	if cs := y.Classes(); len(cs) > 0 {
		fmt.Fprintf(w, "  (signatures that differ only by interchangeable processes group together: %s)\n", classesText(cs))
	}
}

// classesText renders symmetry classes as "{A B C D E} {c1 c2}".
func classesText(cs [][]string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = "{" + strings.Join(c, " ") + "}"
	}
	return strings.Join(parts, " ")
}

// JSONResult is the --json form of a campaign.
type JSONResult struct {
	Base         string         `json:"base"`
	CampaignSeed uint64         `json:"campaign_seed"`
	SeedFormula  string         `json:"seed_formula"`
	Runs         int            `json:"runs"`
	Faults       []string       `json:"faults"`
	Checks       []string       `json:"checks"`
	Found        int            `json:"found"`
	ByKind       map[string]int `json:"by_kind"`
	Findings     []JSONFinding  `json:"findings"`
	Signatures   []Group        `json:"signatures"`
	// Interchangeable are the base's classes of interchangeable
	// processes (Symmetry), by which the signatures are grouped.
	Interchangeable [][]string `json:"interchangeable,omitempty"`
	Inconclusive    []RunRef   `json:"inconclusive"`
	Errors          []RunError `json:"errors"`
}

// JSONFinding is one finding in JSONResult.
type JSONFinding struct {
	Number int      `json:"number"`
	Run    int      `json:"run"`
	Seed   uint64   `json:"seed"`
	Kinds  []string `json:"kinds"`
	// Verdicts are written as keys of the finding, before explanation
	// ("lock_safety": "violated", ...).
	Verdicts    checker.Verdicts `json:"-"`
	Explanation string           `json:"explanation"`
	Swarm       string           `json:"swarm"`
	Faults      []string         `json:"faults"`
	File        string           `json:"file,omitempty"`
	Replay      string           `json:"replay,omitempty"`
	Shrunk      *JSONShrunk      `json:"shrunk,omitempty"`
}

type jsonFinding JSONFinding

// MarshalJSON writes the verdicts as keys of the finding.
func (f JSONFinding) MarshalJSON() ([]byte, error) {
	return checker.FlatJSON(jsonFinding(f), f.Verdicts, "explanation")
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *JSONFinding) UnmarshalJSON(b []byte) error {
	var plain jsonFinding
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	vs, err := checker.ReadFlat(b)
	*f = JSONFinding(plain)
	f.Verdicts = vs
	return err
}

// JSONShrunk is a shrunk finding in JSONFinding.
type JSONShrunk struct {
	File     string   `json:"file,omitempty"`
	Replay   string   `json:"replay,omitempty"`
	Faults   []string `json:"faults"`
	Duration string   `json:"duration"`
	Removed  []string `json:"removed"`
	Changed  []string `json:"changed"`
	Runs     int      `json:"candidate_runs"`
}

// SeedFormula documents RunSeed for reports.
const SeedFormula = "run seed = splitmix64(campaign_seed + (run+1) * 0x9e3779b97f4a7c15); the run's simulation seed is the run seed and its schedule is drawn from stream \"fuzz-schedule\" of it"

func specStrings(specs []faults.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.String()
	}
	return out
}

// JSON returns the machine-readable form of res.
func JSON(res *Result) JSONResult {
	j := JSONResult{
		Base: res.Base, CampaignSeed: res.Seed, SeedFormula: SeedFormula, Runs: res.Runs,
		Faults: res.Kinds, Checks: res.Checks, Found: len(res.Findings), ByKind: res.ByKind(),
		Findings: []JSONFinding{}, Signatures: Groups(res), Inconclusive: res.Inconclusive, Errors: res.Errors,
		Interchangeable: res.Symmetry.Classes(),
	}
	if j.Signatures == nil {
		j.Signatures = []Group{}
	}
	if j.Inconclusive == nil {
		j.Inconclusive = []RunRef{}
	}
	if j.Errors == nil {
		j.Errors = []RunError{}
	}
	for _, f := range res.Findings {
		jf := JSONFinding{
			Number: f.Number, Run: f.Run, Seed: f.Seed, Kinds: f.Kinds,
			Verdicts:    f.Verdicts,
			Explanation: f.Explanation, Swarm: f.Swarm.String(), Faults: specStrings(f.Faults), File: f.File,
		}
		if f.File != "" {
			jf.Replay = ReplayCommand(f.File, f.Seed)
		}
		if r := f.Shrunk; r != nil {
			jf.Shrunk = &JSONShrunk{
				File: f.ShrunkFile, Faults: specStrings(r.After), Duration: r.DurationAfter.String(),
				Removed: r.Removed, Changed: r.Changed, Runs: r.Runs,
			}
			if f.ShrunkFile != "" {
				jf.Shrunk.Replay = ReplayCommand(f.ShrunkFile, f.Seed)
			}
		}
		j.Findings = append(j.Findings, jf)
	}
	return j
}

// WriteJSON writes res as one indented JSON object.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(JSON(res))
}

// JUnit XML (the schema Jenkins, GitLab, GitHub test reporters and
// CircleCI read): one testsuite, one testcase per violating run with a
// failure, or one passing testcase when nothing was found.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Errors  int          `xml:"errors,attr"`
	Time    string       `xml:"time,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name   string      `xml:"name,attr"`
	Tests  int         `xml:"tests,attr"`
	Fails  int         `xml:"failures,attr"`
	Errors int         `xml:"errors,attr"`
	Time   string      `xml:"time,attr"`
	Props  []junitProp `xml:"properties>property"`
	Cases  []junitCase `xml:"testcase"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes res as JUnit XML: one failing test case per violating
// run (named by run and seed, with the faults and the replay command), one
// erroring test case per run that could not run, and a passing test case
// when nothing was found.
func WriteJUnit(w io.Writer, res *Result) error {
	suite := junitSuite{
		Name: "simrun fuzz " + res.Base,
		Props: []junitProp{
			{"campaign_seed", fmt.Sprint(res.Seed)},
			{"runs", fmt.Sprint(res.Runs)},
			{"faults", strings.Join(res.Kinds, ",")},
			{"checks", strings.Join(res.Checks, ",")},
		},
	}
	for _, p := range res.Props {
		suite.Props = append(suite.Props, junitProp{p.Name, p.Value})
	}
	class := "simrun.fuzz." + res.Base
	// The campaign's wall time: the suite's, the passing case's; a run's
	// own time is not kept, so a violating run's case gets the mean.
	total := fmt.Sprintf("%.3f", res.Elapsed.Seconds())
	perRun := "0.000"
	if res.Runs > 0 {
		perRun = fmt.Sprintf("%.3f", res.Elapsed.Seconds()/float64(res.Runs))
	}
	suite.Time = total
	for _, f := range res.Findings {
		var body strings.Builder
		fmt.Fprintf(&body, "run %d, seed %d: %s\n", f.Run, f.Seed, verdictLine(f))
		if f.Explanation != "" {
			fmt.Fprintf(&body, "%s\n", f.Explanation)
		}
		fmt.Fprintf(&body, "faults:\n")
		for _, s := range f.Faults {
			fmt.Fprintf(&body, "  - %s\n", s)
		}
		fmt.Fprintf(&body, "replay: %s\n", replay(f))
		if f.Shrunk != nil {
			fmt.Fprintf(&body, "%s:\n", f.Shrunk.Summary())
			for _, s := range f.Shrunk.After {
				fmt.Fprintf(&body, "  - %s\n", s)
			}
			if f.ShrunkFile != "" {
				fmt.Fprintf(&body, "replay shrunk: %s\n", ReplayCommand(f.ShrunkFile, f.Seed))
			}
		}
		suite.Cases = append(suite.Cases, junitCase{
			Name:      fmt.Sprintf("run %d seed %d: %s violated", f.Run, f.Seed, f.Kind()),
			Classname: class + "." + f.Kind(),
			Time:      perRun,
			Failure:   &junitFailure{Message: f.Kind() + " violated: " + firstLine(f.Explanation), Type: f.Kind(), Body: body.String()},
		})
		suite.Fails++
	}
	for _, e := range res.Errors {
		suite.Cases = append(suite.Cases, junitCase{
			Name:      fmt.Sprintf("run %d seed %d: error", e.Run, e.Seed),
			Classname: class + ".error",
			Time:      perRun,
			Error:     &junitFailure{Message: firstLine(e.Err), Type: "error", Body: e.Err},
		})
		suite.Errors++
	}
	if len(res.Findings) == 0 && len(res.Errors) == 0 {
		suite.Cases = append(suite.Cases, junitCase{
			Name:      fmt.Sprintf("%d runs: no violation of %s", res.Runs, strings.Join(res.Checks, ", ")),
			Classname: class,
			Time:      total,
		})
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "simrun fuzz", Tests: suite.Tests, Fails: suite.Fails, Errors: suite.Errors, Time: total, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func verdictLine(f *Finding) string {
	return verdictsText(f.Verdicts)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
