package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/reports"
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

// matrixAlgo is one row of the matrix.
type matrixAlgo struct {
	name string
	// world names the base world (rows with the same world share their
	// random schedules, so fencing is compared on identical faults).
	world  string
	fenced bool
	yaml   string
}

// matrixFamily is one column: which faults a random schedule draws. Its
// schedules come from the fuzz generator (fuzz.ScheduleWith) limited to
// the family's kind, aimed at its targets, with 1 to maxFaults faults.
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
	// node is true for kinds that target one process (their targets are
	// the lock's servers and the clients, or what failover and servers
	// say); links and partitions are drawn by the generator.
	node bool
}

// matrixMaxFaults bounds the faults of one matrix schedule (1 to 3,
// uniform: faults.DrawSwarm), so that a cell measures its family and not
// a pile-up. locksim's choice.
const matrixMaxFaults = 3

var matrixFamilies = []matrixFamily{
	{name: "clock jump", kind: "clock-jump", node: true, note: "clock jump: 1–3 wall-clock steps of up to 3 ttl (forward two times in three) of a lock server or a client"},
	{name: "clock drift", kind: "clock-drift", node: true, note: "clock drift: 1–3 rate changes to ±0.1% to ±20% of a lock server or a client"},
	{name: "pause", kind: "pause", node: true, note: "pause: 1–3 pauses (GC, SIGSTOP) of up to 3 ttl of a lock server or a client"},
	{name: "crash (no fsync)", kind: "crash", node: true, servers: true, note: "crash (no fsync): 1–3 crashes (process or power) of Redis servers that persist with RDB only, restarted within 2 ttl three times in four, losing what came after the last save; n/a for ZooKeeper (its service stands for a replicated ensemble)"},
	{name: "failover", kind: "crash", node: true, failover: true, servers: true, note: "failover: 1–3 crashes (process or power) of the Sentinel-monitored master, restarted within 2 ttl three times in four; Sentinel promotes the replica; n/a without Sentinel"},
	{name: "partition", kind: "partition", note: "partition: 1–3 random partitions (two or three sides) of every process, healed after up to 2 ttl three times in four"},
	{name: "message delay", kind: "delay", note: "message delay: 1–3 extra delays of up to 1 ttl on a one-way link (two times in three between a client and a server), for up to 2 ttl"},
}

