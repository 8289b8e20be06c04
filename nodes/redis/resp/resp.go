// Package resp holds the message types of the Redis node: a Request, its
// Reply and the RESP Value they carry. Other node kinds (nodes/sentinel)
// and the clients speak to Redis through these types alone, as DESIGN's
// import table asks; nodes/redis re-exports them under the same names.
package resp

import (
	"strconv"
)

// Request is a command sent to a Redis node (by a lock client, a sentinel or
// another node), as on the wire: Args[0] is the command name, the rest its
// arguments, all strings as RESP sends them. ID is chosen by the sender and
// echoed in the Reply so that a client can match replies to requests.
type Request struct {
	ID   uint64
	Args []string
}

// Reply answers a Request.
type Reply struct {
	ID    uint64
	Value Value
}

// Push is what a server sends on a subscribed connection without being
// asked: a Pub/Sub message (the array "message", channel, payload) or the
// confirmation of a further channel of one SUBSCRIBE (Redis confirms each
// channel with its own "subscribe" array, pubsub.c
// addReplyPubsubSubscribed; the first one is the Reply to the SUBSCRIBE).
// Sub is the ID of the SUBSCRIBE request that opened the subscription: a
// client with several connections to the server finds the subscribed one
// by it (the kernel carries them all on one connection per pair).
type Push struct {
	Sub   uint64
	Value Value
}

// AppendTrace renders the push for the trace.
func (p Push) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "push "...), p.Sub, 10)
	b = append(b, ' ')
	return p.Value.AppendTrace(b)
}

// Kind is the RESP type of a Value.
type Kind uint8

const (
	KindNil    Kind = iota // a null bulk string or null array (missing key, nil script result)
	KindStatus             // a simple string: +OK
	KindError              // an error: -ERR ..., -READONLY ..., -NOREPLICAS ..., -WRONGTYPE ...
	KindInt                // an integer: :1
	KindBulk               // a bulk string
	KindArray              // an array of values
)

// Value is a RESP value.
type Value struct {
	Kind  Kind
	Str   string // status text, error text (with its code: "ERR syntax error"), bulk content
	Int   int64
	Array []Value
}

// Constructors for replies.
func Nil() Value               { return Value{Kind: KindNil} }
func Status(s string) Value    { return Value{Kind: KindStatus, Str: s} }
func OK() Value                { return Status("OK") }
func Err(s string) Value       { return Value{Kind: KindError, Str: s} }
func Int(n int64) Value        { return Value{Kind: KindInt, Int: n} }
func Bulk(s string) Value      { return Value{Kind: KindBulk, Str: s} }
func Array(vs ...Value) Value  { return Value{Kind: KindArray, Array: vs} }
func (v Value) IsErr() bool    { return v.Kind == KindError }
func (v Value) IsNil() bool    { return v.Kind == KindNil }
func (v Value) IsOK() bool     { return v.Kind == KindStatus && v.Str == "OK" }
func (v Value) String() string { return string(v.AppendTrace(nil)) }

// AppendTrace renders the value in a compact RESP-like form for the trace.
func (v Value) AppendTrace(b []byte) []byte {
	switch v.Kind {
	case KindNil:
		return append(b, "(nil)"...)
	case KindStatus:
		return append(append(b, '+'), v.Str...)
	case KindError:
		return append(append(b, '-'), v.Str...)
	case KindInt:
		return strconv.AppendInt(append(b, ':'), v.Int, 10)
	case KindBulk:
		return AppendQuote(b, v.Str)
	case KindArray:
		b = append(b, '[')
		for i, e := range v.Array {
			if i > 0 {
				b = append(b, ' ')
			}
			b = e.AppendTrace(b)
		}
		return append(b, ']')
	}
	return b
}

// AppendTrace renders the request for the trace.
func (r Request) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "req "...), r.ID, 10)
	for _, a := range r.Args {
		b = append(b, ' ')
		b = append(b, a...)
	}
	return b
}

// AppendTrace renders the reply for the trace.
func (r Reply) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "rep "...), r.ID, 10)
	b = append(b, ' ')
	return r.Value.AppendTrace(b)
}
