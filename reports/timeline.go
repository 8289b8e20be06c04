package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// LaneKind says what a timeline lane stands for.
type LaneKind int

// Lane kinds.
const (
	LaneClient LaneKind = iota
	LaneServer
	LaneNetwork
)

// SpanKind says what a span on a lane is.
type SpanKind int

// Span kinds, drawn in this order (later ones on top).
const (
	// SpanGroup is a process's side of a partition (Group tells which side),
	// drawn as a thin strip under its lane.
	SpanGroup SpanKind = iota
	// SpanAttempt is a client trying to acquire.
	SpanAttempt
	// SpanBelief is a client believing it holds a lock.
	SpanBelief
	// SpanSection is a critical section, from the read to the write.
	SpanSection
	// SpanHeld is a server holding a lock key for Owner.
	SpanHeld
	// SpanTombstone is a ZooKeeper lock-delay tombstone of Owner's znode.
	SpanTombstone
	// SpanDown is a crashed process, until its restart.
	SpanDown
	// SpanPause is a paused process.
	SpanPause
	// SpanDelay is extra latency on the links from this process.
	SpanDelay
	// SpanPartition is a partition, on the network lane.
	SpanPartition
)

// Span is a period on a lane.
type Span struct {
	Kind       SpanKind
	Start, End sim.Time
	// Owner is the client whose colour the span takes (beliefs, sections,
	// held keys).
	Owner string
	Label string
	// Group is the partition side of a SpanGroup (0, 1, ...).
	Group int
	// Row stacks partitions that act at the same time: a SpanPartition and
	// its SpanGroups share a row (0, 1, ...).
	Row int
	// Open is true when the span was still going when the run ended.
	Open bool
}

// MarkKind says what a point event on a lane is.
type MarkKind int

// Mark kinds.
const (
	MarkWriteOK MarkKind = iota
	MarkWriteRejected
	MarkWriteLost
	MarkReadRejected
	MarkLockLost
	MarkCrash
	MarkRestart
	MarkJump
	MarkDrift
	MarkDrop
	MarkPromoted
	MarkSwitch
	MarkSessionExpired
	// MarkRead is a resource read that the resource answered: Label gives
	// the value read and the fencing token sent ("r=0 t=33").
	MarkRead
	// MarkSale is a counter purchase the client counts as a sale, MarkNoSale
	// one that sold nothing (sold out, refused, gave up), MarkSaleUnknown
	// one whose write had no reply; Label gives the value the client saw
	// (issue 13's stock counters, sim.CounterOp).
	MarkSale
	MarkNoSale
	MarkSaleUnknown
	// MarkOrder is a same-instant order fault that acted (faults' kind
	// order, issue 27), on the lane of the process whose event it moved
	// ahead of the others due at that instant; Label says which event
	// ("first: from c2", "first: timer").
	MarkOrder
)

// Mark is a point event on a lane.
type Mark struct {
	Kind  MarkKind
	At    sim.Time
	Label string
	Owner string
	// To is the lane a drop goes to.
	To string
}

// Lane is one row of the timeline.
type Lane struct {
	Name  string
	Note  string
	Kind  LaneKind
	Spans []Span
	Marks []Mark
}

// Shade is a violation window, shaded on the lanes it involves (and in a
// band along the time axis, so that its extent reads against the ticks).
type Shade struct {
	Kind       string // checker.KindLockSafety, ...
	Start, End sim.Time
	// Lanes are the lanes involved: the violation's clients, and the
	// protected resource for a resource-safety violation.
	Lanes []string
}

// MaxShadedWindows bounds the violation windows a timeline shades: a
// result locksim writes lists at most checker.MaxViolations violations, but
// an edited one may list hundreds of thousands, and each shade is drawn in
// three figures and the page, about 20 KB of SVG each (issue 33 item 11).
const MaxShadedWindows = 200

// Timeline is what a run's timeline shows, reconstructed from the trace.
type Timeline struct {
	Title string
	End   sim.Time
	Lanes []*Lane
	// Clients are the client names in lane order (their colours).
	Clients []string
	Shades  []Shade
	// ShadesLeft counts the violation windows beyond MaxShadedWindows,
	// not drawn.
	ShadesLeft int
	// Keys are the lock keys drawn (a held span's label names the key when
	// there are several).
	Keys []string
	// View is the end of the drawn time axis: the run's end, or shortly
	// after the last drawn change when the run idles for most of its end.
	View sim.Time
	// PartRows is how many partitions acted at once at most.
	PartRows int
	// Avail is the run's availability strip (checker.Availability, from
	// the run's numbers): drawn as one row per lock under the lanes, the
	// time the lock stood free while a client waited. Nil: no row.
	Avail *checker.Availability
}

// MaxAvailRows bounds the availability rows a timeline draws (one per
// lock; a world with more locks shows the first ones by name).
const MaxAvailRows = 4

