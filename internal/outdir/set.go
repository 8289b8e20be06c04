package outdir

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// IncompleteFile marks a folder whose set of outputs a command is writing:
// written before the first file of the set is put in place and removed
// after the last (and after the files of an earlier set are removed), so
// a folder holds one command's complete set, or this file says it does
// not (issue 33: a SIGKILL during the final writes left an old
// campaign.json beside new findings, an old result.json beside a new
// trace.jsonl). Every reader checks it (CheckComplete).
const IncompleteFile = "INCOMPLETE"

// incompleteHead is the first line of IncompleteFile; the second names the
// writer.
const incompleteHead = "simrun stopped while writing this folder: its files may mix two runs; run the command again into it, or remove the folder."

// Claim prepares path (as Prepare) as the folder of one set of outputs,
// written by what (a command and what identifies its run, e.g. "simrun
// fuzz redlock-clock-jump seed 1"): Begin and Complete then bracket the
// writing of the set.
func Claim(path, what string) (*Dir, error) {
	d, err := Prepare(path)
	if err != nil {
		return nil, err
	}
	d.set = what
	return d, nil
}

// Begin marks the folder incomplete (IncompleteFile) before a claimed
// set's files are put in place; a second Begin before Complete does
// nothing, as does Begin on a folder that was not claimed.
func (d *Dir) Begin() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	if d.set == "" || d.begun {
		d.mu.Unlock()
		return nil
	}
	d.begun = true
	what := d.set
	d.mu.Unlock()
	return d.WriteFile(IncompleteFile, []byte(incompleteHead+"\nwriter: "+what+"\n"))
}

// OnComplete sets what Complete does before it removes the mark (remove
// the files of another set the new one replaces).
func (d *Dir) OnComplete(f func() error) {
	d.mu.Lock()
	d.onComplete = f
	d.mu.Unlock()
}

// Complete removes the mark of Begin: the set is whole.
func (d *Dir) Complete() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	begun, f := d.begun, d.onComplete
	d.mu.Unlock()
	if !begun {
		return nil
	}
	if f != nil {
		if err := f(); err != nil {
			return err
		}
	}
	d.mu.Lock()
	d.begun = false
	d.mu.Unlock()
	if err := d.root.Remove(IncompleteFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", d.path, unwrapPath(err))
	}
	return nil
}

// Incomplete reports whether dir is marked incomplete, and by which writer.
func Incomplete(dir string) (writer string, ok bool) {
	f, err := os.Open(filepath.Join(dir, IncompleteFile))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if w, found := strings.CutPrefix(sc.Text(), "writer: "); found {
			return w, true
		}
	}
	return "", true
}

// IncompleteError says that a folder read as a set of outputs is marked
// incomplete.
type IncompleteError struct{ Dir, Writer string }

func (e *IncompleteError) Error() string {
	w := ""
	if e.Writer != "" {
		w = " (" + e.Writer + ")"
	}
	return fmt.Sprintf("%s is incomplete: simrun stopped while writing it%s, so its files may mix two runs (see its %s); run the command again into it, or remove the folder", e.Dir, w, IncompleteFile)
}

// CheckComplete is nil unless dir is marked incomplete; then an
// *IncompleteError naming it and its writer.
func CheckComplete(dir string) error {
	if w, ok := Incomplete(dir); ok {
		return &IncompleteError{Dir: dir, Writer: w}
	}
	return nil
}

// removeDeadTemps removes the temporary files (createTemp's
// ".NAME.simrun-PID-N.tmp") that processes no longer running left in the folder
// (killed while writing), and returns their names.
func (d *Dir) removeDeadTemps() []string {
	ents, err := fs.ReadDir(d.root.FS(), ".")
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
			continue
		}
		pid, ok := tempOwner(name)
		if !ok || pid == os.Getpid() || alive(pid) {
			continue
		}
		if err := d.root.Remove(name); err == nil {
			removed = append(removed, name)
		}
	}
	return removed
}

// tempOwner is the PID in a temporary file's name ".NAME.simrun-PID-N.tmp"
// (createTemp's; other names are not ours).
func tempOwner(name string) (int, bool) {
	s := strings.TrimSuffix(name, ".tmp")
	i := strings.LastIndex(s, ".simrun-")
	if i < 0 {
		return 0, false
	}
	pidText, seq, ok := strings.Cut(s[i+len(".simrun-"):], "-")
	if !ok {
		return 0, false
	}
	if _, err := strconv.Atoi(seq); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}

// alive reports whether a process pid exists (signal 0; EPERM: it exists,
// owned by another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
