package checker

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// TestHistories runs the files in testdata/histories: each "check" step is
// a history in and the checker's verdicts and explanations out, so a file
// reads as a worked example of what the checker decides and why. After a
// change to the checker's words, rewrite the files and review the diff:
//
//	go test ./checker -run TestHistories -rewrite
//
// The steps (an unknown command, record or argument fails at its file:line,
// so a typo never passes silently):
//
//	check end=DUR [max-wait=DUR] [max-wait.CLIENT=DUR] [settle=DUR]
//	      [loss=P] [timeout=DUR] [stats]
//	RECORD...                (input: one record a line; # starts a comment)
//	    judge the history of the records (none: an empty history), which
//	    ends at end, with Check and print the verdict of every registered
//	    property (in the registry's order), then how liveness was judged,
//	    the longest wait, the fencing story and each violation with its
//	    windows and its explanation. max-wait is the liveness bound of every client
//	    (DefaultMaxWait), max-wait.CLIENT one client's (MaxWait), settle the
//	    settling time of an instantaneous fault, loss the network's segment
//	    loss (NetworkLoss), timeout porcupine's per-piece budget; stats
//	    also prints the run's numbers (Stats.Lines).
//	check [options]          (no end=, no input)
//	    judge the previous step's history again with other options.
//
// Every check also judges the history with the streaming checker (the
// whole history as one piece, forgotten once judged) and prints a line
// "stream: ..." only where its verdicts differ from Check's, or where it
// needs the whole history.
//
// A time is a Go duration since the run's start (1s, 12.003s, 1500ms); a
// SPAN is FROM..TO, or FROM.. for a record the run ended in (still open).
// The records, each a word and arguments (bare words and key=value):
//
//	belief CLIENT SPAN [lock=L] [attempt=T] [token=N] [lost|expired|crashed]
//	       [validity=TTL/ELAPSED/DRIFT ...]
//	    CLIENT believed it held lock L ("L" by default) over SPAN, got by
//	    an attempt that began at attempt (SPAN's start by default), with a
//	    fencing token if given; it ended by a release unless a reason is
//	    given. Beliefs are numbered from 0 in the order given.
//	belief ... validity=TTL/ELAPSED/DRIFT [validity-at=T] [unchecked] [: RULE]
//	    the validity the client's algorithm computed (sim.Validity): at the
//	    grant (SPAN's start), or at an extension at validity-at; unchecked:
//	    the algorithm does not check it; RULE: how it computed the drift.
//	section CLIENT [lock=L] [token=N] [belief=ID] [read=T:V] [read-sent=T]
//	        [read-rejected] [write=T:accepted|rejected|lost] [wrote=V]
//	        [write-sent=T] [result=T]
//	    a critical section: the storage node served its read of V at T
//	    (read-sent: when the client sent it, T by default; read-rejected:
//	    the node refused the read), and decided its write of V+1 (wrote=V
//	    writes another value) at T with the outcome given (write-sent, the
//	    time the write was sent; result, when the client learned the
//	    outcome; both T by default). belief names the belief it ran under.
//	want CLIENT SPAN [lock=L] [gave-up|crashed|run-end]
//	    CLIENT wanted the lock over SPAN and got it at SPAN's end, unless a
//	    reason is given or SPAN is open.
//	attempt CLIENT SPAN [lock=L] [failed]
//	    one acquire attempt, which succeeded unless failed.
//	fault KIND AT|SPAN [targets=(P, ...)] [live=HOW] [ignored]: TEXT
//	    a fault record: acting over SPAN (FROM..never: it never stops), or
//	    instantaneous at AT, described by TEXT. Its liveness effect is the
//	    one faults' kind table declares for KIND (pause, partition, delay,
//	    drop, crash, restart, heal; other kinds settle), or live=settles|
//	    span|link|crash|restart|heal|none. ignored: the kernel changed nothing.
//	keyloss NODE KEY CAUSE AT [holder=P] [: DETAIL]
//	    NODE removed KEY on its own at AT: CAUSE is expired, evicted,
//	    session-expired or connection-killed.
//	promoted NODE AT [from=M] [keys=(K, K=N, ...)] [cut] : CAUSE
//	    NODE became a master at AT (replica of M before) holding the keys
//	    listed (with integer values), or more than those with cut.
//	demoted NODE AT [to=R] [last-write=T]
//	    NODE, a master, became a replica of R at AT, having last accepted
//	    a write as a master at T.
//	still-master NODE AT last-write=T
//	    the run ended at AT with NODE still a master, having last
//	    accepted a write at T (sim.RoleChange.RunEnd).
//	counter CLIENT load|purchase|read SPAN [key=K] [node=N] [method=M]
//	        [observed=V] [missing] [wrote] [known] [sold] [attempts=N]
//	        [conflicts=N] [: WHY]
//	    an operation on a stock counter (key "stock" and node "A" by
//	    default), observing V.
func TestHistories(t *testing.T) {
	datadriven.Walk(t, "testdata/histories", func(t *testing.T, path string) {
		var h historyDD
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string { return h.step(t, td) })
	})
}

