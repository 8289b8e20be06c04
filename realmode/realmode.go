package realmode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/realmode/clockshift"
	"github.com/locksim/locksim/realmode/launch"
	"github.com/locksim/locksim/realmode/lazyfs"
	"github.com/locksim/locksim/realmode/proxy"
	"github.com/locksim/locksim/scenarios"
	"github.com/locksim/locksim/sim"
)

// Options tune a real run.
type Options struct {
	// CheckTimeout bounds each porcupine check.
	CheckTimeout time.Duration
	// Visualize draws porcupine's visualization of illegal histories into
	// the outcome's Pages.
	Visualize bool
	// Dir is where the servers' data directories go; a private temporary
	// directory (removed afterwards) when empty.
	Dir string

	// BeforeStart, when set, is called with a server's process name and
	// the loopback address and port it is about to listen on, before the
	// process starts (tests take the port there to check that a port in
	// use is refused with exit 2 and leaves no server running).
	BeforeStart func(name, addr string)

	// serverStarted is called after each server starts (tests).
	serverStarted func(*server)
}

// ErrInterrupted is returned when ctx ends the run (Ctrl-C); every server
// has been stopped by then.
var ErrInterrupted = errors.New("real run interrupted; every server it started was stopped")

// runtime is the state of one real run that the driver goroutine owns.
type runtime struct {
	k   *sim.Kernel
	inj chan arrival
	// start is the real time at which the kernel's time 0 began (set by
	// loop before the kernel runs).
	start    time.Time
	done     chan struct{}
	wg       sync.WaitGroup
	gateways map[string]gatewayProc // current incarnation by process name
	servers  map[string]*server
	byAddr   map[string]string // "127.0.0.1:port" -> process name
	ops      map[string]chan func()
	opsWG    sync.WaitGroup
	// clocks: the processes whose wall clock real mode shifts, and the
	// preload library that does it (built once per run when needed).
	ctx context.Context // ends the run (Ctrl-C), also while servers start
	// serverStarted is Options.serverStarted.
	serverStarted func(*server)
	// beforeStart is Options.BeforeStart.
	beforeStart func(name, addr string)
	group       *launch.Group
	proxy       *proxy.Proxy
	// cuts maps a kernel partition or cut id to the proxy's ids.
	cuts map[int][]int
	// delays are the proxy delay ids (a heal of everything ends them).
	delays   []int
	roles    roles
	clientIP map[string]string
	clocks   map[string]scenarios.ClockSpec
	clockLib string
	dir      string
	// poweredOff holds the servers whose host lost power and has not
	// restarted (observe).
	poweredOff map[string]bool
	// clusterIDs and nodeNames map a Redis Cluster node's process name
	// to its node id and back (startCluster; read by watchLogs).
	clusterIDs map[string]string
	nodeNames  map[string]string
}

// arrival is something a socket reader (or a fault worker) hands the
// driver: f, to run on the driver's goroutine, and the real time at which
// it arrived.
type arrival struct {
	at time.Time
	f  func()
}

// inject hands f to the driver goroutine (from a socket reader), stamped
// with the real time of its arrival: the driver runs the kernel up to that
// time before f, so a reply is sent (and its history event stamped) when
// it arrived, not at the kernel's last event.
func (rt *runtime) inject(f func()) {
	select {
	case rt.inj <- arrival{at: time.Now(), f: f}:
	case <-rt.done:
	}
}

// apply runs a on the driver's goroutine at its arrival's virtual time:
// the kernel first runs every event due up to it (in time order, so a
// client timer due before the reply fires before it, and none due after
// it does), then a.f injects at that time. An arrival stamped before the
// kernel's time (two readers racing into the channel, or one that waited
// while the kernel ran) is applied at the kernel's time, never earlier.
func (rt *runtime) apply(a arrival, end sim.Time) error {
	at := sim.Time(a.at.Sub(rt.start))
	if at > end {
		at = end
	}
	if at > rt.k.Now() {
		if err := rt.k.Run(at); err != nil {
			return err
		}
	}
	a.f()
	return nil
}

// names rewrites a sentinel's [ip, port] answer into [process name, port],
// the form the model's clients know (clients.discover).
func (rt *runtime) names(v redis.Value) redis.Value {
	if v.Kind != redis.KindArray || len(v.Array) != 2 || v.Array[0].Kind != redis.KindBulk || v.Array[1].Kind != redis.KindBulk {
		return v
	}
	if n, ok := rt.byAddr[v.Array[0].Str+":"+v.Array[1].Str]; ok {
		return redis.Array(redis.Bulk(n), v.Array[1])
	}
	return v
}

