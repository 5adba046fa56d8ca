package fluss_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// The full-scan benchmarks behind issue 8's bars W1 (a full scan through
// database/sql, against the floor: a driver returning precomputed values)
// and W5 (the same rows with 90% of them tiered into the lake). Rows:
// FLUSS_BENCH_ROWS (default 1,000,000).
//
//	go test -run X -bench 'FullScan|LakeUnionScan' -benchtime 5x ./
//	go test -run X -bench FullScan/fluss -cpuprofile cpu.out ./ && go tool pprof -top fluss.test cpu.out

const scanBenchColumns = `id BIGINT, ts TIMESTAMP(3), k INT, v DOUBLE, s STRING`

// scanBenchRows is FLUSS_BENCH_ROWS, or 1,000,000.
func scanBenchRows(tb testing.TB) int64 {
	if s := os.Getenv("FLUSS_BENCH_ROWS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(tb, err)
		return n
	}
	return 1_000_000
}

// scanBenchRow is row i of the benchmark's data: ids in order, a
// timestamp one millisecond apart, hashed k, v and s.
func scanBenchRow(i int64) (id int64, ts arrow.Timestamp, k int32, v float64, s string) {
	h := uint64(i)*0x9e3779b97f4a7c15 ^ 0xbf58476d1ce4e5b9
	h ^= h >> 31
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	return i, arrow.Timestamp(base + i), int32(h % 1000), float64(h>>40) / 1024,
		"s-" + strconv.FormatUint(h%10_000_000_000, 36)
}

// appendScanRows writes rows [from, to) into table through
// fluss.AppendArrow in record batches of 64Ki rows.
func appendScanRows(tb testing.TB, db *sql.DB, table string, from, to int64) {
	tb.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(tb, err)
	defer conn.Close()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	const batch = 64 * 1024
	for lo := from; lo < to; lo += batch {
		for i := lo; i < min(lo+batch, to); i++ {
			id, ts, k, v, s := scanBenchRow(i)
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.TimestampBuilder).Append(ts)
			b.Field(2).(*array.Int32Builder).Append(k)
			b.Field(3).(*array.Float64Builder).Append(v)
			b.Field(4).(*array.StringBuilder).Append(s)
		}
		rec := b.NewRecordBatch()
		_, err := fluss.AppendArrow(ctx, conn, table, rec)
		rec.Release()
		require.NoError(tb, err)
	}
}

// scanEvery runs q and scans every column of every row into typed Go
// variables, as an application does; it checks the row count and, when
// checkSum, the sum of the ids.
func scanEvery(b *testing.B, db *sql.DB, q string, rows int64, checkSum bool) {
	rs, err := db.Query(q)
	require.NoError(b, err)
	var (
		id, k, n, sum int64
		ts            time.Time
		v             float64
		s             string
	)
	for rs.Next() {
		if err := rs.Scan(&id, &ts, &k, &v, &s); err != nil {
			b.Fatal(err)
		}
		n++
		sum += id
	}
	require.NoError(b, rs.Err())
	require.NoError(b, rs.Close())
	if n != rows || (checkSum && sum != rows*(rows-1)/2) {
		b.Fatalf("read %d rows (id sum %d), want %d", n, sum, rows)
	}
}

// reportPerRow reports the wall time and the process's CPU time per row
// read, the CPU time counted from cpuStart.
func reportPerRow(b *testing.B, rows int64, cpuStart time.Duration) {
	all := float64(int64(b.N) * rows)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/all, "ns/row")
	b.ReportMetric(float64((processCPU()-cpuStart).Nanoseconds())/all, "cpu-ns/row")
}

// BenchmarkFullScan is W1: a full scan of a 4-bucket log table through
// database/sql, beside the floor: the same scan through a driver that
// returns precomputed values, which is what database/sql itself costs.
func BenchmarkFullScan(b *testing.B) {
	rows := scanBenchRows(b)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE t (` + scanBenchColumns + `) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	appendScanRows(b, db, "t", 0, rows)

	b.Run("fluss", func(b *testing.B) {
		cpu := processCPU()
		for b.Loop() {
			scanEvery(b, db, `SELECT id, ts, k, v, s FROM t`, rows, true)
		}
		reportPerRow(b, rows, cpu)
	})
	b.Run("floor", func(b *testing.B) {
		floor := sql.OpenDB(floorConnector{rows: rows})
		defer floor.Close()
		cpu := processCPU()
		for b.Loop() {
			scanEvery(b, floor, `SELECT id, ts, k, v, s FROM t`, rows, false)
		}
		reportPerRow(b, rows, cpu)
	})
}

