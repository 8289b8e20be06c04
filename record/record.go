// Package record is the record of one run: its verdicts and explanation,
// its trace hash and what it ran (the scenario's text and SHA-256, the
// process table that hashes its trace, the lanes and clocks of its report).
// Its JSON form is simrun's result.json and simrun run --json; simrun
// report, replay and diff read a run back from it alone, from any
// directory, without the scenario file.
//
// It sits below the scenario package (which fills it in: scenarios.Judge),
// the reports (which draw it) and the facade (which writes and reads it),
// and imports only the checker and the kernel.
package record

import (
	"path/filepath"

	"github.com/locksim/locksim/internal/outdir"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/locksim/locksim/internal/bounded"
	"github.com/locksim/locksim/internal/shell"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/sim"
)

// Run is the record of one run. The fields up to Inconclusive are the
// verdicts and what explains them; Setup, Processes and the scenario's
// text describe what ran (filled when the run was asked to describe
// itself, scenarios.Options.Describe; a result.json written before they
// existed has none); the fields without JSON are the run's memory.
type Run struct {
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	// Sets are the PATH=VALUE edits simrun run --set made to the scenario
	// (already in ScenarioText), in order, for the replay command.
	Sets      []string `json:"sets,omitempty"`
	Seed      uint64   `json:"seed"`
	TraceHash string   `json:"trace_hash"`
	// Events is the number of trace events.
	Events      int64  `json:"events"`
	VirtualTime string `json:"virtual_time"`
	// Verdicts are the checker's verdicts (checker.Result.Verdicts), in
	// JSON one key per property here: "lock_safety": "holds", ...
	// (MarshalJSON).
	Verdicts   checker.Verdicts    `json:"-"`
	Violations []checker.Violation `json:"violations"`
	// ViolationsOmitted counts the violations beyond the first
	// checker.MaxViolations, which Violations lists.
	ViolationsOmitted int `json:"violations_omitted,omitempty"`
	// Warnings are the scenario's parse-time warnings
	// (scenarios.Scenario.Warnings): legal, but not what it seems.
	Warnings []string `json:"warnings,omitempty"`
	// Vacuous says where a verdict had little or nothing to judge
	// (checker.Vacuity), and where the run had fewer grants than its
	// scenario's story needs (expect.min_grants).
	Vacuous []string `json:"vacuous,omitempty"`
	// Stats are the run's numbers (checker.Stats): grants, sections,
	// attempts, latency, unavailability, writes, sales.
	Stats         *checker.Stats    `json:"stats,omitempty"`
	Fencing       string            `json:"fencing,omitempty"`
	LivenessNote  string            `json:"liveness_note,omitempty"`
	LongestWait   string            `json:"longest_wait,omitempty"`
	LongestWaiter string            `json:"longest_wait_client,omitempty"`
	Expected      map[string]string `json:"expected"`
	Matched       bool              `json:"matched"`
	// Inconclusive is true when a verdict that mattered is unknown (a
	// checker timeout).
	Inconclusive bool `json:"inconclusive"`
	// Unsupported lists what the run could not simulate faithfully:
	// replies that exist only because of a limit of locksim (a script it
	// does not run, a command or option it does not model), each with the
	// client, the command and the time. A run with any is inconclusive,
	// and none of its verdicts holds or is violated (MarkUnsupported).
	Unsupported []Unsupported `json:"unsupported,omitempty"`

	// Setup is what the run's report shows of the scenario beyond the
	// trace: lanes, roles, lock keys, initial clocks.
	Setup *Setup `json:"setup,omitempty"`
	// Processes is the world's process table, in id order: what hashes a
	// recorded trace again (the hash covers process ids, the trace names).
	Processes []Process `json:"processes,omitempty"`
	// ScenarioSHA256 is the SHA-256 of ScenarioText, hex.
	ScenarioSHA256 string `json:"scenario_sha256,omitempty"`
	// ScenarioText is the scenario as it ran: its YAML with aliases
	// expanded (scenarios.Scenario.Marshal), which parses back to the
	// same scenario.
	ScenarioText string `json:"scenario_text,omitempty"`

	// Pieces is the number of pieces of the history the checker judged
	// and forgot during the run (streaming; 0 when it judged the whole
	// history), and Rerun is true when a violation made the run be made a
	// second time to judge it whole.
	Pieces int  `json:"-"`
	Rerun  bool `json:"-"`

	History *sim.History   `json:"-"`
	Trace   []sim.Event    `json:"-"`
	Result  checker.Result `json:"-"`
	// Pages are porcupine's pages of the illegal histories, when drawn.
	Pages []checker.Page `json:"-"`
}

