package lakeunion_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
)

// lakeScanSource is a fake source with a log table's lake: three lake
// splits of ten rows each, in batches of four, and a log tail.
func lakeScanSource(t *testing.T) (*fakeSource, *memory.CheckedAllocator, *metadata.TableInfo, []planner.Split) {
	table := &metadata.TableInfo{
		Path:       metadata.TablePath{Database: "fluss", Table: "t"},
		TableID:    testBucket.TableID,
		NumBuckets: 3,
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "id", Type: metadata.BigIntType()},
			{Name: "name", Type: metadata.StringType()},
		}},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := newFakeSource(table, mem)
	src.lakeBatch = 4
	var splits []planner.Split
	for b := range int32(3) {
		tb := testBucket
		tb.Bucket = b
		path := fmt.Sprintf("b%d/1-0.parquet", b)
		for i := range 10 {
			src.lake[path] = append(src.lake[path], []any{int64(b)*100 + int64(i), fmt.Sprintf("n%d", i)})
		}
		splits = append(splits, &planner.LakeSplit{TableBucket: tb, Files: []metadata.LakeFile{{Path: path, Bucket: b}}})
	}
	src.appendLog(testBucket, 0, true, []change{{row: []any{int64(1000), "tail"}}})
	splits = append(splits, &planner.LogSplit{TableBucket: testBucket, StopOffset: 1})
	return src, mem, table, splits
}

// TestLakeScanLimitStopsEarly: with one worker, a consumer that stops
// after its first batch (LIMIT) opens no further lake split, and closing the scan closes
// the open lake reader and releases every buffer.
func TestLakeScanLimitStopsEarly(t *testing.T) {
	src, mem, table, splits := lakeScanSource(t)
	scan := lakeunion.NewSourceScan(src, table, splits, lakeunion.Options{Allocator: mem, Threads: 1})
	rec, err := scan.Next(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 4, rec.NumRows())
	require.Len(t, src.lakeReads, 1, "only the first lake split is opened")
	require.Equal(t, 1, src.open)
	require.NoError(t, scan.Close())
	require.Zero(t, src.open)
	_, err = scan.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
	mem.AssertSize(t, 0)
}

// TestLakeScanReadsAll: the whole scan reads every lake split and the
// tail, in order with one worker.
func TestLakeScanReadsAll(t *testing.T) {
	src, mem, table, splits := lakeScanSource(t)
	rows, err := readAll(t, src, mem, table, splits, lakeunion.Options{Projection: []int{0}, Threads: 1})
	require.NoError(t, err)
	require.Len(t, rows, 31)
	require.Equal(t, "0", rows[0])
	require.Equal(t, "209", rows[29])
	require.Equal(t, "1000", rows[30])
	require.Len(t, src.lakeReads, 3)
}

// TestLakeScanCancel: a cancelled context stops a lake read between
// batches with ctx.Err().
func TestLakeScanCancel(t *testing.T) {
	src, mem, table, splits := lakeScanSource(t)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := lakeunion.OpenSplitFrom(ctx, src, table, splits[0], lakeunion.Options{Allocator: mem})
	require.NoError(t, err)
	require.True(t, r.Next())
	cancel()
	require.False(t, r.Next())
	require.ErrorIs(t, r.Err(), context.Canceled)
	r.Release()
	require.Zero(t, src.open)
	mem.AssertSize(t, 0)
}

// TestLakeSplitColumnsChecked: a lake batch whose columns are not the
// projection's is refused as corrupt rather than handed on.
func TestLakeSplitColumnsChecked(t *testing.T) {
	src, mem, table, splits := lakeScanSource(t)
	bad := *table
	bad.Schema.Columns = []metadata.Column{{Name: "id", Type: metadata.IntType()}, table.Schema.Columns[1]}
	// The fake builds batches from its own table (id BIGINT); the reader
	// expects id INT.
	r, err := lakeunion.OpenSplitFrom(context.Background(), &tableSwap{src, table}, &bad, splits[0], lakeunion.Options{Allocator: mem})
	require.NoError(t, err)
	require.False(t, r.Next())
	require.ErrorIs(t, r.Err(), metadata.ErrCorrupt)
	require.ErrorContains(t, r.Err(), "lake batch column 0 (id) is int64, want int32")
	r.Release()
	require.Zero(t, src.open)
	mem.AssertSize(t, 0)
}

// tableSwap hands the fake its own table, whatever table the reader asks
// for.
type tableSwap struct {
	*fakeSource
	table *metadata.TableInfo
}

func (s *tableSwap) ReadLake(ctx context.Context, _ *metadata.TableInfo, files []metadata.LakeFile, opts lakeunion.LakeReadOptions) (lakeunion.LakeRecordReader, error) {
	return s.fakeSource.ReadLake(ctx, s.table, files, opts)
}

// TestLakeSplitsRefuseChangelog: lake splits cannot be read as
// t$changelog, which reads logs only.
func TestLakeSplitsRefuseChangelog(t *testing.T) {
	table := modelTable()
	src := newFakeSource(table, memory.DefaultAllocator)
	for _, s := range []planner.Split{
		&planner.LakeSplit{TableBucket: testBucket},
		&planner.LakeLogSplit{TableBucket: testBucket},
	} {
		_, err := lakeunion.OpenSplitFrom(context.Background(), src, table, s, lakeunion.Options{Changelog: true})
		require.ErrorIs(t, err, metadata.ErrUnsupported)
	}
}

// TestEngineSourceWithoutLake: an engine source without a lake refuses
// lake splits clearly (NewScan reads without a lake).
func TestEngineSourceWithoutLake(t *testing.T) {
	eng := openEngine(t)
	table := modelTable()
	files := []metadata.LakeFile{{Path: "b0/1-0.parquet"}}
	for _, s := range []planner.Split{
		&planner.LakeSplit{TableBucket: testBucket, Files: files},
		&planner.LakeLogSplit{TableBucket: testBucket, Files: files},
	} {
		scan := lakeunion.NewScan(eng, table, []planner.Split{s}, lakeunion.Options{})
		_, err := scan.Next(context.Background())
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		require.ErrorContains(t, err, "the engine has no lake")
		require.NoError(t, scan.Close())
	}
}
