package shell

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"points/point-001.yaml": "points/point-001.yaml",
		"my dir/x.yaml":         "'my dir/x.yaml'",
		"it's":                  `'it'\''s'`,
		"":                      "''",
	} {
		assert.Equal(t, want, Quote(in), in)
	}
}
