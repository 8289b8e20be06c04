package realmode

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/nodes/sentinel"
	"github.com/locksim/locksim/sim"
)

// A real run's trace holds what the clients saw; a twin comparison also
// needs what the real cluster decided and when. Real mode reads a Redis
// Cluster node's failure detection and elections, and a Sentinel's
// +sdown/+odown/failover events, from their log files (a line at a time,
// polled every logPoll: the event keeps the time the server logged, so the
// poll only bounds how late the trace learns it), and PFAIL, which Redis
// 7.0.15 logs only at debug level (cluster.c:4200), from CLUSTER NODES
// polled every pfailPoll.
// Each becomes a trace event of the kind the model's node records for the
// same decision (nodes/redis EventCluster*, nodes/sentinel Kind*), on the
// node's process, with a "source" field saying where it was read.
const (
	logPoll   = 200 * time.Millisecond
	pfailPoll = 250 * time.Millisecond
)

// serverEvent is one event read from a real server.
type serverEvent struct {
	// at is the time the server logged it (zero: unknown).
	at    time.Time
	kind  sim.Kind
	attrs []sim.Attr
	text  string
}

// logLine splits a Redis log line, "PID:R DD Mon YYYY HH:MM:SS.mmm L msg"
// (server.c 7.0.15 serverLogRaw, lines 122-138: R is the role, M master,
// S replica, X sentinel, C a child; L the level, one of ".-*#"), into its
// time and message.
var logLine = regexp.MustCompile(`^\d+:[MSXC] (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) [.\-*#] (.*)$`)

func splitLogLine(line string) (time.Time, string, bool) {
	m := logLine.FindStringSubmatch(line)
	if m == nil {
		return time.Time{}, "", false
	}
	// Redis formats the time in the local time zone (localtime_r).
	at, err := time.ParseInLocation("02 Jan 2006 15:04:05.000", m[1], time.Local)
	if err != nil {
		return time.Time{}, m[2], true
	}
	return at, m[2], true
}

// The cluster's log messages real mode reads (cluster.c, Redis 7.0.15).
var (
	// markNodeAsFailingIfNeeded, cluster.c:1517.
	reMarkFail = regexp.MustCompile(`^Marking node ([0-9a-f]{40}) as failing \(quorum reached\)\.$`)
	// clusterProcessPacket, a FAIL message, cluster.c:2530.
	reFailMsg = regexp.MustCompile(`^FAIL message received from ([0-9a-f]{40}) about ([0-9a-f]{40})$`)
	// clearNodeFailureIfNeeded, cluster.c:1545 and 1561.
	reClearFail = regexp.MustCompile(`^Clear FAIL state for node ([0-9a-f]{40}): (.*)$`)
	// clusterUpdateState, cluster.c:4519.
	reState = regexp.MustCompile(`^Cluster state changed: (ok|fail)$`)
	// clusterHandleSlaveFailover, cluster.c:3665, 3714, 3728, 3734.
	reDelayed  = regexp.MustCompile(`^Start of election delayed for (-?\d+) milliseconds \(rank #(\d+), offset (-?\d+)\)\.$`)
	reStarting = regexp.MustCompile(`^Starting a failover election for epoch (\d+)\.$`)
	reWon      = regexp.MustCompile(`^configEpoch set to (\d+) after successful failover$`)
	// clusterSendFailoverAuthIfNeeded, cluster.c:3434.
	reGranted = regexp.MustCompile(`^Failover auth granted to ([0-9a-f]{40}) for epoch (\d+)$`)
	// clusterUpdateSlotsConfigWith, cluster.c:1968 and 5520.
	reReconf = regexp.MustCompile(`^Configuration change detected\. Reconfiguring myself as a replica of ([0-9a-f]{40})$`)
	// CLUSTER FAILOVER, cluster.c:5825-5835; mf timeout, cluster.c:3907.
	reManual = regexp.MustCompile(`^(Taking over the master \(user request\)|Forced failover user request accepted|Manual failover user request accepted|Manual failover timed out)\.$`)
)

