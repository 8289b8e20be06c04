// Package storage is the protected resource: a counter served over the
// simulated network. Lock clients read it at the start of a critical section
// and write value+1 at its end; the storage node is the ground truth of which
// reads were served and which writes were applied, and records it in the
// history (sim.Env.SectionRead and SectionWriteDecided) for the checker.
//
// # Fencing modes
//
// Config.Fencing chooses how the resource defends itself against a client
// that acts on a lock it no longer holds. Each mode is the remedy of one of
// the 2016 articles (reference/redis-and-lock-clients.md, section 6):
//
//   - none: the resource accepts every read and write. Any lease lock is then
//     exposed to a paused client or a delayed write (Kleppmann's S1 and S2).
//   - monotonic: Kleppmann, "How to do distributed locking" (2016), section
//     "Making the lock safe with fencing": the lock service hands out a token
//     that increases with every grant and the storage "remembers that it has
//     already processed a write with a higher token number (34), and so it
//     rejects the request with token 33". Only writes are checked and only
//     writes raise the mark; a write with a token equal to the highest seen is
//     accepted (the same holder writing twice). Reads are never checked.
//     NB: because reads do not raise the mark, two sections can read the same
//     value and both have their writes accepted when the lower token writes
//     first (tokens 2 and 3 both read 1, token 2 writes 2, token 3 writes 2):
//     a lost update that write-only fencing cannot see.
//   - mark: Junqueira, "Note on fencing and distributed locks" (2016): before
//     using the resource the client marks it with its epoch (the zxid of its
//     lock znode); reads and writes carry the token, any operation with a
//     token lower than the highest seen on any operation is rejected, and a
//     read with a higher token raises the mark. This closes the lost update
//     above: token 3's read raises the mark to 3 and token 2's write is
//     rejected.
//   - token-cas: antirez, "Is Redlock safe?" (2016), his third point on
//     fencing: with a unique random lock value the resource can do a
//     check-and-set. A critical section first sends SetLockReq to set the
//     resource's current-lock field to its LockValue; a write succeeds only if
//     the field still holds the writer's LockValue, checked and written
//     atomically. The field is set unconditionally (the newest holder wins),
//     so a stale holder's write fails once a newer holder has set its value.
//
// Requests without a token (HasToken false): mode none accepts them; modes
// monotonic and mark reject them (the resource demands a token: an unfenced
// access would bypass the check) except that monotonic, which checks only
// writes, serves tokenless reads. token-cas ignores tokens and checks the
// LockValue instead; a write with an empty LockValue is rejected. SetLockReq
// is accepted in every mode but only token-cas consults the field.
//
// # Durability
//
// The resource is durable, as the articles assume: every state change (the
// value, the marks, the current-lock field) is appended to the file
// "resource" on env.Disk() and fsynced before the reply is sent, and Init
// recovers the last record, so a restart after a process or power crash
// loses nothing. Scenarios never crash the storage node; the persistence
// keeps it correct if one does.
//
// Simplification: a storage node is one counter; the checker models one
// counter per lock name, so a scenario with several locks needs one storage
// node per lock. Request IDs are echoed but not deduplicated (the network
// never duplicates messages).
//
// storage imports only sim.
package storage