// eventNames rewrites a sentinel's +switch-master message ["message",
// "+switch-master", "<name> <old-ip> <old-port> <new-ip> <new-port>"]
// (sentinel.c:5324-5326, 2950-2954) into process names and port 6379, the
// form the model's sentinels publish (nodes/sentinel/pubsub.go); any other
// message is left as it is.
func (rt *runtime) eventNames(v redis.Value) redis.Value {
	if v.Kind != redis.KindArray || len(v.Array) != 3 || v.Array[0].Str != "message" || v.Array[1].Str != "+switch-master" {
		return v
	}
	f := strings.Split(v.Array[2].Str, " ")
	if len(f) != 5 {
		return v
	}
	for _, i := range []int{1, 3} {
		if n, ok := rt.byAddr[net.JoinHostPort(f[i], f[i+1])]; ok {
			f[i], f[i+1] = n, strconv.Itoa(redis.ListenPort)
		}
	}
	return redis.Array(v.Array[0], v.Array[1], redis.Bulk(strings.Join(f, " ")))
}

// clusterNames rewrites a cluster node's reply for the model's clients:
// "-MOVED slot ip:port" and "-ASK slot ip:port" name the node's process
// (host name), and CLUSTER SLOTS's node entries [ip, port, id, ...] too.
func (rt *runtime) clusterNames(args []string, v redis.Value) redis.Value {
	name := func(host string, port int64) (string, bool) {
		n, ok := rt.byAddr[net.JoinHostPort(host, strconv.FormatInt(port, 10))]
		return n, ok
	}
	if v.Kind == redis.KindError && (strings.HasPrefix(v.Str, "MOVED ") || strings.HasPrefix(v.Str, "ASK ")) {
		f := strings.Fields(v.Str)
		if len(f) == 3 {
			if h, p, err := net.SplitHostPort(f[2]); err == nil {
				if port, err := strconv.ParseInt(p, 10, 64); err == nil {
					if n, ok := name(h, port); ok {
						return redis.Err(f[0] + " " + f[1] + " " + n + ":" + strconv.Itoa(redis.ListenPort))
					}
				}
			}
		}
		return v
	}
	if len(args) == 2 && strings.EqualFold(args[0], "CLUSTER") && strings.EqualFold(args[1], "SLOTS") && v.Kind == redis.KindArray {
		out := make([]redis.Value, len(v.Array))
		for i, e := range v.Array {
			if e.Kind != redis.KindArray {
				out[i] = e
				continue
			}
			ne := append([]redis.Value(nil), e.Array...)
			for j := 2; j < len(ne); j++ {
				nd := ne[j]
				if nd.Kind == redis.KindArray && len(nd.Array) >= 2 && nd.Array[1].Kind == redis.KindInt {
					if n, ok := name(nd.Array[0].Str, nd.Array[1].Int); ok {
						na := append([]redis.Value(nil), nd.Array...)
						na[0] = redis.Bulk(n)
						ne[j] = redis.Array(na...)
					}
				}
			}
			out[i] = redis.Array(ne...)
		}
		return redis.Array(out...)
	}
	return v
}

// clusterAddr returns the announced (proxy front) address of the server
// called name (respCodec.addr).
func (rt *runtime) clusterAddr(name string) (string, bool) {
	if srv := rt.servers[name]; srv != nil {
		return srv.addr, true
	}
	return "", false
}

// Binaries returns the paths of redis-server and redis-sentinel, or an
// error naming the missing one.
func Binaries() (server, sentinel string, err error) {
	server, err = exec.LookPath("redis-server")
	if err != nil {
		return "", "", fmt.Errorf("redis-server: %w (install it: apt-get install redis-server)", ErrMissingBinary)
	}
	sentinel, err = exec.LookPath("redis-sentinel")
	if err != nil {
		// Debian's redis-sentinel is redis-server run as a sentinel.
		sentinel = server
	}
	return server, sentinel, nil
}

// Run runs s once against real redis-server and redis-sentinel processes
// on loopback, with locksim's own lock clients and storage service driven
// by the kernel in real time, and judges the history with the same checker
// as a simulation. The returned error is an *UnsupportedError or a wrapped
// ErrMissingBinary when real mode cannot run s (exit 2), ErrInterrupted
// when ctx ended the run. Every server started is stopped before Run
// returns.
func Run(ctx context.Context, s *scenarios.Scenario, seed uint64, opt Options) (*scenarios.Outcome, error) {
	return run(ctx, s, seed, opt, nil)
}