// BenchmarkLakeUnionScan is W5: the rows of BenchmarkFullScan in a
// lake-enabled table, the first 90% tiered into the lake and the rest in
// the log tail, read by a lake-union scan; log-only is the same rows
// before tiering, in another table, for the ratio.
func BenchmarkLakeUnionScan(b *testing.B) {
	rows := scanBenchRows(b)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	for _, t := range []string{"tl", "t"} {
		_, err = db.Exec(`CREATE TABLE ` + t + ` (` + scanBenchColumns + `) WITH ('bucket.num' = '4', 'table.datalake.enabled' = 'true')`)
		require.NoError(b, err)
	}
	cut := rows * 9 / 10
	appendScanRows(b, db, "tl", 0, cut)
	var snap int64
	require.NoError(b, db.QueryRow(`CALL sys.tier('tl')`).Scan(&snap))
	appendScanRows(b, db, "tl", cut, rows)
	appendScanRows(b, db, "t", 0, rows)

	for _, t := range []string{"tl", "t"} {
		name := map[string]string{"tl": "lake-union", "t": "log-only"}[t]
		b.Run(name, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				scanEvery(b, db, `SELECT id, ts, k, v, s FROM `+t, rows, true)
			}
			reportPerRow(b, rows, cpu)
		})
	}
}

// floorConnector is the database/sql floor: every query returns rows of
// the benchmark's shape from a small ring of values made in advance, so a
// scan through it costs what database/sql costs and nothing else.
type floorConnector struct{ rows int64 }

func (c floorConnector) Connect(context.Context) (driver.Conn, error) {
	ring := make([][]driver.Value, 1024)
	for i := range ring {
		id, ts, k, v, s := scanBenchRow(int64(i))
		ring[i] = []driver.Value{id, ts.ToTime(arrow.Millisecond), int64(k), v, s}
	}
	return &floorConn{rows: c.rows, ring: ring}, nil
}

func (c floorConnector) Driver() driver.Driver { return nil }

type floorConn struct {
	rows int64
	ring [][]driver.Value
}

func (c *floorConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (c *floorConn) Close() error                        { return nil }
func (c *floorConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }

func (c *floorConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &floorRows{c: c}, nil
}

type floorRows struct {
	c *floorConn
	i int64
}

func (r *floorRows) Columns() []string { return []string{"id", "ts", "k", "v", "s"} }
func (r *floorRows) Close() error      { return nil }

// Next copies a ring row, whose values are boxed already.
func (r *floorRows) Next(dest []driver.Value) error {
	if r.i == r.c.rows {
		return io.EOF
	}
	copy(dest, r.c.ring[r.i%int64(len(r.c.ring))])
	r.i++
	return nil
}

// BenchmarkBucketPruning measures a COUNT(*) whose WHERE pins the bucket
// key of a 16-bucket log table of FLUSS_BENCH_ROWS rows (default
// 1,000,000) written in batches of 64K rows (pruned), against the same
// WHERE written so that it reads every bucket (whole).
//
//	go test -run X -bench BenchmarkBucketPruning -benchtime 20x .
func BenchmarkBucketPruning(b *testing.B) {
	n := benchRows(b, 1_000_000)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE bp (` + benchColumns + `) WITH ('bucket.num' = '16', 'bucket.key' = 'k')`)
	require.NoError(b, err)
	appendBenchRows(b, db, "bp", int64(n), 1, 0)
	var want int64
	require.NoError(b, db.QueryRow(`SELECT COUNT(*) FROM bp WHERE k = 7`).Scan(&want))
	require.Equal(b, int64(n/1000), want)
	for _, c := range []struct{ name, q string }{
		{"pruned", `SELECT COUNT(*) FROM bp WHERE k = ?`},
		{"whole", `SELECT COUNT(*) FROM bp WHERE (k = ? OR v < -1)`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				var got int64
				require.NoError(b, db.QueryRow(c.q, 7).Scan(&got))
				require.Equal(b, want, got)
			}
		})
	}
}
