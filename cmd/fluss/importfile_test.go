package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func TestInferTypes(t *testing.T) {
	header := []string{"i", "f", "b", "d", "ts", "s", "empty", "mixed"}
	sample := [][]string{
		{"1", "1.5", "true", "2026-01-02", "2026-01-02 03:04:05", "x", "", "1"},
		{"-7", "2", "FALSE", "1999-12-31", "2026-01-02T03:04:05.123Z", "", "", "1.5"},
		{"", "1e3", "", "", "", "3", "", "yes"},
	}
	require.Equal(t,
		[]string{"BIGINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP", "STRING", "STRING", "STRING"},
		inferTypes(header, sample))
	// A number too large for BIGINT is a DOUBLE.
	require.Equal(t, []string{"DOUBLE"}, inferTypes([]string{"n"}, [][]string{{"99999999999999999999"}}))
}

func TestAppendText(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "bin", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
		{Name: "t", Type: &arrow.Time32Type{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 5, Scale: 2}, Nullable: true},
	}, nil)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	good := []string{"-128", "70000", "1.25", "True", "ab", "01:02:03.5", "2026-01-02 03:04:05.678+01:00", "123.45"}
	for i, v := range good {
		require.NoError(t, appendText(b.Field(i), v), schema.Field(i).Name)
		require.NoError(t, appendText(b.Field(i), ""), "an empty field is NULL")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	require.Equal(t, int8(-128), rec.Column(0).(*array.Int8).Value(0))
	require.True(t, rec.Column(0).IsNull(1))
	require.Equal(t, arrow.Time32(3723500), rec.Column(5).(*array.Time32).Value(0))
	ts := rec.Column(6).(*array.Timestamp).Value(0).ToTime(arrow.Millisecond)
	require.Equal(t, time.Date(2026, 1, 2, 2, 4, 5, 678e6, time.UTC), ts, "a zone is converted to UTC")
	require.Equal(t, "123.45", rec.Column(7).(*array.Decimal128).ValueStr(0))

	bad := []string{"128", "1.5", "x", "maybe", "abc", "25:00:00", "yesterday", "1234.5"}
	for i, v := range bad {
		err := appendText(b.Field(i), v)
		require.Error(t, err, "%s %q", schema.Field(i).Name, v)
		require.Contains(t, err.Error(), fmt.Sprintf("%q does not fit", v))
	}
}

func TestCastRecord(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in := arrow.NewSchema([]arrow.Field{
		{Name: "skip", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	}, nil)
	want := arrow.NewSchema([]arrow.Field{
		{Name: "u", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	build := func(u uint64, ns int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, in)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(0)
		b.Field(1).(*array.Uint64Builder).Append(u)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ns))
		return b.NewRecordBatch()
	}
	rec := build(7, 5000)
	out, err := castRecord(context.Background(), want, rec, []int{1, 2})
	rec.Release()
	require.NoError(t, err)
	require.True(t, out.Schema().Equal(want))
	require.Equal(t, int64(7), out.Column(0).(*array.Int64).Value(0))
	require.Equal(t, arrow.Timestamp(5), out.Column(1).(*array.Timestamp).Value(0))
	out.Release()

	// A cast that would change a value is refused, never wrapped or cut.
	for _, rec := range []arrow.RecordBatch{build(1<<63, 0), build(0, 5001)} {
		_, err := castRecord(context.Background(), want, rec, []int{1, 2})
		rec.Release()
		require.Error(t, err)
		require.Contains(t, err.Error(), "cannot read")
	}
}

func TestSQLType(t *testing.T) {
	for _, tc := range []struct {
		typ  arrow.DataType
		want string
	}{
		{arrow.PrimitiveTypes.Uint8, "SMALLINT"},
		{arrow.PrimitiveTypes.Uint32, "BIGINT"},
		{arrow.BinaryTypes.LargeString, "STRING"},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, "BINARY(16)"},
		{&arrow.Decimal128Type{Precision: 12, Scale: 3}, "DECIMAL(12, 3)"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, "TIMESTAMP_LTZ(9)"},
		{&arrow.TimestampType{Unit: arrow.Second}, "TIMESTAMP(0)"},
		{&arrow.Time64Type{Unit: arrow.Microsecond}, "TIME(6)"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, "STRING"},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), "ARRAY<INT>"},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), "MAP<STRING, DOUBLE>"},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.FixedWidthTypes.Boolean}), "ROW<`a` BOOLEAN>"},
	} {
		got, err := sqlType(tc.typ)
		require.NoError(t, err, tc.typ.String())
		require.Equal(t, tc.want, got, tc.typ.String())
	}
	_, err := sqlType(arrow.Null)
	require.Error(t, err)
}

// TestImportProgress: on a terminal, a large import draws a bar redrawn
// in place and ends on its final state; elsewhere nothing is drawn.
func TestImportProgress(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("id,name\n")
	for i := range 5000 {
		fmt.Fprintf(&csv, "%d,name-%d\n", i, i)
	}
	path := filepath.Join(dir, "big.csv")
	require.NoError(t, os.WriteFile(path, []byte(csv.String()), 0o644))

	for _, tty := range []bool{true, false} {
		var out, errOut bytes.Buffer
		sh := newShell(&out, &errOut, tty)
		sh.progressMin, sh.batchRows = 0, 1000
		require.NoError(t, sh.open(context.Background(), filepath.Join(dir, "db")))
		table := fmt.Sprintf("big_%t", tty)
		require.NoError(t, sh.dot(context.Background(), ".import "+path+" "+table))
		require.NoError(t, sh.runSQL(context.Background(), "SELECT count(*) AS n FROM "+table))
		require.NoError(t, sh.close())
		require.Contains(t, out.String(), "| 5000 |")
		if !tty {
			require.Empty(t, errOut.String())
			continue
		}
		bar := errOut.String()
		require.True(t, strings.HasPrefix(bar, "\rimporting big.csv ["), "%q", bar)
		require.True(t, strings.HasSuffix(bar, "] 100%  5000 rows  "+lastField(bar)), "%q", bar)
	}
}

// lastField is the elapsed time at the end of a bar's last drawing, with
// the line's ending.
func lastField(bar string) string {
	return bar[strings.LastIndex(bar, " ")+1:]
}

// TestTierSpinner: on a terminal .tier draws a spinner while the round
// runs and says how long it took.
func TestTierSpinner(t *testing.T) {
	var out, errOut bytes.Buffer
	sh := newShell(&out, &errOut, true)
	ctx := context.Background()
	require.NoError(t, sh.open(ctx, filepath.Join(t.TempDir(), "db")))
	defer sh.close()
	require.NoError(t, sh.runSQL(ctx, "CREATE TABLE c (id BIGINT) WITH ('table.datalake.enabled' = 'true')"))
	require.NoError(t, sh.runSQL(ctx, "INSERT INTO c VALUES (1)"))
	require.NoError(t, sh.dot(ctx, ".tier c"))
	require.Contains(t, out.String(), "| snapshot_id |")
	require.Contains(t, errOut.String(), "\r| tiering c  ")
	require.Regexp(t, `\r\x1b\[Ktiered c in \S+\n$`, errOut.String())
}
