package realmode

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/sentinel"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// TwinRun is the verdicts of one run beside the others.
type TwinRun struct {
	Seed uint64 `json:"seed"`
	// Verdicts are the run's verdicts, written as keys of the run in JSON
	// ("lock_safety": "holds", ...).
	Verdicts checker.Verdicts `json:"-"`
	// Agrees: a real run gave the simulator's verdicts, every one.
	Agrees      bool   `json:"agrees"`
	Explanation string `json:"explanation,omitempty"`
	// Report is the folder that holds the run's report.
	Report string `json:"report"`
	// Events are the run's Redis Cluster and Sentinel events (failure
	// detection, elections, promotions): the model's, or those real mode
	// read from the real servers (serverlog.go).
	Events []TwinEvent `json:"events,omitempty"`
}

// TwinEvent is one cluster or Sentinel event of a run, for the side by
// side comparison.
type TwinEvent struct {
	// At is the time since the run's start.
	At sim.Time `json:"t"`
	// Proc is the node (or sentinel) that recorded it.
	Proc string `json:"proc"`
	// What names the decision, the same for the model's event and the real
	// server's ("FAIL C2", "vote for C5", "promoted", "+odown B").
	What string `json:"what"`
	Text string `json:"text"`
}

type twinRun TwinRun

// MarshalJSON writes the verdicts as keys of the run, before agrees.
func (r TwinRun) MarshalJSON() ([]byte, error) {
	return checker.FlatJSON(twinRun(r), r.Verdicts, "agrees")
}

// TwinResult is the simulator's run and the real runs of one scenario.
type TwinResult struct {
	Scenario  string    `json:"scenario"`
	Simulator TwinRun   `json:"simulator"`
	Real      []TwinRun `json:"real"`
	// Agree: every real run agrees with the simulator.
	Agree bool `json:"agree"`
	// Inconclusive: a verdict of some run is unknown (checker timeout).
	Inconclusive bool `json:"inconclusive"`
}

func twinRow(o *scenarios.Outcome, report string) TwinRun {
	r := TwinRun{Seed: o.Seed, Verdicts: o.Verdicts, Report: report, Events: twinEvents(o.Trace)}
	for _, v := range o.Violations {
		if r.Explanation != "" {
			r.Explanation += "\n"
		}
		r.Explanation += v.Explanation
	}
	return r
}

// Twin runs s in the simulator on its seed and runs times in real mode on
// seeds s.Seed, s.Seed+1, ..., and compares the verdicts. Reports go
// to out/sim and out/real-seed-N (the report writer is the caller's: write
// is called with each folder and outcome). Errors are Run's.
func Twin(ctx context.Context, s *scenarios.Scenario, runs int, out string, write func(dir string, o *scenarios.Outcome) error) (*TwinResult, error) {
	return TwinWith(ctx, s, runs, out, write, Options{})
}

// TwinWith is Twin with the options of the real runs (Visualize is
// always set and Dir a fresh temporary directory per run,
// whatever opt says).
func TwinWith(ctx context.Context, s *scenarios.Scenario, runs int, out string, write func(dir string, o *scenarios.Outcome) error, opt Options) (*TwinResult, error) {
	if err := Check(s); err != nil {
		return nil, err
	}
	simDir := filepath.Join(out, "sim")
	if err := os.MkdirAll(simDir, 0o755); err != nil {
		return nil, err
	}
	so, err := scenarios.Run(s, s.Seed, scenarios.Options{KeepTrace: true, Visualize: true})
	if err != nil {
		return nil, fmt.Errorf("simulating %s: %w", s.Name, err)
	}
	if write != nil {
		if err := write(simDir, so); err != nil {
			return nil, err
		}
	}
	res := &TwinResult{Scenario: s.Name, Simulator: twinRow(so, simDir), Agree: true, Inconclusive: so.Inconclusive}
	for i := 0; i < runs; i++ {
		seed := s.Seed + uint64(i)
		dir := filepath.Join(out, fmt.Sprintf("real-seed-%d", seed))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		ro, err := Run(ctx, s, seed, Options{Visualize: true, CheckTimeout: opt.CheckTimeout, BeforeStart: opt.BeforeStart, serverStarted: opt.serverStarted})
		if err != nil {
			return nil, err
		}
		if write != nil {
			if err := write(dir, ro); err != nil {
				return nil, err
			}
		}
		row := twinRow(ro, dir)
		row.Agrees = slices.Equal(ro.Verdicts, so.Verdicts)
		res.Agree = res.Agree && row.Agrees
		res.Inconclusive = res.Inconclusive || ro.Inconclusive
		res.Real = append(res.Real, row)
	}
	res.Simulator.Agrees = res.Agree
	return res, nil
}

