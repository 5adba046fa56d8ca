package storage

import (
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
)

// FaultOp is a kind of file system call FaultFS can fail; they combine as
// a mask.
type FaultOp uint8

const (
	// FaultWrite is File.WriteAt and File.Truncate. A failing WriteAt
	// writes the first half of its bytes, as a write cut short by a full
	// disk does.
	FaultWrite FaultOp = 1 << iota
	// FaultSync is File.Sync and FS.SyncDir.
	FaultSync
	// FaultRename is FS.Rename.
	FaultRename
	// FaultCreate is FS.OpenFile with os.O_CREATE.
	FaultCreate

	FaultAll = FaultWrite | FaultSync | FaultRename | FaultCreate
)

var faultOpNames = map[FaultOp]string{FaultWrite: "write", FaultSync: "sync", FaultRename: "rename", FaultCreate: "create"}

// FaultFS wraps an FS for fault-injection tests: once armed with FailNth,
// it counts the calls of the chosen kinds and fails the nth with the
// given error (syscall.ENOSPC or syscall.EIO, say). Only that one call
// fails; the ones after it pass through. Safe for concurrent use.
type FaultFS struct {
	FS
	mu    sync.Mutex
	ops   FaultOp
	n     int64
	err   error
	calls atomic.Int64
	fired atomic.Bool
	// at is "op path" of the injected fault; guarded by mu.
	at string
}

// NewFaultFS wraps inner, disarmed.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{FS: inner} }

// FailNth arms the FS: from now, the nth call (1-based) of the kinds in
// ops fails with err. n = 0 only counts calls (see Calls).
func (f *FaultFS) FailNth(ops FaultOp, n int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops, f.n, f.err = ops, n, err
	f.calls.Store(0)
	f.fired.Store(false)
	f.at = ""
}

// Disarm stops counting and failing.
func (f *FaultFS) Disarm() { f.FailNth(0, 0, nil) }

// Calls reports how many calls of the armed kinds were made since
// FailNth.
func (f *FaultFS) Calls() int64 { return f.calls.Load() }

// Fired reports whether the armed fault has been injected.
func (f *FaultFS) Fired() bool { return f.fired.Load() }

// FiredAt names the injected fault's call and file ("write db/x.log"),
// or is "" while none was injected.
func (f *FaultFS) FiredAt() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at
}

// hit counts a call of kind op on name and returns the error to fail it
// with.
func (f *FaultFS) hit(op FaultOp, name string) error {
	f.mu.Lock()
	ops, n, err := f.ops, f.n, f.err
	f.mu.Unlock()
	if ops&op == 0 {
		return nil
	}
	if c := f.calls.Add(1); n > 0 && c == n {
		f.mu.Lock()
		f.at = faultOpNames[op] + " " + name
		f.mu.Unlock()
		f.fired.Store(true)
		return err
	}
	return nil
}

func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&os.O_CREATE != 0 {
		if err := f.hit(FaultCreate, name); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f, name: name}, nil
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if err := f.hit(FaultRename, oldname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return f.FS.Rename(oldname, newname)
}

func (f *FaultFS) SyncDir(name string) error {
	if err := f.hit(FaultSync, name); err != nil {
		return &fs.PathError{Op: "sync", Path: name, Err: err}
	}
	return f.FS.SyncDir(name)
}

type faultyFile struct {
	File
	fs   *FaultFS
	name string
}

func (f *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.hit(FaultWrite, f.name); err != nil {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	return f.File.WriteAt(p, off)
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.fs.hit(FaultWrite, f.name); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	return f.File.Truncate(size)
}

func (f *faultyFile) Sync() error {
	if err := f.fs.hit(FaultSync, f.name); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return f.File.Sync()
}
