package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
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

// matrixAlgo is one row of the matrix.
type matrixAlgo struct {
	name string
	// world names the base world (rows with the same world share their
	// random schedules, so fencing is compared on identical faults).
	world  string
	fenced bool
	yaml   string
}

// matrixFamily is one column: which faults a random schedule draws.
type matrixFamily struct {
	name string
	note string
	// kind is the fault kind drawn.
	kind string
	// failover is true for the family that crashes the Sentinel-monitored
	// master (n/a without Sentinel).
	failover bool
	// servers is true when the family needs Redis servers (n/a for the
	// ZooKeeper world: its service stands for a replicated ensemble and is
	// not crashed, nodes/zookeeper doc).
	servers bool
}

var matrixFamilies = []matrixFamily{
	{name: "clock jump", kind: "clock-jump", note: "clock jump: 1–3 wall-clock steps of 0.1 s to 3 ttl (forward two times in three) of a lock server or a client"},
	{name: "clock drift", kind: "clock-drift", note: "clock drift: 1–3 rate changes to ±0.5% to ±20% of a lock server or a client"},
	{name: "pause", kind: "pause", note: "pause: 1–3 pauses (GC, SIGSTOP) of 0.1 s to 3 ttl of a lock server or a client"},
	{name: "crash (no fsync)", kind: "crash", servers: true, note: "crash (no fsync): 1–3 crashes (process or power) of Redis servers that persist with RDB only, so a restart (within 2 ttl) loses what came after the last save; n/a for ZooKeeper (its service stands for a replicated ensemble)"},
	{name: "failover", kind: "crash", failover: true, servers: true, note: "failover: the Sentinel-monitored master loses power (half the time it comes back 1–3 ttl later); Sentinel promotes the replica; n/a without Sentinel"},
	{name: "partition", kind: "partition", note: "partition: 1–3 random two-sided partitions of the servers, clients and sentinels, healed after 0.5 s to 2 ttl"},
	{name: "message delay", kind: "delay", note: "message delay: 1–3 extra delays of 0.1 s to 1 ttl on a one-way link between a client and a lock server, for 0.5 s to 2 ttl"},
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
)

func matrixAlgos() []matrixAlgo {
	type base struct {
		name, world, servers, lock, token string
	}
	bases := []base{
		{"redis-single", "sentinel", sentinelWorld, "algorithm: redis-single, node: M, ttl: 5s", "incr"},
		{"redis-single WAIT 1", "sentinel", sentinelWorld, "algorithm: redis-single, node: M, ttl: 5s, wait_replicas: 1", "incr"},
		{"redlock", "five", fiveMasters, "algorithm: redlock, nodes: [A, B, C, D, E], ttl: 5s", "incr"},
		{"redsync", "five", fiveMasters, "algorithm: redsync, nodes: [A, B, C, D, E], ttl: 5s", "incr"},
		{"redisson", "sentinel", sentinelWorld, "algorithm: redisson, node: M, lease: 5s", "incr"},
		{"zookeeper", "zk", zkWorld, "algorithm: zookeeper, node: zk, session_timeout: 5s", "zxid"},
	}
	var out []matrixAlgo
	for _, b := range bases {
		for _, fenced := range []bool{false, true} {
			name := b.name
			if fenced {
				name += " +fencing"
			}
			out = append(out, matrixAlgo{name: name, world: b.world, fenced: fenced, yaml: matrixWorld(slugOf(name), b.servers, b.lock, fenced, b.token)})
		}
	}
	return out
}

// applies tells whether a family applies to a world.
func (f matrixFamily) applies(s *scenarios.Scenario) bool {
	if f.failover && s.Sentinel == nil {
		return false
	}
	if f.servers && len(s.Redis) == 0 {
		return false
	}
	return true
}

// matrixSeed derives the seed of run r of a world under a family: the
// first 8 bytes, big endian, of SHA-256("locksim-matrix <base> <world>
// <family> <r>"). It seeds both the schedule and the run, and does not
// depend on fencing, so fenced and unfenced rows face the same faults.
func matrixSeed(base uint64, world, family string, r int) uint64 {
	h := sha256.Sum256([]byte(fmt.Sprintf("locksim-matrix %d %s %s %d", base, world, family, r)))
	return binary.BigEndian.Uint64(h[:8])
}

