package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlCharactersEscaped: a title, a name and a value in an error
// that carry ESC, NUL or a right-to-left override reach the terminal
// escaped, in the summary, in errors and in what replay prints of a
// result (issue 33 item 12).
func TestControlCharactersEscaped(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "catalogue", "single-gc-pause.yaml"))
	require.NoError(t, err)
	text := string(src)
	title := regexpReplaceLine(text, "title:", `title: "evil \e[2J\0 \u202Eexe"`)
	file := writeFile(t, dir, "t.yaml", title)
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(text, "fencing: none", `fencing: "\e]0;pwned\a\u202E"`, 1))

	out := filepath.Join(dir, "out")
	runs := []result{
		simrun("run", file, "--out", out),
		simrun("run", bad),
		simrun("replay", filepath.Join(out, "result.json")),
		simrun("report", filepath.Join(out, "result.json"), "--out", filepath.Join(dir, "rep")),
	}
	assert.Contains(t, runs[0].stdout, `evil \x1b[2J\x00 \u202eexe`)
	assert.Contains(t, runs[1].stderr, `resource.fencing: unknown mode "\x1b]0;pwned\a\u202e"`)
	for i, r := range runs {
		for _, s := range []string{r.stdout, r.stderr} {
			assert.NotContains(t, s, "\x1b", "run %d", i)
			assert.NotContains(t, s, "\x00", "run %d", i)
			assert.NotContains(t, s, "\u202e", "run %d", i)
		}
	}
}

// regexpReplaceLine replaces the line of text that starts with prefix.
func regexpReplaceLine(text, prefix, line string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = line
		}
	}
	return strings.Join(lines, "\n")
}
