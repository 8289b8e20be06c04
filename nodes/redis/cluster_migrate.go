package redis

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

// Slot migration (resharding), as Redis 7.0.15 does it and `redis-cli
// --cluster reshard` drives it (clusterManagerMoveSlot, R 7.0.15
// src/redis-cli.c:4413-4485): CLUSTER SETSLOT slot IMPORTING on the target,
// MIGRATING on the source, CLUSTER GETKEYSINSLOT and MIGRATE ... KEYS in
// batches until the slot is empty, then SETSLOT slot NODE target on the
// target, the source and the other masters. Meanwhile the source answers
// -ASK for a key it no longer has, the target serves a client that sent
// ASKING, and a command on several keys of the slot of which only some are
// here gets -TRYAGAIN (getNodeByQuery, C 7.0.15 cluster.c:6656-6862).
//
// Simplifications (also in docs/design/redis-cluster.md):
//   - The DUMP payload MIGRATE sends is the model's own encoding of the
//     value (dumpPayload), not RDB's; only RESTORE and RESTORE-ASKING read
//     it, and DUMP itself is not modelled.
//   - MIGRATE blocks the node as Redis's synchronous socket calls do: every
//     client command waits until the target answered or the timeout
//     passed; bus and replication messages are still processed (Redis
//     processes nothing meanwhile; on one host the call takes well under a
//     millisecond). A socket error is not retried: it answers -IOERR at
//     once (Redis retries once when nothing was read, migrateCommand's
//     may_retry).
//   - CLUSTER GETKEYSINSLOT lists the slot's keys in key order (Redis: the
//     newest first, from the slot's key list, db.c slotToKeyAddEntry).
//   - A script's commands are not checked against the slot state
//     (scriptVerifyClusterState): a script runs on the keys it declared,
//     which EVAL's own check placed here.

// defaultMigrateTimeout is MIGRATE's timeout when given as 0 or less
// (migrateCommand, C 7.0.15 cluster.c:6313: "if (timeout <= 0) timeout =
// 1000").
const defaultMigrateTimeout = 1000 * time.Millisecond

// migrateOp is a MIGRATE in flight: its client, the keys sent and the
// target's answers so far.
type migrateOp struct {
	client  sim.ProcID
	reqID   uint64
	pooled  bool
	target  sim.ProcID
	keys    []string
	first   uint64 // id of the first RESTORE-ASKING; key i has first+i
	got     int
	copy    bool
	errText string   // the first error the target answered
	deleted []string // keys acknowledged and deleted here
	timer   sim.TimerID
}

// askingArgs reports whether args is the ASKING command.
func askingArgs(args []string) bool { return len(args) == 1 && strings.EqualFold(args[0], "asking") }

// resetAsking clears the client's ASKING flag after a command, unless the
// client is in MULTI or the command was ASKING itself (resetClient, R
// 7.0.15 src/networking.c:2087-2090).
func (n *Node) resetAsking(client sim.ProcID, args []string) {
	cs := n.cl
	if len(cs.asking) == 0 || askingArgs(args) || n.inMulti() {
		return
	}
	delete(cs.asking, client)
}

// cmdAsking is askingCommand (C 7.0.15 cluster.c:6593-6600): the client's
// next command (or transaction) may use a slot this node is importing.
func cmdAsking(n *Node, a []string) Value {
	if n.cl == nil {
		return Err("ERR This instance has cluster support disabled")
	}
	if n.cl.asking == nil {
		n.cl.asking = map[sim.ProcID]bool{}
	}
	n.cl.asking[n.cur.client] = true
	return OK()
}

// cmdReadOnly is readonlyCommand (C 7.0.15 cluster.c:6605-6612): the
// connection may read keys of its master's slots from this replica
// (CLIENT_READONLY, getNodeByQuery :6855-6861).
func cmdReadOnly(n *Node, a []string) Value {
	if n.cl == nil {
		return Err("ERR This instance has cluster support disabled")
	}
	if n.cl.readonly == nil {
		n.cl.readonly = map[sim.ProcID]bool{}
	}
	n.cl.readonly[n.cur.client] = true
	return OK()
}

