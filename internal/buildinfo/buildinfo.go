// Package buildinfo says which build of locksim a binary is, from what the
// go command records in it.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Describe says which build a binary is: the program's name, its version
// (set at build time, else the module version: a tag, a pseudo-version,
// or "(devel)" for a build in a clone), the VCS revision and time and
// whether the tree was modified, the module path and the Go version.
func Describe(program, set string, bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		if set == "" {
			set = "unknown (no build information in this binary)"
		}
		return program + " " + set
	}
	v := set
	if v == "" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	out := program + " " + v
	rev := settings["vcs.revision"]
	if rev == "" {
		// go install module@version records no VCS settings, but a
		// pseudo-version (v0.0.0-20261122140000-0608a5a1b2c3) ends with the
		// commit; a tagged version names itself.
		rev = PseudoRevision(v)
	}
	if rev != "" {
		out += " revision " + rev
		if settings["vcs.modified"] == "true" {
			out += " (modified)"
		}
		if t := settings["vcs.time"]; t != "" {
			out += " " + t
		}
	}
	path := bi.Main.Path
	if path == "" {
		path = bi.Path
	}
	return out + ", " + path + ", " + bi.GoVersion
}

// PseudoRevision returns the commit prefix a Go pseudo-version ends with
// (https://go.dev/ref/mod#pseudo-versions), or "".
func PseudoRevision(v string) string {
	v, _, _ = strings.Cut(v, "+") // +incompatible, +dirty
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	rev := v[i+1:]
	for _, c := range rev {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	// The segment before it is a 14-digit UTC timestamp.
	j := strings.LastIndexAny(v[:i], "-.")
	if j < 0 || i-j-1 != 14 {
		return ""
	}
	return rev
}