// historyDD is the state of one file: the history of the last check step
// that gave one.
type historyDD struct{ h *sim.History }

func (d *historyDD) step(t testing.TB, td *datadriven.TestData) string {
	a := simtest.NewArgs(t, td)
	if td.Cmd != "check" {
		simtest.Unknown(t, td, "check")
	}
	switch {
	case a.Has("end"):
		d.h = parseHistory(t, td, sim.At(a.Duration("end", 0)))
	case strings.TrimSpace(td.Input) != "":
		a.Fatalf("missing end=... (when the history ends)")
	case d.h == nil:
		a.Fatalf("no history yet: give end=... and its records")
	}
	opts := checkOptions(a)
	stats := a.Bool("stats")
	a.Done()
	r := Check(d.h, opts)
	out := renderResult(r)
	if stats {
		for _, l := range r.Stats.Lines() {
			out += "stats: " + l + "\n"
		}
	}
	return out + streamDifference(d.h, opts, r)
}

// streamDifference judges h again as the streaming checker would, the
// whole history as one piece that it judges and forgets, and says how its
// verdicts differ from Check's; "" when they do not, so every file is a
// test of the stream too.
func streamDifference(h *sim.History, opts Options, whole Result) string {
	st := NewStream(opts, 0)
	st.Piece(h)
	r, _, err := st.Result()
	switch {
	case err != nil:
		return fmt.Sprintf("stream: %v\n", err)
	case fmt.Sprint(r.Verdicts) != fmt.Sprint(whole.Verdicts):
		return fmt.Sprintf("stream: verdicts %v\n", r.Verdicts)
	case fmt.Sprint(r.Stats.Lines()) != fmt.Sprint(whole.Stats.Lines()):
		return fmt.Sprintf("stream: stats %v\n", r.Stats.Lines())
	}
	return ""
}

// TestHistoriesRefuseMistakes: a typo in a step or a record fails at its
// file:line and names the mistake, instead of being ignored.
func TestHistoriesRefuseMistakes(t *testing.T) {
	tests := []struct{ step, input, want string }{
		{step: "check end=10s max-wiat=10s", want: "t.txt:3: check: unexpected arguments: max-wiat=10s"},
		{step: "check end=10s", input: "belief c1 1s..2s tokne=3", want: "t.txt:3 (record 1): belief: unexpected arguments: tokne=3"},
		{step: "check end=10s", input: "belief c1 1s..2s\nbeleif c2 3s..4s", want: `t.txt:3 (record 2): unknown command "beleif" (known: attempt, belief, clock, counter, demoted, fault, keyloss, promoted, section, still-master, want)`},
		{step: "check end=10s", input: "section c1 write=2s:acepted", want: `t.txt:3 (record 1): section: write=2s:acepted: unknown outcome "acepted" (accepted, rejected, lost)`},
		{step: "check end=10s", input: "want c1 5s..2s", want: `t.txt:3 (record 1): want: "5s..2s": the span ends before it starts`},
		{step: "check end=10s", input: "fault pause 1s..2s", want: "t.txt:3 (record 1): fault: a fault needs its text after ': '"},
		{step: "check end=10s", input: "clock c1", want: "t.txt:3 (record 1): clock: a clock record sets offset= or ppb="},
		{step: "check end=10s", input: "belief c1 1s..2s: why", want: "t.txt:3 (record 1): belief: takes no text after ':'"},
		{step: "check", input: "belief c1 1s..2s", want: "t.txt:3: check: missing end=... (when the history ends)"},
		{step: "check max-wait=1s", want: "t.txt:3: check: no history yet: give end=... and its records"},
		{step: "judge end=1s", want: `t.txt:3: unknown command "judge" (known: check)`},
	}
	for _, tt := range tests {
		t.Run(tt.step+" "+tt.input, func(t *testing.T) {
			cmd, args, err := datadriven.ParseLine(tt.step)
			require.NoError(t, err)
			td := &datadriven.TestData{Pos: "t.txt:3", Cmd: cmd, CmdArgs: args, Input: tt.input}
			var d historyDD
			assert.Equal(t, tt.want, simtest.Failure(t, func(tb testing.TB) { d.step(tb, td) }))
		})
	}
}