// run is Run with a hook called once the servers run, before the clock
// starts (tests record the servers' PIDs there).
func run(ctx context.Context, s *scenarios.Scenario, seed uint64, opt Options, started func(*runtime)) (*scenarios.Outcome, error) {
	if err := Check(s); err != nil {
		return nil, err
	}
	// Redis's binaries are needed only by scenarios with Redis servers or
	// sentinels; other kinds' launchers find their own.
	var srvBin, sentBin string
	var err error
	if len(s.Redis()) > 0 || s.Sentinel() != nil {
		if srvBin, sentBin, err = Binaries(); err != nil {
			return nil, err
		}
	}
	dir := opt.Dir
	if dir == "" {
		if dir, err = newRunDir(); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	// In real mode the network between a client and a server is real; the
	// kernel adds no latency and loses nothing of its own (its links still
	// carry the scenario's partitions and link faults between clients,
	// gateways and the storage service).
	rs := *s
	rs.Network = sim.NetConfig{}
	rt := &runtime{
		inj:      make(chan arrival, 4096),
		done:     make(chan struct{}),
		gateways: map[string]gatewayProc{},
		servers:  map[string]*server{},
		byAddr:   map[string]string{},
		ops:      map[string]chan func(){},
		group:    launch.NewGroup(),
		proxy:    proxy.New(),
		cuts:     map[int][]int{},
		roles:    rolesOf(s),
		clientIP: map[string]string{},
		clocks:   clocksOf(s),
		dir:      dir,

		poweredOff: map[string]bool{},
		clusterIDs: map[string]string{},
		nodeNames:  map[string]string{},
	}
	defer rt.stopAll()
	rt.ctx = ctx
	rt.serverStarted = opt.serverStarted
	rt.beforeStart = opt.BeforeStart
	if err := rt.startServers(&rs, dir, srvBin, sentBin); err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	w, err := scenarios.BuildWith(&rs, seed, scenarios.BuildOptions{
		KeepTrace: true,
		Substitute: func(name string) func() sim.Process {
			srv := rt.servers[name]
			if srv == nil {
				return nil
			}
			if srv.gw != nil {
				return func() sim.Process { return srv.gw(rt, name, srv) }
			}
			if srv.database != "" {
				return func() sim.Process { return &mysqlGateway{rt: rt, name: name, srv: srv} }
			}
			return func() sim.Process { return &gateway{rt: rt, name: name, srv: srv} }
		},
	})
	if err != nil {
		return nil, err
	}
	rt.k = w.Kernel
	w.Kernel.Observe(rt.observe)
	// The model's servers start with their disks synced: so do the real
	// ones on a lazy file system (their configuration, the AOF's base and
	// manifest survive a power loss).
	for _, srv := range rt.servers {
		if srv.lazy != nil {
			if err := srv.lazy.Sync(); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrStart, srv.name, err)
			}
		}
	}
	if started != nil {
		started(rt)
	}
	if err := rt.loop(ctx, sim.At(s.Duration)); err != nil {
		return nil, err
	}
	return scenarios.Judge(s, w, seed, scenarios.Options{KeepTrace: true, CheckTimeout: opt.CheckTimeout, Visualize: opt.Visualize, Describe: true})
}

// loop runs the kernel in real time until end: virtual time follows the
// real time elapsed since the start. It sleeps until the next event is due
// or a reply arrives; everything that touches the kernel runs here, on one
// goroutine.
func (rt *runtime) loop(ctx context.Context, end sim.Time) error {
	k := rt.k
	rt.start = time.Now()
	rt.watchLogs()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := sim.Time(time.Since(rt.start))
		if now > end {
			now = end
		}
		if err := k.Run(now); err != nil {
			return err
		}
		for drained := false; !drained; {
			select {
			case a := <-rt.inj:
				if err := rt.apply(a, end); err != nil {
					return err
				}
			default:
				drained = true
			}
		}
		if now >= end {
			return nil
		}
		wait := end - now
		if next, ok := k.NextAt(); ok {
			if next <= now {
				continue
			}
			if next-now < wait {
				wait = next - now
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Duration(wait))
		select {
		case a := <-rt.inj:
			// The kernel last ran up to now, before the sleep: run it to
			// the reply's arrival first (issue 23: a reply injected at
			// the kernel's last time was stamped up to a second early).
			if err := rt.apply(a, end); err != nil {
				return err
			}
		case <-timer.C:
		case <-ctx.Done():
			return ErrInterrupted
		}
	}
}

// defaultSave is the model's (and Redis 7's) default RDB save points,
// "save 3600 1 300 100 60 10000" (nodes/redis DefaultConfig; R 7.2.4
// src/server.c:2073-2077); launch writes save "" when given none.
var defaultSave = []string{"3600 1", "300 100", "60 10000"}

// startServers gives every client a loopback address, then starts the
// real servers of each process kind in build order through the kind's
// launcher (kinds.go): one redis-server per Redis node (masters first) and
// one Sentinel per sentinel, each on its own loopback address with a data
// directory of its own under dir; clients dial the servers from their
// addresses.
func (rt *runtime) startServers(s *scenarios.Scenario, dir, srvBin, sentBin string) error {
	pool := launch.NewAddrPool()
	for _, c := range s.Clients {
		ip, err := pool.Next()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrStart, c.Name, err)
		}
		rt.clientIP[c.Name] = ip
		if err := rt.proxy.Register(ip, c.Name); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrStart, c.Name, err)
		}
	}
	env := &startEnv{pool: pool, dir: dir, serverBin: srvBin, sentinelBin: sentBin}
	for _, k := range scenarios.Kinds() {
		if l, ok := launchers[k.Name]; ok && l.start != nil {
			if err := l.start(rt, s, env); err != nil {
				return err
			}
		}
	}
	return nil
}

