package simtest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/locksim/locksim/sim"
)

// ConversationSteps are the commands Conversation.Run handles, for the
// grammar of every interaction test that talks to a server:
//
//	do TARGET [for=DUR]
//	LINE...              (input: one request a line; "quoted words" allowed)
//	    send each request in turn and wait for its reply (up to for, a
//	    minute by default); print "LINE -> REPLY (arrival time)", or
//	    "LINE -> no reply within DUR".
//	send TARGET WORD...  send one request without waiting; print its id.
//	wait ID [for=DUR]    wait for the reply to a sent request (a minute by
//	                     default); print "ID -> REPLY (arrival time)".
//
// What a TARGET is (a node, a connection, a session) and how a line's words
// make a request is the package's: Conversation.Send.
var ConversationSteps = []string{"do", "send", "wait"}

// Conversation runs the request steps of an interaction test.
type Conversation struct {
	W *World
	// Send sends the request written as words to target and returns the
	// request's id; words it cannot read, or an unknown target, fail the
	// step (a.Fatalf).
	Send func(a *Args, target string, words []string) uint64
	// Reply returns the reply to id rendered on one line, and when it
	// arrived, once it has.
	Reply func(id uint64) (string, sim.Time, bool)
}

// wait runs the world until the reply to id arrives or limit passes.
func (c *Conversation) wait(id uint64, limit time.Duration) (string, sim.Time, bool) {
	c.W.RunUntil(limit, func() bool { _, _, ok := c.Reply(id); return ok })
	return c.Reply(id)
}

// Run handles td if it is a conversation step and reports whether it was.
func (c *Conversation) Run(t testing.TB, td *datadriven.TestData, a *Args) (string, bool) {
	t.Helper()
	var b strings.Builder
	switch td.Cmd {
	case "do":
		target := a.Pos("target")
		limit := a.Duration("for", time.Minute)
		a.Done()
		lines := strings.Split(strings.TrimSpace(td.Input), "\n")
		if lines[0] == "" {
			a.Fatalf("give the requests as input lines")
		}
		for _, line := range lines {
			words, err := Words(line)
			if err != nil || len(words) == 0 {
				a.Fatalf("bad request line %q: %v", line, err)
			}
			text := JoinWords(words)
			rep, at, ok := c.wait(c.Send(a, target, words), limit)
			if !ok {
				fmt.Fprintf(&b, "%s -> no reply within %s\n", text, limit)
				continue
			}
			fmt.Fprintf(&b, "%s -> %s (%s)\n", text, rep, at)
		}
	case "send":
		target := a.Pos("target")
		words := a.Rest()
		a.Done()
		a.NoInput()
		if len(words) == 0 {
			a.Fatalf("missing the request")
		}
		fmt.Fprintf(&b, "sent %d\n", c.Send(a, target, words))
	case "wait":
		id, err := strconv.ParseUint(a.Pos("request id"), 10, 64)
		if err != nil {
			a.Fatalf("the request id is a number")
		}
		limit := a.Duration("for", time.Minute)
		a.Done()
		rep, at, ok := c.wait(id, limit)
		if !ok {
			return fmt.Sprintf("no reply to %d by %s\n", id, c.W.K.Now()), true
		}
		fmt.Fprintf(&b, "%d -> %s (%s)\n", id, rep, at)
	default:
		return "", false
	}
	return b.String(), true
}

// ProbeReply is Conversation.Reply for a probe whose replies render
// with render.
func ProbeReply[R any](p *Probe[R], render func(R) string) func(uint64) (string, sim.Time, bool) {
	return func(id uint64) (string, sim.Time, bool) {
		a, ok := p.Reply(id)
		if !ok {
			return "", 0, false
		}
		return render(a.Reply), a.At, true
	}
}

// JoinWords writes words back as a line Words reads the same: a word that
// is empty or holds a blank, a quote or a control character is quoted.
func JoinWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		if w == "" || strings.ContainsAny(w, " \t\"") || strconv.Quote(w) != `"`+w+`"` {
			out[i] = strconv.Quote(w)
		}
	}
	return strings.Join(out, " ")
}
