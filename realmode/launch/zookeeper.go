package launch

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ZooKeeper: Debian's zookeeper package (3.8), a Java server. Debian's
// zkEnv.sh runs org.apache.zookeeper.server.quorum.QuorumPeerMain with
// CLASSPATH "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar"; the jar's
// manifest Class-Path names its dependencies (jute, netty, slf4j-api, ...).
// slf4j-api alone logs nothing (slf4j 1.7 falls back to its no-op logger),
// so slf4j-simple goes on the classpath: the server logs at INFO to stderr,
// which launch keeps in stdout.log.
const (
	// ZooKeeperMain is the server's main class (zkEnv.sh ZOOMAIN).
	ZooKeeperMain = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	// ZooKeeperJar is Debian's server jar.
	ZooKeeperJar = "/usr/share/java/zookeeper.jar"
	// zkLogJar is the slf4j binding that writes the log to stderr.
	zkLogJar = "/usr/share/java/slf4j-simple.jar"
	// ZooKeeperProgram names the server in errors and launcher tables.
	ZooKeeperProgram = "zookeeper (java " + ZooKeeperMain + ")"
)

// ZooKeeperOptions configures one ZooKeeper server: standalone, or one
// member of an ensemble (Peers). Zero values mean ZooKeeper's defaults,
// except tickTime, whose sample-configuration value 2000 ms is used (the
// model's default, nodes/zookeeper DefaultConfig).
type ZooKeeperOptions struct {
	Name string // for errors and logs; default "zookeeper"
	Java string // default java on PATH
	Jar  string // default ZooKeeperJar
	IP   string // loopback address of the client port; default 127.0.0.1
	Port int    // client port; 0: a free one
	Dir  string // required: zoo.cfg, the data directory (Dir/data) and logs

	// TickTime is tickTime (0: 2000 ms). MinSessionTimeout and
	// MaxSessionTimeout bound the negotiated session timeout (0: ZooKeeper's
	// 2 and 20 ticks, ZooKeeperServer.java getMinSessionTimeout).
	TickTime          time.Duration
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	// HeapMB is the JVM's -Xmx (0: 64).
	HeapMB int

	// ID and Peers make the server a member of an ensemble: ID is its
	// myid, Peers every member (itself included) as the server sees them.
	// Its own entry is where it binds its quorum and election ports; the
	// others may be proxy fronts. Empty Peers: a standalone server.
	ID    int
	Peers []ZooKeeperPeer

	// StartTimeout bounds the wait until the server serves (also after
	// Restart); 0 = 30s (a JVM starts slowly on a loaded machine).
	StartTimeout time.Duration
}

// ZooKeeperPeer is one line server.ID=IP:QuorumPort:ElectionPort of an
// ensemble's configuration.
type ZooKeeperPeer struct {
	ID           int
	IP           string
	QuorumPort   int
	ElectionPort int
}

// ZooKeeperJava returns the java binary and the server jar, or an error
// wrapping ErrNoBinary that says what to install.
func ZooKeeperJava(java, jar string) (string, string, error) {
	if java == "" {
		java = "java"
	}
	if jar == "" {
		jar = ZooKeeperJar
	}
	if _, err := os.Stat(jar); err != nil {
		return "", "", fmt.Errorf("launch: ZooKeeper's %s is missing (Debian: apt-get install -y libzookeeper-java, or zookeeper): %w", jar, ErrNoBinary)
	}
	p, err := exec.LookPath(java)
	if err != nil {
		return "", "", fmt.Errorf("launch: %s is not installed or not on PATH (Debian: apt-get install -y default-jre-headless): %w", java, ErrNoBinary)
	}
	return p, jar, nil
}

// zooCfg renders zoo.cfg. The AdminServer (Jetty on port 8080) is off, the
// four-letter words the launcher and tests use are allowed (3.5+ allows
// only srvr by default: zookeeperAdmin.md "4lw.commands.whitelist"), and
// an ensemble runs with a static configuration (reconfigEnabled false, no
// dynamic configuration file).
func zooCfg(o ZooKeeperOptions, port int) []string {
	cfg := []string{
		"tickTime=" + strconv.FormatInt(o.TickTime.Milliseconds(), 10),
		"dataDir=" + filepath.Join(o.Dir, "data"),
		"clientPort=" + strconv.Itoa(port),
		"clientPortAddress=" + o.IP,
		"admin.enableServer=false",
		"4lw.commands.whitelist=srvr,ruok,stat,mntr,cons",
		// No snapshot purging, no metrics provider: defaults.
	}
	if o.MinSessionTimeout > 0 {
		cfg = append(cfg, "minSessionTimeout="+strconv.FormatInt(o.MinSessionTimeout.Milliseconds(), 10))
	}
	if o.MaxSessionTimeout > 0 {
		cfg = append(cfg, "maxSessionTimeout="+strconv.FormatInt(o.MaxSessionTimeout.Milliseconds(), 10))
	}
	if len(o.Peers) > 0 {
		// initLimit and syncLimit as in Debian's zoo.cfg (10 and 5 ticks).
		cfg = append(cfg, "initLimit=10", "syncLimit=5", "reconfigEnabled=false", "standaloneEnabled=false")
		for _, p := range o.Peers {
			cfg = append(cfg, fmt.Sprintf("server.%d=%s:%d:%d", p.ID, p.IP, p.QuorumPort, p.ElectionPort))
		}
	}
	return cfg
}

