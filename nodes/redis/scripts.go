package redis

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Script is one of the Lua lock scripts the simulated node can run. Source
// is real Lua, equivalent to the library's script (reference section 5), so
// that a real redis-server runs the very same text; SHA is the SHA1 of
// Source in hex, as Redis computes it. Clients send
// EVALSHA <SHA> numkeys keys... args... (and, after NOSCRIPT, EVAL <Source>
// numkeys ...), as go-redis' Script.Run does.
//
// The node does not interpret Lua: each script is implemented by a Go
// function that mirrors the Lua line by line, so that replies, errors (with
// their "script: <sha>, on @user_script:<line>." suffix) and effects match.
// Scripts run atomically with time frozen at the script's start
// (commandTimeSnapshot, reference section 1.2) and replicate by effects
// (section 5).
type Script struct {
	Name   string
	Source string
	SHA    string
	// Keys and Args are the numbers of keys and arguments the script
	// expects (Keys -1: any number, as the batched renew).
	Keys, Args int
	run        func(x *scriptRun) Value
}

// EvalSHA returns the argv of EVALSHA for this script.
func (s Script) EvalSHA(keys []string, args ...string) []string {
	return s.argv("EVALSHA", s.SHA, keys, args)
}

// AppendEvalSHA appends the argv of EVALSHA to dst, for a caller that
// carves several argvs out of one allocation.
func (s Script) AppendEvalSHA(dst, keys []string, args ...string) []string {
	dst = append(dst, "EVALSHA", s.SHA, strconv.Itoa(len(keys)))
	dst = append(dst, keys...)
	return append(dst, args...)
}

// Eval returns the argv of EVAL for this script.
func (s Script) Eval(keys []string, args ...string) []string {
	return s.argv("EVAL", s.Source, keys, args)
}

func (s Script) argv(cmd, body string, keys, args []string) []string {
	out := make([]string, 0, 3+len(keys)+len(args))
	out = append(out, cmd, body, strconv.Itoa(len(keys)))
	out = append(out, keys...)
	return append(out, args...)
}

func newScript(name, source string, keys, args int, run func(x *scriptRun) Value) Script {
	sum := sha1.Sum([]byte(source))
	return Script{Name: name, Source: source, SHA: hex.EncodeToString(sum[:]), Keys: keys, Args: args, run: run}
}

// IsNoScript reports whether a reply is the NOSCRIPT error, after which a
// client sends EVAL with the source.
func IsNoScript(v Value) bool { return v.IsErr() && strings.HasPrefix(v.Str, "NOSCRIPT ") }

// ScriptCompareAndDelete releases a lock if it still holds the caller's
// value: the distlock page's script, used by redlock-rb, redlock-py and
// redsync up to v4.8 (reference section 5). KEYS[1] = lock, ARGV[1] = value.
// Returns 1 if deleted, 0 otherwise.
var ScriptCompareAndDelete = newScript("compare-and-delete", `if redis.call("get",KEYS[1]) == ARGV[1] then
    return redis.call("del",KEYS[1])
else
    return 0
end
`, 1, 1, runCompareAndDelete)

// ScriptRedsyncDelete is redsync v4.17's deleteScript (scripts.go:5-14):
// like ScriptCompareAndDelete, but -1 when the key is missing
// (ErrLockAlreadyExpired).
var ScriptRedsyncDelete = newScript("redsync-delete", `local val = redis.call("GET", KEYS[1])
if val == ARGV[1] then
    return redis.call("DEL", KEYS[1])
elseif val == false then
    return -1
else
    return 0
end
`, 1, 1, runRedsyncDelete)

// ScriptRedsyncTouch is redsync's touchScript (scripts.go:26-32): extend
// the lock with PEXPIRE if it still holds the caller's value. ARGV[1] =
// value, ARGV[2] = expiry in ms.
var ScriptRedsyncTouch = newScript("redsync-touch", `if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("PEXPIRE", KEYS[1], ARGV[2])
else
    return 0
end
`, 1, 2, runRedsyncTouch)

// ScriptRedsyncTouchSetNX is redsync's touchWithSetNXScript
// (scripts.go:16-24, WithSetNXOnExtend): as ScriptRedsyncTouch, but a
// missing key is re-created with SET NX PX, silently re-acquiring a lock
// that was lost.
var ScriptRedsyncTouchSetNX = newScript("redsync-touch-setnx", `if redis.call("GET", KEYS[1]) == ARGV[1] then
    return redis.call("PEXPIRE", KEYS[1], ARGV[2])
elseif redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
    return 1
else
    return 0
end
`, 1, 2, runRedsyncTouchSetNX)

