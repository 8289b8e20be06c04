package usercode

import (
	"fmt"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/record"
)

// Never a verdict on code locksim could not run.
//
// The simulated Redis node answers what it does not model (a script that
// is not one of its built-in lock scripts, a command or option of real
// Redis it does not implement) with an error reply that starts "ERR
// locksim:" (nodes/redis errNotModelled and the unknown-script reply). A
// real Redis would have run the command: the code under test got a reply
// that exists only because of the simulation, and whatever it did next
// (hold a lock it never released, report a failure) is not what it does
// against Redis. Such a run is inconclusive: Run returns its outcome with
// every verdict unknown and the replies listed (record.Run.Unsupported),
// and an *UnsupportedError.

// pending is a command sent and not yet answered.
type pending struct {
	c    *simConn
	args []string
}

// limitMark is how every reply of a limit of the simulation reads.
const limitMark = "ERR locksim: "

// limitReply returns the error text of a reply of a limit of locksim in v
// (an array's elements included: EXEC, a pipeline), "" when none.
func limitReply(v redis.Value) string {
	switch v.Kind {
	case redis.KindError:
		if strings.Contains(v.Str, limitMark) {
			return v.Str
		}
	case redis.KindArray:
		for _, e := range v.Array {
			if s := limitReply(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// commandText is a command as the inconclusive outcome names it: its name
// and arguments, each cut short, a script's text on one line.
func commandText(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if b.Len() > 200 {
			b.WriteString("...")
			break
		}
		a = strings.Join(strings.Fields(a), " ")
		if i == 0 {
			a = strings.ToUpper(a)
		}
		if len(a) > 120 {
			a = a[:120] + "..."
		}
		if i > 0 && (a == "" || strings.ContainsAny(a, " '\"")) {
			a = fmt.Sprintf("%q", a)
		}
		b.WriteString(a)
	}
	return b.String()
}

// unsupported records a reply of a limit of locksim to a client (root).
func (w *world) unsupported(in *instance, args []string, reply string) {
	at := time.Duration(w.k.Now())
	in.env.Logf(KindUser, "INCONCLUSIVE: locksim could not run %s (reply %q): the run has no verdict", commandText(args), reply)
	w.limits = append(w.limits, record.Unsupported{Client: in.name, At: at, Command: commandText(args), Reply: reply})
}

// UnsupportedError is the error of a run in which user code got replies
// that exist only because of a limit of locksim: the run is inconclusive.
type UnsupportedError struct {
	Scenario string
	Seed     uint64
	Replies  []record.Unsupported
}

func (e *UnsupportedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed %d is inconclusive: locksim could not run what the user code sent (a limit of the simulation, not a verdict on the code):", e.Scenario, e.Seed)
	for i, u := range e.Replies {
		if i == 5 {
			fmt.Fprintf(&b, "\n  and %d more", len(e.Replies)-i)
			break
		}
		b.WriteString("\n  " + u.String())
	}
	return b.String()
}
