package redis

import (
	"crypto/sha1"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sha(src string) string {
	s := sha1.Sum([]byte(src))
	return hex.EncodeToString(s[:])
}

// A team's own copy of a stock script, laid out its own way, is that
// script; the node caches it under the SHA1 of the text it received.
func TestScriptByShape(t *testing.T) {
	own := "\n  if redis.call(\"get\", KEYS[1]) == ARGV[1] then\n\treturn redis.call(\"del\", KEYS[1]) else return 0 end"
	other := "if redis.call(\"get\", KEYS[1]) == ARGV[2] then return redis.call(\"del\", KEYS[1]) else return 0 end"
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
	assert.Equal(t, errNoScript, w.do("A", "EVALSHA", sha(own), "1", "k", "v"))
	assert.Equal(t, OK(), w.do("A", "SET", "k", "v"))
	assert.Equal(t, Int(0), w.do("A", "EVAL", own, "1", "k", "other"))
	assert.Equal(t, Int(1), w.do("A", "EVALSHA", sha(own), "1", "k", "v"))
	assert.Equal(t, Nil(), w.do("A", "GET", "k"))
	v := w.do("A", "EVAL", other, "1", "k", "v", "w")
	require.True(t, v.IsErr())
	assert.Contains(t, v.Str, "unknown script")
	assert.Equal(t, "if redis.call(\"get\",KEYS[1])==ARGV[1]then return redis.call(\"del\",KEYS[1])else return 0 end", shape(own))
}

// The libraries' scripts run by their own SHA1: NOSCRIPT until an EVAL of
// the text (or SCRIPT LOAD) cached it, as on a real server.
func TestLibraryScripts(t *testing.T) {
	const (
		redsyncDelete = "e950836ed1e694540c503ef9972b8de518044d3b"
		lockObtain    = "80a1b5f2cfccec3b7119ba7721d2127682b691a7"
		lockPTTL      = "6484da7d58920897fdc22b7f9afd1a3d47524ea8"
	)
	w := newWorld(t, time.Millisecond, nodeSpec{name: "A", cfg: master()})
	assert.Equal(t, errNoScript, w.do("A", "EVALSHA", redsyncDelete, "1", "k", "v"))
	n := w.node("A")
	n.scripts[redsyncDelete], n.scripts[lockObtain], n.scripts[lockPTTL] = true, true, true
	assert.Equal(t, Int(-1), w.do("A", "EVALSHA", redsyncDelete, "1", "k", "v"))
	// redislock's obtain: SET NX PX; the same token (its first ARGV[2]
	// bytes) re-obtains; another token does not.
	assert.Equal(t, OK(), w.do("A", "EVALSHA", lockObtain, "1", "k", "tok1meta", "4", "10000"))
	assert.Equal(t, OK(), w.do("A", "EVALSHA", lockObtain, "1", "k", "tok1other", "4", "20000"))
	assert.Equal(t, Bulk("tok1other"), w.do("A", "GET", "k"))
	assert.Equal(t, Nil(), w.do("A", "EVALSHA", lockObtain, "1", "k", "tok2meta", "4", "10000"))
	pttl := w.do("A", "EVALSHA", lockPTTL, "1", "k", "tok1other")
	assert.Equal(t, KindInt, pttl.Kind)
	assert.InDelta(t, 20000, pttl.Int, 10)
	assert.Equal(t, Int(-3), w.do("A", "EVALSHA", lockPTTL, "1", "k", "tok2meta"))
}
