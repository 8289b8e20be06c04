package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
	"github.com/locksim/locksim/sim"
)

// step is one request of a scripted client. sec names a critical section of
// the test (mapped to a history section on first use); tok < 0 means "no
// token".
type step struct {
	kind  string // read, write, setlock
	sec   int
	tok   int64
	value int64  // write
	lock  string // write, setlock
}

func read(sec int, tok int64) step { return step{kind: "read", sec: sec, tok: tok} }
func write(sec int, tok, value int64) step {
	return step{kind: "write", sec: sec, tok: tok, value: value}
}
func casWrite(sec int, lock string, value int64) step {
	return step{kind: "write", sec: sec, tok: -1, value: value, lock: lock}
}
func setLock(sec int, lock string) step { return step{kind: "setlock", sec: sec, tok: -1, lock: lock} }

// script is a client process that sends its steps 10 ms apart and logs the
// replies ("read 1", "read rejected STALETOKEN", "write ok", ...).
type script struct {
	steps    []step
	server   sim.ProcID
	sections map[int]int
	log      *[]string
	sent     []sentReq // requests without a reply, in sending order
	pooled   bool      // send reads and writes pooled (pool.go)
}

type sentReq struct {
	id  uint64
	msg sim.Message
}

// ConnEnded sends again the requests the ended connection lost, on a new
// connection (as a client that reconnects and retries).
func (c *script) ConnEnded(env *sim.Env, peer sim.ProcID, why sim.ConnEnd) {
	for _, r := range c.sent {
		env.Send(c.server, r.msg)
	}
}

func (c *script) answered(id uint64) {
	for i, r := range c.sent {
		if r.id == id {
			c.sent = append(c.sent[:i], c.sent[i+1:]...)
			return
		}
	}
}

type stepTag int

func (c *script) Init(env *sim.Env) {
	c.server, _ = env.Lookup("S")
	c.sections = map[int]int{}
	for i := range c.steps {
		env.After(sim.Mono, time.Duration(i+1)*10*time.Millisecond, stepTag(i))
	}
}

func (c *script) Fire(env *sim.Env, tag any) {
	i := int(tag.(stepTag))
	s := c.steps[i]
	id, ok := c.sections[s.sec]
	if !ok {
		id = env.SectionBegin("L", -1, s.tok, s.tok >= 0)
		c.sections[s.sec] = id
	}
	var msg sim.Message
	switch s.kind {
	case "read":
		msg = ReadReq{ID: uint64(i), Section: id, Token: s.tok, HasToken: s.tok >= 0}
	case "write":
		env.SectionWriteSent(id, s.value)
		msg = WriteReq{ID: uint64(i), Section: id, Value: s.value, Token: s.tok, HasToken: s.tok >= 0, LockValue: s.lock}
	case "setlock":
		msg = SetLockReq{ID: uint64(i), Section: id, LockValue: s.lock}
	}
	c.sent = append(c.sent, sentReq{id: uint64(i), msg: msg})
	if c.pooled {
		switch m := msg.(type) {
		case ReadReq:
			env.SendPooled(c.server, NewReadReq(m))
			return
		case WriteReq:
			env.SendPooled(c.server, NewWriteReq(m))
			return
		}
	}
	env.Send(c.server, msg)
}

func (c *script) Receive(env *sim.Env, from sim.ProcID, msg sim.Message) {
	// A pooled reply is recycled when Receive returns: copy it out.
	switch m := msg.(type) {
	case *ReadReply:
		msg = *m
	case *WriteReply:
		msg = *m
	}
	switch m := msg.(type) {
	case ReadReply:
		c.answered(m.ID)
		if m.OK {
			*c.log = append(*c.log, fmt.Sprintf("read %d", m.Value))
		} else {
			*c.log = append(*c.log, "read rejected "+m.Err)
		}
	case WriteReply:
		c.answered(m.ID)
		env.SectionResult(m.Section)
		if m.OK {
			*c.log = append(*c.log, "write ok")
		} else {
			*c.log = append(*c.log, "write rejected "+m.Err)
		}
	case SetLockReply:
		c.answered(m.ID)
		*c.log = append(*c.log, "setlock ok")
	}
}

// run runs steps against a storage node in mode and returns the replies, the
// node's final value and the history.
func run(t *testing.T, mode string, steps []step) ([]string, int64, *sim.History) {
	log, value, h, _ := runForm(t, mode, steps, false)
	return log, value, h
}

