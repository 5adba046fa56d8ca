package lakeunion_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage"
)

// writeLakeFile writes rows (table columns, in key order for a
// primary-key table) as one lake file of bucket 0, with made-up system
// columns.
func writeLakeFile(t *testing.T, lk *lake.Lake, table *metadata.TableInfo, snapshotID int64, rows [][]any) metadata.LakeFile {
	t.Helper()
	cols := append(append([]metadata.Column(nil), table.Schema.Columns...),
		metadata.Column{Name: metadata.LakeBucketColumn, Type: metadata.IntType()},
		metadata.Column{Name: metadata.LakeOffsetColumn, Type: metadata.BigIntType()},
		metadata.Column{Name: metadata.LakeTimestampColumn, Type: metadata.TimestampLTZType(3)})
	b := array.NewRecordBuilder(memory.DefaultAllocator, metadata.ArrowSchema(cols))
	defer b.Release()
	for i, row := range rows {
		full := append(append([]any(nil), row...), int64(0), int64(i), time.UnixMilli(int64(i)).UTC())
		for c, col := range cols {
			require.NoError(t, metadata.AppendValue(b.Field(c), col.Type, full[c]))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	w, err := lk.NewFileWriter(table, "", nil, 0, snapshotID)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	f, err := w.Close()
	require.NoError(t, err)
	return f
}

// TestEngineLakeUnionPrimaryKey reads a lake-enabled primary-key table
// through the engine, the real lake and the UpsertPlanner's lake-union
// branch: two overlapping lake files of the bucket (merged k-way by the
// lake, never concatenated), then updates, a delete and an insert in the
// tail after the tiered offset.
func TestEngineLakeUnionPrimaryKey(t *testing.T) {
	ctx := context.Background()
	eng := openEngine(t)
	lk, err := lake.Open(lake.Options{InMemory: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, lk.Close()) }()
	path := metadata.TablePath{Database: metadata.DefaultDatabase, Table: "state"}
	info, err := eng.CreateTable(ctx, metadata.TableDescriptor{
		Path: path,
		Schema: metadata.Schema{
			Columns: []metadata.Column{
				{Name: "v", Type: metadata.StringType()},
				{Name: "k", Type: metadata.BigIntType(), NotNull: true},
				{Name: "at", Type: metadata.TimestampLTZType(3)},
			},
			PrimaryKey: []string{"k"},
		},
		Options: map[string]string{metadata.OptDatalakeEnabled: "true", metadata.OptBucketNum: "1"},
	}, false)
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	for _, row := range [][]any{{"a", int64(1), at}, {"b", int64(2), nil}, {"c", int64(3), at}} {
		_, err = eng.Upsert(ctx, path, [][]any{row}, storage.UpsertOptions{})
		require.NoError(t, err)
	}
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: 0}
	hw, err := eng.ListOffsets(ctx, []metadata.TableBucket{tb}, metadata.OffsetLatest)
	require.NoError(t, err)
	// What tiering would write: the state at the tiered offset, here in
	// two files whose key ranges overlap (1..3 and 2), the newer file's
	// row of key 2 winning.
	f1 := writeLakeFile(t, lk, &info, 1, [][]any{{"a", int64(1), at}, {"stale", int64(2), nil}, {"c", int64(3), at}})
	f2 := writeLakeFile(t, lk, &info, 2, [][]any{{"b", int64(2), nil}})
	require.NoError(t, lk.Commit(ctx, lake.Manifest{SnapshotID: 2, TableID: info.TableID, Files: []metadata.LakeFile{f1, f2},
		TieredOffsets: []lake.TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: hw[tb]}}}))
	require.NoError(t, eng.CommitLakeSnapshot(ctx, path, metadata.LakeSnapshot{SnapshotID: 2,
		TieredOffsets: map[metadata.TableBucket]int64{tb: hw[tb]}}))
	// The tail after tiering.
	_, err = eng.Upsert(ctx, path, [][]any{{"B", int64(2), at}}, storage.UpsertOptions{})
	require.NoError(t, err)
	_, err = eng.Delete(ctx, path, [][]any{{nil, int64(3), nil}})
	require.NoError(t, err)
	_, err = eng.Upsert(ctx, path, [][]any{{"d", int64(4), nil}}, storage.UpsertOptions{})
	require.NoError(t, err)

	src := lakeunion.EngineSource(eng, lk)
	read := func(spec planner.ScanSpec) ([]string, []planner.Split) {
		t.Helper()
		spec.Table, spec.Limit = path, -1
		p, err := planner.NewUpsertPlanner(ctx, eng, info, spec, planner.WithLake(lk.Source(&info)))
		require.NoError(t, err)
		defer p.Close()
		require.Equal(t, planner.TypeLakeUpsert, p.ScanType())
		splits, err := p.Plan(ctx)
		require.NoError(t, err)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		scan := lakeunion.NewSourceScan(src, &info, splits, lakeunion.Options{Projection: spec.Projection, Filter: spec.PushedPredicate, Allocator: mem})
		defer func() { require.NoError(t, scan.Close()) }()
		var rows []string
		for {
			rec, err := scan.Next(ctx)
			if err != nil {
				require.ErrorIs(t, err, io.EOF)
				return rows, splits
			}
			for i := range int(rec.NumRows()) {
				rows = append(rows, formatRow(rec, i))
			}
		}
	}
	rows, splits := read(planner.ScanSpec{Projection: []int{1, 0, 2}})
	require.Len(t, splits, 1)
	ll, ok := splits[0].(*planner.LakeLogSplit)
	require.True(t, ok, "%s", splits[0])
	require.Equal(t, hw[tb], ll.LogStart)
	require.Len(t, ll.Files, 2)
	require.Equal(t, []string{"1 a 2026-01-02 03:04:05.006", "2 B 2026-01-02 03:04:05.006", "4 d NULL"}, rows)

	// The lake side filtered by the pushed predicate before the merge:
	// key 1 (v < 'b') is dropped by the lake, key 2's tail value stays.
	vGE := &predicate.Leaf{Column: 0, Name: "v", Type: metadata.StringType(), Op: predicate.GtEq, Literals: []any{"b"}}
	rows, _ = read(planner.ScanSpec{Projection: []int{1}, PushedPredicate: vGE})
	require.Equal(t, []string{"2", "4"}, rows)

	// read.optimized: the lake alone, one row per key despite the
	// overlapping files.
	rows, _ = read(planner.ScanSpec{Projection: []int{1, 0}, Options: map[string]string{planner.OptReadOptimized: "true"}})
	require.Equal(t, []string{"1 a", "2 b", "3 c"}, rows)
}

