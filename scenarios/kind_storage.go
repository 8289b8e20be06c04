package scenarios

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/nodes/storage"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Process kind and lane role of the storage kind.
const (
	KindStorage      = "storage"
	RoleStorage Role = "storage"
)

// storageKind: the resource: block, the protected storage service
// (nodes/storage). Every scenario has one ("storage" unless named).
var storageKind = &ProcKind{
	Name: KindStorage, Section: "resource", What: "the storage service",
	Doc:  "The protected resource, a storage service the clients read and write in their critical sections:\n\n- `fencing`: `none` (default; accepts every read and write), `monotonic` (Kleppmann: rejects a write whose token is below the highest written), `mark` (Junqueira: reads and writes carry the token; anything below the highest seen is rejected), `token-cas` (antirez: a critical section sets the resource's lock field to its token; the write succeeds only if the field still holds it).\n- `name`: the storage process's name (default `storage`).",
	read: func(r *reader, top *obj, s *Scenario) { s.Resource = r.resource(top.get("resource")) },
	procs: func(s *Scenario) []Proc {
		return []Proc{{Name: s.Resource.Name, Path: "resource.name", Role: RoleStorage, Lane: record.LaneResource, Note: "resource, fencing " + orNone(s.Resource.Fencing)}}
	},
	build: func(b *builder) error {
		cfg := storage.DefaultConfig()
		cfg.Fencing = b.s.Resource.Fencing
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("resource: %w", err)
		}
		// The storage service keeps true time: its clock is not a story.
		b.k.Add(b.s.Resource.Name, func() sim.Process { return storage.New(cfg) }, sim.ClockSpec{})
		return nil
	},
}

func (r *reader) resource(n *yaml.Node) ResourceSpec {
	s := ResourceSpec{Name: "storage", Fencing: "none"}
	o := r.mapping(n, "resource")
	o.str("name", &s.Name)
	if o.str("fencing", &s.Fencing) {
		switch s.Fencing {
		case "none", "monotonic", "mark", "token-cas":
		default:
			r.errf(o.get("fencing"), "resource.fencing", "unknown mode %q (allowed: none, monotonic, mark, token-cas)", s.Fencing)
		}
	}
	o.done()
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
