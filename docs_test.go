package locksim_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFiles are the README and every Markdown file under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	require.NoError(t, err)
	require.Greater(t, len(files), 10)
	return files
}

var (
	fencedBlock = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	codeSpan    = regexp.MustCompile("`[^`\n]*`")
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?)\s*$`)
)

// prose is a Markdown file without its code (fenced blocks and spans),
// where a "](" is not a link.
func prose(md string) string {
	return codeSpan.ReplaceAllString(fencedBlock.ReplaceAllString(md, ""), "")
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(fencedBlock.ReplaceAllString(md, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ' || r == '-':
				b.WriteRune('-')
			case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestDocLinksResolve: every relative link and image of the README and
// docs/ names a file that exists, and a #fragment a heading of it.
func TestDocLinksResolve(t *testing.T) {
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(prose(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
			}
			info, err := os.Stat(file)
			if !assert.NoError(t, err, "%s: link %q: no such file", f, target) {
				continue
			}
			if frag == "" || info.IsDir() {
				continue
			}
			md, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.True(t, anchors(string(md))[frag], "%s: link %q: %s has no heading #%s", f, target, file, frag)
		}
	}
}

// TestDocsNameNoIssueNumbersOrMachine: the README and docs/ name no
// internal issue number, and only the performance page speaks of the
// machine it was measured on.
func TestDocsNameNoIssueNumbersOrMachine(t *testing.T) {
	issue := regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)
	machine := regexp.MustCompile(`(?i)2-core|this (shared |loaded )?machine|load average`)
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Empty(t, issue.FindAllString(string(data), -1), "%s names internal issue numbers", f)
		if f != filepath.Join("docs", "design", "performance.md") {
			assert.Empty(t, machine.FindAllString(string(data), -1), "%s speaks of the machine (only docs/design/performance.md does)", f)
		}
	}
}

// TestDocsFuzztimeIsACount: every -fuzztime in the README and docs/ is a
// count (20000x): with Go 1.26 a duration can end in a spurious "context
// deadline exceeded" failure (go.dev/issue/75804).
func TestDocsFuzztimeIsACount(t *testing.T) {
	fuzztime := regexp.MustCompile(`-fuzztime[ =]+([0-9A-Za-z.]+)`)
	count := regexp.MustCompile(`^[0-9]+x$`)
	seen := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range fuzztime.FindAllStringSubmatch(string(data), -1) {
			seen++
			assert.Regexp(t, count, m[1], "%s: -fuzztime %s is not a count", f, m[1])
		}
	}
	assert.Positive(t, seen, "no -fuzztime in the docs: the CI workflow lost its native fuzzing step")
}

// readmeCIBlock is the README's block of CI commands: the sh block after
// the ci-commands marker.
func readmeCIBlock(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(data), "<!-- ci-commands:")
	require.True(t, ok, "README.md has no ci-commands marker")
	_, after, ok = strings.Cut(after, "```sh\n")
	require.True(t, ok, "no sh block after the ci-commands marker")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	return block
}

// TestREADMECICommandsBuildAndCheckTheCode: the README's CI commands run
// a built binary, never go run (which turns every exit code into 1), and
// tell every exit code apart; the guide's workflow runs the same commands.
func TestREADMECICommandsBuildAndCheckTheCode(t *testing.T) {
	block := readmeCIBlock(t)
	assert.NotContains(t, block, "go run", "go run turns every non-zero exit into 1")
	assert.Contains(t, block, "go build -o simrun ./cmd/simrun")
	for _, code := range []string{"0)", "1)", "2)", "3)", "*)"} {
		assert.Contains(t, block, "  "+code, "the CI commands do not tell exit code %s apart", code)
	}
	guide, err := os.ReadFile(filepath.Join("docs", "guide", "fuzzing.md"))
	require.NoError(t, err)
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		assert.Contains(t, string(guide), "          "+l+"\n", "the workflow in docs/guide/fuzzing.md does not run the README's %q", l)
	}
	all := ""
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		all += string(data)
	}
	assert.NotRegexp(t, `go run \./cmd/simrun (fuzz|merge|explore)`, all, "a CI example runs a campaign with go run")
}

// TestREADMECICommandsOnAFreshClone runs the README's CI commands in a
// fresh clone of this repository (its committed HEAD), as a new user's CI
// does: they must build, exit 0 for fenced-baseline (its resource holds),
// write their outputs, and leave the clone clean (run outputs are
// git-ignored, and no committed folder is in their way). The runs are cut
// from 20000 to 60 to bound the test.
func TestREADMECICommandsOnAFreshClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds simrun in a fresh clone")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	if out, err := exec.Command(git, "rev-parse", "--is-inside-work-tree").CombinedOutput(); err != nil {
		t.Skipf("not a git checkout: %s", out)
	}
	block := readmeCIBlock(t)
	require.Contains(t, block, "--runs 20000")
	block = strings.Replace(block, "--runs 20000", "--runs 60", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	clone := filepath.Join(t.TempDir(), "locksim")
	out, err := exec.CommandContext(ctx, git, "clone", "--quiet", "--no-hardlinks", ".", clone).CombinedOutput()
	require.NoError(t, err, "git clone: %s", out)

	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", block)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "SEED=7")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "the README's CI commands failed in a fresh clone:\n%s", out)
	assert.Contains(t, string(out), "fuzz: no violation")
	assert.FileExists(t, filepath.Join(clone, "fuzz-junit.xml"))
	assert.FileExists(t, filepath.Join(clone, "fuzz-findings", "campaign.json"))

	status, err := exec.CommandContext(ctx, git, "-C", clone, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	require.NoError(t, err, "%s", status)
	assert.Empty(t, strings.TrimSpace(string(status)), "the CI commands left files git does not ignore")
}

// TestNoRunOutputsCommitted: no finding file or campaign output of a run
// is tracked outside testdata (fuzz-findings/ once was, and broke the
// README's CI commands on a fresh clone).
func TestNoRunOutputsCommitted(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	out, err := exec.Command(git, "ls-files").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	output := regexp.MustCompile(`(^|/)(finding-[0-9]+(\.shrunk)?\.yaml|campaign\.json|fuzz-junit\.xml)$`)
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(f, "testdata/") {
			continue
		}
		assert.NotRegexp(t, output, f, "a run's output is committed")
		assert.False(t, strings.HasPrefix(f, "fuzz-findings/") || strings.Contains(f, "locksim-findings/"), "%s: a run's output folder is committed", f)
	}
}
