package storage

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// Log batches written under three schema ids read with the newest: every
// projection (the added columns alone, none of them, reordered), whole
// and in part (the projected columns of a large batch whose CRC an
// earlier read checked), and a filter on an added column skips the
// batches that predate it by their statistics.
func TestLogBatchesOfEarlierSchemas(t *testing.T) {
	e, _ := testEngine(t, t.TempDir(), nil)
	defer e.Close()
	info := createTable(t, e, "lg", []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType())}, nil, nil)
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
	big := make([][]any, 4000) // one batch over partialReadMin
	for i := range big {
		big[i] = []any{int64(i), fmt.Sprintf("row %d of the first schema", i)}
	}
	_, err := e.Commit(ctx, []Write{{Path: path("lg"), Kind: WriteAppend, Rows: big}})
	require.NoError(t, err)
	_, err = e.AddColumns(ctx, path("lg"), []metadata.Column{col("n", metadata.IntType())})
	require.NoError(t, err)
	_, err = e.Commit(ctx, []Write{{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{int64(4000), "second", int64(2)}}}})
	require.NoError(t, err)
	v3, err := e.AddColumns(ctx, path("lg"), []metadata.Column{col("d", metadata.DoubleType()), col("t", metadata.StringType())})
	require.NoError(t, err)
	require.Equal(t, int32(3), v3.SchemaID)
	require.Equal(t, []metadata.PastSchema{{ID: 1, Columns: 2}, {ID: 2, Columns: 3}}, v3.PastSchemas)
	_, err = e.Commit(ctx, []Write{{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{int64(4001), "third", nil, 1.5, "t"}}}})
	require.NoError(t, err)

	offsets, rows := readAll(t, e, tb, 0, -1, ReadOptions{})
	require.Len(t, rows, 4002)
	require.Equal(t, int64(4001), offsets[4001])
	require.Equal(t, []any{int64(7), "row 7 of the first schema", nil, nil, nil}, rows[7])
	require.Equal(t, []any{int64(4000), "second", int64(2), nil, nil}, rows[4000])
	require.Equal(t, []any{int64(4001), "third", nil, 1.5, "t"}, rows[4001])

	for _, c := range []struct {
		proj []int
		last []any
		at   [3][]any // rows 7, 4000 and 4001
	}{
		{proj: []int{2, 4}, at: [3][]any{{nil, nil}, {int64(2), nil}, {nil, "t"}}},
		{proj: []int{3, 0}, at: [3][]any{{nil, int64(7)}, {nil, int64(4000)}, {1.5, int64(4001)}}},
		{proj: []int{1}, at: [3][]any{{"row 7 of the first schema"}, {"second"}, {"third"}}},
	} {
		// Twice: the second read of the large batch reads only the
		// projected columns' buffers.
		for range 2 {
			_, rows := readAll(t, e, tb, 0, -1, ReadOptions{Projection: c.proj})
			require.Equal(t, c.at[0], rows[7], "projection %v", c.proj)
			require.Equal(t, c.at[1], rows[4000], "projection %v", c.proj)
			require.Equal(t, c.at[2], rows[4001], "projection %v", c.proj)
		}
	}
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{Projection: []int{0}})
	require.NoError(t, err)
	for r.Next() {
	}
	require.NoError(t, r.Err())
	require.Positive(t, r.PartialReads(), "the large batch of the first schema read in part")
	require.NoError(t, r.Close())

	// d = 1.5: the batches of schemas 1 and 2 have no d, all NULL.
	isD := &predicate.Leaf{Op: predicate.Eq, Column: 3, Name: "d", Type: metadata.DoubleType(), Literals: []any{1.5}}
	r, err = e.ReadLog(ctx, tb, 0, -1, ReadOptions{Projection: []int{0}, Filter: isD})
	require.NoError(t, err)
	var read int64
	for r.Next() {
		read += r.Batch().Record.NumRows()
	}
	require.NoError(t, r.Err())
	require.Equal(t, int64(1), read)
	require.Equal(t, int64(2), r.Stats().BatchesSkipped)
	require.NoError(t, r.Close())

	// The same after a reopen: the schemas are in the catalog.
	require.NoError(t, e.Close())
	e2, _ := testEngine(t, e.opts.Dir, nil)
	defer e2.Close()
	_, rows = readAll(t, e2, tb, 0, -1, ReadOptions{Projection: []int{4, 2, 1}})
	require.Equal(t, []any{nil, nil, "row 7 of the first schema"}, rows[7])
	require.Equal(t, []any{"t", nil, "third"}, rows[4001])
}

