package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// faultFS fails writes or syncs of files whose path contains match.
type faultFS struct {
	FS
	match     string
	failWrite atomic.Bool
	failSync  atomic.Bool
}

var errInjected = errors.New("injected fault")

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.Contains(name, f.match) {
		return file, err
	}
	return &faultFile{File: file, fs: f}, nil
}

type faultFile struct {
	File
	fs *faultFS
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.failWrite.Load() {
		return 0, errInjected
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if f.fs.failSync.Load() {
		return errInjected
	}
	return f.File.Sync()
}

// withoutRedo makes every commit of the test take the way of an intent
// (commit_journal.go), as large commits do.
func withoutRedo(t *testing.T) {
	old := journalRedoBytes
	journalRedoBytes = -1
	t.Cleanup(func() { journalRedoBytes = old })
}

// bothCommitPaths runs f with small commits going into the journal
// whole (the default) and with every commit taking the intent's way.
func bothCommitPaths(t *testing.T, f func(t *testing.T)) {
	t.Run("redo", f)
	t.Run("intent", func(t *testing.T) {
		withoutRedo(t)
		f(t)
	})
}

func TestFailedWriteRollsBackEveryBucket(t *testing.T) {
	bothCommitPaths(t, testFailedWriteRollsBackEveryBucket)
}

func testFailedWriteRollsBackEveryBucket(t *testing.T) {
	redo := journalRedoBytes >= 0
	// The fsync a small commit waits for is the journal's; a large one's
	// are its segments'.
	syncs := &faultFS{FS: NewMemFS(), match: journalFile}
	ffs := &faultFS{FS: syncs, match: filepath.Join("b2", "")}
	if !redo {
		syncs = ffs
	}
	e, _ := testEngine(t, "", func(o *Options) { o.FS = ffs })
	info := createTable(t, e, "orders", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "3"})
	var rows [][]any
	for i := range 6 {
		rows = append(rows, orderRow(i))
	}
	appendRows(t, e, "orders", rows)

	// Bucket 2 fails after buckets 0 and 1 were written: the statement
	// must vanish from all three.
	ffs.failWrite.Store(true)
	_, err := e.Append(ctx, info.Path, rows)
	require.ErrorIs(t, err, errInjected)
	for b := range int32(3) {
		require.Equal(t, int64(2), hw(t, e, bucket(info, b)))
		offsets, _ := readAll(t, e, bucket(info, b), 0, -1, ReadOptions{})
		require.Len(t, offsets, 2)
	}
	// The roll back succeeded, so the engine keeps writing, at the
	// offsets the failed statement would have taken.
	ffs.failWrite.Store(false)
	appendRows(t, e, "orders", rows)
	for b := range int32(3) {
		require.Equal(t, int64(4), hw(t, e, bucket(info, b)))
	}

	// A failed fsync leaves durability unknown: the engine turns
	// read-only rather than risk acknowledging lost data.
	syncs.failSync.Store(true)
	_, err = e.Append(ctx, info.Path, rows)
	require.ErrorIs(t, err, errInjected)
	syncs.failSync.Store(false)
	_, err = e.Append(ctx, info.Path, rows)
	require.ErrorIs(t, err, metadata.ErrReadOnly)
	for b := range int32(3) {
		require.Equal(t, int64(4), hw(t, e, bucket(info, b)))
	}
}

func TestIndexIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	func() {
		e, _ := testEngine(t, dir, func(o *Options) { o.IndexIntervalBytes = 100 })
		defer e.Close()
		info = createTable(t, e, "orders", ordersColumns(), nil, nil)
		for i := range 20 {
			appendRows(t, e, "orders", [][]any{orderRow(i)})
		}
	}()
	idx := filepath.Join(dir, tabletDir(bucket(info, 0)), segmentName(0, ".index"))
	want, err := os.ReadFile(idx)
	require.NoError(t, err)
	require.Greater(t, len(want), 2*indexEntrySize, "one entry per ~100 bytes")
	require.NoError(t, os.WriteFile(idx, []byte("stale"), 0o644))

	e, _ := testEngine(t, dir, func(o *Options) { o.IndexIntervalBytes = 100 })
	got, err := os.ReadFile(idx)
	require.NoError(t, err)
	require.Equal(t, want, got, "a stale index is rebuilt from the segment")
	offsets, rows := readAll(t, e, bucket(info, 0), 13, 15, ReadOptions{Projection: []int{0}})
	require.Equal(t, []int64{13, 14}, offsets)
	require.Equal(t, [][]any{{int64(13)}, {int64(14)}}, rows)
}
