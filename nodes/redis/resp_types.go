package redis

import "github.com/locksim/locksim/nodes/redis/resp"

// The message types live in nodes/redis/resp so that other node kinds can
// speak to Redis without importing the server; these aliases keep the
// names redis.Request, redis.Value ... for the node and its clients.
type (
	Request = resp.Request
	Reply   = resp.Reply
	Push    = resp.Push
	Kind    = resp.Kind
	Value   = resp.Value
)

// RESP kinds (resp.Kind).
const (
	KindNil    = resp.KindNil
	KindStatus = resp.KindStatus
	KindError  = resp.KindError
	KindInt    = resp.KindInt
	KindBulk   = resp.KindBulk
	KindArray  = resp.KindArray
)

// Constructors for replies (resp's).
func Nil() Value              { return resp.Nil() }
func Status(s string) Value   { return resp.Status(s) }
func OK() Value               { return resp.OK() }
func Err(s string) Value      { return resp.Err(s) }
func Int(n int64) Value       { return resp.Int(n) }
func Bulk(s string) Value     { return resp.Bulk(s) }
func Array(vs ...Value) Value { return resp.Array(vs...) }

// appendQuote is strconv.AppendQuote with resp's fast path for plain text.
func appendQuote(b []byte, s string) []byte { return resp.AppendQuote(b, s) }
