package fluss

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
)

// TestBoxAt pins the layout boxAt relies on: an interface built from a
// type word and a pointer holds the value pointed at, with that type.
func TestBoxAt(t *testing.T) {
	i, f, s := int64(1)<<40, 2.5, "a string"
	tm := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, c := range []struct {
		typ  unsafe.Pointer
		p    unsafe.Pointer
		want any
	}{
		{typeWordInt64, unsafe.Pointer(&i), i},
		{typeWordFloat64, unsafe.Pointer(&f), f},
		{typeWordString, unsafe.Pointer(&s), s},
		{typeWordTime, unsafe.Pointer(&tm), tm},
	} {
		got := boxAt(c.typ, c.p)
		require.IsType(t, c.want, got)
		require.Equal(t, c.want, got)
		require.True(t, got == c.want, "%v == %v", got, c.want)
	}
}

// convertTypes are the columns of the conversion tests: every branch of
// convertColumn, nullable.
var convertTypes = []metadata.DataType{
	metadata.TinyIntType(), metadata.SmallIntType(), metadata.IntType(), metadata.BigIntType(),
	metadata.FloatType(), metadata.DoubleType(), metadata.StringType(),
	metadata.TimestampType(0), metadata.TimestampType(3), metadata.TimestampType(6), metadata.TimestampType(9),
	metadata.TimestampLTZType(3),
	metadata.BooleanType(), metadata.DateType(), metadata.DecimalType(10, 2), metadata.BytesType(),
}

// convertRecord builds n rows of convertTypes, every seventh value NULL,
// strings of every length from empty to longer than a string block.
func convertRecord(t *testing.T, n int, seed uint64) arrow.RecordBatch {
	t.Helper()
	cols := make([]metadata.Column, len(convertTypes))
	for i, typ := range convertTypes {
		cols[i] = metadata.Column{Name: fmt.Sprintf("c%d", i), Type: typ}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, metadata.ArrowSchema(cols))
	defer b.Release()
	r := rand.New(rand.NewPCG(seed, 1))
	for row := range n {
		for c := range convertTypes {
			fb := b.Field(c)
			if (row+c)%7 == 3 {
				fb.AppendNull()
				continue
			}
			v := r.Int64()
			switch fb := fb.(type) {
			case *array.Int8Builder:
				fb.Append(int8(v))
			case *array.Int16Builder:
				fb.Append(int16(v))
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Int64Builder:
				fb.Append(v)
			case *array.Float32Builder:
				fb.Append(float32(v) / 3)
			case *array.Float64Builder:
				fb.Append(float64(v) / 7)
			case *array.StringBuilder:
				fb.Append(string(make([]byte, row%(stringChunk+40))) + fmt.Sprint(v))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v % (1 << 50)))
			case *array.BooleanBuilder:
				fb.Append(v%2 == 0)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v % 100000))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(v % 1e9))
			case *array.BinaryBuilder:
				fb.Append([]byte(fmt.Sprint(v)))
			default:
				t.Fatalf("no values for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestConvertBatch checks that the batch conversion gives, for every
// visible row, exactly what the row-by-row getter gives, with and without
// a selection vector, and that the values stay intact after later batches
// are converted and the collector has run.
func TestConvertBatch(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	conv := &converter{loc: berlin}
	type kept struct {
		vals [][]driver.Value
		want [][]driver.Value
	}
	var all []kept
	for seed := range uint64(3) {
		rec := convertRecord(t, 3000, seed)
		defer rec.Release()
		sels := [][]int32{nil, {}, {0}, {1, 2, 3, 500, 2999}}
		var every []int32
		for i := int32(0); i < 3000; i += 3 {
			every = append(every, i)
		}
		sels = append(sels, every)
		for _, sel := range sels {
			b := exec.Batch{Rec: rec, Sel: sel}
			db := conv.convertBatch(b, convertTypes)
			require.Equal(t, b.NumRows(), db.len())
			var k kept
			for p := range db.len() {
				dest := make([]driver.Value, len(convertTypes))
				db.row(p, dest)
				want := make([]driver.Value, len(convertTypes))
				for c, typ := range convertTypes {
					want[c] = conv.getter(rec.Column(c), typ)(b.Row(p))
				}
				require.Equal(t, want, dest, "row %d (record row %d)", p, b.Row(p))
				k.vals, k.want = append(k.vals, dest), append(k.want, want)
			}
			all = append(all, k)
		}
	}
	runtime.GC()
	for _, k := range all {
		require.Equal(t, k.want, k.vals)
	}
}

// batchOp is an exec.Operator over a list of batches, failing with err at
// the end when set (io.EOF otherwise); it counts its Close calls.
type batchOp struct {
	batches []exec.Batch
	err     error
	closed  int
}

func (o *batchOp) Next(ctx context.Context) (exec.Batch, error) {
	if err := ctx.Err(); err != nil {
		return exec.Batch{}, err
	}
	if len(o.batches) == 0 {
		if o.err != nil {
			return exec.Batch{}, o.err
		}
		return exec.Batch{}, io.EOF
	}
	b := o.batches[0]
	o.batches = o.batches[1:]
	return b, nil
}

func (o *batchOp) Close() error { o.closed++; return nil }

// pipelineRows returns Rows over batches of 1000 rows of one BIGINT
// column counting up from 0, enough of them to start the pipeline.
func pipelineRows(ctx context.Context, t *testing.T, batches int, err error) (*Rows, *batchOp) {
	t.Helper()
	cols := []metadata.Column{{Name: "id", Type: metadata.BigIntType()}}
	op := &batchOp{err: err}
	for i := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, metadata.ArrowSchema(cols))
		for j := range 1000 {
			b.Field(0).(*array.Int64Builder).Append(int64(i*1000 + j))
		}
		rec := b.NewRecordBatch()
		b.Release()
		t.Cleanup(rec.Release)
		op.batches = append(op.batches, exec.Batch{Rec: rec})
	}
	r := newRows(ctx, []query.Column{{Name: "id", Type: metadata.BigIntType()}}, op, &converter{loc: time.UTC})
	return r, op
}

