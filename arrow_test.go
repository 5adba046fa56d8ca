package fluss

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// openArrowDB opens an in-memory database with a log table and a
// primary-key table holding the same rows, and one connection on it.
func openArrowDB(t *testing.T) (*sql.DB, *sql.Conn) {
	t.Helper()
	ctr, err := NewConnector(":memory:")
	require.NoError(t, err)
	db := sql.OpenDB(ctr)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	for _, q := range []string{
		`CREATE TABLE logt (id BIGINT, region STRING, amount DECIMAL(10,2), qty INT) WITH ('bucket.num' = '3')`,
		`CREATE TABLE pkt (id BIGINT NOT NULL, region STRING, amount DECIMAL(10,2), qty INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '3')`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	for i := range 300 {
		for _, tbl := range []string{"logt", "pkt"} {
			var qty any
			if i%7 != 0 {
				qty = int64(i % 11)
			}
			_, err := conn.ExecContext(ctx, "INSERT INTO "+tbl+" VALUES (?, ?, ?, ?)",
				int64(i), fmt.Sprintf("r%d", i%4), fmt.Sprintf("%d.%02d", i, i%100), qty)
			require.NoError(t, err)
		}
	}
	return db, conn
}

// rowsOf reads every row of a database/sql query as canonical strings.
func rowsOf(t *testing.T, conn *sql.Conn, q string, args ...any) []string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		s := ""
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			if i > 0 {
				s += "|"
			}
			s += fmt.Sprint(v)
		}
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// arrowRowsOf reads every row of an Arrow query the same way, through
// metadata.ValueAt and the driver's own converter.
func arrowRowsOf(t *testing.T, conn *sql.Conn, mem memory.Allocator, q string, args ...any) ([]string, *arrow.Schema) {
	t.Helper()
	rr, err := queryArrow(context.Background(), conn, mem, q, args...)
	require.NoError(t, err, q)
	defer rr.Release()
	conv := &converter{}
	var out []string
	for rr.Next() {
		rec := rr.RecordBatch()
		require.True(t, rec.Schema().Equal(rr.Schema()))
		for r := 0; r < int(rec.NumRows()); r++ {
			s := ""
			for c := 0; c < int(rec.NumCols()); c++ {
				typ := rowsTypeOf(t, rr.Schema().Field(c))
				v := conv.getter(rec.Column(c), typ)(r)
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				if c > 0 {
					s += "|"
				}
				s += fmt.Sprint(v)
			}
			out = append(out, s)
		}
	}
	require.NoError(t, rr.Err())
	return out, rr.Schema()
}

// rowsTypeOf maps the Arrow field types used by these tests back to fluss
// types.
func rowsTypeOf(t *testing.T, f arrow.Field) metadata.DataType {
	switch f.Type.ID() {
	case arrow.INT64:
		return metadata.BigIntType()
	case arrow.INT32:
		return metadata.IntType()
	case arrow.STRING:
		return metadata.StringType()
	case arrow.DECIMAL128:
		dt := f.Type.(*arrow.Decimal128Type)
		return metadata.DecimalType(int(dt.Precision), int(dt.Scale))
	case arrow.FLOAT64:
		return metadata.DoubleType()
	}
	t.Fatalf("unexpected arrow type %s", f.Type)
	return metadata.DataType{}
}

func TestQueryArrowMatchesQuery(t *testing.T) {
	_, conn := openArrowDB(t)
	for _, q := range []string{
		"SELECT * FROM logt ORDER BY id",
		"SELECT id, region FROM logt WHERE qty > 5 ORDER BY id",
		"SELECT * FROM pkt WHERE id = 42",
		"SELECT id, amount, qty FROM pkt WHERE region = 'r1' ORDER BY id",
		"SELECT region, count(*), sum(qty) FROM logt GROUP BY region ORDER BY region",
		"SELECT region, count(*) FROM pkt WHERE id >= 100 GROUP BY region ORDER BY region",
		"SELECT id + 1 FROM logt WHERE id < 10 ORDER BY id",
		"SELECT id FROM logt WHERE id = -1",
	} {
		t.Run(q, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got, _ := arrowRowsOf(t, conn, mem, q)
			require.Equal(t, rowsOf(t, conn, q), got)
			mem.AssertSize(t, 0)
		})
	}
}

