package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

func newListCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios with their expected verdicts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := scenarios.Catalogue()
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			w := cmd.OutOrStdout()
			if jsonOut {
				return listJSON(w, cat)
			}
			width := 0
			for _, s := range cat {
				if len(s.Name) > width {
					width = len(s.Name)
				}
			}
			for _, s := range cat {
				fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Title)
				fmt.Fprintf(w, "%-*s  expect: %s\n", width, "", expectText(s.Expect))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print a JSON array (name, title, source, duration, seed, expect)")
	return cmd
}

// listEntry is one scenario of simrun list --json.
type listEntry struct {
	Name     string            `json:"name"`
	Title    string            `json:"title"`
	Source   string            `json:"source,omitempty"`
	Duration string            `json:"duration"`
	Seed     uint64            `json:"seed"`
	Expect   map[string]string `json:"expect"`
}

func listJSON(w io.Writer, cat []*scenarios.Scenario) error {
	out := make([]listEntry, 0, len(cat))
	for _, s := range cat {
		e := listEntry{Name: s.Name, Title: s.Title, Source: s.Source, Duration: s.Duration.String(), Seed: s.Seed, Expect: map[string]string{}}
		for _, j := range s.Expect.Expected() {
			e.Expect[j.Property] = string(j.Verdict)
		}
		if s.Expect.MaxWait > 0 {
			e.Expect["max_wait"] = s.Expect.MaxWait.String()
		}
		out = append(out, e)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// expectText says what e expects, property by property in registry order
// ("lock violated, liveness holds (max wait 20s)").
func expectText(e scenarios.Expect) string {
	var parts []string
	for _, p := range checker.Properties() {
		a := p.About()
		v := e.Of(a.Name)
		if v == "" {
			continue
		}
		l := a.Short + " " + string(v)
		if a.Name == checker.Liveness && e.MaxWait > 0 {
			l += " (max wait " + e.MaxWait.String() + ")"
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "no violation"
	}
	return strings.Join(parts, ", ")
}

// loadScenario resolves NAME|FILE, mapping every user error to exit 2.
func loadScenario(arg string) (*scenarios.Scenario, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return nil, badInput("%s is a directory, not a scenario file", arg)
	}
	s, err := scenarios.Load(arg)
	var nf *scenarios.NotFoundError
	if errors.As(err, &nf) {
		return nil, notFound(nf.Name)
	}
	if err != nil {
		return nil, withCode(exitBadInput, err)
	}
	return s, nil
}

type runFlags struct {
	seed     uint64
	seedSet  bool
	jsonOut  bool
	traceOut string
	outDir   string
	determ   bool
	events   int
	budget   budgetFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run NAME|FILE|DIR...",
		Short: "Run scenarios and check their verdicts",
		Long: `Run a built-in scenario (see simrun list) or a scenario file, print the key
events, the verdicts with their explanation and the trace hash.

With several names, files or a directory (its *.yaml and *.yml files), run
each and print a summary table; --out DIR then writes one report folder per
scenario under DIR, --json prints a JSON array.

Exit codes: 0 the verdicts match the scenario's expect block (or no violation
when it expects nothing), for every scenario run; 1 they do not; 2 bad input;
3 inconclusive; with several scenarios, the worst of their codes.`,
		Args:              minArgs(1, "NAME|FILE|DIR"),
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.seedSet = cmd.Flags().Changed("seed")
			return runCommand(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "seed of the run (default: the scenario's seed)")
	cmd.Flags().BoolVar(&f.jsonOut, "json", false, "print one JSON object instead of the summary")
	cmd.Flags().StringVar(&f.traceOut, "trace", "", "write the full trace as JSON Lines to this file")
	cmd.Flags().StringVar(&f.outDir, "out", "", "write the report (result.json, trace, checker visualizations) into this folder")
	cmd.Flags().BoolVar(&f.determ, "check-determinism", false, "run twice and compare the traces event by event")
	cmd.Flags().IntVar(&f.events, "events", defaultKeyEvents, "most key events the summary prints (0: all)")
	addBudgetFlags(cmd, &f.budget)
	return cmd
}

// exactArgs is cobra.ExactArgs with a message that names the argument.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return badInput("%s needs %s (got %d arguments)\n\n%s", cmd.CommandPath(), what, len(args), cmd.UsageString())
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a message that names the argument.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return badInput("%s needs %s (got %d arguments)\n\n%s", cmd.CommandPath(), what, len(args), cmd.UsageString())
		}
		return nil
	}
}

