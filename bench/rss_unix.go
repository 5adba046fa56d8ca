//go:build unix

package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// maxRSSKiB reads the peak resident set size of an exited child.
func maxRSSKiB(ps *os.ProcessState) (int64, error) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("no rusage for the child")
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024, nil // bytes there, KiB on Linux
	}
	return int64(ru.Maxrss), nil
}
