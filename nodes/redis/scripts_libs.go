package redis

import (
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Scripts of real lock libraries (issue 24).
//
// The node does not interpret Lua (scripts.go): it runs the scripts it
// knows by their SHA1. Real libraries running through package usercode
// send their own script texts, whose SHA1 differ from the node's stock
// ones by whitespace and case, and a team's own lock usually carries its
// own copy of the distlock release script. Two ways lead such a text to a
// script the node knows:
//
//   - libraryScripts: the SHA1 of each script of the libraries locksim runs
//     unmodified, taken from the library's source, with the Go function
//     that mirrors it. EVAL, EVALSHA and SCRIPT LOAD accept these SHA1 as
//     their own, so a library's EVALSHA hits the script cache after its
//     first EVAL exactly as against a real server.
//   - byShape: a source whose Lua tokens are those of a stock script
//     (whitespace aside) is that script; the node caches it under the SHA1
//     of the text received, as Redis does.
//
// Simplification: the Lua line numbers in a library script's error
// messages are those of the stock script it maps to.
var libraryScripts = []Script{
	// go-redsync/redsync v4.18.1 scripts.go: deleteScript (the SHA1 is
	// declared there, scripts.go:14), touchWithSetNXScript (:24),
	// touchScript (:32): the stock redsync scripts, tab-indented.
	libAlias(ScriptRedsyncDelete, "redsync v4.18.1 deleteScript", "e950836ed1e694540c503ef9972b8de518044d3b"),
	libAlias(ScriptRedsyncTouchSetNX, "redsync v4.18.1 touchWithSetNXScript", "b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79"),
	libAlias(ScriptRedsyncTouch, "redsync v4.18.1 touchScript", "d75bb8b5bd13532ddedd17762e772346e39b321e"),
	// bsm/redislock v0.9.4 redislock.go:18-26 (SHA1 of each NewScript
	// text, as go-redis' Script.Hash computes it). luaRefresh is the
	// touch script, luaRelease compare-and-delete; luaPTTL and luaObtain
	// have no stock counterpart.
	libAlias(ScriptRedsyncTouch, "redislock v0.9.4 luaRefresh", "a7aba3bc5d6e99b3003da8b9d80a63b9f4092ecf"),
	libAlias(ScriptCompareAndDelete, "redislock v0.9.4 luaRelease", "cf0e94b2e9ffc7e04395cf88f7583fc309985910"),
	{Name: "redislock v0.9.4 luaPTTL", SHA: "6484da7d58920897fdc22b7f9afd1a3d47524ea8", Keys: 1, Args: 1, run: runRedislockPTTL},
	{Name: "redislock v0.9.4 luaObtain", SHA: "80a1b5f2cfccec3b7119ba7721d2127682b691a7", Keys: 1, Args: 3, run: runRedislockObtain},
}

func libAlias(s Script, name, sha string) Script {
	s.Name, s.SHA, s.Source = name, sha, ""
	return s
}

func init() {
	for i := range libraryScripts {
		scriptsBySHA[libraryScripts[i].SHA] = &libraryScripts[i]
	}
}

// runRedislockPTTL: the lock's PTTL if it holds ARGV[1], else -3.
func runRedislockPTTL(x *scriptRun) Value {
	v, ok := x.call(1, "get", x.key(1))
	if !ok {
		return x.failed()
	}
	if a, has := x.argOpt(1); luaEqStr(v, a, has) {
		r, ok := x.call(1, "pttl", x.key(1))
		if !ok {
			return x.failed()
		}
		return r
	}
	return Int(-3)
}

// runRedislockObtain: SET NX PX ARGV[3] ("OK"); else, when the value held
// starts with the first ARGV[2] bytes of ARGV[1] (the caller's token),
// SET PX again (re-obtain by the same token); else nil. Simplification:
// the prefix read is GET and a slice where the script calls GETRANGE; they
// agree on strings (a missing key reads "" in both).
func runRedislockObtain(x *scriptRun) Value {
	r, ok := x.call(2, "set", x.key(1), x.arg(1), "NX", "PX", x.arg(3))
	if !ok {
		return x.failed()
	}
	if luaTruthy(r) {
		return OK()
	}
	off, err := strconv.Atoi(strings.TrimSpace(x.arg(2)))
	if err != nil || off < 1 {
		return Nil() // tonumber of a non-number is nil: offset-1 raises in Lua; redislock always sends len(token) >= 1
	}
	v, ok := x.call(5, "get", x.key(1))
	if !ok {
		return x.failed()
	}
	held := ""
	if v.Kind == KindBulk {
		held = v.Str
	}
	want := x.arg(1)
	if len(held) > off {
		held = held[:off]
	}
	if len(want) > off {
		want = want[:off]
	}
	if held == want {
		s, ok := x.call(5, "set", x.key(1), x.arg(1), "PX", x.arg(3))
		if !ok {
			return x.failed()
		}
		return s
	}
	return Nil()
}

// shape is a script's Lua tokens: whitespace is dropped, except one space
// between two characters of words.
func shape(src string) string {
	var b strings.Builder
	pendingSpace := false
	var last rune
	word := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for _, r := range src {
		if unicode.IsSpace(r) {
			pendingSpace = true
			continue
		}
		if pendingSpace && word(last) && word(r) {
			b.WriteByte(' ')
		}
		pendingSpace = false
		b.WriteRune(r)
		last = r
	}
	return b.String()
}

var byShape = func() map[string]Script {
	m := map[string]Script{}
	for _, s := range Scripts {
		m[shape(s.Source)] = s
	}
	return m
}()

// shaped is the cache of sources found by shape: the script under the
// SHA1 of the text received. Shared by the runs of a process (they may run
// in parallel); its content depends only on the texts, never on the order.
var shaped sync.Map // sha -> *Script (never changed once stored)

// scriptBySource finds the script of a source text with SHA1 sha: a stock
// script, a library's, or a stock script's shape.
func scriptBySource(src, sha string) (*Script, bool) {
	if s, ok := scriptsBySHA[sha]; ok {
		return s, true
	}
	if s, ok := shaped.Load(sha); ok {
		return s.(*Script), true
	}
	s, ok := byShape[shape(src)]
	if !ok {
		return nil, false
	}
	s.SHA = sha
	v, _ := shaped.LoadOrStore(sha, &s)
	return v.(*Script), true
}

// scriptBySHA finds the script of an EVALSHA.
func scriptBySHA(sha string) (*Script, bool) {
	if s, ok := scriptsBySHA[sha]; ok {
		return s, true
	}
	if s, ok := shaped.Load(sha); ok {
		return s.(*Script), true
	}
	return nil, false
}
