//go:build !unix

package storage

import (
	"io"
	"os"
)

// lockFile only creates the lock file where flock does not exist: such
// platforms get no protection against a second process.
func lockFile(name string) (io.Closer, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
}