// matrixGen draws the faults of one schedule. It is the matrix's own
// small generator (faults.Generate draws from every kind and trigger for
// fuzzing; a matrix column needs one family, aimed at the processes that
// hold lock state, and triggers that fire in a contended workload).
type matrixGen struct {
	r       *sim.Rand
	s       *scenarios.Scenario
	servers []string // the lock's servers: Redis nodes or the ZooKeeper service
	clients []string
}

// dur draws a duration in [lo, hi] at millisecond grain.
func (g *matrixGen) dur(lo, hi time.Duration) time.Duration {
	lo, hi = lo/time.Millisecond, hi/time.Millisecond
	if hi <= lo {
		return lo * time.Millisecond
	}
	return (lo + time.Duration(g.r.Int63n(int64(hi-lo)+1))) * time.Millisecond
}

func (g *matrixGen) pick(names []string) string { return names[g.r.Intn(len(names))] }

// target picks a server or a client, each half the time.
func (g *matrixGen) target() string {
	if g.r.Intn(2) == 0 {
		return g.pick(g.servers)
	}
	return g.pick(g.clients)
}

// when fires a fault at a uniform time in the run's first part (so that
// it acts before the end) half the time, otherwise when a client acquires
// the lock or reads the resource (its 1st to 5th time), up to 1 s later;
// a fault of a client is triggered by that client's own event half the
// time (a GC pause inside the critical section).
func (g *matrixGen) when(sp *faults.Spec) {
	if g.r.Intn(2) == 0 {
		t := g.dur(0, g.s.Duration-2*matrixTTL)
		sp.At = &sim.Range{Lo: t, Hi: t}
		return
	}
	ev := "acquired"
	if g.r.Intn(2) == 0 {
		ev = "resource-read"
	}
	who := g.pick(g.clients)
	for _, c := range g.clients {
		if c == sp.Node && g.r.Intn(2) == 0 {
			who = c // a client faulted in its own critical section
		}
	}
	sp.On = &faults.Trigger{Event: ev, Proc: who, Count: 1 + g.r.Intn(5)}
	d := g.dur(0, time.Second)
	sp.After = sim.Range{Lo: d, Hi: d}
}

func fixedRange(d time.Duration) *sim.Range { return &sim.Range{Lo: d, Hi: d} }

// fault draws one fault of a family.
func (g *matrixGen) fault(fam matrixFamily) faults.Spec {
	sp := faults.Spec{Kind: fam.kind}
	switch {
	case fam.failover:
		sp.Node, sp.Mode = g.s.Sentinel.Master, "power"
		if g.r.Intn(2) == 0 {
			sp.RestartAfter = fixedRange(g.dur(matrixTTL, 3*matrixTTL))
		}
	case fam.kind == "clock-jump":
		sp.Node = g.target()
		sp.By = g.dur(100*time.Millisecond, 3*matrixTTL)
		if g.r.Intn(3) == 0 {
			sp.By = -sp.By // forward twice as often: Kleppmann's case
		}
	case fam.kind == "clock-drift":
		sp.Node = g.target()
		milli := 5 + g.r.Intn(196)
		if g.r.Intn(2) == 0 {
			milli = -milli
		}
		sp.Rate = float64(milli) / 1000
	case fam.kind == "pause":
		sp.Node = g.target()
		sp.For = sim.Fixed(g.dur(100*time.Millisecond, 3*matrixTTL))
	case fam.kind == "crash":
		sp.Node = g.pick(g.servers)
		if g.r.Intn(2) == 0 {
			sp.Mode = "power"
		}
		sp.RestartAfter = fixedRange(g.dur(0, 2*matrixTTL))
	case fam.kind == "partition":
		all := append(append([]string(nil), g.servers...), g.clients...)
		if g.s.Sentinel != nil {
			all = append(all, g.s.Sentinel.Names...)
		}
		groups := make([][]string, 2)
		for _, p := range all {
			k := g.r.Intn(2)
			groups[k] = append(groups[k], p)
		}
		for i := range groups {
			if len(groups[i]) == 0 { // both sides non-empty
				o := groups[1-i]
				groups[i], groups[1-i] = o[len(o)-1:], o[:len(o)-1]
			}
		}
		sp.Groups = groups
		sp.HealAfter = fixedRange(g.dur(500*time.Millisecond, 2*matrixTTL))
	case fam.kind == "delay":
		c, s := g.pick(g.clients), g.pick(g.servers)
		sp.From, sp.To = c, s
		if g.r.Intn(2) == 0 {
			sp.From, sp.To = s, c
		}
		sp.By = g.dur(100*time.Millisecond, matrixTTL)
		sp.For = sim.Fixed(g.dur(500*time.Millisecond, 2*matrixTTL))
	}
	g.when(&sp)
	return sp
}

