package redis

import "strconv"

// Messages between Redis nodes: the replication link. Clients and Sentinel
// never see them; they talk to nodes with Request and Reply.
//
// A link is identified by a session number the replica draws when it
// (re)connects, so that messages of an old connection are recognised and
// ignored, as a closed TCP connection would discard them.

// SyncRequest is PSYNC <replid> <offset+1>: the replica asks to continue
// the stream of ReplID after Offset bytes (PSYNC ? -1 when ReplID is "": a
// replica without a replication history asks for a full resync).
type SyncRequest struct {
	Session uint64
	ReplID  string
	Offset  int64
	// Boot marks the PSYNC of a replica started with the run that has not
	// synced yet: the model starts runs with replicas in sync, as real
	// mode starts a run only once every replica's link is up
	// (realmode.go), so its master serves it without
	// repl-diskless-sync-delay. Not in the trace: it follows from the
	// replica's incarnation and history.
	Boot bool
}

// Continue answers a SyncRequest that can be served from the backlog:
// +CONTINUE <replid>; the stream from the replica's offset follows
// (masterTryPartialResynchronization, R 7.2.4 src/replication.c:740-788).
type Continue struct {
	Session uint64
	ReplID  string
}

// FullSync answers a SyncRequest: +FULLRESYNC <replid> <offset> followed by
// the RDB payload, here the entries themselves.
type FullSync struct {
	Session uint64
	ReplID  string
	Offset  int64
	Entries []Entry
}

// PresyncPing is the newline a master writes every replicationCron tick to
// a replica waiting for its full sync to start (R 7.0.15
// src/replication.c:3641-3665): it carries no offset and only refreshes the
// replica's repl_transfer_lastio, so a replica waiting out
// repl-diskless-sync-delay does not time out its PSYNC.
type PresyncPing struct {
	Session uint64
}

// Stream carries one execution unit of the replication stream: the commands
// a master propagated for one command, script or expiry (with MULTI/EXEC
// around units of more than one command, as Redis 7.0 wraps them), starting
// at replication offset Start. Offsets count RESP bytes, as in Redis.
type Stream struct {
	Session uint64
	Start   int64
	Cmds    []Cmd
}

// Ack is REPLCONF ACK <offset>: the replica has processed the stream up to
// Offset.
type Ack struct {
	Session uint64
	Offset  int64
}

// Reset says that the sender dropped the link with this session (a closed
// or reset connection). A master answers acks of replicas it does not know
// with it, which is how a replica notices that its master restarted.
type Reset struct {
	Session uint64
}

// Cmd is one command of the replication stream or the AOF, as argv.
type Cmd []string

// Entry is one key of a snapshot (RDB file or full sync payload).
type Entry struct {
	Key       string
	Hash      bool    // a hash; otherwise a string
	Str       string  // the string value
	Fields    []Field // the hash fields, sorted by name
	HasExpire bool
	ExpireAt  int64 // absolute Unix ms deadline when HasExpire
}

// Field is one field of a hash.
type Field struct {
	Name, Value string
}

// respLen returns the size of cmd encoded as a RESP array of bulk strings,
// which is what a replication offset counts.
func (c Cmd) respLen() int64 {
	n := 1 + len(strconv.Itoa(len(c))) + 2
	for _, a := range c {
		n += 1 + len(strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return int64(n)
}

func appendCmd(b []byte, c Cmd) []byte {
	for i, a := range c {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a...)
	}
	return b
}

// AppendTrace renders the message for the trace.
func (m SyncRequest) AppendTrace(b []byte) []byte {
	if m.ReplID == "" {
		return strconv.AppendUint(append(b, "PSYNC ? -1 session="...), m.Session, 10)
	}
	b = append(append(b, "PSYNC "...), m.ReplID...)
	b = strconv.AppendInt(append(b, ' '), m.Offset+1, 10)
	return strconv.AppendUint(append(b, " session="...), m.Session, 10)
}

// AppendTrace renders the message for the trace.
func (m Continue) AppendTrace(b []byte) []byte {
	b = append(append(b, "CONTINUE "...), m.ReplID...)
	return strconv.AppendUint(append(b, " session="...), m.Session, 10)
}

// AppendTrace renders the message for the trace.
func (m FullSync) AppendTrace(b []byte) []byte {
	b = append(b, "FULLRESYNC "...)
	b = append(b, m.ReplID...)
	b = strconv.AppendInt(append(b, ' '), m.Offset, 10)
	b = strconv.AppendInt(append(b, " keys="...), int64(len(m.Entries)), 10)
	return strconv.AppendUint(append(b, " session="...), m.Session, 10)
}

// AppendTrace renders the message for the trace.
func (m Stream) AppendTrace(b []byte) []byte {
	b = strconv.AppendInt(append(b, "stream @"...), m.Start, 10)
	for _, c := range m.Cmds {
		b = append(b, " | "...)
		b = appendCmd(b, c)
	}
	return b
}

// AppendTrace renders the message for the trace.
func (m Ack) AppendTrace(b []byte) []byte {
	return strconv.AppendInt(append(b, "REPLCONF ACK "...), m.Offset, 10)
}

// AppendTrace renders the message for the trace.
func (m Reset) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "link reset session="...), m.Session, 10)
}

// AppendTrace renders the message for the trace.
func (m PresyncPing) AppendTrace(b []byte) []byte {
	return strconv.AppendUint(append(b, "presync newline session="...), m.Session, 10)
}
