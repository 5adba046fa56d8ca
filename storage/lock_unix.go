//go:build unix

package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/flusslite/fluss/metadata"
)

// lockFile takes an exclusive, non-blocking flock on name. flock locks
// belong to the open file description, so a second lockFile of the same
// file conflicts even inside one process; the lock goes away with the
// process, so a crash never leaves a directory locked.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by another engine", metadata.ErrLocked, name)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil
}
