package lake

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// undoRow is a row of a test undo or data file: id, s, n and __offset;
// an undo row may leave columns unchanged (same, table column indexes;
// their values are written as NULL).
type undoRow struct {
	id   int64
	s    string
	n    int64
	off  int64
	same []int
}

// writeKeyed writes rows (sorted by id) into a new data or undo file of
// bucket 0 of table.
func writeKeyed(t *testing.T, l *Lake, table *metadata.TableInfo, snap int64, undo bool, rows ...undoRow) metadata.LakeFile {
	t.Helper()
	open, cols := l.NewFileWriter, fileColumns(table)
	if undo {
		open, cols = l.NewUndoFileWriter, undoColumns(table)
	}
	sc := metadata.ArrowSchema(cols)
	w, err := open(table, "", nil, 0, snap)
	require.NoError(t, err)
	b := array.NewRecordBuilder(l.opts.Allocator, sc)
	defer b.Release()
	for _, r := range rows {
		vals := []any{r.id, r.s, r.n, int64(0), r.off, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		var same []byte
		for _, c := range r.same {
			vals[c] = nil
			for len(same) <= c/8 {
				same = append(same, 0)
			}
			same[c/8] |= 1 << (c % 8)
		}
		if undo {
			vals = append(vals, append([]byte{}, same...))
		}
		for c, v := range vals {
			require.NoError(t, metadata.AppendValue(b.Field(c), cols[c].Type, v))
		}
	}
	rec := b.NewRecordBatch()
	err = w.Write(rec)
	rec.Release()
	require.NoError(t, err)
	f, err := w.Close()
	require.NoError(t, err)
	return f
}

// readSnapshot reads snapshot id of table as rows "id=s/n@offset", in key
// order, through SnapshotFiles and the sorted reader, keeping the rows
// filter (when not nil) holds for.
func readSnapshot(t *testing.T, l *Lake, table *metadata.TableInfo, id int64, filter ...predicate.P) []string {
	t.Helper()
	files, err := l.SnapshotFiles(bg, table.TableID, id)
	require.NoError(t, err, "snapshot %d", id)
	out := []string{}
	if len(files) == 0 {
		return out
	}
	opts := ReadOptions{Projection: []int{0, 1, 2}, WithSystemColumns: true}
	if len(filter) > 0 {
		opts.Filter, opts.FilterRows = filter[0], true
	}
	sr, err := l.OpenSorted(bg, table, files, opts)
	require.NoError(t, err)
	defer sr.Close()
	for sr.Next() {
		rec, _ := sr.Batch()
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprintf("%d=%s/%d@%d", rec.Column(0).(*array.Int64).Value(i), rec.Column(1).(*array.String).Value(i),
				rec.Column(2).(*array.Int64).Value(i), rec.Column(4).(*array.Int64).Value(i)))
		}
	}
	require.NoError(t, sr.Err())
	return out
}

func undoTable() *metadata.TableInfo {
	return testTable(7, []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType()), col("n", metadata.BigIntType())}, []string{"id"}, nil)
}

// undoHistory commits four snapshots of a key table in the undo layout
// and returns what each reads:
//
//	1: 1=a/1 2=b/2 3=c/3
//	2: 1=a2/1 3=c/3 4=d/4     (s of 1 updated, 2 deleted, 4 added)
//	3: 1=a2/9 3=c/3 4=d/4     (n of 1 updated)
//	4: 1=a2/9 3=c/3 4=d/4 5=e/5 (5 added)
//
// The undo rows of 1 leave the column the round did not change to the
// next version, so snapshot 1 takes n of key 1 from snapshot 2's undo
// row, and snapshot 2 takes s of key 1 from the data file.
func undoHistory(t *testing.T, l *Lake, table *metadata.TableInfo) map[int64][]string {
	t.Helper()
	commit := func(snap int64, files, undo []metadata.LakeFile) {
		require.NoError(t, l.Commit(bg, Manifest{SnapshotID: snap, TableID: table.TableID, Layout: LayoutUndo, Files: files, Undo: undo,
			TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: 10 * snap}}}))
	}
	lf := func(f metadata.LakeFile) []metadata.LakeFile { return []metadata.LakeFile{f} }
	commit(1, lf(writeKeyed(t, l, table, 1, false, undoRow{1, "a", 1, 1, nil}, undoRow{2, "b", 2, 2, nil}, undoRow{3, "c", 3, 3, nil})), nil)
	commit(2, lf(writeKeyed(t, l, table, 2, false, undoRow{1, "a2", 1, 11, nil}, undoRow{3, "c", 3, 3, nil}, undoRow{4, "d", 4, 12, nil})),
		lf(writeKeyed(t, l, table, 2, true, undoRow{1, "a", 0, 1, []int{2}}, undoRow{2, "b", 2, 2, nil}, undoRow{4, "", 0, UndoAbsent, nil})))
	commit(3, lf(writeKeyed(t, l, table, 3, false, undoRow{1, "a2", 9, 21, nil}, undoRow{3, "c", 3, 3, nil}, undoRow{4, "d", 4, 12, nil})),
		lf(writeKeyed(t, l, table, 3, true, undoRow{1, "", 1, 11, []int{1}})))
	commit(4, lf(writeKeyed(t, l, table, 4, false, undoRow{1, "a2", 9, 21, nil}, undoRow{3, "c", 3, 3, nil}, undoRow{4, "d", 4, 12, nil}, undoRow{5, "e", 5, 31, nil})),
		lf(writeKeyed(t, l, table, 4, true, undoRow{5, "", 0, UndoAbsent, nil})))
	return map[int64][]string{
		1: {"1=a/1@1", "2=b/2@2", "3=c/3@3"},
		2: {"1=a2/1@11", "3=c/3@3", "4=d/4@12"},
		3: {"1=a2/9@21", "3=c/3@3", "4=d/4@12"},
		4: {"1=a2/9@21", "3=c/3@3", "4=d/4@12", "5=e/5@31"},
	}
}

