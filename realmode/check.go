package realmode

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/scenarios"
)

// UnsupportedError says why real mode cannot run a scenario (exit 2).
type UnsupportedError struct {
	// Where names the section or fault ("faults[2]", "zookeeper").
	Where string
	Why   string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("real mode cannot run this scenario: %s: %s", e.Where, e.Why)
}

// roles of the processes of a scenario in real mode.
type roles struct {
	redis    map[string]scenarios.RedisSpec
	sentinel map[string]bool
	// group is the replication group of a real process: its master's name
	// (a master is its own group); sentinels join their master's group.
	group map[string]string
}

func rolesOf(s *scenarios.Scenario) roles {
	r := roles{redis: map[string]scenarios.RedisSpec{}, sentinel: map[string]bool{}, group: map[string]string{}}
	for _, n := range s.Redis() {
		r.redis[n.Name] = n
		r.group[n.Name] = n.Name
	}
	for _, n := range s.Redis() {
		if n.ReplicaOf != "" {
			r.group[n.Name] = r.group[n.ReplicaOf]
		}
	}
	if sp := s.Sentinel(); sp != nil {
		for _, n := range sp.Names {
			r.sentinel[n] = true
			r.group[n] = r.group[sp.Master]
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
	return r.sentinel[a] || r.sentinel[b] || len(r.groupMembers(ga)) > 1
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
			return &UnsupportedError{Where: k.Section, Why: fmt.Sprintf("real mode runs %s only; %s is not supported yet", realKinds(), k.What)}
		}
		if l.check != nil {
			if err := l.check(s); err != nil {
				return err
			}
		}
	}
	r := rolesOf(s)
	for i, f := range s.Faults {
		where := fmt.Sprintf("faults[%d] (%s)", i, f.String())
		if f.On != nil && f.On.Event == "promoted" {
			return &UnsupportedError{Where: where, Why: "real mode cannot observe when a real server is promoted by Sentinel (trigger on promoted)"}
		}
		switch f.Kind {
		case "crash":
			if spec, ok := r.redis[f.Node]; ok && f.Mode == "power" && spec.AppendOnly && spec.AppendFsync != "always" {
				return &UnsupportedError{Where: where, Why: fmt.Sprintf("power loss with appendfsync %s loses writes that a kill keeps (they sit in the page cache); it needs a filesystem that drops unsynced data, so real mode refuses it (a power loss equals a kill only without AOF or with appendfsync always)", fsyncName(spec.AppendFsync))}
			}
		case "drop":
			if r.talk(f.From, f.To) {
				return &UnsupportedError{Where: where, Why: fmt.Sprintf("dropping the next %d messages on the link %s->%s between two real servers has no TCP counterpart (a lost segment is retransmitted); use a partition (the proxy holds the bytes) or a delay", f.Count, f.From, f.To)}
			}
		}
	}
	return nil
}

func fsyncName(p string) string {
	if p == "" {
		return "everysec"
	}
	return strings.ToLower(p)
}
