package locksim_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEUserExample: the README's example of a team's own lock is
// example_user_test.go's code, word for word, so the README works as
// written.
func TestREADMEUserExample(t *testing.T) {
	src, err := os.ReadFile("example_user_test.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	s := string(src)
	const begin, end = "// readme-user-example-begin\n", "// readme-user-example-end"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i)
	block := strings.Trim(s[i+len(begin):j], "\n")
	require.Contains(t, string(readme), "```go\n"+block+"\n```")
}
