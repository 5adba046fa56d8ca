package fluss

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// rawStrings builds a STRING array of vals over raw bytes; a nil entry
// of valid marks a NULL row, whose bytes are kept all the same (Arrow
// allows any bytes under a NULL).
func rawStrings(vals []string, valid []bool) arrow.Array {
	offsets := make([]int32, len(vals)+1)
	var data []byte
	bitmap := make([]byte, (len(vals)+7)/8)
	for i, v := range vals {
		data = append(data, v...)
		offsets[i+1] = int32(len(data))
		if valid == nil || valid[i] {
			bitmap[i/8] |= 1 << (i % 8)
		}
	}
	nulls := 0
	for i := range vals {
		if valid != nil && !valid[i] {
			nulls++
		}
	}
	d := array.NewData(arrow.BinaryTypes.String, len(vals), []*memory.Buffer{
		memory.NewBufferBytes(bitmap), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data),
	}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// idAndText is a record (id BIGINT, s STRING) with ids 1, 2, ...
func idAndText(vals []string, valid []bool) arrow.RecordBatch {
	ids := make([]int64, len(vals))
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	ib.AppendValues(ids, nil)
	idCol := ib.NewArray()
	defer idCol.Release()
	s := rawStrings(vals, valid)
	defer s.Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{idCol, s}, int64(len(vals)))
}

// TestAppendArrowRefusesInvalidUTF8 pins issue 15 item 11: a record with
// "\xff\xfe" in a STRING column went through AppendArrow's record path and
// was stored, read and tiered into Parquet as it was, where INSERT
// refuses it. Every path refuses it now, naming the row and the column,
// and writes nothing of the record.
func TestAppendArrowRefusesInvalidUTF8(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	for _, q := range []string{
		// The record path: a log table without keys.
		`CREATE TABLE fast (id BIGINT, s STRING) WITH ('bucket.num' = '2')`,
		// The row path: a primary-key table, a partitioned one.
		`CREATE TABLE keyed (id BIGINT NOT NULL, s STRING, PRIMARY KEY (id) NOT ENFORCED)`,
		`CREATE TABLE parted (id BIGINT, s STRING) PARTITIONED BY (id)`,
		`CREATE TABLE sized (id BIGINT, s CHAR(10))`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	for _, tc := range []struct {
		name  string
		vals  []string
		valid []bool
		row   int
	}{
		{"two bad bytes", []string{"ok", "\xff\xfe", "fine"}, nil, 2},
		{"a lone continuation byte", []string{"ok", "fine", "\x80"}, nil, 3},
		// "é" is \xc3\xa9: cut between two values, the data buffer is
		// valid as a whole and both values are not.
		{"a character cut between values", []string{"a\xc3", "\xa9b"}, nil, 1},
		{"a truncated character at the end", []string{"ok", "caf\xc3"}, nil, 2},
	} {
		rec := idAndText(tc.vals, tc.valid)
		for _, tbl := range []string{"fast", "keyed", "parted", "sized"} {
			_, err := AppendArrow(ctx, conn, tbl, rec)
			require.ErrorIs(t, err, metadata.ErrInvalidValue, "%s into %s", tc.name, tbl)
			require.ErrorContains(t, err, "not valid UTF-8", "%s into %s", tc.name, tbl)
			require.ErrorContains(t, err, "column s", "%s into %s", tc.name, tbl)
			require.ErrorContains(t, err, "row "+string(rune('0'+tc.row))+",", "%s into %s", tc.name, tbl)
		}
		rec.Release()
	}
	for _, tbl := range []string{"fast", "keyed", "parted", "sized"} {
		require.Equal(t, []string{"0"}, rowsOf(t, conn, "SELECT count(*) FROM "+tbl), "%s holds nothing of a refused record", tbl)
	}

	// Bytes under a NULL are nobody's text; valid UTF-8 of every width
	// passes.
	rec := idAndText([]string{"é", "\xff\xfe", "日本", "𝄞", ""}, []bool{true, false, true, true, true})
	defer rec.Release()
	for _, tbl := range []string{"fast", "keyed", "parted", "sized"} {
		n, err := AppendArrow(ctx, conn, tbl, rec)
		require.NoError(t, err, tbl)
		require.EqualValues(t, 5, n)
		require.Equal(t, []string{"1|é", "2|<nil>", "3|日本", "4|𝄞", "5|"}, rowsOf(t, conn, "SELECT id, s FROM "+tbl+" ORDER BY id"), tbl)
	}
	// A slice of a record is checked over its own rows only.
	bad := idAndText([]string{"\xff", "ok", "fine"}, nil)
	defer bad.Release()
	tail := bad.NewSlice(1, 3)
	defer tail.Release()
	n, err := AppendArrow(ctx, conn, "fast", tail)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	head := bad.NewSlice(0, 2)
	defer head.Release()
	_, err = AppendArrow(ctx, conn, "fast", head)
	require.ErrorContains(t, err, "row 1, column s")
}

// TestInvalidUTF8RefusedByStatements pins that the statements refuse
// what AppendArrow refuses: INSERT and UPDATE with a bound argument, and
// INSERT ... SELECT of a cast.
func TestInvalidUTF8RefusedByStatements(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	for _, q := range []string{"INSERT INTO logt (id, region) VALUES (1000, ?)", "INSERT INTO pkt (id, region) VALUES (1000, ?)",
		"UPDATE pkt SET region = ? WHERE id = 1"} {
		_, err := conn.ExecContext(ctx, q, "\xff\xfe")
		require.ErrorIs(t, err, ErrInvalid, q)
		require.ErrorContains(t, err, "not valid UTF-8", q)
	}
	_, err := conn.ExecContext(ctx, "INSERT INTO logt (id, region) VALUES (1001, CAST(X'FFFE' AS CHAR))")
	require.ErrorContains(t, err, "not valid UTF-8")
	require.Equal(t, []string{"300"}, rowsOf(t, conn, "SELECT count(*) FROM logt"))
	require.Equal(t, []string{"r1"}, rowsOf(t, conn, "SELECT region FROM pkt WHERE id = 1"))
}
