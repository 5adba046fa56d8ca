package fluss

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

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

// A log table in the table's own column order takes the record as it is
// (storage.AppendRecord: sliced, not turned into rows). It must read back
// exactly as the same rows written through the row path (the record's
// columns in another order), also through filters that statistics prune
// with.
func TestAppendArrowRecordPathMatchesRows(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	const cols = `(id BIGINT NOT NULL, ts TIMESTAMP(3), k INT, v DOUBLE, s STRING, d DATE, ok BOOLEAN, b BYTES)`
	for _, q := range []string{
		`CREATE TABLE fast ` + cols + ` WITH ('bucket.num' = '3')`,
		`CREATE TABLE slow ` + cols + ` WITH ('bucket.num' = '3')`,
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err)
	}
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}
	const n = 20_000 // several chunks per bucket, so several batches
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rec := newRecord(t, fields, func(rb *array.RecordBuilder) {
		for i := range n {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			if i%13 == 0 {
				for c := 1; c < len(fields); c++ {
					rb.Field(c).AppendNull()
				}
				continue
			}
			rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base.Add(time.Duration(i) * time.Second).UnixMilli()))
			rb.Field(2).(*array.Int32Builder).Append(int32((i * 7919) % 1000))
			v := float64(i%500) / 4
			if i%101 == 0 {
				v = math.NaN()
			}
			rb.Field(3).(*array.Float64Builder).Append(v)
			rb.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("s%05d", (i*31)%20_000))
			rb.Field(5).(*array.Date32Builder).Append(arrow.Date32FromTime(base.AddDate(0, 0, i%90)))
			rb.Field(6).(*array.BooleanBuilder).Append(i%3 == 0)
			rb.Field(7).(*array.BinaryBuilder).Append([]byte{byte(i), byte(i >> 8)})
		}
	})
	defer rec.Release()
	got, err := AppendArrow(ctx, conn, "fast", rec)
	require.NoError(t, err)
	require.EqualValues(t, n, got)

	// The same columns in reverse order go through the row path.
	rev := make([]arrow.Array, len(fields))
	revFields := make([]arrow.Field, len(fields))
	for i := range fields {
		rev[i], revFields[i] = rec.Column(len(fields)-1-i), fields[len(fields)-1-i]
	}
	slow := array.NewRecordBatch(arrow.NewSchema(revFields, nil), rev, n)
	defer slow.Release()
	got, err = AppendArrow(ctx, conn, "slow", slow)
	require.NoError(t, err)
	require.EqualValues(t, n, got)

	for _, q := range []string{
		`SELECT * FROM %s ORDER BY id`,
		`SELECT id FROM %s WHERE ts >= '2026-03-01 01:00:00' AND ts < '2026-03-01 01:10:00' ORDER BY id`,
		`SELECT id FROM %s WHERE k = 999 ORDER BY id`,
		`SELECT id FROM %s WHERE v > 124.5 ORDER BY id`,
		`SELECT id FROM %s WHERE s = 's00031' OR s < 's00003' ORDER BY id`,
		`SELECT id FROM %s WHERE d = '2026-05-29' ORDER BY id`,
		`SELECT COUNT(*), COUNT(ts), MIN(ts), MAX(ts), MIN(s), MAX(s), SUM(k), MIN(d), MAX(b) FROM %s`,
		`SELECT id FROM %s WHERE ok AND id > 19990 ORDER BY id`,
		`SELECT id FROM %s WHERE id BETWEEN 4000 AND 4010 ORDER BY id`,
		`SELECT id FROM %s WHERE id > 19998 OR id < 1 ORDER BY id`,
	} {
		want := rowsOf(t, conn, fmt.Sprintf(q, "slow"))
		require.NotEmpty(t, want, q)
		require.Equal(t, want, rowsOf(t, conn, fmt.Sprintf(q, "fast")), q)
	}
	// Spread over the buckets: every bucket got some of the rows.
	require.NoError(t, conn.Raw(func(dc any) error {
		eng := dc.(*Conn).connector.shared.engine
		info, err := eng.TableInfo(ctx, metadata.TablePath{Database: "fluss", Table: "fast"})
		if err != nil {
			return err
		}
		var tbs []metadata.TableBucket
		for b := range 3 {
			tbs = append(tbs, metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: int32(b)})
		}
		hw, err := eng.ListOffsets(ctx, tbs, metadata.OffsetLatest)
		if err != nil {
			return err
		}
		var total int64
		for _, tb := range tbs {
			require.Positive(t, hw[tb], "bucket %d", tb.Bucket)
			total += hw[tb]
		}
		require.EqualValues(t, n, total)
		return nil
	}))
}

