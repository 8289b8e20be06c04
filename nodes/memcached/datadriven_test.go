package memcached

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// TestInteractions runs the step files in testdata/interactions: each step
// drives a memcached node "M" and a probe client "c" (messages take 100 µs)
// and prints what happened; the file holds the expected output under
// "----". After a model change, rewrite the files and review the diff:
//
//	go test ./nodes/memcached -run TestInteractions -rewrite
//
// The grammar (an unknown command or a leftover argument fails at its
// file:line):
//
//	node [max-bytes=N] [item-size-max=N] [no-evict] [no-cas] [wall=DUR]
//	    configure M (before any other step; DefaultConfig otherwise): -m in
//	    bytes, -I, -M (no-evict: a full cache answers out of memory), -C;
//	    wall offsets M's wall clock from true time. The first other step
//	    starts the world.
//
// the steps of simtest.ConversationSteps (do, send, wait) with M as the
// target and a text-protocol command line as the request, without the
// byte count and with the data block in the line:
//
//	set|add|replace KEY FLAGS EXPTIME VALUE
//	cas KEY FLAGS EXPTIME VALUE CAS
//	get|gets KEY...
//	delete KEY
//	touch KEY EXPTIME
//	incr|decr KEY DELTA
//	flush_all
//
// (a reply prints as its line, after the VALUE lines of a get or gets, each
// as VALUE KEY FLAGS "DATA" [CAS]); and the shared steps of
// simtest.SharedSteps (advance, jump, pause, crash, restart, events,
// losses ...); events prints by default the item events, the faults and
// the connection ends.
func TestInteractions(t *testing.T) {
	simtest.RunInteractions(t, "testdata/interactions", func(t *testing.T) simtest.Model {
		return &memcachedDD{cfg: DefaultConfig()}
	})
}

var memcachedDDKinds = []sim.Kind{
	KindItemStored, KindItemDeleted, KindItemExpired, KindItemEvicted, KindItemFlushed,
	sim.KindCrash, sim.KindRestart, sim.KindClockJump, sim.KindPause, sim.KindResume, sim.KindConnEnd,
}

type memcachedDD struct {
	simtest.NoSteps
	cfg   Config
	clock sim.ClockSpec
	w     *world
	steps simtest.Steps
}

func (h *memcachedDD) SetupSteps() []string { return []string{"node"} }

func (h *memcachedDD) Setup(a *simtest.Args, td *datadriven.TestData) {
	h.cfg.MaxBytes = int64(a.Int("max-bytes", int(h.cfg.MaxBytes)))
	h.cfg.ItemSizeMax = int64(a.Int("item-size-max", int(h.cfg.ItemSizeMax)))
	h.cfg.EvictToFree = !a.Bool("no-evict")
	h.cfg.UseCAS = !a.Bool("no-cas")
	h.clock.Offset = a.Duration("wall", 0)
	a.Done()
	if err := h.cfg.Validate(); err != nil {
		a.Fatalf("%v", err)
	}
}

func (h *memcachedDD) Start(t testing.TB) (*simtest.Steps, *simtest.Conversation) {
	h.w = newWorld(t, h.cfg, h.clock)
	h.steps = simtest.Steps{W: h.w.World, Kinds: memcachedDDKinds}
	return &h.steps, &simtest.Conversation{W: h.w.World, Send: h.send, Reply: simtest.ProbeReply(h.w.p, renderReply)}
}

// send reads one command line and sends it to M.
func (h *memcachedDD) send(a *simtest.Args, target string, words []string) uint64 {
	h.steps.Known(a, target)
	r := parseRequest(a, words)
	return h.w.p.Send(h.w.ID(target), func(id uint64) sim.Message { r.ID = id; return r })
}

// parseRequest reads a command line as the grammar of TestInteractions
// writes it.
func parseRequest(a *simtest.Args, words []string) Request {
	var r Request
	for c := CmdSet; c <= CmdFlushAll; c++ {
		if c.String() == words[0] {
			r.Cmd = c
		}
	}
	args := words[1:]
	want := func(usage string, n int) {
		if len(args) != n {
			a.Fatalf("%s: want %s", strings.Join(words, " "), usage)
		}
	}
	num := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			a.Fatalf("%s: %q is not a number", strings.Join(words, " "), s)
		}
		return n
	}
	exptime := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			a.Fatalf("%s: %q is not an exptime", strings.Join(words, " "), s)
		}
		return n
	}
	switch r.Cmd {
	case CmdSet, CmdAdd, CmdReplace:
		want(r.Cmd.String()+" KEY FLAGS EXPTIME VALUE", 4)
		r.Key, r.Flags, r.Exptime, r.Value = args[0], uint32(num(args[1])), exptime(args[2]), args[3]
	case CmdCas:
		want("cas KEY FLAGS EXPTIME VALUE CAS", 5)
		r.Key, r.Flags, r.Exptime, r.Value, r.CAS = args[0], uint32(num(args[1])), exptime(args[2]), args[3], num(args[4])
	case CmdGet, CmdGets:
		if len(args) == 0 {
			a.Fatalf("%s: want %s KEY...", words[0], words[0])
		}
		r.Keys = args
	case CmdDelete:
		want("delete KEY", 1)
		r.Key = args[0]
	case CmdTouch:
		want("touch KEY EXPTIME", 2)
		r.Key, r.Exptime = args[0], exptime(args[1])
	case CmdIncr, CmdDecr:
		want(r.Cmd.String()+" KEY DELTA", 2)
		r.Key, r.Delta = args[0], num(args[1])
	case CmdFlushAll:
		want("flush_all", 0)
	default:
		a.Fatalf("unknown command %q (set, add, replace, cas, get, gets, delete, touch, incr, decr, flush_all)", words[0])
	}
	return r
}

// renderReply prints a reply on one line: its VALUE lines, then its line.
func renderReply(r Reply) string {
	var b strings.Builder
	for _, it := range r.Items {
		b.WriteString("VALUE " + it.Key + " " + strconv.FormatUint(uint64(it.Flags), 10) + " " + strconv.Quote(it.Value))
		if r.Gets {
			b.WriteString(" " + strconv.FormatUint(it.CAS, 10))
		}
		b.WriteString(", ")
	}
	b.WriteString(r.Status)
	return b.String()
}

// TestRequestLineMistakes: a request line the grammar does not know fails
// at its file:line and says why.
func TestRequestLineMistakes(t *testing.T) {
	for line, want := range map[string]string{
		"set k 0 10":     "f.txt:1: do: set k 0 10: want set KEY FLAGS EXPTIME VALUE",
		"add k x 10 v":   `f.txt:1: do: add k x 10 v: "x" is not a number`,
		"get":            "f.txt:1: do: get: want get KEY...",
		"incr k 1 2":     "f.txt:1: do: incr k 1 2: want incr KEY DELTA",
		"stats":          `f.txt:1: do: unknown command "stats" (set, add, replace, cas, get, gets, delete, touch, incr, decr, flush_all)`,
		"touch k soon":   `f.txt:1: do: touch k soon: "soon" is not an exptime`,
		"cas k 0 0 v 1":  "",
		"flush_all now":  "f.txt:1: do: flush_all now: want flush_all",
		"delete k other": "f.txt:1: do: delete k other: want delete KEY",
	} {
		assert.Equal(t, want, simtest.LineFailure(t, line, func(a *simtest.Args, w []string) { parseRequest(a, w) }), line)
	}
}
