package lake

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// writeForeignParquet writes rows the way another engine might: types
// fluss tables do not use (unsigned, nanosecond timestamps with a zone),
// a required column and several row groups.
func writeForeignParquet(t *testing.T, path string, rows int) *arrow.Schema {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Uint32Builder).Append(uint32(i * 2))
		if i%3 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append("v")
		}
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1e9))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return schema
}

func TestOpenParquetFileReadsForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.parquet")
	want := writeForeignParquet(t, path, 250)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	rr, rows, err := OpenParquetFile(bg, path, mem)
	require.NoError(t, err)
	require.EqualValues(t, 250, rows)
	require.Equal(t, want.NumFields(), rr.Schema().NumFields())
	for i, f := range want.Fields() {
		got := rr.Schema().Field(i)
		require.Equal(t, f.Name, got.Name)
		require.True(t, arrow.TypeEqual(f.Type, got.Type), "%s: %s, want %s", f.Name, got.Type, f.Type)
		require.Equal(t, f.Nullable, got.Nullable, f.Name)
	}
	var read, nulls int64
	var next int64
	for rr.Next() {
		rec := rr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			require.Equal(t, next, ids.Value(i), "rows come back in file order")
			next++
		}
		read += rec.NumRows()
		nulls += int64(rec.Column(2).NullN())
	}
	require.NoError(t, rr.Err())
	require.EqualValues(t, 250, read)
	require.EqualValues(t, 84, nulls) // every third of 250 rows, from 0
	rr.Release()
}

func TestOpenParquetFileRetainKeepsFileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeForeignParquet(t, path, 10)
	rr, _, err := OpenParquetFile(bg, path, nil)
	require.NoError(t, err)
	rr.Retain()
	rr.Release() // one reference is left: the reader still reads
	require.True(t, rr.Next())
	require.EqualValues(t, 10, rr.RecordBatch().NumRows())
	require.False(t, rr.Next())
	require.Nil(t, rr.RecordBatch())
	rr.Release()
}

func TestOpenParquetFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := OpenParquetFile(bg, filepath.Join(dir, "missing.parquet"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)

	garbage := filepath.Join(dir, "garbage.parquet")
	require.NoError(t, os.WriteFile(garbage, []byte("PAR1 this is not parquet PAR1"), 0o644))
	_, _, err = OpenParquetFile(bg, garbage, nil)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, "garbage.parquet")

	// A file cut short loses its footer.
	whole := filepath.Join(dir, "whole.parquet")
	writeForeignParquet(t, whole, 50)
	data, err := os.ReadFile(whole)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.parquet")
	require.NoError(t, os.WriteFile(cut, data[:len(data)/2], 0o644))
	_, _, err = OpenParquetFile(bg, cut, nil)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
}