// checkOptions reads the options of a check step.
func checkOptions(a *simtest.Args) Options {
	opts := Options{
		DefaultMaxWait: a.Duration("max-wait", 0),
		Settle:         a.Duration("settle", 0),
		Timeout:        a.Duration("timeout", 0),
	}
	if a.Has("loss") {
		p, err := strconv.ParseFloat(a.String("loss", ""), 64)
		if err != nil || p < 0 || p > 1 {
			a.Fatalf("loss: want a probability from 0 to 1")
		}
		opts.NetworkLoss = p
	}
	for _, k := range a.Keys() {
		if c, ok := strings.CutPrefix(k, "max-wait."); ok {
			if opts.MaxWait == nil {
				opts.MaxWait = map[string]time.Duration{}
			}
			opts.MaxWait[c] = a.Duration(k, 0)
		}
	}
	return opts
}

// renderResult prints a Result as the files expect it: everything the
// checker decided, in a fixed order: the verdict of every registered
// property (so a new property shows in every file, after -rewrite), then
// the notes and the violations. It is the one place that knows the
// Result's shape.
func renderResult(r Result) string {
	var b strings.Builder
	if r.HistoryErr != nil {
		fmt.Fprintf(&b, "not judged: %v\n", r.HistoryErr)
	}
	for _, j := range r.Verdicts {
		fmt.Fprintf(&b, "%s: %s\n", j.Property, j.Verdict)
	}
	if r.LivenessNote != "" {
		fmt.Fprintf(&b, "liveness note: %s\n", r.LivenessNote)
	}
	if len(r.LivenessWindows) > 0 && r.Verdicts.Of(Liveness) != NotJudged {
		fmt.Fprintf(&b, "liveness windows: %s (the first long enough from %s)\n", windowsText(r.LivenessWindows), time.Duration(r.LivenessFrom))
	}
	if r.LongestWaitClient != "" {
		fmt.Fprintf(&b, "longest wait: %s (%s)\n", r.LongestWait, r.LongestWaitClient)
	}
	if r.Fencing != "" {
		fmt.Fprintf(&b, "fencing: %s\n", r.Fencing)
	}
	for _, v := range r.Vacuous {
		fmt.Fprintf(&b, "vacuous: %s\n", v)
	}
	for _, v := range r.Violations {
		b.WriteString(v.Kind)
		if v.Lock != "" {
			fmt.Fprintf(&b, " %q", v.Lock)
		}
		if len(v.Clients) > 0 {
			b.WriteString(" " + strings.Join(v.Clients, ","))
		}
		if len(v.Windows) > 0 {
			b.WriteString(" at " + windowsText(v.Windows))
		}
		fmt.Fprintf(&b, ":\n  %s\n", v.Explanation)
	}
	if r.ViolationsOmitted > 0 {
		fmt.Fprintf(&b, "(%d more violations omitted)\n", r.ViolationsOmitted)
	}
	return b.String()
}

func windowsText(ws []Window) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, time.Duration(w.Start).String()+".."+time.Duration(w.End).String())
	}
	return strings.Join(parts, " ")
}

