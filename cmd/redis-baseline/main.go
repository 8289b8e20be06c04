// Command redis-baseline measures the workload that locksim's Redlock
// throughput target is set against (issue 15, DESIGN "Performance
// targets"): five real redis-servers on loopback, one go-redis client, and
// for each lock cycle SET key value NX PX ttl on each server in turn, then
// the compare-and-delete release script on all five. It prints the cycles
// per second, to divide locksim's simulated cycles per second by.
//
// It starts the servers itself (each on its own 127.0.0.x address and a
// free port, in a temporary directory, no persistence) and stops them by
// PID on every exit path, Ctrl-C included. Real time is measured here on
// purpose: this program is a yardstick outside the simulator.
//
//	go run ./cmd/redis-baseline --cycles 20000
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/realmode/launch"
)

// Result is what one measurement printed with --json.
type Result struct {
	Servers        int     `json:"servers"`
	Cycles         int     `json:"cycles"`
	Seconds        float64 `json:"seconds"`
	CyclesPerSec   float64 `json:"cycles_per_second"`
	MicrosPerCycle float64 `json:"microseconds_per_cycle"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("redis-baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cycles := fs.Int("cycles", 20000, "lock cycles to measure (after 500 warm-up cycles)")
	servers := fs.Int("servers", 5, "redis-servers (Redlock's N)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "redis-baseline: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *cycles < 1 || *cycles > 10_000_000 {
		fmt.Fprintf(stderr, "redis-baseline: --cycles must be 1 to 10,000,000 (got %d)\n", *cycles)
		return 2
	}
	if *servers < 1 || *servers > 15 {
		fmt.Fprintf(stderr, "redis-baseline: --servers must be 1 to 15 (got %d)\n", *servers)
		return 2
	}
	res, err := measure(*servers, *cycles)
	if err != nil {
		fmt.Fprintln(stderr, "redis-baseline:", err)
		var se *setupError
		if errors.As(err, &se) {
			return 2
		}
		return 3
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		return 0
	}
	fmt.Fprintf(stdout, "%d lock cycles on %d real redis-servers in %.3fs: %.0f cycles/s (%.1f µs per cycle)\n",
		res.Cycles, res.Servers, res.Seconds, res.CyclesPerSec, res.MicrosPerCycle)
	return 0
}

// setupError is a failure to start the servers (no redis-server, no free
// address): the user's machine, not the measurement.
type setupError struct{ err error }

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

func measure(n, cycles int) (*Result, error) {
	dir, err := os.MkdirTemp("", "locksim-baseline-")
	if err != nil {
		return nil, &setupError{err}
	}
	defer os.RemoveAll(dir)
	g := launch.NewGroup()
	defer g.StopAll()
	release := g.StopOnSignal()
	defer release()
	pool := launch.NewAddrPool()
	var cs []*goredis.Client
	for i := 0; i < n; i++ {
		ip, err := pool.Next()
		if err != nil {
			return nil, &setupError{err}
		}
		s, err := g.StartRedis(launch.RedisOptions{Name: fmt.Sprintf("r%d", i), IP: ip, Dir: filepath.Join(dir, fmt.Sprint(i))})
		if err != nil {
			return nil, &setupError{err}
		}
		c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), PoolSize: 1})
		defer c.Close()
		cs = append(cs, c)
	}
	ctx := context.Background()
	release5 := goredis.NewScript(redis.ScriptCompareAndDelete.Source)
	cycle := func() error {
		var b [16]byte
		_, _ = rand.Read(b[:])
		val := hex.EncodeToString(b[:])
		for _, c := range cs {
			if err := c.SetNX(ctx, "lock", val, 10*time.Second).Err(); err != nil {
				return err
			}
		}
		for _, c := range cs {
			if err := release5.Run(ctx, c, []string{"lock"}, val).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 0; i < 500; i++ {
		if err := cycle(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	for i := 0; i < cycles; i++ {
		if err := cycle(); err != nil {
			return nil, err
		}
	}
	el := time.Since(start).Seconds()
	return &Result{Servers: n, Cycles: cycles, Seconds: el, CyclesPerSec: float64(cycles) / el, MicrosPerCycle: el * 1e6 / float64(cycles)}, nil
}
