package lake

import (
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// allTypesTable has a column of every DESIGN §2 type Parquet holds, and
// rows covering extremes and NULLs.
func allTypesTable(t *testing.T) (*metadata.TableInfo, [][]any) {
	ltz := time.Date(2026, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	cols := []metadata.Column{
		col("b", metadata.BooleanType()),
		col("ti", metadata.TinyIntType()),
		col("si", metadata.SmallIntType()),
		col("i", metadata.IntType()),
		col("bi", metadata.BigIntType()),
		col("f", metadata.FloatType()),
		col("d", metadata.DoubleType()),
		col("dec", metadata.DecimalType(10, 2)),
		col("dec38", metadata.DecimalType(38, 10)),
		col("ch", metadata.CharType(3)),
		col("s", metadata.StringType()),
		col("bin", metadata.BinaryType(4)),
		col("by", metadata.BytesType()),
		col("dt", metadata.DateType()),
		col("t0", metadata.TimeType(0)),
		col("t3", metadata.TimeType(3)),
		col("t9", metadata.TimeType(9)),
		col("ts0", metadata.TimestampType(0)),
		col("ts6", metadata.TimestampType(6)),
		col("ts9", metadata.TimestampType(9)),
		col("ltz3", metadata.TimestampLTZType(3)),
		col("ltz9", metadata.TimestampLTZType(9)),
		col("arr", metadata.ArrayType(metadata.IntType())),
		col("m", metadata.MapType(metadata.StringType(), metadata.IntType())),
		col("r", metadata.RowType(metadata.Field{Name: "a", Type: metadata.IntType()}, metadata.Field{Name: "b", Type: metadata.StringType()})),
		col("arr_ltz", metadata.ArrayType(metadata.TimestampLTZType(3))),
	}
	table := testTable(7, cols, nil, nil)
	raw := [][]any{
		{true, int64(-128), int64(-32768), int64(math.MinInt32), int64(math.MinInt64), 1.5, -1e300,
			"12345678.91", "1234567890123456789012345678.0123456789", "abc", "héllo", []byte{0, 1, 2, 3}, []byte("bytes"),
			"2026-03-01", "12:34:56", "12:34:56.789", "23:59:59.123456789",
			"2026-01-02 03:04:05", "2026-01-02 03:04:05.123456", "1969-07-20 20:17:40.123456789",
			ltz, ltz.Add(456_789),
			[]any{int64(1), nil, int64(3)},
			metadata.MapValue{Keys: []any{"a", "b"}, Values: []any{int64(1), nil}},
			[]any{int64(1), "x"},
			[]any{ltz, nil}},
		{false, int64(127), int64(5), int64(7), int64(42), -2.25, 3.14159,
			"-0.05", "-9999999999999999999999999999.9999999999", "xyz", "", []byte{0xff, 0xfe, 0xfd, 0xfc}, []byte{},
			"1969-12-31", "00:00:00", "00:00:00.001", "00:00:00.000000001",
			"1900-01-01 00:00:00", "2262-01-01 00:00:00.5", "1970-01-01 00:00:00.000000001",
			ltz.Add(-48 * time.Hour), time.Unix(0, 1).UTC(),
			[]any{},
			metadata.MapValue{Keys: []any{}, Values: []any{}},
			[]any{nil, nil},
			[]any{}},
		make([]any, len(cols)), // all NULL
	}
	rows := make([][]any, len(raw))
	for i, r := range raw {
		rows[i] = make([]any, len(r))
		for c, v := range r {
			if v != nil {
				rows[i][c] = canon(t, cols[c].Type, v)
			}
		}
	}
	return table, rows
}

func TestRoundTripAllTypes(t *testing.T) {
	for _, inMemory := range []bool{true, false} {
		t.Run(map[bool]string{true: "memory", false: "disk"}[inMemory], func(t *testing.T) {
			l, _ := testLake(t, inMemory, nil)
			table, rows := allTypesTable(t)
			lf := writeRows(t, l, table, "", nil, 1, rows)
			require.Equal(t, "7/data/-/b0/1-0.parquet", lf.Path)
			require.Positive(t, lf.SizeBytes)

			all := make([]int, len(table.Schema.Columns))
			types := make([]metadata.DataType, 0, len(all)+3)
			for i, c := range table.Schema.Columns {
				all[i] = i
				types = append(types, c.Type)
			}
			for _, c := range systemColumns {
				types = append(types, c.Type)
			}
			rr, err := l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: all, WithSystemColumns: true})
			require.NoError(t, err)
			got := rowsOf(t, rr, types)
			require.Len(t, got, len(rows))
			ts := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
			for i := range rows {
				want := append(append([]any{}, rows[i]...), int64(0), int64(i), ts)
				require.Equal(t, want, got[i], "row %d", i)
			}

			// The file is plain Parquet with the logical types other
			// engines expect, zstd-compressed, with statistics that map
			// back to the written values.
			pf, err := l.openParquet(table, lf)
			require.NoError(t, err)
			defer pf.Close()
			logical := func(name string) schema.LogicalType {
				i := table.Schema.ColumnIndex(name)
				return pf.md.Schema.Column(pf.leaf[i]).LogicalType()
			}
			utc := func(name string) bool {
				return logical(name).(interface{ IsAdjustedToUTC() bool }).IsAdjustedToUTC()
			}
			require.True(t, utc("ltz3"))
			require.True(t, utc("ltz9"))
			require.False(t, utc("ts6"))
			require.False(t, utc("ts9"))
			require.IsType(t, schema.DecimalLogicalType{}, logical("dec38"))
			require.IsType(t, schema.DateLogicalType{}, logical("dt"))
			require.IsType(t, schema.StringLogicalType{}, logical("s"))
			cc, err := pf.md.RowGroup(0).ColumnChunk(0)
			require.NoError(t, err)
			require.Equal(t, compress.Codecs.Zstd, cc.Compression())

			st := pf.groupStats(table, 0, all)
			require.Equal(t, int64(3), st.RowCount())
			for i, c := range table.Schema.Columns {
				n, ok := st.NullCount(i)
				if !c.Type.StatsSupported() {
					_, minOK := st.Min(i)
					require.False(t, minOK, c.Name)
					continue
				}
				require.True(t, ok, c.Name)
				require.Equal(t, int64(1), n, c.Name)
				lo, hi := rows[0][i], rows[1][i]
				if metadata.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
				gotMin, ok := st.Min(i)
				require.True(t, ok, c.Name)
				gotMax, ok := st.Max(i)
				require.True(t, ok, c.Name)
				require.Zero(t, metadata.Compare(lo, gotMin), "min of %s: %v, want %v", c.Name, gotMin, lo)
				require.Zero(t, metadata.Compare(hi, gotMax), "max of %s: %v, want %v", c.Name, gotMax, hi)
			}
		})
	}
}
