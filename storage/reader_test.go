package storage

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

func idLeaf(op predicate.Op, v int64) predicate.P {
	return &predicate.Leaf{Op: op, Column: 0, Name: "id", Type: metadata.BigIntType(), Literals: []any{v}}
}

// drain reads r to its end and returns the offsets of its rows.
func drain(t *testing.T, r *LogReader) []int64 {
	t.Helper()
	var offsets []int64
	for r.Next() {
		b := r.Batch()
		for i := range b.Record.NumRows() {
			offsets = append(offsets, b.BaseOffset+i)
		}
	}
	require.NoError(t, r.Err())
	return offsets
}

func TestLogReaderStats(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	// Five batches of ids [0,10), [10,20), ... [40,50).
	for b := range 5 {
		var rows [][]any
		for i := range 10 {
			rows = append(rows, orderRow(b*10+i))
		}
		appendRows(t, e, "orders", rows)
	}
	tb := bucket(info, 0)
	for _, tc := range []struct {
		name        string
		start, stop int64
		filter      predicate.P
		want        ReadStats
		first, last int64
	}{
		{"no filter", 0, -1, nil, ReadStats{Batches: 5, Rows: 50}, 0, 49},
		{"skips three", 0, -1, &predicate.And{Children: []predicate.P{idLeaf(predicate.GtEq, 15), idLeaf(predicate.Lt, 25)}},
			ReadStats{Batches: 2, BatchesSkipped: 3, Rows: 20}, 10, 29},
		{"skips all", 0, -1, idLeaf(predicate.Gt, 100), ReadStats{BatchesSkipped: 5}, -1, -1},
		// A range starting inside a batch: the rows before it are neither
		// counted nor returned; the batches before it are not visited.
		{"mid range", 25, 42, idLeaf(predicate.GtEq, 0), ReadStats{Batches: 3, Rows: 17}, 25, 41},
		{"mid range skipping", 25, 42, idLeaf(predicate.GtEq, 40), ReadStats{Batches: 1, BatchesSkipped: 2, Rows: 2}, 40, 41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.ReadLog(ctx, tb, tc.start, tc.stop, ReadOptions{Filter: tc.filter})
			require.NoError(t, err)
			defer r.Close()
			offsets := drain(t, r)
			require.Equal(t, tc.want, r.Stats())
			if tc.first < 0 {
				require.Empty(t, offsets)
				return
			}
			require.Equal(t, tc.first, offsets[0])
			require.Equal(t, tc.last, offsets[len(offsets)-1])
			require.Len(t, offsets, int(tc.want.Rows))
		})
	}
}

// countingAllocator counts the allocations made through it.
type countingAllocator struct {
	memory.Allocator
	n atomic.Int64
}

func (c *countingAllocator) Allocate(size int) []byte {
	c.n.Add(1)
	return c.Allocator.Allocate(size)
}

func (c *countingAllocator) Reallocate(size int, b []byte) []byte {
	c.n.Add(1)
	return c.Allocator.Reallocate(size, b)
}

// TestEmptyProjectionDecodesNothing pins what COUNT(*) relies on: a read
// without columns decodes no Arrow data and allocates no buffer from the
// allocator, yet reports every row, also from the middle of the log.
func TestEmptyProjectionDecodesNothing(t *testing.T) {
	counting := &countingAllocator{}
	e, _ := testEngine(t, "", func(o *Options) {
		counting.Allocator = o.Allocator
		o.Allocator = counting
	})
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	for b := range 20 {
		var rows [][]any
		for i := range 7 {
			rows = append(rows, orderRow(b*7+i))
		}
		appendRows(t, e, "orders", rows)
	}
	tb := bucket(info, 0)
	for _, start := range []int64{0, 3, 70, 139} {
		before, pooled := counting.n.Load(), batchPool.buffers.Load()
		r, err := e.ReadLog(ctx, tb, start, -1, ReadOptions{Projection: []int{}})
		require.NoError(t, err)
		var rows int64
		for r.Next() {
			rec := r.Batch().Record
			require.Zero(t, rec.NumCols())
			rows += rec.NumRows()
		}
		require.NoError(t, r.Err())
		require.NoError(t, r.Close())
		require.Equal(t, 140-start, rows)
		require.Equal(t, 140-start, r.Stats().Rows)
		require.Equal(t, before, counting.n.Load(), "an empty projection allocates no buffer")
		require.Equal(t, pooled, batchPool.buffers.Load(), "an empty projection takes no batch buffer")
	}

	// The same read of one column takes a buffer per batch: the count
	// above would notice decoding.
	pooled := batchPool.buffers.Load()
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{Projection: []int{0}})
	require.NoError(t, err)
	require.Len(t, drain(t, r), 140)
	require.NoError(t, r.Close())
	require.GreaterOrEqual(t, batchPool.buffers.Load()-pooled, int64(20))
}

// TestSkippedBatchIsNotRead: the statistics decide before the rows are
// read, so a batch the filter skips costs one small read. Damage in its
// rows is then not seen; a read that needs them reports it.
func TestSkippedBatchIsNotRead(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	appendRows(t, e, "orders", [][]any{orderRow(1), orderRow(2)})
	appendRows(t, e, "orders", [][]any{orderRow(50), orderRow(60)})
	tb := bucket(info, 0)
	seg := filepath.Join(dir, tabletDir(tb), segmentFiles(t, dir, tb)[0])
	starts := batchStarts(t, seg)
	flipByte(t, seg, starts[1]-8) // inside the first batch's rows

	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{Filter: idLeaf(predicate.Gt, 10)})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, drain(t, r))
	require.Equal(t, ReadStats{Batches: 1, BatchesSkipped: 1, Rows: 2}, r.Stats())
	require.NoError(t, r.Close())

	r, err = e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
	require.NoError(t, err)
	for r.Next() {
	}
	require.ErrorIs(t, r.Err(), metadata.ErrCorrupt)
	require.NoError(t, r.Close())
}

