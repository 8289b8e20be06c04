// Package shell quotes words for the POSIX shell command lines that
// locksim prints (replay commands in reports, sweeps and matrices).
package shell

import "strings"

// Quote quotes a word for a POSIX shell when it needs it.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
