//go:build !race

package resp

// poisonRecycled: normal builds reuse recycled messages (pool.go).
const poisonRecycled = false