// startRedis starts one redis-server per Redis node, masters first, and
// waits until every replica is in sync.
func startRedis(rt *runtime, s *scenarios.Scenario, env *startEnv) error {
	pool, dir, srvBin := env.pool, env.dir, env.serverBin
	order := make([]scenarios.RedisSpec, 0, len(s.Redis()))
	for _, r := range s.Redis() {
		if r.ReplicaOf == "" {
			order = append(order, r)
		}
	}
	for _, r := range s.Redis() {
		if r.ReplicaOf != "" {
			order = append(order, r)
		}
	}
	for _, r := range order {
		srv := &server{name: r.Name, codec: respCodec{}}
		ip, port, err := rt.front(pool, srv)
		if err != nil {
			return err
		}
		clock, err := rt.clockFor(srv, dir)
		if err != nil {
			return err
		}
		o := redisLaunchOptions(r)
		o.Bin, o.IP, o.Port, o.Dir = srvBin, ip, port, filepath.Join(dir, r.Name)
		if lazyDisk(s, r) {
			// Only the data files go on the mount; the configuration and
			// the log (which the twin's log reader follows) stay off it.
			o.DataDir = filepath.Join(o.Dir, "data")
			if srv.lazy, err = mountLazy(o.DataDir); err != nil {
				return fmt.Errorf("%s: %w: %v", r.Name, ErrMissingBinary, err)
			}
		}
		o.BindSourceAddr, o.AnnounceIP, o.AnnouncePort, o.Clock = ip, ip, frontPort(srv.addr), clock
		if r.ReplicaOf != "" {
			o.ReplicaOf = rt.servers[r.ReplicaOf].addr
			if d := r.ReplicationDelay.Lo; d > 0 {
				// Check allows a fixed delay only: the proxy delays every
				// byte from the master to the replica by it.
				rt.proxy.Delay(r.ReplicaOf, r.Name, d)
			}
		}
		ls, err := rt.group.StartRedis(o)
		if err != nil {
			if srv.lazy != nil {
				srv.lazy.Unmount() // stopAll knows only started servers
			}
			return startErr(r.Name, err)
		}
		rt.addServer(srv, ls)
	}
	// The model's replicas are in sync from the start; a real replica
	// connects from its once-a-second replicationCron and then waits for a
	// full sync (its master's repl-diskless-sync-delay, 5s by default in
	// Redis 7.0; the model skips it for this first sync, SyncRequest.Boot),
	// so the run starts only when every replica reports its link up.
	delayOf := map[string]time.Duration{}
	for _, r := range s.Redis() {
		delayOf[r.Name] = r.ReplDisklessSyncDelay
	}
	for _, r := range s.Redis() {
		if r.ReplicaOf == "" {
			continue
		}
		srv := rt.servers[r.Name]
		if !rt.waitFor(30*time.Second+delayOf[r.ReplicaOf], func() bool {
			v, err := command(srv.ls.Addr(), "INFO", "replication")
			return err == nil && strings.Contains(v.Str, "master_link_status:up")
		}) {
			return fmt.Errorf("%w: %s: its replication link to %s did not come up within %v (log: %s)", ErrStart, r.Name, r.ReplicaOf, 30*time.Second+delayOf[r.ReplicaOf], filepath.Join(srv.ls.Dir(), "redis.log"))
		}
	}
	for _, cs := range s.Clusters() {
		if err := startCluster(rt, cs, env); err != nil {
			return err
		}
	}
	return nil
}