func TestQueryArrowSchemaAndArgs(t *testing.T) {
	_, conn := openArrowDB(t)
	got, schema := arrowRowsOf(t, conn, memory.DefaultAllocator, "SELECT id, amount FROM pkt WHERE id = ? OR id = ? ORDER BY id", int64(3), int64(5))
	require.Equal(t, []string{"3|3.03", "5|5.05"}, got)
	require.Equal(t, "id", schema.Field(0).Name)
	require.False(t, schema.Field(0).Nullable, "a NOT NULL key column stays NOT NULL")
	require.Equal(t, &arrow.Decimal128Type{Precision: 10, Scale: 2}, schema.Field(1).Type)
	require.True(t, schema.Field(1).Nullable)
}

func TestQueryArrowErrors(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	_, err := QueryArrow(ctx, conn, "SELECT * FROM missing")
	require.ErrorIs(t, err, ErrNotFound)
	var fe *Error
	require.ErrorAs(t, err, &fe)
	_, err = QueryArrow(ctx, conn, "SELEC 1")
	require.ErrorIs(t, err, ErrSyntax)
	// The connection is still usable.
	require.Equal(t, []string{"1"}, rowsOf(t, conn, "SELECT 1"))
}

func TestQueryArrowCancel(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr, err := queryArrow(ctx, conn, mem, "SELECT * FROM logt WHERE qty > 0")
	require.NoError(t, err)
	cancel()
	for rr.Next() {
	}
	require.ErrorIs(t, rr.Err(), context.Canceled)
	rr.Release()
	mem.AssertSize(t, 0)
	// Cancelled before it starts.
	_, err = QueryArrow(ctx, conn, "SELECT * FROM logt")
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
	// The connection is still usable.
	require.Len(t, rowsOf(t, conn, "SELECT id FROM logt WHERE id < 3"), 3)
}

func TestQueryArrowReleaseEarly(t *testing.T) {
	_, conn := openArrowDB(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr, err := queryArrow(context.Background(), conn, mem, "SELECT id FROM logt WHERE qty > 1")
	require.NoError(t, err)
	require.True(t, rr.Next())
	rec := rr.RecordBatch()
	rec.Retain() // kept past Next
	rr.Retain()
	rr.Release() // still one reference
	require.True(t, rr.RecordBatch() != nil)
	rr.Release()
	require.Positive(t, rec.NumRows())
	rec.Release()
	mem.AssertSize(t, 0)
}

func newRecord(t *testing.T, fields []arrow.Field, fill func(b *array.RecordBuilder)) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	fill(b)
	return b.NewRecordBatch()
}

func TestAppendArrowRoundTrip(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE bulk (id BIGINT NOT NULL, name STRING, score DOUBLE, PRIMARY KEY (id) NOT ENFORCED)`)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `CREATE TABLE bulklog (name STRING, id BIGINT)`)
	require.NoError(t, err)

	// Columns by name, in another order, one nullable column missing.
	rec := newRecord(t, []arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "b", ""}, []bool{true, true, false})
		b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	})
	defer rec.Release()

	n, err := AppendArrow(ctx, conn, "bulk", rec)
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	require.Equal(t, []string{"1|a|<nil>", "2|b|<nil>", "3|<nil>|<nil>"}, rowsOf(t, conn, "SELECT * FROM bulk ORDER BY id"))

	n, err = AppendArrow(ctx, conn, "fluss.bulklog", rec)
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	got, _ := arrowRowsOf(t, conn, memory.DefaultAllocator, "SELECT id, name FROM bulklog ORDER BY id")
	require.Equal(t, []string{"1|a", "2|b", "3|<nil>"}, got)

	// Upserting again replaces by key.
	rec2 := newRecord(t, []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).Append(2)
		b.Field(1).(*array.Float64Builder).Append(1.5)
	})
	defer rec2.Release()
	_, err = AppendArrow(ctx, conn, "bulk", rec2)
	require.NoError(t, err)
	require.Equal(t, []string{"2|<nil>|1.5"}, rowsOf(t, conn, "SELECT * FROM bulk WHERE id = 2"))
}

func TestAppendArrowSchemaMismatch(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE bulk (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		fields []arrow.Field
		want   error
	}{
		{"wrong type", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, ErrInvalid},
		{"unknown column", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "nope", Type: arrow.BinaryTypes.String}}, ErrInvalid},
		{"missing NOT NULL", []arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, ErrConstraint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecord(t, tc.fields, func(b *array.RecordBuilder) {})
			defer rec.Release()
			_, err := AppendArrow(ctx, conn, "bulk", rec)
			require.ErrorIs(t, err, tc.want)
			var fe *Error
			require.ErrorAs(t, err, &fe)
		})
	}
	rec := newRecord(t, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {})
	defer rec.Release()
	_, err = AppendArrow(ctx, conn, "missing", rec)
	require.ErrorIs(t, err, ErrNotFound)
}
