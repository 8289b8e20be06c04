package fuzz

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Each runs job(i) for every run number i in [first, end) on workers
// goroutines: the one worker pool of simrun fuzz, sweep and matrix. end < 0
// means no end: runs go on until ctx is done.
//
// Workers claim run numbers in increasing order and never start one after
// ctx is done; every claimed run finishes. So the runs done are always the
// prefix first..first+done-1, whatever the number of workers, and Each
// returns done. collect receives each result on the calling goroutine, one
// at a time, in completion order (which varies with scheduling: callers
// store results by run number, never by arrival).
//
// workers <= 0 means runtime.NumCPU().
func Each[R any](ctx context.Context, first, end, workers int, job func(run int) R, collect func(run int, r R)) (done int) {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if end >= 0 && end-first < workers {
		workers = max(end-first, 1)
	}
	type item struct {
		run int
		r   R
	}
	var next atomic.Int64
	next.Store(int64(first))
	results := make(chan item, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				run := int(next.Add(1) - 1)
				if end >= 0 && run >= end {
					return
				}
				results <- item{run, job(run)}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	for it := range results {
		done++
		if collect != nil {
			collect(it.run, it.r)
		}
	}
	return done
}
