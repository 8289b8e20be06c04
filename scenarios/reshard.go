package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/nodes/redis"
	"github.com/locksim/locksim/sim"
)

// KindReshard is the trace kind of the operator's resharding steps: each
// command it sends for a reshard fault and the reply.
const KindReshard sim.Kind = "reshard-step"

// The operator runs the reshard fault as redis-cli --cluster reshard moves
// one slot (clusterManagerMoveSlot, R 7.0.15 src/redis-cli.c:4413-4485):
// CLUSTER SETSLOT slot IMPORTING source-id on the target, MIGRATING
// target-id on the source, then CLUSTER GETKEYSINSLOT slot 10 and MIGRATE
// target 6379 "" 0 60000 KEYS ... on the source until the slot is empty
// (clusterManagerMigrateKeysInSlot, :4247-4400, pipeline 10 and timeout
// 60000, CLUSTER_MANAGER_MIGRATE_PIPELINE/TIMEOUT :85-86), then SETSLOT
// slot NODE target-id on the target, the source (its "Please use SETSLOT
// only with masters" is accepted, :4451-4458) and every other master. It
// learns the node ids with CLUSTER MYID (redis-cli reads CLUSTER NODES).
// The fault's hold keeps the slot open that long after its keys moved
// (a reshard stopped half-way, or the other slots of a long one).
//
// Simplifications: an error ends the reshard where it is, leaving the slot
// open, as redis-cli exits on one (it does not retry a BUSYKEY with
// REPLACE after comparing the values); like redis-cli, the operator waits
// for each reply without a timeout.
const (
	reshardPipeline = 10    // CLUSTER_MANAGER_MIGRATE_PIPELINE
	reshardTimeout  = 60000 // CLUSTER_MANAGER_MIGRATE_TIMEOUT, ms
)

// reshard is one reshard fault in progress.
type reshard struct {
	op             *operator
	slot           int
	from, to       sim.ProcID
	fromID, toID   string
	others         []sim.ProcID
	hold           time.Duration
	fromName, toNm string
}

// startReshard begins a reshard fault and returns its record text.
func (o *operator) startReshard(from, to sim.ProcID, key string, hold time.Duration, masters []string) string {
	r := &reshard{op: o, slot: redis.KeySlot(key), from: from, to: to, hold: hold}
	r.fromName, r.toNm = o.env.NameOf(from), o.env.NameOf(to)
	for _, m := range masters {
		if id, ok := o.env.Lookup(m); ok && id != from && id != to {
			r.others = append(r.others, id)
		}
	}
	r.step(to, []string{"CLUSTER", "MYID"}, func(v redis.Value) {
		r.toID = v.Str
		r.step(from, []string{"CLUSTER", "MYID"}, func(v redis.Value) {
			r.fromID = v.Str
			r.step(to, []string{"CLUSTER", "SETSLOT", r.slotS(), "IMPORTING", r.fromID}, func(redis.Value) {
				r.step(from, []string{"CLUSTER", "SETSLOT", r.slotS(), "MIGRATING", r.toID}, func(redis.Value) { r.migrate() })
			})
		})
	})
	text := fmt.Sprintf("slot %d (key %q) migrates from %s to %s as redis-cli --cluster reshard moves it", r.slot, key, r.fromName, r.toNm)
	if hold > 0 {
		text += fmt.Sprintf(", held open %s after its keys moved", hold)
	}
	return text
}

func (r *reshard) slotS() string { return strconv.Itoa(r.slot) }

// migrate moves the slot's keys in batches, then closes the slot.
func (r *reshard) migrate() {
	r.step(r.from, []string{"CLUSTER", "GETKEYSINSLOT", r.slotS(), strconv.Itoa(reshardPipeline)}, func(v redis.Value) {
		if len(v.Array) == 0 {
			if r.hold > 0 {
				r.op.after(r.hold, r.close)
				return
			}
			r.close()
			return
		}
		args := []string{"MIGRATE", r.toNm, strconv.Itoa(redis.ListenPort), "", "0", strconv.Itoa(reshardTimeout), "KEYS"}
		for _, k := range v.Array {
			args = append(args, k.Str)
		}
		r.step(r.from, args, func(redis.Value) { r.migrate() })
	})
}

// close assigns the slot to the target on the target, the source and the
// other masters, in that order.
func (r *reshard) close() {
	node := []string{"CLUSTER", "SETSLOT", r.slotS(), "NODE", r.toID}
	r.step(r.to, node, func(redis.Value) {
		r.stepOr(r.from, node, "ERR Please use SETSLOT only with masters.", func(redis.Value) {
			var next func(i int)
			next = func(i int) {
				if i == len(r.others) {
					r.op.env.Logf(KindReshard, "slot %d now served by %s", r.slot, r.toNm)
					return
				}
				r.step(r.others[i], node, func(redis.Value) { next(i + 1) })
			}
			next(0)
		})
	})
}

// step sends a command and continues with then unless the reply is an
// error, which ends the reshard (logged).
func (r *reshard) step(to sim.ProcID, args []string, then func(redis.Value)) {
	r.stepOr(to, args, "", then)
}

// stepOr is step where an error starting with ok is accepted.
func (r *reshard) stepOr(to sim.ProcID, args []string, ok string, then func(redis.Value)) {
	o := r.op
	name := o.env.NameOf(to)
	o.request(to, args, func(v redis.Value) {
		if v.Kind == redis.KindError && (ok == "" || !strings.HasPrefix(v.Str, ok)) {
			o.env.Logf(KindReshard, "%s %s: -%s (the reshard of slot %d stops here)", name, strings.Join(args, " "), v.Str, r.slot)
			return
		}
		o.env.Logf(KindReshard, "%s %s: %s", name, quoteArgs(args), replyText(v))
		then(v)
	})
}

func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" {
			a = `""`
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func replyText(v redis.Value) string {
	switch v.Kind {
	case redis.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case redis.KindArray:
		var parts []string
		for _, e := range v.Array {
			parts = append(parts, e.Str)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return v.Str
}

// KindOperatorStep is the trace kind of an operator's single command
// (the manual-failover fault) and its reply.
const KindOperatorStep sim.Kind = "operator-step"

// clusterFailover sends CLUSTER FAILOVER [FORCE|TAKEOVER] to a cluster
// replica, as an operator with redis-cli would (R 7.0.15
// src/cluster.c:5784-5838), traces the reply and returns the fault's
// record text. The reply says only that the request was accepted: the
// failover itself (its election, or its timeout) is the node's.
func (o *operator) clusterFailover(node sim.ProcID, mode string) string {
	args := []string{"CLUSTER", "FAILOVER"}
	if mode != "" && mode != "default" {
		args = append(args, strings.ToUpper(mode))
	}
	name := o.env.NameOf(node)
	o.request(node, args, func(v redis.Value) {
		if v.Kind == redis.KindError {
			o.env.Logf(KindOperatorStep, "%s %s: -%s", name, strings.Join(args, " "), v.Str)
			return
		}
		o.env.Logf(KindOperatorStep, "%s %s: %s", name, strings.Join(args, " "), replyText(v))
	})
	return fmt.Sprintf("%s sent to %s", strings.Join(args, " "), name)
}
