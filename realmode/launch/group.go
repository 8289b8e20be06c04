package launch

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Group tracks every server started through it so that one call stops them
// all; a real run or test owns one group and defers StopAll.
type Group struct {
	mu      sync.Mutex
	servers []*Server
}

// NewGroup returns an empty group.
func NewGroup() *Group { return &Group{} }

// Add tracks a server started elsewhere.
func (g *Group) Add(s *Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.servers = append(g.servers, s)
}

// StartRedis starts a redis-server and tracks it.
func (g *Group) StartRedis(o RedisOptions) (*Server, error) {
	s, err := StartRedis(o)
	if s != nil {
		g.Add(s) // tracked even on error: a half-started process is stopped too
	}
	return s, err
}

// StartSentinel starts a Sentinel and tracks it.
func (g *Group) StartSentinel(o SentinelOptions) (*Server, error) {
	s, err := StartSentinel(o)
	if s != nil {
		g.Add(s)
	}
	return s, err
}

// StartMemcached starts a memcached and tracks it.
func (g *Group) StartMemcached(o MemcachedOptions) (*Server, error) {
	s, err := StartMemcached(o)
	if s != nil {
		g.Add(s)
	}
	return s, err
}

// Servers returns the tracked servers in start order.
func (g *Group) Servers() []*Server {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*Server(nil), g.servers...)
}

// PIDs returns the PIDs of the tracked processes that are running.
func (g *Group) PIDs() []int {
	var out []int
	for _, s := range g.Servers() {
		if p := s.PID(); p != 0 {
			out = append(out, p)
		}
	}
	return out
}

// StopAll stops every tracked server (by PID, waiting for each), the last
// started first. It is idempotent.
func (g *Group) StopAll() {
	ss := g.Servers()
	for i := len(ss) - 1; i >= 0; i-- {
		ss[i].Stop()
	}
}

// StopOnSignal stops the group when SIGINT or SIGTERM arrives and then
// lets the signal take its default effect (the program exits with it).
// The returned release function uninstalls the handler; call it (deferred)
// once the group has been stopped normally.
//
// A signal the program was started with ignored (SIGINT, in a shell's
// background job) stays ignored: catching it would stop the servers and
// then, raised again with its inherited disposition, leave the program
// running without them.
func (g *Group) StopOnSignal() (release func()) {
	ch := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		select {
		case sig := <-ch:
			g.StopAll()
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		case <-quit:
		}
	}()
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(quit)
		})
	}
}

// StartMariaDB starts a mariadbd and tracks it.
func (g *Group) StartMariaDB(o MariaDBOptions) (*Server, error) {
	s, err := StartMariaDB(o)
	if s != nil {
		g.Add(s)
	}
	return s, err
}