// parseClusterLog turns one log line of a Redis Cluster node into the
// event the model records for the same decision; name maps a node id to
// its process name (the id itself when unknown).
func parseClusterLog(line string, name func(id string) string) (serverEvent, bool) {
	at, msg, ok := splitLogLine(line)
	if !ok {
		return serverEvent{}, false
	}
	src := sim.Str("source", "log")
	ev := func(kind sim.Kind, text string, attrs ...sim.Attr) (serverEvent, bool) {
		return serverEvent{at: at, kind: kind, attrs: append(attrs, src), text: text}, true
	}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	if m := reMarkFail.FindStringSubmatch(msg); m != nil {
		n := name(m[1])
		return ev(redis.EventClusterFail, n+" marked FAIL (quorum reached)", sim.Str("node", n))
	}
	if m := reFailMsg.FindStringSubmatch(msg); m != nil {
		n, from := name(m[2]), name(m[1])
		return ev(redis.EventClusterFail, n+" marked FAIL (FAIL message from "+from+")", sim.Str("node", n), sim.Str("from", from))
	}
	if m := reClearFail.FindStringSubmatch(msg); m != nil {
		n := name(m[1])
		cleared := "reachable"
		if strings.Contains(m[2], "nobody is serving its slots") {
			cleared = "undo"
		}
		return ev(redis.EventClusterFail, "clear FAIL of "+n+": "+m[2], sim.Str("node", n), sim.Str("cleared", cleared))
	}
	if m := reState.FindStringSubmatch(msg); m != nil {
		return ev(redis.EventClusterState, "cluster state changed: "+m[1], sim.Str("state", m[1]))
	}
	if m := reDelayed.FindStringSubmatch(msg); m != nil {
		return ev(redis.EventClusterElection, "start of election delayed for "+m[1]+"ms (rank #"+m[2]+", offset "+m[3]+")",
			sim.Int64("delay_ms", num(m[1])), sim.Int64("rank", num(m[2])))
	}
	if m := reStarting.FindStringSubmatch(msg); m != nil {
		return ev(redis.EventClusterElection, "starting a failover election for epoch "+m[1], sim.Int64("epoch", num(m[1])))
	}
	if m := reGranted.FindStringSubmatch(msg); m != nil {
		n := name(m[1])
		return ev(redis.EventClusterElection, "failover auth granted to "+n+" for epoch "+m[2], sim.Str("vote", n), sim.Int64("epoch", num(m[2])))
	}
	if m := reWon.FindStringSubmatch(msg); m != nil {
		return ev(redis.EventClusterFailover, "won the election: took its master's slots with configEpoch "+m[1], sim.Int64("config_epoch", num(m[1])))
	}
	if m := reReconf.FindStringSubmatch(msg); m != nil {
		n := name(m[1])
		return ev(redis.EventClusterFailover, "configuration change detected: now a replica of "+n, sim.Str("new_master", n))
	}
	if m := reManual.FindStringSubmatch(msg); m != nil {
		return ev(redis.EventClusterFailover, strings.ToLower(m[1][:1])+m[1][1:])
	}
	return serverEvent{}, false
}

// sentinelEvents are the Sentinel events real mode reads, by their log
// name (sentinel.c sentinelEvent: "+sdown master mymaster 127.0.0.1
// 6379"), and the model's kinds for them (nodes/sentinel).
var sentinelEvents = map[string]sim.Kind{
	"+sdown":          sentinel.KindSDown,
	"-sdown":          sentinel.KindSDownEnd,
	"+odown":          sentinel.KindODown,
	"-odown":          sentinel.KindODownEnd,
	"+try-failover":   sentinel.KindFailoverStart,
	"+elected-leader": sentinel.KindElected,
	"+switch-master":  sentinel.KindSwitchMaster,
}

// parseSentinelLog turns one log line of a Sentinel into the model's
// event; addr maps a real "ip:port" to its process name (false when
// unknown). sentinelEvent (sentinel.c) formats an instance as "<type>
// <name> <ip> <port>", and a replica's or sentinel's with "@ <master>
// <ip> <port>" after it; +switch-master is "<master> <old ip> <old port>
// <new ip> <new port>".
func parseSentinelLog(line string, addr func(hostport string) (string, bool)) (serverEvent, bool) {
	at, msg, ok := splitLogLine(line)
	if !ok {
		return serverEvent{}, false
	}
	f := strings.Fields(msg)
	if len(f) < 2 {
		return serverEvent{}, false
	}
	kind, ok := sentinelEvents[f[0]]
	if !ok {
		return serverEvent{}, false
	}
	name := func(ip, port string) string {
		if n, ok := addr(net.JoinHostPort(ip, port)); ok {
			return n
		}
		return ip + ":" + port
	}
	src := sim.Str("source", "log")
	if f[0] == "+switch-master" {
		if len(f) != 6 {
			return serverEvent{}, false
		}
		from, to := name(f[2], f[3]), name(f[4], f[5])
		return serverEvent{at: at, kind: kind, text: "+switch-master " + f[1] + " " + from + " -> " + to,
			attrs: []sim.Attr{sim.Str("master_name", f[1]), sim.Str("from", from), sim.Str("to", to), src}}, true
	}
	if len(f) < 5 {
		return serverEvent{}, false
	}
	inst := name(f[3], f[4])
	text := f[0] + " " + f[1] + " " + inst
	if len(f) > 5 && f[0] == "+odown" {
		text += " " + strings.Join(f[5:], " ")
	}
	return serverEvent{at: at, kind: kind, text: text, attrs: []sim.Attr{sim.Str("instance", inst), src}}, true
}

// clusterFlags reads CLUSTER NODES: for each line "<id> <ip:port@bus>
// <flags> ...", whether the node is flagged fail? (PFAIL).
func pfailOf(nodes string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		for _, fl := range strings.Split(f[2], ",") {
			if fl == "fail?" {
				out[f[0]] = true
			}
		}
	}
	return out
}

