package fuzz

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/scenarios"
)

// The matrix: lock algorithms (with and without fencing) against fault
// families, each cell the violation rates over random schedules of that
// family. The worlds and the families are locksim's choices, stated in the
// notes the matrix writes beside its tables.

// matrixTTL is the lock lifetime of every matrix world (ttl, Redisson's
// lease, the ZooKeeper session timeout), so that the algorithms face faults
// of the same sizes; fault sizes scale with it (faults.GenWorld.TTL).
const matrixTTL = 5 * time.Second

// matrixDuration is the virtual time of a matrix run.
const matrixDuration = 30 * time.Second

// MatrixRow is one row of the matrix.
type MatrixRow struct {
	// Name is the row label ("redlock +fencing").
	Name string
	// Fenced rows add a token and a marking resource to the row above.
	Fenced bool
	// Group numbers the row's algorithm: a +fencing row shares its base
	// row's group, and so its runs (MatrixRun).
	Group int
	// YAML is the row's base world.
	YAML string
}

// MatrixFamily is one column: which faults a random schedule draws. Its
// schedules come from the fuzz generator (ScheduleWith) limited to
// the family's kind, aimed at its targets, with 1 to maxFaults faults.
type MatrixFamily struct {
	// Name labels the column; Note describes it under the tables.
	Name string
	Note string
	// Kind is the fault kind drawn.
	Kind string
	// Failover is true for the family that crashes the Sentinel-monitored
	// master (n/a without Sentinel).
	Failover bool
	// Servers is true when the family needs Redis servers (n/a for the
	// ZooKeeper world: its service stands for a replicated ensemble and is
	// not crashed, nodes/zookeeper doc).
	Servers bool
	// Node is true for kinds that target one process (their targets are
	// the lock's servers and the clients, or what failover and servers
	// say); links and partitions are drawn by the generator.
	Node bool
}

// matrixMaxFaults bounds the faults of one matrix schedule (1 to 3,
// uniform: faults.DrawSwarm), so that a cell measures its family and not
// a pile-up. locksim's choice.
const matrixMaxFaults = 3

var MatrixFamilies = []MatrixFamily{
	{Name: "clock jump", Kind: faults.KindClockJump, Node: true, Note: "clock jump: 1–3 wall-clock steps of up to 3 ttl (forward two times in three) of a lock server or a client"},
	{Name: "clock drift", Kind: faults.KindClockDrift, Node: true, Note: "clock drift: 1–3 rate changes to ±0.1% to ±20% of a lock server or a client"},
	{Name: faults.KindPause, Kind: faults.KindPause, Node: true, Note: "pause: 1–3 pauses (GC, SIGSTOP) of up to 3 ttl of a lock server or a client"},
	{Name: "crash (no fsync)", Kind: faults.KindCrash, Node: true, Servers: true, Note: "crash (no fsync): 1–3 crashes (process or power) of the lock's servers, restarted within 2 ttl three times in four: Redis servers that persist with RDB only lose what came after the last save, memcached loses everything, MySQL (innodb_flush_log_at_trx_commit 1) keeps its committed rows; n/a for ZooKeeper (its service stands for a replicated ensemble)"},
	{Name: "failover", Kind: faults.KindCrash, Node: true, Failover: true, Servers: true, Note: "failover: 1–3 crashes (process or power) of the Sentinel-monitored master (in a Redis Cluster, the master of the lock key's slot), restarted within 2 ttl three times in four; Sentinel promotes the replica (the cluster elects it); n/a without Sentinel or a cluster"},
	{Name: faults.KindPartition, Kind: faults.KindPartition, Note: "partition: 1–3 random partitions (two or three sides) of every process, healed after up to 2 ttl three times in four"},
	{Name: "message delay", Kind: faults.KindDelay, Note: "message delay: 1–3 extra delays of up to 1 ttl on a one-way link (two times in three between a client and a server), for up to 2 ttl"},
}

// Targets returns the processes a family's node faults may hit in s.
func (f MatrixFamily) Targets(s *scenarios.Scenario) []string {
	if !f.Node {
		return nil
	}
	if f.Failover {
		if s.Sentinel() == nil {
			// A Redis Cluster: the master serving the lock key's slot.
			return []string{s.Cluster().MasterOfKey(s.Clients[0].Lock.Key)}
		}
		return []string{s.Sentinel().Master}
	}
	// The lock servers, from the process kinds: processes of a kind that
	// some lock algorithm keeps its locks on (clients.Algorithm.NodeKind),
	// in build order; a family that crashes servers leaves out a kind that
	// stands for an ensemble (scenarios.ProcKind.Ensemble).
	var out []string
	for _, p := range s.Servers() {
		if lockServerKind(p.Kind.Name) && !(f.Servers && p.Kind.Ensemble) {
			out = append(out, p.Name)
		}
	}
	if f.Servers {
		return out
	}
	for _, c := range s.Clients {
		out = append(out, c.Name)
	}
	return out
}

