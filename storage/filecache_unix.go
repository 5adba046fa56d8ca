//go:build unix

package storage

import "syscall"

// descriptorLimit is the process's soft limit on open files; 0 when
// unknown.
func descriptorLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
