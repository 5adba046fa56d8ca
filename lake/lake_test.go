package lake

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func TestFileWriterRollsAndNames(t *testing.T) {
	l, _ := testLake(t, true, func(o *Options) { o.MaxRowsPerFile = 30 })
	table := simpleTable()
	w, err := l.NewFileWriter(table, "", nil, 2, 4)
	require.NoError(t, err)
	require.Equal(t, "3/data/-/b2/4-0.parquet", w.Path())
	rec := record(t, l.opts.Allocator, table, 0, simpleRows(0, 20))
	require.NoError(t, w.Write(rec))
	require.False(t, w.Full())
	require.NoError(t, w.Write(rec))
	rec.Release()
	require.True(t, w.Full())
	require.Equal(t, int64(40), w.Rows())
	lf, err := w.Close()
	require.NoError(t, err)
	footer, err := l.fileFooterChecksum(l.abs(lf.Path))
	require.NoError(t, err)
	require.Equal(t, metadata.LakeFile{Path: "3/data/-/b2/4-0.parquet", Bucket: 2, RowCount: 40, SizeBytes: lf.SizeBytes, FooterCRC32C: footer}, lf)
	_, err = w.Close()
	require.Error(t, err)

	// The next file of the same bucket and snapshot takes the next n.
	w2, err := l.NewFileWriter(table, "", nil, 2, 4)
	require.NoError(t, err)
	require.Equal(t, "3/data/-/b2/4-1.parquet", w2.Path())
	require.NoError(t, w2.Abort())
	require.NoError(t, w2.Abort())
}

func TestClosedLakeAndCanceledReads(t *testing.T) {
	l, err := Open(Options{InMemory: true})
	require.NoError(t, err)
	table := simpleTable()
	lf := writeRows(t, l, table, "", nil, 1, simpleRows(0, 10))

	ctx, cancel := context.WithCancel(bg)
	rr, err := l.OpenFiles(ctx, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0}})
	require.NoError(t, err)
	cancel()
	require.False(t, rr.Next())
	require.ErrorIs(t, rr.Err(), context.Canceled)
	require.NoError(t, rr.Close())

	require.NoError(t, l.Close())
	require.NoError(t, l.Close())
	_, err = l.NewFileWriter(table, "", nil, 0, 1)
	require.ErrorIs(t, err, metadata.ErrClosed)
	_, _, err = l.LatestManifest(bg, table.TableID)
	require.ErrorIs(t, err, metadata.ErrClosed)
	_, err = l.OpenFiles(bg, table, nil, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrClosed)
}

// TestConcurrentUse reads one snapshot from several goroutines while new
// snapshots are committed (run with -race).
func TestConcurrentUse(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := simpleTable()
	lf := writeRows(t, l, table, "", nil, 1, simpleRows(0, 100))
	require.NoError(t, l.Commit(bg, Manifest{SnapshotID: 1, TableID: table.TableID, Files: []metadata.LakeFile{lf}}))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			for range 5 {
				files, err := l.Source(table).Plan(bg, 1, nil, nil)
				if err != nil {
					errs <- err
					return
				}
				rr, err := l.OpenFiles(bg, table, files, ReadOptions{Projection: []int{0, 1}})
				if err != nil {
					errs <- err
					return
				}
				n := 0
				for rr.Next() {
					n += int(rr.Record().NumRows())
				}
				rr.Close()
				if rr.Err() != nil {
					errs <- rr.Err()
					return
				}
				if n != 100 {
					errs <- fmt.Errorf("read %d rows, want 100", n)
					return
				}
			}
		})
	}
	for id := int64(2); id <= 6; id++ {
		require.NoError(t, l.Commit(bg, Manifest{SnapshotID: id, TableID: table.TableID, Files: []metadata.LakeFile{lf}}))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	m, ok, err := l.LatestManifest(bg, table.TableID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(6), m.SnapshotID)
}
