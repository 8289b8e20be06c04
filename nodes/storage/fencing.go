package storage

import "fmt"

// Rejection codes in ReadReply.Err and WriteReply.Err.
const (
	// ErrNoToken: the mode demands a fencing token and the request carried
	// none (monotonic writes, mark reads and writes).
	ErrNoToken = "NOTOKEN"
	// ErrStaleToken: the request's token is lower than the highest token the
	// resource has seen (on a write in monotonic mode, on any operation in
	// mark mode).
	ErrStaleToken = "STALETOKEN"
	// ErrLockMismatch (token-cas): the resource's current-lock field does not
	// hold the writer's LockValue (another holder set it since, or the writer
	// never set it, or sent no LockValue).
	ErrLockMismatch = "LOCKMISMATCH"
)

// state is the resource's durable state; it is also the record persisted on
// every change (a value without pointers, so a stored copy never aliases the
// live state).
type state struct {
	// Value is the counter.
	Value int64
	// WriteMark is the highest token seen on an accepted write (monotonic
	// mode); HasWriteMark is false until the first one.
	WriteMark    int64
	HasWriteMark bool
	// Mark is the highest token seen on any accepted operation (mark mode).
	Mark    int64
	HasMark bool
	// Lock is the current-lock field (token-cas mode).
	Lock string
}

// verdict is the fencing decision on one operation.
type verdict struct {
	ok      bool
	err     string // rejection code when !ok
	why     string // rejection detail for the trace
	changed bool   // the durable state changed (a mark rose, a value was written)
}

func accept(changed bool) verdict { return verdict{ok: true, changed: changed} }

func reject(code, why string) verdict { return verdict{err: code, why: why} }

// read decides a read in mode and applies its effect on the marks.
func (s *state) read(mode string, m ReadReq) verdict {
	if mode != FencingMark {
		// none, token-cas: reads are unchecked. monotonic: Kleppmann fences
		// writes only, so reads (with or without a token) are served and do
		// not raise the write mark.
		return accept(false)
	}
	return s.checkMark(m.Token, m.HasToken)
}

// write decides a write in mode and, when it is accepted, applies it.
func (s *state) write(mode string, m WriteReq) verdict {
	var v verdict
	switch mode {
	case FencingNone:
		v = accept(true)
	case FencingMonotonic:
		// Kleppmann 2016: reject a write whose token is lower than the highest
		// token already processed on a write; an equal token is accepted.
		switch {
		case !m.HasToken:
			v = reject(ErrNoToken, "write without a token")
		case s.HasWriteMark && m.Token < s.WriteMark:
			v = reject(ErrStaleToken, fmt.Sprintf("token %d < highest write token %d", m.Token, s.WriteMark))
		default:
			s.WriteMark, s.HasWriteMark = m.Token, true
			v = accept(true)
		}
	case FencingMark:
		v = s.checkMark(m.Token, m.HasToken)
		v.changed = v.ok
	case FencingTokenCAS:
		// antirez 2016: the write succeeds only if the current-lock field still
		// holds the writer's value; the check and the write are one step.
		switch {
		case m.LockValue == "":
			v = reject(ErrLockMismatch, "write without a lock value")
		case s.Lock != m.LockValue:
			v = reject(ErrLockMismatch, fmt.Sprintf("lock field %q, writer %q", s.Lock, m.LockValue))
		default:
			v = accept(true)
		}
	}
	if v.ok {
		s.Value = m.Value
	}
	return v
}

// checkMark is Junqueira's marking: an operation with a token lower than the
// highest seen is rejected; a higher one raises the mark.
func (s *state) checkMark(token int64, has bool) verdict {
	switch {
	case !has:
		return reject(ErrNoToken, "operation without a token")
	case s.HasMark && token < s.Mark:
		return reject(ErrStaleToken, fmt.Sprintf("token %d < mark %d", token, s.Mark))
	case s.HasMark && token == s.Mark:
		return accept(false)
	}
	s.Mark, s.HasMark = token, true
	return accept(true)
}

// setLock sets the current-lock field (every mode accepts it; only
// token-cas consults the field). It reports whether the field changed.
func (s *state) setLock(value string) bool {
	if s.Lock == value {
		return false
	}
	s.Lock = value
	return true
}
