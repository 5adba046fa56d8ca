package storage

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestDamagedLengthIsNotATornTail: a length field damaged in the middle of
// the last segment makes its batch run past the end of the file, as a
// torn write does; but whole batches follow it, so it is damage to report,
// not a tail to cut off with every good batch after it.
func TestDamagedLengthIsNotATornTail(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "orders", ordersColumns(), nil, nil)
		for s := range 3 {
			appendRows(t, e, "orders", [][]any{orderRow(2 * s), orderRow(2*s + 1)})
		}
	}()
	tb := bucket(info, 0)
	seg := filepath.Join(dir, tabletDir(tb), segmentName(0, ".log"))
	starts := batchStarts(t, seg)
	flipByte(t, seg, starts[1]+10) // a high byte of the second batch's length

	e, _ := testEngine(t, dir, nil)
	require.Equal(t, int64(6), hw(t, e, tb), "nothing is truncated")
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
	require.NoError(t, err)
	var rows int64
	for r.Next() {
		rows += r.Batch().Record.NumRows()
	}
	require.Equal(t, int64(2), rows, "the batch before the damage is read")
	require.ErrorIs(t, r.Err(), metadata.ErrCorrupt)
	require.ErrorContains(t, r.Err(), segmentName(0, ".log"))
	require.NoError(t, r.Close())
	offsets, _ := readAll(t, e, tb, 4, -1, ReadOptions{})
	require.Equal(t, []int64{4, 5}, offsets, "the batch after the damage is still there")
}
