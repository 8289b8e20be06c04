package campaign

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestProgress: no bar when stderr is not a terminal or with --quiet, and
// an inert bar accepts every call.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 10, "sweep", false)
	assert.Nil(t, p.bar, "not a terminal")
	assert.Nil(t, NewProgress(os.Stderr, 10, "sweep", true).bar, "quiet")
	p.Set(3, "x")
	p.Add()
	p.Done()
	assert.Empty(t, b.String())
}