// runCommand runs one scenario (the detailed summary) or several (a table).
func runCommand(stdout, stderr io.Writer, args []string, f runFlags) error {
	if f.events < 0 {
		return badInput("--events must be 0 (all) or more, got %d", f.events)
	}
	if len(args) == 1 {
		if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
			return runScenario(stdout, stderr, args[0], f)
		}
	}
	return runMany(stdout, stderr, args, f)
}

// inputFile is the scenario file arg names, "" for a built-in.
func inputFile(arg string) string {
	if fileExists(arg) {
		return arg
	}
	return ""
}

func runScenario(stdout, stderr io.Writer, arg string, f runFlags) error {
	s, err := loadScenario(arg)
	if err != nil {
		return err
	}
	// Every output is checked before the run, so a long run does not end
	// in "cannot write" and never overwrites its own scenario.
	if f.traceOut != "" {
		if err := outdir.CheckOutputFile(f.traceOut, inputFile(arg)); err != nil {
			return badInput("--trace: %v", err)
		}
	}
	g := newOutputGuard(stderr)
	defer g.stop()
	var out *outdir.Dir
	if f.outDir != "" {
		if out, err = outdir.Prepare(f.outDir); err != nil {
			return badInput("--out: %v", err)
		}
		defer out.Close()
		g.track(out)
		if in := inputFile(arg); in != "" && sameDirEntry(out.Path(), in, runReportFiles) {
			return badInput("--out: %s would overwrite the scenario %s", out.Path(), in)
		}
	}
	// --trace alone streams the trace to its (staged) file as the run
	// goes; --out and --check-determinism need it in memory.
	var stream *traceStream
	if f.traceOut != "" && out == nil && !f.determ {
		if stream, err = stageTraceStream(g, f.traceOut); err != nil {
			return badInput("--trace: %v", err)
		}
		defer stream.dir.Close()
	}
	o, vis, note, keys, err := runOnce(s, f, out != nil, stream.sink())
	if err != nil {
		g.abort()
		return err
	}
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	if stream != nil {
		if err := stream.finish(g); err != nil {
			return badInput("--trace: %v", err)
		}
	} else if err := writeRunOutputs(g, s, o, vis, f.traceOut, out); err != nil {
		return err
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(o); err != nil {
			return withCode(exitInconclusive, err)
		}
	} else {
		printSummary(stdout, s, o, keys, f)
	}
	return outcomeCode(o)
}

// sameDirEntry reports whether the file in is one of names inside dir.
func sameDirEntry(dir, in string, names []string) bool {
	inAbs, _ := filepath.Abs(in)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if pAbs, _ := filepath.Abs(p); pAbs == inAbs || sameFile(p, in) {
			return true
		}
	}
	return false
}

