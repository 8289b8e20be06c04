package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/locksim/locksim/internal/outdir"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// runReportFiles are the files a run report may hold (simrun run --out and
// simrun report): whatever of them this run did not write is an earlier
// run's leftover and is removed, so index.html never links a stale lock.html.
var runReportFiles = []string{
	"result.json", "trace.jsonl", "index.html",
	"timeline.png", "timeline.svg", "clocks.png", "clocks.svg",
	"lock.html", "resource.html",
}

// exitProcess ends the process on an interrupt (a variable for tests).
var exitProcess = os.Exit

// outputGuard makes a command's outputs whole in the face of SIGINT and
// SIGTERM: files are written to temporary files, then committed together
// while the guard is held; a signal waits for a commit in progress, drops
// every uncommitted temporary file, says so and exits 128+signal. So an
// interrupted run leaves the previous outputs or the new ones, never a trace
// cut mid-line or a report missing its index.html.
type outputGuard struct {
	mu     sync.Mutex
	stderr io.Writer
	dirs   []*outdir.Dir
	files  []*outdir.File
	sigs   chan os.Signal
	done   chan struct{}
}

func newOutputGuard(stderr io.Writer) *outputGuard {
	g := &outputGuard{stderr: stderr, sigs: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(g.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-g.sigs:
			g.interrupted(sig)
		case <-g.done:
		}
	}()
	return g
}

// interrupted runs on a signal: it holds the guard (waiting for a commit in
// progress to finish) and never releases it, since the process ends.
func (g *outputGuard) interrupted(sig os.Signal) {
	g.mu.Lock()
	for _, f := range g.files {
		f.Abort()
	}
	for _, d := range g.dirs {
		d.AbortAll()
	}
	fmt.Fprintf(g.stderr, "simrun: interrupted (%v): stopped before writing; outputs already there are whole\n", sig)
	code := 130
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	exitProcess(code)
}

// stop ends the guard's watch of signals.
func (g *outputGuard) stop() {
	signal.Stop(g.sigs)
	close(g.done)
}

// track registers a directory whose temporary files an interrupt drops.
func (g *outputGuard) track(d *outdir.Dir) {
	g.mu.Lock()
	g.dirs = append(g.dirs, d)
	g.mu.Unlock()
}

// stage adds a file to be committed by commit.
func (g *outputGuard) stage(f *outdir.File) {
	g.mu.Lock()
	g.files = append(g.files, f)
	g.mu.Unlock()
}

// commit renames every staged file into place and then runs after (stale
// file removal), all under the guard so that an interrupt cannot cut it.
func (g *outputGuard) commit(after func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	files := g.files
	g.files = nil
	for i, f := range files {
		if err := f.Commit(); err != nil {
			for _, rest := range files[i+1:] {
				rest.Abort()
			}
			return err
		}
	}
	if after != nil {
		return after()
	}
	return nil
}

// abort drops every staged file.
func (g *outputGuard) abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.files {
		f.Abort()
	}
	g.files = nil
}

// stageBytes stages data as the file name of d.
func (g *outputGuard) stageBytes(d *outdir.Dir, name string, data []byte) error {
	f, err := d.Create(name)
	if err != nil {
		return err
	}
	g.stage(f)
	_, err = f.Write(data)
	return err
}

// traceStream writes a trace as JSON Lines while the run records it, into
// a staged file that finish commits: the same bytes as stageTrace, without
// keeping the trace (issue 15).
type traceStream struct {
	dir  *outdir.Dir
	bw   *bufio.Writer
	enc  *json.Encoder
	err  error // the first write error; later events are dropped
	file *outdir.File
}

// stageTraceStream stages the file path through g and returns its stream.
func stageTraceStream(g *outputGuard, path string) (*traceStream, error) {
	td, err := traceDir(path)
	if err != nil {
		return nil, err
	}
	g.track(td)
	f, err := td.Create(filepath.Base(path))
	if err != nil {
		td.Close()
		return nil, err
	}
	g.stage(f)
	bw := bufio.NewWriterSize(f, 1<<16)
	return &traceStream{dir: td, bw: bw, enc: json.NewEncoder(bw), file: f}, nil
}

// sink returns the function that receives the events, nil for no stream.
func (t *traceStream) sink() func(*sim.Event) {
	if t == nil {
		return nil
	}
	return func(e *sim.Event) {
		if t.err == nil {
			t.err = t.enc.Encode(e)
		}
	}
}

// finish flushes the stream and commits the file, or drops every staged
// file on an error.
func (t *traceStream) finish(g *outputGuard) error {
	if t.err == nil {
		t.err = t.bw.Flush()
	}
	if t.err != nil {
		g.abort()
		return t.err
	}
	return g.commit(nil)
}

// stageTrace stages the trace as JSON Lines under the file name of d.
func (g *outputGuard) stageTrace(d *outdir.Dir, name string, tr []sim.Event) error {
	f, err := d.Create(name)
	if err != nil {
		return err
	}
	g.stage(f)
	return sim.WriteJSONL(f, tr)
}

// outcomeJSON is result.json: the outcome, indented.
func outcomeJSON(o *scenarios.Outcome) ([]byte, error) {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// writeFileAtomic writes one output file atomically (outdir), in its
// directory reached through any symlinked parents.
func writeFileAtomic(path string, data []byte) error {
	d, err := traceDir(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteFile(filepath.Base(path), data)
}
