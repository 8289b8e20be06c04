package usercode

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/sim"
)

// instance is one incarnation of a user client process: the bridge
// (clients.UserLock) between the workload loop in the kernel and the user's
// code in goroutines of the bubble.
type instance struct {
	w       *world
	id      sim.ProcID
	name    string
	inc     uint32
	env     *sim.Env
	cfg     clients.Config
	factory func(*Proc) Lock

	ctx    context.Context
	cancel context.CancelFunc
	dead   atomic.Bool
	proc   *Proc
	lock   Lock

	mu      sync.Mutex // dials and ctrlSeq: written by user goroutines
	dials   map[sim.ProcID]uint32
	ctrlSeq uint64
	closers []func() error
	rands   int
	lostFn  func(string)
	work    chan func() // the worker's calls (made in the bubble by a hand-off)
	waking  bool        // a wakeTag timer is queued

	// root only
	conns []*simConn
	reqs  map[uint64]pending
	// subs: the simConn of each SUBSCRIBE sent, by its request id: the
	// server's pushes on the subscription (redis.Push.Sub) go to it.
	subs    map[uint64]*simConn
	nextReq uint64
	outbox  []item
	held    *Held
	calls   int  // lock calls in flight
	noToken bool // said that Obtain returned no fencing token
}

var _ clients.UserLock = (*instance)(nil)

// ctrl queues an action on the control stream (user goroutine).
func (in *instance) ctrl(act func(*instance)) {
	in.mu.Lock()
	in.ctrlSeq++
	seq := in.ctrlSeq
	in.mu.Unlock()
	in.w.push(item{inst: in, stream: streamControl, seq: seq, act: act})
}

// Start implements clients.UserLock: it registers the incarnation and
// builds the user's lock with the factory (which must not block: build
// clients, do not talk to servers).
func (in *instance) Start(env *sim.Env, lost func(string)) {
	in.env = env
	in.lostFn = lost
	in.inc = in.w.k.Incarnation(in.id)
	in.ctx, in.cancel = context.WithCancel(context.Background())
	in.dials = map[sim.ProcID]uint32{}
	in.reqs = map[uint64]pending{}
	in.subs = map[uint64]*simConn{}
	in.proc = &Proc{in: in}
	in.w.insts = append(in.w.insts, in)
	env.Log(clients.KindClient, LimitNote)
	in.w.handoff = append(in.w.handoff, func() {
		defer func() {
			if v := recover(); v != nil {
				in.w.fail(in.recovered("the client factory", v))
			}
		}()
		in.lock = in.factory(in.proc)
		if in.lock == nil {
			in.w.fail(fmt.Errorf("user code of client %s: the factory returned a nil Lock", in.name))
		}
	})
}

// kill ends the incarnation: lock calls see their context cancelled,
// connections are reset, the user's clients closed.
func (in *instance) kill(why string) {
	if in.dead.Swap(true) {
		return
	}
	in.cancel()
	err := errors.New(why)
	for _, c := range in.conns {
		in.w.handoff = append(in.w.handoff, func() { c.reset(err) })
	}
	in.conns = nil
	in.mu.Lock()
	closers := in.closers
	in.closers = nil
	in.mu.Unlock()
	in.w.handoff = append(in.w.handoff, func() {
		go func() {
			for _, f := range closers {
				_ = f()
			}
		}()
	})
	in.w.watch.call(in.name, "")
}

// spawn runs a lock call of user code on the instance's worker goroutine
// (as a hand-off), recovering its panic into the run's failure. One worker
// per incarnation runs the calls in order (a client's Obtain and Release
// never overlap): a goroutine per call would grow a fresh stack through
// go-redis' call chain every time (runtime.copystack was a fifth of a
// cycle's cost).
func (in *instance) spawn(what string, f func()) {
	desc := fmt.Sprintf("client %s: %s, called at virtual time %v", in.name, what, time.Duration(in.w.k.Now()))
	in.w.handoff = append(in.w.handoff, func() {
		if in.work == nil {
			in.work = make(chan func(), 4)
			go in.worker(in.work)
		}
		end := in.w.busyEnter(desc)
		in.work <- func() {
			defer end()
			defer func() {
				if v := recover(); v != nil {
					in.w.fail(in.recovered(what, v))
				}
			}()
			f()
		}
	})
}

// worker runs the lock calls of an incarnation until it ends.
func (in *instance) worker(work chan func()) {
	for {
		select {
		case f := <-work:
			f()
		case <-in.ctx.Done():
			return
		}
	}
}

