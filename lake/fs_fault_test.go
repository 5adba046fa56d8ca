package lake

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestFaultFSFailsLakeWrites fails each write, fsync, rename and create
// of one file plus one commit, one at a time: the failing call's error
// reaches the caller wrapping its cause, nothing half-written stays
// behind (no data file, no manifest, no temporary one), every Arrow
// buffer is released, and the same lake then writes and commits.
func TestFaultFSFailsLakeWrites(t *testing.T) {
	table := testTable(7, []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType())}, nil, nil)
	rows := make([][]any, 12)
	for i := range rows {
		rows[i] = []any{int64(i), "row"}
	}
	// write writes one file of rows and commits it as snapshot snap.
	write := func(l *Lake, snap int64) error {
		w, err := l.NewFileWriter(table, "", nil, 0, snap)
		if err != nil {
			return err
		}
		for start := 0; start < len(rows); start += 6 {
			rec := record(t, l.opts.Allocator, table, int64(start), rows[start:start+6])
			err := w.Write(rec)
			rec.Release()
			if err != nil {
				w.Abort()
				return err
			}
		}
		lf, err := w.Close()
		if err != nil {
			return err
		}
		return l.Commit(bg, Manifest{SnapshotID: snap, TableID: table.TableID, Files: []metadata.LakeFile{lf},
			TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: int64(len(rows))}}})
	}

	kinds := []FaultOp{FaultWrite, FaultSync, FaultRename, FaultCreate}
	counter := NewFaultFS(NewMemFS())
	l, _ := testLake(t, true, func(o *Options) { o.FS, o.RowGroupRows = counter, 6 })
	counter.FailNth(FaultAll, 0, nil)
	require.NoError(t, write(l, 1))
	for _, kind := range kinds {
		require.NotZero(t, counter.CallsOf(kind), kind)
	}
	t.Logf("calls: write %d, sync %d, rename %d, create %d", counter.CallsOf(FaultWrite), counter.CallsOf(FaultSync), counter.CallsOf(FaultRename), counter.CallsOf(FaultCreate))
	require.Equal(t, counter.Calls(), counter.CallsOf(FaultWrite)+counter.CallsOf(FaultSync)+counter.CallsOf(FaultRename)+counter.CallsOf(FaultCreate))

	for _, kind := range kinds {
		for n := int64(1); n <= counter.CallsOf(kind); n++ {
			ffs := NewFaultFS(NewMemFS())
			l, _ := testLake(t, true, func(o *Options) { o.FS, o.RowGroupRows = ffs, 6 })
			ffs.FailNth(kind, n, syscall.EIO)
			err := write(l, 1)
			require.True(t, ffs.Fired(), "%s %d", kind, n)
			m, ok, lerr := l.LatestManifest(bg, table.TableID)
			require.NoError(t, lerr)
			if strings.Contains(ffs.FiredAt(), FileListName) {
				// The file list for outside readers is written after the
				// commit: its failure is logged, the snapshot stands.
				require.NoError(t, err, "%s %d", kind, n)
				require.True(t, ok)
				require.Equal(t, int64(1), m.SnapshotID)
				continue
			}
			require.Error(t, err, "%s %d: the fault at %s surfaced nowhere", kind, n, ffs.FiredAt())
			require.ErrorIs(t, err, syscall.EIO, "%s %d", kind, n)
			if ok {
				// The manifest was renamed into place before the fault
				// (the directory sync): the snapshot is whole.
				require.Equal(t, FaultSync, kind, "%s %d: a snapshot despite %v", kind, n, err)
				require.Equal(t, int64(1), m.SnapshotID)
			} else {
				names, rerr := ffs.ReadDir(l.abs(snapshotsDir(table.TableID)))
				if rerr == nil {
					require.Empty(t, names, "%s %d: no manifest, temporary or not, after %v", kind, n, err)
				}
				// A data file that failed is removed; one written whole
				// before the manifest failed stays, listed by no
				// manifest, and is never read.
				data, rerr := ffs.ReadDir(l.abs(bucketDir(table.TableID, "", 0)))
				if rerr == nil && strings.HasSuffix(ffs.FiredAt(), ".parquet") {
					require.Empty(t, data, "%s %d: the failed file is removed", kind, n)
				}
			}
			ffs.Disarm()
			require.NoError(t, write(l, 2), "%s %d: the lake writes on", kind, n)
			m, ok, err = l.LatestManifest(bg, table.TableID)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, int64(2), m.SnapshotID)
			r, err := l.OpenFiles(bg, table, m.Files, ReadOptions{Projection: []int{0, 1}})
			require.NoError(t, err)
			require.Len(t, rowsOf(t, r, []metadata.DataType{metadata.BigIntType(), metadata.StringType()}), len(rows))
		}
	}
}