// ScriptRedissonLock is Redisson's RLock acquire (RedissonLock.java:214-224):
// a reentrant hash lock. ARGV[1] = lease ms, ARGV[2] = clientUUID:threadId.
// Returns nil when acquired (or re-entered), otherwise the lock's PTTL.
var ScriptRedissonLock = newScript("redisson-lock", `if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then
    redis.call('hincrby', KEYS[1], ARGV[2], 1);
    redis.call('pexpire', KEYS[1], ARGV[1]);
    return nil;
end;
return redis.call('pttl', KEYS[1]);
`, 1, 2, runRedissonLock)

// ScriptRedissonUnlock is Redisson's current RLock release
// (RedissonLock.java:347-371). KEYS[1] = lock, KEYS[2] = pub/sub channel,
// KEYS[3] = unlock latch key; ARGV[1] = unlock message, ARGV[2] = lease ms,
// ARGV[3] = clientUUID:threadId, ARGV[4] = publish command ("publish"),
// ARGV[5] = latch TTL ms. Returns nil if the caller does not hold the lock,
// 0 if a reentrant hold remains, 1 if released; a retried call returns the
// latched result.
var ScriptRedissonUnlock = newScript("redisson-unlock", `local val = redis.call('get', KEYS[3]);
if val ~= false then
    return tonumber(val);
end;
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then
    return nil;
end;
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);
if (counter > 0) then
    redis.call('pexpire', KEYS[1], ARGV[2]);
    redis.call('set', KEYS[3], 0, 'px', ARGV[5]);
    return 0;
else
    redis.call('del', KEYS[1]);
    redis.call(ARGV[4], KEYS[2], ARGV[1]);
    redis.call('set', KEYS[3], 1, 'px', ARGV[5]);
    return 1;
end;
`, 3, 5, runRedissonUnlock)

// ScriptRedissonRenew is Redisson's batched watchdog renewal
// (LockTask.java:84-93): for each KEYS[i], PEXPIRE ARGV[1] if it holds field
// ARGV[i+1]. Returns one 1 or 0 per key.
var ScriptRedissonRenew = newScript("redisson-renew", `local result = {}
for i = 1, #KEYS, 1 do
    if (redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1) then
        redis.call('pexpire', KEYS[i], ARGV[1]);
        table.insert(result, 1);
    else
        table.insert(result, 0);
    end;
end;
return result;
`, -1, -1, runRedissonRenew)

// Scripts lists every script the node knows.
var Scripts = []Script{
	ScriptCompareAndDelete, ScriptRedsyncDelete, ScriptRedsyncTouch, ScriptRedsyncTouchSetNX,
	ScriptRedissonLock, ScriptRedissonUnlock, ScriptRedissonRenew,
	ScriptStockDecrement,
}

// scriptsBySHA maps a stock script's SHA1 to it (a pointer into Scripts:
// EVALSHA's look-up copies nothing).
var scriptsBySHA = func() map[string]*Script {
	m := make(map[string]*Script, len(Scripts))
	for i := range Scripts {
		m[Scripts[i].SHA] = &Scripts[i]
	}
	return m
}()

// ScriptBySHA returns the known script with this SHA1 (any case).
func ScriptBySHA(sha string) (Script, bool) {
	s, ok := scriptsBySHA[strings.ToLower(sha)]
	if !ok {
		return Script{}, false
	}
	return *s, true
}

