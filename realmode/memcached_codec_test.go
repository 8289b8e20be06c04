package realmode

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/memcached"
	"github.com/locksim/locksim/sim"
)

// TestMemcachedCodec reads replies as memcached sends them (the model's
// Reply.Wire is the same text) into the model's Reply, request by request
// on one stream: VALUE blocks up to END, with and without CAS ids, status
// lines, and the ERROR memcached adds after a storage command's
// CLIENT_ERROR, which belongs to that request.
func TestMemcachedCodec(t *testing.T) {
	stream := "VALUE lock 0 2 7\r\nv1\r\nVALUE x 5 0 9\r\n\r\nEND\r\n" +
		"STORED\r\n" +
		"CLIENT_ERROR bad command line format\r\nERROR\r\n" +
		"VALUE k 0 3\r\nabc\r\nEND\r\n" +
		"12\r\n"
	tests := []struct {
		req  memcached.Request
		want memcached.Reply
	}{
		{memcached.Request{Cmd: memcached.CmdGets, Keys: []string{"lock", "x"}}, memcached.Reply{Status: "END", Gets: true,
			Items: []memcached.Item{{Key: "lock", Value: "v1", CAS: 7}, {Key: "x", Flags: 5, CAS: 9}}}},
		{memcached.Request{Cmd: memcached.CmdAdd, Key: "lock", Value: "v"}, memcached.Reply{Status: memcached.Stored}},
		{memcached.Request{Cmd: memcached.CmdSet, Key: "bad key", Value: "v"}, memcached.Reply{Status: memcached.ErrBadFormat}},
		{memcached.Request{Cmd: memcached.CmdGet, Keys: []string{"k"}}, memcached.Reply{Status: "END", Items: []memcached.Item{{Key: "k", Value: "abc"}}}},
		{memcached.Request{Cmd: memcached.CmdIncr, Key: "n", Delta: 1}, memcached.Reply{Status: "12"}},
	}
	br := bufio.NewReader(strings.NewReader(stream))
	var c memcachedCodec
	for i, tt := range tests {
		req := tt.req
		req.ID = uint64(i + 1)
		got, err := c.read(br, func() sim.Message { return req })
		require.NoError(t, err, "reply %d", i)
		assert.Equal(t, tt.want, got, "reply %d to %s", i, req.Line())
		assert.Equal(t, req.Line(), string(c.encode(nil, req)))
	}
	_, err := c.read(br, func() sim.Message { return nil })
	assert.Error(t, err, "the stream is exhausted")
}
