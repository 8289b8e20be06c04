//go:build !race

package storage

// poisonRecycled: normal builds reuse recycled messages (pool.go).
const poisonRecycled = false