// The record path refuses what the row path refuses, before writing
// anything.
func TestAppendArrowRecordPathRefuses(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE fast (id BIGINT NOT NULL, ts TIMESTAMP(3))`)
	require.NoError(t, err)
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	}
	for _, tc := range []struct {
		name string
		fill func(b *array.RecordBuilder)
		want error
		text string
	}{
		{"NULL in NOT NULL", func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 0}, []bool{true, false})
			b.Field(1).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, 2}, nil)
		}, ErrConstraint, "id"},
		{"timestamp out of range", func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
			b.Field(1).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, math.MaxInt64 / 2}, nil)
		}, ErrInvalid, "row 2, column ts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecord(t, fields, tc.fill)
			defer rec.Release()
			_, err := AppendArrow(ctx, conn, "fast", rec)
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.text)
			require.Equal(t, []string{"0"}, rowsOf(t, conn, `SELECT COUNT(*) FROM fast`))
		})
	}
}

// Inside a transaction AppendArrow buffers its rows like an INSERT: no
// one else sees them before Commit, the transaction reads them, and
// Rollback drops them.
func TestAppendArrowInTransaction(t *testing.T) {
	db, conn := openArrowDB(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE bulk (id BIGINT, name STRING)`)
	require.NoError(t, err)
	rec := newRecord(t, []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
		b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "b"}, nil)
	})
	defer rec.Release()
	count := func() (n int) {
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM bulk`).Scan(&n))
		return n
	}
	for _, commit := range []bool{false, true} {
		tx, err := conn.BeginTx(ctx, nil)
		require.NoError(t, err)
		n, err := AppendArrow(ctx, conn, "bulk", rec)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		require.Equal(t, 0, count(), "visible before Commit")
		var own int
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM bulk WHERE name = 'b'`).Scan(&own))
		require.Equal(t, 1, own, "the transaction reads its own appended rows")
		if commit {
			require.NoError(t, tx.Commit())
			require.Equal(t, 2, count())
		} else {
			require.NoError(t, tx.Rollback())
			require.Equal(t, 0, count())
		}
	}
	ro, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	_, err = AppendArrow(ctx, conn, "bulk", rec)
	require.ErrorIs(t, err, ErrReadOnly)
	require.NoError(t, ro.Rollback())
}

// BenchmarkAppendArrow measures the bulk write path: 64K-row records of
// (BIGINT, TIMESTAMP(3), INT, DOUBLE, STRING) into a 4-bucket log table,
// each call durable when it returns.
func BenchmarkAppendArrow(b *testing.B) {
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=on&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), k INT, v DOUBLE, s STRING) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const rows = 1 << 20
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for i := range rows {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(i)))
		rb.Field(2).(*array.Int32Builder).Append(int32(i % 1000))
		rb.Field(3).(*array.Float64Builder).Append(float64(i) / 3)
		rb.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("s-%x", i*7919))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	conn, err := db.Conn(context.Background())
	require.NoError(b, err)
	defer conn.Close()
	b.SetBytes(0)
	b.ResetTimer()
	for b.Loop() {
		n, err := AppendArrow(context.Background(), conn, "t", rec)
		if err != nil || n != rows {
			b.Fatalf("AppendArrow: %d rows, %v", n, err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// AppendArrow applies no defaults: a record lacking a column that has one
// is refused, naming it, rather than writing NULL there.
func TestAppendArrowRefusesLeftOutDefault(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	_, err := conn.ExecContext(ctx, `CREATE TABLE dl (id BIGINT, status STRING DEFAULT 'new')`)
	require.NoError(t, err)
	rec := newRecord(t, []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{1}, nil)
	})
	defer rec.Release()
	_, err = AppendArrow(ctx, conn, "dl", rec)
	require.ErrorIs(t, err, ErrConstraint)
	require.ErrorContains(t, err, "lacks column status of table fluss.dl, which has a DEFAULT")
}
