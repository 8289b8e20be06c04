package realmode

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/scenarios"
)

// settingsCase is one process kind with real servers: a scenario with one
// of them, the spec of that server inside the parsed scenario (which the
// test changes field by field), and the launch options real mode builds
// from the scenario.
type settingsCase struct {
	kind    string
	yaml    string
	spec    func(s *scenarios.Scenario) any
	options func(s *scenarios.Scenario) any
	// elsewhere are the fields real mode reproduces by other means than
	// the server's options, and where (each is tested there).
	elsewhere map[string]string
}

// settingsClient is one client taking a lock on the kind's server: a world
// without a client is refused (nothing to judge), and the test is about the
// servers' settings.
func settingsClient(algorithm, node string) string {
	return "clients:\n  - name: c1\n    lock: {algorithm: " + algorithm + ", node: " + node + "}\n"
}

var settingsCases = []settingsCase{
	{
		kind: scenarios.KindRedis,
		yaml: "redis:\n  - name: A\n" + settingsClient("redis-single", "A"),
		spec: func(s *scenarios.Scenario) any { return &s.Redis()[0] },
		options: func(s *scenarios.Scenario) any {
			return redisLaunchOptions(s.Redis()[0])
		},
		elsewhere: map[string]string{
			"Clock.Offset": "the clock-shifting library (clockFor)",
			"Clock.Drift":  "the clock-shifting library (clockFor)",
		},
	},
	{
		kind: scenarios.KindSentinel,
		yaml: "redis:\n  - name: A\n  - name: B\n    replicaof: A\nsentinel:\n  master: A\n  count: 3\n  quorum: 2\n" + settingsClient("redis-single", "A"),
		spec: func(s *scenarios.Scenario) any { return s.Sentinel() },
		options: func(s *scenarios.Scenario) any {
			sp := s.Sentinel()
			var out []any
			for _, n := range sp.Names {
				out = append(out, sentinelLaunchOptions(sp, n))
			}
			return out
		},
		elsewhere: map[string]string{
			"Clock.Offset": "the clock-shifting library (clockFor)",
			"Clock.Drift":  "the clock-shifting library (clockFor)",
		},
	},
	{
		kind:    scenarios.KindMemcached,
		yaml:    "memcached:\n  - name: M\n" + settingsClient("memcached-add", "M"),
		spec:    func(s *scenarios.Scenario) any { return &s.Memcached()[0] },
		options: func(s *scenarios.Scenario) any { return memcachedLaunchOptions(s.Memcached()[0]) },
		elsewhere: map[string]string{
			"Clock.Offset": "the clock-shifting library (clockFor)",
		},
	},
	{
		kind:    scenarios.KindZooKeeper,
		yaml:    "zookeeper:\n  lock_delay: 0s\n" + settingsClient("zookeeper", "zk"),
		spec:    func(s *scenarios.Scenario) any { return s.ZK() },
		options: func(s *scenarios.Scenario) any { return zkLaunchOptions(s.ZK()) },
	},
	{
		kind:    scenarios.KindMySQL,
		yaml:    "mysql:\n  - name: D\n" + settingsClient("mysql-insert", "D"),
		spec:    func(s *scenarios.Scenario) any { return &s.MySQL()[0] },
		options: func(s *scenarios.Scenario) any { return mysqlLaunchOptions(s.MySQL()[0]) },
	},
}

// TestRealModePassesOrRefusesEverySetting: every field of the section of
// a kind real mode starts real servers for is either given to the real
// server (changing it changes the server's launch options), refused by
// Check with an error naming it, or reproduced elsewhere (listed with
// where). A field added to a section that real mode ignores fails here
// (issue 23: maxmemory reached the model but not redis-server, and an
// eviction scenario ran on a server without a limit).
func TestRealModePassesOrRefusesEverySetting(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range settingsCases {
		covered[c.kind] = true
	}
	for name, l := range launchers {
		if l.start != nil {
			assert.True(t, covered[name], "kind %s starts real servers (%s): add it to settingsCases", name, l.real)
		}
	}
	for _, c := range settingsCases {
		t.Run(c.kind, func(t *testing.T) {
			parse := func() *scenarios.Scenario {
				s, err := scenarios.Parse("settings.yaml", []byte("name: settings\nduration: 1s\n"+c.yaml))
				require.NoError(t, err)
				require.NoError(t, Check(s))
				return s
			}
			base := c.options(parse())
			used := map[string]bool{}
			for _, f := range leafFields(reflect.TypeOf(c.spec(parse())).Elem(), "") {
				s := parse()
				perturb(t, reflect.ValueOf(c.spec(s)).Elem(), f)
				err := Check(s)
				var ue *UnsupportedError
				switch {
				case err != nil:
					require.True(t, errors.As(err, &ue), "%s: %v", f, err)
					assert.True(t, namesField(ue.Where, f), "%s is refused, but the error names %q", f, ue.Where)
				case !reflect.DeepEqual(base, c.options(s)):
					// passed to the real server
				default:
					why, ok := c.elsewhere[f]
					assert.True(t, ok, "%s %s: real mode neither passes it to %s nor refuses it (exit 2 naming the field)", c.kind, f, launchers[c.kind].real)
					assert.NotEmpty(t, why)
					used[f] = true
				}
			}
			for f := range c.elsewhere {
				assert.True(t, used[f], "elsewhere lists %s, which is passed, refused or no field", f)
			}
		})
	}
}

// leafFields lists the paths of a struct's fields that hold values,
// descending into nested structs ("Config.LockWaitTimeout").
func leafFields(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, leafFields(f.Type, prefix+f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	sort.Strings(out)
	return out
}

// perturb gives the field at path a value other than its own.
func perturb(t *testing.T, v reflect.Value, path string) {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		v.SetInt(v.Int() + int64(time.Second))
	case v.Kind() >= reflect.Int && v.Kind() <= reflect.Int64:
		// Twice and a megabyte more: a value in megabytes (memcached's
		// -m) changes too.
		v.SetInt(2*v.Int() + 1<<20)
	case v.Kind() == reflect.Float64 || v.Kind() == reflect.Float32:
		v.SetFloat(v.Float() + 1)
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
	case v.Kind() == reflect.String:
		v.SetString(v.String() + "x")
	case v.Kind() == reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	default:
		t.Fatalf("%s: no way to change a %s; teach perturb", path, v.Type())
	}
}

// namesField: an UnsupportedError's Where names a field when it holds the
// field's name or that of a struct around it, in the scenario's spelling
// (snake case) or Go's.
func namesField(where, path string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for _, part := range strings.Split(path, ".") {
		if part != "Config" && strings.Contains(norm(where), norm(part)) {
			return true
		}
	}
	return false
}

// TestRealModeStartsCluster: a cluster: section's nodes are Redis servers
// that real mode starts as a real Redis Cluster (startCluster): every
// cluster scenario of the catalogue passes Check, and its nodes are real
// processes, never the model's nodes in their place.
func TestRealModeStartsCluster(t *testing.T) {
	for _, name := range []string{"cluster-minority-master", "redlock-clusters-two-failovers"} {
		s, err := scenarios.Builtin(name)
		require.NoError(t, err)
		require.NoError(t, Check(s), name)
		r := rolesOf(s)
		for _, cs := range s.Clusters() {
			for _, n := range cs.Nodes {
				assert.True(t, r.real(n.Name), "%s: %s is a real server", name, n.Name)
			}
		}
	}
}
