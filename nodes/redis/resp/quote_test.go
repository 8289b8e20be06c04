package resp

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAppendQuoteAsStrconv: the fast path renders exactly what
// strconv.AppendQuote does, for plain and for special strings.
func TestAppendQuoteAsStrconv(t *testing.T) {
	tests := []string{
		"", "lock", "c1:00ff00ff00ff00ff", "a b~{}", "say \"hi\"", `back\slash`,
		"tab\there", "new\nline", "\x00", "\x7f", "caf\u00e9", "\xff\xfe", "\u2028", "~",
	}
	for _, s := range tests {
		t.Run(strconv.Quote(s), func(t *testing.T) {
			want := strconv.AppendQuote([]byte("x"), s)
			assert.Equal(t, string(want), string(AppendQuote([]byte("x"), s)))
		})
	}
	for c := 0; c < 256; c++ {
		s := "k" + string([]byte{byte(c)}) + "v"
		assert.Equal(t, strconv.Quote(s), string(AppendQuote(nil, s)), "byte %#x", c)
	}
}
