package fluss_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkAggregate measures issue 8's bar W8 (GROUP BY one INT key with
// SUM and COUNT) and issue 6's Q1 (COUNT with a filter), Q2 (top-N) and
// Q3 (DISTINCT of one INT column), over the rows of BenchmarkFullScan in a
// 4-bucket log table. Rows: FLUSS_BENCH_ROWS (default 1,000,000).
//
//	go test -run X -bench Aggregate -benchtime 10x ./
//	go test -run X -bench Aggregate/W8 -cpuprofile cpu.out ./ && go tool pprof -top fluss.test cpu.out
func BenchmarkAggregate(b *testing.B) {
	rows := scanBenchRows(b)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE t (` + scanBenchColumns + `) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	appendScanRows(b, db, "t", 0, rows)

	// The expected shapes: k takes 1,000 values, all of them present once
	// there are a few thousand rows.
	groups := min(rows, 1000)
	for _, q := range []struct {
		name, sql string
		rows      int64
	}{
		{"W8", `SELECT k, SUM(v), COUNT(*) FROM t GROUP BY k`, groups},
		{"Q1", `SELECT COUNT(*) FROM t WHERE k < 100`, 1},
		{"Q2", `SELECT id, ts, k, v, s FROM t ORDER BY v DESC LIMIT 10`, min(rows, 10)},
		{"Q3", `SELECT DISTINCT k FROM t`, groups},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				rs, err := db.Query(q.sql)
				require.NoError(b, err)
				cols, err := rs.Columns()
				require.NoError(b, err)
				dest := make([]any, len(cols))
				for i := range dest {
					dest[i] = new(any)
				}
				var n int64
				for rs.Next() {
					if err := rs.Scan(dest...); err != nil {
						b.Fatal(err)
					}
					n++
				}
				require.NoError(b, rs.Err())
				require.NoError(b, rs.Close())
				if n != q.rows {
					b.Fatalf("%s: %d rows, want %d", q.name, n, q.rows)
				}
			}
		})
	}
}
