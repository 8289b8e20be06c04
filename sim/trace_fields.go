package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Attr is one typed field of a trace event's payload: a lock key, a
// deadline, a holder's value, a clock step, a section id, partition
// groups. Events carry them beside their text so that readers (reports)
// take the values as they were, never parsing the text, which is for
// people. Values are integers (durations in nanoseconds), strings or
// groups of process names.
//
// NB: the trace hash covers the text, not the attributes: an event's
// attributes are the values its text was rendered from, at the same
// emission point, so hashing them again would change every trace hash and
// add nothing. They are kept only when the trace is (Config.KeepTrace, a
// TraceSink): when nothing reads the trace, an event's attributes cost
// nothing (the variadic arguments stay on the caller's stack).
type Attr struct {
	Key    string
	kind   attrKind
	Int    int64
	Str    string
	Groups [][]string
}

type attrKind uint8

const (
	attrInt attrKind = iota
	attrStr
	attrGroups
)

// Int64 returns an integer attribute.
func Int64(key string, v int64) Attr { return Attr{Key: key, Int: v} }

// Dur returns a duration attribute (nanoseconds).
func Dur(key string, d time.Duration) Attr { return Attr{Key: key, Int: int64(d)} }

// Str returns a string attribute.
func Str(key, v string) Attr { return Attr{Key: key, kind: attrStr, Str: v} }

// Groups returns a groups attribute (partition sides); the groups are
// copied when the event is kept.
func Groups(key string, g [][]string) Attr { return Attr{Key: key, kind: attrGroups, Groups: g} }

// Attrs are an event's typed fields, in the order they were given. They
// encode to JSON as one object ({"key":"lock","deadline":1767225610002}).
type Attrs []Attr

// find returns the attribute named key.
func (as Attrs) find(key string) (Attr, bool) {
	for _, a := range as {
		if a.Key == key {
			return a, true
		}
	}
	return Attr{}, false
}

// Int returns the integer attribute named key.
func (as Attrs) Int(key string) (int64, bool) {
	a, ok := as.find(key)
	return a.Int, ok && a.kind == attrInt
}

// Duration returns the duration attribute named key.
func (as Attrs) Duration(key string) (time.Duration, bool) {
	n, ok := as.Int(key)
	return time.Duration(n), ok
}

// String returns the string attribute named key.
func (as Attrs) String(key string) (string, bool) {
	a, ok := as.find(key)
	return a.Str, ok && a.kind == attrStr
}

// Has reports whether the attribute named key is present.
func (as Attrs) Has(key string) bool {
	_, ok := as.find(key)
	return ok
}

// GroupsOf returns the groups attribute named key.
func (as Attrs) GroupsOf(key string) ([][]string, bool) {
	a, ok := as.find(key)
	return a.Groups, ok && a.kind == attrGroups
}

// Equal reports whether two attribute lists are the same, in order.
func (as Attrs) Equal(bs Attrs) bool {
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		a, b := as[i], bs[i]
		if a.Key != b.Key || a.kind != b.kind || a.Int != b.Int || a.Str != b.Str || len(a.Groups) != len(b.Groups) {
			return false
		}
		for j := range a.Groups {
			if len(a.Groups[j]) != len(b.Groups[j]) {
				return false
			}
			for k := range a.Groups[j] {
				if a.Groups[j][k] != b.Groups[j][k] {
					return false
				}
			}
		}
	}
	return true
}

// Clone returns a copy of the attributes that shares nothing with them
// (groups included): what a sink given a borrowed event keeps
// (Config.TraceBorrow).
func (as Attrs) Clone() Attrs { return keepAttrs(as) }

// keep copies attributes for an event that is kept (the caller's slice is
// its variadic arguments, and groups may be the caller's).
func keepAttrs(as []Attr) Attrs {
	if len(as) == 0 {
		return nil
	}
	out := make(Attrs, len(as))
	copy(out, as)
	for i := range out {
		if g := out[i].Groups; g != nil {
			c := make([][]string, len(g))
			for j := range g {
				c[j] = append([]string(nil), g[j]...)
			}
			out[i].Groups = c
		}
	}
	return out
}

// MarshalJSON encodes the attributes as one object, in order.
func (as Attrs) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, a.Key)
		b = append(b, ':')
		switch a.kind {
		case attrInt:
			b = strconv.AppendInt(b, a.Int, 10)
		case attrStr:
			s, err := json.Marshal(a.Str)
			if err != nil {
				return nil, err
			}
			b = append(b, s...)
		case attrGroups:
			g := a.Groups
			if g == nil {
				g = [][]string{}
			}
			s, err := json.Marshal(g)
			if err != nil {
				return nil, err
			}
			b = append(b, s...)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON decodes what MarshalJSON wrote: numbers are integers,
// strings strings, lists of lists groups.
func (as *Attrs) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("trace fields: want an object")
	}
	var out Attrs
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("trace fields: %w", err)
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("trace fields: %s: %w", key, err)
		}
		var a Attr
		switch {
		case len(raw) > 0 && raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return fmt.Errorf("trace fields: %s: %w", key, err)
			}
			a = Str(key, s)
		case len(raw) > 0 && raw[0] == '[':
			var g [][]string
			if err := json.Unmarshal(raw, &g); err != nil {
				return fmt.Errorf("trace fields: %s: want groups of names: %w", key, err)
			}
			a = Groups(key, g)
		default:
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return fmt.Errorf("trace fields: %s: want an integer, a string or groups, got %s", key, raw)
			}
			a = Int64(key, n)
		}
		out = append(out, a)
	}
	*as = out
	return nil
}
