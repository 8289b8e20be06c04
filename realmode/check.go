package realmode

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// UnsupportedError says why real mode cannot run a scenario (exit 2).
type UnsupportedError struct {
	// Where names the section or fault ("faults[2]", "zookeeper").
	Where string
	Why   string
	// System: real mode does not run the section's system at all (no
	// launcher for the kind, a Redis Cluster), as opposed to one setting
	// or fault of a system it runs.
	System bool
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("real mode cannot run this scenario: %s: %s", e.Where, e.Why)
}

// roles of the processes of a scenario in real mode.
type roles struct {
	// watcher marks processes that exchange messages with every member of
	// their group (sentinels monitor their master and its replicas).
	watcher map[string]bool
	// group is the replication group of a real process: its master's name
	// (a master is its own group); sentinels join their master's group.
	group map[string]string
}

// rolesOf asks each kind's launcher (kinds.go), in build order, to place
// its processes in groups.
func rolesOf(s *scenarios.Scenario) roles {
	r := roles{watcher: map[string]bool{}, group: map[string]string{}}
	for _, k := range scenarios.Kinds() {
		if l, ok := launchers[k.Name]; ok && l.group != nil {
			l.group(s, &r)
		}
	}
	return r
}

func (r roles) real(name string) bool { _, ok := r.group[name]; return ok }

// talk reports whether two real processes exchange messages of their own
// (replication, sentinel monitoring), which only a proxy between them
// could cut or delay.
func (r roles) talk(a, b string) bool {
	ga, oka := r.group[a]
	gb, okb := r.group[b]
	if !oka || !okb || a == b || ga != gb {
		return false
	}
	return r.watcher[a] || r.watcher[b] || len(r.groupMembers(ga)) > 1
}

func (r roles) groupMembers(g string) []string {
	var out []string
	for n, gg := range r.group {
		if gg == g {
			out = append(out, n)
		}
	}
	return out
}

