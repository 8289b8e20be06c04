package locksim

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/bounded"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// A recorded run (result.json) is read back alone: the record carries the
// scenario's text, the process table and the report's setup, so replaying
// it, checking a trace against it and drawing its report need neither the
// scenario file nor the directory it was run from. A record written before
// records described their run is read with the scenario it names (the
// built-in, or the file relative to the working directory), as then.

// ReadRecord reads a run's record (result.json, or what simrun run --json
// printed) from a file.
func ReadRecord(path string) (*record.Run, error) {
	data, err := record.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return record.Read(path, data)
}

// ScenarioChangedError says that a scenario given for a recorded run is
// not the one that ran.
type ScenarioChangedError struct {
	// Arg names the scenario given; Recorded and Given are the SHA-256
	// of the two texts.
	Arg, Recorded, Given string
}

func (e *ScenarioChangedError) Error() string {
	return fmt.Sprintf("the scenario changed: %s (sha256 %s) is not the scenario the run recorded (sha256 %s)", e.Arg, short(e.Given), short(e.Recorded))
}

// RecordedScenario returns the scenario a record ran: parsed from the
// text it carries, or, for a record that carries none, loaded by the name
// or file it names.
func RecordedScenario(rec *record.Run) (*Scenario, error) {
	if rec.ScenarioText == "" {
		return Open(rec.Arg())
	}
	s, err := scenarios.Parse(rec.File, []byte(rec.ScenarioText))
	if err != nil {
		return nil, fmt.Errorf("the scenario recorded in the result: %w", err)
	}
	return &Scenario{s: s}, nil
}

// SameScenario checks that s is the scenario rec ran (a
// *ScenarioChangedError when its text differs). A record without the
// scenario's text cannot tell: it says so.
func SameScenario(rec *record.Run, s *Scenario) error {
	if rec.ScenarioText == "" {
		return fmt.Errorf("the result does not record its scenario's text (written by an older simrun): cannot tell whether %s changed", s.Arg())
	}
	text, err := s.s.Marshal()
	if err != nil {
		return err
	}
	if got := record.SHA256(string(text)); got != rec.ScenarioSHA256 {
		return &ScenarioChangedError{Arg: s.Arg(), Recorded: rec.ScenarioSHA256, Given: got}
	}
	return nil
}

// Replay runs a recorded run's scenario again with its seed, keeping the
// trace (to compare it with the recorded one).
func Replay(rec *record.Run, s *Scenario, opt Options) (*Result, error) {
	if s == nil {
		var err error
		if s, err = RecordedScenario(rec); err != nil {
			return nil, err
		}
	}
	opt.Seed, opt.SeedZero, opt.KeepTrace = rec.Seed, rec.Seed == 0, true
	return Run(s, opt)
}

// TraceMismatchError is CheckTrace's error for a trace that is not the
// record's: its events hash to another trace hash.
type TraceMismatchError struct {
	Events int
	Hash   string
}

func (e *TraceMismatchError) Error() string {
	return fmt.Sprintf("its %d events hash to %s", e.Events, short(e.Hash))
}

// CheckTrace checks that a recorded trace belongs to the record: hashed
// with the record's process table (or, for an older record, the world of
// the scenario it names), it gives the recorded trace hash. An error
// naming a process the world does not have, or a *TraceMismatchError,
// says it does not.
func CheckTrace(rec *record.Run, trace []sim.Event) error {
	got, err := rec.HashTrace(trace)
	if errors.Is(err, record.ErrNotDescribed) {
		got, err = hashWithScenario(rec, trace)
	}
	if err != nil {
		return err
	}
	if got != rec.TraceHash {
		return &TraceMismatchError{Events: len(trace), Hash: got}
	}
	return nil
}

// hashWithScenario hashes trace with the process table of the world the
// scenario rec names builds (a record without its own table).
func hashWithScenario(rec *record.Run, trace []sim.Event) (string, error) {
	s, err := Open(rec.Arg())
	if err != nil {
		return "", &LegacyError{Err: err}
	}
	w, err := scenarios.Build(s.s, rec.Seed, false)
	if err != nil {
		return "", &LegacyError{Err: err}
	}
	h, err := sim.HashEvents(trace, w.Kernel.Lookup)
	if err != nil {
		return "", err
	}
	return sim.HashString(h), nil
}

// LegacyError is the error of reading a record written before records
// described their run, when the scenario it names cannot be had.
type LegacyError struct{ Err error }

func (e *LegacyError) Error() string { return e.Err.Error() }
func (e *LegacyError) Unwrap() error { return e.Err }

// reportSetup is the report's setup of a record: its own, or for an older
// record the scenario's it names.
func reportSetup(rec *record.Run) (reports.Setup, error) {
	st, err := rec.ReportSetup()
	if !errors.Is(err, record.ErrNotDescribed) {
		return st, err
	}
	s, err := Open(rec.Arg())
	if err != nil {
		return st, &LegacyError{Err: err}
	}
	if st, err = scenarios.SetupOf(s.s); err != nil {
		return st, err
	}
	text, err := s.s.Marshal()
	if err != nil {
		return st, err
	}
	st.Name, st.File, st.Duration, st.YAML = s.s.Name, s.s.File, s.s.Duration, string(text)
	return st, nil
}

// short abbreviates a hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "..."
	}
	return h
}

// Page is one of porcupine's pages of a run (lock.html, resource.html).
type Page = checker.Page

// ReadPages reads the porcupine pages of a recorded run from its report
// folder: those of the safety properties the record says were violated (a
// page of another run left in the folder is not this run's).
func ReadPages(rec *record.Run, dir string) ([]Page, error) {
	var pages []Page
	for _, v := range []struct {
		name    string
		verdict checker.Verdict
	}{{checker.PageLock, rec.Verdicts.Of(checker.LockSafety)}, {checker.PageResource, rec.Verdicts.Of(checker.ResourceSafety)}} {
		b, err := bounded.ReadFile(filepath.Join(dir, v.name), "a report page", record.MaxFileBytes)
		switch {
		case v.verdict != checker.Violated || errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		pages = append(pages, Page{Name: v.name, HTML: b})
	}
	return pages, nil
}
