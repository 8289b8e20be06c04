package redis

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/realmode/launch"
)

// migrationSteps is a slot migration as redis-cli --cluster reshard runs
// it (clusterManagerMoveSlot, R 7.0.15 src/redis-cli.c:4413-4485) with the
// clients' commands in between: slot 8718 ("lock") moves from n2 to n1 of
// a 3-master cluster (n1 0-5460, n2 5461-10922, n3 10923-16383). {id:N} is
// node N's id, {host:N} and {port:N} its address. TestMigrationModelSteps
// checks the model's replies; TestMigrationConformance those of real
// redis-server processes, which must be the same.
var migrationSteps = []struct{ node, cmd, want string }{
	{"n2", "SET lock v PX 60000", `"OK"`},
	{"n2", "SET {lock}:a 1", `"OK"`},
	{"n2", "SET {lock}:b 2", `"OK"`},
	{"n1", "CLUSTER SETSLOT 8718 IMPORTING {id:n2}", `"OK"`},
	{"n2", "CLUSTER SETSLOT 8718 MIGRATING {id:n1}", `"OK"`},
	{"n2", "CLUSTER NODES", `[8718->-n1]`},
	{"n1", "CLUSTER NODES", `[8718-<-n2]`},
	// Importing without ASKING: the slot is still n2's.
	{"n1", "GET lock", `error "MOVED 8718 n2:6379"`},
	{"n2", "GET lock", `"v"`},
	{"n2", "CLUSTER COUNTKEYSINSLOT 8718", `3`},
	{"n2", "CLUSTER GETKEYSINSLOT 8718 10", `["lock" "{lock}:a" "{lock}:b"]`},
	{"n2", "MIGRATE {host:n1} {port:n1} \"\" 0 5000 KEYS lock {lock}:a", `"OK"`},
	// A key no longer here: ASK; some here, some not: TRYAGAIN.
	{"n2", "GET lock", `error "ASK 8718 n1:6379"`},
	{"n2", "EXISTS lock {lock}:b", `error "TRYAGAIN Multiple keys request during rehashing of slot"`},
	{"n2", "GET {lock}:b", `"2"`},
	{"n2", "CLUSTER COUNTKEYSINSLOT 8718", `1`},
	{"n1", "GET lock", `error "MOVED 8718 n2:6379"`},
	{"n1", "ASKING", `"OK"`},
	{"n1", "GET lock", `"v"`},
	// The flag served one command.
	{"n1", "GET lock", `error "MOVED 8718 n2:6379"`},
	{"n1", "ASKING", `"OK"`},
	{"n1", "PTTL lock", `ttl`},
	{"n1", "ASKING", `"OK"`},
	{"n1", "EXISTS lock {lock}:b", `error "TRYAGAIN Multiple keys request during rehashing of slot"`},
	{"n1", "ASKING", `"OK"`},
	{"n1", "EXISTS lock {lock}:a", `2`},
	{"n2", "MIGRATE {host:n1} {port:n1} \"\" 0 5000 KEYS {lock}:b", `"OK"`},
	{"n2", "MIGRATE {host:n1} {port:n1} \"\" 0 5000 KEYS {lock}:b", `"NOKEY"`},
	{"n2", "EXISTS lock {lock}:b", `error "ASK 8718 n1:6379"`},
	// Closing: the target first (it bumps its configEpoch), then the
	// source and the other master.
	{"n1", "CLUSTER SETSLOT 8718 NODE {id:n1}", `"OK"`},
	{"n1", "CLUSTER BUMPEPOCH", `"STILL 4"`},
	{"n1", "CLUSTER NODES", ``},
	{"n2", "CLUSTER SETSLOT 8718 NODE {id:n1}", `"OK"`},
	{"n2", "CLUSTER NODES", ``},
	{"n3", "CLUSTER SETSLOT 8718 NODE {id:n1}", `"OK"`},
	{"n1", "GET lock", `"v"`},
	{"n1", "EXISTS lock {lock}:a {lock}:b", `3`},
	{"n2", "GET lock", `error "MOVED 8718 n1:6379"`},
	{"n3", "GET lock", `error "MOVED 8718 n1:6379"`},
	{"n2", "CLUSTER SETSLOT 8718 MIGRATING {id:n1}", `error "ERR I'm not the owner of hash slot 8718"`},
	{"n1", "CLUSTER SETSLOT 8718 IMPORTING {id:n2}", `error "ERR I'm already the owner of hash slot 8718"`},
	{"n1", "CLUSTER SETSLOT 8718 NODE {id:n3}", `error "ERR Can't assign hashslot 8718 to a different node while I still hold keys for this hash slot."`},
	{"n2", "CLUSTER SETSLOT 16384 STABLE", `error "ERR Invalid or out of range slot"`},
	// A key the target already has: BUSYKEY, nothing deleted here.
	{"n1", "CLUSTER SETSLOT 8718 MIGRATING {id:n3}", `"OK"`},
	{"n3", "CLUSTER SETSLOT 8718 IMPORTING {id:n1}", `"OK"`},
	{"n3", "ASKING", `"OK"`},
	{"n3", "SET lock other", `"OK"`},
	{"n1", "MIGRATE {host:n3} {port:n3} \"\" 0 5000 KEYS lock", `error "ERR Target instance replied with error: BUSYKEY Target key name already exists."`},
	{"n1", "GET lock", `"v"`},
	{"n1", "MIGRATE {host:n3} {port:n3} \"\" 0 5000 REPLACE KEYS lock", `"OK"`},
	{"n3", "ASKING", `"OK"`},
	{"n3", "GET lock", `"v"`},
	{"n1", "CLUSTER SETSLOT 8718 STABLE", `"OK"`},
	{"n3", "CLUSTER SETSLOT 8718 STABLE", `"OK"`},
	{"n1", "GET lock", `nil`},
	{"n1", "GET {lock}:a", `"1"`},
}