// startCluster starts a Redis Cluster: one redis-server per node with
// cluster-enabled yes, its client port and its bus port each behind a
// proxy front, announced with cluster-announce-ip/-port/-bus-port so that
// every bus and client connection runs through the proxy; then creates the
// cluster as redis-cli --cluster create does (CLUSTER ADDSLOTSRANGE,
// SET-CONFIG-EPOCH, MEET, REPLICATE; redis-cli.c
// clusterManagerCommandCreate) and waits until every node reports
// cluster_state:ok and every replica is in sync, as the model's cluster
// starts formed.
func startCluster(rt *runtime, cs *scenarios.ClusterSpec, env *startEnv) error {
	type node struct {
		spec     scenarios.ClusterNodeSpec
		srv      *server
		busFront string
	}
	var nodes []*node
	yesno := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, n := range cs.Nodes {
		srv := &server{name: n.Name, codec: respCodec{cluster: true, addr: rt.clusterAddr}}
		ip, port, err := rt.front(env.pool, srv)
		if err != nil {
			return err
		}
		busPort, err := launch.FreePort(ip)
		if err != nil {
			return startErr(n.Name, err)
		}
		if busPort == port {
			if busPort, err = launch.FreePort(ip); err != nil || busPort == port {
				return fmt.Errorf("%w: %s: no second free port for the cluster bus", ErrStart, n.Name)
			}
		}
		// The bus front's port: the kernel may hand out again a port that
		// FreePort picked and released (the server's client or bus port,
		// not yet bound), and the server would then find it in use; pick
		// again until it differs from both.
		var busFrontAddr string
		for try := 0; ; try++ {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
			if err != nil {
				return startErr(n.Name, err)
			}
			busFrontAddr = ln.Addr().String()
			ln.Close()
			if p := frontPort(busFrontAddr); p != port && p != busPort {
				break
			}
			if try == 16 {
				return fmt.Errorf("%w: %s: no free port for the cluster bus's front apart from the server's", ErrStart, n.Name)
			}
		}
		busFront, err := rt.proxy.ListenAlso(n.Name, busFrontAddr, net.JoinHostPort(ip, strconv.Itoa(busPort)))
		if err != nil {
			return startErr(n.Name, err)
		}
		clock, err := rt.clockFor(srv, env.dir)
		if err != nil {
			return err
		}
		o := launch.RedisOptions{Name: n.Name, AppendOnly: cs.AppendOnly, AppendFsync: cs.AppendFsync, Save: defaultSave}
		o.Bin, o.IP, o.Port, o.Dir = env.serverBin, ip, port, filepath.Join(env.dir, n.Name)
		o.BindSourceAddr, o.AnnounceIP, o.AnnouncePort, o.Clock = ip, ip, frontPort(srv.addr), clock
		o.ExtraConfig = []string{
			"cluster-enabled yes",
			"cluster-config-file nodes.conf",
			fmt.Sprintf("cluster-node-timeout %d", cs.NodeTimeout.Milliseconds()),
			fmt.Sprintf("cluster-port %d", busPort),
			"cluster-announce-ip " + ip,
			fmt.Sprintf("cluster-announce-port %d", frontPort(srv.addr)),
			fmt.Sprintf("cluster-announce-bus-port %d", frontPort(busFront)),
			fmt.Sprintf("cluster-replica-validity-factor %d", cs.ReplicaValidityFactor),
			"cluster-require-full-coverage " + yesno(cs.RequireFullCoverage),
			"cluster-allow-reads-when-down " + yesno(cs.AllowReadsWhenDown),
			fmt.Sprintf("cluster-migration-barrier %d", cs.MigrationBarrier),
			"cluster-allow-replica-migration " + yesno(cs.AllowReplicaMigration),
			"cluster-replica-no-failover " + yesno(n.NoFailover),
			fmt.Sprintf("repl-timeout %d", int(cs.ReplTimeout/time.Second)),
			fmt.Sprintf("repl-ping-replica-period %d", int(cs.ReplPingReplicaPeriod/time.Second)),
		}
		ls, err := rt.group.StartRedis(o)
		if err != nil {
			return startErr(n.Name, err)
		}
		rt.addServer(srv, ls)
		nodes = append(nodes, &node{spec: n, srv: srv, busFront: busFront})
	}
	do := func(nd *node, args ...string) (redis.Value, error) {
		v, err := command(nd.srv.ls.Addr(), args...)
		if err == nil && v.Kind == redis.KindError {
			err = fmt.Errorf("%s: %s", strings.Join(args, " "), v.Str)
		}
		return v, err
	}
	for i, nd := range nodes {
		for _, r := range nd.spec.Slots {
			if _, err := do(nd, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(r.From), strconv.Itoa(r.To)); err != nil {
				return startErr(nd.spec.Name, err)
			}
		}
		if _, err := do(nd, "CLUSTER", "SET-CONFIG-EPOCH", strconv.FormatUint(nd.spec.Epoch(i), 10)); err != nil {
			return startErr(nd.spec.Name, err)
		}
	}
	first := nodes[0]
	fh, fp, _ := net.SplitHostPort(first.srv.addr)
	_, fbp, _ := net.SplitHostPort(first.busFront)
	for _, nd := range nodes[1:] {
		if _, err := do(nd, "CLUSTER", "MEET", fh, fp, fbp); err != nil {
			return startErr(nd.spec.Name, err)
		}
	}
	log := func(nd *node) string { return filepath.Join(nd.srv.ls.Dir(), "redis.log") }
	known := "cluster_known_nodes:" + strconv.Itoa(len(nodes))
	for _, nd := range nodes {
		if !rt.waitFor(30*time.Second, func() bool {
			v, err := do(nd, "CLUSTER", "INFO")
			return err == nil && strings.Contains(v.Str, known)
		}) {
			return fmt.Errorf("%w: %s did not learn the cluster's %d nodes within 30s (log: %s)", ErrStart, nd.spec.Name, len(nodes), log(nd))
		}
	}
	ids := map[string]string{}
	for _, nd := range nodes {
		v, err := do(nd, "CLUSTER", "MYID")
		if err != nil {
			return startErr(nd.spec.Name, err)
		}
		ids[nd.spec.Name] = v.Str
		rt.clusterIDs[nd.spec.Name] = v.Str
		rt.nodeNames[v.Str] = nd.spec.Name
	}
	for _, nd := range nodes {
		if nd.spec.ReplicaOf != "" {
			if _, err := do(nd, "CLUSTER", "REPLICATE", ids[nd.spec.ReplicaOf]); err != nil {
				return startErr(nd.spec.Name, err)
			}
		}
	}
	for _, nd := range nodes {
		if !rt.waitFor(60*time.Second, func() bool {
			v, err := do(nd, "CLUSTER", "INFO")
			if err != nil || !strings.Contains(v.Str, "cluster_state:ok") {
				return false
			}
			if nd.spec.ReplicaOf == "" {
				return true
			}
			r, err := command(nd.srv.ls.Addr(), "INFO", "replication")
			return err == nil && strings.Contains(r.Str, "master_link_status:up")
		}) {
			return fmt.Errorf("%w: cluster node %s: not ok and in sync within 60s (log: %s)", ErrStart, nd.spec.Name, log(nd))
		}
	}
	return nil
}

