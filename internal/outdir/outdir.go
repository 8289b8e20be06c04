// Package outdir writes a command's output files safely.
//
// Every simrun command that writes files goes through this package, so that
// the same guarantees hold everywhere:
//
//   - A file is never half written: data goes to a temporary file in the same
//     directory and is renamed into place (rename(2) is atomic within one file
//     system), so an interrupted run leaves either the old file or the new one.
//   - A symlink planted in the output directory is never followed: the rename
//     replaces the link itself, and the directory is opened once as an os.Root
//     so no name can escape it.
//   - A second run into the same directory leaves no stale files of the first
//     (RemoveStale), so a report never links to another run's leftovers.
//   - A set of files written together (a run's report, a campaign's
//     findings and manifest) is bracketed by a mark (IncompleteFile,
//     Claim, Begin, Complete) that readers check (CheckComplete), so a
//     process killed between two renames leaves a folder marked
//     incomplete, never an unmarked mix of two runs.
//   - Temporary files that a killed writer left are removed by the next
//     Prepare of their folder.
//   - Output paths are checked before any work starts (CheckOutputFile), so a
//     long run does not end in "cannot write" and never overwrites its input.
//
// NB: files are not fsynced before the rename: the guarantee is against an
// interrupted process (Ctrl-C, a crash), not against a power loss.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Dir is an output directory prepared by Prepare. It is safe for concurrent
// use by several goroutines.
type Dir struct {
	path string
	root *os.Root

	mu      sync.Mutex
	written map[string]bool // names committed by this Dir in this run
	open    map[*File]bool  // files created and neither committed nor aborted
	seq     int             // numbers the temporary files
	set     string          // the writer of a claimed set (Claim), "" if none
	begun   bool            // Begin marked the folder incomplete
	// onComplete runs in Complete before the mark goes (OnComplete).
	onComplete func() error
	// Cleaned lists the temporary files of killed writers that Prepare
	// removed.
	Cleaned []string
}

// Prepare creates the directory path if it is missing (with its parents) and
// opens it for writing. It refuses, with an error naming the path, a path that
// is a symlink, that is not a directory, or whose directory is not writable.
func Prepare(path string) (*Dir, error) {
	if path == "" {
		return nil, errors.New("output directory: empty path")
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("output directory %s: cannot create it: %w", path, unwrapPath(err))
		}
		if st, err = os.Lstat(path); err != nil {
			return nil, fmt.Errorf("output directory %s: %w", path, unwrapPath(err))
		}
	case err != nil:
		return nil, fmt.Errorf("output directory %s: %w", path, unwrapPath(err))
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("output directory %s is a symbolic link; give the real directory instead", path)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("output directory %s exists and is not a directory", path)
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("output directory %s: %w", path, unwrapPath(err))
	}
	d := &Dir{path: path, root: root, written: map[string]bool{}, open: map[*File]bool{}}
	// Probe: the only reliable writability test is to write (access(2) says
	// yes to root on a read-only mount).
	probe, err := d.createTemp("probe")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("output directory %s is not writable: %w", path, unwrapPath(err))
	}
	name := probe.Name()
	probe.Close()
	_ = root.Remove(filepath.Base(name))
	d.Cleaned = d.removeDeadTemps()
	return d, nil
}

// Path returns the directory's path as given to Prepare.
func (d *Dir) Path() string { return d.path }

// Close releases the directory handle after aborting every file still open.
// The Dir must not be used afterwards.
func (d *Dir) Close() error {
	if d == nil {
		return nil // no output directory was claimed
	}
	d.AbortAll()
	return d.root.Close()
}

// checkName refuses a name that is not a plain file name in this directory.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty file name")
	case name == "." || name == ".." || strings.Contains(name, ".."):
		return fmt.Errorf("file name %q: \"..\" is not allowed", name)
	case strings.ContainsRune(name, '/') || strings.ContainsRune(name, os.PathSeparator):
		return fmt.Errorf("file name %q: path separators are not allowed", name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("file name %q: NUL is not allowed", name)
	}
	return nil
}

// createTemp creates a new temporary file in the directory. Its name starts
// with a dot and ends in ".tmp" so no output pattern matches it; the PID
// in it tells a later Prepare whether its writer still runs.
func (d *Dir) createTemp(base string) (*os.File, error) {
	for range 1000 {
		d.mu.Lock()
		d.seq++
		n := d.seq
		d.mu.Unlock()
		name := fmt.Sprintf(".%s.simrun-%d-%d.tmp", base, os.Getpid(), n)
		f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, errors.New("cannot find a free temporary file name")
}

// WriteFile writes data to the file name in the directory atomically: a
// temporary file in the same directory, then a rename. name must be a plain
// file name (no path separator, no ".."). A symlink at the destination is
// replaced, never followed.
func (d *Dir) WriteFile(name string, data []byte) error {
	f, err := d.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// File is an output file being written: nothing appears under its name until
// Commit.
type File struct {
	d    *Dir
	name string
	tmp  string
	f    *os.File
	done bool
}

// Create starts writing the file name (see WriteFile for the rules on name).
// Call Commit to put it in place or Abort to drop it.
func (d *Dir) Create(name string) (*File, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	f, err := d.createTemp(name)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write %s: %w", d.path, name, unwrapPath(err))
	}
	out := &File{d: d, name: name, tmp: filepath.Base(f.Name()), f: f}
	d.mu.Lock()
	d.open[out] = true
	d.mu.Unlock()
	return out, nil
}

// Name returns the final file name.
func (f *File) Name() string { return f.name }

// Write appends to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("%s: write after commit or abort", f.name)
	}
	n, err := f.f.Write(p)
	if err != nil {
		err = fmt.Errorf("%s: writing %s: %w", f.d.path, f.name, unwrapPath(err))
	}
	return n, err
}

