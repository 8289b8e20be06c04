// Package checker turns the history of a locksim run into verdicts a design
// review can trust.
//
// It answers separate questions, because a fenced resource can stay
// consistent while the lock itself failed:
//
//   - Lock safety: did two belief periods of a lock overlap in true time? It
//     is decided by porcupine with an owner-aware mutex model (LockModel).
//   - Resource safety: is the sequence of critical sections on the protected
//     resource explained by some order in which each accepted write
//     incremented the value it read? It is decided by porcupine with a
//     fetch-and-increment counter model (ResourceModel).
//   - Liveness: once the faults have settled, did every client that wanted a
//     lock get it within its bound? It is measured directly on the wants.
//   - Token order: did the resource accept a lower fencing token after a
//     higher one, or one token from two grants? It is decided directly on
//     the accepted writes.
//
// Porcupine's memory grows with the square of the history it checks, so the
// checker cuts each lock's and each resource's history at quiet points (no
// belief open, no critical section in flight) and checks the pieces one at a
// time: exactly, because a violation cannot span such a cut (split.go says
// why), and in memory bounded by the largest piece.
//
// Porcupine always runs with a timeout; a timeout is reported as the verdict
// Unknown, which never counts as a pass. The words that explain a violation
// (who overlapped with whom, which update was lost, which faults came first)
// are computed directly from the history, not from porcupine's output, so they
// are deterministic.
//
// Each property is a value (Property) in its own file, judged on a whole
// history (Judge) and on a history handed over in pieces (Stream), and
// listed once in the ordered registry of property.go: Check, Stream and
// every output iterate the registry (docs/design/extending.md, "Adding a
// property"), and a Result's verdicts are a list in its order (Verdicts).
//
// The checker reads only the history types of package sim and uses porcupine;
// it must not import the nodes, clients or any other locksim package.
package checker
