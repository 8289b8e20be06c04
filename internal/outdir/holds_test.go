package outdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHolds(t *testing.T) {
	dir := t.TempDir()
	d, err := Prepare(dir)
	require.NoError(t, err)
	defer d.Close()
	in := filepath.Join(dir, "result.json")
	require.NoError(t, os.WriteFile(in, []byte("{}"), 0o644))
	other := filepath.Join(t.TempDir(), "result.json")
	require.NoError(t, os.WriteFile(other, []byte("{}"), 0o644))
	link := filepath.Join(t.TempDir(), "link.json")
	require.NoError(t, os.Link(in, link))
	for _, tc := range []struct {
		in    string
		names []string
		want  bool
	}{
		{in, []string{"trace.jsonl", "result.json"}, true},
		{link, []string{"result.json"}, true}, // the same file by another path
		{in, []string{"trace.jsonl"}, false},
		{other, []string{"result.json"}, false},
	} {
		assert.Equal(t, tc.want, d.Holds(tc.in, tc.names), tc.in)
	}
}
