package sim

import (
	"fmt"
	"sync"
)

// The memory budget's default follows the memory the process may use
// (issue 28): a shard in a pod with a 1 GiB limit must stop a runaway run
// with the budget's message (exit 3), not be killed by the kernel's OOM
// killer, and a process under `ulimit -v` must not die in the Go runtime's
// "fatal error: out of memory" before the budget is reached.

// MemoryLimit is the memory this process may use: the smallest of its
// cgroup's memory limit (v2 memory.max or v1 memory.limit_in_bytes, of its
// own cgroup and every ancestor), its address-space and data limits
// (RLIMIT_AS, RLIMIT_DATA: `ulimit -v`, `ulimit -d`) and the machine's
// physical memory. Bytes is 0 when none is known.
type MemoryLimit struct {
	Bytes int64
	// Source names where Bytes comes from, for messages
	// ("the cgroup's memory limit (memory.max)").
	Source string
	// Virtual is true when Bytes limits address space (RLIMIT_AS), not
	// memory in use: the Go runtime reserves far more address space than
	// it uses (see addressSpaceBase).
	Virtual bool
}

func (l MemoryLimit) String() string {
	if l.Bytes <= 0 {
		return "no known memory limit"
	}
	return FormatBytes(l.Bytes) + ", " + l.Source
}

// maxProcessMemory is the memory the defaults let a process use when the
// process may use more (or no limit is known): a runaway scenario is
// stopped at a size that fits a laptop. The default budget is
// DefaultBudgetPercent of it and the runtime's soft limit stays below it,
// so that the process stays within it (issue 33 item 8: with a 4 GiB
// budget, a runaway reached 4.06 GB before it stopped).
const maxProcessMemory int64 = 2 << 30

// maxDefaultMemory is the largest default budget: DefaultBudgetPercent of
// maxProcessMemory.
const maxDefaultMemory = maxProcessMemory / 100 * DefaultBudgetPercent

// effectiveLimit is l, or maxProcessMemory when l is larger or unknown.
func effectiveLimit(l MemoryLimit) MemoryLimit {
	if l.Bytes <= 0 || !l.Virtual && l.Bytes > maxProcessMemory {
		return MemoryLimit{Bytes: maxProcessMemory, Source: "simrun's default ceiling"}
	}
	return l
}

// DefaultBudgetPercent is the share of the process's memory limit (of
// memory in use: a cgroup's limit, physical memory) that the default
// budget gives the heap. The budget is checked on the bytes of heap
// objects every few thousand events; the rest of the limit is headroom for
// what that figure does not count: the garbage not yet collected, a large
// slice being copied as it grows (the old and the new array are both live
// while append copies), goroutine stacks, the runtime's own structures and,
// under an address-space limit, address space the runtime has reserved but
// not used.
const DefaultBudgetPercent = 40

// addressSpaceBase is the address space a Go process reserves before its
// heap counts: the runtime's page summaries, arenas' metadata and the
// binary. Measured: simrun does not start under `ulimit -v 524288`
// ("failed to reserve page summary memory") and a small run shows a virtual
// size of about 2 GB at 0.35 GB resident. Past it, a growing heap costs
// about five times its size in address space (a slice that grows
// takes a new, larger block and the old one's addresses stay reserved), so
// the default budget under an address-space limit is an eighth of what is
// left above this base (twice the margin that was measured to be needed:
// two clients taking turns for 1000 hours died in the runtime at 271 MB
// resident under `ulimit -v 2097152` with a quarter).
const addressSpaceBase int64 = 5 << 28

// memoryLimitProbe reads the limits; a variable so that tests can replace
// what the machine says.
var memoryLimitProbe = probeMemoryLimit

var processLimit struct {
	once sync.Once
	l    MemoryLimit
}

// ProcessMemoryLimit returns the memory this process may use (read once).
func ProcessMemoryLimit() MemoryLimit {
	processLimit.once.Do(func() { processLimit.l = memoryLimitProbe() })
	return processLimit.l
}

// DefaultMaxMemory is the memory budget of a run that sets none:
// DefaultBudgetPercent of the process's memory limit or of 2 GiB,
// whichever is smaller.
func DefaultMaxMemory() int64 { return defaultBudgetFor(ProcessMemoryLimit()) }

func defaultBudgetFor(l MemoryLimit) int64 {
	l = effectiveLimit(l)
	b := l.Bytes / 100 * DefaultBudgetPercent
	if l.Virtual {
		b = (l.Bytes - addressSpaceBase) / 8
	}
	if b > maxDefaultMemory {
		b = maxDefaultMemory
	}
	// The smallest budget a run can use (simrun refuses --max-memory below
	// 1 MiB): a limit this low leaves nothing to run in anyway.
	if b < 1<<20 {
		b = 1 << 20
	}
	return b
}

// DefaultBudgetNote says how the default budget was derived, for the
// message that stops a run and for --help.
func DefaultBudgetNote() string {
	l := ProcessMemoryLimit()
	if l.Bytes <= 0 || defaultBudgetFor(l) == maxDefaultMemory {
		return fmt.Sprintf("the default, %s: %d%% of the %s a process may use by default (no smaller memory limit is set for this process)",
			FormatBytes(maxDefaultMemory), DefaultBudgetPercent, FormatBytes(maxProcessMemory))
	}
	if l.Virtual {
		return fmt.Sprintf("the default, an eighth of the %s of address space this process may use (%s) above the %s the Go runtime reserves",
			FormatBytes(l.Bytes), l.Source, FormatBytes(addressSpaceBase))
	}
	return fmt.Sprintf("the default, %d%% of the %s this process may use (%s)",
		DefaultBudgetPercent, FormatBytes(l.Bytes), l.Source)
}

// RuntimeMemoryLimit is the soft limit to give the Go runtime
// (debug.SetMemoryLimit, GOMEMLIMIT) for a heap budget: the budget itself,
// so that the collector works hard before garbage alone could trip it, but
// never above the process's limit less an eighth of it (at least 64 MiB) of
// headroom for what the runtime's figure does not control.
func RuntimeMemoryLimit(budget int64) int64 {
	l := ProcessMemoryLimit()
	ceiling := int64(0)
	if l.Bytes > 0 {
		head := l.Bytes / 8
		if head < 64<<20 {
			head = 64 << 20
		}
		ceiling = l.Bytes - head
		if l.Virtual {
			ceiling = (l.Bytes - addressSpaceBase) / 2
		}
		if ceiling < 1<<20 {
			ceiling = 1 << 20
		}
	}
	switch {
	case budget > 0 && (ceiling == 0 || budget < ceiling):
		return budget
	case ceiling > 0:
		return ceiling
	}
	return 0 // no limit to set
}
