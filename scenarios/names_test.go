package scenarios

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
)

// literalsIn returns, for each string literal of the repository's non-test
// Go files, the files (relative to the module root) it appears in.
func literalsIn(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
				if v, err := strconv.Unquote(l.Value); err == nil {
					if out[v] == nil {
						out[v] = map[string]bool{}
					}
					out[v][rel] = true
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	return out
}

// nameHomonyms are the non-test files allowed to hold a string literal equal
// to a process kind's, algorithm's or fault kind's name outside its
// declaration, each with the reason it is not a hand-written list of kinds:
// another concept with the same spelling, or data.
var nameHomonyms = map[string]map[string]string{
	"sim/trace.go": {
		"crash": "sim's trace event kinds (sim imports nothing, DESIGN), which the fault installer emits", "restart": "trace kind", "partition": "trace kind",
		"heal": "trace kind", "drop": "trace kind", "pause": "trace kind", "clock-jump": "trace kind", "clock-drift": "trace kind",
	},
	"sim/network.go": {
		"partition": "the trace field naming a partition's id", "drop": "a link-fault event's op field", "delay": "a link-fault event's op field",
	},
	"sim/conn.go":               {"partition": "why a connection failed, as a connection's trace says it"},
	"internal/simtest/steps.go": {"crash": "a datadriven step command of the test harness", "restart": "step command", "partition": "step command", "pause": "step command", "heal": "step command"},
	"reports/timeline.go": {
		"crash": "a mark's label", "restart": "a mark's label", "partition": "the trace field naming a partition's id (sim/network.go)",
		"drop": "a link-fault event's op value (sim/network.go)", "delay": "a link-fault event's op value (sim/network.go)", "pause": "a lane span's label",
	},
	"reports/timelineplot.go":      {"crash": "a legend label", "restart": "a legend label"},
	"reports/interactive.go":       {"order": "the interactive page's mark kind, which its script draws (MarkOrder's name in the page's data)"},
	"nodes/mysql/replication.go":   {"promote": "the replication message's trace text"},
	"nodes/sentinel/instance.go":   {"sentinel": "the process's kind as Sentinel's INFO reports it"},
	"nodes/sentinel/monitor.go":    {"sentinel": "a trace field naming the sentinel that reported a switch"},
	"realmode/launch/server.go":    {"redis": "a launched server's default log name", "sentinel": "a launched server's default log name"},
	"realmode/launch/memcached.go": {"memcached": "the program's name on PATH (MemcachedProgram)"},
	"realmode/launch/mariadb.go":   {"mysql": "go-sql-driver/mysql's database/sql driver name (SQLDriver)"},
	"realmode/launch/zookeeper.go": {"zookeeper": "a launched server's default log name"},
	"clients/algorithms.go": {"redis": "declares NodeRedis, the kind's name (clients cannot import scenarios)", "zookeeper": "declares NodeZooKeeper, the kind's name",
		"memcached": "declares NodeMemcached, the kind's name", "mysql": "declares NodeMySQL, the kind's name"},
	"clients/filler.go": {"filler": "the trace event kind of a filler's writes (sim.Kind)"},
	"realmode/twin.go":  {"sentinel": "a word of Sentinel's event text (\"+sdown sentinel ...\") skipped when naming the instance"},
}

// TestNamesDeclaredOnce (issue 12): each process kind, lock algorithm and
// fault kind is spelled in one non-test Go file, its declaration, and
// named everywhere else through its constant or its registry; apart from
// the homonyms above, a literal equal to a name elsewhere is a hand-written
// list of kinds. Process kinds are declared by their kind file
// (scenarios/kind_*.go), algorithms by clients/config.go, fault kinds by
// faults/kinds.go.
func TestNamesDeclaredOnce(t *testing.T) {
	lits := literalsIn(t, "..")
	declared := map[string]map[string]bool{}
	declare := func(name, file string) {
		if declared[name] == nil {
			declared[name] = map[string]bool{}
		}
		declared[name][file] = true
	}
	for _, k := range kinds {
		declare(k.Name, "scenarios/kind_"+k.Name+".go")
	}
	for _, a := range clients.Algorithms {
		declare(a, "clients/config.go")
	}
	for _, k := range faults.Kinds {
		declare(k, "faults/kinds.go")
	}
	used := map[string]map[string]bool{}
	var names []string
	for n := range declared {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var files []string
		for f := range lits[n] {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			if declared[n][f] {
				continue
			}
			if _, ok := nameHomonyms[f][n]; ok {
				if used[f] == nil {
					used[f] = map[string]bool{}
				}
				used[f][n] = true
				continue
			}
			t.Errorf("%s spells %q, a registered name declared in %v: use its constant or its registry (or allow-list a homonym with a reason)", f, n, keys(declared[n]))
		}
	}
	// Each allow-list entry must still be needed.
	for f, m := range nameHomonyms {
		for n := range m {
			if !used[f][n] {
				t.Errorf("nameHomonyms[%q][%q] is no longer needed: remove it", f, n)
			}
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPropertyNamesDeclaredOnce (issue 22): each property of the checker's
// registry spells its name, its violation kind and its title in one
// non-test Go file, the one that declares it (where its About method is);
// everything else names it through its constant or the registry.
func TestPropertyNamesDeclaredOnce(t *testing.T) {
	lits := literalsIn(t, "..")
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, p := range checker.Properties() {
		m, ok := reflect.TypeOf(p).MethodByName("About")
		require.True(t, ok)
		file, _ := runtime.FuncForPC(m.Func.Pointer()).FileLine(m.Func.Pointer())
		rel, err := filepath.Rel(root, file)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		a := p.About()
		for _, n := range []string{a.Name, a.Kind, a.Title} {
			require.True(t, lits[n][rel], "%s does not spell %q: is it the property's file?", rel, n)
			for _, f := range keys(lits[n]) {
				if f != rel {
					t.Errorf("%s spells %q, a property's name, kind or title declared in %s: use its constant or the registry (checker.Lookup)", f, n, rel)
				}
			}
		}
	}
}