// Check reports the first part of s that real mode cannot reproduce with
// real servers, or nil. It is called before anything starts.
func Check(s *scenarios.Scenario) error {
	// Each process kind needs a launcher of real mode (kinds.go), and the
	// launcher may refuse parts of its section.
	for _, k := range scenarios.Kinds() {
		if len(s.ServersOf(k)) == 0 {
			continue
		}
		l, ok := launchers[k.Name]
		if !ok {
			return &UnsupportedError{Where: k.Section, Why: fmt.Sprintf("real mode runs %s only; %s is not supported yet", realKinds(), k.What), System: true}
		}
		if l.check != nil {
			if err := l.check(s); err != nil {
				return err
			}
		}
	}
	// A fault before the model's replicas can have synced, where that
	// matters (scenarios.EarlyReplicaFaults): real mode starts a run only
	// once every replica has synced, so it would run another world than
	// the simulator (outsider3's cluster cut at 0s: holds in the model,
	// violated on real servers).
	if e := scenarios.EarlyReplicaFaults(s); len(e) > 0 {
		return &UnsupportedError{Where: fmt.Sprintf("faults[%d] (%s)", e[0].Fault, s.Faults[e[0].Fault].String()), Why: e[0].Why}
	}
	// The network's loss: the model delays each lost segment by a
	// retransmission; real mode's network (loopback, the proxy) loses
	// nothing, so the story would run without it.
	if s.Network.Loss > 0 {
		return &UnsupportedError{Where: lineOf(s, "network.loss"), Why: fmt.Sprintf("the model loses %g of the segments and delays each by a retransmission (RTO from 200 ms); real mode's network is loopback through its proxy, which loses nothing, so every message would arrive on time: run it with simrun run, or model the stall with a partition (the proxy holds the bytes and delivers them at the next retransmission)", s.Network.Loss)}
	}
	r := rolesOf(s)
	for i, f := range s.Faults {
		where := lineOf(s, fmt.Sprintf("faults[%d]", i)) + " (" + f.String() + ")"
		if _, ok := faults.ParseSelector(f.Node); ok {
			return &UnsupportedError{Where: fmt.Sprintf("faults[%d].node", i), Why: fmt.Sprintf("real mode does not resolve the selector %q (its clock and fault checks need the node before the run): name the node, which simrun run prints as the selector's choice", f.Node)}
		}
		if f.On != nil {
			if why := checkTrigger(s, f.On); why != "" {
				return &UnsupportedError{Where: where, Why: why}
			}
		}
		for _, k := range scenarios.Kinds() {
			if l, ok := launchers[k.Name]; ok && l.checkFault != nil {
				if why := l.checkFault(s, f); why != "" {
					return &UnsupportedError{Where: where, Why: why}
				}
			}
		}
		// A stall longer than tcp_retries2's 924.6 s ends the connection
		// in the model (the sender gives up: ETIMEDOUT); the proxy holds a
		// cut or a powered-off host's bytes for as long as it lasts. Only
		// a run longer than that can tell.
		if stalls := f.Kind == faults.KindPartition || f.Kind == faults.KindPartitionRing || (f.Kind == faults.KindCrash && f.Mode == "power"); stalls && s.Duration > sim.RetransmitGiveUp {
			return &UnsupportedError{Where: where, Why: fmt.Sprintf("the run lasts %v, longer than TCP's retransmission limit (tcp_retries2: %v): a stall that long ends the connection in the model, while real mode's proxy holds the bytes for as long as the stall lasts; shorten the run to at most %v", s.Duration, sim.RetransmitGiveUp, sim.RetransmitGiveUp)}
		}
		// Real mode carries out what a kind's kernel actions do
		// (realmode/faults.go); a kind says in its declaration whether
		// they have a real counterpart (faults.KindDef.Real).
		if why := faults.RealRefusal(f.Kind); why != "" {
			field := fmt.Sprintf("faults[%d].kind", i)
			if line := s.Line(field); line > 0 {
				field = fmt.Sprintf("%s:%d: %s", s.File, line, field)
			}
			return &UnsupportedError{Where: field, Why: why}
		}
		switch f.Kind {
		case faults.KindDrop:
			if r.talk(f.From, f.To) {
				return &UnsupportedError{Where: where, Why: fmt.Sprintf("dropping the next %d messages on the link %s->%s between two real servers has no TCP counterpart (a lost segment is retransmitted); use a partition (the proxy holds the bytes) or a delay", f.Count, f.From, f.To)}
			}
		}
	}
	return nil
}

// lineOf names a field of s with its file and line ("s.yaml:14:
// faults[2]"), or the field alone when the scenario has no source text.
func lineOf(s *scenarios.Scenario, field string) string {
	if line := s.Line(field); line > 0 {
		return fmt.Sprintf("%s:%d: %s", s.File, line, field)
	}
	return field
}

func fsyncName(p string) string {
	if p == "" {
		return "everysec"
	}
	return strings.ToLower(p)
}

// checkTrigger says why real mode cannot fire a trigger on a server's
// event: its gateway sees only the events its launcher lists (seen), those
// a reply shows; "" when it can.
func checkTrigger(s *scenarios.Scenario, t *faults.Trigger) string {
	for _, p := range s.Servers() {
		if p.Name != t.Proc {
			continue
		}
		declared := false
		for _, e := range p.Kind.TriggerEvents {
			declared = declared || e.Name == t.Event
		}
		if !declared {
			return "" // a client or any-process event (crashed, restarted)
		}
		for _, e := range launchers[p.Kind.Name].seen {
			if e == t.Event {
				return ""
			}
		}
		if t.Event == "promoted" {
			return "real mode cannot observe when a real server is promoted by Sentinel (trigger on promoted)"
		}
		return fmt.Sprintf("real mode cannot observe event %s of %s (%s): its gateway sees only what replies show (%s)", t.Event, t.Proc, p.Kind.What, seenList(launchers[p.Kind.Name].seen))
	}
	return ""
}

func seenList(seen []string) string {
	if len(seen) == 0 {
		return "none"
	}
	return strings.Join(seen, ", ")
}
