package realmode

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/locksim/locksim/sim"
)

// observe maps what the fault schedule did to a gateway in the kernel onto
// the real server behind it. The schedule itself is the simulator's
// (faults.Install on the same kernel, same seed, same draws, same records
// for the checker's explanations); a pause, crash or restart of a gateway
// process is carried out on the real process:
//
//   - pause: SIGSTOP, and SIGCONT at the resume (the kernel also holds the
//     requests sent meanwhile in the gateway's inbox, as the stopped
//     server's socket buffer would);
//   - crash, mode process: SIGKILL; mode clean: SHUTDOWN; mode power: the
//     proxy makes the host a black hole (proxy.PowerOff: no FIN, no RST, no
//     byte reaches a peer, whose connections stay open), then SIGKILL and
//     the lazy data directory's power loss (Check has refused a power loss
//     that would lose more than that);
//   - restart: the same binary and arguments on the same data directory,
//     after a power loss once the host is back (proxy.PowerOn: its
//     kernel resets the old connections a peer sends on);
//   - clock jump and drift: the server's wall clock through the clock
//     library (realmode/clockshift), at once on the driver's goroutine.
//
// Signals and restarts run on a per-server goroutine, in order, so the
// driver never blocks on a process. Partitions, cuts and delays also go to
// the proxy (observeNet).
func (rt *runtime) observe(ev sim.ObservedEvent) {
	switch ev.Kind {
	case sim.KindPartition, sim.KindHeal, sim.KindLinkFault:
		rt.observeNet(ev)
		return
	case sim.KindPause, sim.KindResume, sim.KindCrash, sim.KindRestart, sim.KindClockJump, sim.KindClockDrift:
	default:
		return
	}
	name := rt.k.Name(ev.Proc)
	srv := rt.servers[name]
	if srv == nil {
		return
	}
	tr := rt.k.Trace()
	text := ""
	if n := len(tr); n > 0 {
		text = tr[n-1].Text
	}
	if strings.Contains(text, "ignored") {
		return // the kernel did nothing, nor does real mode
	}
	ops := rt.ops[name]
	switch ev.Kind {
	case sim.KindClockJump:
		// The kernel traces the step as "+30s" or "-5s".
		if by, err := time.ParseDuration(text); err == nil && srv.clock != nil {
			srv.clock.Jump(by)
		}
	case sim.KindClockDrift:
		// The kernel traces the new rate as "N ppb".
		var ppb int64
		if _, err := fmt.Sscanf(text, "%d ppb", &ppb); err == nil && srv.clock != nil {
			srv.clock.SetRate(ppb)
		}
	case sim.KindPause, sim.KindResume:
		sig, sigName := syscall.SIGSTOP, "SIGSTOP"
		if ev.Kind == sim.KindResume {
			sig, sigName = syscall.SIGCONT, "SIGCONT"
		}
		ops <- func() {
			if err := srv.signal(sig); err != nil {
				rt.inject(func() { rt.k.Tracef(KindReal, ev.Proc, "%s failed: %v", sigName, err) })
			}
		}
	case sim.KindCrash:
		power := strings.Contains(text, "power")
		if power {
			// A machine without power sends nothing: no FIN, no RST, no
			// retransmission of what a cut held. The proxy turns the host
			// into a black hole before the kill, so that neither the
			// killed process's FINs nor its held bytes reach a peer, whose
			// connections stay open until its own timeouts (a replica's
			// repl-timeout, a cluster node's node timeout) or until the
			// host is back (PowerOn at the restart resets them).
			rt.proxy.PowerOff(name)
			rt.poweredOff[name] = true
		}
		if g := rt.gateways[name]; g != nil {
			g.close()
		}
		switch {
		case strings.Contains(text, "clean"):
			ops <- srv.shutdown
		case power:
			ops <- func() {
				srv.kill()
				// What the page cache held and no fsync wrote out is
				// gone with the power (a lazy data directory: startRedis).
				if srv.lazy != nil {
					if err := srv.lazy.PowerLoss(); err != nil {
						rt.inject(func() { rt.k.Tracef(KindReal, ev.Proc, "power loss of the data directory failed: %v", err) })
					}
				}
			}
		default:
			ops <- srv.kill
		}
	case sim.KindRestart:
		power := rt.poweredOff[name]
		delete(rt.poweredOff, name)
		ops <- func() {
			if power {
				// The host boots (after the kill, on this worker): its
				// kernel answers RST to segments of the connections it
				// lost; the server then starts listening.
				rt.proxy.PowerOn(name)
			}
			if err := srv.restart(); err != nil {
				rt.inject(func() { rt.k.Tracef(KindReal, ev.Proc, "restart failed: %v", err) })
			}
		}
	}
}

// observeNet carries the kernel's partitions, one-way cuts, heals and
// delays to the proxy, which holds (or delays) the bytes between real
// processes the way TCP does. The kernel keeps applying them to its own
// links between clients, gateways and the storage service, so a client
// cut from a server is cut in the kernel (the model's link semantics) and
// in the proxy; a link between two real servers (replication, Sentinel)
// exists only in the proxy. Delays go to the proxy only between two real
// processes (elsewhere the kernel already delays the messages).
func (rt *runtime) observeNet(ev sim.ObservedEvent) {
	tr := rt.k.Trace()
	if len(tr) == 0 {
		return
	}
	text := tr[len(tr)-1].Text
	switch ev.Kind {
	case sim.KindPartition:
		// "#3 [c1 A B] [D E]" or "#4 one-way [A] -> [B C]".
		var id int
		if _, err := fmt.Sscanf(text, "#%d", &id); err != nil {
			return
		}
		groups := bracketed(text)
		if strings.Contains(text, " one-way ") {
			if len(groups) != 2 {
				return
			}
			var ids []int
			for _, a := range groups[0] {
				for _, b := range groups[1] {
					ids = append(ids, rt.proxy.Cut(a, b))
				}
			}
			rt.cuts[id] = ids
			return
		}
		rt.cuts[id] = []int{rt.proxy.Partition(groups)}
	case sim.KindHeal:
		if text == "all" {
			rt.proxy.Heal()
			for _, id := range rt.delays {
				rt.proxy.Undelay(id)
			}
			rt.delays = nil
			return
		}
		var id int
		if _, err := fmt.Sscanf(text, "#%d", &id); err == nil {
			for _, pid := range rt.cuts[id] {
				rt.proxy.Uncut(pid)
			}
			delete(rt.cuts, id)
		}
	case sim.KindLinkFault:
		// "delay 1s to B for 10s"; drops between real servers were refused.
		var by, d time.Duration
		var to string
		var byS, dS string
		if _, err := fmt.Sscanf(text, "delay %s to %s for %s", &byS, &to, &dS); err != nil {
			return
		}
		from := rt.k.Name(ev.Proc)
		if !rt.roles.talk(from, to) {
			return
		}
		var err1, err2 error
		by, err1 = time.ParseDuration(byS)
		d, err2 = time.ParseDuration(dS)
		if err1 != nil || err2 != nil {
			return
		}
		id := rt.proxy.Delay(from, to, by)
		rt.delays = append(rt.delays, id)
		if end := rt.k.Now() + sim.Time(d); end > rt.k.Now() {
			rt.k.At(end, func() { rt.proxy.Undelay(id) })
		}
	}
}

// bracketed returns the space-separated names inside each [...] of s.
func bracketed(s string) [][]string {
	var out [][]string
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			return out
		}
		out = append(out, strings.Fields(s[i+1:i+j]))
		s = s[i+j+1:]
	}
}
