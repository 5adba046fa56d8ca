//go:build !linux

package fluss_test

// threadCPU is 0 where the thread's CPU time is not read.
func threadCPU() int64 { return 0 }