// KV values written under three schema ids, in the store and in a KV
// snapshot, read with the newest; a row that changes is stored in the
// newest schema.
func TestKvValuesOfEarlierSchemas(t *testing.T) {
	e, _ := testEngine(t, t.TempDir(), nil)
	defer e.Close()
	info := createPK(t, e, "t", nil) // v STRING, id INT, n BIGINT
	upsert(t, e, "t", []any{"a", 1, 10}, []any{"b", 2, 20})
	snaps, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	_, err = e.AddColumns(ctx, path("t"), []metadata.Column{col("x", metadata.StringType())})
	require.NoError(t, err)
	upsert(t, e, "t", []any{"c", 3, 30, "x3"})
	_, err = e.AddColumns(ctx, path("t"), []metadata.Column{col("y", metadata.BigIntType())})
	require.NoError(t, err)
	upsert(t, e, "t", []any{"d", 4, 40, nil, 4}, []any{"B", 2, 21, "x2", 2})

	want := map[int64][]any{
		1: {"a", int64(1), int64(10), nil, nil},
		2: {"B", int64(2), int64(21), "x2", int64(2)},
		3: {"c", int64(3), int64(30), "x3", nil},
		4: {"d", int64(4), int64(40), nil, int64(4)},
	}
	check := func(e *Engine) {
		t.Helper()
		for id, row := range want {
			got, found, err := e.Lookup(ctx, path("t"), []any{nil, id, nil, nil, nil})
			require.NoError(t, err)
			require.True(t, found, "id %d", id)
			require.Equal(t, row, got)
		}
	}
	check(e)
	// The stored values keep the schema id they were written with: 1 for
	// id 1, 2 for id 3, 3 for the rows written last.
	e.mu.RLock()
	entry := e.mu.cat.byID[info.TableID]
	e.mu.RUnlock()
	ids := map[int64]byte{}
	it, err := e.kv.NewIter(nil)
	require.NoError(t, err)
	for ok := it.First(); ok; ok = it.Next() {
		if it.Key()[0] != kvDataTag {
			continue
		}
		row, err := decodeRowValue(it.Value(), &entry.Info, entry.types)
		require.NoError(t, err)
		ids[row[1].(int64)] = it.Value()[0] // the schema id, one varint byte
	}
	require.NoError(t, it.Close())
	require.Equal(t, map[int64]byte{1: 1, 2: 3, 3: 2, 4: 3}, ids)

	// The snapshot taken under the first schema reads with the newest.
	r, err := e.ReadKvSnapshot(ctx, bucket(info, 0), snaps[0].SnapshotID, ReadOptions{Projection: []int{1, 3, 0}})
	require.NoError(t, err)
	var got [][]any
	for r.Next() {
		rec := r.Batch().Record
		for i := range int(rec.NumRows()) {
			got = append(got, []any{metadata.ValueAt(rec.Column(0), metadata.IntType(), i), metadata.ValueAt(rec.Column(1), metadata.StringType(), i), metadata.ValueAt(rec.Column(2), metadata.StringType(), i)})
		}
	}
	require.NoError(t, r.Err())
	require.NoError(t, r.Close())
	require.Equal(t, [][]any{{int64(1), nil, "a"}, {int64(2), nil, "b"}}, got)

	require.NoError(t, e.Close())
	e2, _ := testEngine(t, e.opts.Dir, nil)
	defer e2.Close()
	check(e2)
}