// TestEngineLakeUnionLogTable reads a log table's lake file and tail
// through the engine and the real lake.
func TestEngineLakeUnionLogTable(t *testing.T) {
	ctx := context.Background()
	eng := openEngine(t)
	lk, err := lake.Open(lake.Options{InMemory: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, lk.Close()) }()
	path := metadata.TablePath{Database: metadata.DefaultDatabase, Table: "events"}
	info, err := eng.CreateTable(ctx, metadata.TableDescriptor{
		Path:    path,
		Schema:  metadata.Schema{Columns: []metadata.Column{{Name: "id", Type: metadata.BigIntType()}, {Name: "name", Type: metadata.StringType()}}},
		Options: map[string]string{metadata.OptDatalakeEnabled: "true", metadata.OptBucketNum: "1"},
	}, false)
	require.NoError(t, err)
	_, err = eng.Append(ctx, path, [][]any{{int64(1), "a"}, {int64(2), nil}})
	require.NoError(t, err)
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: 0}
	f := writeLakeFile(t, lk, &info, 1, [][]any{{int64(1), "a"}, {int64(2), nil}})
	_, err = eng.Append(ctx, path, [][]any{{int64(3), "c"}})
	require.NoError(t, err)
	splits := []planner.Split{
		&planner.LakeSplit{TableBucket: tb, Files: []metadata.LakeFile{f}},
		&planner.LogSplit{TableBucket: tb, StartOffset: 2, StopOffset: 3},
	}
	scan := lakeunion.NewSourceScan(lakeunion.EngineSource(eng, lk), &info, splits, lakeunion.Options{Projection: []int{1, 0}, Threads: 1})
	defer func() { require.NoError(t, scan.Close()) }()
	var rows []string
	for {
		rec, err := scan.Next(ctx)
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		for i := range int(rec.NumRows()) {
			rows = append(rows, formatRow(rec, i))
		}
	}
	require.Equal(t, []string{"a 1", "NULL 2", "c 3"}, rows)
}

