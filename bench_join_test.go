package fluss_test

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// BenchmarkLookupJoin measures issue 16's J2: 10,000 random keys of a log
// table jk joined with a 4-bucket primary-key table kv of FLUSS_BENCH_ROWS
// rows (default 1,000,000) on its key, which fluss runs as a lookup join.
// As in the bench harness, kv has a KV snapshot and every tenth key was
// updated after it. Besides the wall time it reports the process's CPU
// time per query (cpu-ns/op), which a busy machine disturbs less (the
// lookups run on several goroutines, so it can exceed the wall time).
// FLUSS_BENCH_DIR, when set, keeps the database there
// and reuses it on the next run with the same row count, which saves the
// load of a large kv when profiling.
//
//	go test -run X -bench LookupJoin -benchtime 20x ./
//	FLUSS_BENCH_ROWS=10000000 FLUSS_BENCH_DIR=/tmp/j2 go test -run X -bench LookupJoin/lookup -cpuprofile cpu.out ./
func BenchmarkLookupJoin(b *testing.B) {
	n := scanBenchRows(b)
	const keys = 10_000
	dir := os.Getenv("FLUSS_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	dbDir := filepath.Join(dir, "j2-"+strconv.FormatInt(n, 10))
	_, statErr := os.Stat(dbDir)
	db, err := sql.Open("fluss", dbDir+"?sync=off&tiering=off&kv.snapshot.interval=0")
	require.NoError(b, err)
	defer db.Close()
	if statErr != nil {
		loadBenchKV(b, db, "kv", int(n))
		// Every tenth key updated after the snapshot: its row is in the
		// log tail, and its value is v + 1.
		appendBenchRows(b, db, "kv", n, 10, 1) // every tenth key updated, v one larger
		_, err = db.Exec(`CREATE TABLE jk (id BIGINT) WITH ('bucket.num' = '4')`)
		require.NoError(b, err)
		rng := rand.New(rand.NewPCG(3, 4))
		ids := make([]int64, keys)
		for i := range ids {
			ids[i] = rng.Int64N(n)
		}
		appendInt64s(b, db, "jk", ids)
	}
	var ids []int64
	rs, err := db.Query(`SELECT id FROM jk`)
	require.NoError(b, err)
	for rs.Next() {
		var id int64
		require.NoError(b, rs.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(b, rs.Err())
	require.Len(b, ids, keys)
	var want float64
	for _, id := range ids {
		_, _, v, _ := benchRow(id)
		if id%10 == 0 {
			v++
		}
		want += v
	}
	for _, q := range []struct{ name, sql string }{
		{"lookup", `SELECT COUNT(*), SUM(kv.v) FROM jk JOIN kv ON kv.id = jk.id`},
		{"hash", `SELECT COUNT(*), SUM(kv.v) FROM jk JOIN kv ON kv.id + 0 = jk.id`},
	} {
		b.Run(q.name, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				var (
					c   int64
					sum float64
				)
				require.NoError(b, db.QueryRow(q.sql).Scan(&c, &sum))
				if c != keys || math.Abs(sum-want) > 1e-9*math.Abs(want) {
					b.Fatalf("%s: count %d sum %v, want %d and %v", q.name, c, sum, keys, want)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// appendInt64s writes ids into table's one BIGINT column.
func appendInt64s(b *testing.B, db *sql.DB, table string, ids []int64) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
	defer rb.Release()
	for _, id := range ids {
		rb.Field(0).(*array.Int64Builder).Append(id)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	_, err = fluss.AppendArrow(ctx, conn, table, rec)
	require.NoError(b, err)
}