// Every snapshot of the undo layout reads its own rows: the newest from
// its files, the older ones from the newest files taken back by the undo
// files after them (the oldest undo row of a key wins, a marker hides a
// key added later).
func TestUndoSnapshotsRead(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := undoTable()
	want := undoHistory(t, l, table)
	for id, rows := range want {
		require.Equal(t, rows, readSnapshot(t, l, table, id), "snapshot %d", id)
	}
	// A filter tests the merged row: n of key 1 in snapshot 1 is the
	// undo row's of snapshot 3.
	n1 := &predicate.Leaf{Op: predicate.Eq, Column: 2, Name: "n", Type: metadata.BigIntType(), Literals: []any{int64(1)}}
	require.Equal(t, []string{"1=a/1@1"}, readSnapshot(t, l, table, 1, n1))
	require.Equal(t, []string{"1=a2/1@11"}, readSnapshot(t, l, table, 2, n1))
	require.Empty(t, readSnapshot(t, l, table, 3, n1))
	files, err := l.SnapshotFiles(bg, table.TableID, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"7/data/-/b0/4-0.parquet", "7/data/-/b0/2-undo-0.parquet", "7/data/-/b0/3-undo-0.parquet", "7/data/-/b0/4-undo-0.parquet"}, pathsOf(files))

	// An undo row leaving a column to a newer version that is not there
	// is corrupt, and the failed merge leaks nothing (testLake's checked
	// allocator).
	sr, err := l.OpenSorted(bg, table, files[2:3], ReadOptions{Projection: []int{0, 1, 2}})
	require.NoError(t, err)
	require.False(t, sr.Next())
	require.ErrorIs(t, sr.Err(), metadata.ErrCorrupt)
	require.ErrorContains(t, sr.Err(), "leaves column s of its key unchanged")
	require.NoError(t, sr.Close())

	// A plain read of an undo file would return rows out of context.
	_, err = l.OpenFiles(bg, table, files[1:2], ReadOptions{Projection: []int{0}})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = l.NewUndoFileWriter(testTable(8, []metadata.Column{col("id", metadata.BigIntType())}, nil, nil), "", nil, 0, 1)
	require.ErrorIs(t, err, metadata.ErrUnsupported, "a log table has no undo files")
}

