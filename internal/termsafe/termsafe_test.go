package termsafe

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode — ok\n\t": "plain text, ünïcode — ok\n\t",
		"a\x1b[2Jb":                    `a\x1b[2Jb`,
		"nul\x00":                      `nul\x00`,
		"cr\rdel\x7f":                  `cr\x0ddel\x7f`,
		"evil\u202eexe.txt":            `evil\u202eexe.txt`,
		"iso\u2066x\u2069":             `iso\u2066x\u2069`,
		"c1\u009b":                     `c1\u009b`,
		"bad\xffutf8":                  `bad\xffutf8`,
	} {
		assert.Equal(t, want, String(in), "%q", in)
	}
}

// TestWriter: the Writer escapes as String does, whatever the split of
// the writes (a character cut in two is held until its rest comes).
func TestWriter(t *testing.T) {
	in := "title: a\x1b]0;pwned\x07 \u202eevil ok é\n"
	want := String(in)
	for cut := 0; cut <= len(in); cut++ {
		var b bytes.Buffer
		w := NewWriter(&b)
		n, err := w.Write([]byte(in[:cut]))
		require.NoError(t, err)
		assert.Equal(t, cut, n)
		_, err = w.Write([]byte(in[cut:]))
		require.NoError(t, err)
		assert.Equal(t, want, b.String(), "cut at %d", cut)
	}
	assert.Equal(t, `title: a\x1b]0;pwned\x07 \u202eevil ok é`+"\n", want)
}