// migrationArgs splits a step's command and fills in ids and addresses.
func migrationArgs(cmd string, id func(string) string, host func(string) (string, string)) []string {
	var out []string
	for _, f := range strings.Fields(cmd) {
		switch {
		case f == `""`:
			f = ""
		case strings.HasPrefix(f, "{id:"):
			f = id(f[4 : len(f)-1])
		case strings.HasPrefix(f, "{host:"):
			f, _ = host(f[6 : len(f)-1])
		case strings.HasPrefix(f, "{port:"):
			_, f = host(f[6 : len(f)-1])
		}
		out = append(out, f)
	}
	return out
}

// migrationReply renders a reply as the steps write it: for CLUSTER NODES
// only the open slots of the line of myself, for GETKEYSINSLOT the keys
// sorted (Redis lists the newest first, the model in key order), a PTTL
// near 60 s as ttl.
func migrationReply(cmd, s string) string {
	switch {
	case strings.HasPrefix(cmd, "CLUSTER NODES"):
		for _, line := range strings.Split(s, "\n") {
			if !strings.Contains(line, "myself") {
				continue
			}
			var open []string
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "[") {
					open = append(open, f)
				}
			}
			return strings.Join(open, " ")
		}
	case strings.HasPrefix(cmd, "CLUSTER GETKEYSINSLOT") && strings.HasPrefix(s, "["):
		keys := strings.Fields(strings.Trim(s, "[]"))
		sort.Strings(keys)
		return "[" + strings.Join(keys, " ") + "]"
	case strings.HasPrefix(cmd, "PTTL"):
		if ms, err := strconv.Atoi(s); err == nil && ms > 50000 && ms <= 60000 {
			return "ttl"
		}
	}
	return s
}

