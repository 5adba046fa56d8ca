package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// NewMemFS returns an empty file system held in memory. Sync is a no-op;
// removing or renaming a file leaves open handles working on its data, as
// on Unix.
func NewMemFS() FS { return newMemFS(false) }

// NewCrashMemFS is NewMemFS that also remembers what Sync and SyncDir
// made durable (at the cost of a second copy of what was synced), so
// that MemFSAfterCrash can tell what a power loss would leave.
func NewCrashMemFS() FS { return newMemFS(true) }

func newMemFS(track bool) *memFS {
	return &memFS{files: map[string]*memData{}, durable: map[string]*memData{}, dirs: map[string]bool{".": true, string(filepath.Separator): true}, locks: map[string]bool{}, track: track}
}

// MemFSAfterCrash returns, as a new file system (itself crashable), what
// of fsys (made by NewCrashMemFS) a power loss at this moment would
// leave, assuming the worst of the disk: every file holds what it held at
// its last Sync (nothing, if never synced), and only the names a SyncDir
// of their directory made durable exist. Directories are kept. Tests
// reopen an engine on the result to check what survives a crash.
func MemFSAfterCrash(fsys FS) (FS, error) {
	m, ok := fsys.(*memFS)
	if !ok || !m.track {
		return nil, fmt.Errorf("MemFSAfterCrash: %T is not a file system made by NewCrashMemFS", fsys)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := newMemFS(true)
	for name, d := range m.durable {
		d.mu.RLock()
		b := slices.Clone(d.synced)
		d.mu.RUnlock()
		nd := &memData{b: b, synced: slices.Clone(b), dirtyFrom: len(b), track: true, name: filepath.Base(name), mod: time.Now()}
		out.files[name] = nd
		out.durable[name] = nd
	}
	for dir := range m.dirs {
		out.dirs[dir] = true
	}
	return out, nil
}

type memFS struct {
	mu    sync.Mutex // guards the maps
	files map[string]*memData
	// durable maps the names a SyncDir of their directory made durable
	// to their files.
	durable map[string]*memData
	dirs    map[string]bool
	locks   map[string]bool
	track   bool // remember what was synced (NewCrashMemFS)
}

type memData struct {
	mu   sync.RWMutex // guards b, synced and dirtyFrom
	b    []byte
	mod  time.Time
	name string
	// With tracking: synced is the content as of the last Sync, and
	// b[:dirtyFrom] has not changed since, so a Sync copies only the rest.
	track     bool
	synced    []byte
	dirtyFrom int
}

func clean(name string) string { return filepath.Clean(name) }

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

func (m *memFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs[name] {
		return nil, pathErr("open", name, errors.New("is a directory"))
	}
	d, ok := m.files[name]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, fs.ErrExist)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case !ok:
		if !m.dirs[filepath.Dir(name)] {
			return nil, pathErr("open", name, fs.ErrNotExist)
		}
		d = &memData{name: filepath.Base(name), mod: time.Now(), track: m.track}
		m.files[name] = d
	}
	if flag&os.O_TRUNC != 0 {
		d.mu.Lock()
		d.b = nil
		d.dirtyFrom = 0
		d.mu.Unlock()
	}
	return &memFile{d: d, writable: flag&(os.O_RDWR|os.O_WRONLY) != 0}, nil
}