// lazyDisk: a power loss of r with an AOF fsynced lazily (everysec, no)
// loses what only the page cache held, which killing redis-server keeps:
// its data directory goes on a file system that drops unsynced writes at
// the power loss (realmode/lazyfs).
func lazyDisk(s *scenarios.Scenario, r scenarios.RedisSpec) bool {
	if !r.AppendOnly || r.AppendFsync == "always" {
		return false
	}
	for _, f := range s.Faults {
		if f.Kind == faults.KindCrash && f.Mode == "power" && f.Node == r.Name {
			return true
		}
	}
	return false
}

// mountLazy mounts a lazy file system at dir over dir+".disk".
func mountLazy(dir string) (*lazyfs.FS, error) {
	backing := dir + ".disk"
	for _, d := range []string{dir, backing} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	return lazyfs.Mount(dir, backing)
}

// redisLaunchOptions is what of a Redis section reaches redis-server's
// configuration (addresses, directories and the clock are the run's).
// maxmemory counts the model's dataset bytes (nodes/redis memory.go), the
// real server's used_memory everything it allocates, about 0.9 MB when
// empty (Redis 7.0.15): the real server's limit is the scenario's over its
// own used_memory measured once it started (launch
// MaxMemoryOverBaseline). What still differs: each client connection
// holds a client struct with its 16 KB reply buffer and, while active, a
// 16 KB query buffer (networking.c createClient, readQueryFromClient),
// and jemalloc rounds every allocation up to its size class, so real
// memory tracks the model's only to within tens of KB; an eviction story
// twin-checked on it needs margins larger than that
// (docs/guide/real-and-twin.md).
func redisLaunchOptions(r scenarios.RedisSpec) launch.RedisOptions {
	delay := int(r.ReplDisklessSyncDelay / time.Second)
	return launch.RedisOptions{
		ReplDisklessSyncDelay: &delay,
		Name:                  r.Name, AppendOnly: r.AppendOnly, AppendFsync: r.AppendFsync, Save: defaultSave,
		MinReplicasToWrite: r.MinReplicasToWrite, MinReplicasMaxLag: int(r.MinReplicasMaxLag / time.Second),
		MaxMemory: r.MaxMemory, MaxMemoryOverBaseline: true,
		MaxMemoryPolicy: r.MaxMemoryPolicy, MaxMemorySamples: r.MaxMemorySamples,
		ReplicaOf: r.ReplicaOf,
	}
}

// startMemcached starts one memcached per memcached server, with the
// section's memory limit (-m), item size limit (-I), -M and -C.
func startMemcached(rt *runtime, s *scenarios.Scenario, env *startEnv) error {
	for _, m := range s.Memcached() {
		bin, err := launch.MemcachedBinary("")
		if err != nil {
			return startErr(m.Name, err)
		}
		srv := &server{name: m.Name, codec: memcachedCodec{}}
		ip, port, err := rt.front(env.pool, srv)
		if err != nil {
			return err
		}
		clock, err := rt.clockFor(srv, env.dir)
		if err != nil {
			return err
		}
		o := memcachedLaunchOptions(m)
		o.Bin, o.IP, o.Port, o.Dir, o.Clock = bin, ip, port, filepath.Join(env.dir, m.Name), clock
		ls, err := rt.group.StartMemcached(o)
		if err != nil {
			return startErr(m.Name, err)
		}
		rt.addServer(srv, ls)
	}
	return nil
}

// startMySQL starts one mariadbd per MySQL server, with the section's
// server variables (innodb_lock_wait_timeout, wait_timeout,
// innodb_flush_log_at_trx_commit, innodb_rollback_on_timeout,
// innodb_deadlock_detect) and its lock tables created before the clients
// start.
func startMySQL(rt *runtime, s *scenarios.Scenario, env *startEnv) error {
	for _, m := range s.MySQL() {
		install, bin, err := launch.MariaDBBinaries("", "")
		if err != nil {
			return startErr(m.Name, err)
		}
		srv := &server{name: m.Name, database: m.Config.Database}
		ip, port, err := rt.front(env.pool, srv)
		if err != nil {
			return err
		}
		o := mysqlLaunchOptions(m)
		o.InstallBin, o.ServerBin, o.IP, o.Port, o.Dir = install, bin, ip, port, filepath.Join(env.dir, m.Name)
		ls, err := rt.group.StartMariaDB(o)
		if err != nil {
			return startErr(m.Name, err)
		}
		rt.addServer(srv, ls)
	}
	return nil
}

