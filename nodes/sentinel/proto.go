package sentinel

import "strconv"

// Messages between sentinels. Lock clients and Redis nodes talk to a
// sentinel with redis.Request and redis.Reply (PING, SENTINEL
// get-master-addr-by-name); sentinels talk to each other with the three types
// below, which carry exactly the fields of the real commands.

// Hello is a sentinel's periodic announcement of itself and of its view of
// the master (sentinelSendHello, sentinel.c:3017-3060: "sentinel_ip,
// sentinel_port,sentinel_runid,current_epoch,master_name,master_ip,
// master_port,master_config_epoch"). Real sentinels publish it on the
// __sentinel__:hello channel of the master and replicas and send it to the
// other sentinels with PUBLISH. Simplification: the model sends it only
// directly to the other sentinels, every 2 s, without a reply.
type Hello struct {
	// Sentinel is the sender's run id (its process name).
	Sentinel     string
	CurrentEpoch uint64
	MasterName   string
	// MasterAddr is the process name of the master in the sender's view.
	MasterAddr        string
	MasterPort        int
	MasterConfigEpoch uint64
}

// IsMasterDownReq is SENTINEL IS-MASTER-DOWN-BY-ADDR <ip> <port>
// <current-epoch> <runid> (sentinel.c:3950-4003): a sentinel that thinks the
// master is down asks the others whether they agree, and, when RunID is not
// "*", asks for their vote for RunID as the failover leader of Epoch.
type IsMasterDownReq struct {
	ID         uint64
	MasterAddr string
	MasterPort int
	Epoch      uint64
	RunID      string
}

// IsMasterDownReply answers an IsMasterDownReq with the real command's three
// elements: down state, leader ("*" when no vote was asked or none is
// available) and the epoch of that vote.
type IsMasterDownReply struct {
	ID          uint64
	Down        bool
	Leader      string
	LeaderEpoch uint64
}

// AppendTrace renders the hello for the trace.
func (h Hello) AppendTrace(b []byte) []byte {
	b = append(b, "hello "...)
	b = append(b, h.Sentinel...)
	b = strconv.AppendUint(append(b, " epoch "...), h.CurrentEpoch, 10)
	b = append(append(b, ' '), h.MasterName...)
	b = append(append(b, ' '), h.MasterAddr...)
	b = strconv.AppendInt(append(b, ' '), int64(h.MasterPort), 10)
	return strconv.AppendUint(append(b, " config-epoch "...), h.MasterConfigEpoch, 10)
}

// AppendTrace renders the request for the trace.
func (r IsMasterDownReq) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "req "...), r.ID, 10)
	b = append(b, " SENTINEL is-master-down-by-addr "...)
	b = append(b, r.MasterAddr...)
	b = strconv.AppendInt(append(b, ' '), int64(r.MasterPort), 10)
	b = strconv.AppendUint(append(b, ' '), r.Epoch, 10)
	return append(append(b, ' '), r.RunID...)
}

// AppendTrace renders the reply for the trace.
func (r IsMasterDownReply) AppendTrace(b []byte) []byte {
	b = strconv.AppendUint(append(b, "rep "...), r.ID, 10)
	if r.Down {
		b = append(b, " down 1 "...)
	} else {
		b = append(b, " down 0 "...)
	}
	b = append(b, r.Leader...)
	return strconv.AppendUint(append(b, ' '), r.LeaderEpoch, 10)
}