// parseHistory reads td's input records into a history ending at end.
func parseHistory(t testing.TB, td *datadriven.TestData, end sim.Time) *sim.History {
	h := &sim.History{End: end}
	for i, line := range strings.Split(td.Input, "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		head, text, _ := strings.Cut(line, ": ")
		if strings.TrimSpace(head) == "" {
			continue
		}
		cmd, args, err := datadriven.ParseLine(head)
		rec := &datadriven.TestData{Pos: fmt.Sprintf("%s (record %d)", td.Pos, i+1), Cmd: cmd, CmdArgs: args}
		if err != nil {
			rec.Fatalf(t, "%v", err)
		}
		r := &recordReader{Args: simtest.NewArgs(t, rec), text: strings.TrimSpace(text)}
		switch cmd {
		case "belief":
			h.Beliefs = append(h.Beliefs, r.belief(len(h.Beliefs)))
		case "section":
			h.Sections = append(h.Sections, r.section(len(h.Sections)))
		case "want":
			h.Wants = append(h.Wants, r.want())
		case "attempt":
			h.Attempts = append(h.Attempts, r.attempt())
		case "fault":
			h.Faults = append(h.Faults, r.fault())
		case "keyloss":
			h.KeyLosses = append(h.KeyLosses, r.keyLoss())
		case "counter":
			op := r.counter()
			op.ID = len(h.Counter)
			h.Counter = append(h.Counter, op)
		case "clock":
			h.Clocks = append(h.Clocks, r.clock())
		case "promoted", "demoted":
			h.Roles = append(h.Roles, r.role(cmd == "promoted"))
		case "still-master":
			c := sim.RoleChange{Master: true, RunEnd: true, Node: r.Pos("node")}
			c.At = r.time("run end", r.Pos("time"))
			c.LastWrite = r.time("last-write", r.String("last-write", "0s"))
			h.Roles = append(h.Roles, c)
		default:
			simtest.Unknown(t, rec, "belief", "section", "want", "attempt", "fault", "keyloss", "counter", "clock", "promoted", "demoted", "still-master")
		}
		if r.text != "" && cmd != "fault" && cmd != "keyloss" && cmd != "counter" && cmd != "promoted" {
			r.Fatalf("takes no text after ':'")
		}
		r.Done()
	}
	return h
}

// recordReader reads one record's arguments strictly.
type recordReader struct {
	*simtest.Args
	text string // after ": "
}

func (r *recordReader) time(what, s string) sim.Time {
	return sim.At(r.ParseDuration(what, s))
}

// setTime sets *dst to the time key=T, if given.
func (r *recordReader) setTime(key string, dst *sim.Time) {
	if r.Has(key) {
		*dst = r.time(key, r.String(key, ""))
	}
}

// span reads the positional SPAN: FROM..TO, or FROM.. (open: end false).
// to may also be "never" when never is allowed.
func (r *recordReader) span(never bool) (from, to sim.Time, closed bool) {
	s := r.Pos("the span FROM..TO")
	f, e, ok := strings.Cut(s, "..")
	if !ok {
		r.Fatalf("%q: want a span FROM..TO or FROM..", s)
	}
	from = r.time("span start", f)
	switch {
	case e == "":
		return from, 0, false
	case e == "never" && never:
		return from, sim.Never, true
	}
	to = r.time("span end", e)
	if to < from {
		r.Fatalf("%q: the span ends before it starts", s)
	}
	return from, to, true
}

// reason reads at most one of the bare words.
func (r *recordReader) reason(words ...string) string {
	got := ""
	for _, w := range words {
		if r.Bool(w) {
			if got != "" {
				r.Fatalf("both %s and %s", got, w)
			}
			got = w
		}
	}
	return got
}

func (r *recordReader) int64Arg(key string) (int64, bool) {
	if !r.Has(key) {
		return 0, false
	}
	s := r.String(key, "")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.Fatalf("%s: %q is not an integer", key, s)
	}
	return n, true
}