// targets returns the processes a family's node faults may hit in s.
func (f matrixFamily) targets(s *scenarios.Scenario) []string {
	if !f.node {
		return nil
	}
	if f.failover {
		return []string{s.Sentinel.Master}
	}
	var out []string
	for _, r := range s.Redis {
		out = append(out, r.Name)
	}
	if f.servers {
		return out
	}
	if s.ZK != nil {
		out = append(out, s.ZK.Name)
	}
	for _, c := range s.Clients {
		out = append(out, c.Name)
	}
	return out
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

// matrixRun is the run number that seeds run r of row under family col:
// a +fencing row (odd rows, matrixAlgos) uses the run numbers of the row
// above it, so the two face the same schedules and the same simulation
// seeds (fuzz.RunSeed of the run number).
func matrixRun(row, col, r, runs int) int {
	return ((row/2)*len(matrixFamilies)+col)*runs + r
}

// matrixSchedule draws the schedule of one matrix run with the fuzz
// generator.
func matrixSchedule(s *scenarios.Scenario, fam matrixFamily, seed uint64) []faults.Spec {
	_, specs := fuzz.ScheduleWith(fuzz.WorldOf(s), seed, faults.GenOptions{
		Kinds: []string{fam.kind}, MaxFaults: matrixMaxFaults, Targets: fam.targets(s),
	})
	return specs
}

type matrixFlags struct {
	runs    int
	seed    uint64
	workers int
	outDir  string
	quiet   bool
	shard   string
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
Schedules come from the fuzz generator, limited to the family's fault kind.
Run r of row i under family j has run number ((i/2)*families + j)*N + r
and uses the run seed of simrun fuzz, splitmix64(base + (n+1) *
0x9e3779b97f4a7c15), for both its schedule and its simulation: a row and
its +fencing row face the same schedules and seeds, and results do not
depend on --workers.

--shard K/N runs only part K of the matrix's runs and writes campaign.json
into --out; 'simrun merge' joins the shards into the whole matrix.`,
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
	cmd.Flags().StringVar(&f.shard, "shard", "", "run only shard K/N of the matrix's runs (K from 0 to N-1); join the shards with simrun merge")
	return cmd
}

// matrixJob is one run of the matrix.
type matrixJob struct {
	row, col, run int
	seed          uint64
}

// matrixPlan is a matrix: its rows, worlds and runs.
type matrixPlan struct {
	algos  []matrixAlgo
	worlds []*scenarios.Scenario
	jobs   []matrixJob
	runs   int
	seed   uint64
	// hash identifies the worlds and families (the matrix has no base
	// scenario of its own).
	hash string
}

func planMatrix(runs int, seed uint64) (*matrixPlan, error) {
	pl := &matrixPlan{algos: matrixAlgos(), runs: runs, seed: seed}
	var all strings.Builder
	for _, a := range pl.algos {
		s, err := scenarios.Parse(fmt.Sprintf("worlds/%s.yaml", slugOf(a.name)), []byte(a.yaml))
		if err != nil {
			return nil, withCode(exitInconclusive, fmt.Errorf("internal error: matrix world %s: %w", a.name, err))
		}
		pl.worlds = append(pl.worlds, s)
		all.WriteString(a.yaml)
	}
	for _, fam := range matrixFamilies {
		fmt.Fprintf(&all, "%s|%s|%v|%v|%v\n", fam.name, fam.kind, fam.failover, fam.servers, fam.node)
	}
	pl.hash = fuzz.Hash([]byte(all.String()))
	for i := range pl.algos {
		for j, fam := range matrixFamilies {
			if !fam.applies(pl.worlds[i]) {
				continue
			}
			for r := 0; r < runs; r++ {
				pl.jobs = append(pl.jobs, matrixJob{row: i, col: j, run: r, seed: fuzz.RunSeed(seed, matrixRun(i, j, r, runs))})
			}
		}
	}
	return pl, nil
}

func (pl *matrixPlan) identity() fuzz.Identity {
	return fuzz.Identity{Command: "matrix", Version: campaignVersion(), Base: "matrix worlds", BaseHash: pl.hash,
		Seed: pl.seed, Total: len(pl.jobs), Params: []string{"runs=" + strconv.Itoa(pl.runs)}}
}

func (pl *matrixPlan) scenario(jb matrixJob) (*scenarios.Scenario, error) {
	return pl.worlds[jb.row].WithFaults(matrixSchedule(pl.worlds[jb.row], matrixFamilies[jb.col], jb.seed))
}

func (pl *matrixPlan) run(n int) (fuzz.Verdicts, error) {
	jb := pl.jobs[n]
	s, err := pl.scenario(jb)
	if err != nil {
		return fuzz.Verdicts{}, fmt.Errorf("%s under %s, run %d: the generated schedule does not validate: %w", pl.algos[jb.row].name, matrixFamilies[jb.col].name, jb.run, err)
	}
	o, err := scenarios.Run(s, jb.seed, scenarios.Options{})
	if err != nil {
		return fuzz.Verdicts{}, fmt.Errorf("%s under %s, seed %d: %w", pl.algos[jb.row].name, matrixFamilies[jb.col].name, jb.seed, err)
	}
	return fuzz.Verdicts{Lock: o.LockSafety, Resource: o.ResourceSafety, Liveness: o.Liveness}, nil
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
	shard, err := parseShardFlag(f.shard)
	if err != nil {
		return err
	}
	pl, err := planMatrix(f.runs, f.seed)
	if err != nil {
		return err
	}
	id := pl.identity()
	// The matrix's outputs are regenerated whole: it replaces an earlier
	// campaign's (force).
	d, err := claimOut("--out", f.outDir, id, shard, true)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	ctx, interrupted, stop := interruptibleCampaign(context.Background())
	defer stop()
	first, end := shard.Range(len(pl.jobs))
	label := "matrix"
	if shard.N > 1 {
		label += " shard " + shard.String()
	}
	prog := newProgress(stderr, end-first, label, f.quiet)
	verdicts, errs, done := runVerdicts(ctx, first, end, f.workers, prog, pl.run)
	prog.done()
	if interrupted() {
		return withCode(exitInconclusive, fmt.Errorf("interrupted after %d of %d runs: a partial matrix is not written", done, end-first))
	}
	if len(errs) > 0 {
		return withCode(exitInconclusive, fmt.Errorf("internal error: %s", errs[0].Err))
	}
	m := &fuzz.Manifest{Identity: id, Shard: shard.K, Shards: shard.N, First: first, End: end, Done: done}
	if shard.N > 1 {
		if err := writeManifest(d, m, nil, fuzz.VerdictRecord{Verdicts: fuzz.EncodeVerdicts(verdicts)}); err != nil {
			return badInput("--out: %v", err)
		}
		fmt.Fprintf(stdout, "matrix shard %s: runs %d..%d of %d; wrote %s (join the shards with simrun merge)\n",
			shard, first, end-1, len(pl.jobs), filepath.Join(d.Path(), fuzz.ManifestFile))
		return nil
	}
	return writeMatrix(stdout, d, pl, m, verdicts)
}

// writeMatrix writes a whole matrix's outputs into d (matrix without
// --shard, and simrun merge of matrix shards).
func writeMatrix(stdout io.Writer, d *outdir.Dir, pl *matrixPlan, man *fuzz.Manifest, verdicts []fuzz.Verdicts) error {
	wd, err := outdir.Prepare(filepath.Join(d.Path(), "worlds"))
	if err != nil {
		return badInput("--out: %v", err)
	}
	defer wd.Close()
	cd, err := outdir.Prepare(filepath.Join(d.Path(), "cases"))
	if err != nil {
		return badInput("--out: %v", err)
	}
	defer cd.Close()
	for _, a := range pl.algos {
		if err := wd.WriteFile(slugOf(a.name)+".yaml", []byte(a.yaml)); err != nil {
			return badInput("--out: %v", err)
		}
	}
	m := &reports.Matrix{Runs: pl.runs, Seed: pl.seed}
	for _, a := range pl.algos {
		m.Rows = append(m.Rows, a.name)
	}
	for _, fam := range matrixFamilies {
		m.Cols = append(m.Cols, fam.name)
		m.Notes = append(m.Notes, fam.note)
	}
	m.Notes = append(m.Notes,
		"worlds: three clients in continuous contention for 30 s (hold 2 s, think 300 ms), lock lifetime 5 s (ttl, Redisson lease, ZooKeeper session timeout); redis-single, WAIT and Redisson on a master M with a replica R and three sentinels (down_after 3 s); Redlock and redsync on five masters; ZooKeeper on one session service",
		"+fencing: a token with every resource access (INCR on the lock's node, on the first node that granted for Redlock and redsync; the znode's zxid for ZooKeeper) and a resource that rejects anything older than the highest token it saw (mark)",
		"schedules: the fuzz generator (simrun fuzz) limited to the family's fault kind, 1–3 faults, each at a time in the run or on a client's or a server's event; a row and its +fencing row run the same schedules with the same seeds",
		"why a +fencing row's lock-safety rate can differ from its row's: fencing adds messages (the token's INCR round trip before each resource access, the token in each write), so with the same schedule and seed the run's later message latencies, and the moment a triggered fault fires, differ; the lock outcome of a single run can change, the rates stay within each other's intervals")
	m.Cells = make([][]reports.MatrixCell, len(pl.algos))
	for i := range pl.algos {
		m.Cells[i] = make([]reports.MatrixCell, len(matrixFamilies))
		for j, fam := range matrixFamilies {
			m.Cells[i][j].NA = !fam.applies(pl.worlds[i])
		}
	}
	for i, jb := range pl.jobs {
		res := verdicts[i]
		cell := &m.Cells[jb.row][jb.col]
		cell.Counts.Add(res.Lock, res.Resource, "")
		if cell.Replay == "" && (res.Lock == "violated" || res.Resource == "violated") {
			s, err := pl.scenario(jb)
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			text, err := s.Marshal()
			if err != nil {
				return withCode(exitInconclusive, fmt.Errorf("internal error: %w", err))
			}
			name := slugOf(pl.algos[jb.row].name) + "--" + slugOf(matrixFamilies[jb.col].name) + ".yaml"
			if err := cd.WriteFile(name, text); err != nil {
				return badInput("--out: %v", err)
			}
			cell.Replay = fmt.Sprintf("simrun run %s --seed %d", shellQuote(filepath.Join(d.Path(), "cases", name)), jb.seed)
		}
	}
	if err := cd.RemoveStale("*.yaml"); err != nil {
		return badInput("--out: %v", err)
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
		if err := d.WriteFile(fl.name, fl.data); err != nil {
			return badInput("--out: %v", err)
		}
	}
	if err := writeManifest(d, man, nil, fuzz.VerdictRecord{Verdicts: fuzz.EncodeVerdicts(verdicts)}); err != nil {
		return badInput("--out: %v", err)
	}
	fmt.Fprintf(stdout, "violation rates (lock / resource), %d random schedules per cell, base seed %d:\n\n%s\nwrote %s (matrix.png, matrix.svg, matrix.csv, matrix.md, matrix.html, worlds/, cases/)\n", pl.runs, pl.seed, m.Summary(), d.Path())
	return nil
}

// mergeMatrix joins matrix shards (simrun merge).
func mergeMatrix(stdout, stderr io.Writer, dirs []string, ms []*fuzz.Manifest, f mergeFlags) error {
	id := ms[0].Identity
	runs := 0
	for _, p := range id.Params {
		if k, v, _ := strings.Cut(p, "="); k == "runs" {
			runs, _ = strconv.Atoi(v)
		}
	}
	if runs < 1 {
		return badInput("%s: the matrix's parameters %q lack runs=", filepath.Join(dirs[0], fuzz.ManifestFile), id.Params)
	}
	pl, err := planMatrix(runs, id.Seed)
	if err != nil {
		return err
	}
	if pl.hash != id.BaseHash || len(pl.jobs) != id.Total {
		return badInput("%s: the matrix's worlds differ from this simrun's (%.12s, %d runs; this simrun: %.12s, %d runs)", dirs[0], id.BaseHash, id.Total, pl.hash, len(pl.jobs))
	}
	verdicts, err := joinVerdicts(dirs, ms)
	if err != nil {
		return err
	}
	d, err := claimOut("--out", f.out, id, fuzz.Whole, true)
	if err != nil {
		return withCode(exitBadInput, err)
	}
	defer d.Close()
	fmt.Fprintf(stderr, "merged %d shards of the matrix: %d runs\n", len(dirs), len(verdicts))
	return writeMatrix(stdout, d, pl, wholeManifest(id), verdicts)
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
