//go:build race

package storage

// poisonRecycled: race builds poison recycled messages instead of reusing
// them, so that a process that keeps one past its Receive is caught.
const poisonRecycled = true