// matrixSchedule draws one random schedule of a family: one to three
// faults (one crash of the master for failover).
func matrixSchedule(s *scenarios.Scenario, fam matrixFamily, seed uint64) []faults.Spec {
	g := &matrixGen{r: sim.NewRand(seed, "matrix-schedule"), s: s}
	for _, r := range s.Redis {
		g.servers = append(g.servers, r.Name)
	}
	if s.ZK != nil {
		g.servers = append(g.servers, s.ZK.Name)
	}
	for _, c := range s.Clients {
		g.clients = append(g.clients, c.Name)
	}
	n := 1 + g.r.Intn(3)
	if fam.failover {
		n = 1
	}
	specs := make([]faults.Spec, n)
	for i := range specs {
		specs[i] = g.fault(fam)
	}
	return specs
}

type matrixFlags struct {
	runs    int
	seed    uint64
	workers int
	outDir  string
	quiet   bool
}

func newMatrixCmd() *cobra.Command {
	var f matrixFlags
	cmd := &cobra.Command{
		Use:   "matrix --out DIR [--runs N]",
		Short: "Violation rates of every lock algorithm under every fault family (which lock should we use?)",
		Long: `Run each lock algorithm (redis-single, redis-single with WAIT 1, redlock,
redsync, redisson, zookeeper; each without and with fencing: a token and a
marking resource) under random fault schedules of each family (clock jump,
clock drift, pause, crash without fsync, failover, partition, message
delay), N runs per cell, and write into DIR: matrix.png and matrix.svg (two
heatmaps: lock-safety and resource-safety violation rates), matrix.csv (raw
counts, 95% Wilson intervals, the replay of each cell's first violating
run), matrix.md, matrix.html, and worlds/ (the base scenarios) with cases/
(the scenario of each cell's first violating run).

Base worlds: three clients in continuous contention, 30 s, lock lifetime 5 s.
Run r of a world under a family uses the seed made of the first 8 bytes
(big endian) of SHA-256("locksim-matrix <base> <world> <family> <r>") for
both the schedule and the run, so rows that share a world (with and without
fencing) face the same faults, and results do not depend on --workers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return matrix(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	cmd.Flags().IntVar(&f.runs, "runs", 60, "random schedules per cell")
	cmd.Flags().Uint64Var(&f.seed, "seed", 1, "base seed")
	cmd.Flags().IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel runs")
	cmd.Flags().StringVar(&f.outDir, "out", "", "folder for the heatmap and the tables (required)")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "no progress bar")
	return cmd
}

// matrixJob is one run of the matrix.
type matrixJob struct {
	row, col, run int
	seed          uint64
}

func matrix(stdout, stderr io.Writer, f matrixFlags) error {
	if f.outDir == "" {
		return badInput("--out: required (the folder for matrix.png, matrix.csv, matrix.md, matrix.html)")
	}
	if f.runs < 1 {
		return badInput("--runs: must be at least 1 (got %d)", f.runs)
	}
	if f.workers < 1 {
		return badInput("--workers: must be at least 1 (got %d)", f.workers)
	}
	algos := matrixAlgos()
	worlds := make([]*scenarios.Scenario, len(algos))
	for i, a := range algos {
		s, err := scenarios.Parse(fmt.Sprintf("worlds/%s.yaml", slugOf(a.name)), []byte(a.yaml))
		if err != nil {
			return withCode(exitInconclusive, fmt.Errorf("internal error: matrix world %s: %w", a.name, err))
		}
		worlds[i] = s
	}
	for _, d := range []string{"worlds", "cases"} {
		if err := os.MkdirAll(filepath.Join(f.outDir, d), 0o755); err != nil {
			return badInput("--out: %v", err)
		}
	}
	for _, a := range algos {
		if err := os.WriteFile(filepath.Join(f.outDir, "worlds", slugOf(a.name)+".yaml"), []byte(a.yaml), 0o644); err != nil {
			return badInput("--out: %v", err)
		}
	}

	m := &reports.Matrix{Runs: f.runs, Seed: f.seed}
	for _, a := range algos {
		m.Rows = append(m.Rows, a.name)
	}
	for _, fam := range matrixFamilies {
		m.Cols = append(m.Cols, fam.name)
		m.Notes = append(m.Notes, fam.note)
	}
	m.Notes = append(m.Notes,
		"worlds: three clients in continuous contention for 30 s (hold 2 s, think 300 ms), lock lifetime 5 s (ttl, Redisson lease, ZooKeeper session timeout); redis-single, WAIT and Redisson on a master M with a replica R and three sentinels (down_after 3 s); Redlock and redsync on five masters; ZooKeeper on one session service",
		"+fencing: a token with every resource access (INCR on the lock's node, on the first node that granted for Redlock and redsync; the znode's zxid for ZooKeeper) and a resource that rejects anything older than the highest token it saw (mark)",
		"each fault fires at a uniform time in the first 20 s, or when a client acquires the lock or reads the resource (its 1st to 5th time) up to 1 s later (a fault of a client: half the time on its own event); rows that share a world face identical schedules")
	var jobs []matrixJob
	m.Cells = make([][]reports.MatrixCell, len(algos))
	for i, a := range algos {
		m.Cells[i] = make([]reports.MatrixCell, len(matrixFamilies))
		for j, fam := range matrixFamilies {
			if !fam.applies(worlds[i]) {
				m.Cells[i][j].NA = true
				continue
			}
			for r := 0; r < f.runs; r++ {
				jobs = append(jobs, matrixJob{row: i, col: j, run: r, seed: matrixSeed(f.seed, a.world, fam.name, r)})
			}
		}
	}
	scenOf := func(jb matrixJob) (*scenarios.Scenario, error) {
		specs := matrixSchedule(worlds[jb.row], matrixFamilies[jb.col], jb.seed)
		return worlds[jb.row].WithFaults(specs)
	}
	bar := newProgressBar(stderr, len(jobs), "matrix", f.quiet)
	results, err := runAll(len(jobs), f.workers, func(i int) (runResult, error) {
		jb := jobs[i]
		s, err := scenOf(jb)
		if err != nil {
			return runResult{}, fmt.Errorf("%s under %s, run %d: the generated schedule does not validate: %w", algos[jb.row].name, matrixFamilies[jb.col].name, jb.run, err)
		}
		o, err := scenarios.Run(s, jb.seed, scenarios.Options{})
		if err != nil {
			return runResult{}, fmt.Errorf("%s under %s, seed %d: %w", algos[jb.row].name, matrixFamilies[jb.col].name, jb.seed, err)
		}
		return runResult{o.LockSafety, o.ResourceSafety, o.Liveness}, nil
	}, bar.tickFunc())
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	for i, jb := range jobs {
		res := results[i]
		cell := &m.Cells[jb.row][jb.col]
		cell.Counts.Add(res.lock, res.resource, "")
		if cell.Replay == "" && (res.lock == "violated" || res.resource == "violated") {
			s, err := scenOf(jb)
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			text, err := s.Marshal()
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			file := filepath.Join(f.outDir, "cases", slugOf(algos[jb.row].name)+"--"+slugOf(matrixFamilies[jb.col].name)+".yaml")
			if err := os.WriteFile(file, text, 0o644); err != nil {
				return badInput("--out: %v", err)
			}
			cell.Replay = fmt.Sprintf("simrun run %s --seed %d", shellQuote(file), jb.seed)
		}
	}
	img, err := reports.MatrixImage(m)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	page, err := m.HTML(img.SVG)
	if err != nil {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
	}
	files := []struct {
		name string
		data []byte
	}{{"matrix.png", img.PNG}, {"matrix.svg", img.SVG}, {"matrix.csv", m.CSV()}, {"matrix.md", m.Markdown()}, {"matrix.html", page}}
	for _, fl := range files {
		if err := os.WriteFile(filepath.Join(f.outDir, fl.name), fl.data, 0o644); err != nil {
			return badInput("--out: %v", err)
		}
	}
	fmt.Fprintf(stdout, "violation rates (lock / resource), %d random schedules per cell, base seed %d:\n\n%s\nwrote %s (matrix.png, matrix.svg, matrix.csv, matrix.md, matrix.html, worlds/, cases/)\n", f.runs, f.seed, m.Summary(), f.outDir)
	return nil
}

// slugOf turns a row or column name into a file name.
func slugOf(name string) string {
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
