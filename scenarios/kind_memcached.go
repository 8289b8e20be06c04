package scenarios

import (
	"fmt"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/record"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/sim"
)

// Process kind and lane role of the memcached kind.
const (
	KindMemcached      = clients.NodeMemcached
	RoleMemcached Role = "memcached"
)

// MemcachedSpec is one memcached server (nodes/memcached).
type MemcachedSpec struct {
	Name string
	// Config is the node's configuration: memory_mb (-m), item_size_max
	// (-I), no_evictions (-M) and no_cas (-C) as the scenario sets them.
	Config memcached.Config
	Clock  ClockSpec
}

// memcachedMaxMB bounds memory_mb: 1 TB keeps a typo from meaning
// exabytes; the model allocates nothing up front, so any real size works.
const memcachedMaxMB = 1 << 20

// memcachedSection is the kind's top-level field and the key of its parsed section.
const memcachedSection = "memcached"

// memcachedKind: the memcached: list of memcached servers. No persistence:
// a restart loses every item (nodes/memcached). Exptimes are the lock
// clients' (seconds; over 30 days, memcached's REALTIME_MAXDELTA, an
// absolute Unix time on the server's start-up wall clock).
var memcachedKind = &ProcKind{
	Name: KindMemcached, Section: memcachedSection, What: "a memcached server",
	Doc: "memcached 1.6 servers (`nodes/memcached`; no persistence: a restart loses every item), a list. Each entry:\n\n- `name` (required).\n- `memory_mb` (`-m`, slab memory limit in MB, 1..1048576; default 64).\n- `item_size_max` (`-I`, bytes, 524288..1048576 and at most half of `memory_mb`, as memcached refuses to start otherwise; default 1048576).\n- `no_evictions` (`-M`: a full cache refuses stores with `SERVER_ERROR out of memory` instead of evicting the COLD LRU tail; default off).\n- `no_cas` (`-C`; default CAS on).\n- `clock`. Exptimes come from lock clients: seconds, over 30 days an absolute Unix time on the server's start-up wall clock.",
	// nodes/memcached logs item-stored for every store (set, add, replace,
	// cas, incr/decr) and item-evicted when the LRU evicts a live item.
	TriggerEvents: []faults.NodeEvent{
		{Name: "key-set", Trace: memcached.KindItemStored, Means: "the server stored an item (set, add, replace, cas, incr/decr)"},
		{Name: "key-evicted", Trace: memcached.KindItemEvicted, Means: "the LRU evicted a live item to make room"},
	},
	LockServer: true,
	read: func(r *reader, top *obj, s *Scenario) {
		var out []MemcachedSpec
		for i, n := range top.list(memcachedSection) {
			out = append(out, r.memcached(n, fmt.Sprintf("memcached[%d]", i)))
		}
		if len(out) > 0 {
			setSection(s, memcachedSection, out)
		}
	},
	procs: func(s *Scenario) []Proc {
		var out []Proc
		for i, m := range s.Memcached() {
			note := fmt.Sprintf("memcached, -m %d", m.Config.MaxBytes>>20)
			if !m.Config.EvictToFree {
				note += " -M"
			}
			out = append(out, Proc{Name: m.Name, Path: fmt.Sprintf("memcached[%d].name", i), Clock: m.Clock, Role: RoleMemcached, Lane: record.LaneItems, Note: note})
		}
		return out
	},
	build: func(b *builder) error {
		for _, m := range b.s.Memcached() {
			cfg := m.Config
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("memcached %s: %w", m.Name, err)
			}
			if err := b.add(m.Name, m.Clock, func() sim.Process { return memcached.New(cfg) }); err != nil {
				return err
			}
		}
		return nil
	},
}

// Memcached returns the scenario's memcached servers, in file order.
func (s *Scenario) Memcached() []MemcachedSpec {
	return sectionOf[[]MemcachedSpec](s, memcachedSection)
}

func (r *reader) memcached(n *yaml.Node, path string) MemcachedSpec {
	s := MemcachedSpec{Config: memcached.DefaultConfig()}
	o := r.mapping(n, path)
	o.str("name", &s.Name)
	mb := int(s.Config.MaxBytes >> 20)
	if o.integer("memory_mb", &mb) {
		if mb < 1 || mb > memcachedMaxMB {
			r.errf(o.get("memory_mb"), path+".memory_mb", "must be from 1 to %d megabytes (memcached -m), got %d", memcachedMaxMB, mb)
		}
		s.Config.MaxBytes = int64(mb) << 20
	}
	size := int(s.Config.ItemSizeMax)
	if o.integer("item_size_max", &size) {
		// memcached refuses -I below its 512 KB slab_chunk_max, and the
		// model keeps its 1 MB slab pages, so -I is 512 KB to 1 MB
		// (nodes/memcached Config.Validate).
		if size < memcached.SlabChunkMax || size > memcached.SlabPageSize {
			r.errf(o.get("item_size_max"), path+".item_size_max", "must be from %d to %d bytes (memcached -I: at least its slab_chunk_max, at most one 1 MB page), got %d", memcached.SlabChunkMax, memcached.SlabPageSize, size)
		}
		s.Config.ItemSizeMax = int64(size)
	}
	if s.Config.ItemSizeMax > s.Config.MaxBytes/2 && s.Config.MaxBytes > 0 && s.Config.ItemSizeMax <= memcached.SlabPageSize && s.Config.ItemSizeMax >= memcached.SlabChunkMax {
		// memcached refuses to start then (nodes/memcached Config.Validate).
		field := "memory_mb"
		if o.has("item_size_max") {
			field = "item_size_max"
		}
		r.errf(o.get(field), path+"."+field, "item_size_max (%d bytes) must be at most half of memory_mb (%d MB): memcached refuses to start otherwise (\"Cannot set item size limit higher than 1/2 of memory max.\"); with memory_mb 1 set item_size_max: 524288", s.Config.ItemSizeMax, s.Config.MaxBytes>>20)
	}
	var noEvict, noCAS bool
	if o.boolean("no_evictions", &noEvict) {
		s.Config.EvictToFree = !noEvict
	}
	if o.boolean("no_cas", &noCAS) {
		s.Config.UseCAS = !noCAS
	}
	s.Clock = r.clock(o, path)
	o.done()
	return s
}