// runForm is run with the requests pooled or not; it also returns the
// trace hash.
func runForm(t *testing.T, mode string, steps []step, pooled bool) ([]string, int64, *sim.History, [32]byte) {
	t.Helper()
	w, log := newWorld(t, mode, steps, pooled)
	w.RunTo(sim.At(time.Duration(len(steps)+2) * 10 * time.Millisecond))
	value := w.Process("S").(*Node).Value()
	h := w.K.Finish()
	return *log, value, h, w.K.TraceHash()
}

// newWorld is a shared simtest world (1 ms latency) with a storage node S
// in mode and a script client c running steps, which logs its replies.
func newWorld(t testing.TB, mode string, steps []step, pooled bool) (*simtest.World, *[]string) {
	w := simtest.NewWorld(t, time.Millisecond)
	w.Add("S", func() sim.Process { return New(Config{Fencing: mode}) }, sim.ClockSpec{})
	log := new([]string)
	w.Add("c", func() sim.Process { return &script{steps: steps, log: log, pooled: pooled} }, sim.ClockSpec{})
	return w, log
}

// none is the token of a step without a token.
const none = -1

func TestFencingModes(t *testing.T) {
	tests := []struct {
		name  string
		mode  string
		steps []step
		want  []string
		value int64
	}{
		{
			name:  "none accepts everything",
			mode:  FencingNone,
			steps: []step{read(0, none), write(0, none, 1), write(1, 5, 7), write(2, 3, 9), read(3, 1)},
			want:  []string{"read 0", "write ok", "write ok", "write ok", "read 9"},
			value: 9,
		},
		{
			name: "monotonic rejects lower write tokens, accepts equal ones",
			mode: FencingMonotonic,
			steps: []step{
				write(0, 3, 1), // highest write token 3
				write(1, 2, 2), // 2 < 3
				write(2, 3, 3), // equal: accepted
				write(3, 4, 4),
				write(4, none, 5), // no token
			},
			want:  []string{"write ok", "write rejected STALETOKEN", "write ok", "write ok", "write rejected NOTOKEN"},
			value: 4,
		},
		{
			name: "monotonic never checks reads and reads do not raise the mark",
			mode: FencingMonotonic,
			steps: []step{
				write(0, 2, 1),
				read(1, 1),    // lower than the write mark: reads are not checked
				read(2, none), // tokenless read served
				read(3, 9),    // a high read token does not raise the write mark
				write(3, 3, 2),
			},
			want:  []string{"write ok", "read 1", "read 1", "read 1", "write ok"},
			value: 2,
		},
		{
			name: "mark rejects any operation below the mark, reads raise it",
			mode: FencingMark,
			steps: []step{
				read(0, 3),     // mark 3
				write(1, 2, 1), // 2 < 3
				read(2, 2),     // 2 < 3
				read(3, none),  // no token
				write(4, none, 1),
				write(0, 3, 1), // equal: accepted
				write(5, 4, 2), // mark 4
				read(6, 3),     // 3 < 4
				read(7, 4),
			},
			want: []string{
				"read 0", "write rejected STALETOKEN", "read rejected STALETOKEN", "read rejected NOTOKEN",
				"write rejected NOTOKEN", "write ok", "write ok", "read rejected STALETOKEN", "read 2",
			},
			value: 2,
		},
		{
			name: "token-cas accepts a write only while the field holds the writer's value",
			mode: FencingTokenCAS,
			steps: []step{
				casWrite(0, "a", 1), // field empty
				setLock(0, "a"),
				casWrite(0, "a", 1),
				setLock(1, "b"),     // a newer holder
				casWrite(0, "a", 2), // stale holder
				casWrite(1, "b", 2),
				casWrite(2, "", 3), // no lock value
				read(3, none),      // reads are unchecked
			},
			want: []string{
				"write rejected LOCKMISMATCH", "setlock ok", "write ok", "setlock ok",
				"write rejected LOCKMISMATCH", "write ok", "write rejected LOCKMISMATCH", "read 2",
			},
			value: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, value, h, hash := runForm(t, tt.mode, tt.steps, false)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.value, value)
			// Pooled requests (pool.go) are served alike, to the trace.
			pgot, pvalue, ph, phash := runForm(t, tt.mode, tt.steps, true)
			assert.Equal(t, got, pgot)
			assert.Equal(t, value, pvalue)
			assert.Equal(t, h, ph)
			assert.Equal(t, hash, phash)
		})
	}
}