// availRows are the availability rows drawn under the lanes.
func (t *Timeline) availRows() []checker.LockAvailability {
	if t.Avail == nil {
		return nil
	}
	return t.Avail.Locks[:min(len(t.Avail.Locks), MaxAvailRows)]
}

// Lane returns the lane of a process, or nil.
func (t *Timeline) Lane(name string) *Lane {
	for _, l := range t.Lanes {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// networkLane is the name of the lane that shows partitions.
const networkLane = "network"

// keyRec is a lock key stored on a Redis node.
type keyRec struct {
	holder   string
	deadline int64 // ms since the Unix epoch; 0 when none
	start    sim.Time
	trx      int64 // the MySQL transaction that holds a row lock
	row      bool  // a committed MySQL lock row, not a row lock
}

// redisState is what the report tracks of one Redis node.
type redisState struct {
	db map[string]*keyRec
	// What its files hold of each lock key (nil: absent).
	aofWritten, aofSynced, rdb map[string]*keyRec
	// restore is what a restart will load, fixed at the crash.
	restore map[string]*keyRec
	aof     bool
}

type znode struct {
	path  string
	seq   int64
	owner string
	tomb  bool
}

type section struct {
	client, lock string
	start, end   sim.Time
	written      bool
	value        string
	closed       bool
	outcome      MarkKind
	decided      bool
}

// builder reconstructs a timeline from a trace.
type builder struct {
	run      *Run
	tl       *Timeline
	lanes    map[string]*Lane
	isClient map[string]bool
	keys     map[string]bool
	clocks   map[string]*ClockHistory

	cause     map[string]string // the peer whose message a process is handling
	attempts  map[string][]sim.Time
	beliefs   map[string]int // client+"\x00"+lock -> index in its lane's spans
	sections  map[int]*section
	secOrder  []int
	pauses    map[string]int
	downs     map[string]int
	redis     map[string]*redisState
	held      map[string]int // server+"\x00"+key -> index of the open held span
	znodes    map[string]map[string]*znode
	zkHolder  map[string]string // zk+"\x00"+key -> path of the drawn holder
	sessions  map[string]string // zk+"\x00"+session -> client
	parts     map[string][]partRef
	partOrder []string
	partRow   map[string]int
	delays    map[string]int
	// laneKeys is the held-key drawing of each server lane whose role has
	// one (timeline_kinds.go).
	laneKeys map[string]laneKeys
	// dropped are spans to leave out of the timeline, by lane: a MySQL
	// row lock released at the instant of its grant (finish drops them).
	dropped map[string][]int
}

type partRef struct {
	lane string
	idx  int
}

// BuildTimeline reconstructs the timeline of a run from its trace, its
// setup and its verdicts. It fails only on a malformed clock event.
func BuildTimeline(run *Run) (*Timeline, error) {
	clocks, err := Clocks(run.Setup, run.Trace)
	if err != nil {
		return nil, err
	}
	b := &builder{
		run:      run,
		tl:       &Timeline{Title: run.Setup.Name, End: run.end(), Keys: run.Setup.LockKeys, Clients: run.Setup.Clients},
		lanes:    map[string]*Lane{},
		isClient: map[string]bool{},
		keys:     map[string]bool{},
		clocks:   map[string]*ClockHistory{},
		cause:    map[string]string{},
		attempts: map[string][]sim.Time{},
		beliefs:  map[string]int{},
		sections: map[int]*section{},
		pauses:   map[string]int{},
		downs:    map[string]int{},
		redis:    map[string]*redisState{},
		held:     map[string]int{},
		znodes:   map[string]map[string]*znode{},
		zkHolder: map[string]string{},
		sessions: map[string]string{},
		parts:    map[string][]partRef{},
		partRow:  map[string]int{},
		delays:   map[string]int{},
		laneKeys: map[string]laneKeys{},
	}
	for _, c := range clocks {
		b.clocks[c.Proc] = c
	}
	for _, k := range run.Setup.LockKeys {
		b.keys[k] = true
	}
	for _, c := range run.Setup.Clients {
		b.addLane(c, clockNote(run.Setup, c, ""), LaneClient)
		b.isClient[c] = true
	}
	for _, s := range run.Setup.Servers {
		b.addLane(s.Name, clockNote(run.Setup, s.Name, s.Note), LaneServer)
		if lk, ok := laneKeysOf[s.Lane]; ok {
			lk.init(b, s)
			b.laneKeys[s.Name] = lk
		}
	}
	b.addLane(networkLane, "partitions", LaneNetwork)
	for _, e := range run.Trace {
		b.event(e)
	}
	b.finish()
	return b.tl, nil
}

// clockNote adds a process's initial clock to its lane's note.
func clockNote(setup Setup, proc, note string) string {
	for _, c := range setup.Clocks {
		if c.Proc != proc {
			continue
		}
		var parts []string
		if c.Offset != 0 {
			off := c.Offset.String()
			if c.Offset > 0 {
				off = "+" + off
			}
			parts = append(parts, "clock "+off)
		}
		if c.DriftPPB != 0 {
			parts = append(parts, "drift "+driftText(c.DriftPPB))
		}
		if len(parts) > 0 {
			if note != "" {
				note += ", "
			}
			note += strings.Join(parts, ", ")
		}
	}
	return note
}

func (b *builder) addLane(name, note string, kind LaneKind) {
	l := &Lane{Name: name, Note: note, Kind: kind}
	b.lanes[name] = l
	b.tl.Lanes = append(b.tl.Lanes, l)
}

func (b *builder) open(lane string, s Span) int {
	l := b.lanes[lane]
	s.End = -1
	l.Spans = append(l.Spans, s)
	return len(l.Spans) - 1
}

func (b *builder) close(lane string, idx int, t sim.Time) {
	if s := &b.lanes[lane].Spans[idx]; s.End < 0 {
		s.End = t
	}
}

func (b *builder) mark(lane string, m Mark) {
	if l := b.lanes[lane]; l != nil {
		l.Marks = append(l.Marks, m)
	}
}

// ignored reports a pause, crash or restart the kernel ignored.
func ignored(e sim.Event) bool { return e.Fields.Has("ignored") }

// signedDur renders a clock step with its sign (+30s, -5s).
func signedDur(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

func (b *builder) event(e sim.Event) {
	switch e.Kind {
	case sim.KindDeliver:
		b.cause[e.Proc] = e.Peer
		return
	case sim.KindTimer, sim.KindStart:
		b.cause[e.Proc] = ""
		return
	case sim.KindSend, sim.KindDrop:
		return
	}
	if b.lanes[e.Proc] == nil && e.Proc != "" {
		return // the fault operator and other hidden processes
	}
	switch e.Kind {
	case sim.KindAcquireStart:
		b.attempts[e.Proc] = append(b.attempts[e.Proc], e.At)
	case sim.KindAcquireFailed:
		b.endAttempt(e.Proc, e.At)
	case sim.KindAcquired:
		b.endAttempt(e.Proc, e.At)
		lock, _ := e.Fields.String("lock")
		tok := ""
		if t, ok := e.Fields.Int("token"); ok {
			tok = "tok " + strconv.FormatInt(t, 10)
		}
		b.beliefs[e.Proc+"\x00"+lock] = b.open(e.Proc, Span{Kind: SpanBelief, Start: e.At, Owner: e.Proc, Label: tok})
	case sim.KindReleased, sim.KindLockLost:
		lock, _ := e.Fields.String("lock")
		if i, ok := b.beliefs[e.Proc+"\x00"+lock]; ok {
			b.close(e.Proc, i, e.At)
			delete(b.beliefs, e.Proc+"\x00"+lock)
		}
		if e.Kind == sim.KindLockLost {
			why := "lost"
			if r, _ := e.Fields.String("reason"); r == string(sim.EndExpired) {
				why = "expired"
			}
			b.mark(e.Proc, Mark{Kind: MarkLockLost, At: e.At, Label: why, Owner: e.Proc})
		}
	case sim.KindResourceRead:
		if id, ok := e.Fields.Int("section"); ok {
			lock, _ := e.Fields.String("lock")
			b.closeSections(e.Proc, e.At)
			b.sections[int(id)] = &section{client: e.Proc, lock: lock, start: e.At, end: -1}
			b.secOrder = append(b.secOrder, int(id))
		}
	case sim.KindResourceWrite:
		if id, ok := e.Fields.Int("section"); ok {
			if s := b.sections[int(id)]; s != nil && !s.closed {
				s.end, s.written, s.closed = e.At, true, true
				if v, ok := e.Fields.Int("value"); ok {
					s.value = strconv.FormatInt(v, 10)
				}
			}
		}
	case "client":
		if e.Fields.Has("abandoned") {
			b.closeSections(e.Proc, e.At)
		}
	case "resource-applied", "resource-rejected":
		b.storage(e)
	case sim.KindCounter:
		b.counterOp(e)
	case sim.KindPause:
		d, ok := e.Fields.Duration("for")
		if ignored(e) || !ok {
			return
		}
		if _, on := b.pauses[e.Proc]; !on {
			b.pauses[e.Proc] = b.open(e.Proc, Span{Kind: SpanPause, Start: e.At, Label: "pause " + d.String()})
		}
	case sim.KindResume:
		if i, on := b.pauses[e.Proc]; on {
			b.close(e.Proc, i, e.At)
			delete(b.pauses, e.Proc)
		}
	case sim.KindCrash:
		if ignored(e) {
			return
		}
		b.crash(e)
	case sim.KindRestart:
		if ignored(e) {
			return
		}
		if i, on := b.downs[e.Proc]; on {
			b.close(e.Proc, i, e.At)
			delete(b.downs, e.Proc)
		}
		b.mark(e.Proc, Mark{Kind: MarkRestart, At: e.At, Label: "restart"})
	case sim.KindClockJump:
		if d, ok := e.Fields.Duration("step"); ok {
			b.mark(e.Proc, Mark{Kind: MarkJump, At: e.At, Label: "clock " + signedDur(d)})
		}
	case sim.KindClockDrift:
		if ppb, ok := e.Fields.Int("ppb"); ok {
			b.mark(e.Proc, Mark{Kind: MarkDrift, At: e.At, Label: "drift " + driftText(ppb)})
		}
	case sim.KindPartition:
		b.partition(e)
	case sim.KindHeal:
		b.heal(e)
	case sim.KindLinkFault:
		b.linkFault(e)
	case sim.KindFault:
		// Only an order fault that acted carries "first" (an ignored one
		// moved nothing and gets no mark).
		if node, ok := e.Fields.String("first"); ok {
			b.mark(node, Mark{Kind: MarkOrder, At: e.At, Label: orderLabel(e.Fields)})
		}
	case "switch-master":
		if to, ok := e.Fields.String("to"); ok {
			b.mark(e.Proc, Mark{Kind: MarkSwitch, At: e.At, Label: "master → " + to})
		}
	default:
		// A server's own events: its kind's held-key drawing
		// (timeline_kinds.go).
		if lk, ok := b.laneKeys[e.Proc]; ok {
			lk.event(b, e)
		}
	}
}

// driftText renders a rate error in parts per billion as a percentage.
func driftText(ppb int64) string {
	pct := float64(ppb) / 1e7
	s := strconv.FormatFloat(pct, 'g', 4, 64) + "%"
	if ppb >= 0 {
		s = "+" + s
	}
	return s
}

func (b *builder) endAttempt(client string, t sim.Time) {
	for _, start := range b.attempts[client] {
		b.lanes[client].Spans = append(b.lanes[client].Spans, Span{Kind: SpanAttempt, Start: start, End: t, Owner: client})
	}
	b.attempts[client] = b.attempts[client][:0]
}

// closeSections ends the client's sections that were neither written nor
// closed (abandoned, or the client crashed).
func (b *builder) closeSections(client string, t sim.Time) {
	for _, id := range b.secOrder {
		if s := b.sections[id]; s.client == client && !s.closed {
			s.end, s.closed = t, true
		}
	}
}

// storage handles the storage node's decisions: "read s0 value 0 tok 3",
// "write s1 value 1 no-token", "write s0 value 1 tok 3: token 3 < mark 4".
func (b *builder) storage(e sim.Event) {
	id, ok := e.Fields.Int("section")
	if !ok {
		return
	}
	s := b.sections[int(id)]
	if s == nil {
		return
	}
	rejected := e.Kind == "resource-rejected"
	op, _ := e.Fields.String("op")
	switch op {
	case "read":
		if rejected {
			b.mark(s.client, Mark{Kind: MarkReadRejected, At: e.At, Label: "read rejected", Owner: s.client})
			b.mark(e.Proc, Mark{Kind: MarkReadRejected, At: e.At, Label: s.client + " read rejected", Owner: s.client})
			return
		}
		// The value read is half of a lost update's story ("both read 0").
		label := readLabel(e.Fields)
		b.mark(s.client, Mark{Kind: MarkRead, At: e.At, Label: label, Owner: s.client})
		b.mark(e.Proc, Mark{Kind: MarkRead, At: e.At, Label: s.client + " " + label, Owner: s.client})
	case "write":
		s.decided = true
		s.outcome = MarkWriteOK
		label := s.client + " w=" + s.value
		if rejected {
			s.outcome = MarkWriteRejected
			label = s.client + " rejected"
		}
		b.mark(e.Proc, Mark{Kind: s.outcome, At: e.At, Label: label, Owner: s.client})
	}
}

// readLabel renders a storage read's fields as "r=VALUE" and, when the
// read carried a fencing token, " t=TOKEN".
func readLabel(f sim.Attrs) string {
	label := "r=?"
	if v, ok := f.Int("value"); ok {
		label = "r=" + strconv.FormatInt(v, 10)
	}
	if t, ok := f.Int("token"); ok {
		label += " t=" + strconv.FormatInt(t, 10)
	}
	return label
}

func (b *builder) crash(e sim.Event) {
	p := e.Proc
	label := "crash"
	mode, _ := e.Fields.String("mode")
	if mode != "" && mode != "process" {
		label += " (" + mode + ")"
	}
	b.mark(p, Mark{Kind: MarkCrash, At: e.At, Label: label})
	if i, on := b.pauses[p]; on {
		b.close(p, i, e.At)
		delete(b.pauses, p)
	}
	if b.isClient[p] {
		b.endAttempt(p, e.At)
		for _, k := range sortedKeys(b.beliefs) {
			if strings.HasPrefix(k, p+"\x00") {
				b.close(p, b.beliefs[k], e.At)
				delete(b.beliefs, k)
			}
		}
		b.closeSections(p, e.At)
	}
	if lk, ok := b.laneKeys[p]; ok {
		lk.crash(b, e, mode)
	}
	if _, on := b.downs[p]; !on {
		b.downs[p] = b.open(p, Span{Kind: SpanDown, Start: e.At, Label: "down"})
	}
}

// redisCrash: the keys a Redis server restores come from its RDB or,
// with AOF, from what reached the file (process crash) or the disk (power
// loss); its held keys end.
func (b *builder) redisCrash(e sim.Event, mode string) {
	p := e.Proc
	if r := b.redis[p]; r != nil {
		r.restore = map[string]*keyRec{}
		src := r.rdb
		if r.aof {
			src = r.aofSynced
			if mode == "process" || mode == "clean" {
				src = r.aofWritten
			}
		}
		for k, v := range src {
			if v != nil {
				c := *v
				r.restore[k] = &c
			}
		}
		for _, k := range sortedKeys(r.db) {
			b.endHeld(p, k, e.At)
		}
		r.db = map[string]*keyRec{}
	}
}

// zkCrash: the service's znodes end.
func (b *builder) zkCrash(e sim.Event) {
	p := e.Proc
	if zs := b.znodes[p]; zs != nil {
		// Simplification (as the model): a crash loses every znode.
		for _, key := range b.run.Setup.LockKeys {
			b.zkHold(p, key, e.At, true)
		}
		b.znodes[p] = map[string]*znode{}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- Redis ----

// holderOf decides who holds a key a server just stored (see the package
// doc's first simplification).
func (b *builder) holderOf(server, key, value string) string {
	if c := b.cause[server]; b.isClient[c] {
		return c
	}
	if name, _, ok := strings.Cut(value, ":"); ok && b.isClient[name] {
		return name
	}
	if c := b.cause[server]; c != "" {
		if r := b.redis[c]; r != nil && r.db[key] != nil {
			return r.db[key].holder
		}
	}
	return "?"
}

func (b *builder) startHeld(server, key string, rec *keyRec, label string) {
	r := b.redis[server]
	r.db[key] = rec
	if label == "" {
		label = rec.holder
		if len(b.run.Setup.LockKeys) > 1 {
			label = key + ": " + rec.holder
		}
	}
	b.held[server+"\x00"+key] = b.open(server, Span{Kind: SpanHeld, Start: rec.start, Owner: rec.holder, Label: label})
}

func (b *builder) endHeld(server, key string, t sim.Time) {
	if i, ok := b.held[server+"\x00"+key]; ok {
		b.close(server, i, t)
		delete(b.held, server+"\x00"+key)
	}
	if r := b.redis[server]; r != nil {
		delete(r.db, key)
	}
}

func (b *builder) redisEvent(e sim.Event) {
	r := b.redis[e.Proc]
	if r == nil {
		return
	}
	switch e.Kind {
	case "key-set":
		key, ok := e.Fields.String("key")
		if !ok || !b.keys[key] {
			return
		}
		value, _ := e.Fields.String("value") // "" for a hash
		deadline, _ := e.Fields.Int("deadline")
		if r.db[key] != nil {
			b.endHeld(e.Proc, key, e.At)
		}
		b.startHeld(e.Proc, key, &keyRec{holder: b.holderOf(e.Proc, key, value), deadline: deadline, start: e.At}, "")
	case "key-del", "key-evicted":
		key, ok := e.Fields.String("key")
		if ok && r.db[key] != nil {
			b.endHeld(e.Proc, key, e.At)
		}
	case "key-expired":
		// The key was logically gone once the node's wall clock passed
		// its deadline (keyIsExpired: now > deadline, in ms).
		key, ok := e.Fields.String("key")
		rec := r.db[key]
		if !ok || rec == nil {
			return
		}
		end := e.At
		if d, _ := e.Fields.Int("deadline"); d > 0 {
			if c := b.clocks[e.Proc]; c != nil {
				if t, ok := c.WallReaches((d+1)*int64(time.Millisecond), rec.start, e.At); ok {
					end = t
				}
			}
		}
		b.endHeld(e.Proc, key, end)
	case "aof-write":
		cmds, _ := e.Fields.GroupsOf("cmds")
		for _, k := range sortedKeys(b.keys) {
			if mentions(cmds, k) {
				r.aofWritten[k] = copyRec(r.db[k])
			}
		}
	case "aof-fsync":
		if e.Fields.Has("rewritten") {
			for _, k := range sortedKeys(b.keys) {
				r.aofWritten[k] = copyRec(r.db[k])
			}
		}
		for k, v := range r.aofWritten {
			r.aofSynced[k] = v
		}
	case "rdb-save":
		for _, k := range sortedKeys(b.keys) {
			r.rdb[k] = copyRec(r.db[k])
		}
	case "loaded":
		src, _ := e.Fields.String("source")
		if n, _ := e.Fields.Int("keys"); src == "none" || n == 0 {
			r.restore = nil
			return
		}
		for _, k := range sortedKeys(r.restore) {
			rec := r.restore[k]
			if rec.deadline > 0 {
				if c := b.clocks[e.Proc]; c != nil && c.Wall(e.At) >= (rec.deadline+1)*int64(time.Millisecond) {
					continue // expired while it was down: not loaded, or expired at once
				}
			}
			rec.start = e.At
			b.startHeld(e.Proc, k, rec, rec.holder+" (from disk)")
		}
		r.restore = nil
	case "replica-sync":
		if e.Fields.Has("partial") {
			return // a partial resync keeps the replica's data
		}
		// A full sync: the data is replaced by the master's.
		for _, k := range sortedKeys(r.db) {
			b.endHeld(e.Proc, k, e.At)
		}
		if master, ok := e.Fields.String("master"); ok {
			if mr := b.redis[master]; mr != nil {
				for _, k := range sortedKeys(mr.db) {
					rec := *mr.db[k]
					rec.start = e.At
					b.startHeld(e.Proc, k, &rec, "")
				}
			}
		}
	case "promoted":
		b.mark(e.Proc, Mark{Kind: MarkPromoted, At: e.At, Label: "promoted"})
	}
}

// mentions reports whether an AOF record's commands name the key as an
// argument.
func mentions(cmds [][]string, key string) bool {
	for _, c := range cmds {
		for _, w := range c {
			if w == key {
				return true
			}
		}
	}
	return false
}

func copyRec(r *keyRec) *keyRec {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// ---- ZooKeeper ----

func (b *builder) zkEvent(e sim.Event) {
	zs := b.znodes[e.Proc]
	if zs == nil {
		return
	}
	sess := ""
	if id, ok := e.Fields.Int("session"); ok {
		sess = "s" + strconv.FormatInt(id, 10)
	}
	switch e.Kind {
	case "session-open":
		// While handling the client's connect.
		if c := b.cause[e.Proc]; b.isClient[c] && sess != "" {
			b.sessions[e.Proc+"\x00"+sess] = c
		}
		return
	case "session-expired":
		who := b.sessions[e.Proc+"\x00"+sess]
		if who == "" {
			who = sess
		}
		b.mark(e.Proc, Mark{Kind: MarkSessionExpired, At: e.At, Label: who + "'s session expired", Owner: who})
		return
	}
	path, _ := e.Fields.String("path")
	key, ok := b.zkKey(path)
	if !ok {
		return
	}
	switch e.Kind {
	case "znode-created":
		if e.Fields.Has("parent") {
			return
		}
		owner := "?"
		if c := b.cause[e.Proc]; b.isClient[c] {
			owner = c
		} else if sess != "" {
			if c := b.sessions[e.Proc+"\x00"+sess]; c != "" {
				owner = c
			}
		}
		zs[path] = &znode{path: path, seq: seqOf(path), owner: owner}
	case "znode-deleted":
		delete(zs, path)
	case "lock-delay":
		// A tombstone until it is deleted.
		if z := zs[path]; z != nil {
			z.tomb = true
		}
	}
	b.zkHold(e.Proc, key, e.At, false)
}

// zkKey returns the lock key of a znode path "/<key>/<child>".
func (b *builder) zkKey(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/")
	if !ok {
		return "", false
	}
	key, _, ok := strings.Cut(rest, "/")
	if !ok || !b.keys[key] {
		return "", false
	}
	return key, true
}

func seqOf(path string) int64 {
	i := strings.LastIndex(path, "-")
	n, err := strconv.ParseInt(path[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// zkHold redraws the holder of a lock after a change: the owner of the
// lowest sequence number under /<key> (a tombstone, held by nobody, shows
// as such).
func (b *builder) zkHold(zk, key string, t sim.Time, gone bool) {
	var low *znode
	if !gone {
		for _, p := range sortedKeys(b.znodes[zk]) {
			z := b.znodes[zk][p]
			if k, _ := b.zkKey(p); k != key {
				continue
			}
			if low == nil || z.seq < low.seq {
				low = z
			}
		}
	}
	hk := zk + "\x00" + key
	cur := b.zkHolder[hk]
	state := func(z *znode) string {
		if z == nil {
			return ""
		}
		if z.tomb {
			return z.path + "\x00tomb"
		}
		return z.path
	}
	if state(low) == cur {
		return
	}
	if i, ok := b.held[hk]; ok {
		b.close(zk, i, t)
		delete(b.held, hk)
	}
	b.zkHolder[hk] = state(low)
	if low == nil {
		return
	}
	label := low.owner
	if len(b.run.Setup.LockKeys) > 1 {
		label = key + ": " + low.owner
	}
	kind := SpanHeld
	if low.tomb {
		kind, label = SpanTombstone, "lock-delay"
	}
	b.held[hk] = b.open(zk, Span{Kind: kind, Start: t, Owner: low.owner, Label: label})
}

// ---- network ----

// partition handles a partition (groups) or a one-way cut (from, to).
func (b *builder) partition(e sim.Event) {
	n, ok := e.Fields.Int("partition")
	groups, gok := e.Fields.GroupsOf("groups")
	if !ok || !gok {
		return
	}
	id := strconv.FormatInt(n, 10)
	oneWay := e.Fields.Has("one_way")
	var words []string
	for _, g := range groups {
		words = append(words, "["+strings.Join(g, " ")+"]")
	}
	label := strings.Join(words, " | ")
	if oneWay {
		label = strings.Join(words, " → ") + " cut"
	}
	row := 0
	for used := true; used; {
		used = false
		for _, r := range b.partRow {
			if r == row {
				used, row = true, row+1
				break
			}
		}
	}
	b.partRow[id] = row
	if row+1 > b.tl.PartRows {
		b.tl.PartRows = row + 1
	}
	var refs []partRef
	refs = append(refs, partRef{networkLane, b.open(networkLane, Span{Kind: SpanPartition, Start: e.At, Label: label, Row: row})})
	for gi, g := range groups {
		for _, p := range g {
			if b.lanes[p] != nil {
				refs = append(refs, partRef{p, b.open(p, Span{Kind: SpanGroup, Start: e.At, Group: gi, Row: row})})
			}
		}
	}
	b.parts[id] = refs
	b.partOrder = append(b.partOrder, id)
}

func (b *builder) heal(e sim.Event) {
	all := e.Fields.Has("all")
	n, _ := e.Fields.Int("partition")
	ids := []string{strconv.FormatInt(n, 10)}
	if all {
		ids = b.partOrder
		for _, p := range sortedKeys(b.delays) {
			b.close(p, b.delays[p], e.At)
		}
		b.delays = map[string]int{}
	}
	for _, id := range ids {
		for _, r := range b.parts[id] {
			b.close(r.lane, r.idx, e.At)
		}
		delete(b.parts, id)
		delete(b.partRow, id)
	}
	if all {
		b.partOrder = nil
	}
}

// linkFault handles a drop of the next messages and an extra delay.
func (b *builder) linkFault(e sim.Event) {
	op, _ := e.Fields.String("op")
	to, _ := e.Fields.String("to")
	switch op {
	case "drop":
		n, _ := e.Fields.Int("count")
		b.mark(e.Proc, Mark{Kind: MarkDrop, At: e.At, Label: "drop " + strconv.FormatInt(n, 10) + " → " + to, To: to})
	case "delay":
		d, _ := e.Fields.Duration("for")
		by, _ := e.Fields.Duration("by")
		key := e.Proc + "\x00" + to
		if i, on := b.delays[key]; on {
			b.close(e.Proc, i, e.At)
		}
		end := e.At.Add(d)
		i := b.open(e.Proc, Span{Kind: SpanDelay, Start: e.At, Label: "+" + by.String() + " → " + to})
		b.lanes[e.Proc].Spans[i].End = end
		b.delays[key] = i
	}
}

// finish closes what was open at the end of the run and adds the
// violation windows and the write marks.
func (b *builder) finish() {
	end := b.tl.End
	lanes := make([]string, 0, len(b.dropped))
	for lane := range b.dropped {
		lanes = append(lanes, lane)
	}
	sort.Strings(lanes)
	for _, lane := range lanes {
		l, idx := b.lanes[lane], b.dropped[lane]
		sort.Sort(sort.Reverse(sort.IntSlice(idx)))
		for _, i := range idx {
			l.Spans = append(l.Spans[:i], l.Spans[i+1:]...)
		}
	}
	for _, l := range b.tl.Lanes {
		for i := range l.Spans {
			s := &l.Spans[i]
			if s.End < 0 || s.End > end {
				s.End, s.Open = end, true
			}
		}
	}
	for _, c := range b.run.Setup.Clients {
		b.endAttempt(c, end)
		if n := len(b.lanes[c].Spans); n > 0 && b.lanes[c].Spans[n-1].Kind == SpanAttempt {
			b.lanes[c].Spans[n-1].Open = true
		}
	}
	for _, id := range b.secOrder {
		s := b.sections[id]
		if !s.closed {
			s.end = end
		}
		b.lanes[s.client].Spans = append(b.lanes[s.client].Spans, Span{Kind: SpanSection, Start: s.start, End: s.end, Owner: s.client, Open: !s.closed})
		if !s.written {
			continue
		}
		m := Mark{Kind: MarkWriteLost, At: s.end, Label: "w=" + s.value + " lost", Owner: s.client}
		if s.decided {
			m.Kind = s.outcome
			m.Label = "w=" + s.value
			if s.outcome == MarkWriteRejected {
				m.Label = "w=" + s.value + " rejected"
			}
		}
		b.mark(s.client, m)
	}
	for _, v := range b.run.Result.Violations {
		lanes := append([]string(nil), v.Clients...)
		if v.Kind == checker.KindResourceSafety {
			for _, sv := range b.run.Setup.Servers {
				if sv.Lane == record.LaneResource {
					lanes = append(lanes, sv.Name)
				}
			}
		}
		for _, w := range v.Windows {
			if len(b.tl.Shades) == MaxShadedWindows {
				b.tl.ShadesLeft++
				continue
			}
			b.tl.Shades = append(b.tl.Shades, Shade{Kind: v.Kind, Start: w.Start, End: w.End, Lanes: lanes})
		}
	}
	if l := b.lanes[networkLane]; len(l.Spans) == 0 && len(l.Marks) == 0 {
		b.tl.Lanes = b.tl.Lanes[:len(b.tl.Lanes)-1] // no partition: no network lane
	}
	b.tl.View = viewEnd(b.tl)
	if st := b.run.Result.Stats; st != nil {
		b.tl.Avail = st.Availability
	}
	for _, l := range b.tl.Lanes {
		sort.SliceStable(l.Spans, func(i, j int) bool {
			if l.Spans[i].Kind != l.Spans[j].Kind {
				return l.Spans[i].Kind < l.Spans[j].Kind
			}
			return l.Spans[i].Start < l.Spans[j].Start
		})
		sort.SliceStable(l.Marks, func(i, j int) bool { return l.Marks[i].At < l.Marks[j].At })
	}
}

// viewEnd crops the time axis when everything drawn happens in the first
// part of the run (a 30 s run whose story ends at 6 s): to a round time
// about 10% after the last drawn change.
func viewEnd(t *Timeline) sim.Time {
	var last sim.Time
	see := func(at sim.Time) {
		if at > last {
			last = at
		}
	}
	for _, l := range t.Lanes {
		for _, s := range l.Spans {
			see(s.Start)
			if !s.Open {
				see(s.End)
			}
		}
		for _, m := range l.Marks {
			see(m.At)
		}
	}
	for _, s := range t.Shades {
		see(s.End)
	}
	if last >= t.End*6/10 {
		return t.End
	}
	step := sim.Time(time.Second)
	switch {
	case last > 20*step:
		step *= 5
	case last > 8*step:
		step *= 2
	case last < 2*step:
		step /= 4
	}
	v := (last + last/10 + step) / step * step
	if v > t.End {
		return t.End
	}
	return v
}

// shadeName names a violation kind in the legend, from the property
// registry (its title), so that every registered property has a name.
func shadeName(kind string) string {
	for _, p := range checker.Properties() {
		if a := p.About(); a.Kind == kind {
			if kind == checker.KindLiveness {
				return a.Title + " violated (wait)"
			}
			return a.Title + " violated"
		}
	}
	return kind + " violated"
}

// String summarises the timeline in text, lane by lane (for tests and
// debugging).
func (t *Timeline) String() string {
	var b strings.Builder
	for _, l := range t.Lanes {
		fmt.Fprintf(&b, "%s:", l.Name)
		for _, s := range l.Spans {
			fmt.Fprintf(&b, " %s[%s..%s]", spanKindName(s.Kind), s.Start, s.End)
			if s.Label != "" {
				fmt.Fprintf(&b, "%q", s.Label)
			}
		}
		for _, m := range l.Marks {
			fmt.Fprintf(&b, " @%s%q", m.At, m.Label)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func spanKindName(k SpanKind) string {
	return [...]string{"group", "attempt", "belief", "section", "held", "tombstone", "down", "pause", "delay", "partition"}[k]
}

// counterOp marks a stock counter operation on its client's lane: a sale,
// a purchase that sold nothing, one whose outcome the client never learned,
// or a read ("=7": the value the client saw).
func (b *builder) counterOp(e sim.Event) {
	outcome, _ := e.Fields.String("outcome")
	v, _ := e.Fields.Int("observed")
	label := "=" + strconv.FormatInt(v, 10)
	switch outcome {
	case "sold":
		b.mark(e.Proc, Mark{Kind: MarkSale, At: e.At, Label: label, Owner: e.Proc})
	case "not-sold":
		b.mark(e.Proc, Mark{Kind: MarkNoSale, At: e.At, Label: label, Owner: e.Proc})
	case "unknown":
		b.mark(e.Proc, Mark{Kind: MarkSaleUnknown, At: e.At, Label: "?", Owner: e.Proc})
	case "read", "loaded":
		b.mark(e.Proc, Mark{Kind: MarkRead, At: e.At, Label: "r" + label, Owner: e.Proc})
	}
}

// orderLabel says which event an order fault moved first, from its fault
// event's fields: "first: from c2", "first: timer", or "first: next event"
// (the process's first event due at that instant, whatever it was).
func orderLabel(f sim.Attrs) string {
	if from, ok := f.String("from"); ok {
		return "first: from " + from
	}
	if ev, ok := f.String("event"); ok {
		return "first: " + ev
	}
	return "first: next event"
}
