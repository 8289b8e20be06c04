package memcached

import (
	"strconv"
	"strings"
)

// Command is a memcached text-protocol command (doc/protocol.txt).
type Command uint8

// The commands the model serves: the storage commands, retrieval, deletion,
// touch, arithmetic and flush_all (M 1.6.45 doc/protocol.txt).
const (
	CmdSet Command = iota + 1
	CmdAdd
	CmdReplace
	CmdCas
	CmdGet
	CmdGets
	CmdDelete
	CmdTouch
	CmdIncr
	CmdDecr
	CmdFlushAll
)

var commandNames = [...]string{"", "set", "add", "replace", "cas", "get", "gets", "delete", "touch", "incr", "decr", "flush_all"}

// String returns the command's name on the wire.
func (c Command) String() string {
	if int(c) < len(commandNames) && c != 0 {
		return commandNames[c]
	}
	return "unknown(" + strconv.Itoa(int(c)) + ")"
}

// IsStorage reports whether the command carries a data block.
func (c Command) IsStorage() bool { return c >= CmdSet && c <= CmdCas }

// Request is one command sent to a memcached node. It mirrors the text
// protocol line; fields a command does not take are ignored. ID is chosen
// by the sender and echoed in the Reply.
//
//	set|add|replace <Key> <Flags> <Exptime> <len(Value)>\r\n<Value>\r\n
//	cas <Key> <Flags> <Exptime> <len(Value)> <CAS>\r\n<Value>\r\n
//	get|gets <Keys...>\r\n
//	delete <Key>\r\n
//	touch <Key> <Exptime>\r\n
//	incr|decr <Key> <Delta>\r\n
//	flush_all\r\n
//
// NB: Exptime is an int64 so that a value outside 32 bits can be sent; the
// server keeps only its low 32 bits (see exptime32).
type Request struct {
	ID      uint64
	Cmd     Command
	Key     string   // every command but get, gets and flush_all
	Keys    []string // get and gets
	Flags   uint32
	Exptime int64
	Value   string
	CAS     uint64 // cas
	Delta   uint64 // incr and decr
}

// Line renders the request as the text protocol sends it, data block
// included.
func (r Request) Line() string {
	var b strings.Builder
	b.WriteString(r.Cmd.String())
	switch r.Cmd {
	case CmdSet, CmdAdd, CmdReplace, CmdCas:
		b.WriteString(" " + r.Key + " " + strconv.FormatUint(uint64(r.Flags), 10) + " " +
			strconv.FormatInt(r.Exptime, 10) + " " + strconv.Itoa(len(r.Value)))
		if r.Cmd == CmdCas {
			b.WriteString(" " + strconv.FormatUint(r.CAS, 10))
		}
		b.WriteString("\r\n" + r.Value)
	case CmdGet, CmdGets:
		for _, k := range r.Keys {
			b.WriteString(" " + k)
		}
	case CmdDelete:
		b.WriteString(" " + r.Key)
	case CmdTouch:
		b.WriteString(" " + r.Key + " " + strconv.FormatInt(r.Exptime, 10))
	case CmdIncr, CmdDecr:
		b.WriteString(" " + r.Key + " " + strconv.FormatUint(r.Delta, 10))
	}
	b.WriteString("\r\n")
	return b.String()
}

// AppendTrace renders the request for the trace (the command line without
// its data block; the value is quoted).
func (r Request) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "req "...), r.ID, 10)
	b = append(append(b, ' '), r.Cmd.String()...)
	switch r.Cmd {
	case CmdSet, CmdAdd, CmdReplace, CmdCas:
		b = append(append(b, ' '), r.Key...)
		b = strconv.AppendUint(append(b, ' '), uint64(r.Flags), 10)
		b = strconv.AppendInt(append(b, ' '), r.Exptime, 10)
		if r.Cmd == CmdCas {
			b = strconv.AppendUint(append(b, ' '), r.CAS, 10)
		}
		b = strconv.AppendQuote(append(b, ' '), r.Value)
	case CmdGet, CmdGets:
		for _, k := range r.Keys {
			b = append(append(b, ' '), k...)
		}
	case CmdDelete:
		b = append(append(b, ' '), r.Key...)
	case CmdTouch:
		b = append(append(b, ' '), r.Key...)
		b = strconv.AppendInt(append(b, ' '), r.Exptime, 10)
	case CmdIncr, CmdDecr:
		b = append(append(b, ' '), r.Key...)
		b = strconv.AppendUint(append(b, ' '), r.Delta, 10)
	}
	return b
}

// Item is one VALUE line of a get or gets reply and its data block.
type Item struct {
	Key   string
	Flags uint32
	Value string
	CAS   uint64 // gets only
}

// Replies as the protocol answers them (M 1.6.45 proto_parser.c:752-980,
// doc/protocol.txt).
const (
	Stored    = "STORED"
	NotStored = "NOT_STORED"
	Exists    = "EXISTS"
	NotFound  = "NOT_FOUND"
	Deleted   = "DELETED"
	Touched   = "TOUCHED"
	End       = "END"
	OK        = "OK"

	ErrBadFormat  = "CLIENT_ERROR bad command line format"
	ErrBadExptime = "CLIENT_ERROR invalid exptime argument"
	ErrNonNumeric = "CLIENT_ERROR cannot increment or decrement non-numeric value"
	ErrTooLarge   = "SERVER_ERROR object too large for cache"
	ErrOutOfMem   = "SERVER_ERROR out of memory storing object"
	ErrIncrOOM    = "SERVER_ERROR out of memory"
)

// Reply answers a Request. Status is the reply line as the server sends it
// (STORED, NOT_FOUND, an incr result such as "12", a CLIENT_ERROR ...);
// for get and gets it is END and Items holds the VALUE blocks before it.
type Reply struct {
	ID     uint64
	Status string
	Items  []Item
	Gets   bool // the Items carry CAS ids (a gets reply)
}

// IsError reports whether the reply is an error line.
func (r Reply) IsError() bool {
	return strings.HasPrefix(r.Status, "CLIENT_ERROR") || strings.HasPrefix(r.Status, "SERVER_ERROR") || r.Status == "ERROR"
}

// Wire renders the reply exactly as the text protocol sends it.
func (r Reply) Wire() string {
	var b strings.Builder
	for _, it := range r.Items {
		b.WriteString("VALUE " + it.Key + " " + strconv.FormatUint(uint64(it.Flags), 10) + " " + strconv.Itoa(len(it.Value)))
		if r.Gets {
			b.WriteString(" " + strconv.FormatUint(it.CAS, 10))
		}
		b.WriteString("\r\n" + it.Value + "\r\n")
	}
	b.WriteString(r.Status + "\r\n")
	return b.String()
}

// AppendTrace renders the reply for the trace.
func (r Reply) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "rep "...), r.ID, 10)
	for _, it := range r.Items {
		b = append(append(b, " VALUE "...), it.Key...)
		b = strconv.AppendUint(append(b, ' '), uint64(it.Flags), 10)
		if r.Gets {
			b = strconv.AppendUint(append(b, ' '), it.CAS, 10)
		}
		b = strconv.AppendQuote(append(b, ' '), it.Value)
	}
	return append(append(b, ' '), r.Status...)
}