// TestLostUpdate is the difference between write-only fencing (Kleppmann)
// and marking (Junqueira): sections with tokens 2 and 3 both read 1, token
// 2's write lands first. Monotonic accepts both writes (counter 2 after two
// increments: a lost update); mark rejects token 2's write because token 3's
// read raised the mark.
func TestLostUpdate(t *testing.T) {
	steps := []step{
		read(0, 1), write(0, 1, 1), // the counter is 1
		read(1, 2), read(2, 3), // both read 1
		write(1, 2, 2), write(2, 3, 2),
	}
	tests := []struct {
		mode     string
		want     []string
		outcomes []sim.WriteOutcome
	}{
		{
			mode:     FencingMonotonic,
			want:     []string{"read 0", "write ok", "read 1", "read 1", "write ok", "write ok"},
			outcomes: []sim.WriteOutcome{sim.WriteAccepted, sim.WriteAccepted, sim.WriteAccepted},
		},
		{
			mode:     FencingMark,
			want:     []string{"read 0", "write ok", "read 1", "read 1", "write rejected STALETOKEN", "write ok"},
			outcomes: []sim.WriteOutcome{sim.WriteAccepted, sim.WriteRejected, sim.WriteAccepted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			got, value, h := run(t, tt.mode, steps)
			assert.Equal(t, tt.want, got)
			// Either way the counter ends at 2; only under mark is that right
			// (two accepted increments instead of three).
			assert.Equal(t, int64(2), value)
			require.Len(t, h.Sections, 3)
			for i, s := range h.Sections {
				assert.Equal(t, tt.outcomes[i], s.Outcome, "section %d", i)
				assert.True(t, s.Read, "section %d read", i)
				assert.NotZero(t, s.ResultAt, "section %d result", i)
			}
			assert.Equal(t, int64(1), h.Sections[1].ReadValue)
			assert.Equal(t, int64(1), h.Sections[2].ReadValue)
		})
	}
}

func TestRejectedReadRecorded(t *testing.T) {
	_, _, h := run(t, FencingMark, []step{read(0, 5), read(1, 4)})
	require.Len(t, h.Sections, 2)
	assert.True(t, h.Sections[0].Read)
	assert.False(t, h.Sections[0].ReadRejected)
	assert.False(t, h.Sections[1].Read)
	assert.True(t, h.Sections[1].ReadRejected)
	assert.NotZero(t, h.Sections[1].ReadAt)
}

// TestDurableAcrossPowerLoss: every change is fsynced, so a power crash and
// a restart keep the value, the marks and the lock field.
func TestDurableAcrossPowerLoss(t *testing.T) {
	tests := []struct {
		mode   string
		before []step
		after  []step
		want   []string
		value  int64
	}{
		{
			mode:   FencingMonotonic,
			before: []step{write(0, 5, 1)},
			after:  []step{write(1, 4, 2), read(2, none)},
			want:   []string{"write ok", "write rejected STALETOKEN", "read 1"},
			value:  1,
		},
		{
			mode:   FencingMark,
			before: []step{read(0, 7)}, // a read raised the mark: that must survive too
			after:  []step{write(1, 6, 1), read(2, 7)},
			want:   []string{"read 0", "write rejected STALETOKEN", "read 0"},
			value:  0,
		},
		{
			mode:   FencingTokenCAS,
			before: []step{setLock(0, "a"), casWrite(0, "a", 1)},
			after:  []step{casWrite(0, "a", 2)},
			want:   []string{"setlock ok", "write ok", "write ok"},
			value:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			w, log := newWorld(t, tt.mode, append(append([]step{}, tt.before...), tt.after...), false)
			srv := w.ID("S")
			// Steps run at 10 ms intervals; crash and restart between the two
			// groups.
			mid := time.Duration(len(tt.before))*10*time.Millisecond + 5*time.Millisecond
			w.At(mid, func() { w.K.Crash(srv, sim.CrashPower) })
			w.At(mid+time.Millisecond, func() { w.K.Restart(srv) })
			w.RunTo(sim.At(time.Second))
			assert.Equal(t, tt.want, *log)
			assert.Equal(t, tt.value, w.Process("S").(*Node).Value())
		})
	}
}

func TestValidate(t *testing.T) {
	for _, m := range Modes {
		assert.NoError(t, Config{Fencing: m}.Validate(), m)
	}
	assert.NoError(t, DefaultConfig().Validate())
	err := Config{Fencing: "strict"}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"strict"`)
	assert.Contains(t, err.Error(), "none, monotonic, mark, token-cas")
	assert.Panics(t, func() { New(Config{Fencing: ""}) })
}
