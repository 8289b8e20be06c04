package scenarios

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/sim"
)

// CounterSpec is one stock counter of the flash-sale stories (issue 13): a
// key on a Redis server, its declared stock and the clients that sell from
// it. Name is the loader process, which SETs the stock at 0s; the key
// defaults to the name.
type CounterSpec struct {
	Name    string
	Node    string
	Key     string
	Stock   int64
	Clients []CounterClientSpec
	Clock   ClockSpec
}

// CounterClientSpec is one counter client (clients.CounterConfig).
type CounterClientSpec struct {
	Name      string
	Method    string
	Purchases int
	Start     time.Duration
	Think     time.Duration
	Timeout   time.Duration
	Retries   int
	Clock     ClockSpec
}

// Process kind and lane roles of the counter kind.
const (
	KindCounter              = "counter"
	RoleCounterLoader   Role = "counter-loader"
	RoleCounterClient   Role = "counter-client"
	counterSection           = "counters"
	defaultCounterStock      = -1 // marks a missing stock while reading
)

// counterKind: the counters: list of stock counters, each with its loader
// and its clients. A kind of its own (not a lock algorithm) because a
// counter client takes no lock: it has no lock, no workload cycles and no
// critical section on the storage service; its records are the history's
// Counter operations, which the checker judges as resource safety.
var counterKind = &ProcKind{
	Name: KindCounter, Section: counterSection, What: "a stock counter process",
	Doc: "Stock counters sold from without a lock (a flash sale), a list. Each entry:\n\n- `name`: the loader process, which SETs the stock at 0s, once per run.\n- `node`: a Redis master (a Sentinel-monitored one is discovered); `key` (default: the name); `stock` (the initial stock, 0 or more, required).\n- `clients`: each with `name`, `method` (`get-set`, `decr`, `script`, `watch`: see [writing scenarios](../guide/scenarios.md#counter-methods)), `purchases` (default 1), `start` (100ms), `think` (0s), `timeout` (3s), `retries` (watch only, 1000), `clock`. Each client reads the stock once after its purchases.\n- `clock`.",
	read: func(r *reader, top *obj, s *Scenario) {
		var out []CounterSpec
		for i, n := range top.list(counterSection) {
			out = append(out, r.counter(n, fmt.Sprintf("counters[%d]", i)))
		}
		if len(out) > 0 {
			setSection(s, counterSection, out)
		}
	},
	procs: func(s *Scenario) []Proc {
		var out []Proc
		for i, c := range s.Counters() {
			out = append(out, Proc{Name: c.Name, Path: fmt.Sprintf("counters[%d].name", i), Clock: c.Clock, Role: RoleCounterLoader,
				Note: fmt.Sprintf("loads %s = %d on %s", c.Key, c.Stock, c.Node)})
			for j, cc := range c.Clients {
				out = append(out, Proc{Name: cc.Name, Path: fmt.Sprintf("counters[%d].clients[%d].name", i, j), Clock: cc.Clock, Role: RoleCounterClient,
					Note: fmt.Sprintf("%s x%d on %s", cc.Method, cc.Purchases, c.Key)})
			}
		}
		return out
	},
	check: func(x *xref, s *Scenario) {
		replicas := map[string]bool{}
		for _, rs := range s.Redis() {
			if rs.ReplicaOf != "" {
				replicas[rs.Name] = true
			}
		}
		keys := map[string]string{}
		for i, c := range s.Counters() {
			path := fmt.Sprintf("counters[%d]", i)
			if x.ref(path+".node", c.Node, clients.NodeRedis) && replicas[c.Node] {
				x.r.errf(x.at(path+".node"), path+".node", "%q is a replica of %s: the stock must live on a master (a replica answers READONLY to writes)", c.Node, replicaOf(s, c.Node))
			}
			k := c.Node + "\x00" + c.Key
			if prev, dup := keys[k]; dup {
				x.r.errf(x.at(path+".key"), path+".key", "key %q on %s is already the stock of counter %s", c.Key, c.Node, prev)
			}
			keys[k] = c.Name
			for j, cc := range c.Clients {
				if err := counterClientConfig(s, c, cc).Validate(); err != nil {
					p := fmt.Sprintf("%s.clients[%d]", path, j)
					x.r.errf(x.at(p), p, "%v", err)
				}
			}
		}
	},
	build: func(b *builder) error {
		for _, c := range b.s.Counters() {
			load := clients.CounterLoaderConfig{Name: c.Name, Node: c.Node, Key: c.Key, Stock: c.Stock}
			var cl *clients.Cluster
			if cls := clustersOfLock(b, clients.LockConfig{Node: c.Node}); len(cls) > 0 {
				cl = cls[0]
			}
			load.Cluster = cl
			if err := b.add(c.Name, c.Clock, clients.NewCounterLoader(load)); err != nil {
				return err
			}
			for _, cc := range c.Clients {
				cfg := counterClientConfig(b.s, c, cc)
				if b.discovery != nil && c.Node == b.discovery.Master {
					cfg.Discovery = b.discovery
				}
				cfg.Cluster = cl
				if err := cfg.Validate(); err != nil {
					return fmt.Errorf("counter client %s: %w", cc.Name, err)
				}
				if err := b.add(cc.Name, cc.Clock, func() sim.Process { return clients.NewCounterClient(cfg) }); err != nil {
					return err
				}
			}
		}
		return nil
	},
}

