package usercode

import (
	"fmt"
	"runtime"
	"sync"
)

// Runs in one process, and the process-global pools of libraries.
//
// A channel, timer or ticker made inside a synctest bubble belongs to it,
// and operating on it from another bubble, or from outside any, is a
// fatal error of the runtime ("select on synctest channel from outside
// bubble", runtime/select.go), which no recover catches: the whole test
// binary dies. Libraries keep such objects in process-global sync.Pools:
// go-redis v9.23.0 pools *time.Timer values in internal/semaphore.go
// (semTimers), made by New in whatever goroutine first needs one, and
// takes one whenever a caller waits for a turn on a busy connection pool
// (ConnPool.waitTurn, internal/pool/pool.go:1205-1236: one client used by
// two goroutines at once with PoolSize 1, a watchdog extending while the
// workload releases). A run that put a timer of its bubble there handed it
// to the next run that waited for a turn, which died at
// semaphore.go:106 (reference etcd-lua-coverage.md §4.1). Its
// autopipeline pools channels the same way (autopipeline.go:718).
//
// The library cannot be changed, and its pool cannot be reached; what
// locksim controls is when the pools may hold a bubble's objects:
//   - runs of user code in one process take turns (runTurn): two bubbles
//     alive at once (parallel tests) would hand each other their timers
//     while both run, which nothing between runs can undo;
//   - after each run, once every goroutine of its bubble has returned,
//     two garbage collections empty every sync.Pool in the process (a
//     collection moves a pool's items to its victim cache and drops the
//     previous victims: sync/pool.go poolCleanup), so no later run, and no
//     code outside a bubble, can take an object of the ended bubble;
//   - before the first run the same two collections drop what code
//     outside any bubble put there (a timer made outside a bubble, taken
//     inside one, is not durably blocking: the bubble's clock would never
//     move and the run would be reported as a hang).
//
// What cannot be prevented is detected: a Proc kept from an ended run and
// used in a later one (its channels belong to the ended bubble) panics
// with a message before it touches any of them (Proc.check), and the run
// fails with that panic, naming the client and the time. Clients made by
// Proc.Redis and Proc.Failover are closed at the end of their run, and a
// closed go-redis client answers ErrClosed before it touches its pool's
// channels (ConnPool.getConn, internal/pool/pool.go:874).
//
// NB: code outside any bubble that uses go-redis while a run is under way
// (a test of the same package talking to a real Redis in parallel) can
// still put its timers into the pool mid-run; keep such tests out of the
// package of user-code runs, or not parallel with them.
var (
	turn      sync.Mutex
	firstTurn sync.Once
)

// runTurn waits for the process's turn to run a bubble and returns the
// function that ends it (emptying the pools).
func runTurn() func() {
	turn.Lock()
	firstTurn.Do(emptyPools)
	return func() {
		emptyPools()
		turn.Unlock()
	}
}

// emptyPools drops every object of every sync.Pool in the process.
func emptyPools() {
	runtime.GC()
	runtime.GC()
}

// check panics when the Proc's run has ended: its channels and timers
// belong to a bubble that no longer exists, and using them from another
// would be a fatal error of the runtime.
func (p *Proc) check(what string) {
	if p.in.w.over.Load() {
		panic(fmt.Sprintf("locksim: Proc.%s of client %s, from a run that has ended (scenario %s), used in another run or outside one: its channels and timers belong to the ended run's synctest bubble, and Go would abort the process; build everything a run uses in the factory, from the Proc it is given", what, p.in.name, p.in.w.scenario))
	}
}