func (r *recordReader) belief(id int) sim.Belief {
	b := sim.Belief{ID: id, Client: r.Pos("client"), Reason: sim.EndReleased}
	var closed bool
	b.Start, b.End, closed = r.span(false)
	b.Lock = r.String("lock", "L")
	b.AttemptStart = b.Start
	r.setTime("attempt", &b.AttemptStart)
	b.Token, b.HasToken = r.int64Arg("token")
	if why := r.reason("lost", "expired", "crashed"); why != "" {
		b.Reason = sim.BeliefEnd(why)
	}
	if v := r.String("validity", ""); v != "" {
		terms := strings.Split(v, "/")
		if len(terms) != 3 {
			r.Fatalf("validity=%s: want validity=TTL/ELAPSED/DRIFT", v)
		}
		b.Validity = sim.Validity{At: b.Start, Rule: r.text, Checked: !r.Bool("unchecked"), Extended: r.Has("validity-at"),
			TTL: r.ParseDuration("ttl", terms[0]), Elapsed: r.ParseDuration("elapsed", terms[1]), Drift: r.ParseDuration("drift", terms[2])}
		r.setTime("validity-at", &b.Validity.At)
		r.text = ""
	}
	if !closed {
		if b.Reason != sim.EndReleased {
			r.Fatalf("an open belief has no end reason")
		}
		b.Open, b.Reason = true, sim.EndRunEnd
	}
	return b
}

func (r *recordReader) section(id int) sim.Section {
	x := sim.Section{ID: id, Client: r.Pos("client"), Lock: r.String("lock", "L"), BeliefID: -1}
	x.Token, x.HasToken = r.int64Arg("token")
	if n, ok := r.int64Arg("belief"); ok {
		x.BeliefID = int(n)
	}
	if v := r.String("read", ""); v != "" {
		at, val, ok := strings.Cut(v, ":")
		if !ok {
			r.Fatalf("read=%s: want read=TIME:VALUE", v)
		}
		x.ReadAt, x.Read = r.time("read", at), true
		x.ReadSent = x.ReadAt
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			r.Fatalf("read=%s: %q is not an integer", v, val)
		}
		x.ReadValue = n
	}
	r.setTime("read-sent", &x.ReadSent)
	x.ReadRejected = r.Bool("read-rejected")
	if v := r.String("write", ""); v != "" {
		at, outcome, ok := strings.Cut(v, ":")
		if !ok {
			r.Fatalf("write=%s: want write=TIME:accepted|rejected|lost", v)
		}
		switch o := sim.WriteOutcome(outcome); o {
		case sim.WriteAccepted, sim.WriteRejected, sim.WriteLost:
			x.Outcome = o
		default:
			r.Fatalf("write=%s: unknown outcome %q (accepted, rejected, lost)", v, outcome)
		}
		x.WriteAt, x.Written = r.time("write", at), true
		x.WriteSent, x.ResultAt, x.WriteValue = x.WriteAt, x.WriteAt, x.ReadValue+1
	}
	if n, ok := r.int64Arg("wrote"); ok {
		x.WriteValue = n
	}
	r.setTime("write-sent", &x.WriteSent)
	r.setTime("result", &x.ResultAt)
	return x
}

func (r *recordReader) want() sim.Want {
	w := sim.Want{Client: r.Pos("client")}
	var closed bool
	w.Start, w.End, closed = r.span(false)
	w.Lock = r.String("lock", "L")
	w.Reason = r.reason("gave-up", "crashed", "run-end")
	switch {
	case !closed:
		if w.Reason != "" {
			r.Fatalf("an open want has no end reason")
		}
		w.Open, w.Reason = true, "run-end"
	case w.Reason == "":
		w.Got = true
	}
	return w
}

func (r *recordReader) attempt() sim.Attempt {
	x := sim.Attempt{Client: r.Pos("client")}
	var closed bool
	x.Start, x.End, closed = r.span(false)
	x.Lock = r.String("lock", "L")
	failed := r.Bool("failed")
	x.OK, x.Open = closed && !failed, !closed
	return x
}

// livenessWords are the values of a fault record's live=.
var livenessWords = map[string]sim.FaultLiveness{
	"settles": sim.LiveSettles, "span": sim.LiveSpan, "link": sim.LiveLink,
	"crash": sim.LiveCrash, "restart": sim.LiveRestart, "heal": sim.LiveHeal,
	"none": sim.LiveNone,
}