// Commit closes the temporary file and renames it into place, replacing any
// file or symlink of that name.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: commit after commit or abort", f.name)
	}
	f.done = true
	f.d.forget(f)
	if err := f.f.Close(); err != nil {
		_ = f.d.root.Remove(f.tmp)
		return fmt.Errorf("%s: writing %s: %w", f.d.path, f.name, unwrapPath(err))
	}
	if err := f.d.root.Rename(f.tmp, f.name); err != nil {
		_ = f.d.root.Remove(f.tmp)
		return fmt.Errorf("%s: cannot write %s: %w", f.d.path, f.name, unwrapPath(err))
	}
	f.d.mu.Lock()
	f.d.written[f.name] = true
	f.d.mu.Unlock()
	if AfterRename != nil {
		AfterRename(filepath.Join(f.d.path, f.name))
	}
	return nil
}

// AfterRename, when set, is called after each file is put in place (tests
// stop a process there to kill it between two renames).
var AfterRename func(path string)

// Abort drops the temporary file; the destination is left as it was. Abort
// after Commit does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.d.forget(f)
	_ = f.f.Close()
	_ = f.d.root.Remove(f.tmp)
}

func (d *Dir) forget(f *File) {
	d.mu.Lock()
	delete(d.open, f)
	d.mu.Unlock()
}

// AbortAll aborts every file created and not yet committed or aborted: call
// it on an interrupt so no temporary file is left behind.
func (d *Dir) AbortAll() {
	d.mu.Lock()
	files := make([]*File, 0, len(d.open))
	for f := range d.open {
		files = append(files, f)
	}
	d.mu.Unlock()
	for _, f := range files {
		f.Abort()
	}
}

// Written reports whether this Dir committed the file name in this run.
func (d *Dir) Written(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.written[name]
}

// RemoveStale removes the files matching any of the glob patterns
// (path.Match syntax, plain names only) that this Dir did not write in this
// run: the leftovers of an earlier run into the same directory. Call it after
// writing. Directories are left alone; a matching symlink is removed itself,
// never its target.
func (d *Dir) RemoveStale(patterns ...string) error {
	fsys := d.root.FS()
	var errs []error
	for _, p := range patterns {
		if err := checkPattern(p); err != nil {
			return fmt.Errorf("%s: %w", d.path, err)
		}
		names, err := fs.Glob(fsys, p)
		if err != nil {
			return fmt.Errorf("%s: pattern %q: %w", d.path, p, err)
		}
		for _, name := range names {
			if d.Written(name) {
				continue
			}
			st, err := d.root.Lstat(name)
			if err != nil || st.IsDir() {
				continue
			}
			if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("%s: cannot remove stale %s: %w", d.path, name, unwrapPath(err)))
			}
		}
	}
	return errors.Join(errs...)
}

func checkPattern(p string) error {
	if p == "" || strings.ContainsRune(p, '/') || strings.Contains(p, "..") {
		return fmt.Errorf("pattern %q: a plain file name pattern is required", p)
	}
	return nil
}

// CheckOutputFile checks, before any work starts, that path can receive an
// output file: its parent directory exists and is writable, path is neither a
// directory nor a symlink, and it is not the same file as any of inputs
// (same file on disk, or the same cleaned path).
func CheckOutputFile(path string, inputs ...string) error {
	if path == "" {
		return errors.New("empty output file name")
	}
	parent := filepath.Dir(path)
	pst, err := os.Stat(parent)
	if err != nil {
		return fmt.Errorf("%s: directory %s: %w", path, parent, unwrapPath(err))
	}
	if !pst.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, parent)
	}
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; refusing to write through it", path)
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	abs, _ := filepath.Abs(path)
	for _, in := range inputs {
		if in == "" {
			continue
		}
		inAbs, _ := filepath.Abs(in)
		if filepath.Clean(inAbs) == filepath.Clean(abs) {
			return fmt.Errorf("%s is also an input; refusing to overwrite it", path)
		}
		if st != nil {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return fmt.Errorf("%s is the same file as the input %s; refusing to overwrite it", path, in)
			}
		}
	}
	// Probe the parent: the only reliable writability test is to write.
	f, err := os.CreateTemp(parent, ".simrun-probe-*.tmp")
	if err != nil {
		return fmt.Errorf("%s: directory %s is not writable: %w", path, parent, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	_ = os.Remove(name)
	return nil
}

// unwrapPath drops the *PathError wrapper (whose text repeats the path the
// caller already names).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
