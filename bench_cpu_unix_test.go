//go:build unix

package fluss_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system, for
// benchmarks that report it beside wall time: on a shared machine the
// wall time of a scan varies with the load, its CPU time much less.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