func (r *recordReader) fault() sim.FaultRecord {
	f := sim.FaultRecord{Kind: r.Pos("kind")}
	at := r.Pos("AT or SPAN")
	if from, to, ok := strings.Cut(at, ".."); ok {
		f.At = r.time("fault start", from)
		switch to {
		case "never":
			f.Until = sim.Never
		case "":
			r.Fatalf("%q: a fault's span needs an end (..never: it never stops)", at)
		default:
			f.Until = r.time("fault end", to)
		}
	} else {
		f.At = r.time("fault time", at)
	}
	f.Targets = r.Vals("targets")
	f.Liveness = liveness[f.Kind]
	if l := r.String("live", ""); l != "" {
		v, ok := livenessWords[l]
		if !ok {
			r.Fatalf("live=%s: unknown (settles, span, link, crash, restart, heal)", l)
		}
		f.Liveness = v
	}
	f.Ignored = r.Bool("ignored")
	f.Text = r.text
	if f.Text == "" {
		r.Fatalf("a fault needs its text after ': '")
	}
	return f
}

func (r *recordReader) keyLoss() sim.KeyLoss {
	l := sim.KeyLoss{Node: r.Pos("node"), Key: r.Pos("key")}
	switch c := sim.KeyLossCause(r.Pos("cause")); c {
	case sim.LossExpired, sim.LossEvicted, sim.LossSessionExpired, sim.LossConnectionKilled:
		l.Cause = c
	default:
		r.Fatalf("unknown cause %q (expired, evicted, session-expired, connection-killed)", c)
	}
	l.At = r.time("loss time", r.Pos("time"))
	l.Holder = r.String("holder", "")
	l.Detail = r.text
	return l
}

// role reads a promotion (promoted NODE AT [from=M] [keys=(K, K=N, ...)]
// [cut] : CAUSE) or a demotion (demoted NODE AT to=R [last-write=T]).
func (r *recordReader) role(master bool) sim.RoleChange {
	c := sim.RoleChange{Master: master, Node: r.Pos("node")}
	c.At = r.time("role change time", r.Pos("time"))
	if master {
		c.Other = r.String("from", "")
		c.Cause = r.text
		if c.Cause == "" {
			r.Fatalf("a promotion needs its cause after ': '")
		}
		for _, k := range r.Vals("keys") {
			rk := sim.RoleKey{Key: k}
			if key, v, ok := strings.Cut(k, "="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					r.Fatalf("keys: %q: want KEY or KEY=INTEGER", k)
				}
				rk = sim.RoleKey{Key: key, Int: n, IsInt: true}
			}
			c.Keys = append(c.Keys, rk)
		}
		c.KeysCut = r.Bool("cut")
	} else {
		c.Other = r.String("to", "")
		if r.Has("last-write") {
			c.LastWrite = r.time("last-write", r.String("last-write", ""))
		}
	}
	return c
}

// clock reads a process's initial clock setting: clock PROC [offset=D]
// [ppb=N] (the wall clock's offset, the rate error in parts per billion).
func (r *recordReader) clock() sim.ClockRecord {
	c := sim.ClockRecord{Proc: r.Pos("process")}
	if r.Has("offset") {
		c.Offset = r.ParseDuration("offset", r.String("offset", ""))
	}
	c.DriftPPB, _ = r.int64Arg("ppb")
	if c.Offset == 0 && c.DriftPPB == 0 {
		r.Fatalf("a clock record sets offset= or ppb=")
	}
	return c
}

func (r *recordReader) counter() sim.CounterOp {
	op := sim.CounterOp{Client: r.Pos("client"), Attempts: 1}
	switch k := r.Pos("kind"); k {
	case "load":
		op.Kind = sim.CounterLoad
	case "purchase":
		op.Kind = sim.CounterPurchase
	case "read":
		op.Kind = sim.CounterRead
	default:
		r.Fatalf("unknown counter operation %q (load, purchase, read)", k)
	}
	var closed bool
	op.Call, op.Return, closed = r.span(false)
	op.Open = !closed
	op.Key, op.Node, op.Method = r.String("key", "stock"), r.String("node", "A"), r.String("method", "")
	op.Observed, op.HasObserved = r.int64Arg("observed")
	op.Missing = r.Bool("missing")
	op.Wrote, op.Known, op.Sold = r.Bool("wrote"), r.Bool("known"), r.Bool("sold")
	op.Attempts = r.Int("attempts", 1)
	op.Conflicts = r.Int("conflicts", 0)
	op.Why = r.text
	return op
}