func (m *memFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[oldname]
	if !ok {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	if !m.dirs[filepath.Dir(newname)] {
		return pathErr("rename", newname, fs.ErrNotExist)
	}
	delete(m.files, oldname)
	m.files[newname] = d
	return nil
}

func (m *memFS) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; ok {
		delete(m.files, name)
		return nil
	}
	if m.dirs[name] {
		prefix := name + string(filepath.Separator)
		for k := range m.files {
			if strings.HasPrefix(k, prefix) {
				return pathErr("remove", name, errors.New("directory not empty"))
			}
		}
		for k := range m.dirs {
			if strings.HasPrefix(k, prefix) {
				return pathErr("remove", name, errors.New("directory not empty"))
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return pathErr("remove", name, fs.ErrNotExist)
}

func (m *memFS) RemoveAll(name string) error {
	name = clean(name)
	prefix := name + string(filepath.Separator)
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.files {
		if k == name || strings.HasPrefix(k, prefix) {
			delete(m.files, k)
		}
	}
	for k := range m.dirs {
		if k == name || strings.HasPrefix(k, prefix) {
			delete(m.dirs, k)
		}
	}
	return nil
}

func (m *memFS) MkdirAll(name string, perm fs.FileMode) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := name; ; p = filepath.Dir(p) {
		if _, ok := m.files[p]; ok {
			return pathErr("mkdir", p, errors.New("not a directory"))
		}
		m.dirs[p] = true
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[name] {
		return nil, pathErr("readdir", name, fs.ErrNotExist)
	}
	var out []fs.DirEntry
	for k, d := range m.files {
		if filepath.Dir(k) == name {
			// The entry's name is where the file is now (it may have been
			// renamed since it was created).
			info := d.info()
			info.name = filepath.Base(k)
			out = append(out, fs.FileInfoToDirEntry(info))
		}
	}
	for k := range m.dirs {
		if k != name && filepath.Dir(k) == name {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: filepath.Base(k), dir: true}))
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

func (m *memFS) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.files[name]; ok {
		info := d.info()
		info.name = filepath.Base(name)
		return info, nil
	}
	if m.dirs[name] {
		return memInfo{name: filepath.Base(name), dir: true}, nil
	}
	return nil, pathErr("stat", name, fs.ErrNotExist)
}

func (m *memFS) SyncDir(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[name] {
		return pathErr("sync", name, fs.ErrNotExist)
	}
	if !m.track {
		return nil
	}
	for k := range m.durable {
		if filepath.Dir(k) == name && m.files[k] != m.durable[k] {
			delete(m.durable, k)
		}
	}
	for k, d := range m.files {
		if filepath.Dir(k) == name {
			m.durable[k] = d
		}
	}
	return nil
}

func (m *memFS) Lock(name string) (io.Closer, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[name] {
		return nil, fmt.Errorf("%w: %s is in use by another engine", metadata.ErrLocked, name)
	}
	m.locks[name] = true
	return closerFunc(func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.locks, name)
		return nil
	}), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func (d *memData) info() memInfo {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return memInfo{name: d.name, size: int64(len(d.b)), mod: d.mod}
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

type memFile struct {
	d        *memData
	writable bool
	closed   atomic.Bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, os.ErrClosed
	}
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	f.d.mu.RLock()
	defer f.d.mu.RUnlock()
	if off >= int64(len(f.d.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.d.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, os.ErrClosed
	}
	if !f.writable {
		return 0, errors.New("file not open for writing")
	}
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.d.b)) {
		f.d.b = slices.Grow(f.d.b, int(end)-len(f.d.b))[:end]
	}
	copy(f.d.b[off:], p)
	f.d.dirtyFrom = min(f.d.dirtyFrom, int(off))
	f.d.mod = time.Now()
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	if f.closed.Load() {
		return os.ErrClosed
	}
	if size < 0 {
		return errors.New("negative size")
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	f.d.dirtyFrom = min(f.d.dirtyFrom, int(size), len(f.d.b))
	if size <= int64(len(f.d.b)) {
		f.d.b = f.d.b[:size]
	} else {
		f.d.b = append(f.d.b, make([]byte, size-int64(len(f.d.b)))...)
	}
	return nil
}

func (f *memFile) Sync() error {
	if f.closed.Load() {
		return os.ErrClosed
	}
	if !f.d.track {
		return nil
	}
	f.d.mu.Lock()
	k := min(f.d.dirtyFrom, len(f.d.synced), len(f.d.b))
	f.d.synced = append(f.d.synced[:k], f.d.b[k:]...)
	f.d.dirtyFrom = len(f.d.b)
	f.d.mu.Unlock()
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	if f.closed.Load() {
		return nil, os.ErrClosed
	}
	return f.d.info(), nil
}

func (f *memFile) Close() error {
	if f.closed.Swap(true) {
		return os.ErrClosed
	}
	return nil
}
