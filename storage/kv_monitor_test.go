package storage

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// fullKvFS is a KV store file system whose disk can fill up: when full,
// creating a table file fails with ENOSPC; with manifestFull, writing the
// MANIFEST fails once a table file has been written, the point where
// Pebble reports its MANIFEST through Fatalf.
type fullKvFS struct {
	vfs.FS
	full         *atomic.Bool
	manifestFull bool
	tables       *atomic.Int32 // table files created (or attempted while full)
}

func newFullKvFS(manifestFull bool) fullKvFS {
	return fullKvFS{full: new(atomic.Bool), manifestFull: manifestFull, tables: new(atomic.Int32)}
}

func (f fullKvFS) wrap(inner vfs.FS) vfs.FS { f.FS = inner; return f }

func (f fullKvFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if strings.HasSuffix(name, ".sst") {
		f.tables.Add(1)
		if f.full.Load() {
			return nil, syscall.ENOSPC
		}
	}
	file, err := f.FS.Create(name, category)
	if err != nil || !f.manifestFull || !strings.Contains(name, "MANIFEST") {
		return file, err
	}
	return manifestFile{File: file, fs: f}, nil
}

type manifestFile struct {
	vfs.File
	fs fullKvFS
}

func (m manifestFile) Write(p []byte) (int, error) {
	if m.fs.tables.Load() > 0 {
		return 0, syscall.ENOSPC
	}
	return m.File.Write(p)
}

func (m manifestFile) Sync() error {
	if m.fs.tables.Load() > 0 {
		return syscall.ENOSPC
	}
	return m.File.Sync()
}

// bigUpsert writes n rows with 500-byte values to table t.
func bigUpsert(t *testing.T, e *Engine, n int) {
	t.Helper()
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{strings.Repeat("v", 500), i, int64(i)}
	}
	upsert(t, e, "t", rows...)
}

// Reopening an engine whose key table needs replay on a disk that cannot
// take the MANIFEST made Pebble call its logger's Fatalf from a
// background flush, which panicked and ended the process: Open now
// returns the error, and a reopen on a healthy disk has every row.
func TestKvReplayOnFullDiskFailsOpen(t *testing.T) {
	dir := t.TempDir()
	func() {
		// The rows reach the log only, so the next Open replays them.
		e, _ := testEngine(t, dir, func(o *Options) { o.TestingSkipKvApply = true })
		defer e.Close()
		createPK(t, e, "t", nil)
		bigUpsert(t, e, 8000)
	}()

	fsys := newFullKvFS(true)
	opts := DefaultOptions()
	opts.Dir = dir
	opts.testingKvFS = fsys.wrap
	e, err := Open(opts)
	if err == nil {
		// The replay's flush fails after Open returned: wait for it.
		require.Error(t, closeWithTimeout(t, e), "Open and Close on a full disk both succeeded")
	}
	require.ErrorContains(t, err, "no space left on device")
	require.ErrorContains(t, err, "MANIFEST")

	e, _ = testEngine(t, dir, nil)
	require.Equal(t, []any{strings.Repeat("v", 500), int64(7999), int64(7999)}, lookup(t, e, "t", 7999))
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"w", 8000, 1}))
}

// With a full disk and an unflushed memtable, Close waited in the KV
// flush for as long as the disk stayed full while Pebble retried the
// flush in a busy loop: Close now returns the error within its timeout,
// the retries wait between attempts, and nothing is lost.
func TestKvCloseOnFullDiskIsBounded(t *testing.T) {
	dir := t.TempDir()
	fsys := newFullKvFS(false)
	opts := DefaultOptions()
	opts.Dir = dir
	opts.CloseTimeout = time.Second
	opts.testingKvFS = fsys.wrap
	e, err := Open(opts)
	require.NoError(t, err)
	createPK(t, e, "t", nil)
	bigUpsert(t, e, 2000)

	fsys.full.Store(true)
	before := fsys.tables.Load()
	_, err = e.kv.AsyncFlush()
	require.NoError(t, err)
	time.Sleep(time.Second)
	attempts := fsys.tables.Load() - before
	require.Less(t, attempts, int32(20), "flush attempts in a second on a full disk")
	_, err = e.Upsert(ctx, path("t"), [][]any{{"x", 1, 1}}, UpsertOptions{})
	require.ErrorIs(t, err, metadata.ErrReadOnly, "a KV store that cannot flush takes no writes")
	require.ErrorContains(t, err, "no space left on device")

	start := time.Now()
	err = closeWithTimeout(t, e)
	require.ErrorContains(t, err, "no space left on device")
	require.Less(t, time.Since(start), 3*time.Second)

	e2, _ := testEngine(t, dir, nil)
	require.Equal(t, []any{strings.Repeat("v", 500), int64(1999), int64(1999)}, lookup(t, e2, "t", 1999))
	require.Equal(t, []any{strings.Repeat("v", 500), int64(1), int64(1)}, lookup(t, e2, "t", 1), "the refused write is not there")
}

// closeWithTimeout closes e, failing the test when Close has not
// returned after 30 seconds.
func closeWithTimeout(t *testing.T, e *Engine) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Close on a full disk did not return")
		return nil
	}
}

// Pebble's Close panics ("element has outstanding references") when a
// reference to a cached table outlives it, as a flush broken by a full
// disk once left one (a leaked iterator stands in for it here): Close
// returns that as an error, and the directory opens again.
func TestKvClosePanicIsAnError(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.Dir = dir
	e, err := Open(opts)
	require.NoError(t, err)
	createPK(t, e, "t", nil)
	bigUpsert(t, e, 100)
	require.NoError(t, e.kv.Flush())
	it, err := e.kv.NewIter(nil)
	require.NoError(t, err)
	require.True(t, it.First())

	err = e.Close()
	require.ErrorIs(t, err, errKvPanic)
	require.ErrorContains(t, err, "outstanding references")

	e2, _ := testEngine(t, dir, nil)
	require.Equal(t, []any{strings.Repeat("v", 500), int64(99), int64(99)}, lookup(t, e2, "t", 99))
}
