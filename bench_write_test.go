package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// The row shape of the bench harness: (id, ts, k, v, s).
const benchColumns = `id BIGINT, ts TIMESTAMP(3), k INT, v DOUBLE, s STRING`

// reportCPU reports the CPU time of the benchmark's thread (locked to it)
// since cpu0 per op, which a busy machine disturbs less than the wall
// time. It does not count other goroutines (Pebble's flushes, the
// garbage collector's workers).
func reportCPU(b *testing.B, cpu0 int64) {
	if cpu := threadCPU(); cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// benchRows is FLUSS_BENCH_ROWS, or def.
func benchRows(b *testing.B, def int) int {
	if s := os.Getenv("FLUSS_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err)
		return n
	}
	return def
}

// benchRow is row i of the generated data: v and s are derived from id so
// that a lookup can check what it read.
func benchRow(i int64) (ts time.Time, k int32, v float64, s string) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(i) * time.Millisecond), int32(i % 1000), float64(i) * 0.5, "s" + strconv.FormatInt(i, 10)
}

// loadBenchKV creates a 4-bucket primary-key table of n rows, loaded with
// AppendArrow, and takes a KV snapshot of it, as the bench harness does.
func loadBenchKV(b *testing.B, db *sql.DB, table string, n int) {
	_, err := db.Exec(`CREATE TABLE ` + table + ` (` + benchColumns + `, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	appendBenchRows(b, db, table, int64(n), 1, 0)
	_, err = db.Exec(`CALL sys.kv_snapshot('` + table + `')`)
	require.NoError(b, err)
}

// appendBenchRows writes every every-th of the rows 0..n-1 of benchRow into
// table with AppendArrow, v raised by dv, in record batches of 64K rows.
func appendBenchRows(b *testing.B, db *sql.DB, table string, n, every int64, dv float64) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	const batch = 64 * 1024
	for lo := int64(0); lo < n; lo += batch * every {
		for i := lo; i < min(lo+batch*every, n); i += every {
			ts, k, v, s := benchRow(i)
			rb.Field(0).(*array.Int64Builder).Append(i)
			rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMilli()))
			rb.Field(2).(*array.Int32Builder).Append(k)
			rb.Field(3).(*array.Float64Builder).Append(v + dv)
			rb.Field(4).(*array.StringBuilder).Append(s)
		}
		rec := rb.NewRecordBatch()
		_, err := fluss.AppendArrow(ctx, conn, table, rec)
		rec.Release()
		require.NoError(b, err)
	}
}

// BenchmarkPointLookup measures W6 of the bench harness: a prepared
// `SELECT ... WHERE id = ?` of a random key of a 4-bucket primary-key
// table of FLUSS_BENCH_ROWS rows (default 1,000,000) with a KV snapshot
// taken, through database/sql.
//
//	go test -run X -bench BenchmarkPointLookup -benchtime 200000x .
func BenchmarkPointLookup(b *testing.B) {
	n := benchRows(b, 1_000_000)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off&kv.snapshot.interval=0")
	require.NoError(b, err)
	defer db.Close()
	loadBenchKV(b, db, "kv", n)
	for _, q := range []struct{ name, sql string }{
		{"all-columns", `SELECT id, ts, k, v, s FROM kv WHERE id = ?`},
		{"one-column", `SELECT v FROM kv WHERE id = ?`},
	} {
		b.Run(q.name, func(b *testing.B) {
			st, err := db.Prepare(q.sql)
			require.NoError(b, err)
			defer st.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			var (
				id, k int64
				ts    time.Time
				v     float64
				s     string
			)
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				key := rng.Int64N(int64(n))
				row := st.QueryRow(key)
				if q.name == "one-column" {
					err = row.Scan(&v)
				} else {
					err = row.Scan(&id, &ts, &k, &v, &s)
				}
				if err != nil {
					b.Fatalf("key %d: %v", key, err)
				}
				if _, _, want, _ := benchRow(key); v != want {
					b.Fatalf("key %d: v = %v, want %v", key, v, want)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkTxInsert measures W7 of the bench harness: single-row prepared
// INSERTs into a 4-bucket log table (and a primary-key table) inside a
// transaction, committed every FLUSS_BENCH_TX_ROWS rows (default 10,000).
// One op is one row.
//
//	go test -run X -bench BenchmarkTxInsert -benchtime 200000x .
func BenchmarkTxInsert(b *testing.B) {
	for _, kind := range []struct{ name, ddl string }{
		{"log", `CREATE TABLE w7 (` + benchColumns + `) WITH ('bucket.num' = '4')`},
		{"pk", `CREATE TABLE w7 (` + benchColumns + `, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')`},
	} {
		b.Run(kind.name, func(b *testing.B) {
			db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=on&tiering=off&kv.snapshot.interval=0")
			require.NoError(b, err)
			defer db.Close()
			_, err = db.Exec(kind.ddl)
			require.NoError(b, err)
			perTx := int64(10_000)
			if s := os.Getenv("FLUSS_BENCH_TX_ROWS"); s != "" {
				n, err := strconv.ParseInt(s, 10, 64)
				require.NoError(b, err)
				perTx = n
			}
			var (
				tx *sql.Tx
				st *sql.Stmt
			)
			commit := func() {
				require.NoError(b, st.Close())
				require.NoError(b, tx.Commit())
				tx, st = nil, nil
			}
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			var i int64
			for b.Loop() {
				if tx == nil {
					tx, err = db.Begin()
					require.NoError(b, err)
					st, err = tx.Prepare(`INSERT INTO w7 VALUES (?, ?, ?, ?, ?)`)
					require.NoError(b, err)
				}
				ts, k, v, s := benchRow(i)
				if _, err := st.Exec(i, ts, k, v, s); err != nil {
					b.Fatal(err)
				}
				i++
				if i%perTx == 0 {
					commit()
				}
			}
			if tx != nil {
				commit()
			}
			b.StopTimer()
			reportCPU(b, cpu0)
			var got int64
			require.NoError(b, db.QueryRow(`SELECT COUNT(*) FROM w7`).Scan(&got))
			require.Equal(b, i, got, fmt.Sprintf("rows in w7 after %d inserts", i))
		})
	}
}
