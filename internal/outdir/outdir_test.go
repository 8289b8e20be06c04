package outdir

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrepareRefusals(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	realDir := filepath.Join(tmp, "real")
	require.NoError(t, os.Mkdir(realDir, 0o755))
	link := filepath.Join(tmp, "link")
	require.NoError(t, os.Symlink(realDir, link))

	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{"empty path", "", "empty path"},
		{"symlink to a directory", link, "symbolic link"},
		{"a regular file", file, "not a directory"},
		{"under a regular file", filepath.Join(file, "sub"), "not a directory"},
		// /proc/sys is a directory nobody, root included, can create files in.
		{"not writable", "/proc/sys", "not writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Prepare(tt.path)
			require.Error(t, err)
			assert.Nil(t, d)
			assert.Contains(t, err.Error(), tt.wantErr)
			if tt.path != "" {
				assert.Contains(t, err.Error(), tt.path, "the error names the path")
			}
		})
	}
}

func TestPrepareCreatesAndLeavesNoProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b")
	d, err := Prepare(path)
	require.NoError(t, err)
	defer d.Close()
	entries, err := os.ReadDir(path)
	require.NoError(t, err)
	assert.Empty(t, entries, "the writability probe is removed")
	assert.Equal(t, path, d.Path())
}

func TestWriteFileNames(t *testing.T) {
	d, err := Prepare(t.TempDir())
	require.NoError(t, err)
	defer d.Close()
	tests := []struct {
		name    string
		file    string
		wantErr string
	}{
		{"ok", "index.html", ""},
		{"empty", "", "empty file name"},
		{"dot dot", "..", `".."`},
		{"climbs", "../escape.html", `".."`},
		{"separator", "sub/file", "separators"},
		{"absolute", "/tmp/x", "separators"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.WriteFile(tt.file, []byte("data"))
			if tt.wantErr == "" {
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(d.Path(), tt.file))
				require.NoError(t, err)
				assert.Equal(t, "data", string(got))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestWriteFileReplacesPlantedSymlink(t *testing.T) {
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("precious"), 0o644))
	out := filepath.Join(tmp, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(out, "index.html")))
	// A relative link too (os.Root would follow it inside the tree).
	require.NoError(t, os.Symlink("../outside.txt", filepath.Join(out, "lock.html")))

	d, err := Prepare(out)
	require.NoError(t, err)
	defer d.Close()
	for _, name := range []string{"index.html", "lock.html"} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, d.WriteFile(name, []byte("report")))
			st, err := os.Lstat(filepath.Join(out, name))
			require.NoError(t, err)
			assert.True(t, st.Mode().IsRegular(), "the link itself was replaced by a regular file")
			got, err := os.ReadFile(outside)
			require.NoError(t, err)
			assert.Equal(t, "precious", string(got), "the link target is untouched")
		})
	}
}

func TestCreateCommitAbort(t *testing.T) {
	d, err := Prepare(t.TempDir())
	require.NoError(t, err)
	defer d.Close()

	require.NoError(t, d.WriteFile("trace.jsonl", []byte("old\n")))
	f, err := d.Create("trace.jsonl")
	require.NoError(t, err)
	_, err = f.Write([]byte(`{"half":`))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(d.Path(), "trace.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "nothing is visible before Commit")
	f.Abort()
	got, err = os.ReadFile(filepath.Join(d.Path(), "trace.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "Abort keeps the previous file")
	assert.Equal(t, []string{"trace.jsonl"}, names(t, d.Path()), "Abort removes the temporary file")
	_, err = f.Write([]byte("x"))
	assert.Error(t, err, "write after abort")
	assert.Error(t, f.Commit(), "commit after abort")

	f, err = d.Create("trace.jsonl")
	require.NoError(t, err)
	_, err = f.Write([]byte("new\n"))
	require.NoError(t, err)
	require.NoError(t, f.Commit())
	got, err = os.ReadFile(filepath.Join(d.Path(), "trace.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	f.Abort() // no effect after Commit
	assert.Equal(t, []string{"trace.jsonl"}, names(t, d.Path()))
}

func TestAbortAll(t *testing.T) {
	d, err := Prepare(t.TempDir())
	require.NoError(t, err)
	defer d.Close()
	for _, n := range []string{"a", "b", "c"} {
		f, err := d.Create(n)
		require.NoError(t, err)
		_, err = f.Write([]byte("partial"))
		require.NoError(t, err)
	}
	assert.Len(t, names(t, d.Path()), 3, "three temporary files")
	d.AbortAll()
	assert.Empty(t, names(t, d.Path()))
}

func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside.html")
	require.NoError(t, os.WriteFile(outside, []byte("keep"), 0o644))
	out := filepath.Join(tmp, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	for _, n := range []string{"lock.html", "index.html", "point-001.yaml", "point-002.yaml", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(out, n), []byte("first run"), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(out, "point-dir.yaml"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(out, "resource.html")))

	d, err := Prepare(out)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.WriteFile("index.html", []byte("second run")))
	require.NoError(t, d.WriteFile("point-001.yaml", []byte("second run")))
	require.NoError(t, d.RemoveStale("*.html", "point-*.yaml"))

	assert.Equal(t, []string{"index.html", "notes.txt", "point-001.yaml", "point-dir.yaml"}, names(t, out))
	got, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(got), "a stale symlink is removed, not its target")

	t.Run("bad pattern", func(t *testing.T) {
		for _, p := range []string{"", "../*.html", "sub/*.html", "["} {
			assert.Error(t, d.RemoveStale(p), p)
		}
	})
}

func TestCheckOutputFile(t *testing.T) {
	tmp := t.TempDir()
	input := filepath.Join(tmp, "my.yaml")
	require.NoError(t, os.WriteFile(input, []byte("name: x"), 0o644))
	hard := filepath.Join(tmp, "hard.yaml")
	require.NoError(t, os.Link(input, hard))
	link := filepath.Join(tmp, "link.jsonl")
	require.NoError(t, os.Symlink(filepath.Join(tmp, "target"), link))
	existing := filepath.Join(tmp, "old.jsonl")
	require.NoError(t, os.WriteFile(existing, []byte("old"), 0o644))
	wd, err := os.Getwd()
	require.NoError(t, err)
	relInput, err := filepath.Rel(wd, input)
	require.NoError(t, err)

	tests := []struct {
		name    string
		path    string
		inputs  []string
		wantErr string
	}{
		{"new file", filepath.Join(tmp, "trace.jsonl"), []string{input}, ""},
		{"existing file is overwritten later", existing, []string{input}, ""},
		{"empty", "", nil, "empty"},
		{"parent missing", filepath.Join(tmp, "nope", "t.jsonl"), nil, "no such file"},
		{"parent is a file", filepath.Join(input, "t.jsonl"), nil, "not a directory"},
		{"a directory", tmp, nil, "is a directory"},
		{"a symlink", link, nil, "symbolic link"},
		{"the input itself", input, []string{input}, "also an input"},
		{"the input by another spelling", filepath.Join(tmp, ".", "x", "..", "my.yaml"), []string{relInput}, "also an input"},
		{"a hard link to the input", hard, []string{input}, "same file as the input"},
		{"not writable", "/proc/sys/x.jsonl", nil, "not writable"},
		{"not a regular file", "/dev/null", nil, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckOutputFile(tt.path, tt.inputs...)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	assert.Equal(t, []string{"hard.yaml", "link.jsonl", "my.yaml", "old.jsonl"}, names(t, tmp), "no probe left behind")
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}
