package lake

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

var bg = context.Background()

// testLake opens a lake in memory or in a temporary directory, backed by a
// checked allocator that the test's cleanup verifies.
func testLake(t *testing.T, inMemory bool, tweak func(*Options)) (*Lake, *memory.CheckedAllocator) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts := Options{InMemory: inMemory, Sync: true, Allocator: mem}
	if !inMemory {
		opts.Dir = t.TempDir()
	}
	if tweak != nil {
		tweak(&opts)
	}
	l, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, l.Close())
		mem.AssertSize(t, 0)
	})
	return l, mem
}

func col(name string, typ metadata.DataType) metadata.Column {
	return metadata.Column{Name: name, Type: typ}
}

func testTable(id int64, cols []metadata.Column, pk []string, partKeys []string) *metadata.TableInfo {
	for _, k := range pk {
		for i := range cols {
			if cols[i].Name == k {
				cols[i].NotNull = true
			}
		}
	}
	return &metadata.TableInfo{
		Path:          metadata.TablePath{Database: "fluss", Table: "t"},
		TableID:       id,
		Schema:        metadata.Schema{Columns: cols, PrimaryKey: pk},
		PartitionKeys: partKeys,
		NumBuckets:    1,
	}
}

// canon coerces convenient Go values to the canonical form of typ.
func canon(t testing.TB, typ metadata.DataType, v any) any {
	t.Helper()
	out, err := metadata.CoerceValue(typ, v)
	require.NoError(t, err, "coerce %v to %s", v, typ)
	return out
}

// record builds a batch of the table's columns plus the system columns;
// row i gets __bucket 0, __offset base+i and a fixed __timestamp.
func record(t testing.TB, mem memory.Allocator, table *metadata.TableInfo, base int64, rows [][]any) arrow.RecordBatch {
	t.Helper()
	cols := fileColumns(table)
	sc := metadata.ArrowSchema(cols)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	for i, row := range rows {
		require.Len(t, row, len(table.Schema.Columns))
		for c, v := range row {
			require.NoError(t, metadata.AppendValue(b.Field(c), cols[c].Type, v))
		}
		n := len(row)
		require.NoError(t, metadata.AppendValue(b.Field(n), cols[n].Type, int64(0)))
		require.NoError(t, metadata.AppendValue(b.Field(n+1), cols[n+1].Type, base+int64(i)))
		require.NoError(t, metadata.AppendValue(b.Field(n+2), cols[n+2].Type, ts))
	}
	return b.NewRecordBatch()
}

// writeRows writes rows into one new file and returns its description.
func writeRows(t testing.TB, l *Lake, table *metadata.TableInfo, part string, values []string, snap int64, rows [][]any) metadata.LakeFile {
	t.Helper()
	w, err := l.NewFileWriter(table, part, values, 0, snap)
	require.NoError(t, err)
	for start := 0; start < len(rows); start += 1000 {
		rec := record(t, l.opts.Allocator, table, int64(start), rows[start:min(start+1000, len(rows))])
		err := w.Write(rec)
		rec.Release()
		require.NoError(t, err)
	}
	lf, err := w.Close()
	require.NoError(t, err)
	require.Equal(t, int64(len(rows)), lf.RowCount)
	return lf
}

// rowsOf reads every batch of r as canonical rows.
func rowsOf(t *testing.T, r RecordReader, types []metadata.DataType) [][]any {
	t.Helper()
	defer r.Close()
	var out [][]any
	for r.Next() {
		rec := r.Record()
		require.Equal(t, len(types), int(rec.NumCols()))
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]any, len(types))
			for c := range types {
				row[c] = metadata.ValueAt(rec.Column(c), types[c], i)
			}
			out = append(out, row)
		}
	}
	require.NoError(t, r.Err())
	return out
}
