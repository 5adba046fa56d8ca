package lake

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FS is the seam between the lake and where its bytes live: the disk
// (DiskFS), memory (NewMemFS, what an in-memory lake uses), or a wrapper
// that injects faults (FaultFS). Lake files are written once and then
// only read, so it is smaller than the engine's. Names use the host's
// separator. Every method must be safe for concurrent use.
type FS interface {
	// Create makes a new file for writing; it fails when name exists.
	Create(name string) (WritableFile, error)
	Open(name string) (ReadableFile, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	MkdirAll(name string) error
	// ReadDir lists the names in a directory, sorted; a missing directory
	// is fs.ErrNotExist.
	ReadDir(name string) ([]string, error)
	// SyncDir makes a directory's entries durable.
	SyncDir(name string) error
}

// WritableFile is a file being written by the lake; one goroutine writes
// it and closes it.
type WritableFile interface {
	io.Writer
	Sync() error
	Close() error
}

// ReadableFile is what Parquet needs to read a footer and column chunks.
type ReadableFile interface {
	io.ReaderAt
	io.Seeker
	io.Reader
	Close() error
	Size() int64
}

// DiskFS is the operating system's file system.
func DiskFS() FS { return diskFS{} }

// NewMemFS returns an empty file system in memory. A file becomes visible
// when its writer closes; directories exist implicitly as prefixes of
// file names. It lives as long as it is referenced, so a test can close a
// Lake and open another on the same one.
func NewMemFS() FS { return newMemFS() }

// diskFS is the real file system.
type diskFS struct{}

func (diskFS) Create(name string) (WritableFile, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (diskFS) Open(name string) (ReadableFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &diskFile{File: f, size: st.Size()}, nil
}

type diskFile struct {
	*os.File
	size int64
}

func (f *diskFile) Size() int64 { return f.size }

func (diskFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (diskFS) Remove(name string) error             { return os.Remove(name) }
func (diskFS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (diskFS) MkdirAll(name string) error           { return os.MkdirAll(name, 0o755) }

func (diskFS) ReadDir(name string) ([]string, error) {
	entries, err := os.ReadDir(name)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out, nil
}

func (diskFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// memFS keeps the lake in memory (NewMemFS).
type memFS struct {
	mu    sync.Mutex // guards files
	files map[string][]byte
}

func newMemFS() *memFS { return &memFS{files: map[string][]byte{}} }

func memPathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (m *memFS) Create(name string) (WritableFile, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; ok {
		return nil, memPathErr("create", name, fs.ErrExist)
	}
	// Reserve the name so a second Create fails as on disk.
	m.files[name] = nil
	return &memWriter{fs: m, name: name}, nil
}

type memWriter struct {
	fs     *memFS
	name   string
	buf    bytes.Buffer
	closed bool
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, memPathErr("write", w.name, fs.ErrClosed)
	}
	return w.buf.Write(p)
}

func (w *memWriter) Sync() error { return nil }

func (w *memWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	if _, ok := w.fs.files[w.name]; ok {
		w.fs.files[w.name] = w.buf.Bytes()
	}
	return nil
}

func (m *memFS) Open(name string) (ReadableFile, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	if !ok {
		return nil, memPathErr("open", name, fs.ErrNotExist)
	}
	return &memReader{Reader: bytes.NewReader(b), size: int64(len(b))}, nil
}

type memReader struct {
	*bytes.Reader
	size int64
}

func (r *memReader) Close() error { return nil }
func (r *memReader) Size() int64  { return r.size }

func (m *memFS) Rename(oldname, newname string) error {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[oldname]
	if !ok {
		return memPathErr("rename", oldname, fs.ErrNotExist)
	}
	delete(m.files, oldname)
	m.files[newname] = b
	return nil
}

func (m *memFS) Remove(name string) error {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; !ok {
		return memPathErr("remove", name, fs.ErrNotExist)
	}
	delete(m.files, name)
	return nil
}

func (m *memFS) RemoveAll(name string) error {
	prefix := filepath.Clean(name) + string(filepath.Separator)
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.files {
		if k == filepath.Clean(name) || strings.HasPrefix(k, prefix) {
			delete(m.files, k)
		}
	}
	return nil
}

func (m *memFS) MkdirAll(string) error { return nil }
func (m *memFS) SyncDir(string) error  { return nil }

func (m *memFS) ReadDir(name string) ([]string, error) {
	prefix := filepath.Clean(name) + string(filepath.Separator)
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	for k := range m.files {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			first, _, _ := strings.Cut(rest, string(filepath.Separator))
			seen[first] = true
		}
	}
	if len(seen) == 0 {
		return nil, memPathErr("readdir", name, fs.ErrNotExist)
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// isNotExist reports whether err says a file or directory is missing.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// isExist reports whether err says a file already exists.
func isExist(err error) bool { return errors.Is(err, fs.ErrExist) }