// TestEngineScanStats: a scan over the engine and the lake gathers, per
// split, the batches its log reader read and skipped by the pushed
// predicate's statistics, the row groups its lake reader read, and the
// rows each split yielded.
func TestEngineScanStats(t *testing.T) {
	ctx := context.Background()
	eng := openEngine(t)
	lk, err := lake.Open(lake.Options{InMemory: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, lk.Close()) }()
	path := metadata.TablePath{Database: metadata.DefaultDatabase, Table: "events"}
	info, err := eng.CreateTable(ctx, metadata.TableDescriptor{
		Path:    path,
		Schema:  metadata.Schema{Columns: []metadata.Column{{Name: "id", Type: metadata.BigIntType()}}},
		Options: map[string]string{metadata.OptDatalakeEnabled: "true", metadata.OptBucketNum: "1"},
	}, false)
	require.NoError(t, err)
	// Four log batches of ids 0-9, 10-19, 20-29, 30-39.
	for b := range int64(4) {
		var rows [][]any
		for i := range int64(10) {
			rows = append(rows, []any{b*10 + i})
		}
		_, err = eng.Append(ctx, path, rows)
		require.NoError(t, err)
	}
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: 0}
	f := writeLakeFile(t, lk, &info, 1, [][]any{{int64(1)}, {int64(2)}})
	splits := []planner.Split{
		&planner.LakeSplit{TableBucket: tb, Files: []metadata.LakeFile{f}},
		&planner.LogSplit{TableBucket: tb, StartOffset: 0, StopOffset: 40},
	}
	// id >= 25: the batches of 0-9 and 10-19 are skipped.
	filter := &predicate.Leaf{Column: 0, Name: "id", Type: metadata.BigIntType(), Op: predicate.GtEq, Literals: []any{int64(25)}}
	scan := lakeunion.NewSourceScan(lakeunion.EngineSource(eng, lk), &info, splits, lakeunion.Options{Filter: filter, Threads: 2})
	rows := 0
	for {
		rec, err := scan.Next(ctx)
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		rows += int(rec.NumRows())
	}
	require.NoError(t, scan.Close())
	// The lake file's only row group (ids 1, 2) is skipped by its
	// statistics; the log's last two batches are read whole.
	require.Equal(t, 20, rows)
	st := scan.Stats()
	require.Len(t, st, 2)
	require.Equal(t, "lake", st[0].Kind)
	require.True(t, st[0].Opened)
	require.EqualValues(t, 0, st[0].RowGroups)
	require.EqualValues(t, 1, st[0].RowGroupsSkipped)
	require.EqualValues(t, 0, st[0].Rows)
	require.Equal(t, "log", st[1].Kind)
	require.Equal(t, tb, st[1].Bucket)
	require.EqualValues(t, 2, st[1].Batches)
	require.EqualValues(t, 2, st[1].BatchesSkipped)
	require.EqualValues(t, 20, st[1].Rows)
	require.EqualValues(t, 20, st[1].RowsRead)
}