// runOnce runs s with f's seed, checks determinism when asked, and returns
// the outcome with porcupine's visualization pages by file name (when
// visualize is set).
//
// The trace is kept only when something reads it: --trace, --out and
// --check-determinism. Otherwise only the key events the summary prints are
// kept as the run goes (keys), so that a long run's memory is its history,
// not its trace (issue 15: the trace is about 300 bytes an event, 70 events
// a Redlock cycle).
//
// A non-nil stream receives every event as it happens (--trace streamed to
// its file); then --trace does not need the trace kept.
func runOnce(s *scenarios.Scenario, f runFlags, visualize bool, stream func(*sim.Event)) (o *scenarios.Outcome, vis map[string][]byte, note string, keys *keyEvents, err error) {
	seed := s.Seed
	if f.seedSet {
		seed = f.seed
	}
	keep := visualize || (f.traceOut != "" && stream == nil) || f.determ
	keys = newKeyEvents(f.events)
	// Without --out nothing reads the whole history: it goes to the
	// checker in pieces as the run goes (issue 15).
	opt := scenarios.Options{KeepTrace: keep, Stream: !visualize}
	switch {
	case keep:
	case stream != nil:
		opt.TraceSink = func(e *sim.Event) {
			keys.add(e)
			stream(e)
		}
	default:
		opt.TraceSink = keys.add
	}
	if err := f.budget.apply(&opt); err != nil {
		return nil, nil, "", nil, err
	}
	if visualize {
		// The checker writes its pages into a private folder; they are
		// staged into --out with everything else.
		tmp, err := os.MkdirTemp("", "simrun-vis-")
		if err != nil {
			return nil, nil, "", nil, withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
		}
		defer os.RemoveAll(tmp)
		opt.OutDir = tmp
	}
	o, err = scenarios.Run(s, seed, opt)
	if err != nil {
		if berr := budgetError(err); berr != err {
			return nil, nil, "", nil, berr
		}
		return nil, nil, "", nil, withCode(exitInconclusive, fmt.Errorf("internal error running %s: %w", s.Name, err))
	}
	if keep {
		for i := range o.Trace {
			keys.add(&o.Trace[i])
		}
	}
	vis = map[string][]byte{}
	if visualize {
		for _, v := range []string{"lock.html", "resource.html"} {
			if b, err := os.ReadFile(filepath.Join(opt.OutDir, v)); err == nil {
				vis[v] = b
			}
		}
	}
	if f.determ {
		o2, err := scenarios.Run(s, seed, scenarios.Options{KeepTrace: true, MaxEvents: opt.MaxEvents, MaxMemory: opt.MaxMemory})
		if err != nil {
			return nil, nil, "", nil, withCode(exitInconclusive, fmt.Errorf("internal error in the second run: %w", err))
		}
		if i := sim.FirstDivergence(o.Trace, o2.Trace); i >= 0 || o.TraceHash != o2.TraceHash {
			return nil, nil, "", nil, withCode(exitMismatch, fmt.Errorf("determinism check failed: the two runs diverge at event #%d:\n  first:  %s\n  second: %s", i+1, eventAt(o.Trace, i), eventAt(o2.Trace, i)))
		}
		note = fmt.Sprintf("determinism check: two runs, %d identical events, trace hash %s", len(o.Trace), o.TraceHash)
	}
	return o, vis, note, keys, nil
}

// writeRunOutputs writes --trace and the --out report, all staged and
// committed together (see outputGuard).
func writeRunOutputs(g *outputGuard, s *scenarios.Scenario, o *scenarios.Outcome, vis map[string][]byte, traceOut string, out *outdir.Dir) error {
	if traceOut == "" && out == nil {
		return nil
	}
	fail := func(flag string, err error) error {
		g.abort()
		return badInput("%s: %v", flag, err)
	}
	if traceOut != "" {
		td, err := traceDir(traceOut)
		if err != nil {
			return fail("--trace", err)
		}
		defer td.Close()
		g.track(td)
		if err := g.stageTrace(td, filepath.Base(traceOut), o.Trace); err != nil {
			return fail("--trace", err)
		}
	}
	if out == nil {
		return g.commit(nil)
	}
	data, err := outcomeJSON(o)
	if err != nil {
		return fail("--out", err)
	}
	if err := g.stageBytes(out, "result.json", data); err != nil {
		return fail("--out", err)
	}
	if err := g.stageTrace(out, "trace.jsonl", o.Trace); err != nil {
		return fail("--out", err)
	}
	for _, v := range []string{"lock.html", "resource.html"} {
		if b, ok := vis[v]; ok {
			if err := g.stageBytes(out, v, b); err != nil {
				return fail("--out", err)
			}
		}
	}
	if err := stageRunReport(g, out, s, *o, o.Trace, sortedKeys(vis)); err != nil {
		g.abort()
		return err
	}
	if err := g.commit(func() error { return out.RemoveStale(runReportFiles...) }); err != nil {
		return badInput("--out: %v", err)
	}
	return nil
}