// Counters returns the scenario's stock counters, in file order.
func (s *Scenario) Counters() []CounterSpec {
	return sectionOf[[]CounterSpec](s, counterSection)
}

// replicaOf returns the master that replica name replicates.
func replicaOf(s *Scenario, name string) string {
	for _, rs := range s.Redis() {
		if rs.Name == name {
			return rs.ReplicaOf
		}
	}
	return ""
}

// counterClientConfig is a counter client's configuration with defaults.
func counterClientConfig(_ *Scenario, c CounterSpec, cc CounterClientSpec) clients.CounterConfig {
	return clients.CounterConfig{
		Name: cc.Name, Node: c.Node, Key: c.Key, Method: cc.Method, Purchases: cc.Purchases,
		Start: cc.Start, Think: cc.Think, Timeout: cc.Timeout, Retries: cc.Retries,
	}.WithDefaults()
}

func (r *reader) counter(n *yaml.Node, path string) CounterSpec {
	c := CounterSpec{Stock: defaultCounterStock}
	o := r.mapping(n, path)
	o.str("name", &c.Name)
	if !o.str("node", &c.Node) {
		r.errf(n, path+".node", "required field is missing (the Redis server that holds the stock)")
	}
	c.Key = c.Name
	o.str("key", &c.Key)
	if c.Key == "" && o.has("key") {
		r.errf(o.get("key"), path+".key", "must not be empty")
	}
	var stock int
	if !o.has("stock") {
		r.errf(n, path+".stock", "required field is missing (the initial stock, loaded into the node at 0s)")
	} else if o.integer("stock", &stock) {
		if stock < 0 {
			r.errf(o.get("stock"), path+".stock", "must be 0 or more items, got %d", stock)
		}
		c.Stock = int64(stock)
	}
	for i, cn := range o.list("clients") {
		c.Clients = append(c.Clients, r.counterClient(cn, fmt.Sprintf("%s.clients[%d]", path, i)))
	}
	if len(c.Clients) == 0 {
		r.errf(n, path+".clients", "a counter needs at least one client")
	}
	c.Clock = r.clock(o, path)
	o.done()
	return c
}

func (r *reader) counterClient(n *yaml.Node, path string) CounterClientSpec {
	c := CounterClientSpec{Start: clients.DefaultCounterStart}
	o := r.mapping(n, path)
	o.str("name", &c.Name)
	if !o.str("method", &c.Method) {
		r.errf(n, path+".method", "required field is missing (one of %s)", clients.CounterMethodNames())
	} else if clients.LookupCounterMethod(c.Method) == nil {
		r.errf(o.get("method"), path+".method", "unknown counter method %q (known: %s)", c.Method, clients.CounterMethodNames())
	}
	if o.integer("purchases", &c.Purchases) && c.Purchases < 1 {
		r.errf(o.get("purchases"), path+".purchases", "must be at least 1, got %d", c.Purchases)
	}
	if o.duration("start", &c.Start) && c.Start < 0 {
		r.errf(o.get("start"), path+".start", "must not be negative")
	}
	if o.duration("think", &c.Think) && c.Think < 0 {
		r.errf(o.get("think"), path+".think", "must not be negative")
	}
	if o.duration("timeout", &c.Timeout) && c.Timeout <= 0 {
		r.errf(o.get("timeout"), path+".timeout", "must be positive (default %v, go-redis' ReadTimeout)", clients.DefaultCounterTimeout)
	}
	if o.integer("retries", &c.Retries) {
		switch {
		case c.Retries < 1:
			r.errf(o.get("retries"), path+".retries", "must be at least 1 (attempts of one purchase), got %d", c.Retries)
		case c.Method != clients.CounterWatch && c.Method != "":
			r.errf(o.get("retries"), path+".retries", "only the watch method retries (this client's method is %s)", c.Method)
		}
	}
	c.Clock = r.clock(o, path)
	o.done()
	return c
}