// TestRowsPipeline reads results long enough to run the pipeline: every
// row in order, then the end, an operator's error, a cancelled context
// and an early Close, each leaving no goroutine behind and the operators
// closed once.
func TestRowsPipeline(t *testing.T) {
	defer goleak.VerifyNone(t)
	dest := make([]driver.Value, 1)

	t.Run("all rows", func(t *testing.T) {
		r, op := pipelineRows(context.Background(), t, 20, nil)
		for i := range 20000 {
			require.NoError(t, r.Next(dest))
			require.Equal(t, int64(i), dest[0])
		}
		require.ErrorIs(t, r.Next(dest), io.EOF)
		require.ErrorIs(t, r.Next(dest), io.EOF)
		require.NotNil(t, r.pipe, "20,000 rows run through the pipeline")
		require.NoError(t, r.Close())
		require.NoError(t, r.Close())
		require.Equal(t, 1, op.closed)
		require.Equal(t, int64(20000), r.count)
	})
	t.Run("operator error", func(t *testing.T) {
		boom := fmt.Errorf("boom: %w", metadata.ErrCorrupt)
		r, _ := pipelineRows(context.Background(), t, 10, boom)
		var err error
		n := 0
		for err = r.Next(dest); err == nil; err = r.Next(dest) {
			n++
		}
		require.Equal(t, 10000, n)
		require.ErrorIs(t, err, ErrCorrupt)
		require.ErrorIs(t, r.err, ErrCorrupt)
		require.NoError(t, r.Close())
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r, _ := pipelineRows(ctx, t, 20, nil)
		for range 6000 {
			require.NoError(t, r.Next(dest))
		}
		cancel()
		var err error
		for err = r.Next(dest); err == nil; err = r.Next(dest) {
		}
		require.True(t, errors.Is(err, context.Canceled), "%v", err)
		require.NoError(t, r.Close())
	})
	t.Run("early close", func(t *testing.T) {
		r, op := pipelineRows(context.Background(), t, 20, nil)
		for range 5000 {
			require.NoError(t, r.Next(dest))
		}
		require.NotNil(t, r.pipe)
		require.NoError(t, r.Close())
		require.Equal(t, 1, op.closed)
		require.ErrorIs(t, r.Next(dest), io.EOF)
	})
	t.Run("small result", func(t *testing.T) {
		r, _ := pipelineRows(context.Background(), t, 2, nil)
		for range 2000 {
			require.NoError(t, r.Next(dest))
		}
		require.ErrorIs(t, r.Next(dest), io.EOF)
		require.Nil(t, r.pipe, "a result below pipelineAfter rows starts no goroutine")
		require.NoError(t, r.Close())
	})
}