func renderModelValue(v Value) string {
	switch v.Kind {
	case KindError:
		return fmt.Sprintf("error %q", v.Str)
	case KindInt:
		return strconv.FormatInt(v.Int, 10)
	case KindArray:
		var parts []string
		for _, e := range v.Array {
			parts = append(parts, renderModelValue(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if v.IsNil() {
		return "nil"
	}
	if v.Kind == KindBulk && strings.Contains(v.Str, "\n") {
		return v.Str // CLUSTER NODES
	}
	return strconv.Quote(v.Str)
}

func TestMigrationModelSteps(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 0, "n1", "n2", "n3")
	w.Advance(time.Second)
	id := func(n string) string { return NodeID(n) }
	host := func(n string) (string, string) { return n, strconv.Itoa(ListenPort) }
	names := strings.NewReplacer(NodeID("n1"), "n1", NodeID("n2"), "n2", NodeID("n3"), "n3")
	for i, st := range migrationSteps {
		got := migrationReply(st.cmd, names.Replace(renderModelValue(w.do(st.node, migrationArgs(st.cmd, id, host)...))))
		if st.want != "" {
			require.Equal(t, st.want, got, "step %d: %s %s", i, st.node, st.cmd)
		}
		w.Advance(10 * time.Millisecond)
	}
}

// TestMigrationConformance runs migrationSteps against a real 3-master
// Redis Cluster (redis-server --cluster-enabled yes, created as redis-cli
// --cluster create does) and the model, and compares every reply.
func TestMigrationConformance(t *testing.T) {
	bin := simtest.NeedBinaries(t, "the Redis Cluster migration conformance test", "apt-get install -y redis-server", "redis-server")[0]
	members, err := CreateCluster([]string{"n1", "n2", "n3"}, 0)
	require.NoError(t, err)
	runRealSteps(t, bin, members, migrationSteps)
}

// readonlySteps: READONLY lets a replica's connection read its master's
// slots (getNodeByQuery, C 7.0.15 cluster.c:6850-6861); writes, other
// masters' slots and other connections are still redirected. n2's replica
// is n6, n1's is n5 (redis-cli --cluster create's rotation).
var readonlySteps = []struct{ node, cmd, want string }{
	{"n2", "SET lock v", `"OK"`},
	{"n2", "WAIT 1 1000", `1`},
	{"n6", "GET lock", `error "MOVED 8718 n2:6379"`},
	{"n6", "READONLY", `"OK"`},
	{"n6", "GET lock", `"v"`},
	{"n6", "EXISTS lock", `1`},
	{"n6", "SET lock w", `error "MOVED 8718 n2:6379"`},
	{"n6", "GET foo", `error "MOVED 12182 n3:6379"`},
	{"n5", "READONLY", `"OK"`},
	{"n5", "GET lock", `error "MOVED 8718 n2:6379"`},
	{"n6", "READWRITE", `"OK"`},
	{"n6", "GET lock", `error "MOVED 8718 n2:6379"`},
	{"n2", "READONLY", `"OK"`},
	{"n2", "GET lock", `"v"`},
}

func TestReadOnlyModelSteps(t *testing.T) {
	w, _ := clusterWorld(t, 2*time.Second, 1, "n1", "n2", "n3", "n4", "n5", "n6")
	w.Advance(time.Second)
	for i, st := range readonlySteps {
		got := renderModelValue(w.do(st.node, migrationArgs(st.cmd, nil, nil)...))
		require.Equal(t, st.want, got, "step %d: %s %s", i, st.node, st.cmd)
		w.Advance(10 * time.Millisecond)
	}
}

func TestReadOnlyConformance(t *testing.T) {
	bin := simtest.NeedBinaries(t, "the Redis Cluster READONLY conformance test", "apt-get install -y redis-server", "redis-server")[0]
	members, err := CreateCluster([]string{"n1", "n2", "n3", "n4", "n5", "n6"}, 1)
	require.NoError(t, err)
	runRealSteps(t, bin, members, readonlySteps)
}

// runRealSteps starts a real Redis Cluster of members (redis-server
// --cluster-enabled yes, created as redis-cli --cluster create does: slots,
// config epochs, MEET, REPLICATE), runs the steps and compares each reply
// with the step's want.
func runRealSteps(t *testing.T, bin string, members []ClusterMember, steps []struct{ node, cmd, want string }) {
	t.Helper()
	dir := t.TempDir()
	g := launch.NewGroup()
	t.Cleanup(g.StopAll)
	pool := launch.NewAddrPool()
	ctx := context.Background()
	srv := map[string]*launch.Server{}
	cli := map[string]*goredis.Client{}
	var names []string
	for _, m := range members {
		names = append(names, m.Name)
		ip, err := pool.Next()
		require.NoError(t, err)
		s, err := g.StartRedis(launch.RedisOptions{Name: m.Name, Bin: bin, IP: ip, Dir: filepath.Join(dir, m.Name), BindSourceAddr: ip,
			ExtraConfig: []string{"cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 2000", "repl-diskless-sync-delay 0"}})
		require.NoError(t, err, "start %s", m.Name)
		srv[m.Name] = s
		// One connection per node, as the model's test client has one
		// connection to each node (ASKING and READONLY are per connection).
		c := goredis.NewClient(&goredis.Options{Addr: s.Addr(), Protocol: 2, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
		t.Cleanup(func() { _ = c.Close() })
		cli[m.Name] = c
	}
	epoch := "cluster_current_epoch:" + strconv.Itoa(len(members))
	for _, m := range members {
		for _, r := range m.Slots {
			require.NoError(t, cli[m.Name].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", r.From, r.To).Err())
		}
		require.NoError(t, cli[m.Name].Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", m.ConfigEpoch).Err())
	}
	first := srv[members[0].Name]
	for _, m := range members[1:] {
		require.NoError(t, cli[m.Name].Do(ctx, "CLUSTER", "MEET", first.IP(), first.Port()).Err())
	}
	known := "cluster_known_nodes:" + strconv.Itoa(len(members))
	waitUntil(t, 30*time.Second, "every node knows the others", func() bool {
		for _, m := range members {
			info, err := cli[m.Name].Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil || !strings.Contains(info, known) {
				return false
			}
		}
		return true
	})
	ids := map[string]string{}
	var pairs []string
	for _, n := range names {
		v, err := cli[n].Do(ctx, "CLUSTER", "MYID").Text()
		require.NoError(t, err)
		ids[n] = v
		pairs = append(pairs, v, n, srv[n].Addr(), n+":"+strconv.Itoa(ListenPort))
	}
	for _, m := range members {
		if m.ReplicaOf != "" {
			require.NoError(t, cli[m.Name].Do(ctx, "CLUSTER", "REPLICATE", ids[m.ReplicaOf]).Err())
		}
	}
	waitUntil(t, 60*time.Second, "cluster ok on every node, the epochs known, the replicas in sync", func() bool {
		for _, m := range members {
			info, err := cli[m.Name].Do(ctx, "CLUSTER", "INFO").Text()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, epoch) {
				return false
			}
			if m.ReplicaOf != "" {
				repl, err := cli[m.Name].Info(ctx, "replication").Result()
				if err != nil || !strings.Contains(repl, "master_link_status:up") {
					return false
				}
			}
		}
		return true
	})
	real := strings.NewReplacer(pairs...)
	id := func(n string) string { return ids[n] }
	host := func(n string) (string, string) { return srv[n].IP(), strconv.Itoa(srv[n].Port()) }
	for i, st := range steps {
		args := migrationArgs(st.cmd, id, host)
		iargs := make([]any, len(args))
		for j, a := range args {
			iargs[j] = a
		}
		res, err := cli[st.node].Do(ctx, iargs...).Result()
		got := migrationReply(st.cmd, real.Replace(renderReal(res, err)))
		if st.want != "" {
			assert.Equal(t, st.want, got, "step %d: %s %s (real)", i, st.node, st.cmd)
		}
	}
}

// renderReal renders a go-redis reply as renderModelValue does.
func renderReal(res any, err error) string {
	if errors.Is(err, goredis.Nil) {
		return "nil"
	}
	if err != nil {
		return fmt.Sprintf("error %q", err.Error())
	}
	switch r := res.(type) {
	case int64:
		return strconv.FormatInt(r, 10)
	case string:
		if strings.Contains(r, "\n") {
			return r
		}
		return strconv.Quote(r)
	case []any:
		var parts []string
		for _, e := range r {
			parts = append(parts, renderReal(e, nil))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(res)
}
