package sentinel

import (
	"strconv"

	"github.com/locksim/locksim/nodes/redis/resp"
	"github.com/locksim/locksim/sim"
)

// Pub/Sub: clients SUBSCRIBE to a sentinel's event channels and get every
// event it publishes (sentinelEvent, sentinel.c:669-724: an event of any
// level but LL_DEBUG is published with pubsubPublishMessage to the channel
// named by its type, "+switch-master", "+sdown" ..., sentinel.c:706-713).
// go-redis' failover client subscribes to +switch-master this way and
// follows the master it names (sentinel.go:1262, 1292-1316 of go-redis
// v9.23.0).
//
// Simplifications: only SUBSCRIBE (no PSUBSCRIBE, UNSUBSCRIBE, PUBLISH);
// a subscription lives on the kernel's one connection per pair of
// processes, identified by the ID of its SUBSCRIBE request (resp.Push.Sub),
// not on a connection of its own, and ends with that connection; a
// subscribed client may still send other commands (Redis 7.2 refuses them
// on a RESP2 subscribed connection, server.c:4062-4080, which is why
// clients subscribe on a connection of their own); PING answers +PONG, not
// the subscribed form ["pong", ""] (server.c:4516-4522).

// subscription is one SUBSCRIBE of a client: the channels in the order
// they were subscribed (pubsubSubscribeChannel, pubsub.c:246-269).
type subscription struct {
	to       sim.ProcID
	id       uint64
	channels []string
}

// subscribe is subscribeCommand (pubsub.c:534-550): every channel is
// confirmed with ["subscribe", channel, count] (addReplyPubsubSubscribed,
// pubsub.c:138-150), count being the client's channels so far; the first
// confirmation is the reply to the request, the others follow as pushes.
func (s *Sentinel) subscribe(from sim.ProcID, id uint64, args []string) {
	if len(args) < 2 {
		s.env.Send(from, resp.Reply{ID: id, Value: resp.Err("ERR wrong number of arguments for 'subscribe' command")})
		return
	}
	sub := subscription{to: from, id: id}
	for i, ch := range args[1:] {
		if !contains(sub.channels, ch) {
			sub.channels = append(sub.channels, ch)
		}
		v := resp.Array(resp.Bulk("subscribe"), resp.Bulk(ch), resp.Int(int64(len(sub.channels))))
		if i == 0 {
			s.env.Send(from, resp.Reply{ID: id, Value: v})
		} else {
			s.env.Send(from, resp.Push{Sub: id, Value: v})
		}
	}
	s.subs = append(s.subs, sub)
}

// publish is pubsubPublishMessage (pubsub.c:470-527) for a sentinel
// event: every subscription to the channel gets ["message", channel,
// payload], in the order the subscriptions were made (the channel's client
// list, appended to by pubsubSubscribeChannel).
func (s *Sentinel) publish(channel, payload string) {
	for _, sub := range s.subs {
		if contains(sub.channels, channel) {
			s.env.Send(sub.to, resp.Push{Sub: sub.id, Value: resp.Array(resp.Bulk("message"), resp.Bulk(channel), resp.Bulk(payload))})
		}
	}
}

// dropSubscriptions forgets the subscriptions of a client whose
// connection ended (freeClient unsubscribes it from every channel).
func (s *Sentinel) dropSubscriptions(peer sim.ProcID) {
	kept := s.subs[:0]
	for _, sub := range s.subs {
		if sub.to != peer {
			kept = append(kept, sub)
		}
	}
	for i := len(kept); i < len(s.subs); i++ {
		s.subs[i] = subscription{}
	}
	s.subs = kept
}

// instanceText renders sentinelEvent's "%@" (sentinel.c:676-690) for ri:
// "<type> <name> <ip> <port>", and for a replica or a sentinel
// " @ <master-name> <master-ip> <master-port>" after it. A replica's or a
// sentinel's name is "ip:port" (createSentinelRedisInstance); the type is
// sentinelRedisInstanceTypeStr's "master", "slave" or "sentinel". A
// process name stands for the ip; sentinels listen on sentinelPort.
func (s *Sentinel) instanceText(ri *instance) string {
	switch ri.kind {
	case kindMaster:
		return "master " + s.m.name + " " + ri.name + " " + portString
	case kindReplica:
		return "slave " + ri.name + ":" + portString + " " + ri.name + " " + portString + s.atMaster()
	}
	p := strconv.Itoa(sentinelPort)
	return "sentinel " + ri.name + ":" + p + " " + ri.name + " " + p + s.atMaster()
}

// atMaster is the " @ <master-name> <master-ip> <master-port>" of a
// non-master instance's "%@".
func (s *Sentinel) atMaster() string {
	return " @ " + s.m.name + " " + s.m.ri.name + " " + portString
}

// sentinelPort is the port sentinels listen on (sentinel.conf: port 26379).
const sentinelPort = 26379

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
