package realmode

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/nodes/redis"
)

func TestAppendCommand(t *testing.T) {
	got := string(appendCommand(nil, []string{"SET", "k", "", "NX"}))
	assert.Equal(t, "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$2\r\nNX\r\n", got)
}

func TestReadValue(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want redis.Value
		err  bool
	}{
		{name: "status", in: "+OK\r\n", want: redis.OK()},
		{name: "error", in: "-NOSCRIPT No matching script\r\n", want: redis.Err("NOSCRIPT No matching script")},
		{name: "integer", in: ":-12\r\n", want: redis.Int(-12)},
		{name: "bulk", in: "$5\r\nab\r\nc\r\n", want: redis.Bulk("ab\r\nc")},
		{name: "nil bulk", in: "$-1\r\n", want: redis.Nil()},
		{name: "nil array", in: "*-1\r\n", want: redis.Nil()},
		{name: "array", in: "*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n", want: redis.Array(redis.Bulk("127.0.0.1"), redis.Bulk("6379"))},
		{name: "nested", in: "*1\r\n*1\r\n:1\r\n", want: redis.Array(redis.Array(redis.Int(1)))},
		{name: "bad integer", in: ":x\r\n", err: true},
		{name: "unknown type", in: "%2\r\n", err: true},
		{name: "bulk too long", in: "$999999999\r\n", err: true},
		{name: "truncated bulk", in: "$5\r\nab", err: true},
		{name: "no CRLF", in: "+OK\n", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := readValue(bufio.NewReader(strings.NewReader(tt.in)))
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
		})
	}
}

func TestIsKeySet(t *testing.T) {
	tests := []struct {
		args []string
		v    redis.Value
		want bool
	}{
		{[]string{"SET", "lock", "v", "NX", "PX", "100"}, redis.OK(), true},
		{[]string{"set", "lock", "v", "NX"}, redis.Nil(), false},
		{[]string{"SETNX", "lock", "v"}, redis.Int(1), true},
		{[]string{"SETNX", "lock", "v"}, redis.Int(0), false},
		{[]string{"GET", "lock"}, redis.Bulk("v"), false},
		{[]string{"SET"}, redis.OK(), false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			assert.Equal(t, tt.want, isKeySet(tt.args, tt.v))
		})
	}
}