// StartZooKeeper writes Dir/zoo.cfg (and Dir/data/myid for an ensemble
// member) and starts the server with java directly (not through systemd or
// zkServer.sh), bound to o.IP only. A standalone server is waited on until
// it serves (srvr reports its mode). An ensemble member is waited on only
// until it listens (ruok): it serves once a quorum has formed, which
// StartZooKeeperEnsemble waits for. Shutdown sends SIGTERM; the data
// directory survives Kill and Restart (ZooKeeper's snapshot and
// transaction log, fsynced at every transaction: forceSync yes).
func StartZooKeeper(o ZooKeeperOptions) (*Server, error) {
	if o.Name == "" {
		o.Name = "zookeeper"
	}
	java, jar, err := ZooKeeperJava(o.Java, o.Jar)
	if err != nil {
		return nil, err
	}
	if err := placeOptions(o.Name, &o.IP, o.Dir); err != nil {
		return nil, err
	}
	if o.TickTime == 0 {
		o.TickTime = 2000 * time.Millisecond
	}
	switch {
	case o.TickTime < time.Millisecond || o.TickTime%time.Millisecond != 0:
		return nil, fmt.Errorf("launch: %s: TickTime %v: want whole milliseconds: %w", o.Name, o.TickTime, ErrBadOption)
	case o.MinSessionTimeout < 0 || o.MaxSessionTimeout < 0:
		return nil, fmt.Errorf("launch: %s: session timeout bounds must not be negative: %w", o.Name, ErrBadOption)
	case o.HeapMB < 0:
		return nil, fmt.Errorf("launch: %s: HeapMB must not be negative: %w", o.Name, ErrBadOption)
	}
	if o.HeapMB == 0 {
		o.HeapMB = 64
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	member := len(o.Peers) > 0
	if member {
		found := false
		for _, p := range o.Peers {
			if err := checkLoopback(p.IP); err != nil {
				return nil, fmt.Errorf("launch: %s: peer %d: %w", o.Name, p.ID, err)
			}
			found = found || p.ID == o.ID
		}
		if o.ID <= 0 || !found {
			return nil, fmt.Errorf("launch: %s: ID %d must be positive and among the peers: %w", o.Name, o.ID, ErrBadOption)
		}
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("launch: %s: Dir: %w", o.Name, err)
	}
	if member {
		if err := os.WriteFile(filepath.Join(o.Dir, "data", "myid"), []byte(strconv.Itoa(o.ID)+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("launch: %s: %w", o.Name, err)
		}
	}
	s := &Server{name: o.Name, bin: java, dir: o.Dir, ip: o.IP, port: o.Port, timeout: o.StartTimeout,
		ready: zkServing, term: terminate, logs: []string{}}
	if member {
		s.ready = zkListening
	}
	cfgFile := filepath.Join(o.Dir, "zoo.cfg")
	return s, s.firstStartArgs(func() ([]string, error) {
		if err := os.WriteFile(cfgFile, []byte(strings.Join(zooCfg(o, s.port), "\n")+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("launch: %s: %w", o.Name, err)
		}
		return []string{
			// A small heap, the serial collector and the client compiler
			// only: the JVM's start-up dominates a short run.
			"-Xmx" + strconv.Itoa(o.HeapMB) + "m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dzookeeper.admin.enableServer=false",
			"-cp", jar + ":" + zkLogJar,
			ZooKeeperMain, cfgFile,
		}, nil
	})
}

// StartZooKeeperEnsemble starts every member (o's Peers, each with its
// ID; Peers of each is the view that member has) at once and waits until
// each serves: a quorum has elected a leader and every member has joined
// it.
func (g *Group) StartZooKeeperEnsemble(members []ZooKeeperOptions) ([]*Server, error) {
	out := make([]*Server, len(members))
	for i, o := range members {
		if len(o.Peers) == 0 {
			return out, fmt.Errorf("launch: %s: an ensemble member needs Peers: %w", o.Name, ErrBadOption)
		}
		s, err := StartZooKeeper(o)
		if s != nil {
			g.Add(s)
		}
		if err != nil {
			return out, err
		}
		out[i] = s
	}
	for _, s := range out {
		if err := WaitZooKeeperServing(s, s.timeout); err != nil {
			return out, err
		}
	}
	return out, nil
}

// StartZooKeeper starts a ZooKeeper server and tracks it.
func (g *Group) StartZooKeeper(o ZooKeeperOptions) (*Server, error) {
	s, err := StartZooKeeper(o)
	if s != nil {
		g.Add(s)
	}
	return s, err
}

// WaitZooKeeperServing waits until s serves clients (srvr reports a mode),
// or the timeout passes, or s exits.
func WaitZooKeeperServing(s *Server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := zkServing(s.Addr(), 500*time.Millisecond); err == nil {
			return nil
		}
		select {
		case <-s.Exited():
			return fmt.Errorf("launch: %s exited before it served:\n%s", s.name, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("launch: %s did not serve on %s within %v:\n%s", s.name, s.Addr(), timeout, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ZooKeeperMode returns the mode srvr reports (standalone, leader,
// follower), or an error when the server does not serve.
func ZooKeeperMode(addr string, timeout time.Duration) (string, error) {
	out, err := FourLetter(addr, "srvr", timeout)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	// "This ZooKeeper instance is not currently serving requests"
	return "", errors.New(strings.TrimSpace(out))
}

// zkServing: srvr reports a mode (a server that has not joined a quorum
// answers that it is not serving requests; ruok answers imok even then).
func zkServing(addr string, timeout time.Duration) error {
	_, err := ZooKeeperMode(addr, timeout)
	return err
}

// zkListening: ruok answers imok (the process runs and its client port is
// open; it may not serve yet).
func zkListening(addr string, timeout time.Duration) error {
	out, err := FourLetter(addr, "ruok", timeout)
	if err != nil {
		return err
	}
	if out != "imok" {
		return fmt.Errorf("ruok answered %q", out)
	}
	return nil
}

// FourLetter sends a four-letter word on a fresh connection and returns
// the whole answer (the server closes the connection after it).
func FourLetter(addr, word string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(word)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}