// memcachedLaunchOptions is what of a memcached section reaches
// memcached's command line: every field of its Config (-m, -I, -M, -C).
func memcachedLaunchOptions(m scenarios.MemcachedSpec) launch.MemcachedOptions {
	return launch.MemcachedOptions{
		Name: m.Name, MemoryMB: int(m.Config.MaxBytes >> 20), ItemSizeMax: int(m.Config.ItemSizeMax),
		NoEvictions: !m.Config.EvictToFree, NoCAS: !m.Config.UseCAS,
	}
}

// mysqlLaunchOptions is what of a MySQL section reaches mariadbd: its
// schema and lock tables, and its server variables as options
// (replica_of and read_only are refused by checkMySQL).
func mysqlLaunchOptions(m scenarios.MySQLSpec) launch.MariaDBOptions {
	var tables []launch.MariaDBTable
	for _, t := range m.Config.Tables {
		tables = append(tables, launch.MariaDBTable{Name: t.Name, KeyName: t.KeyName})
	}
	return launch.MariaDBOptions{
		Name: m.Name, Database: m.Config.Database, Tables: tables,
		LockWaitTimeout: m.Config.LockWaitTimeout, WaitTimeout: m.Config.WaitTimeout,
		FlushLogAtTrxCommit: m.Config.FlushLogAtTrxCommit, RollbackOnTimeout: m.Config.RollbackOnTimeout,
		NoDeadlockDetect: !m.Config.DeadlockDetect, SlaveNetTimeout: m.Config.SlaveNetTimeout,
	}
}

// sentinelLaunchOptions is what of the sentinel section reaches sentinel
// n's configuration (the master's address is the run's).
func sentinelLaunchOptions(sp *scenarios.SentinelSpec, n string) launch.SentinelOptions {
	return launch.SentinelOptions{
		Name: n, MasterName: "mymaster", MasterAddr: sp.Master,
		Quorum: sp.Quorum, DownAfter: sp.DownAfter, FailoverTimeout: sp.FailoverTimeout,
	}
}

// startSentinels starts one redis-sentinel per sentinel and waits until
// each knows the replicas and the other sentinels.
func startSentinels(rt *runtime, s *scenarios.Scenario, env *startEnv) error {
	pool, dir, sentBin := env.pool, env.dir, env.sentinelBin
	sp := s.Sentinel()
	if sp == nil {
		return nil
	}
	for _, n := range sp.Names {
		srv := &server{name: n, sentinel: true, codec: respCodec{sentinel: true}}
		ip, port, err := rt.front(pool, srv)
		if err != nil {
			return err
		}
		clock, err := rt.clockFor(srv, dir)
		if err != nil {
			return err
		}
		o := sentinelLaunchOptions(sp, n)
		o.Bin, o.IP, o.Port, o.Dir = sentBin, ip, port, filepath.Join(dir, n)
		o.MasterAddr = rt.servers[sp.Master].addr
		o.AnnounceIP, o.AnnouncePort, o.BindSourceAddr, o.Clock = ip, frontPort(srv.addr), ip, clock
		ls, err := rt.group.StartSentinel(o)
		if err != nil {
			return startErr(n, err)
		}
		rt.addServer(srv, ls)
	}
	// Likewise the model's sentinels know the replicas and each other from
	// the start; real ones learn them from INFO (every 10s) and hello
	// messages (every 2s; sentinel.c sentinelSendPeriodicCommands).
	replicas := 0
	for _, r := range s.Redis() {
		if r.ReplicaOf == sp.Master {
			replicas++
		}
	}
	for _, n := range sp.Names {
		srv := rt.servers[n]
		if !rt.waitFor(30*time.Second, func() bool {
			r, err1 := command(srv.ls.Addr(), "SENTINEL", "replicas", "mymaster")
			o, err2 := command(srv.ls.Addr(), "SENTINEL", "sentinels", "mymaster")
			return err1 == nil && err2 == nil && len(r.Array) >= replicas && len(o.Array) >= len(sp.Names)-1
		}) {
			return fmt.Errorf("%w: sentinel %s did not discover the %d replicas and %d other sentinels within 30s (log: %s)", ErrStart, n, replicas, len(sp.Names)-1, filepath.Join(srv.ls.Dir(), "redis.log"))
		}
	}
	return nil
}