// lockServerKind reports whether some lock algorithm keeps its locks on
// servers of the process kind called kind.
func lockServerKind(kind string) bool {
	for _, name := range clients.Algorithms {
		if clients.Lookup(name).NodeKind == kind {
			return true
		}
	}
	return false
}

// matrixWorld renders a base world. Three clients contend continuously for
// one lock (hold 2s, think 300ms); fenced rows add a token (incr on the
// lock's Redis node, the znode's zxid for ZooKeeper) and a resource that
// marks itself with the highest token it saw (Junqueira 2016).
func matrixWorld(name, servers, lock string, fenced bool, token string) string {
	fencing := "none"
	if fenced {
		lock += ", fencing_token: " + token
		fencing = "mark"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: matrix-%s\ntitle: matrix base world (%s)\nseed: 1\nduration: %s\nnetwork:\n  latency: 1ms..3ms\n", name, name, matrixDuration)
	b.WriteString(servers)
	b.WriteString("clients:\n")
	for i, start := range []string{"0s", "50ms", "100ms"} {
		fmt.Fprintf(&b, "  - name: c%d\n    lock: {%s}\n    workload: {start: %s, cycles: 0, hold: 2s, think: 300ms}\n", i+1, lock, start)
	}
	fmt.Fprintf(&b, "resource:\n  fencing: %s\n", fencing)
	return b.String()
}

const (
	sentinelWorld = "redis:\n  - name: M\n  - name: R\n    replicaof: M\nsentinel: {master: M, count: 3, quorum: 2, down_after: 3s}\n"
	fiveMasters   = "redis:\n  - name: A\n  - name: B\n  - name: C\n  - name: D\n  - name: E\n"
	zkWorld       = "zookeeper:\n  name: zk\n  lock_delay: 0s\n"
	// The worlds of issue 13's locks: one memcached server (64 MB, so
	// only crashes lose the lock), one MySQL server with the default
	// wait_timeout.
	memcachedWorld = "memcached:\n  - name: MC\n"
	mysqlWorld     = "mysql:\n  - name: DB\n"
	// A Redis Cluster of 3 masters and 3 replicas, the smallest the
	// cluster tutorial recommends, with a node timeout of 3s like the
	// Sentinel world's down_after.
	clusterWorld = "cluster: {masters: 3, replicas: 1, node_timeout: 3s}\n"
)

// MatrixRows returns the rows: each algorithm, then the same with fencing.
func MatrixRows() []MatrixRow {
	// token "" means the algorithm has no fencing token: no +fencing row.
	type base struct {
		name, servers, lock, token string
	}
	bases := []base{
		{clients.RedisSingle, sentinelWorld, "algorithm: " + clients.RedisSingle + ", node: M, ttl: 5s", "incr"},
		{clients.RedisSingle + " WAIT 1", sentinelWorld, "algorithm: " + clients.RedisSingle + ", node: M, ttl: 5s, wait_replicas: 1", "incr"},
		{clients.Redlock, fiveMasters, "algorithm: " + clients.Redlock + ", nodes: [A, B, C, D, E], ttl: 5s", "incr"},
		{clients.Redsync, fiveMasters, "algorithm: " + clients.Redsync + ", nodes: [A, B, C, D, E], ttl: 5s", "incr"},
		{clients.Redisson, sentinelWorld, "algorithm: " + clients.Redisson + ", node: M, lease: 5s", "incr"},
		{clients.ZooKeeper, zkWorld, "algorithm: " + clients.ZooKeeper + ", node: zk, session_timeout: 5s", "zxid"},
		// Issue 13's locks; their lifetime is matrixTTL too, except that the
		// MySQL locks never expire.
		{clients.MemcachedAdd, memcachedWorld, "algorithm: " + clients.MemcachedAdd + ", node: MC, exptime: 5s", "incr"},
		{clients.MySQLInsert, mysqlWorld, "algorithm: " + clients.MySQLInsert + ", node: DB", ""},
		{clients.MySQLForUpdate, mysqlWorld, "algorithm: " + clients.MySQLForUpdate + ", node: DB", ""},
		{clients.RedisGetSet, sentinelWorld, "algorithm: " + clients.RedisGetSet + ", node: M, timeout: 5s", "incr"},
		{clients.RedisReentrant, sentinelWorld, "algorithm: " + clients.RedisReentrant + ", node: M, ttl: 5s", "incr"},
		{clients.RedisReentrantHash, sentinelWorld, "algorithm: " + clients.RedisReentrantHash + ", node: M, ttl: 5s", "incr"},
		// Issue 26: the same single-instance lock on a Redis Cluster
		// (cluster-aware client, clients/cluster.go).
		{clients.RedisSingle + " cluster", clusterWorld, "algorithm: " + clients.RedisSingle + ", node: C1, ttl: 5s", "incr"},
	}
	var out []MatrixRow
	for g, b := range bases {
		for _, fenced := range []bool{false, true} {
			if fenced && b.token == "" {
				continue
			}
			name := b.name
			if fenced {
				name += " +fencing"
			}
			out = append(out, MatrixRow{Name: name, Fenced: fenced, Group: g, YAML: matrixWorld(Slug(name), b.servers, b.lock, fenced, b.token)})
		}
	}
	return out
}

// matrixGroups maps each row to its group (MatrixRows).
var matrixGroups = func() []int {
	var out []int
	for _, r := range MatrixRows() {
		out = append(out, r.Group)
	}
	return out
}()

// Applies tells whether a family applies to a world.
func (f MatrixFamily) Applies(s *scenarios.Scenario) bool {
	if f.Failover && s.Sentinel() == nil && (s.Cluster() == nil || len(s.Clients) == 0) {
		return false
	}
	if f.Servers && len(f.Targets(s)) == 0 {
		return false
	}
	return true
}

// MatrixRun is the run number that seeds run r of row under family col:
// a +fencing row uses the run numbers of the row above it (its group,
// MatrixRows), so the two face the same schedules and the same simulation
// seeds (RunSeed of the run number).
func MatrixRun(row, col, r, runs int) int {
	return (matrixGroups[row]*len(MatrixFamilies)+col)*runs + r
}

// MatrixSchedule draws the schedule of one matrix run with the fuzz
// generator.
func MatrixSchedule(s *scenarios.Scenario, fam MatrixFamily, seed uint64) []faults.Spec {
	_, specs := ScheduleWith(WorldOf(s), seed, faults.GenOptions{
		Kinds: []string{fam.Kind}, MaxFaults: matrixMaxFaults, Targets: fam.Targets(s),
	})
	return specs
}

// MatrixJob is one run of the matrix: run Run of row Row under family
// Col, with its seed.
type MatrixJob struct {
	Row, Col, Run int
	Seed          uint64
}

// Matrix is the campaign behind simrun matrix: every row's world under
// every family that applies to it, Runs runs per cell. Jobs numbers the
// runs (row by row, family by family) for the worker pool and for shards.
type Matrix struct {
	Rows   []MatrixRow
	Worlds []*scenarios.Scenario
	Jobs   []MatrixJob
	Runs   int
	Seed   uint64
	// Hash identifies the worlds and families (the matrix has no base
	// scenario of its own): shards of another matrix are not merged.
	Hash string
}

// NewMatrix plans a matrix of runs runs per cell from the campaign seed.
func NewMatrix(runs int, seed uint64) (*Matrix, error) {
	pl := &Matrix{Rows: MatrixRows(), Runs: runs, Seed: seed}
	var all strings.Builder
	for _, a := range pl.Rows {
		s, err := scenarios.Parse(fmt.Sprintf("worlds/%s.yaml", Slug(a.Name)), []byte(a.YAML))
		if err != nil {
			return nil, fmt.Errorf("matrix world %s: %w", a.Name, err)
		}
		pl.Worlds = append(pl.Worlds, s)
		all.WriteString(a.YAML)
	}
	for _, fam := range MatrixFamilies {
		fmt.Fprintf(&all, "%s|%s|%v|%v|%v\n", fam.Name, fam.Kind, fam.Failover, fam.Servers, fam.Node)
	}
	pl.Hash = Hash([]byte(all.String()))
	cells := 0
	for i := range pl.Rows {
		for _, fam := range MatrixFamilies {
			if fam.Applies(pl.Worlds[i]) {
				cells++
			}
		}
	}
	if cells > 0 && runs > MaxCampaignRuns/cells {
		return nil, &TooManyRuns{What: fmt.Sprintf("%d cells × --runs %d", cells, runs)}
	}
	for i := range pl.Rows {
		for j, fam := range MatrixFamilies {
			if !fam.Applies(pl.Worlds[i]) {
				continue
			}
			for r := 0; r < runs; r++ {
				pl.Jobs = append(pl.Jobs, MatrixJob{Row: i, Col: j, Run: r, Seed: RunSeed(seed, MatrixRun(i, j, r, runs))})
			}
		}
	}
	return pl, nil
}

// Scenario returns the world of a job with its generated schedule.
func (pl *Matrix) Scenario(jb MatrixJob) (*scenarios.Scenario, error) {
	return pl.Worlds[jb.Row].WithFaults(MatrixSchedule(pl.Worlds[jb.Row], MatrixFamilies[jb.Col], jb.Seed))
}

// Run runs job n.
func (pl *Matrix) Run(n int) (Verdicts, error) {
	jb := pl.Jobs[n]
	s, err := pl.Scenario(jb)
	if err != nil {
		return Verdicts{}, fmt.Errorf("%s under %s, run %d: the generated schedule does not validate: %w", pl.Rows[jb.Row].Name, MatrixFamilies[jb.Col].Name, jb.Run, err)
	}
	o, err := scenarios.Run(s, jb.Seed, scenarios.Options{})
	if err != nil {
		return Verdicts{}, fmt.Errorf("%s under %s, seed %d: %w", pl.Rows[jb.Row].Name, MatrixFamilies[jb.Col].Name, jb.Seed, err)
	}
	return verdictsOf(o), nil
}

// Slug turns a row or column name into a file name.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