// TestScanLargeResult reads, through database/sql, results long enough to
// run the pipeline, with and without a filter (a selection vector), into
// typed variables and into any, and checks every value, also after the
// collector has run over the values kept.
func TestScanLargeResult(t *testing.T) {
	db, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE big (id BIGINT, ts TIMESTAMP(3), s STRING, d DECIMAL(10, 2), ok BOOLEAN) WITH ('bucket.num' = '3')`)
	require.NoError(t, err)
	const rows = 12000
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	want := func(id int64) []any {
		var s any = strings.Repeat("x", int(id%50)) + strconv.FormatInt(id, 10)
		if id%11 == 0 {
			s = nil
		}
		return []any{id, base.Add(time.Duration(id) * time.Millisecond), s, fmt.Sprintf("%d.%02d", id/100, id%100), id%2 == 0}
	}
	for lo := int64(0); lo < rows; lo += 1000 {
		q := `INSERT INTO big VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", 1000), ", ")
		var args []any
		for id := lo; id < lo+1000; id++ {
			args = append(args, want(id)...)
		}
		_, err := db.Exec(q, args...)
		require.NoError(t, err)
	}
	for _, c := range []struct {
		where string
		keep  func(int64) bool
	}{
		{"", func(int64) bool { return true }},
		{" WHERE id % 3 = 1", func(id int64) bool { return id%3 == 1 }},
	} {
		got := map[int64][]any{}
		rs, err := db.Query(`SELECT id, ts, s, d, ok FROM big` + c.where)
		require.NoError(t, err)
		for rs.Next() {
			v := make([]any, 5)
			require.NoError(t, rs.Scan(&v[0], &v[1], &v[2], &v[3], &v[4]))
			got[v[0].(int64)] = v
		}
		require.NoError(t, rs.Err())
		require.NoError(t, rs.Close())
		runtime.GC()
		n := 0
		for id := int64(0); id < rows; id++ {
			if !c.keep(id) {
				continue
			}
			n++
			require.Equal(t, want(id), got[id], "id %d%s", id, c.where)
		}
		require.Len(t, got, n)

		// Typed variables, as an application scans.
		rs, err = db.Query(`SELECT id, ts, s FROM big` + c.where)
		require.NoError(t, err)
		m := 0
		for rs.Next() {
			var (
				id int64
				ts time.Time
				s  sql.NullString
			)
			require.NoError(t, rs.Scan(&id, &ts, &s))
			w := want(id)
			require.Equal(t, w[1], ts)
			require.Equal(t, w[2] != nil, s.Valid)
			if s.Valid {
				require.Equal(t, w[2], s.String)
			}
			m++
		}
		require.NoError(t, rs.Err())
		require.NoError(t, rs.Close())
		require.Equal(t, n, m)
	}
}

// TestEmptyBytesIsNotNull: an empty BYTES value and NULL are different
// values, and a scan must tell them apart. database/sql hands a []byte on
// as it gets it, so an empty value the driver returns as a nil slice
// scans as a NULL would. Checked for a log table and a primary-key table
// (scan and point lookup), top-level and nested, into *[]byte and *any.
func TestEmptyBytesIsNotNull(t *testing.T) {
	db, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE lg (id INT, b BYTES, a ARRAY<BYTES>)`)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE pk (id INT PRIMARY KEY, b BYTES, a ARRAY<BYTES>)`)
	require.NoError(t, err)
	for _, tbl := range []string{"lg", "pk"} {
		_, err = db.Exec(`INSERT INTO `+tbl+` VALUES (1, ?, ?), (2, ?, NULL), (3, ?, ?)`, []byte{}, [][]byte{{}}, nil, []byte{0}, [][]byte{{0}})
		require.NoError(t, err)
	}
	for _, q := range []string{
		"SELECT id, b, a FROM lg ORDER BY id",
		"SELECT id, b, a FROM pk ORDER BY id",
		"SELECT id, b, a FROM lg WHERE id % 2 = 1 ORDER BY id",
	} {
		rs, err := db.Query(q)
		require.NoError(t, err)
		got := map[int64][]byte{}
		for rs.Next() {
			var id int64
			var b []byte
			var a any
			require.NoError(t, rs.Scan(&id, &b, &a))
			got[id] = b
			switch id {
			case 1:
				require.NotNil(t, a, q)
				require.Len(t, a.([]any), 1, q)
				require.Equal(t, []byte{}, a.([]any)[0], q)
			case 2:
				require.Nil(t, a, q)
			}
		}
		require.NoError(t, rs.Err())
		require.NoError(t, rs.Close())
		require.NotNil(t, got[1], "%s: the empty value reads as NULL", q)
		require.Equal(t, []byte{}, got[1], q)
		if _, ok := got[2]; ok {
			require.Nil(t, got[2], q)
		}
		require.Equal(t, []byte{0}, got[3], q)
	}
	for _, tbl := range []string{"lg", "pk"} {
		var v any
		require.NoError(t, db.QueryRow(`SELECT b FROM `+tbl+` WHERE id = 1`).Scan(&v))
		require.Equal(t, []byte{}, v, tbl)
		require.NoError(t, db.QueryRow(`SELECT b FROM `+tbl+` WHERE id = 2`).Scan(&v))
		require.Nil(t, v, tbl)
		var nb []byte
		require.NoError(t, db.QueryRow(`SELECT b FROM `+tbl+` WHERE id = 1`).Scan(&nb))
		require.NotNil(t, nb, tbl)
	}
}
