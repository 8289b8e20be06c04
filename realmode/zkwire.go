package realmode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ZooKeeper's client wire protocol, as much of it as the lock recipe
// needs, written from the jute definitions (zookeeper-jute/src/main/
// resources/zookeeper.jute, 3.8.0) and ClientCnxn. Every packet is a 4-byte
// big-endian length and the record; ints and longs are big-endian,
// booleans one byte, strings and buffers a 4-byte length (-1: null) and the
// bytes, vectors a 4-byte count (-1: null) and the items.
//
// A request is RequestHeader{xid int, type int} and its body; a reply is
// ReplyHeader{xid int, zxid long, err int} and its body (none unless err is
// 0). The connect handshake has no headers: ConnectRequest and
// ConnectResponse alone.

// Op codes (ZooDefs.OpCode) and special xids (ClientCnxn).
const (
	zkOpDelete       = 2
	zkOpExists       = 3
	zkOpGetChildren  = 8
	zkOpPing         = 11
	zkOpCreate2      = 15
	zkOpSetWatches   = 101
	zkOpCloseSession = -11

	zkXidNotification = -1
	zkXidPing         = -2
	zkXidSetWatches   = -8

	// CreateMode flags: EPHEMERAL 1, PERSISTENT_SEQUENTIAL 2,
	// EPHEMERAL_SEQUENTIAL 3 (CreateMode.java).
	zkFlagEphemeral  = 1
	zkFlagSequential = 2

	// Watcher.Event.EventType.NodeDeleted.
	zkEventNodeDeleted = 2
)

// KeeperException.Code values the gateway maps to the model's names.
var zkErrNames = map[int32]string{
	-101: "NONODE",
	-110: "NODEEXISTS",
	-111: "NOTEMPTY",
	-112: "SESSIONEXPIRED",
	-8:   "BADARGUMENTS",
	-108: "NOCHILDRENFOREPHEMERALS",
	-6:   "UNIMPLEMENTED",
}

func zkErrName(code int32) string {
	if n, ok := zkErrNames[code]; ok {
		return n
	}
	return fmt.Sprintf("ZK%d", code)
}

// zkBuf builds one packet.
type zkBuf struct{ b []byte }

func (w *zkBuf) int(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *zkBuf) long(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *zkBuf) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *zkBuf) buffer(v []byte) { w.int(int32(len(v))); w.b = append(w.b, v...) }
func (w *zkBuf) str(v string)    { w.int(int32(len(v))); w.b = append(w.b, v...) }
func (w *zkBuf) strs(v []string) {
	w.int(int32(len(v)))
	for _, s := range v {
		w.str(s)
	}
}

// packet returns the record framed with its length.
func (w *zkBuf) packet() []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(w.b)), uint32(len(w.b)))
	return append(out, w.b...)
}

// zkConnectRequest: protocolVersion 0, lastZxidSeen, timeOut (ms),
// sessionId (0: a new session), passwd (16 bytes; zeros for a new
// session), readOnly false.
func zkConnectRequest(lastZxid int64, timeoutMS int32, session int64, passwd []byte) []byte {
	var w zkBuf
	w.int(0)
	w.long(lastZxid)
	w.int(timeoutMS)
	w.long(session)
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	w.buffer(passwd)
	w.bool(false)
	return w.packet()
}

// zkRequest frames a request header and a body built by body (nil: none).
func zkRequest(xid, op int32, body func(w *zkBuf)) []byte {
	var w zkBuf
	w.int(xid)
	w.int(op)
	if body != nil {
		body(&w)
	}
	return w.packet()
}

// zkOpenACL is ZooDefs.Ids.OPEN_ACL_UNSAFE: perms ALL (31) for world:anyone.
func zkOpenACL(w *zkBuf) {
	w.int(1)
	w.int(31)
	w.str("world")
	w.str("anyone")
}

// zkReader reads packets.
type zkReader struct {
	br  *bufio.Reader
	buf []byte
}

// next reads one packet.
func (r *zkReader) next() (*zkRec, error) {
	var n [4]byte
	if _, err := io.ReadFull(r.br, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 4<<20 {
		return nil, fmt.Errorf("zookeeper: packet of %d bytes", size)
	}
	if cap(r.buf) < int(size) {
		r.buf = make([]byte, size)
	}
	b := r.buf[:size]
	if _, err := io.ReadFull(r.br, b); err != nil {
		return nil, err
	}
	return &zkRec{b: b}, nil
}

// zkRec decodes one record; the first decoding error sticks.
type zkRec struct {
	b   []byte
	err error
}

var errZKShort = errors.New("zookeeper: short record")

func (r *zkRec) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = errZKShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *zkRec) int() int32 {
	if v := r.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (r *zkRec) long() int64 {
	if v := r.take(8); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func (r *zkRec) buffer() []byte {
	n := r.int()
	if n < 0 {
		return nil
	}
	return append([]byte(nil), r.take(int(n))...)
}

func (r *zkRec) str() string { return string(r.buffer()) }

func (r *zkRec) strs() []string {
	n := r.int()
	var out []string
	for i := int32(0); i < n && r.err == nil; i++ {
		out = append(out, r.str())
	}
	return out
}

// stat reads a Stat and returns its czxid (the creation zxid, the lock
// node's fencing token): czxid, mzxid, ctime, mtime (longs), version,
// cversion, aversion (ints), ephemeralOwner (long), dataLength,
// numChildren (ints), pzxid (long).
func (r *zkRec) stat() (czxid int64) {
	czxid = r.long()
	r.take(8 * 3)
	r.take(4 * 3)
	r.take(8)
	r.take(4 * 2)
	r.take(8)
	return czxid
}
