package storage

import (
	"container/list"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// fileCache bounds the descriptors the engine's log segments hold open. A
// segment's file is opened when it is first read or written and stays
// open until the cache needs the descriptor for another file, so the
// number of buckets and partitions is not limited by the process's
// descriptor limit. When every open file is in the middle of an
// operation, the next one waits for a descriptor (an operation never
// holds one file while it waits for another). Safe for concurrent use.
type fileCache struct {
	fs    FS
	limit int
	// syncOnEvict: with Options.Sync a written file is fsynced before its
	// descriptor is closed, and a failure is returned by its next Sync,
	// so a commit never misses an error a closed descriptor would have
	// reported.
	syncOnEvict bool

	// mu guards every cachedFile's state below and the counters here.
	// Opening and closing descriptors happen under it: they are rare
	// while the files in use fit the limit.
	mu struct {
		sync.Mutex
		open int       // descriptors held
		idle list.List // *cachedFile open with no operation in progress, least recently used first
		// freed is signalled when a descriptor closes or becomes idle.
		freed sync.Cond
	}
}

func newFileCache(fsys FS, limit int, syncOnEvict bool) *fileCache {
	c := &fileCache{fs: fsys, limit: limit, syncOnEvict: syncOnEvict}
	c.mu.freed.L = &c.mu.Mutex
	return c
}

// cachedFile is a File of a fileCache: every operation borrows the
// descriptor, opening the file again when the cache had closed it. It is
// safe for concurrent use as File is. Close releases it for good.
type cachedFile struct {
	c    *fileCache
	name string
	flag int // flags to open it again with

	// Guarded by c.mu.
	f      File          // nil while closed by the cache
	active int           // operations in progress
	elem   *list.Element // in c.mu.idle while f is open and active == 0
	pinned bool          // kept open until Close: its name may be gone
	dirty  bool          // written since the last Sync
	err    error         // an eviction's failed sync, for the next Sync
	closed bool
}

var _ File = (*cachedFile)(nil)

// open opens name with flag (which may create it) and returns it as a
// cached file.
func (c *fileCache) open(name string, flag int, perm fs.FileMode) (*cachedFile, error) {
	cf := &cachedFile{c: c, name: name, flag: flag &^ (os.O_CREATE | os.O_EXCL | os.O_TRUNC)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.makeRoomLocked()
	f, err := c.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	cf.f = f
	c.mu.open++
	cf.elem = c.mu.idle.PushBack(cf)
	return cf, nil
}

// makeRoomLocked closes idle descriptors, least recently used first,
// until one more fits the limit, waiting while none is idle.
func (c *fileCache) makeRoomLocked() {
	for c.mu.open >= c.limit {
		if c.mu.idle.Len() == 0 {
			c.mu.freed.Wait()
			continue
		}
		c.evictLocked(c.mu.idle.Front().Value.(*cachedFile))
	}
}

func (c *fileCache) evictLocked(cf *cachedFile) {
	c.mu.idle.Remove(cf.elem)
	cf.elem = nil
	if cf.dirty && c.syncOnEvict {
		if err := cf.f.Sync(); err != nil && cf.err == nil {
			cf.err = fmt.Errorf("sync %s before closing it: %w", cf.name, err)
		}
		cf.dirty = false
	}
	if err := cf.f.Close(); err != nil && cf.err == nil && c.syncOnEvict {
		cf.err = fmt.Errorf("close %s: %w", cf.name, err)
	}
	cf.f = nil
	c.mu.open--
}

// acquire returns the open descriptor of cf for one operation, which
// must be followed by release.
func (cf *cachedFile) acquire() (File, error) {
	c := cf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if cf.closed {
		return nil, fmt.Errorf("%s: %w", cf.name, os.ErrClosed)
	}
	if cf.f == nil {
		c.makeRoomLocked()
		f, err := c.fs.OpenFile(cf.name, cf.flag, 0)
		if err != nil {
			return nil, fmt.Errorf("open %s again: %w", cf.name, err)
		}
		cf.f = f
		c.mu.open++
	} else if cf.elem != nil {
		c.mu.idle.Remove(cf.elem)
		cf.elem = nil
	}
	cf.active++
	return cf.f, nil
}

func (cf *cachedFile) release(wrote bool) {
	c := cf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	cf.dirty = cf.dirty || wrote
	if cf.active--; cf.active > 0 {
		return
	}
	switch {
	case cf.closed:
		cf.f.Close()
		cf.f = nil
		c.mu.open--
		c.mu.freed.Signal()
	case !cf.pinned:
		cf.elem = c.mu.idle.PushBack(cf)
		c.mu.freed.Signal()
	}
}

// keepOpen opens cf's descriptor, if the cache had closed it, and keeps it
// open until Close: before the file's name is removed while readers still
// hold the segment.
func (cf *cachedFile) keepOpen() error {
	if _, err := cf.acquire(); err != nil {
		return err
	}
	cf.c.mu.Lock()
	cf.pinned = true
	cf.c.mu.Unlock()
	cf.release(false)
	return nil
}

func (cf *cachedFile) ReadAt(p []byte, off int64) (int, error) {
	f, err := cf.acquire()
	if err != nil {
		return 0, err
	}
	defer cf.release(false)
	return f.ReadAt(p, off)
}

func (cf *cachedFile) WriteAt(p []byte, off int64) (int, error) {
	f, err := cf.acquire()
	if err != nil {
		return 0, err
	}
	defer cf.release(true)
	return f.WriteAt(p, off)
}

func (cf *cachedFile) Truncate(size int64) error {
	f, err := cf.acquire()
	if err != nil {
		return err
	}
	defer cf.release(true)
	return f.Truncate(size)
}

func (cf *cachedFile) Stat() (fs.FileInfo, error) {
	f, err := cf.acquire()
	if err != nil {
		return nil, err
	}
	defer cf.release(false)
	return f.Stat()
}

// Sync fsyncs the file, first returning the failure of a sync the cache
// made when it closed the descriptor.
func (cf *cachedFile) Sync() error {
	c := cf.c
	c.mu.Lock()
	if !cf.closed && cf.f == nil && !cf.dirty {
		// Closed by the cache, synced first (or nothing written since
		// the last Sync): nothing to open it again for.
		err := cf.err
		cf.err = nil
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()
	f, err := cf.acquire()
	if err != nil {
		return err
	}
	cf.c.mu.Lock()
	evictErr := cf.err
	cf.err = nil
	cf.dirty = false
	cf.c.mu.Unlock()
	err = f.Sync()
	if err != nil {
		cf.c.mu.Lock()
		cf.dirty = true
		cf.c.mu.Unlock()
	}
	cf.release(false)
	return errors.Join(evictErr, err)
}

// Close closes the file for good; an operation in progress finishes
// first, and the descriptor closes after it.
func (cf *cachedFile) Close() error {
	c := cf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if cf.closed {
		return nil
	}
	cf.closed = true
	if cf.elem != nil {
		c.mu.idle.Remove(cf.elem)
		cf.elem = nil
	}
	if cf.f == nil || cf.active > 0 {
		return nil
	}
	err := cf.f.Close()
	cf.f = nil
	c.mu.open--
	c.mu.freed.Signal()
	return err
}

// openFiles is the number of descriptors the cache holds.
func (c *fileCache) openFiles() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.open
}

// openSegmentFile opens a segment file through the engine's file cache
// (directly when the tablet has none).
func (t *logTablet) openSegmentFile(name string, flag int) (File, error) {
	if t.opts.segmentFiles == nil {
		return t.fs.OpenFile(name, flag, 0o644)
	}
	return t.opts.segmentFiles.open(name, flag, 0o644)
}

// keepOpen keeps the segment's file open until the segment closes, when
// its name is about to be removed while readers may hold it.
func (s *segment) keepOpen() error {
	if cf, ok := s.f.(*cachedFile); ok {
		return cf.keepOpen()
	}
	return nil
}