// Unsupported is one reply that exists because of a limit of locksim.
type Unsupported struct {
	Client string `json:"client"`
	// At is the virtual time the reply reached the client.
	At      time.Duration `json:"at_ns"`
	Command string        `json:"command"`
	Reply   string        `json:"reply"`
}

func (u Unsupported) String() string {
	return fmt.Sprintf("client %s at %v: %s answered %q", u.Client, u.At, u.Command, u.Reply)
}

// MarkUnsupported makes the run inconclusive because of what it could not
// simulate (us, not empty): every verdict that held or was violated
// becomes unknown, the violations go (a violation of code locksim did not
// run as written is no finding), and the run matches no expectation.
func (r *Run) MarkUnsupported(us []Unsupported) {
	r.Unsupported = append(r.Unsupported, us...)
	r.Inconclusive = true
	r.Matched = false
	for i, j := range r.Verdicts {
		if j.Verdict == checker.Holds || j.Verdict == checker.Violated {
			r.Verdicts[i].Verdict = checker.Unknown
		}
	}
	r.Violations = []checker.Violation{}
	r.ViolationsOmitted = 0
}

// InconclusiveWhy says why an inconclusive run is inconclusive.
func (r *Run) InconclusiveWhy() string {
	if len(r.Unsupported) == 0 {
		return "the checker timed out"
	}
	return "locksim could not run what the code sent: " + r.Unsupported[0].String()
}

// Process is one process of the world that ran.
type Process struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	// Kind is the process kind ("redis", "zookeeper", ...), "client" for a
	// lock client, "" for a hidden process (the operator).
	Kind string `json:"kind,omitempty"`
}

// Role says what a server's lane in a report stands for. Each process
// kind declares the roles of its processes (scenarios/kind_*.go).
type Role string

// Lane says what a server's lane in a report draws beyond its faults,
// pauses and downtime. Each process kind declares the lane of its
// processes with their role (scenarios.Proc.Lane): what a lane shows comes
// with the kind, and the reports draw by lane, never by kind.
type Lane string

// The lanes.
const (
	// LanePlain draws faults, pauses and downtime only.
	LanePlain Lane = ""
	// LaneKeyspace also draws the lock keys the server holds, from its
	// key-set, key-del and key-expired events, with what its RDB and AOF
	// would restore (a Redis master or replica).
	LaneKeyspace Lane = "keyspace"
	// LaneZnodes also draws the lock znodes of the server's sessions (the
	// ZooKeeper service).
	LaneZnodes Lane = "znodes"
	// LaneItems also draws the lock items the server holds, from the
	// key and value fields of its item-stored, item-deleted,
	// item-expired, item-evicted and item-flushed events; a crash loses
	// them all (a memcached server).
	LaneItems Lane = "items"
	// LaneRows also draws the row locks the server granted on lock rows,
	// from the typed fields of its mysql-row-locked and
	// mysql-lock-released events, until the transaction's commit,
	// rollback, KILL or the end of its connection, and the committed lock
	// rows whose value names a client (mysql-insert's) while they exist,
	// from the rows field of its commits and recoveries; a crash ends them
	// all, a recovery draws the rows again (a MySQL server).
	LaneRows Lane = "rows"
	// LaneResource is the protected resource's: a resource-safety
	// violation is shaded on it too.
	LaneResource Lane = "resource"
)