func pathsOf(files []metadata.LakeFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// Expire keeps what the kept snapshots of the undo layout need: the
// newest snapshot's data files, the undo files after the oldest kept
// one, and the data files of every snapshot from the oldest pinned one
// on; a pin released lets the next call remove them.
func TestExpireUndoLayout(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := undoTable()
	want := undoHistory(t, l, table)

	// Snapshot 1 pinned, and the newest kept: everything stays, the
	// snapshots between are needed to read 1.
	res, err := l.Expire(bg, table.TableID, 1, []int64{1})
	require.NoError(t, err)
	require.Empty(t, res.Snapshots)
	require.Zero(t, res.Files)
	// Released: the data files of 1 to 3 go; their undo files read them.
	res, err = l.Expire(bg, table.TableID, 4, []int64{4})
	require.NoError(t, err)
	require.Empty(t, res.Snapshots)
	require.Equal(t, 3, res.Files, "the data files of snapshots 1 to 3")
	_, files := lakeState(t, l, table.TableID)
	require.Equal(t, []string{"7/data/-/b0/2-undo-0.parquet", "7/data/-/b0/3-undo-0.parquet", "7/data/-/b0/4-0.parquet", "7/data/-/b0/4-undo-0.parquet"}, files)
	for id, rows := range want {
		require.Equal(t, rows, readSnapshot(t, l, table, id), "snapshot %d", id)
	}
	// Two kept: snapshot 3 and 4, and the undo file of 4.
	res, err = l.Expire(bg, table.TableID, 2, []int64{4})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, res.Snapshots)
	snaps, files := lakeState(t, l, table.TableID)
	require.Equal(t, []int64{3, 4}, snaps)
	require.Equal(t, []string{"7/data/-/b0/4-0.parquet", "7/data/-/b0/4-undo-0.parquet"}, files)
	for _, id := range snaps {
		require.Equal(t, want[id], readSnapshot(t, l, table, id), "snapshot %d", id)
	}
	_, err = l.SnapshotFiles(bg, table.TableID, 1)
	require.ErrorIs(t, err, metadata.ErrNotFound)
}

// A removal failing at every step (a crash there) leaves every kept
// snapshot of the undo layout readable; the next call finishes the job.
func TestExpireUndoFailingAtEveryRemoval(t *testing.T) {
	table := undoTable()
	var want map[int64][]string
	setup := func(l *Lake) { want = undoHistory(t, l, table) }
	failEveryRemoval(t, table, setup, 7, "2 manifests, then the data files of 1 to 3 and the undo files of 2 and 3", func(l *Lake, at string) {
		snaps, _ := lakeState(t, l, table.TableID)
		for _, id := range snaps {
			require.Equal(t, want[id], readSnapshot(t, l, table, id), "%s: snapshot %d", at, id)
		}
	})
}

// A manifest's undo fields are checked: the layout is known, undo files
// are named and listed as such and belong to the manifest's snapshot,
// and the stored format says whether the layout is there.
func TestUndoManifestValidation(t *testing.T) {
	data := metadata.LakeFile{Path: "7/data/-/b0/2-0.parquet"}
	undo := metadata.LakeFile{Path: "7/data/-/b0/2-undo-0.parquet"}
	ok := Manifest{SnapshotID: 2, TableID: 7, Layout: LayoutUndo, Files: []metadata.LakeFile{data}, Undo: []metadata.LakeFile{undo}}
	require.NoError(t, ok.validate())
	for _, c := range []struct {
		what string
		m    func(Manifest) Manifest
		err  string
	}{
		{"unknown layout", func(m Manifest) Manifest { m.Layout = "mor"; return m }, `unknown layout "mor"`},
		{"undo without the layout", func(m Manifest) Manifest { m.Layout = ""; return m }, "undo files in layout"},
		{"undo file among the data files", func(m Manifest) Manifest { m.Files = append(m.Files, undo); m.Undo = nil; return m }, "listed as an undo file: false"},
		{"data file among the undo files", func(m Manifest) Manifest { m.Undo = []metadata.LakeFile{data}; m.Files = nil; return m }, "listed as an undo file: true"},
		{"undo file of another snapshot", func(m Manifest) Manifest {
			m.Undo = []metadata.LakeFile{{Path: "7/data/-/b0/1-undo-0.parquet"}}
			return m
		}, "is not of snapshot 2"},
	} {
		require.ErrorContains(t, c.m(ok).validate(), c.err, c.what)
	}

	body, err := encodeManifest(ok)
	require.NoError(t, err)
	require.Contains(t, string(body), `"format": 4`)
	back, err := decodeManifest("m", body)
	require.NoError(t, err)
	require.Equal(t, ok.normalized(), back)
	// Format 3 cannot carry the layout, and format 4 must.
	body, err = encodeManifestFormat(ok, manifestFormat)
	require.NoError(t, err)
	_, err = decodeManifest("m", body)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	plain := Manifest{SnapshotID: 2, TableID: 7, Files: []metadata.LakeFile{data}}
	body, err = encodeManifestFormat(plain, manifestFormatUndo)
	require.NoError(t, err)
	_, err = decodeManifest("m", body)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	body, err = encodeManifest(plain)
	require.NoError(t, err)
	require.Contains(t, string(body), `"format": 3`, "a manifest without the layout keeps format 3")
}
