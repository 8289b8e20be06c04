package locksim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/locksim/locksim/internal/termsafe"
	"github.com/locksim/locksim/record"
)

// RecordDifferences compares a recorded result with the record of its
// replay, field by field as result.json holds them (verdicts, violations,
// statistics, expectations, the run's description), and returns one line
// per field that differs: "lock_safety: recorded holds, replayed
// violated". A field the recorded result does not have (a result of an
// older simrun) is not compared, nor how the run was asked for (the file
// name, the --set edits). The trace hash alone let a result
// whose verdicts were edited replay as "matches" (issue 33 item 11).
func RecordDifferences(recorded, replayed *record.Run) ([]string, error) {
	a, err := recordFields(recorded)
	if err != nil {
		return nil, err
	}
	b, err := recordFields(replayed)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		if !invocation[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			out = append(out, fmt.Sprintf("%s: recorded %s, replayed %s", k, shortJSON(a[k]), shortJSON(b[k])))
		}
	}
	return out, nil
}

// invocation are the fields that say how a run was asked for, not what
// it did: the scenario's file name and the --set edits (a replay runs the
// recorded text, edits applied).
var invocation = map[string]bool{"file": true, "sets": true}

// recordFields is the record as result.json's top-level fields.
func recordFields(r *record.Run) (map[string]any, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// shortJSON is v as compact JSON, cut to 80 bytes with the length said,
// its control characters escaped.
func shortJSON(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		s = fmt.Sprintf("%s... (%d bytes)", s[:80], len(s))
	}
	return termsafe.String(s)
}