// Lanes are every Lane, the ones a kind may declare.
var Lanes = []Lane{LanePlain, LaneKeyspace, LaneZnodes, LaneItems, LaneRows, LaneResource}

// Server is one non-client lane of a report.
type Server struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Note is shown under the lane's name, e.g. "replica of M".
	Note string `json:"note,omitempty"`
	// Lane is what the lane draws.
	Lane Lane `json:"lane,omitempty"`
	// AOF is true for a Redis node with appendonly on (which file a restart
	// loads from).
	AOF bool `json:"aof,omitempty"`
}

// Clock is a process's initial clock state (the scenario's clock: block).
type Clock struct {
	Proc   string
	Offset time.Duration
	// DriftPPB is the rate error in parts per billion (sim.RateFromDrift).
	DriftPPB int64
}

type clockJSON struct {
	Proc     string `json:"proc"`
	Offset   string `json:"offset,omitempty"`
	DriftPPB int64  `json:"drift_ppb,omitempty"`
}

// MarshalJSON writes the offset as a Go duration, as every duration of a
// result is written.
func (c Clock) MarshalJSON() ([]byte, error) {
	j := clockJSON{Proc: c.Proc, DriftPPB: c.DriftPPB}
	if c.Offset != 0 {
		j.Offset = c.Offset.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Clock) UnmarshalJSON(b []byte) error {
	var j clockJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Clock{Proc: j.Proc, DriftPPB: j.DriftPPB}
	if j.Offset != "" {
		d, err := time.ParseDuration(j.Offset)
		if err != nil {
			return fmt.Errorf("clock of %s: offset: %w", j.Proc, err)
		}
		c.Offset = d
	}
	return nil
}

// Setup is what a report needs to know of the scenario beyond the trace:
// names, roles, lock keys and initial clocks. In a result it is stored
// without what the record holds anyway (name, file, duration, text), which
// Run.ReportSetup fills back in.
type Setup struct {
	Name   string `json:"-"`
	Title  string `json:"title,omitempty"`
	Source string `json:"source,omitempty"`
	Why    string `json:"why,omitempty"`
	// File is where the scenario came from ("catalogue/NAME.yaml" for
	// built-ins).
	File     string        `json:"-"`
	Duration time.Duration `json:"-"`
	// Clients and Servers are the lanes, top to bottom, in scenario order.
	Clients []string `json:"clients,omitempty"`
	Servers []Server `json:"servers,omitempty"`
	// LockKeys are the keys (Redis) and parent znodes (ZooKeeper, without
	// the leading slash) whose holders are drawn.
	LockKeys []string `json:"lock_keys,omitempty"`
	// Clocks holds the initial clock of every process with a non-zero one;
	// processes missing from it start exact.
	Clocks []Clock `json:"clocks,omitempty"`
	// YAML is the scenario's text, shown in index.html.
	YAML string `json:"-"`
}

// ErrNotDescribed is returned by what needs the run's description from a
// record written before records carried it.
var ErrNotDescribed = errors.New("the result does not describe its run (written by an older simrun)")

// Read reads a record from its JSON. name names it in errors (a file).
func Read(name string, data []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, notResult(name, data, err)
	}
	if r.Scenario == "" || r.TraceHash == "" {
		return nil, fmt.Errorf("%s: not a simrun result (no scenario or trace_hash)", name)
	}
	if r.ScenarioText != "" && SHA256(r.ScenarioText) != r.ScenarioSHA256 {
		return nil, fmt.Errorf("%s: the recorded scenario text does not match its scenario_sha256 (the result was edited)", name)
	}
	return &r, nil
}

// JSON is the record as result.json holds it: indented, with a final
// newline.
func (r *Run) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Described reports whether the record carries its run's description
// (scenario text, process table, setup).
func (r *Run) Described() bool {
	return r.ScenarioText != "" && len(r.Processes) > 0 && r.Setup != nil
}

