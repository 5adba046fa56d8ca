package lakeunion

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// The binlog shape pairs a -U with the +U after it, also across batches
// of one bucket (never of two), and refuses what cannot be paired.
func TestBinlogShapePairs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	table := &metadata.TableInfo{Path: metadata.TablePath{Database: "d", Table: "t"}, TableID: 1,
		Schema: metadata.Schema{Columns: []metadata.Column{{Name: "id", Type: metadata.BigIntType(), NotNull: true}}, PrimaryKey: []string{"id"}}}
	batch := func(base int64, ids []int64, kinds ...metadata.ChangeType) storage.LogBatch {
		b := array.NewRecordBuilder(mem, projectedSchema(table, []int{0}))
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
		return storage.LogBatch{Record: b.NewRecordBatch(), BaseOffset: base, ChangeTypes: kinds, CommitTimestamp: 7}
	}
	tb0 := metadata.TableBucket{TableID: 1, Bucket: 0}
	tb1 := metadata.TableBucket{TableID: 1, Bucket: 1}
	build := func(sh *binlogShape, tb metadata.TableBucket, b storage.LogBatch) (int64, error) {
		defer b.Record.Release()
		rec, err := sh.build(tb, b)
		if err != nil {
			return 0, err
		}
		defer rec.Release()
		return rec.NumRows(), nil
	}
	sh := newBinlogShape(table, []int{BinlogChangeType, BinlogLogOffset}, mem)
	n, err := build(sh, tb0, batch(0, []int64{1, 1}, metadata.ChangeInsert, metadata.ChangeUpdateBefore))
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the -U waits for its +U")
	require.ErrorContains(t, sh.finish(tb0), "update_before (-U) at offset 1 has no update_after (+U) after it")

	sh = newBinlogShape(table, []int{BinlogChangeType, BinlogLogOffset}, mem)
	_, err = build(sh, tb0, batch(0, []int64{1}, metadata.ChangeUpdateBefore))
	require.NoError(t, err)
	_, err = build(sh, tb1, batch(0, []int64{2}, metadata.ChangeUpdateAfter))
	require.ErrorContains(t, err, "update_after (+U) at offset 0 without a preceding update_before (-U)", "a -U of another bucket is no pair")
	n, err = build(sh, tb0, batch(1, []int64{1}, metadata.ChangeUpdateAfter))
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, []int64{0}, sh.offsets, "at the -U's offset")
	require.Equal(t, []metadata.ChangeType{metadata.ChangeUpdateAfter}, sh.kinds)
	require.NoError(t, sh.finish(tb0))

	_, err = build(sh, tb0, batch(5, []int64{1, 1}, metadata.ChangeUpdateBefore, metadata.ChangeUpdateBefore))
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, "update_before (-U) at offset 6 follows the one at 5")
	_, err = build(newBinlogShape(table, []int{0}, mem), tb0, batch(0, []int64{1}, metadata.ChangeAppendOnly))
	require.ErrorContains(t, err, "t$binlog reads a primary-key table's changes")
	_, err = build(newBinlogShape(table, []int{0}, mem), tb0, batch(0, []int64{1}))
	require.ErrorContains(t, err, "has 0 change types for 1 rows")
}
