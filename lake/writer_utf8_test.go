package lake

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestWriterRefusesInvalidUTF8 pins the lake's last guard of issue 15
// item 11: a record with text that is not UTF-8 was written into Parquet
// as it was, where every other engine reads STRING as UTF-8. The writer
// refuses it, naming the file's row and the column, and writes nothing
// of that record.
func TestWriterRefusesInvalidUTF8(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := simpleTable()
	w, err := l.NewFileWriter(table, "", nil, 0, 1)
	require.NoError(t, err)
	defer w.Abort()
	good := record(t, l.opts.Allocator, table, 0, simpleRows(0, 4))
	defer good.Release()
	require.NoError(t, w.Write(good))

	rows := simpleRows(4, 8)
	rows[2][1] = "caf\xc3"
	bad := record(t, l.opts.Allocator, table, 4, rows)
	defer bad.Release()
	err = w.Write(bad)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "row 7, column name")
	require.ErrorContains(t, err, "not valid UTF-8")
	require.EqualValues(t, 4, w.Rows(), "nothing of the refused record is written")
}