// ReportSetup is the report's setup of the run, whole.
func (r *Run) ReportSetup() (Setup, error) {
	if !r.Described() {
		return Setup{}, ErrNotDescribed
	}
	st := *r.Setup
	st.Name, st.File, st.YAML = r.Scenario, r.File, r.ScenarioText
	d, err := time.ParseDuration(r.VirtualTime)
	if err != nil {
		return Setup{}, fmt.Errorf("virtual_time: %w", err)
	}
	st.Duration = d
	return st, nil
}

// HashTrace hashes a recorded trace with the record's process table.
func (r *Run) HashTrace(trace []sim.Event) (string, error) {
	if len(r.Processes) == 0 {
		return "", ErrNotDescribed
	}
	ids := make(map[string]sim.ProcID, len(r.Processes))
	for _, p := range r.Processes {
		ids[p.Name] = sim.ProcID(p.ID)
	}
	h, err := sim.HashEvents(trace, func(name string) (sim.ProcID, bool) {
		id, ok := ids[name]
		return id, ok
	})
	if err != nil {
		return "", err
	}
	return sim.HashString(h), nil
}

// Arg is the NAME|FILE argument that names the run's scenario on a
// command line: its name for a built-in (whose File, "catalogue/NAME.yaml",
// names no file a user has), its file otherwise.
func (r *Run) Arg() string { return ScenarioArg(r.File, r.Scenario) }

// ReplayArgs is what follows "simrun run" to run this scenario again,
// shell-quoted: Arg and its --set edits (the seed is the caller's).
func (r *Run) ReplayArgs() string {
	out := shell.Quote(r.Arg())
	for _, s := range r.Sets {
		out += " --set " + shell.Quote(s)
	}
	return out
}

// ScenarioArg is the rule of Run.Arg for a scenario's file and name: the
// one place it is stated.
func ScenarioArg(file, name string) string {
	if file == "" || strings.HasPrefix(file, "catalogue/") {
		return name
	}
	return file
}

// SHA256 is the hex SHA-256 of a scenario's text.
func SHA256(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// runJSON is Run without its methods, for MarshalJSON.
type runJSON Run

// MarshalJSON writes the record with one key per property verdict after
// virtual_time, in registry order ("lock_safety": "violated", ...), the
// shape result.json and --json have always had.
func (r Run) MarshalJSON() ([]byte, error) {
	return checker.FlatJSON(runJSON(r), r.Verdicts, "violations")
}

// UnmarshalJSON reads what MarshalJSON writes: the verdicts of the
// registered properties from their keys.
func (r *Run) UnmarshalJSON(b []byte) error {
	var plain runJSON
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	vs, err := checker.ReadFlat(b)
	if err != nil {
		return err
	}
	*r = Run(plain)
	r.Verdicts = vs
	return nil
}

// notResult is Read's error for data that is not a result's JSON: it
// names the line a JSON syntax error is on, and says what to pass instead
// when the data is a scenario file (a user's likely mix-up).
func notResult(name string, data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line := 1 + bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n"))
		name = fmt.Sprintf("%s:%d", name, line)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] != '{' && bytes.Contains(data, []byte("duration:")) {
		return fmt.Errorf("%s: not a simrun result: this looks like a scenario file; give the result.json a run wrote (simrun run FILE --out DIR, or --json > r.json)", name)
	}
	return fmt.Errorf("%s: not a simrun result: %v", name, err)
}

// MaxFileBytes bounds a result file (result.json, simrun run --json): a
// result is kilobytes to a few megabytes; a larger file is a mistake.
const MaxFileBytes = 64 << 20

// ReadFile reads a result file of at most MaxFileBytes; anything but a
// regular file is refused (simrun replay /dev/zero read for ever).
func ReadFile(path string) ([]byte, error) {
	// A result in a folder that a killed simrun left half rewritten may
	// sit beside another run's trace (issue 33): refused, naming why.
	if err := outdir.CheckComplete(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return bounded.ReadFile(path, "a result file", MaxFileBytes)
}