// Acquire implements clients.UserLock: one call of the user's Obtain.
func (in *instance) Acquire(done func(clients.UserAcquired)) {
	lk := in.lock
	ctx := in.ctx
	at := in.w.k.Now()
	in.calls++
	in.spawn("Obtain", func() {
		in.w.watch.call(in.name, fmt.Sprintf("Obtain, called at virtual time %v", time.Duration(at)))
		h, err := lk.Obtain(ctx)
		in.w.watch.call(in.name, "")
		in.ctrl(func(in *instance) {
			in.calls--
			r := clients.UserAcquired{}
			switch {
			case err != nil:
				in.env.Logf(clients.KindClient, "user code: Obtain failed: %s", errText(err))
			case h == nil:
				in.env.Log(clients.KindClient, "user code: Obtain returned no lock")
			default:
				if err := in.checkDeadline("Held.Until", h.Until); err != nil {
					in.w.fail(err)
				}
				in.held = h
				r = clients.UserAcquired{OK: true, Token: h.Token, HasToken: h.HasToken, Value: h.Value}
				if f := in.cfg.Lock.FencingToken; !h.HasToken && f != "" && f != clients.FencingNone && !in.noToken {
					// The scenario's resource expects a token from
					// this lock; without one its writes are judged
					// as the fencing mode treats a tokenless write
					// (monotonic and mark reject them). Said once.
					in.noToken = true
					in.env.Logf(clients.KindClient, "user code: Obtain returned a lock without a fencing token (Held.HasToken false), though the scenario's lock asks for fencing_token %s: its critical sections reach the resource without one", f)
				}
			}
			done(r)
		})
	})
}

// Expired implements clients.UserLock: the validity the code returned
// (Held.Until, on the bubble's clock, which is the true time) has passed.
// A deadline on the client's wall clock (Proc.Now) is refused (clocks.go).
func (in *instance) Expired() bool {
	h := in.held
	if h == nil {
		return false
	}
	until := h.Until
	if h.UntilFunc != nil {
		until = h.UntilFunc()
		if err := in.checkDeadline("Held.UntilFunc", until); err != nil {
			in.w.fail(err)
			return false
		}
	}
	if until.IsZero() {
		return false
	}
	return !in.w.epoch.Add(time.Duration(in.w.k.Now())).Before(until)
}

// Release implements clients.UserLock.
func (in *instance) Release(done func()) {
	lk, h, ctx := in.lock, in.held, in.ctx
	in.held = nil
	at := in.w.k.Now()
	in.calls++
	in.spawn("Release", func() {
		in.w.watch.call(in.name, fmt.Sprintf("Release, called at virtual time %v", time.Duration(at)))
		var err error
		if h != nil {
			err = lk.Release(ctx, h)
		}
		in.w.watch.call(in.name, "")
		in.ctrl(func(in *instance) {
			in.calls--
			if err != nil {
				in.env.Logf(clients.KindClient, "user code: Release failed: %s", errText(err))
			}
			done()
		})
	})
}

// Extend implements clients.UserLock: one call of the user's Extend, in a
// goroutine of its own (not the worker of Obtain and Release: a real
// watchdog's extension may overlap the release).
func (in *instance) Extend(done func(string)) bool {
	ex, ok := in.lock.(Extender)
	h, ctx := in.held, in.ctx
	if !ok || h == nil {
		return false
	}
	at := in.w.k.Now()
	in.calls++
	end := in.w.busyEnter(fmt.Sprintf("client %s: Extend, called at virtual time %v", in.name, time.Duration(at)))
	in.w.handoff = append(in.w.handoff, func() {
		go func() {
			defer end()
			what := in.name + " (extension)"
			var err error
			func() {
				defer func() {
					if v := recover(); v != nil {
						in.w.fail(in.recovered("Extend", v))
					}
				}()
				in.w.watch.call(what, fmt.Sprintf("Extend, called at virtual time %v", time.Duration(at)))
				err = ex.Extend(ctx, h)
				in.w.watch.call(what, "")
			}()
			in.ctrl(func(in *instance) {
				in.calls--
				why := ""
				if err != nil {
					why = errText(err)
					in.env.Logf(clients.KindClient, "user code: Extend failed: %s", why)
				}
				done(why)
			})
		}()
	})
	return true
}

// Fire implements clients.UserLock: the items the driver handed over, and
// the end of a pause.
func (in *instance) Fire(tag any) bool {
	if t, ok := tag.(sleepTag); ok {
		in.w.handoff = append(in.w.handoff, func() { close(t.ch) })
		return true
	}
	if _, ok := tag.(resumeTag); ok {
		for _, c := range in.conns {
			in.w.handoff = append(in.w.handoff, c.signal)
		}
		return true
	}
	if _, ok := tag.(wakeTag); !ok {
		return false
	}
	in.waking = false
	box := in.outbox
	in.outbox = nil
	for _, it := range box {
		if in.dead.Load() {
			return true
		}
		it.act(in)
	}
	return true
}

// Receive implements clients.UserLock.
func (in *instance) Receive(_ sim.ProcID, msg sim.Message) bool { return in.receive(msg) }

// ConnEnded implements clients.UserLock.
func (in *instance) ConnEnded(peer sim.ProcID, why sim.ConnEnd) { in.connEnded(peer, why) }

// lost ends the belief of the lock the code holds.
func (in *instance) lost(why string) {
	if in.held != nil {
		in.lostFn(why)
	}
}

// errText is an error's text for the trace, its lines sorted: a library
// that joins the errors of parallel goroutines (redsync's per-node errors)
// joins them in the order the goroutines finished, which the Go scheduler
// decides when their deadlines fall at the same instant.
func errText(err error) string {
	lines := strings.Split(err.Error(), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
