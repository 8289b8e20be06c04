package usercode

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Your bug or the algorithm's.
//
// A violation by user code is either the code's own (a plain DEL where the
// algorithm compares before deleting) or one that any implementation of
// the algorithm suffers on that world and schedule (a pause longer than
// the TTL breaks every TTL lock). To tell them apart, the same scenario,
// seed and fault schedule run once more with locksim's model of the
// algorithm the code implements in place of the code: the algorithm of
// the client's lock block, or the one Options.Reference names. When the
// model violates the same property too, the finding is inherent;
// otherwise it is the code's.

// Whose says whose a violation of a property by user code is.
type Whose struct {
	_ struct{}

	// Inherent is true when locksim's model of the algorithm violates the
	// property on the same world, seed and schedule.
	Inherent bool
	// Reference names the model run ("redis-single" or, for clients bound
	// to different algorithms, "c1: redis-single, c2: redlock").
	Reference string
	// Text says it in a sentence: "inherent: ..." or "your code: ...".
	Text string
}

// whose runs the reference model of o's run (the scenario s with its
// schedule, at seed) and says whose the violation of kind is.
func whose(s *scenarios.Scenario, seed uint64, kind string, opt Options, o *scenarios.Outcome) (*Whose, error) {
	ref, name, err := reference(s, opt)
	if err != nil {
		return nil, err
	}
	mo, err := scenarios.Run(ref, seed, scenarios.Options{CheckTimeout: opt.CheckTimeout})
	if err != nil {
		return nil, fmt.Errorf("usercode: the reference run of %s (locksim's model of %s) at seed %d: %w", s.Name, name, seed, err)
	}
	w := &Whose{Reference: name}
	prop := propertyName(kind)
	if v, _ := fuzz.Violated(mo, []string{kind}); len(v) > 0 {
		w.Inherent = true
		w.Text = fmt.Sprintf("inherent: locksim's model of %s also violates %s on this world, seed and schedule, so any implementation of it would", name, prop)
		if ex := explanationOf(mo, kind); ex != "" {
			w.Text += ": " + ex
		}
		return w, nil
	}
	w.Text = fmt.Sprintf("your code: locksim's model of %s keeps %s on this world, seed and schedule", name, prop)
	if acts := ownActs(o, opt); acts != "" {
		w.Text += "; " + acts
	}
	return w, nil
}

// reference is s with every client bound to user code switched to the
// algorithm Options.Reference names for it (none: its own lock block),
// and the name of the model.
func reference(s *scenarios.Scenario, opt Options) (*scenarios.Scenario, string, error) {
	var sets [][2]string
	byAlg := map[string][]string{}
	for i, c := range s.Clients {
		if _, ok := opt.Clients[c.Name]; !ok {
			continue
		}
		alg := c.Lock.Algorithm
		if r, ok := opt.Reference[c.Name]; ok && r != "" && r != alg {
			alg = r
			sets = append(sets, [2]string{fmt.Sprintf("clients[%d].lock.algorithm", i), r})
		}
		byAlg[alg] = append(byAlg[alg], c.Name)
	}
	var algs []string
	for a := range byAlg {
		algs = append(algs, a)
	}
	sort.Strings(algs)
	name := strings.Join(algs, ", ")
	if len(algs) > 1 {
		var parts []string
		for _, a := range algs {
			parts = append(parts, strings.Join(byAlg[a], ", ")+": "+a)
		}
		name = strings.Join(parts, "; ")
	}
	if len(sets) == 0 {
		return s, name, nil
	}
	ref, err := s.With(sets)
	if err != nil {
		return nil, "", fmt.Errorf("usercode: Options.Reference: %w", err)
	}
	return ref, name, nil
}

// explanationOf is the explanation of o's first violation of kind.
func explanationOf(o *scenarios.Outcome, kind string) string {
	for _, v := range o.Violations {
		if v.Kind == kind {
			return v.Explanation
		}
	}
	return ""
}

// ownActs names the commands of the bound clients that acted on another
// client's lock key (sim.History.KeyActs): "c1's DEL at 30.112s removed
// c2's key "lock" on A".
func ownActs(o *scenarios.Outcome, opt Options) string {
	if o == nil || o.History == nil {
		return ""
	}
	var items []string
	for _, x := range o.History.KeyActs {
		if _, ok := opt.Clients[x.Client]; !ok {
			continue
		}
		if len(items) == 3 {
			items = append(items, "and more")
			break
		}
		items = append(items, fmt.Sprintf("%s's %s at %s %s %s's key %q on %s", x.Client, x.Command, fmtAt(x.At), actVerb(x.Command), x.Holder, x.Key, x.Node))
	}
	return strings.Join(items, ", ")
}

// actVerb says what a command did to another client's key.
func actVerb(cmd string) string {
	c := cmd[strings.LastIndex(cmd, " ")+1:]
	switch c {
	case "DEL", "UNLINK", "GETDEL":
		return "removed"
	case "PEXPIRE", "EXPIRE", "PEXPIREAT", "EXPIREAT":
		return "moved the deadline of"
	case "HSET", "HINCRBY":
		return "wrote to"
	}
	return "overwrote"
}

func fmtAt(t sim.Time) string {
	return fmt.Sprintf("%.3fs", time.Duration(t).Seconds())
}

// propertyName is the title of the property of kind ("lock safety").
func propertyName(kind string) string {
	for _, p := range checker.Properties() {
		if a := p.About(); a.Kind == kind {
			return a.Title
		}
	}
	return kind
}
