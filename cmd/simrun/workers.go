package main

import (
	"runtime"

	"github.com/spf13/pflag"
)

// maxWorkersPerCPU bounds --workers: past a few workers per core, more
// only adds goroutines, worlds in memory and contention (issue 25:
// --workers 10000 was accepted and reported "0 per worker").
const maxWorkersPerCPU = 16

// maxWorkers is the largest --workers accepted on this machine.
func maxWorkers() int {
	if n := maxWorkersPerCPU * runtime.NumCPU(); n > 64 {
		return n
	}
	return 64
}

// checkWorkers refuses a --workers value below 1 or above maxWorkers.
func checkWorkers(n int) error {
	switch {
	case n < 1:
		return badInput("--workers must be at least 1, got %d", n)
	case n > maxWorkers():
		return badInput("--workers %d is more than %d (%d per CPU of this machine's %d): more workers than that only contend", n, maxWorkers(), maxWorkersPerCPU, runtime.NumCPU())
	}
	return nil
}

// workersFlag defines --workers, whose default is the machine's number of
// CPUs (which the generated reference names in words).
func workersFlag(fl *pflag.FlagSet, p *int, usage string) {
	fl.IntVar(p, "workers", runtime.NumCPU(), usage)
	_ = fl.SetAnnotation("workers", docDefaultAnnotation, []string{"the number of CPUs"})
}