// TestStatisticsColumns: table.statistics.columns names the columns whose
// statistics batches carry (by default every column with an order; the
// empty string: none), and only those can skip batches.
func TestStatisticsColumns(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	nameIs := func(v string) predicate.P {
		return &predicate.Leaf{Op: predicate.Eq, Column: 1, Name: "name", Type: metadata.StringType(), Literals: []any{v}}
	}
	dtAfter := &predicate.Leaf{Op: predicate.Gt, Column: 3, Name: "dt", Type: metadata.DateType(), Literals: []any{metadata.DateValue(30000)}}
	for _, tc := range []struct {
		option  *string
		skipped map[string]bool
	}{
		{nil, map[string]bool{"id": true, "name": true, "dt": true}},
		{ptr("*"), map[string]bool{"id": true, "name": true, "dt": true}},
		{ptr("id"), map[string]bool{"id": true}},
		{ptr("name,dt"), map[string]bool{"name": true, "dt": true}},
		{ptr(""), map[string]bool{}},
	} {
		name := "default"
		opts := map[string]string{}
		if tc.option != nil {
			name = fmt.Sprintf("%q", *tc.option)
			opts[metadata.OptStatisticsColumns] = *tc.option
		}
		t.Run(name, func(t *testing.T) {
			table := fmt.Sprintf("t%d", len(e.mu.cat.byID))
			info := createTable(t, e, table, ordersColumns(), nil, opts)
			appendRows(t, e, table, [][]any{orderRow(1), orderRow(2)})
			for col, filter := range map[string]predicate.P{"id": idLeaf(predicate.Gt, 100), "name": nameIs("nobody"), "dt": dtAfter} {
				r, err := e.ReadLog(ctx, bucket(info, 0), 0, -1, ReadOptions{Filter: filter})
				require.NoError(t, err)
				rows := drain(t, r)
				require.NoError(t, r.Close())
				if tc.skipped[col] {
					require.Empty(t, rows, "a filter on %s skips by its statistics", col)
					require.Equal(t, int64(1), r.Stats().BatchesSkipped)
				} else {
					require.Len(t, rows, 2, "no statistics for %s: nothing skipped", col)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestLongStringBounds: strings longer than the stored bound are kept as
// a shorter lower bound and a raised upper bound, which never skip a batch
// holding a match.
func TestLongStringBounds(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	long := strings.Repeat("m", 100)
	appendRows(t, e, "orders", [][]any{{int64(1), long + "a", 1.0, "2026-01-02"}, {int64(2), long + "z", 2.0, "2026-01-02"}})
	appendRows(t, e, "orders", [][]any{{int64(3), strings.Repeat("\U0010FFFF", 20), 1.0, "2026-01-02"}})
	str := func(op predicate.Op, v string) predicate.P {
		return &predicate.Leaf{Op: op, Column: 1, Name: "name", Type: metadata.StringType(), Literals: []any{v}}
	}
	for _, tc := range []struct {
		filter predicate.P
		want   []int64
	}{
		{str(predicate.Eq, long+"z"), []int64{0, 1}},
		{str(predicate.Eq, long+"a"), []int64{0, 1}},
		{str(predicate.GtEq, long+"z"), []int64{0, 1, 2}},
		{str(predicate.Gt, long+"zz"), []int64{0, 1, 2}}, // the raised bound cannot tell
		{str(predicate.Lt, long), []int64{0, 1}},         // the shortened min is a prefix of long
		{str(predicate.Lt, "mm"), []int64{}},
		{str(predicate.Eq, strings.Repeat("\U0010FFFF", 20)), []int64{2}},
		{str(predicate.StartsWith, long[:70]), []int64{0, 1}},
		{str(predicate.StartsWith, "n"), []int64{}},
	} {
		r, err := e.ReadLog(ctx, bucket(info, 0), 0, -1, ReadOptions{Filter: tc.filter})
		require.NoError(t, err)
		got := drain(t, r)
		require.NoError(t, r.Close())
		if got == nil {
			got = []int64{}
		}
		require.Equal(t, tc.want, got, "%s", tc.filter)
	}
}

// TestKvSnapshotChunksSkipped: a KV snapshot read skips the chunks whose
// statistics rule the filter out, and counts them.
func TestKvSnapshotChunksSkipped(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", nil)
	var rows [][]any
	for i := range 3 * kvSnapChunkRows {
		rows = append(rows, []any{fmt.Sprint("v", i), i, int64(i)})
	}
	upsert(t, e, "t", rows...)
	res, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	require.Len(t, res, 1)
	tb := bucket(info, 0)
	// Keys ascend, so each chunk holds one range of n.
	filter := &predicate.Leaf{Op: predicate.Lt, Column: 2, Name: "n", Type: metadata.BigIntType(), Literals: []any{int64(10)}}
	r, err := e.ReadKvSnapshot(ctx, tb, res[0].SnapshotID, ReadOptions{Filter: filter, Projection: []int{2}})
	require.NoError(t, err)
	var got int64
	for r.Next() {
		got += r.Batch().Record.NumRows()
	}
	require.NoError(t, r.Err())
	require.NoError(t, r.Close())
	st := r.Stats()
	require.Equal(t, int64(1), st.Batches)
	require.Equal(t, int64(2), st.BatchesSkipped)
	require.Equal(t, int64(kvSnapChunkRows), got, "the chunk that may match is returned whole")
	require.Equal(t, got, st.Rows)

	all, _ := snapshotRows(t, e, tb, res[0].SnapshotID, ReadOptions{})
	require.Len(t, all, 3*kvSnapChunkRows)
}
