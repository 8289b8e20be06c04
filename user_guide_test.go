package locksim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUserCodeGuideExample: the guide's example of a team's own lock
// (docs/guide/user-code.md) is example_user_test.go's code, word for word,
// so the guide works as written.
func TestUserCodeGuideExample(t *testing.T) {
	src, err := os.ReadFile("example_user_test.go")
	require.NoError(t, err)
	guide, err := os.ReadFile(filepath.Join("docs", "guide", "user-code.md"))
	require.NoError(t, err)
	s := string(src)
	const begin, end = "// readme-user-example-begin\n", "// readme-user-example-end"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i)
	block := strings.Trim(s[i+len(begin):j], "\n")
	require.Contains(t, string(guide), "```go\n"+block+"\n```")
}
