package storage

import "strconv"

// Messages between lock clients and the storage node (the protected
// resource, a counter). Section is the history's critical-section id (from
// sim.Env.SectionBegin): the storage node records its ground truth against
// it; a negative Section is served but not recorded (probes, tests). Token is the fencing token when HasToken is set. LockValue is the
// lock's random value, which the token-cas mode (antirez's check-and-set)
// uses instead of a monotonic token.

// ReadReq asks for the counter's value.
type ReadReq struct {
	ID        uint64
	Section   int
	Token     int64
	HasToken  bool
	LockValue string
}

// ReadReply answers a ReadReq. OK is false when the read was rejected
// (fencing mode mark: a token lower than the highest seen); Err says why.
type ReadReply struct {
	ID      uint64
	Section int
	Value   int64
	OK      bool
	Err     string
}

// WriteReq asks to set the counter to Value.
type WriteReq struct {
	ID        uint64
	Section   int
	Value     int64
	Token     int64
	HasToken  bool
	LockValue string
}

// WriteReply answers a WriteReq: OK is false when the write was rejected.
type WriteReply struct {
	ID      uint64
	Section int
	OK      bool
	Err     string
}

// SetLockReq (token-cas mode) sets the resource's current-lock field to
// LockValue; a later WriteReq succeeds only if the field still holds the
// writer's LockValue (checked and written atomically).
type SetLockReq struct {
	ID        uint64
	Section   int
	LockValue string
}

// SetLockReply answers a SetLockReq.
type SetLockReply struct {
	ID      uint64
	Section int
}

func (m ReadReq) AppendTrace(b []byte) []byte {
	b = strconv.AppendInt(append(b, "read s"...), int64(m.Section), 10)
	if m.HasToken {
		b = strconv.AppendInt(append(b, " tok "...), m.Token, 10)
	}
	return b
}

func (m ReadReply) AppendTrace(b []byte) []byte {
	b = strconv.AppendInt(append(b, "read-reply s"...), int64(m.Section), 10)
	if !m.OK {
		return append(append(b, " rejected "...), m.Err...)
	}
	return strconv.AppendInt(append(b, " value "...), m.Value, 10)
}

func (m WriteReq) AppendTrace(b []byte) []byte {
	b = strconv.AppendInt(append(b, "write s"...), int64(m.Section), 10)
	b = strconv.AppendInt(append(b, " value "...), m.Value, 10)
	if m.HasToken {
		b = strconv.AppendInt(append(b, " tok "...), m.Token, 10)
	}
	return b
}

func (m WriteReply) AppendTrace(b []byte) []byte {
	b = strconv.AppendInt(append(b, "write-reply s"...), int64(m.Section), 10)
	if !m.OK {
		return append(append(b, " rejected "...), m.Err...)
	}
	return append(b, " ok"...)
}

func (m SetLockReq) AppendTrace(b []byte) []byte {
	b = strconv.AppendInt(append(b, "set-lock s"...), int64(m.Section), 10)
	return append(append(b, ' '), m.LockValue...)
}

func (m SetLockReply) AppendTrace(b []byte) []byte {
	return strconv.AppendInt(append(b, "set-lock-reply s"...), int64(m.Section), 10)
}
