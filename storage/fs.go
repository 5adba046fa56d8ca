package storage

import (
	"io"
	"io/fs"
	"os"
)

// FS is the file system the engine runs on: the real disk (DiskFS) or
// memory (NewMemFS, for ":memory:"). It is also the seam where tests
// inject faults. Names are paths joined with filepath.Join. Every method
// must be safe for concurrent use.
type FS interface {
	// OpenFile opens a file; flag is os.O_RDONLY, os.O_RDWR, os.O_CREATE,
	// os.O_TRUNC or os.O_EXCL combined (never O_APPEND: writes are
	// positioned).
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	MkdirAll(name string, perm fs.FileMode) error
	// ReadDir lists a directory sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the directory's entries (creations, renames,
	// removals) durable.
	SyncDir(name string) error
	// Lock takes an exclusive lock on the named file, creating it, or fails
	// at once with an error wrapping metadata.ErrLocked. Closing the result
	// releases it.
	Lock(name string) (io.Closer, error)
}

// File is an open file of an FS. Reads and writes are positioned, so one
// File may serve concurrent readers (ReadAt) while a single writer appends
// (WriteAt at its end).
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Sync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

var _ File = (*os.File)(nil)
