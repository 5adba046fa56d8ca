package fluss_test

import "syscall"

// threadCPU is the CPU time of the calling thread in nanoseconds; 0 when
// it cannot be read.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
