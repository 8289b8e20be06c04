package libs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim"
)

func TestMain(m *testing.M) {
	// go-redis logs sentinel discoveries with the bubble's time: quiet.
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// timeline is a catalogue scenario run by a real library, beside
// locksim's model of the same library.
type timeline struct {
	scenario string
	library  string // "redsync" or "redislock"
	factory  func(*locksim.Proc) locksim.UserLock
	// model is the algorithm that models the library: the catalogue's
	// clients are switched to it (redsync), or kept (redis-single models
	// redislock: SET NX PX, compare-and-delete, no validity).
	model string
}

var timelines = []timeline{
	{"redlock-clock-jump", "redsync", Redsync, "redsync"},
	{"single-gc-pause", "redsync", Redsync, "redsync"},
	{"single-gc-pause-fenced", "redsync", Redsync, "redsync"},
	{"redsync-extend", "redsync", Redsync, "redsync"},
	{"redsync-setnx-on-extend", "redsync", Redsync, "redsync"},
	{"single-failover", "redsync", Redsync, "redsync"},
	{"single-gc-pause", "redislock", Redislock, "redis-single"},
	{"single-gc-pause-fenced", "redislock", Redislock, "redis-single"},
	{"fencing-write-only-lost-update", "redislock", Redislock, "redis-single"},
	{"single-failover", "redislock", Redislock, "redis-single"},
	{"sentinel-release-follows-switch", "redsync", Redsync, "redsync"},
	{"sentinel-release-follows-switch", "redislock", Redislock, "redis-single"},
}

// scenarioFor is the catalogue scenario with its clients' lock switched to
// the model's algorithm.
func scenarioFor(t testing.TB, tl timeline) *locksim.Scenario {
	s, err := locksim.Builtin(tl.scenario)
	require.NoError(t, err)
	data, err := s.YAML()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(data, &doc))
	for _, c := range doc["clients"].([]any) {
		lock := c.(map[string]any)["lock"].(map[string]any)
		if lock["algorithm"] == tl.model {
			continue
		}
		lock["algorithm"] = tl.model
		if n, ok := lock["node"]; ok && tl.model == "redsync" {
			lock["nodes"] = []any{n}
			delete(lock, "node")
		}
		for _, k := range []string{"fanout", "validity_check", "elapsed_clock", "release", "drift_extra"} {
			delete(lock, k)
		}
	}
	out, err := locksim.FromValues(tl.scenario+"+"+tl.model+".yaml", doc)
	require.NoError(t, err)
	return out
}

// bindAll binds every client of s to f.
func bindAll(t testing.TB, s *locksim.Scenario, f func(*locksim.Proc) locksim.UserLock) map[string]func(*locksim.Proc) locksim.UserLock {
	data, err := s.YAML()
	require.NoError(t, err)
	var doc struct {
		Clients []struct{ Name string } `yaml:"clients"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	m := map[string]func(*locksim.Proc) locksim.UserLock{}
	for _, c := range doc.Clients {
		m[c.Name] = f
	}
	return m
}

func verdicts(r *locksim.Result) string {
	return fmt.Sprintf("lock %s, resource %s, token order %s, liveness %s", r.LockSafety, r.ResourceSafety, r.TokenOrder, r.Liveness)
}

// agreeSeeds is how many seeds each timeline is compared on.
const agreeSeeds = 5

// TestLibrariesAgreeWithModels runs each timeline with the real library
// and with locksim's model of it, on the same scenario and seed, and
// prints the table of docs/guide/user-code.md.
func TestLibrariesAgreeWithModels(t *testing.T) {
	var rows []string
	for _, tl := range timelines {
		s := scenarioFor(t, tl)
		agreed := 0
		var first string
		for seed := uint64(1); seed <= agreeSeeds; seed++ {
			model, err := locksim.Run(s, locksim.Options{Seed: seed})
			require.NoError(t, err)
			lib, err := locksim.RunUser(t, s, locksim.UserOptions{Seed: seed, Clients: bindAll(t, s, tl.factory)})
			require.NoError(t, err)
			if seed == 1 {
				first = fmt.Sprintf("| %s | %s | %s | %s |", tl.scenario, tl.library, verdicts(lib), verdicts(model))
			}
			if verdicts(model) == verdicts(lib) {
				agreed++
				continue
			}
			t.Errorf("%s with %s, seed %d: the library gives %s, the model %s\nlibrary: %s\nmodel: %s", tl.scenario, tl.library, seed, verdicts(lib), verdicts(model), strings.Join(lib.Explanations, "\n"), strings.Join(model.Explanations, "\n"))
		}
		rows = append(rows, fmt.Sprintf("%s %d/%d |", first, agreed, agreeSeeds))
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}
