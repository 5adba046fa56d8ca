package lake

import (
	"io/fs"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
)

// FaultOp is a kind of file system call FaultFS can fail; they combine as
// a mask.
type FaultOp uint8

const (
	// FaultWrite is WritableFile.Write. A failing Write writes the first
	// half of its bytes, as a write cut short by a full disk does.
	FaultWrite FaultOp = 1 << iota
	// FaultSync is WritableFile.Sync and FS.SyncDir.
	FaultSync
	// FaultRename is FS.Rename.
	FaultRename
	// FaultCreate is FS.Create.
	FaultCreate
	// FaultRemove is FS.Remove. It is not in FaultAll, the calls that
	// write.
	FaultRemove

	FaultAll = FaultWrite | FaultSync | FaultRename | FaultCreate
)

var faultOpNames = map[FaultOp]string{FaultWrite: "write", FaultSync: "sync", FaultRename: "rename", FaultCreate: "create", FaultRemove: "remove"}

// String names the kind ("write"); a mask of several is "mixed".
func (op FaultOp) String() string {
	if s, ok := faultOpNames[op]; ok {
		return s
	}
	return "mixed"
}

// FaultFS wraps an FS for fault-injection tests: once armed with FailNth,
// it counts the calls of the chosen kinds and fails the nth with the
// given error (syscall.ENOSPC or syscall.EIO, say). Only that one call
// fails; the ones after it pass through. Safe for concurrent use.
type FaultFS struct {
	FS
	calls atomic.Int64
	// kindCalls counts the calls of each armed kind, by bit position.
	kindCalls [5]atomic.Int64
	fired     atomic.Bool
	mu        struct {
		sync.Mutex // guards the fields below
		ops        FaultOp
		n          int64
		err        error
		// at is "op path" of the injected fault.
		at string
	}
}

// NewFaultFS wraps inner, disarmed.
func NewFaultFS(inner FS) *FaultFS { return &FaultFS{FS: inner} }

// FailNth arms the FS: from now, the nth call (1-based) of the kinds in
// ops fails with err. n = 0 only counts calls (see Calls).
func (f *FaultFS) FailNth(ops FaultOp, n int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.ops, f.mu.n, f.mu.err, f.mu.at = ops, n, err, ""
	f.calls.Store(0)
	for i := range f.kindCalls {
		f.kindCalls[i].Store(0)
	}
	f.fired.Store(false)
}

// Disarm stops counting and failing.
func (f *FaultFS) Disarm() { f.FailNth(0, 0, nil) }

// Calls reports how many calls of the armed kinds were made since
// FailNth.
func (f *FaultFS) Calls() int64 { return f.calls.Load() }

// CallsOf reports how many calls of one kind (which must be armed) were
// made since FailNth, so that a single counting run sizes a sweep of
// every kind.
func (f *FaultFS) CallsOf(op FaultOp) int64 {
	return f.kindCalls[bits.TrailingZeros8(uint8(op))%len(f.kindCalls)].Load()
}

// Fired reports whether the armed fault has been injected.
func (f *FaultFS) Fired() bool { return f.fired.Load() }

// FiredAt names the injected fault's call and file ("rename
// lake/7/snapshots/...json.tmp"), or is "" while none was injected.
func (f *FaultFS) FiredAt() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.at
}

// hit counts a call of kind op on name and returns the error to fail it
// with, or nil.
func (f *FaultFS) hit(op FaultOp, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.ops&op == 0 {
		return nil
	}
	f.kindCalls[bits.TrailingZeros8(uint8(op))].Add(1)
	if c := f.calls.Add(1); f.mu.n > 0 && c == f.mu.n {
		f.mu.at = op.String() + " " + name
		f.fired.Store(true)
		return f.mu.err
	}
	return nil
}

func (f *FaultFS) Create(name string) (WritableFile, error) {
	if err := f.hit(FaultCreate, name); err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	w, err := f.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultyFile{WritableFile: w, fs: f, name: name}, nil
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if err := f.hit(FaultRename, oldname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return f.FS.Rename(oldname, newname)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.hit(FaultRemove, name); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return f.FS.Remove(name)
}

func (f *FaultFS) SyncDir(name string) error {
	if err := f.hit(FaultSync, name); err != nil {
		return &fs.PathError{Op: "sync", Path: name, Err: err}
	}
	return f.FS.SyncDir(name)
}

type faultyFile struct {
	WritableFile
	fs   *FaultFS
	name string
}

func (f *faultyFile) Write(p []byte) (int, error) {
	if err := f.fs.hit(FaultWrite, f.name); err != nil {
		n, _ := f.WritableFile.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	return f.WritableFile.Write(p)
}

func (f *faultyFile) Sync() error {
	if err := f.fs.hit(FaultSync, f.name); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return f.WritableFile.Sync()
}

var (
	_ FS           = (*FaultFS)(nil)
	_ WritableFile = (*faultyFile)(nil)
)