// front gives a server its loopback address, registered with the proxy
// under the server's name, and the proxy's front for it: everything that
// talks to the server (clients, replicas, sentinels) connects to the front,
// which forwards to the server's own port (returned) on the same address.
func (rt *runtime) front(pool *launch.AddrPool, srv *server) (string, int, error) {
	ip, err := pool.Next()
	if err != nil {
		return "", 0, fmt.Errorf("%w: %s: %v", ErrStart, srv.name, err)
	}
	if err := rt.proxy.Register(ip, srv.name); err != nil {
		return "", 0, fmt.Errorf("%w: %s: %v", ErrStart, srv.name, err)
	}
	// The front first, so that the server's free port cannot be the
	// front's.
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", 0, fmt.Errorf("%w: %s: %v", ErrStart, srv.name, err)
	}
	frontAddr := ln.Addr().String()
	ln.Close()
	port, err := launch.FreePort(ip)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %s: %v", ErrStart, srv.name, err)
	}
	front, err := rt.proxy.Listen(srv.name, frontAddr, net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return "", 0, fmt.Errorf("%w: %s: %v", ErrStart, srv.name, err)
	}
	srv.addr = front
	if rt.beforeStart != nil {
		rt.beforeStart(srv.name, net.JoinHostPort(ip, strconv.Itoa(port)))
	}
	return ip, port, nil
}

func frontPort(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// addServer registers a started server and its fault worker: signals,
// kills and restarts of one server run in order on a goroutine of its own,
// so the driver never blocks on a process.
func (rt *runtime) addServer(srv *server, ls *launch.Server) {
	srv.ls = ls
	rt.servers[srv.name] = srv
	rt.byAddr[srv.addr] = srv.name
	rt.byAddr[ls.Addr()] = srv.name
	if rt.serverStarted != nil {
		rt.serverStarted(srv)
	}
	ops := make(chan func(), 64)
	rt.ops[srv.name] = ops
	rt.opsWG.Add(1)
	go func() {
		defer rt.opsWG.Done()
		for f := range ops {
			f()
		}
	}()
}

// stopAll ends the run: connections closed, pending fault actions done,
// every server stopped by PID.
func (rt *runtime) stopAll() {
	close(rt.done)
	for _, g := range rt.gateways {
		g.close()
	}
	for _, ops := range rt.ops {
		close(ops)
	}
	rt.opsWG.Wait()
	rt.proxy.Close()
	rt.group.StopAll()
	for _, srv := range rt.servers {
		if srv.clock != nil {
			srv.clock.Close()
		}
		if srv.lazy != nil {
			srv.lazy.Unmount()
		}
	}
	rt.wg.Wait()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func splitAddr(a string) (string, string) {
	i := strings.LastIndexByte(a, ':')
	return a[:i], a[i+1:]
}

func portOf(a string) string { _, p := splitAddr(a); return p }

// clocksOf returns the real processes whose wall clock must be shifted: a
// clock offset or drift in the scenario, or a clock fault on them.
func clocksOf(s *scenarios.Scenario) map[string]scenarios.ClockSpec {
	out := map[string]scenarios.ClockSpec{}
	real := map[string]scenarios.ClockSpec{}
	// The real processes: those of every kind whose launcher starts real
	// servers (kinds.go).
	for _, k := range scenarios.Kinds() {
		if l, ok := launchers[k.Name]; !ok || l.start == nil {
			continue
		}
		for _, p := range s.ServersOf(k) {
			real[p.Name] = p.Clock
			if p.Clock != (scenarios.ClockSpec{}) {
				out[p.Name] = p.Clock
			}
		}
	}
	for _, f := range s.Faults {
		if cs, ok := real[f.Node]; ok && faults.ClockKind(f.Kind) {
			out[f.Node] = cs
		}
	}
	return out
}

// clockFor returns the clock control of srv when the scenario shifts its
// wall clock (nil otherwise), after setting its initial offset and rate.
// NB: the library shifts the wall clock only (CLOCK_REALTIME,
// gettimeofday, time); the model's drift runs both clocks of a process at
// the rate, so a drifting real server's monotonic timers (its event loop)
// keep real time: a simplification of real mode.
func (rt *runtime) clockFor(srv *server, dir string) (*launch.Clock, error) {
	cs, ok := rt.clocks[srv.name]
	if !ok {
		return nil, nil
	}
	if rt.clockLib == "" {
		so, err := clockshift.Build(filepath.Join(dir, "clockshift"))
		if err != nil {
			if errors.Is(err, clockshift.ErrNoCompiler) {
				return nil, fmt.Errorf("%s: shifting its clock: %w: %v", srv.name, ErrMissingBinary, err)
			}
			return nil, fmt.Errorf("%s: building the clock library: %w", srv.name, err)
		}
		rt.clockLib = so
	}
	ppb, err := sim.RateFromDrift(cs.Drift)
	if err != nil {
		return nil, fmt.Errorf("%s.clock: %w", srv.name, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "clocks"), 0o700); err != nil {
		return nil, err
	}
	c, err := clockshift.NewControl(filepath.Join(dir, "clocks", srv.name))
	if err != nil {
		return nil, err
	}
	if err := c.Set(cs.Offset, ppb); err != nil {
		c.Close()
		return nil, err
	}
	srv.clock = c
	return &launch.Clock{Control: c, Lib: rt.clockLib}, nil
}
