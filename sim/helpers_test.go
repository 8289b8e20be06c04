package sim

import (
	"fmt"
	"time"
)

// world is a small test harness: a kernel whose processes are scripted
// probes that append what happens to them to one shared log, stamped with
// true time.
type world struct {
	k   *Kernel
	log []string
}

// hooks script a probe; nil hooks do nothing beyond logging.
type hooks struct {
	init func(env *Env)
	recv func(env *Env, from ProcID, m Message)
	fire func(env *Env, tag any)
	// shutdown, when set, makes the probe a Shutdowner.
	shutdown func(env *Env)
}

type probe struct {
	w *world
	h hooks
}

func (p *probe) Init(env *Env) {
	p.w.logf(env.Name(), "init")
	if p.h.init != nil {
		p.h.init(env)
	}
}

func (p *probe) Receive(env *Env, from ProcID, m Message) {
	p.w.logf(env.Name(), "got %v from %s", m, env.NameOf(from))
	if p.h.recv != nil {
		p.h.recv(env, from, m)
	}
}

func (p *probe) Fire(env *Env, tag any) {
	p.w.logf(env.Name(), "fire %v", tag)
	if p.h.fire != nil {
		p.h.fire(env, tag)
	}
}

// ConnEnded logs that a connection ended (probes are ConnObservers).
func (p *probe) ConnEnded(env *Env, peer ProcID, why ConnEnd) {
	p.w.logf(env.Name(), "conn-end %s %v", env.NameOf(peer), why)
}

// shutdownProbe is a probe with a Shutdown hook.
type shutdownProbe struct{ probe }

func (p *shutdownProbe) Shutdown(env *Env) {
	p.w.logf(env.Name(), "shutdown")
	p.h.shutdown(env)
}

// ms is the default fixed latency of test worlds.
const ms = time.Millisecond

// noLatency always draws 0 (Between returns Lo when Hi <= Lo); unlike the
// zero Range, newWorld keeps it.
var noLatency = Range{Lo: 0, Hi: -1}

func newWorld(cfg Config) *world {
	if cfg.Network.Latency == (Range{}) {
		cfg.Network.Latency = Fixed(ms)
	}
	return &world{k: New(cfg)}
}

func (w *world) add(name string, h hooks) ProcID {
	return w.addClock(name, h, ClockSpec{})
}

func (w *world) addClock(name string, h hooks, c ClockSpec) ProcID {
	return w.k.Add(name, func() Process {
		if h.shutdown != nil {
			return &shutdownProbe{probe{w: w, h: h}}
		}
		return &probe{w: w, h: h}
	}, c)
}

// logf appends "TIME NAME what" to the log, TIME being true time as a
// duration ("1.5s").
func (w *world) logf(name, format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf("%v %s %s", w.k.Now().Duration(), name, fmt.Sprintf(format, args...)))
}

// at schedules f at true time d.
func (w *world) at(d time.Duration, f func()) { w.k.At(At(d), f) }

// run runs the world until d and panics on a budget error.
func (w *world) run(d time.Duration) {
	if err := w.k.Run(At(d)); err != nil {
		panic(err)
	}
}

// lines returns the log lines of one process (lines are "TIME NAME what").
func (w *world) lines(name string) []string {
	var out []string
	for _, l := range w.log {
		var t, n string
		fmt.Sscan(l, &t, &n)
		if n == name {
			out = append(out, l)
		}
	}
	return out
}

// kinds returns the kept trace events of the given kind as "TIME PROC TEXT".
func kinds(k *Kernel, kind Kind) []string {
	var out []string
	for _, e := range k.Trace() {
		if e.Kind == kind {
			out = append(out, fmt.Sprintf("%v %s %s", e.At.Duration(), e.Proc, e.Text))
		}
	}
	return out
}

// send is a hook helper: it sends m to the named process.
func send(env *Env, to string, m Message) {
	id, ok := env.Lookup(to)
	if !ok {
		panic("no process " + to)
	}
	env.Send(id, m)
}
