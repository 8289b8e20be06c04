package campaign

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/locksim/locksim/fuzz"
	"github.com/locksim/locksim/internal/exit"
	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/internal/shell"
	"github.com/locksim/locksim/reports"
)

// WriteMatrix writes a whole matrix's outputs into d (matrix without
// --shard, and simrun merge of matrix shards).
func WriteMatrix(stdout io.Writer, d *outdir.Dir, pl *fuzz.Matrix, man *fuzz.Manifest, verdicts []fuzz.Verdicts) error {
	if err := d.Begin(); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	wd, err := outdir.Prepare(filepath.Join(d.Path(), "worlds"))
	if err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	defer wd.Close()
	cd, err := outdir.Prepare(filepath.Join(d.Path(), "cases"))
	if err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	defer cd.Close()
	for _, a := range pl.Rows {
		if err := wd.WriteFile(fuzz.Slug(a.Name)+".yaml", []byte(a.YAML)); err != nil {
			return exit.BadInputf("--out: %v", err)
		}
	}
	m := &reports.Matrix{Runs: pl.Runs, Seed: pl.Seed}
	for _, a := range pl.Rows {
		m.Rows = append(m.Rows, a.Name)
	}
	for _, fam := range fuzz.MatrixFamilies {
		m.Cols = append(m.Cols, fam.Name)
		m.Notes = append(m.Notes, fam.Note)
	}
	m.Notes = append(m.Notes,
		"worlds: three clients in continuous contention for 30 s (hold 2 s, think 300 ms), lock lifetime 5 s (ttl, Redisson lease, ZooKeeper session timeout, memcached exptime, GETSET timeout; the MySQL locks never expire); redis-single, WAIT, Redisson, redis-getset and the re-entrant locks on a master M with a replica R and three sentinels (down_after 3 s); Redlock and redsync on five masters; redis-single cluster on a Redis Cluster of 3 masters and 3 replicas (node timeout 3 s; go-redis ClusterClient routing and retries); ZooKeeper on one session service; memcached-add on one memcached server (64 MB); the MySQL locks on one MariaDB-like server (wait_timeout 28800 s)",
		"+fencing: a token with every resource access (INCR on the lock's node, on the first node that granted for Redlock and redsync; incr on the memcached server for memcached-add; the znode's zxid for ZooKeeper; the MySQL locks have no token and no +fencing row) and a resource that rejects anything older than the highest token it saw (mark)",
		"schedules: the fuzz generator (simrun fuzz) limited to the family's fault kind, 1–3 faults, each at a time in the run or on a client's or a server's event; a row and its +fencing row run the same schedules with the same seeds",
		"why a +fencing row's lock-safety rate can differ from its row's: fencing adds messages (the token's INCR round trip before each resource access, the token in each write), so with the same schedule and seed the run's later message latencies, and the moment a triggered fault fires, differ; the lock outcome of a single run can change, the rates stay within each other's intervals")
	m.Cells = make([][]reports.MatrixCell, len(pl.Rows))
	for i := range pl.Rows {
		m.Cells[i] = make([]reports.MatrixCell, len(fuzz.MatrixFamilies))
		for j, fam := range fuzz.MatrixFamilies {
			m.Cells[i][j].NA = !fam.Applies(pl.Worlds[i])
		}
	}
	for i, jb := range pl.Jobs {
		res := verdicts[i]
		cell := &m.Cells[jb.Row][jb.Col]
		cell.Counts.Add(res.Lock, res.Resource, "")
		if n := res.Numbers; n.Known {
			cell.Counts.Numbers.Add(n.Grants, n.LatencyP50, n.HasLatency, n.Unavailable)
		}
		if cell.Replay == "" && (res.Lock == "violated" || res.Resource == "violated") {
			s, err := pl.Scenario(jb)
			if err != nil {
				return exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
			}
			text, err := s.Marshal()
			if err != nil {
				return exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
			}
			name := fuzz.Slug(pl.Rows[jb.Row].Name) + "--" + fuzz.Slug(fuzz.MatrixFamilies[jb.Col].Name) + ".yaml"
			if err := cd.WriteFile(name, text); err != nil {
				return exit.BadInputf("--out: %v", err)
			}
			cell.Replay = fmt.Sprintf("simrun run %s --seed %d", shell.Quote(filepath.Join(d.Path(), "cases", name)), jb.Seed)
		}
	}
	if err := cd.RemoveStale("*.yaml"); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	img, err := reports.MatrixImage(m)
	if err != nil {
		return exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
	}
	page, err := m.HTML(img.SVG)
	if err != nil {
		return exit.With(exit.Inconclusive, fmt.Errorf("internal error: %w", err))
	}
	files := []struct {
		name string
		data []byte
	}{{"matrix.png", img.PNG}, {"matrix.svg", img.SVG}, {"matrix.csv", m.CSV()}, {"matrix.md", m.Markdown()}, {"matrix.html", page}}
	for _, fl := range files {
		if err := d.WriteFile(fl.name, fl.data); err != nil {
			return exit.BadInputf("--out: %v", err)
		}
	}
	if err := WriteManifest(d, man, nil, fuzz.RecordOf(verdicts)); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	if err := d.Complete(); err != nil {
		return exit.BadInputf("--out: %v", err)
	}
	fmt.Fprintf(stdout, "violation rates (lock / resource), %d random schedules per cell, base seed %d:\n\n%s\nwrote %s (matrix.png, matrix.svg, matrix.csv, matrix.md, matrix.html, worlds/, cases/)\n", pl.Runs, pl.Seed, m.Summary(), d.Path())
	return nil
}

// MatrixIdentity is the campaign identity of a matrix built by simrun
// version set (Version).
func MatrixIdentity(pl *fuzz.Matrix, set string) fuzz.Identity {
	return fuzz.Identity{Command: "matrix", Version: Version(set), Base: "matrix worlds", BaseHash: pl.Hash,
		Seed: pl.Seed, Total: len(pl.Jobs), Params: []string{"runs=" + strconv.Itoa(pl.Runs)}}
}