// traceDir prepares the folder of a --trace file (through symlinks in its
// parents: only the file itself must not be one, which CheckOutputFile saw).
func traceDir(path string) (*outdir.Dir, error) {
	parent, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return outdir.Prepare(parent)
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func outcomeCode(o *scenarios.Outcome) error {
	switch {
	case o.Inconclusive:
		return withCode(exitInconclusive, nil)
	case !o.Matched:
		return withCode(exitMismatch, nil)
	}
	return nil
}

func eventAt(tr []sim.Event, i int) string {
	if i < 0 || i >= len(tr) {
		return "(no event: the trace ended)"
	}
	e := tr[i]
	return fmt.Sprintf("#%d %s %s %s %s %s", e.Seq, e.At, e.Kind, e.Proc, e.Peer, e.Text)
}

// keyKinds are the trace kinds a summary shows.
var keyKinds = map[sim.Kind]bool{
	sim.KindAcquired: true, sim.KindReleased: true, sim.KindLockLost: true,
	sim.KindFault: true, sim.KindCrash: true, sim.KindRestart: true,
	"key-expired": true, "resource-applied": true, "resource-rejected": true,
	"promoted": true, "switch-master": true, "session-expired": true, "loaded": true,
}

// defaultKeyEvents is how many key events a summary prints by default: a
// screen. The rest are counted and found in the trace.
const defaultKeyEvents = 40

// keyEvents keeps what a summary prints of a trace, fed one event at a
// time: with a limit of max > 0, the first max-max/4 key events, the last
// max/4 and how many lay between (with their span); with max <= 0, all of
// them. Its memory is bounded by the limit, whatever the run's length.
type keyEvents struct {
	head, tail  int // head < 0: keep every key event in first
	first       []sim.Event
	last        []sim.Event // a ring of the latest tail events once full
	next        int         // the oldest event of last, once full
	omitted     int
	omittedFrom sim.Time
	omittedTo   sim.Time
}

func newKeyEvents(max int) *keyEvents {
	if max <= 0 {
		return &keyEvents{head: -1}
	}
	// The start and the end of the story; the middle is in the trace.
	return &keyEvents{head: max - max/4, tail: max / 4}
}

// add records e if it is a key event.
func (k *keyEvents) add(e *sim.Event) {
	if !keyKinds[e.Kind] || (e.Kind == "loaded" && e.At == 0) {
		return
	}
	if k.head < 0 || len(k.first) < k.head {
		k.first = append(k.first, *e)
		return
	}
	if len(k.last) < k.tail {
		k.last = append(k.last, *e)
		return
	}
	// The oldest of the tail falls into the omitted middle (with no tail,
	// e itself does).
	out := *e
	if k.tail > 0 {
		out = k.last[k.next]
		k.last[k.next] = *e
		k.next = (k.next + 1) % k.tail
	}
	if k.omitted == 0 {
		k.omittedFrom = out.At
	}
	k.omitted++
	k.omittedTo = out.At
}

// lastEvents returns the kept tail, oldest first.
func (k *keyEvents) lastEvents() []sim.Event {
	return append(append([]sim.Event(nil), k.last[k.next:]...), k.last[:k.next]...)
}

func printSummary(w io.Writer, s *scenarios.Scenario, o *scenarios.Outcome, keys *keyEvents, f runFlags) {
	if s.Title != "" {
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Title)
	} else {
		fmt.Fprintln(w, s.Name)
	}
	if s.Source != "" {
		fmt.Fprintf(w, "source: %s\n", s.Source)
	}
	fmt.Fprintf(w, "seed %d, %s of virtual time, %d events\n\n", o.Seed, o.VirtualTime, o.Events)
	fmt.Fprintln(w, "key events:")
	for _, e := range keys.first {
		printKeyEvent(w, e)
	}
	if keys.omitted > 0 {
		where := "--trace FILE or --out DIR"
		if f.traceOut != "" {
			where = f.traceOut
		} else if f.outDir != "" {
			where = filepath.Join(f.outDir, "trace.jsonl")
		}
		fmt.Fprintf(w, "  ... %d key events omitted (%s to %s); all of them: --events 0, the full trace: %s\n", keys.omitted, keys.omittedFrom, keys.omittedTo, where)
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
		line(title, j.Verdict, s.Expect.Of(j.Property))
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
	if o.LivenessNote != "" {
		fmt.Fprintf(w, "  liveness: %s\n", o.LivenessNote)
	}
	fmt.Fprintf(w, "\ntrace hash %s\n", o.TraceHash)
	verdict := "MATCHED the expected verdicts"
	if !o.Matched {
		verdict = "did NOT match the expected verdicts"
	}
	if o.Inconclusive {
		verdict = "INCONCLUSIVE (the checker timed out)"
	}
	fmt.Fprintf(w, "%s (replay: simrun run %s --seed %d)\n", verdict, scenarioArg(s.File, s.Name), o.Seed)
}

// scenarioArg is the NAME|FILE argument that loads a scenario again: its
// name for a built-in (its File, "catalogue/NAME.yaml", names no file a
// user has), its file otherwise.
func scenarioArg(file, name string) string {
	if file == "" || strings.HasPrefix(file, "catalogue/") {
		return name
	}
	return file
}

func newReplayCmd() *cobra.Command {
	var traceIn string
	cmd := &cobra.Command{
		Use:   "replay RESULT.json",
		Short: "Re-run the scenario and seed of a recorded result and check the trace hash",
		Long: `Re-run the scenario and seed recorded in a JSON result (simrun run --json or
--out) and compare the trace hash. A mismatch exits 1 and, when the recorded
trace is available (--trace, or trace.jsonl beside the result), names the
first diverging event.`,
		Args: exactArgs(1, "RESULT.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replay(cmd.OutOrStdout(), args[0], traceIn)
		},
	}
	cmd.Flags().StringVar(&traceIn, "trace", "", "the recorded trace (JSON Lines) to compare event by event")
	return cmd
}

func replay(w io.Writer, path, traceIn string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	var rec scenarios.Outcome
	if err := json.Unmarshal(data, &rec); err != nil {
		return withCode(exitBadInput, fmt.Errorf("%s: not a simrun result: %v", path, err))
	}
	if rec.Scenario == "" || rec.TraceHash == "" {
		return withCode(exitBadInput, fmt.Errorf("%s: not a simrun result (no scenario or trace_hash)", path))
	}
	s, err := loadScenario(scenarioArg(rec.File, rec.Scenario))
	if err != nil {
		return err
	}
	// A trace named on the command line must be the result's, whatever the
	// replay finds: checked first.
	var recorded []sim.Event
	if traceIn != "" {
		if recorded, err = readTraceOf(&rec, s, path, "--trace", traceIn); err != nil {
			return err
		}
	}
	o, err := scenarios.Run(s, rec.Seed, scenarios.Options{KeepTrace: true})
	if err != nil {
		return withCode(exitInconclusive, err)
	}
	if o.TraceHash == rec.TraceHash {
		fmt.Fprintf(w, "replay of %s seed %d: trace hash %s matches\n", rec.Scenario, rec.Seed, o.TraceHash)
		return nil
	}
	fmt.Fprintf(w, "replay of %s seed %d: trace hash %s differs from the recorded %s\n", rec.Scenario, rec.Seed, o.TraceHash, rec.TraceHash)
	if traceIn == "" {
		if p := filepath.Join(filepath.Dir(path), "trace.jsonl"); fileExists(p) {
			if recorded, err = readTraceOf(&rec, s, path, "trace", p); err != nil {
				fmt.Fprintf(w, "no event comparison: %v\n", err)
			}
		}
	}
	if recorded != nil {
		if i := sim.FirstDivergence(recorded, o.Trace); i >= 0 {
			fmt.Fprintf(w, "first diverging event #%d:\n  recorded: %s\n  now:      %s\n", i+1, eventAt(recorded, i), eventAt(o.Trace, i))
		}
	}
	return withCode(exitMismatch, errors.New("trace hash mismatch"))
}

func printKeyEvent(w io.Writer, e sim.Event) {
	fmt.Fprintf(w, "  %10s  %-6s %-16s %s\n", e.At, e.Proc, e.Kind, relativeWallTimes(e.Text))
}

// epochMillisRE matches a wall-clock reading in Unix milliseconds after an
// '=' (deadline=1767225610010, now=...), as the Redis model prints them.
var epochMillisRE = regexp.MustCompile(`=(-?\d{12,14})\b`)

// relativeWallTimes rewrites wall-clock readings in Unix milliseconds as
// seconds since the simulation's wall-clock origin (sim.Epoch, the true
// start): deadline=1767225610010 reads deadline=+10.010s. Numbers more than
// a year from the origin are left alone (they are not readings).
func relativeWallTimes(text string) string {
	const year = 366 * 24 * 3600 * 1000
	origin := sim.Epoch / int64(time.Millisecond)
	return epochMillisRE.ReplaceAllStringFunc(text, func(m string) string {
		v, err := strconv.ParseInt(m[1:], 10, 64)
		if err != nil || v < origin-year || v > origin+year {
			return m
		}
		d := v - origin
		sign := "+"
		if d < 0 {
			sign, d = "-", -d
		}
		return fmt.Sprintf("=%s%d.%03ds", sign, d/1000, d%1000)
	})
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
