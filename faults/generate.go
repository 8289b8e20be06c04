package faults

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Source is the randomness the generator draws from. *sim.Rand is one (a
// fuzzing campaign's seeded stream); ByteSource is another (Go's native
// fuzzer drives the generator with its mutated bytes).
type Source interface {
	// Uint64n returns a draw in [0, n); n > 0.
	Uint64n(n uint64) uint64
}

// GenWorld is what a generated schedule may touch and the scales its sizes
// derive from, taken from a scenario.
type GenWorld struct {
	// Clients are the lock clients.
	Clients []string
	// Masters are the lock servers (the processes of every kind that holds
	// lock state: Redis, memcached, MySQL) that replicate from no one.
	Masters []string
	// Replicas are the lock servers' replicas that promote can target
	// (Redis's: promote is REPLICAOF NO ONE).
	Replicas []string
	// Others are the remaining processes: sentinels, the ZooKeeper service,
	// fillers, the storage service, replicas promote cannot target.
	Others []string
	// Events maps a lock server to the node trigger events it emits (its
	// kind's declaration, faults.NodeEvent); the first is the one the
	// generator triggers on: the lock taken on the server (Redis's and
	// memcached's key-set, MySQL's row-locked). A server missing from a
	// non-nil map emits none; a nil map means key-set on every server.
	Events map[string][]string
	// Duration is the run's virtual time; timed faults fire before it.
	Duration time.Duration
	// TTL is the longest lock lifetime of the scenario's clients (ttl, a
	// Redisson lease, a ZooKeeper session timeout). Fault sizes scale
	// with it.
	TTL time.Duration
	// Reshards are the slot migrations reshard may draw: a lock key of a
	// Redis Cluster, the master serving its slot and the cluster's masters
	// (none: the world has no cluster, reshard does not apply).
	Reshards []ReshardTarget
}

// ReshardTarget is a key whose slot a reshard fault may migrate.
type ReshardTarget struct {
	Key, From string
	Masters   []string
}

// GenOptions bound a generated schedule.
type GenOptions struct {
	// Kinds are the fault kinds allowed (nil: every kind of Kinds that
	// applies to the world, see Applicable).
	Kinds []string
	// MaxFaults bounds the number of faults (DefaultMaxFaults when 0).
	MaxFaults int
	// Targets, when set, are the only processes node faults (clock-jump,
	// clock-drift, pause, crash) may target, in place of the swarm's
	// focus: simrun matrix aims a family at the lock's servers and clients
	// (or at the Sentinel-monitored master). nil draws targets as fuzzing
	// does; setting it draws no extra randomness.
	Targets []string
	// Selectors lets node faults target a selector ("any servers",
	// "majority servers", "any clients", "all replicas": selector.go) one
	// time in eight instead of a name. Off by default: it adds a draw
	// per node fault, and a shrunk finding names processes more plainly.
	Selectors bool
}

// DefaultMaxFaults is the default bound on the faults of one schedule:
// enough for three clock jumps and two partitions (Kleppmann's Redlock
// example needs three faults), few enough that a finding stays readable
// before it is shrunk. locksim's choice.
const DefaultMaxFaults = 8

// MaxFaultsLimit bounds GenOptions.MaxFaults (simrun fuzz --max-faults): a
// finding holds its schedule, and what fuzz writes, run and replay must
// read (issue 33: --max-faults 30000 wrote a finding of 8,106 faults that
// the scenario parser refused). A fault takes at most a few dozen YAML
// nodes, so a thousand of them stay well inside the parser's bound on the
// nodes of a file (scenarios: maxWrittenNodes, 100,000), and a schedule of
// a thousand faults already changes the world every few milliseconds of a
// minute's run. locksim's choice.
const MaxFaultsLimit = 1000

// Bounds of the generated sizes, as multiples of the world's TTL
// (issue 7: "pauses up to ~3×ttl, clock jumps ±(0..3×ttl), drift up to
// ±0.2, restart delays 0..2×ttl"). locksim's choices: a pause or a jump of
// three ttls outlasts any lock, so larger values add nothing.
const (
	maxPauseTTLs   = 3
	maxJumpTTLs    = 3
	maxRestartTTLs = 2
	maxHealTTLs    = 2
	maxDelayByTTLs = 1 // extra latency of a delay fault
	maxDelayForTTL = 2 // how long a delay fault lasts
	maxDriftMilli  = 200
	maxDropCount   = 10
	maxTriggerNth  = 4
	maxRevertTTLs  = 2 // a clock jump that reverts
	maxStrobeTTLs  = 2 // how long a clock strobe lasts
)

// maxStrobeFlips bounds the flips of one clock strobe (for / period), so
// that a strobe of 1 ms for hours cannot flood the trace; locksim's
// choice (Jepsen's generator flips at most 32 s / 1 ms = 32,000 times).
const maxStrobeFlips = 100000

// grain is the resolution of every generated duration, so that schedules
// read like hand-written ones (12.345s, not 12.345678901s).
const grain = time.Millisecond

// Swarm is one run's feature flags (swarm testing, as TigerBeetle's VOPR
// draws them per run): which fault kinds are on and how often each is drawn,
// how many faults the schedule has, and how many of them are triggered by
// events rather than fired at a time. Drawing these first makes rare
// combinations (many clock jumps and nothing else; only triggered pauses)
// as likely as the common mix.
type Swarm struct {
	// Kinds are the kinds switched on, in Kinds order, each with a weight
	// (1..4) in Weights.
	Kinds   []string
	Weights []int
	// Faults is the number of faults to generate.
	Faults int
	// Triggered is the chance, in quarters (0..4), that a fault is
	// triggered by an event rather than fired at a time.
	Triggered int
	// Focus narrows the targets of node faults (clock-jump, clock-drift,
	// pause, crash): "servers" (lock servers only), "clients", or ""
	// (any process). Three clock jumps on three Redlock masters come up
	// far more often under a servers focus.
	Focus string
	// Targets overrides Focus when set (GenOptions.Targets).
	Targets []string
	// Selectors: GenOptions.Selectors.
	Selectors bool
}

// String renders the flags for reports ("clock-jump×3 pause×1, 5 faults,
// 50% triggered").
func (sw Swarm) String() string {
	var parts []string
	for i, k := range sw.Kinds {
		parts = append(parts, fmt.Sprintf("%s×%d", k, sw.Weights[i]))
	}
	focus := ""
	if sw.Focus != "" {
		focus = ", targets: " + sw.Focus
	}
	if len(sw.Targets) > 0 {
		focus = ", targets: " + strings.Join(sw.Targets, " ")
	}
	return fmt.Sprintf("%s, %d faults, %d%% triggered%s", strings.Join(parts, " "), sw.Faults, sw.Triggered*25, focus)
}

// Applicable returns the kinds of Kinds that can apply to w: a kind that
// needs a replica (promote) applies only to a world with one, a
// majorities ring only to a world of three processes or more, an order
// choice to none (the generator never draws it: KindDef.NotDrawn); every
// other kind applies to any world.
func Applicable(w GenWorld) []string {
	var out []string
	for _, d := range table {
		if d.NotDrawn || d.NeedsReplica && len(w.Replicas) == 0 || len(w.Names()) < d.MinProcs || d.NeedsCluster && len(w.Reshards) == 0 {
			continue
		}
		out = append(out, d.Name)
	}
	return out
}

// CheckKinds validates a list of kinds for w: each must be a fault kind and
// apply to the world. The error names the kind and what is allowed.
func CheckKinds(kinds []string, w GenWorld) error {
	if len(kinds) == 0 {
		return fmt.Errorf("no fault kinds given (allowed: %s)", strings.Join(Applicable(w), ", "))
	}
	for _, k := range kinds {
		d, known := Lookup(k)
		if !known {
			return fmt.Errorf("unknown fault kind %q (allowed: %s)", k, strings.Join(Kinds, ", "))
		}
		if d.NotDrawn {
			return fmt.Errorf("fault kind %s is never drawn at random: %s", k, d.NotDrawnWhy)
		}
		if d.NeedsReplica && len(w.Replicas) == 0 {
			return fmt.Errorf("fault kind %s needs a Redis replica, and the scenario has none", k)
		}
		if d.NeedsCluster && len(w.Reshards) == 0 {
			return fmt.Errorf("fault kind %s needs a Redis Cluster with a lock key, and the scenario has none", k)
		}
		if n := len(w.Names()); n < d.MinProcs {
			return fmt.Errorf("fault kind %s needs at least %d processes, and the scenario has %d", k, d.MinProcs, n)
		}
	}
	return nil
}

// CheckWorld reports a world the generator cannot work with.
func CheckWorld(w GenWorld) error {
	switch {
	case w.Duration <= 0:
		return fmt.Errorf("the run's duration must be positive, got %s", w.Duration)
	case w.TTL <= 0:
		return fmt.Errorf("the lock ttl must be positive, got %s", w.TTL)
	case len(w.Clients)+len(w.Masters)+len(w.Replicas)+len(w.Others) < 2:
		return fmt.Errorf("a world needs at least two processes")
	}
	return nil
}

// Generate draws a fault schedule for w: first the swarm flags
// (DrawSwarm), then the faults (Swarm.Generate). The same source state
// gives the same schedule. Every schedule it returns passes scenario
// validation for the scenario w was taken from (names of the right kinds,
// positive sizes, times within the run). It returns nil when w or
// opts.Kinds is unusable (see CheckWorld, CheckKinds).
func Generate(src Source, w GenWorld, opts GenOptions) []Spec {
	if CheckWorld(w) != nil {
		return nil
	}
	if opts.Kinds != nil && CheckKinds(opts.Kinds, w) != nil {
		return nil
	}
	sw := DrawSwarm(src, w, opts)
	return sw.Generate(src, w)
}

// DrawSwarm draws one run's feature flags: each allowed kind is on with
// probability 1/2 (at least one is), with a weight of 1 to 4; the number of
// faults is uniform in 1..MaxFaults; the share of triggered faults is 0%,
// 25%, 50%, 75% or 100%; when the world has both lock servers and
// clients, node faults target servers only, clients only, or any process,
// a third of the time each (servers: the lock servers of any kind).
func DrawSwarm(src Source, w GenWorld, opts GenOptions) Swarm {
	allowed := opts.Kinds
	if allowed == nil {
		allowed = Applicable(w)
	}
	// Kinds order, whatever order the caller gave.
	var kinds []string
	for _, k := range Kinds {
		for _, a := range allowed {
			if a == k {
				kinds = append(kinds, k)
				break
			}
		}
	}
	max := opts.MaxFaults
	if max <= 0 {
		max = DefaultMaxFaults
	}
	var sw Swarm
	for _, k := range kinds {
		if src.Uint64n(2) == 0 {
			sw.Kinds = append(sw.Kinds, k)
			sw.Weights = append(sw.Weights, 1+int(src.Uint64n(4)))
		}
	}
	if len(sw.Kinds) == 0 && len(kinds) > 0 {
		sw.Kinds = []string{kinds[src.Uint64n(uint64(len(kinds)))]}
		sw.Weights = []int{1}
	}
	sw.Faults = 1 + int(src.Uint64n(uint64(max)))
	sw.Triggered = int(src.Uint64n(5))
	if len(w.Masters)+len(w.Replicas) > 0 && len(w.Clients) > 0 {
		sw.Focus = []string{"", "servers", "clients"}[src.Uint64n(3)]
	}
	if len(opts.Targets) > 0 {
		sw.Targets = append([]string(nil), opts.Targets...)
	}
	sw.Selectors = opts.Selectors
	return sw
}

// Generate draws sw.Faults faults for w.
func (sw Swarm) Generate(src Source, w GenWorld) []Spec {
	if len(sw.Kinds) == 0 || CheckWorld(w) != nil {
		return nil
	}
	g := &Gen{src: src, w: w, focus: sw.Focus, targets: sw.Targets, selectors: sw.Selectors}
	total := 0
	for _, wt := range sw.Weights {
		total += wt
	}
	out := make([]Spec, 0, sw.Faults)
	for i := 0; i < sw.Faults; i++ {
		n := int(src.Uint64n(uint64(total)))
		kind := sw.Kinds[len(sw.Kinds)-1]
		for j, wt := range sw.Weights {
			if n < wt {
				kind = sw.Kinds[j]
				break
			}
			n -= wt
		}
		s := g.fault(kind, out)
		if src.Uint64n(4) < uint64(sw.Triggered) {
			g.trigger(&s)
		} else {
			g.at(&s)
		}
		out = append(out, s)
	}
	return out
}

// gen draws the parts of one fault.
type Gen struct {
	src       Source
	w         GenWorld
	focus     string
	targets   []string
	selectors bool
}

func (g *Gen) intn(n int) int { return int(g.src.Uint64n(uint64(n))) }

// dur returns a duration in [lo, hi] at the generator's grain.
func (g *Gen) dur(lo, hi time.Duration) time.Duration {
	lo, hi = lo/grain, hi/grain
	if hi <= lo {
		return lo * grain
	}
	return (lo + time.Duration(g.src.Uint64n(uint64(hi-lo)+1))) * grain
}

// size returns a positive size up to max: uniform over (0, max] three times
// in four, small (up to max/20) otherwise, so that both "just past the
// ttl" and "a few milliseconds" come up.
func (g *Gen) size(max time.Duration) time.Duration {
	if g.intn(4) == 0 {
		max /= 20
	}
	if max < grain {
		max = grain
	}
	return g.dur(grain, max)
}

func (g *Gen) pick(names []string) string { return names[g.intn(len(names))] }

// servers are the lock servers, masters first.
func (g *Gen) servers() []string {
	return append(append([]string(nil), g.w.Masters...), g.w.Replicas...)
}

// all returns every process: lock servers, others, clients.
func (g *Gen) all() []string {
	return append(append(g.servers(), g.w.Others...), g.w.Clients...)
}

// target picks the target of a node fault under the swarm's focus; with
// Selectors, one time in eight a selector (selector.go) in place of a name.
func (g *Gen) target() string {
	if len(g.targets) > 0 {
		return g.pick(g.targets)
	}
	if g.selectors && g.intn(8) == 0 {
		if sel := g.selector(); sel != "" {
			return sel
		}
	}
	switch g.focus {
	case "servers":
		return g.pick(g.servers())
	case "clients":
		return g.pick(g.w.Clients)
	}
	return g.proc()
}

// selector draws a selector for a node fault under the swarm's focus, as
// Chaos Mesh experiments choose their pods (any lock server, a majority of
// them, any client, every replica); "" when the world has none of the
// focus's sets. Its sets are those scenarios resolve: servers are the lock
// servers (GenWorld's Masters and Replicas), replicas GenWorld's Replicas.
func (g *Gen) selector() string {
	var opts []string
	servers := len(g.w.Masters)+len(g.w.Replicas) > 0
	if servers && g.focus != "clients" {
		opts = append(opts, SelectAny+" servers", SelectMajority+" servers")
	}
	if len(g.w.Clients) > 0 && g.focus != "servers" {
		opts = append(opts, SelectAny+" clients")
	}
	if len(g.w.Replicas) > 0 && g.focus != "clients" {
		opts = append(opts, SelectAll+" replicas")
	}
	if len(opts) == 0 {
		return ""
	}
	return g.pick(opts)
}

// proc picks a process: a lock server or a client, each class half the
// time when both exist, and now and then another process (a sentinel,
// ZooKeeper, the storage service).
func (g *Gen) proc() string {
	servers := g.servers()
	if len(g.w.Others) > 0 && (g.intn(6) == 0 || len(servers)+len(g.w.Clients) == 0) {
		return g.pick(g.w.Others)
	}
	switch {
	case len(servers) == 0 && len(g.w.Clients) == 0:
		return g.pick(g.all())
	case len(servers) == 0:
		return g.pick(g.w.Clients)
	case len(g.w.Clients) == 0:
		return g.pick(servers)
	case g.intn(2) == 0:
		return g.pick(servers)
	default:
		return g.pick(g.w.Clients)
	}
}

// link picks a one-way link between two different processes: two times
// in three between a client and a server (the lock's requests and
// replies, or the resource's), either way; otherwise any two processes
// (replication, Sentinel, a client's peers).
func (g *Gen) link() (string, string) {
	all := g.all()
	servers := append(g.servers(), g.w.Others...)
	if len(g.w.Clients) > 0 && len(servers) > 0 && g.intn(3) != 0 {
		c, s := g.pick(g.w.Clients), g.pick(servers)
		if g.intn(2) == 0 {
			return c, s
		}
		return s, c
	}
	a := g.intn(len(all))
	b := g.intn(len(all) - 1)
	if b >= a {
		b++
	}
	return all[a], all[b]
}

// fault draws the kind-specific fields of one fault; prior are the faults
// drawn so far (a restart targets a process an earlier fault crashed).
func (g *Gen) fault(kind string, prior []Spec) Spec {
	s := Spec{Kind: kind}
	if d, ok := Lookup(kind); ok {
		s = d.Generate(g, s, prior)
	}
	return s
}

// groups draws a partition: two groups three times in four, three
// otherwise; each process joins a group or stays unlisted (keeps its links
// to everyone: the kernel cuts only links between two different groups, so
// a single group would cut nothing). Every group is non-empty.
func (g *Gen) groups() [][]string {
	all := g.all()
	n := 2
	if g.intn(4) == 0 {
		n = 3
	}
	if n > len(all) {
		n = len(all)
	}
	groups := make([][]string, n)
	for _, p := range all {
		// One chance in five to stay unlisted.
		k := g.intn(n*4 + n)
		if k < n*4 {
			groups[k%n] = append(groups[k%n], p)
		}
	}
	// Fill empty groups from the largest one, deterministically.
	for i := range groups {
		if len(groups[i]) > 0 {
			continue
		}
		big := 0
		for j := range groups {
			if len(groups[j]) > len(groups[big]) {
				big = j
			}
		}
		if len(groups[big]) > 1 {
			last := len(groups[big]) - 1
			groups[i] = []string{groups[big][last]}
			groups[big] = groups[big][:last]
			continue
		}
		// No group can spare a process: take an unlisted one.
		for _, p := range all {
			if !listed(groups, p) {
				groups[i] = []string{p}
				break
			}
		}
	}
	// Drop groups still empty (a world of few processes).
	out := groups[:0]
	for _, grp := range groups {
		if len(grp) > 0 {
			out = append(out, grp)
		}
	}
	return out
}

// ring draws the positions of a majorities ring: the lock servers and
// the clients, shuffled as Jepsen's majorities-ring shuffles its nodes;
// each client shares a position with a server (as a Jepsen client talks
// to its own node) half the time, else has its own. A world with fewer
// than three of them gets every process, one per position.
func (g *Gen) ring() [][]string {
	servers := g.servers()
	var out [][]string
	for _, p := range servers {
		out = append(out, []string{p})
	}
	for _, c := range g.w.Clients {
		if len(out) > 0 && g.intn(2) == 0 {
			i := g.intn(len(out))
			out[i] = append(out[i], c)
			continue
		}
		out = append(out, []string{c})
	}
	if len(out) < 3 {
		out = out[:0]
		for _, p := range g.all() {
			out = append(out, []string{p})
		}
	}
	// Fisher-Yates with the generator's draws.
	for i := len(out) - 1; i > 0; i-- {
		j := g.intn(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func listed(groups [][]string, p string) bool {
	for _, grp := range groups {
		for _, q := range grp {
			if q == p {
				return true
			}
		}
	}
	return false
}

// Client trigger events with their weights: acquired and resource-read
// fire inside a critical section, which is where a pause or a jump hurts.
var clientTriggers = []struct {
	event  string
	weight int
}{
	{"acquired", 4},
	{"resource-read", 3},
	{"acquire-start", 1},
	{"resource-write", 1},
	{"released", 1},
	{"lock-lost", 1},
}

// at makes s a timed fault: uniform over the run half the time, in its
// first quarter otherwise (where finite workloads do their work).
func (g *Gen) at(s *Spec) {
	end := g.w.Duration - grain
	if g.intn(2) == 0 {
		end = g.w.Duration / 4
	}
	if end < 0 {
		end = 0
	}
	t := g.dur(0, end)
	s.At = &sim.Range{Lo: t, Hi: t}
}

// emitters are the lock servers that emit a node trigger event, masters
// first.
func (g *Gen) emitters() []string {
	if g.w.Events == nil {
		return g.servers()
	}
	var out []string
	for _, p := range g.servers() {
		if len(g.w.Events[p]) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// serverEvent is the event the generator triggers on for server p: the
// first its kind declares (GenWorld.Events).
func (g *Gen) serverEvent(p string) string {
	if evs := g.w.Events[p]; len(evs) > 0 {
		return evs[0]
	}
	return "key-set"
}

// trigger makes s a triggered fault: on a client event (mostly acquired or
// resource-read), or on a lock server's own event (the lock taken there:
// a key stored, a row lock granted); the first occurrence half the time,
// else one of the first four; after no delay, a short one or up to a ttl.
func (g *Gen) trigger(s *Spec) {
	t := &Trigger{Count: 1}
	servers := g.emitters()
	if len(g.w.Clients) > 0 && (len(servers) == 0 || g.intn(4) != 0) {
		total := 0
		for _, e := range clientTriggers {
			total += e.weight
		}
		n := g.intn(total)
		for _, e := range clientTriggers {
			if n < e.weight {
				t.Event = e.event
				break
			}
			n -= e.weight
		}
		t.Proc = g.pick(g.w.Clients)
	} else if len(servers) > 0 {
		t.Proc = g.pick(servers)
		t.Event = g.serverEvent(t.Proc)
	} else {
		// No clients and no lock server: only a timed fault can fire.
		g.at(s)
		return
	}
	if g.intn(2) == 0 {
		t.Count = 1 + g.intn(maxTriggerNth)
	}
	s.On = t
	switch g.intn(4) {
	case 0:
		s.After = sim.Range{}
	case 1:
		d := g.dur(0, 100*time.Millisecond)
		s.After = sim.Range{Lo: d, Hi: d}
	default:
		d := g.dur(0, g.w.TTL)
		s.After = sim.Range{Lo: d, Hi: d}
	}
}

// ByteSource turns a byte string into draws, for Go's native fuzzer: each
// Uint64n(n) reads as many bytes as n needs (big-endian) and reduces them
// modulo n; once the bytes run out every draw is 0. So a short input gives
// a small schedule, and a mutated byte changes one decision.
type ByteSource struct {
	data []byte
}

// NewByteSource returns a source reading data.
func NewByteSource(data []byte) *ByteSource { return &ByteSource{data: data} }

// Uint64n implements Source.
func (b *ByteSource) Uint64n(n uint64) uint64 {
	if n <= 1 {
		return 0
	}
	var v uint64
	for m := n - 1; m > 0; m >>= 8 {
		v <<= 8
		if len(b.data) > 0 {
			v |= uint64(b.data[0])
			b.data = b.data[1:]
		}
	}
	return v % n
}

// Names returns every process name of w, sorted (for messages).
func (w GenWorld) Names() []string {
	out := append(append(append(append([]string(nil), w.Masters...), w.Replicas...), w.Others...), w.Clients...)
	sort.Strings(out)
	return out
}
