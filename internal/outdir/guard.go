package outdir

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/locksim/locksim/sim"
)

// ExitProcess ends the process on an interrupt (a variable for tests).
var ExitProcess = os.Exit

// Guard makes a command's outputs whole in the face of SIGINT and
// SIGTERM: files are written to temporary files, then committed together
// while the guard is held; a signal waits for a commit in progress, drops
// every uncommitted temporary file, says so and exits 128+signal. So an
// interrupted run leaves the previous outputs or the new ones, never a trace
// cut mid-line or a report missing its index.html.
type Guard struct {
	mu     sync.Mutex
	stderr io.Writer
	dirs   []*Dir
	files  []*File
	sigs   chan os.Signal
	done   chan struct{}
}

// NewGuard starts a guard that watches SIGINT and SIGTERM until Stop; its
// messages go to stderr.
func NewGuard(stderr io.Writer) *Guard {
	g := &Guard{stderr: stderr, sigs: make(chan os.Signal, 1), done: make(chan struct{})}
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
func (g *Guard) interrupted(sig os.Signal) {
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
	ExitProcess(code)
}

// Stop ends the guard's watch of signals.
func (g *Guard) Stop() {
	signal.Stop(g.sigs)
	close(g.done)
}

// Track registers a directory whose temporary files an interrupt drops.
func (g *Guard) Track(d *Dir) {
	g.mu.Lock()
	g.dirs = append(g.dirs, d)
	g.mu.Unlock()
}

// Stage adds a file to be committed by commit.
func (g *Guard) Stage(f *File) {
	g.mu.Lock()
	g.files = append(g.files, f)
	g.mu.Unlock()
}

// Commit renames every staged file into place and then runs after (stale
// file removal), all under the guard so that an interrupt cannot cut it.
// The claimed folders (Claim) of the staged files are marked incomplete
// first and unmarked last, so a SIGKILL, which no guard stops, leaves them
// marked.
func (g *Guard) Commit(after func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	files := g.files
	g.files = nil
	var sets []*Dir
	for _, f := range files {
		if f.d.set != "" && !slices.Contains(sets, f.d) {
			sets = append(sets, f.d)
		}
	}
	for _, d := range sets {
		if err := d.Begin(); err != nil {
			for _, f := range files {
				f.Abort()
			}
			return err
		}
	}
	for i, f := range files {
		if err := f.Commit(); err != nil {
			for _, rest := range files[i+1:] {
				rest.Abort()
			}
			return err
		}
	}
	if after != nil {
		if err := after(); err != nil {
			return err
		}
	}
	for _, d := range sets {
		if err := d.Complete(); err != nil {
			return err
		}
	}
	return nil
}

// Abort drops every staged file.
func (g *Guard) Abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.files {
		f.Abort()
	}
	g.files = nil
}

// StageBytes stages data as the file name of d.
func (g *Guard) StageBytes(d *Dir, name string, data []byte) error {
	f, err := d.Create(name)
	if err != nil {
		return err
	}
	g.Stage(f)
	_, err = f.Write(data)
	return err
}

// TraceStream writes a trace as JSON Lines while the run records it, into
// a staged file that finish commits: the same bytes as stageTrace, without
// keeping the trace (issue 15).
type TraceStream struct {
	dir  *Dir
	bw   *bufio.Writer
	enc  *json.Encoder
	err  error // the first write error; later events are dropped
	file *File
}

// StageTraceStream stages the file path through g and returns its stream.
func (g *Guard) StageTraceStream(path string) (*TraceStream, error) {
	td, err := PrepareParent(path)
	if err != nil {
		return nil, err
	}
	g.Track(td)
	f, err := td.Create(filepath.Base(path))
	if err != nil {
		td.Close()
		return nil, err
	}
	g.Stage(f)
	bw := bufio.NewWriterSize(f, 1<<16)
	return &TraceStream{dir: td, bw: bw, enc: json.NewEncoder(bw), file: f}, nil
}

// Sink returns the function that receives the events, nil for no stream.
func (t *TraceStream) Sink() func(*sim.Event) {
	if t == nil {
		return nil
	}
	return func(e *sim.Event) {
		if t.err == nil {
			t.err = t.enc.Encode(e)
		}
	}
}

// Finish flushes the stream and commits the file, or drops every staged
// file on an error.
func (t *TraceStream) Finish(g *Guard) error {
	if t.err == nil {
		t.err = t.bw.Flush()
	}
	if t.err != nil {
		g.Abort()
		return t.err
	}
	return g.Commit(nil)
}

// Close closes the stream's folder.
func (t *TraceStream) Close() error { return t.dir.Close() }

// StageTrace stages the trace as JSON Lines under the file name of d.
func (g *Guard) StageTrace(d *Dir, name string, tr []sim.Event) error {
	f, err := d.Create(name)
	if err != nil {
		return err
	}
	g.Stage(f)
	return sim.WriteJSONL(f, tr)
}

// WriteFileAtomic writes one output file atomically (outdir), in its
// directory reached through any symlinked parents.
func WriteFileAtomic(path string, data []byte) error {
	d, err := PrepareParent(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteFile(filepath.Base(path), data)
}

// PrepareParent prepares the folder of a --trace file (through symlinks in its
// parents: only the file itself must not be one, which CheckOutputFile saw).
func PrepareParent(path string) (*Dir, error) {
	parent, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return Prepare(parent)
}
