package scenarios

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/internal/suggest"
	"github.com/locksim/locksim/sim"
)

// Error is one problem found in a scenario file, located by file, line and
// field path (for example faults[2].node).
type Error struct {
	File string
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Errors is every problem found in one file.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// reader walks a YAML node tree, reading typed values and collecting errors
// with their location. Every mapping is strict: a key nobody asked for is
// an error that lists the known keys.
type reader struct {
	file string
	errs Errors
	// origin is the file of each node a base scenario set (extends:).
	origin map[*yaml.Node]string
}

func (r *reader) errf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	file := r.file
	if f, ok := r.origin[n]; ok {
		file = f
	}
	r.errs = append(r.errs, &Error{File: file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// obj is a mapping being read.
type obj struct {
	r     *reader
	n     *yaml.Node
	path  string
	known []string
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping returns n as an obj, or nil (with an error) when it is not a
// mapping. A nil node (field absent) gives an empty obj.
func (r *reader) mapping(n *yaml.Node, path string) *obj {
	if n != nil && n.Kind != yaml.MappingNode {
		r.errf(n, path, "must be a mapping of fields, got %s", describe(n))
		return &obj{r: r, path: path}
	}
	return &obj{r: r, n: n, path: path}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return quoted(n.Value)
	}
	return "something else"
}

// get returns the value node of key (nil when absent) and marks key known.
func (o *obj) get(key string) *yaml.Node {
	o.known = append(o.known, key)
	if o.n == nil {
		return nil
	}
	for i := 0; i+1 < len(o.n.Content); i += 2 {
		if o.n.Content[i].Value == key {
			return o.n.Content[i+1]
		}
	}
	return nil
}

// has reports whether key is present (without marking it).
func (o *obj) has(key string) bool {
	if o.n == nil {
		return false
	}
	for i := 0; i+1 < len(o.n.Content); i += 2 {
		if o.n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// keys returns the keys present, in file order.
func (o *obj) keys() []*yaml.Node {
	if o.n == nil {
		return nil
	}
	var out []*yaml.Node
	for i := 0; i+1 < len(o.n.Content); i += 2 {
		out = append(out, o.n.Content[i])
	}
	return out
}

// done reports every key that no get asked for, and duplicate keys.
func (o *obj) done() {
	if o.n == nil {
		return
	}
	known := map[string]bool{}
	for _, k := range o.known {
		known[k] = true
	}
	seen := map[string]bool{}
	for _, kn := range o.keys() {
		if seen[kn.Value] {
			o.r.errf(kn, join(o.path, kn.Value), "duplicate field")
		}
		seen[kn.Value] = true
		if !known[kn.Value] {
			list := append([]string(nil), o.known...)
			sort.Strings(list)
			o.r.errf(kn, join(o.path, kn.Value), "unknown field %q (known: %s)%s", kn.Value, strings.Join(list, ", "), suggest.DidYouMean(kn.Value, list))
		}
	}
}

func (o *obj) scalar(key string) (*yaml.Node, string, bool) {
	n := o.get(key)
	if n == nil {
		return nil, "", false
	}
	if n.Kind != yaml.ScalarNode {
		o.r.errf(n, join(o.path, key), "must be a single value, got %s", describe(n))
		return n, "", false
	}
	return n, n.Value, true
}

func (o *obj) str(key string, dst *string) bool {
	_, v, ok := o.scalar(key)
	if ok {
		*dst = v
	}
	return ok
}

func (o *obj) boolean(key string, dst *bool) bool {
	n, v, ok := o.scalar(key)
	if !ok {
		return false
	}
	switch v {
	case "true", "yes", "on":
		*dst = true
	case "false", "no", "off":
		*dst = false
	default:
		o.r.errf(n, join(o.path, key), "must be true or false, got %q", v)
		return false
	}
	return true
}

func (o *obj) integer(key string, dst *int) bool {
	n, v, ok := o.scalar(key)
	if !ok {
		return false
	}
	x, err := strconv.Atoi(v)
	if err != nil {
		o.r.errf(n, join(o.path, key), "must be a whole number, got %q", v)
		return false
	}
	*dst = x
	return true
}

func (o *obj) uint64(key string, dst *uint64) bool {
	n, v, ok := o.scalar(key)
	if !ok {
		return false
	}
	x, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		o.r.errf(n, join(o.path, key), "must be a non-negative whole number, got %q", v)
		return false
	}
	*dst = x
	return true
}

func (o *obj) float(key string, dst *float64) bool {
	n, v, ok := o.scalar(key)
	if !ok {
		return false
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		o.r.errf(n, join(o.path, key), "must be a number, got %q", v)
		return false
	}
	*dst = x
	return true
}

func (o *obj) duration(key string, dst *time.Duration) bool {
	n, v, ok := o.scalar(key)
	if !ok {
		return false
	}
	d, err := sim.ParseDuration(v)
	if err != nil {
		o.r.errf(n, join(o.path, key), "%v", err)
		return false
	}
	*dst = d
	return true
}

// serverDuration reads a duration a server takes as a whole number of
// unit (time.Millisecond or time.Second), at least min, for the server
// option named option: a value the server cannot take (1500us for a
// millisecond option, 1500ms for a seconds one) is an error naming the
// unit, never truncated. It reports whether the field was given and valid.
func (o *obj) serverDuration(key string, dst *time.Duration, unit, min time.Duration, option string) bool {
	var d time.Duration
	if !o.duration(key, &d) {
		return false
	}
	unitName := "milliseconds"
	if unit == time.Second {
		unitName = "seconds"
	}
	switch {
	case d%unit != 0:
		o.r.errf(o.get(key), join(o.path, key), "%s takes whole %s, got %v", option, unitName, d)
		return false
	case d < min:
		o.r.errf(o.get(key), join(o.path, key), "must be at least %v (%s), got %v", min, option, d)
		return false
	}
	*dst = d
	return true
}

func (o *obj) rng(key string, dst *sim.Range) bool {
	n, v, ok := o.scalar(key)
	if !ok {
		return false
	}
	g, err := sim.ParseRange(v)
	if err != nil {
		o.r.errf(n, join(o.path, key), "%v", err)
		return false
	}
	*dst = g
	return true
}

// strs reads a list of names (a YAML sequence of scalars).
func (o *obj) strs(key string, dst *[]string) bool {
	n := o.get(key)
	if n == nil {
		return false
	}
	out, ok := o.r.strList(n, join(o.path, key))
	if ok {
		*dst = out
	}
	return ok
}

func (r *reader) strList(n *yaml.Node, path string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		r.errf(n, path, "must be a list like [A, B], got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		if e.Kind != yaml.ScalarNode {
			r.errf(e, fmt.Sprintf("%s[%d]", path, i), "must be a name, got %s", describe(e))
			return nil, false
		}
		out = append(out, e.Value)
	}
	return out, true
}

// list returns the items of a sequence field.
func (o *obj) list(key string) []*yaml.Node {
	n := o.get(key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		o.r.errf(n, join(o.path, key), "must be a list, got %s", describe(n))
		return nil
	}
	return n.Content
}
