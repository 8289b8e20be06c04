package scenarios

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/locksim/locksim/checker"
)

// ListEntry is one scenario of simrun list --json.
type ListEntry struct {
	Name     string            `json:"name"`
	Title    string            `json:"title"`
	Source   string            `json:"source,omitempty"`
	Duration string            `json:"duration"`
	Seed     uint64            `json:"seed"`
	Expect   map[string]string `json:"expect"`
}

// WriteListJSON writes simrun list --json's array: each scenario's name,
// title, source, duration, seed and expected verdicts.
func WriteListJSON(w io.Writer, cat []*Scenario) error {
	out := make([]ListEntry, 0, len(cat))
	for _, s := range cat {
		e := ListEntry{Name: s.Name, Title: s.Title, Source: s.Source, Duration: s.Duration.String(), Seed: s.Seed, Expect: map[string]string{}}
		for _, j := range s.Expect.Expected() {
			e.Expect[j.Property] = string(j.Verdict)
		}
		if s.Expect.MaxWait > 0 {
			e.Expect["max_wait"] = s.Expect.MaxWait.String()
		}
		if w := s.Expect.LivenessWindow; w != nil {
			e.Expect[ExpectLivenessWindow] = "after " + w.Name() + " within " + w.Within.String()
		}
		out = append(out, e)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Text says what e expects, property by property in registry order
// ("lock violated, liveness holds (max wait 20s)").
func (e Expect) Text() string {
	var parts []string
	for _, p := range checker.Properties() {
		a := p.About()
		v := e.Of(a.Name)
		if v == "" {
			continue
		}
		l := a.Short + " " + string(v)
		if a.Name == checker.Liveness && e.MaxWait > 0 {
			l += " (max wait " + e.MaxWait.String() + ")"
		}
		if w := e.LivenessWindow; a.Name == checker.Liveness && w != nil {
			l += " (after " + w.Name() + ", within " + w.Within.String() + ")"
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "no violation"
	}
	return strings.Join(parts, ", ")
}
