package scenarios

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/sim"
)

// FillerSpec is one cache filler (clients.FillerConfig): the "cache
// workload" of the eviction stories, writing new keys to a Redis or
// memcached server at a fixed rate.
type FillerSpec struct {
	Name      string
	Node      string
	Start     time.Duration
	Every     time.Duration
	Count     int
	ValueSize int
	TTL       time.Duration
	Prefix    string
	Clock     ClockSpec
}

// Process kind and lane role of the cache filler kind.
const (
	KindFiller      = "filler"
	RoleFiller Role = "filler"
)

// fillerSection is the kind's top-level field and the key of its parsed section.
const fillerSection = "fillers"

// fillerKind: the fillers: list of cache fillers. Their node is a Redis or
// memcached server; what they write follows from its kind.
var fillerKind = &ProcKind{
	Name: KindFiller, Section: fillerSection, What: "a cache filler",
	Doc: "Cache fillers, the cache workload of the eviction stories, a list. Each entry:\n\n- `name`; `node`: a `redis` or `memcached` server.\n- every `every` from `start` (default 0s), `count` keys (default 0 = until the end) named `prefix`N (default `cache:`) with `value_size`-byte values and `ttl` (default none; whole seconds for memcached), written with SET (Redis) or set (memcached) without waiting for replies.\n- `clock`.",
	read: func(r *reader, top *obj, s *Scenario) {
		var out []FillerSpec
		for i, n := range top.list(fillerSection) {
			out = append(out, r.filler(n, fmt.Sprintf("fillers[%d]", i)))
		}
		if len(out) > 0 {
			setSection(s, fillerSection, out)
		}
	},
	procs: func(s *Scenario) []Proc {
		var out []Proc
		for i, f := range s.Fillers() {
			note := fmt.Sprintf("cache filler of %s, %d-byte values every %v", f.Node, f.ValueSize, f.Every)
			out = append(out, Proc{Name: f.Name, Path: fmt.Sprintf("fillers[%d].name", i), Clock: f.Clock, Role: RoleFiller, Note: note})
		}
		return out
	},
	check: func(x *xref, s *Scenario) {
		for i, f := range s.Fillers() {
			path := fmt.Sprintf("fillers[%d].node", i)
			if !x.ref(path, f.Node, clients.NodeRedis, clients.NodeMemcached) {
				continue
			}
			if err := fillerConfig(s, f).Validate(); err != nil {
				// Validate's message starts with the field it names
				// ("value_size: must be ..."): report it at that
				// field's own path and line.
				field, msg := fmt.Sprintf("fillers[%d]", i), err.Error()
				if k, rest, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(k, " \"") {
					field, msg = field+"."+k, rest
				}
				x.r.errf(x.at(field), field, "%s", msg)
			}
		}
	},
	build: func(b *builder) error {
		for _, f := range b.s.Fillers() {
			cfg := fillerConfig(b.s, f)
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("filler %s: %w", f.Name, err)
			}
			if err := b.add(f.Name, f.Clock, func() sim.Process { return clients.NewFiller(cfg) }); err != nil {
				return err
			}
		}
		return nil
	},
}

// Fillers returns the scenario's cache fillers, in file order.
func (s *Scenario) Fillers() []FillerSpec {
	return sectionOf[[]FillerSpec](s, fillerSection)
}

// fillerConfig is the filler's configuration, its kind taken from its
// node's.
func fillerConfig(s *Scenario, f FillerSpec) clients.FillerConfig {
	kind := clients.FillRedis
	for _, m := range s.Memcached() {
		if m.Name == f.Node {
			kind = clients.FillMemcached
		}
	}
	return clients.FillerConfig{Name: f.Name, Node: f.Node, Kind: kind, Start: f.Start, Every: f.Every, Count: f.Count, ValueSize: f.ValueSize, TTL: f.TTL, Prefix: f.Prefix}
}

func (r *reader) filler(n *yaml.Node, path string) FillerSpec {
	s := FillerSpec{}
	o := r.mapping(n, path)
	o.str("name", &s.Name)
	if !o.str("node", &s.Node) {
		r.errf(n, path+".node", "required field is missing (the Redis or memcached server to fill)")
	}
	o.duration("start", &s.Start)
	if !o.duration("every", &s.Every) {
		r.errf(n, path+".every", "required field is missing (the time between writes)")
	} else if s.Every <= 0 {
		r.errf(o.get("every"), path+".every", "must be positive, got %v", s.Every)
	}
	if o.integer("count", &s.Count) && s.Count < 0 {
		r.errf(o.get("count"), path+".count", "must be 0 (until the end) or more, got %d", s.Count)
	}
	if !o.integer("value_size", &s.ValueSize) {
		r.errf(n, path+".value_size", "required field is missing (each value's size in bytes)")
	}
	o.duration("ttl", &s.TTL)
	o.str("prefix", &s.Prefix)
	if s.Start < 0 {
		r.errf(o.get("start"), path+".start", "must not be negative")
	}
	s.Clock = r.clock(o, path)
	o.done()
	return s
}