// watchLogs starts, for every Redis Cluster node and Sentinel of the run,
// a goroutine that follows its log file and one (cluster nodes) that polls
// CLUSTER NODES for PFAIL flags, and records what they read in the
// trace. They end with the run (rt.done).
func (rt *runtime) watchLogs() {
	for name, srv := range rt.servers {
		switch {
		case srv.sentinel:
			rt.follow(name, filepath.Join(srv.ls.Dir(), "sentinel.log"), func(line string) (serverEvent, bool) {
				return parseSentinelLog(line, func(a string) (string, bool) { n, ok := rt.byAddr[a]; return n, ok })
			})
		case rt.clusterIDs[name] != "":
			rt.follow(name, filepath.Join(srv.ls.Dir(), "redis.log"), func(line string) (serverEvent, bool) {
				return parseClusterLog(line, rt.nodeName)
			})
			rt.pollPFail(name, srv)
		}
	}
}

// nodeName is the process name of a cluster node id (the id when unknown).
func (rt *runtime) nodeName(id string) string {
	if n, ok := rt.nodeNames[id]; ok {
		return n
	}
	return id
}

// record hands a server event to the driver, stamped with the time the
// server logged it when its clock is the real one, else when it was read.
func (rt *runtime) record(name string, e serverEvent, read time.Time) {
	// NB: the trace is in time order, and the kernel has usually run past
	// the logged time by the time the line is read (up to logPoll later):
	// the event is traced then, and its "logged" field keeps the time the
	// server logged it (its clock's, to the millisecond), which the twin
	// output shows.
	at := read
	if _, shifted := rt.clocks[name]; !shifted && !e.at.IsZero() && e.at.Before(read) && e.at.After(rt.start) {
		at = e.at
		e.attrs = append(e.attrs, sim.Dur("logged", e.at.Sub(rt.start)))
	}
	a := arrival{at: at, f: func() {
		id, ok := rt.k.Lookup(name)
		if !ok {
			return
		}
		rt.k.TracefAttrs(e.kind, id, e.attrs, "%s", e.text)
	}}
	select {
	case rt.inj <- a:
	case <-rt.done:
	}
}

// follow reads the lines appended to file from now on (Redis appends to
// its log across restarts) and records those parse accepts.
func (rt *runtime) follow(name, file string, parse func(string) (serverEvent, bool)) {
	var off int64
	if st, err := os.Stat(file); err == nil {
		off = st.Size()
	}
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		var partial string
		for {
			select {
			case <-rt.done:
				return
			case <-time.After(logPoll):
			}
			if st, err := os.Stat(file); err != nil || st.Size() <= off {
				continue // nothing new (a stat is cheaper than an open)
			}
			fh, err := os.Open(file)
			if err != nil {
				continue
			}
			if _, err := fh.Seek(off, io.SeekStart); err != nil {
				fh.Close()
				continue
			}
			br := bufio.NewReader(fh)
			now := time.Now()
			for {
				s, err := br.ReadString('\n')
				off += int64(len(s))
				if err != nil {
					partial += s // an incomplete last line: the rest comes later
					break
				}
				line := strings.TrimSuffix(partial+s, "\n")
				partial = ""
				if e, ok := parse(line); ok {
					rt.record(name, e, now)
				}
			}
			fh.Close()
		}
	}()
}

// pollPFail polls a cluster node's CLUSTER NODES (on its own address, not
// through the proxy, so no fault of the run affects it) and records each
// node it newly flags PFAIL. A node that is paused or down does not
// answer within the poll's deadline and flags nothing meanwhile.
func (rt *runtime) pollPFail(name string, srv *server) {
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		flagged := map[string]bool{}
		for {
			select {
			case <-rt.done:
				return
			case <-time.After(pfailPoll):
			}
			v, err := commandWithin(srv.ls.Addr(), pfailPoll, "CLUSTER", "NODES")
			if err != nil || v.Kind != redis.KindBulk {
				continue
			}
			now := time.Now()
			cur := pfailOf(v.Str)
			ids := make([]string, 0, len(cur))
			for id := range cur {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				if !flagged[id] {
					n := rt.nodeName(id)
					rt.record(name, serverEvent{kind: redis.EventClusterPFail, text: n + " possibly failing",
						attrs: []sim.Attr{sim.Str("node", n), sim.Str("source", "cluster nodes")}}, now)
				}
			}
			flagged = cur
		}
	}()
}

// commandWithin is command with a deadline for the whole exchange.
func commandWithin(addr string, d time.Duration, args ...string) (redis.Value, error) {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return redis.Value{}, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(d)); err != nil {
		return redis.Value{}, err
	}
	if _, err := c.Write(appendCommand(nil, args)); err != nil {
		return redis.Value{}, err
	}
	v, err := readValue(bufio.NewReader(c))
	if err == nil && v.Kind == redis.KindError {
		err = errors.New(v.Str)
	}
	return v, err
}