func scriptNames() string {
	names := make([]string, len(Scripts))
	for i, s := range Scripts {
		names[i] = s.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// errUnknownScript answers EVAL or SCRIPT LOAD of a source the simulator
// cannot run.
func errUnknownScript() Value {
	return Err("ERR locksim: unknown script: the simulated Redis node runs only its built-in lock scripts (" + scriptNames() + "); send their exact Source")
}

// ---- commands ----

// evalNumKeys parses numkeys (evalGenericCommand, R 7.2.4
// src/eval.c:477-486).
func evalNumKeys(a []string) (int, *Value) {
	nk, ok := parseLL(a[2])
	if !ok {
		return 0, &errNotInteger
	}
	if nk > int64(len(a)-3) {
		v := Err("ERR Number of keys can't be greater than number of args")
		return 0, &v
	}
	if nk < 0 {
		v := Err("ERR Number of keys can't be negative")
		return 0, &v
	}
	return int(nk), nil
}

// cmdEval runs a known script from its source and caches it, as EVAL does.
func cmdEval(n *Node, a []string) Value {
	nk, errv := evalNumKeys(a)
	if errv != nil {
		return *errv
	}
	sum := sha1.Sum([]byte(a[1]))
	s, ok := scriptBySource(a[1], hex.EncodeToString(sum[:]))
	if !ok {
		return errUnknownScript()
	}
	n.scripts[s.SHA] = true
	return n.runScript(s, a[3:3+nk], a[3+nk:])
}

// cmdEvalSHA runs a cached script (evalShaCommand, R 7.2.4
// src/eval.c:555-573): a SHA that is not 40 characters long, or that this
// instance has not seen in EVAL or SCRIPT LOAD since it started, answers
// NOSCRIPT. The cache does not survive a restart and is not replicated, so
// a client gets NOSCRIPT after a restart or a failover, as with real Redis.
func cmdEvalSHA(n *Node, a []string) Value {
	if len(a[1]) != 40 {
		return errNoScript
	}
	nk, errv := evalNumKeys(a)
	if errv != nil {
		return *errv
	}
	// A SHA found as it is is already in lower case (the clients send them
	// so): strings.ToLower, which scans it, is needed only otherwise.
	sha := a[1]
	if m := n.evalMemo; m != nil && sha == m.SHA {
		return n.runScript(m, a[3:3+nk], a[3+nk:])
	}
	s, ok := scriptBySHA(sha)
	if !ok {
		sha = strings.ToLower(sha)
		s, ok = scriptBySHA(sha)
	}
	if !ok || !n.scripts[sha] {
		return errNoScript
	}
	n.evalMemo = s
	return n.runScript(s, a[3:3+nk], a[3+nk:])
}

func cmdScriptLoad(n *Node, a []string) Value {
	sum := sha1.Sum([]byte(a[2]))
	s, ok := scriptBySource(a[2], hex.EncodeToString(sum[:]))
	if !ok {
		return errUnknownScript()
	}
	n.scripts[s.SHA] = true
	return Bulk(s.SHA)
}

func cmdScriptExists(n *Node, a []string) Value {
	out := make([]Value, 0, len(a)-2)
	for _, sha := range a[2:] {
		if n.scripts[strings.ToLower(sha)] {
			out = append(out, Int(1))
		} else {
			out = append(out, Int(0))
		}
	}
	return Array(out...)
}

func cmdScriptFlush(n *Node, a []string) Value {
	if len(a) > 3 || (len(a) == 3 && !strings.EqualFold(a[2], "sync") && !strings.EqualFold(a[2], "async")) {
		return Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
	}
	n.scripts = map[string]bool{}
	n.evalMemo = nil
	return OK()
}

// runScript executes a script as one execution unit with frozen time.
func (n *Node) runScript(s *Script, keys, args []string) Value {
	saved := n.cur
	n.cur.inScript = true
	n.cur.scriptDirty = false
	// The node's one scriptRun is reused: scripts cannot nest (EVAL is not
	// allowed from a script), and reusing it saves an allocation per script.
	x := &n.run
	*x = scriptRun{n: n, sha: s.SHA, keys: keys, args: args}
	v := s.run(x)
	if x.err != nil {
		v = *x.err
	}
	n.cur = saved
	// Only what the next script would not overwrite is cleared: the
	// caller's argv is not held on to (x.n and x.sha stay, harmlessly).
	x.keys, x.args, x.err = nil, nil, nil
	return v
}

// scriptRun is one execution of a script: its KEYS and ARGV and the error
// that aborted it.
type scriptRun struct {
	n          *Node
	sha        string
	keys, args []string
	nilArg     bool // a missing KEYS[i]/ARGV[i] (Lua nil) was passed on
	err        *Value
}

// key returns KEYS[i] (1-based); a missing one is Lua nil.
func (x *scriptRun) key(i int) string {
	if i < 1 || i > len(x.keys) {
		x.nilArg = true
		return ""
	}
	return x.keys[i-1]
}

// arg returns ARGV[i] (1-based); a missing one is Lua nil.
func (x *scriptRun) arg(i int) string {
	if i < 1 || i > len(x.args) {
		x.nilArg = true
		return ""
	}
	return x.args[i-1]
}

// argOpt returns ARGV[i] and whether it exists, for comparisons.
func (x *scriptRun) argOpt(i int) (string, bool) {
	if i < 1 || i > len(x.args) {
		return "", false
	}
	return x.args[i-1], true
}

// raise aborts the script with an error raised at a Lua line
// (luaCallFunction, R 7.2.4 src/script_lua.c:1681-1703).
func (x *scriptRun) raise(line int, msg string) {
	v := Err(msg + " script: " + x.sha + ", on @user_script:" + strconv.Itoa(line) + ".")
	x.err = &v
}

// notAllowedInScripts are the CMD_NOSCRIPT commands among those the node
// implements (R 7.0.15 src/commands/*.json "NOSCRIPT").
var notAllowedInScripts = map[string]bool{
	"eval": true, "evalsha": true, "script": true, "replicaof": true, "slaveof": true, "wait": true,
}

// call is redis.call(...) at a Lua line (scriptCall, R 7.2.4
// src/script.c:300-560): the arity and command checks, then, before the
// script's first write, the READONLY and NOREPLICAS checks
// (scriptVerifyWriteCommandAllow, script.c:344-394) and the OOM check
// (scriptVerifyOOM, R 7.0.15 script.c:401-422); an error reply raises
// a Lua error that aborts the script. Effects already done stay (Redis
// scripts do not roll back).
func (x *scriptRun) call(line int, a ...string) (Value, bool) {
	if x.nilArg {
		x.nilArg = false
		x.raise(line, "ERR Lua redis lib command arguments must be strings or integers")
		return Value{}, false
	}
	n := x.n
	top := lookupCommand(a[0])
	spec := top
	if spec != nil && spec.subs != nil && len(a) >= 2 {
		spec = lookupLower(spec.subs, a[1])
	}
	if spec == nil {
		x.raise(line, "ERR Unknown Redis command called from script")
		return Value{}, false
	}
	if (spec.arity > 0 && spec.arity != len(a)) || len(a) < -spec.arity {
		x.raise(line, "ERR Wrong number of args calling Redis command from script")
		return Value{}, false
	}
	if top.noScript {
		x.raise(line, "ERR This Redis command is not allowed from script")
		return Value{}, false
	}
	if spec.write && !n.cur.scriptDirty {
		if n.isReplica() && n.cfg.ReplicaReadOnly && !n.cur.fromMaster {
			x.raise(line, errReadOnly.Str)
			return Value{}, false
		}
		if !n.goodReplicasOK() {
			x.raise(line, errNoReplicas.Str)
			return Value{}, false
		}
	}
	// scriptVerifyOOM (R 7.0.15 src/script.c:401-422): with maxmemory set,
	// a DENYOOM command before the script's first write is refused when
	// memory was over the limit at the start of the client's command
	// (pre_command_oom_state); the master's stream and the AOF are obeyed
	// (mustObeyClient). Once the script has written it cannot be stopped
	// in the middle.
	if n.cfg.MaxMemory > 0 && !n.cur.fromMaster && !n.loading && !n.cur.scriptDirty &&
		n.mem.preCommandOOM && denyOOM[spec.name] {
		x.raise(line, errOOM.Str)
		return Value{}, false
	}
	v := n.runSpec(spec, n.scriptArgv(a))
	if spec.write {
		n.cur.scriptDirty = true
	}
	if v.IsErr() {
		x.raise(line, v.Str)
		return Value{}, false
	}
	return v, true
}

func (x *scriptRun) failed() Value { return *x.err }

// scriptArgv copies the argv of a redis.call so that the caller's variadic
// slice does not escape (one allocation per call, two per release script):
// into a buffer the node reuses when nothing can keep the command, and into
// a fresh slice when the AOF or the backlog may keep it (propagate keeps a
// write's argv as its Cmd).
func (n *Node) scriptArgv(a []string) []string {
	if n.keepsProp() {
		c := n.carveWords(len(a))
		copy(c, a)
		return c
	}
	n.callArgv = append(n.callArgv[:0], a...)
	return n.callArgv
}

// luaEqStr is Lua's `reply == ARGV[i]`: a bulk reply (a Lua string) equal to
// an existing argument.
func luaEqStr(v Value, s string, ok bool) bool { return ok && v.Kind == KindBulk && v.Str == s }

// luaTruthy is Lua truthiness of a redis.call reply: only a nil bulk
// (false) is false.
func luaTruthy(v Value) bool { return v.Kind != KindNil }

// luaToNumber is tonumber(s) converted to a Redis reply: a number becomes
// an integer (truncated, luaReplyToRedisReply), anything else nil.
func luaToNumber(s string) Value {
	t := strings.TrimSpace(s)
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return Int(i)
	}
	if strings.HasPrefix(strings.ToLower(t), "0x") {
		if u, err := strconv.ParseUint(t[2:], 16, 64); err == nil {
			return Int(int64(u))
		}
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && !strings.ContainsAny(t, "iInN") {
		return Int(int64(f))
	}
	return Nil()
}

func runCompareAndDelete(x *scriptRun) Value {
	v, ok := x.call(1, "get", x.key(1))
	if !ok {
		return x.failed()
	}
	if a, has := x.argOpt(1); luaEqStr(v, a, has) {
		d, ok := x.call(2, "del", x.key(1))
		if !ok {
			return x.failed()
		}
		return d
	}
	return Int(0)
}

func runRedsyncDelete(x *scriptRun) Value {
	v, ok := x.call(1, "GET", x.key(1))
	if !ok {
		return x.failed()
	}
	if a, has := x.argOpt(1); luaEqStr(v, a, has) {
		d, ok := x.call(3, "DEL", x.key(1))
		if !ok {
			return x.failed()
		}
		return d
	}
	if v.Kind == KindNil {
		return Int(-1)
	}
	return Int(0)
}

func runRedsyncTouch(x *scriptRun) Value {
	v, ok := x.call(1, "GET", x.key(1))
	if !ok {
		return x.failed()
	}
	if a, has := x.argOpt(1); luaEqStr(v, a, has) {
		r, ok := x.call(2, "PEXPIRE", x.key(1), x.arg(2))
		if !ok {
			return x.failed()
		}
		return r
	}
	return Int(0)
}

func runRedsyncTouchSetNX(x *scriptRun) Value {
	v, ok := x.call(1, "GET", x.key(1))
	if !ok {
		return x.failed()
	}
	if a, has := x.argOpt(1); luaEqStr(v, a, has) {
		r, ok := x.call(2, "PEXPIRE", x.key(1), x.arg(2))
		if !ok {
			return x.failed()
		}
		return r
	}
	r, ok := x.call(3, "SET", x.key(1), x.arg(1), "PX", x.arg(2), "NX")
	if !ok {
		return x.failed()
	}
	if luaTruthy(r) {
		return Int(1)
	}
	return Int(0)
}

func runRedissonLock(x *scriptRun) Value {
	ex, ok := x.call(1, "exists", x.key(1))
	if !ok {
		return x.failed()
	}
	take := ex.Int == 0
	if !take {
		h, ok := x.call(1, "hexists", x.key(1), x.arg(2))
		if !ok {
			return x.failed()
		}
		take = h.Int == 1
	}
	if take {
		if _, ok := x.call(2, "hincrby", x.key(1), x.arg(2), "1"); !ok {
			return x.failed()
		}
		if _, ok := x.call(3, "pexpire", x.key(1), x.arg(1)); !ok {
			return x.failed()
		}
		return Nil()
	}
	p, ok := x.call(6, "pttl", x.key(1))
	if !ok {
		return x.failed()
	}
	return p
}

func runRedissonUnlock(x *scriptRun) Value {
	val, ok := x.call(1, "get", x.key(3))
	if !ok {
		return x.failed()
	}
	if val.Kind != KindNil {
		return luaToNumber(val.Str)
	}
	h, ok := x.call(5, "hexists", x.key(1), x.arg(3))
	if !ok {
		return x.failed()
	}
	if h.Int == 0 {
		return Nil()
	}
	counter, ok := x.call(8, "hincrby", x.key(1), x.arg(3), "-1")
	if !ok {
		return x.failed()
	}
	if counter.Int > 0 {
		if _, ok := x.call(10, "pexpire", x.key(1), x.arg(2)); !ok {
			return x.failed()
		}
		if _, ok := x.call(11, "set", x.key(3), "0", "px", x.arg(5)); !ok {
			return x.failed()
		}
		return Int(0)
	}
	if _, ok := x.call(14, "del", x.key(1)); !ok {
		return x.failed()
	}
	if _, ok := x.call(15, x.arg(4), x.key(2), x.arg(1)); !ok {
		return x.failed()
	}
	if _, ok := x.call(16, "set", x.key(3), "1", "px", x.arg(5)); !ok {
		return x.failed()
	}
	return Int(1)
}

func runRedissonRenew(x *scriptRun) Value {
	out := make([]Value, 0, len(x.keys))
	for i := 1; i <= len(x.keys); i++ {
		h, ok := x.call(3, "hexists", x.key(i), x.arg(i+1))
		if !ok {
			return x.failed()
		}
		if h.Int == 1 {
			if _, ok := x.call(4, "pexpire", x.key(i), x.arg(1)); !ok {
				return x.failed()
			}
			out = append(out, Int(1))
		} else {
			out = append(out, Int(0))
		}
	}
	return Array(out...)
}