// cmdReadWrite is readwriteCommand (cluster.c:6615-6622): it clears
// READONLY.
func cmdReadWrite(n *Node, a []string) Value {
	if n.cl == nil {
		return Err("ERR This instance has cluster support disabled")
	}
	delete(n.cl.readonly, n.cur.client)
	return OK()
}

// slotOpen reports the slot's migration state on this node: the node it
// migrates to and the node it imports from (-1 for none).
func (cs *clusterState) slotOpen(slot int) (to, from int) {
	to, from = -1, -1
	if t, ok := cs.migrating[slot]; ok {
		to = t
	}
	if f, ok := cs.importing[slot]; ok {
		from = f
	}
	return to, from
}

// lookupNodeID is clusterLookupNode by the 40-character node id.
func (cs *clusterState) lookupNodeID(id string) int {
	for i := range cs.nodes {
		if cs.nodes[i].nodeID == id {
			return i
		}
	}
	return -1
}

// keysInSlot returns the keys of a slot, sorted (countKeysInSlot counts
// them; logically expired keys not yet deleted count, as in Redis).
func (n *Node) keysInSlot(slot int) []string {
	var out []string
	for k := range n.db {
		if KeySlot(k) == slot {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// clusterSetSlot is CLUSTER SETSLOT slot MIGRATING|IMPORTING|STABLE|NODE
// (C 7.0.15 cluster.c:5428-5557).
func (n *Node) clusterSetSlot(a []string) Value {
	cs := n.cl
	if !cs.nodes[cs.me].master {
		return Err("ERR Please use SETSLOT only with masters.")
	}
	s, ok := parseLL(a[2])
	if !ok || s < 0 || s >= ClusterSlots {
		return Err("ERR Invalid or out of range slot")
	}
	slot := int(s)
	action := strings.ToLower(a[3])
	switch {
	case action == "migrating" && len(a) == 5:
		if int(cs.slots[slot]) != cs.me {
			return Err("ERR I'm not the owner of hash slot " + strconv.Itoa(slot))
		}
		t := cs.lookupNodeID(a[4])
		if t < 0 {
			return Err("ERR I don't know about node " + a[4])
		}
		if !cs.nodes[t].master {
			return Err("ERR Target node is not a master")
		}
		if cs.migrating == nil {
			cs.migrating = map[int]int{}
		}
		cs.migrating[slot] = t
	case action == "importing" && len(a) == 5:
		if int(cs.slots[slot]) == cs.me {
			return Err("ERR I'm already the owner of hash slot " + strconv.Itoa(slot))
		}
		f := cs.lookupNodeID(a[4])
		if f < 0 {
			return Err("ERR I don't know about node " + a[4])
		}
		if !cs.nodes[f].master {
			return Err("ERR Target node is not a master")
		}
		if cs.importing == nil {
			cs.importing = map[int]int{}
		}
		cs.importing[slot] = f
	case action == "stable" && len(a) == 4:
		delete(cs.importing, slot)
		delete(cs.migrating, slot)
	case action == "node" && len(a) == 5:
		t := cs.lookupNodeID(a[4])
		if t < 0 {
			return Err("ERR Unknown node " + a[4])
		}
		if !cs.nodes[t].master {
			return Err("ERR Target node is not a master")
		}
		keys := len(n.keysInSlot(slot))
		if int(cs.slots[slot]) == cs.me && t != cs.me && keys != 0 {
			return Err("ERR Can't assign hashslot " + strconv.Itoa(slot) + " to a different node while I still hold keys for this hash slot.")
		}
		if _, mig := cs.migrating[slot]; mig && keys == 0 {
			delete(cs.migrating, slot)
		}
		wasMine := int(cs.slots[slot]) == cs.me
		cs.setSlotOwner(slot, t)
		cs.recount()
		n.logfAttrs(EventClusterSlot, []sim.Attr{sim.Int64("slot", int64(slot)), sim.Str("node", cs.nodes[t].name)}, "slot %d assigned to %s (SETSLOT NODE)", slot, cs.nodes[t].name)
		// A master left without slots turns into a replica of the new
		// owner when cluster-allow-replica-migration is yes, the default
		// (cluster.c:5513-5520).
		if wasMine && t != cs.me && cs.nodes[cs.me].numSlots == 0 && cs.cfg.AllowReplicaMigration {
			n.clusterSetMaster(t)
			cs.todo |= todoSaveConfig | todoUpdateState
		}
		if _, imp := cs.importing[slot]; imp && t == cs.me {
			// "This slot was manually migrated, set this node configEpoch
			// to a new epoch so that the new version can be propagated by
			// the cluster" (cluster.c:5530-5546), and tell everyone.
			n.bumpConfigEpochWithoutConsensus()
			delete(cs.importing, slot)
			cs.broadcast(n, func() *BusMsg { return &BusMsg{Type: BusPong} })
		}
	default:
		return Err("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	}
	cs.todo |= todoSaveConfig | todoUpdateState
	return OK()
}

// bumpConfigEpochWithoutConsensus is clusterBumpConfigEpochWithoutConsensus
// (C 7.0.15 cluster.c:1324-1341): unless this node's configEpoch is already
// the greatest it knows (clusterGetMaxEpoch: every node's configEpoch and
// the currentEpoch), take currentEpoch+1. It reports whether it bumped.
func (n *Node) bumpConfigEpochWithoutConsensus() bool {
	cs := n.cl
	max := cs.currentEpoch
	for i := range cs.nodes {
		if cs.nodes[i].configEpoch > max {
			max = cs.nodes[i].configEpoch
		}
	}
	me := &cs.nodes[cs.me]
	if me.configEpoch != 0 && me.configEpoch == max {
		return false
	}
	cs.currentEpoch++
	me.configEpoch = cs.currentEpoch
	n.logfAttrs(EventClusterSlot, []sim.Attr{sim.Int64("config_epoch", int64(me.configEpoch))}, "new configEpoch set to %d", me.configEpoch)
	n.clusterSaveConfig()
	return true
}

// clusterGetKeysInSlot is CLUSTER GETKEYSINSLOT slot count (C 7.0.15
// cluster.c:5668-5690).
func (n *Node) clusterGetKeysInSlot(a []string) Value {
	s, ok1 := parseLL(a[2])
	max, ok2 := parseLL(a[3])
	if !ok1 || !ok2 {
		return errNotInteger
	}
	if s < 0 || s >= ClusterSlots || max < 0 {
		return Err("ERR Invalid slot or number of keys")
	}
	keys := n.keysInSlot(int(s))
	if int64(len(keys)) > max {
		keys = keys[:max]
	}
	out := make([]Value, len(keys))
	for i, k := range keys {
		out[i] = Bulk(k)
	}
	return Array(out...)
}

// ---- MIGRATE, RESTORE ----

// migrateKeys are the keys of MIGRATE host port key|"" db timeout [COPY]
// [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS k...] (migrateGetKeys).
func migrateKeys(a []string) []string {
	for j := 6; j < len(a); j++ {
		if strings.EqualFold(a[j], "keys") && a[3] == "" {
			return a[j+1:]
		}
	}
	if len(a) > 3 && a[3] != "" {
		return a[3:4]
	}
	return nil
}

// cmdMigrate is migrateCommand (C 7.0.15 cluster.c:6245-6580): the keys
// still here (none: +NOKEY) go to host as RESTORE-ASKING key ttl payload
// [REPLACE], ttl the time left in ms (at least 1; 0 for no deadline), and
// the node blocks until the target answered each. A key the target
// accepted is deleted here (unless COPY) and the deletions are propagated
// as one DEL; the first error the target answered is the reply. host is a
// process name in the model (the node's address).
func cmdMigrate(n *Node, a []string) Value {
	if n.cur.inScript {
		return errNotModelled("MIGRATE in a script")
	}
	copyOpt, replace := false, false
	keys := []string{a[3]}
	for j := 6; j < len(a); j++ {
		more := len(a) - 1 - j
		switch strings.ToLower(a[j]) {
		case "copy":
			copyOpt = true
		case "replace":
			replace = true
		case "auth":
			if more < 1 {
				return errSyntax
			}
			j++
		case "auth2":
			if more < 2 {
				return errSyntax
			}
			j += 2
		case "keys":
			if a[3] != "" {
				return Err("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
			}
			keys = a[j+1:]
			j = len(a)
		default:
			return errSyntax
		}
	}
	timeout, ok1 := parseLL(a[5])
	_, ok2 := parseLL(a[4])
	if !ok1 || !ok2 {
		return errNotInteger
	}
	d := time.Duration(timeout) * time.Millisecond
	if timeout <= 0 {
		d = defaultMigrateTimeout
	}
	var here []string
	for _, k := range keys {
		if n.lookup(k, false) != nil {
			here = append(here, k)
		}
	}
	if len(here) == 0 {
		return Status("NOKEY")
	}
	target, ok := n.env.Lookup(a[1])
	if !ok || target == n.env.ID() {
		// migrateGetSocket: the connection cannot be made.
		return Err("IOERR error or timeout connecting to the client")
	}
	op := &migrateOp{client: n.cur.client, reqID: n.cur.reqID, pooled: n.cur.pooled, target: target, copy: copyOpt, first: n.migSeq + 1}
	for _, k := range here {
		e := n.db[k]
		var ttl int64
		if e.hasExp {
			ttl = e.exp - n.env.WallMs() // getExpire - mstime()
			if ttl < 0 {
				continue // expired meanwhile: not sent
			}
			if ttl < 1 {
				ttl = 1
			}
		}
		args := []string{"RESTORE-ASKING", k, strconv.FormatInt(ttl, 10), dumpPayload(e)}
		if replace {
			args = append(args, "REPLACE")
		}
		n.migSeq++
		op.keys = append(op.keys, k)
		n.env.Send(target, Request{ID: n.migSeq, Args: args})
	}
	if len(op.keys) == 0 {
		return OK()
	}
	op.timer = n.env.After(sim.Mono, d, tagMigrate)
	n.mig = op
	n.cur.blocked = true
	n.logfAttrs(EventClusterSlot, []sim.Attr{sim.Str("target", a[1]), sim.Int64("keys", int64(len(op.keys)))}, "MIGRATE %d keys to %s", len(op.keys), a[1])
	return Nil()
}

// onMigrateReply takes the target's answer to one RESTORE-ASKING.
func (n *Node) onMigrateReply(from sim.ProcID, m Reply) {
	op := n.mig
	if op == nil || from != op.target || m.ID < op.first || m.ID >= op.first+uint64(len(op.keys)) {
		return // late: the MIGRATE timed out
	}
	n.now = n.env.WallMs()
	k := op.keys[m.ID-op.first]
	op.got++
	if m.Value.Kind == KindError {
		if op.errText == "" {
			op.errText = m.Value.Str
		}
	} else if !op.copy {
		if _, ok := n.db[k]; ok {
			n.removeKey(k)
			n.dirty++
			if !n.quiet {
				n.logBytes(EventKeyDel, appendQuote(n.scratch[:0], k), sim.Str("key", k))
			}
		}
		op.deleted = append(op.deleted, k)
	}
	if op.got < len(op.keys) {
		return
	}
	n.env.Cancel(op.timer)
	n.migrateDone(Value{})
}

// migrateFailed ends a MIGRATE whose connection failed or timed out:
// the keys acknowledged so far stay deleted, the client gets -IOERR
// (migrateCommand's socket_err).
func (n *Node) migrateFailed(connEnded bool) {
	if n.mig == nil {
		return
	}
	if connEnded {
		n.env.Cancel(n.mig.timer)
	}
	n.now = n.env.WallMs()
	n.migrateDone(Err("IOERR error or timeout reading to target instance"))
}

// migrateDone propagates the deletions as one DEL, answers the client
// (v, or +OK / the target's first error when v is the zero Value) and
// runs the commands that waited.
func (n *Node) migrateDone(v Value) {
	op := n.mig
	n.mig = nil
	n.cur = execCtx{client: op.client, reqID: op.reqID, pooled: op.pooled}
	if len(op.deleted) > 0 {
		n.propagate(Cmd(append([]string{"DEL"}, op.deleted...)))
	}
	n.endUnit(op.client)
	switch {
	case v.Kind == KindError:
	case op.errText != "":
		v = Err("ERR Target instance replied with error: " + op.errText)
	default:
		v = OK()
	}
	n.reply(op.client, op.reqID, op.pooled, v)
	held := n.migHeld
	n.migHeld = nil
	for i, r := range held {
		n.handleRequest(r.client, r.id, r.args, r.pooled)
		if n.mig != nil {
			// Another MIGRATE blocked the node again: the rest wait.
			n.migHeld = append(n.migHeld, held[i+1:]...)
			return
		}
	}
}

// migrateConnEnded fails a MIGRATE whose target's connection ended.
func (n *Node) migrateConnEnded(peer sim.ProcID) {
	if n.mig != nil && n.mig.target == peer {
		n.migrateFailed(true)
	}
}

// dumpPayload is the model's DUMP payload of a value: "s" and the string,
// or "h" and the hash's fields and values in field order, each as its
// length, ':' and the bytes. (Redis's is the RDB encoding with a version
// and a CRC64, createDumpPayload.)
func dumpPayload(e *entry) string {
	var b strings.Builder
	if !e.isHash {
		b.WriteString("s")
		b.WriteString(e.str)
		return b.String()
	}
	b.WriteString("h")
	fields := make([]string, 0, len(e.hash))
	for f := range e.hash {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		for _, s := range []string{f, e.hash[f]} {
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
	}
	return b.String()
}

// parseDump reads a dumpPayload: the string, or the hash.
func parseDump(p string) (str string, hash map[string]string, ok bool) {
	if p == "" {
		return "", nil, false
	}
	if p[0] == 's' {
		return p[1:], nil, true
	}
	if p[0] != 'h' {
		return "", nil, false
	}
	hash = map[string]string{}
	rest := p[1:]
	var pair [2]string
	for i := 0; rest != ""; i++ {
		c := strings.IndexByte(rest, ':')
		if c <= 0 {
			return "", nil, false
		}
		l, err := strconv.Atoi(rest[:c])
		if err != nil || l < 0 || c+1+l > len(rest) {
			return "", nil, false
		}
		pair[i%2] = rest[c+1 : c+1+l]
		rest = rest[c+1+l:]
		if i%2 == 1 {
			hash[pair[0]] = pair[1]
		}
	}
	return "", hash, true
}

// cmdRestore is restoreCommand (C 7.0.15 cluster.c:6022-6125), for
// RESTORE and RESTORE-ASKING: key ttl payload [REPLACE] [ABSTTL]
// (IDLETIME and FREQ are not modelled). An existing key is BUSYKEY unless
// REPLACE; a relative ttl becomes an absolute deadline on this node's
// clock, and the command is propagated with it and ABSTTL.
func cmdRestore(n *Node, a []string) Value {
	replace, absttl := false, false
	for j := 4; j < len(a); j++ {
		switch strings.ToLower(a[j]) {
		case "replace":
			replace = true
		case "absttl":
			absttl = true
		default:
			return errSyntax
		}
	}
	key := a[1]
	if !replace && n.lookup(key, true) != nil {
		return Err("BUSYKEY Target key name already exists.")
	}
	ttl, ok := parseLL(a[2])
	if !ok {
		return errNotInteger
	}
	if ttl < 0 {
		return Err("ERR Invalid TTL value, must be >= 0")
	}
	str, hash, ok := parseDump(a[3])
	if !ok {
		return Err("ERR DUMP payload version or checksum are wrong")
	}
	deleted := false
	if replace {
		if _, had := n.db[key]; had {
			n.removeKey(key)
			deleted = true
		}
	}
	if ttl != 0 && !absttl {
		ttl += n.env.WallMs()
	}
	if ttl != 0 && ttl <= n.env.WallMs() && !n.isReplica() && !n.loading {
		// checkAlreadyExpired: the key is not created (a replaced one is
		// deleted, and that is what is propagated).
		if deleted {
			n.dirty++
			n.propagate(Cmd{"DEL", key})
		}
		return OK()
	}
	if hash != nil {
		e := n.newEntry()
		e.isHash, e.hash = true, hash
		n.db[key] = e
		n.forgetMemo()
		n.keyModified(key)
	} else {
		n.setString(key, str, false)
		n.db[key].setBy = 0 // restored by the migrating node, not stored by a client
	}
	prop := Cmd(append([]string(nil), a...))
	if ttl != 0 {
		n.setExpire(key, ttl)
		if !absttl {
			prop[2] = strconv.FormatInt(ttl, 10)
			prop = append(prop, "ABSTTL")
		}
	}
	n.dirty++
	n.propagate(prop)
	n.logKeySet(key)
	return OK()
}
