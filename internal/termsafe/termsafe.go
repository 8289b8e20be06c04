// Package termsafe escapes the characters that would let a file's text
// drive a terminal: simrun prints text that comes from files (a scenario's
// title, a result's names and explanations, values quoted in errors), and
// an escape sequence (ESC), a NUL or a right-to-left override in one
// could rewrite the screen, hide what follows or reorder what a reader
// sees (issue 33 item 12). simrun's own output uses none of them, so its
// standard output and error pass through a Writer.
package termsafe

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// unsafe reports whether r must be escaped: C0 controls but newline and
// tab, DEL, C1 controls, the bidirectional controls (Unicode TR 9:
// ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the line and paragraph
// separators.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2066 && r <= 0x2069,
		r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}

// appendEscaped appends r's escape: \x1b for a byte-sized control, \u202e
// above (a form that stays valid inside a JSON string).
func appendEscaped(b []byte, r rune) []byte {
	if r < 0x80 {
		return fmt.Appendf(b, `\x%02x`, r)
	}
	return fmt.Appendf(b, `\u%04x`, r)
}

// String returns s with every unsafe character escaped; invalid UTF-8
// bytes are escaped as \xNN.
func String(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b = fmt.Appendf(b, `\x%02x`, s[i])
		case unsafe(r):
			b = appendEscaped(b, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// Writer escapes what it writes to W (see String). A character split
// across two writes is held until the rest of it comes.
type Writer struct {
	W    io.Writer
	held []byte
	buf  []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Raw is the writer under the escaping one (the progress bar draws on the
// terminal with control sequences of its own).
func (w *Writer) Raw() io.Writer { return w.W }

// Write escapes p and writes it; it reports len(p) on success.
func (w *Writer) Write(p []byte) (int, error) {
	in := p
	if len(w.held) > 0 {
		in = append(w.held, p...)
		w.held = nil
	}
	out := w.buf[:0]
	for i := 0; i < len(in); {
		c := in[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			out = append(out, c)
			i++
			continue
		}
		if !utf8.FullRune(in[i:]) {
			w.held = append([]byte(nil), in[i:]...)
			break
		}
		r, n := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case unsafe(r):
			out = appendEscaped(out, r)
		default:
			out = append(out, in[i:i+n]...)
		}
		i += n
	}
	w.buf = out
	if _, err := w.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Raw returns the writer under w when w escapes (a *Writer), else w.
func Raw(w io.Writer) io.Writer {
	if r, ok := w.(interface{ Raw() io.Writer }); ok {
		return r.Raw()
	}
	return w
}
