package resp

import "strconv"

// AppendQuote is strconv.AppendQuote with a fast path for the common case
// of trace texts (keys, lock values, bulk replies): a string of printable
// ASCII without '"' or '\\' is quoted as is, which is what AppendQuote
// would produce; anything else goes to AppendQuote. It renders every key
// and value set in a run, where AppendQuote's rune-by-rune decoding showed
// in profiles (issue 15).
func AppendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
