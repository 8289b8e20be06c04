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
//   - crash, mode process or power: SIGKILL (Check has refused a power loss
//     that would lose more than a kill); mode clean: SHUTDOWN;
//   - restart: the same binary and arguments on the same data directory;
//   - clock jump and drift: the server's wall clock through the clock
//     library (realmode/clockshift), at once on the driver's goroutine.
//
// Signals and restarts run on a per-server goroutine, in order, so the
// driver never blocks on a process. Partitions, drops and delays act on the
// kernel's links between clients, gateways and the storage service (Check
// refused those between two real servers).
func (rt *runtime) observe(ev sim.ObservedEvent) {
	switch ev.Kind {
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
	case sim.KindPause:
		ops <- func() { srv.signal(syscall.SIGSTOP) }
	case sim.KindResume:
		ops <- func() { srv.signal(syscall.SIGCONT) }
	case sim.KindCrash:
		if g := rt.gateways[name]; g != nil {
			g.close()
		}
		if strings.Contains(text, "clean") {
			ops <- srv.shutdown
		} else {
			ops <- srv.kill
		}
	case sim.KindRestart:
		ops <- func() {
			if err := srv.restart(); err != nil {
				rt.inject(func() { rt.k.Tracef(KindReal, ev.Proc, "restart failed: %v", err) })
			}
		}
	}
}