// WriteOutputs writes result.json (the outcome, as --json prints it
// for run), porcupine's pages of an illegal history and trace.jsonl into
// dir, each atomically and the folder marked incomplete until all are
// there and the pages of an earlier run are gone (outdir), so a killed
// simrun never leaves one run's result beside another's trace. simrun
// report DIR/result.json renders the HTML report from these files.
func WriteOutputs(dir string, o *scenarios.Outcome) error {
	data, err := o.JSON()
	if err != nil {
		return err
	}
	d, err := outdir.Claim(dir, fmt.Sprintf("simrun real %s seed %d", o.Scenario, o.Seed))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Begin(); err != nil {
		return err
	}
	if err := d.WriteFile("result.json", data); err != nil {
		return err
	}
	for _, p := range o.Pages {
		if err := d.WriteFile(p.Name, p.HTML); err != nil {
			return err
		}
	}
	fh, err := d.Create("trace.jsonl")
	if err != nil {
		return err
	}
	if err := sim.WriteJSONL(fh, o.Trace); err != nil {
		fh.Abort()
		return err
	}
	if err := fh.Commit(); err != nil {
		return err
	}
	if err := d.RemoveStale(checker.PageNames...); err != nil {
		return err
	}
	return d.Complete()
}

// WriteTwin prints simrun twin's table: the verdicts of the simulator and of
// each real run side by side, and the explanations when they disagree.
func WriteTwin(w io.Writer, s *scenarios.Scenario, res *TwinResult) {
	fmt.Fprintf(w, "%s: %s\n\n", s.Name, s.Title)
	props := checker.Properties()
	head := fmt.Sprintf("%-18s %-6s ", "run", "seed")
	for _, p := range props {
		head += fmt.Sprintf("%-12s ", p.About().Short)
	}
	fmt.Fprintln(w, head+"agrees")
	row := func(name string, r TwinRun, agrees string) {
		line := fmt.Sprintf("%-18s %-6d ", name, r.Seed)
		for _, p := range props {
			line += fmt.Sprintf("%-12s ", r.Verdicts.Of(p.About().Name))
		}
		fmt.Fprintln(w, line+agrees)
	}
	row("simulator", res.Simulator, "")
	for i, r := range res.Real {
		a := "yes"
		if !r.Agrees {
			a = "NO"
		}
		row(fmt.Sprintf("real #%d", i+1), r, a)
	}
	fmt.Fprintln(w)
	writeTwinEvents(w, res)
	if res.Agree {
		fmt.Fprintf(w, "every real run gives the simulator's verdicts; reports under %s\n", filepath.Dir(res.Simulator.Report))
		return
	}
	fmt.Fprintln(w, "real mode disagrees with the simulator:")
	fmt.Fprintf(w, "  simulator (report %s):\n    %s\n", res.Simulator.Report, twinText(res.Simulator.Explanation))
	for i, r := range res.Real {
		if !r.Agrees {
			fmt.Fprintf(w, "  real #%d, seed %d (report %s):\n    %s\n", i+1, r.Seed, r.Report, twinText(r.Explanation))
		}
	}
}

func twinText(s string) string {
	if s == "" {
		return "(no violation)"
	}
	return s
}

// twinEvents picks a run's cluster and Sentinel events out of its trace.
func twinEvents(tr []sim.Event) []TwinEvent {
	var out []TwinEvent
	for _, e := range tr {
		if what := eventWhat(e); what != "" {
			at := e.At
			if d, ok := e.Fields.Duration("logged"); ok && sim.Time(d) < at {
				at = sim.Time(d) // when the real server logged it (serverlog.go)
			}
			out = append(out, TwinEvent{At: at, Proc: e.Proc, What: what, Text: e.Text})
		}
	}
	return out
}

