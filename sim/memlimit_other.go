//go:build !linux

package sim

// probeMemoryLimit knows no limits outside Linux: the default budget is
// then the fixed cap.
func probeMemoryLimit() MemoryLimit { return MemoryLimit{} }
