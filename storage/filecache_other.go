//go:build !unix

package storage

// descriptorLimit is the process's limit on open files; 0: unknown.
func descriptorLimit() int { return 0 }
