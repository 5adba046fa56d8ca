package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// A reader that pinned a segment keeps reading it after expiry removed
// its file, also when the cache had closed its descriptor meanwhile.
func TestFileCacheKeepsRemovedFilesForReaders(t *testing.T) {
	dir := t.TempDir()
	c := newFileCache(DiskFS(), MinOpenSegments, true)
	var files []*cachedFile
	for i := range 3 * MinOpenSegments {
		f, err := c.open(filepath.Join(dir, fmt.Sprint(i)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte{byte(i)}, 0)
		require.NoError(t, err)
		files = append(files, f)
		require.LessOrEqual(t, c.openFiles(), MinOpenSegments)
	}
	first := files[0]
	require.NoError(t, first.keepOpen())
	require.NoError(t, os.Remove(first.name))
	for _, f := range files[1:] {
		b := make([]byte, 1)
		_, err := f.ReadAt(b, 0)
		require.NoError(t, err)
	}
	b := make([]byte, 1)
	_, err := first.ReadAt(b, 0)
	require.NoError(t, err, "the removed file is still open")
	require.Equal(t, byte(0), b[0])
	for _, f := range files {
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	}
	require.Zero(t, c.openFiles())
	_, err = first.ReadAt(b, 0)
	require.ErrorIs(t, err, os.ErrClosed)
}

// With Sync, a written file the cache closes is fsynced first; when that
// fails, the file's next Sync reports it, as the closed descriptor's
// fsync would have. A file the cache closed clean is not opened again
// just to be synced.
func TestFileCacheEvictionSyncFailureReachesSync(t *testing.T) {
	fsys := NewFaultFS(NewMemFS())
	c := newFileCache(fsys, MinOpenSegments, true)
	open := func(i int) *cachedFile {
		f, err := c.open(fmt.Sprintf("f%d", i), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		require.NoError(t, err)
		return f
	}
	first := open(0)
	_, err := first.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	fsys.FailNth(FaultSync, 1, syscall.EIO)
	for i := range MinOpenSegments {
		open(i + 1)
	}
	err = first.Sync()
	require.ErrorIs(t, err, syscall.EIO, "the failed sync of the eviction")
	require.NoError(t, first.Sync(), "reported once")

	fsys.FailNth(FaultSync, 0, nil)
	second := open(100)
	_, err = second.WriteAt([]byte("y"), 0)
	require.NoError(t, err)
	for i := range MinOpenSegments {
		open(i + 200)
	}
	synced := fsys.Calls()
	require.NoError(t, second.Sync())
	require.Equal(t, synced, fsys.Calls(), "synced when it was closed")
}

// A reader that planned a bucket before its table was dropped reads it to
// the end, also when the file cache had closed the segment's descriptor:
// the drop keeps the descriptor of a segment a reader holds before it
// removes the file's name.
func TestDropKeepsEvictedSegmentsForReaders(t *testing.T) {
	e, _ := testEngine(t, t.TempDir(), func(o *Options) { o.MaxOpenSegments = MinOpenSegments })
	info := createTable(t, e, "a", ordersColumns(), nil, nil)
	for b := range 5 {
		var rows [][]any
		for i := range 10 {
			rows = append(rows, orderRow(b*10+i))
		}
		_, err := e.Append(ctx, info.Path, rows)
		require.NoError(t, err)
	}
	var others []metadata.TableInfo
	for i := range 3 * MinOpenSegments {
		others = append(others, createTable(t, e, fmt.Sprintf("o%d", i), ordersColumns(), nil, nil))
	}
	touch := func() {
		for _, o := range others {
			_, err := e.Append(ctx, o.Path, [][]any{orderRow(1)})
			require.NoError(t, err)
		}
	}
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
	require.NoError(t, err)
	defer r.Close()
	touch() // the cache closes the descriptor of a's segment
	require.NoError(t, e.DropTable(ctx, info.Path, false))
	touch()
	require.Len(t, drain(t, r), 50)
}