// eventWhat names the decision an event records, in the same words for
// the model's event and for the one read from a real server ("" for any
// other event).
func eventWhat(e sim.Event) string {
	str := func(k string) string { v, _ := e.Fields.String(k); return v }
	switch e.Kind {
	case redis.EventClusterPFail:
		return "PFAIL " + str("node")
	case redis.EventClusterFail:
		if e.Fields.Has("cleared") {
			return "FAIL cleared " + str("node")
		}
		return "FAIL " + str("node")
	case redis.EventClusterState:
		return "state " + str("state")
	case redis.EventClusterElection:
		switch {
		case e.Fields.Has("vote"):
			return "vote for " + str("vote")
		case e.Fields.Has("delay_ms"):
			return "election scheduled"
		default:
			return "election started"
		}
	case redis.EventClusterFailover:
		switch {
		case e.Fields.Has("config_epoch"):
			return "promoted"
		case e.Fields.Has("new_master"):
			return "replica of " + str("new_master")
		default:
			return e.Text
		}
	case sentinel.KindSwitchMaster:
		return "+switch-master " + str("to")
	}
	for name, k := range sentinelEvents {
		if k == e.Kind && k != sentinel.KindSwitchMaster {
			// The instance is the first process name in the text (the
			// model's "+sdown master B (...)", real mode's "+sdown master
			// B"); the master's name ("mymaster") is not a process.
			for _, f := range strings.Fields(e.Text)[1:] {
				if f != "master" && f != "slave" && f != "replica" && f != "sentinel" && f != "mymaster" {
					return name + " " + f
				}
			}
			return name
		}
	}
	return ""
}

// writeTwinEvents prints the runs' cluster and Sentinel events side by
// side: one row per decision (the n-th occurrence of the same What on the
// same process in each run), with its time in each run since the run's
// start ("-": that run had no such event), in the order of the earliest.
func writeTwinEvents(w io.Writer, res *TwinResult) {
	runs := append([]TwinRun{res.Simulator}, res.Real...)
	some := false
	for _, r := range runs {
		some = some || len(r.Events) > 0
	}
	if !some {
		return
	}
	type key struct {
		proc, what string
		n          int
	}
	type row struct {
		key
		at    []sim.Time
		first sim.Time
	}
	rows := map[key]*row{}
	var order []*row
	for i, r := range runs {
		seen := map[[2]string]int{}
		for _, e := range r.Events {
			k := key{e.Proc, e.What, seen[[2]string{e.Proc, e.What}]}
			seen[[2]string{e.Proc, e.What}]++
			rw := rows[k]
			if rw == nil {
				rw = &row{key: k, at: make([]sim.Time, len(runs)), first: e.At}
				for j := range rw.at {
					rw.at[j] = -1
				}
				rows[k] = rw
				order = append(order, rw)
			}
			rw.at[i] = e.At
			if e.At < rw.first {
				rw.first = e.At
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].first != order[j].first {
			return order[i].first < order[j].first
		}
		if order[i].proc != order[j].proc {
			return order[i].proc < order[j].proc
		}
		return order[i].what < order[j].what
	})
	fmt.Fprintln(w, "cluster and sentinel events (time since the run's start; real runs read them from the servers' logs and CLUSTER NODES):")
	head := fmt.Sprintf("  %-8s %-28s %-10s", "node", "event", "simulator")
	for i := range res.Real {
		head += fmt.Sprintf(" %-10s", fmt.Sprintf("real #%d", i+1))
	}
	fmt.Fprintln(w, strings.TrimRight(head, " "))
	for _, rw := range order {
		what := rw.what
		if rw.n > 0 {
			what += fmt.Sprintf(" (#%d)", rw.n+1)
		}
		line := fmt.Sprintf("  %-8s %-28s", rw.proc, what)
		for _, at := range rw.at {
			t := "-"
			if at >= 0 {
				t = at.String()
			}
			line += fmt.Sprintf(" %-10s", t)
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w)
}
