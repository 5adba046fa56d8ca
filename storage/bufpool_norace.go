//go:build !race

package storage

// poisonFreed: see batchPool.
const poisonFreed = false
