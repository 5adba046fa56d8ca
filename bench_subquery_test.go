package fluss_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkSubquery measures issue 16's J3 shapes: IN (SELECT ...) and
// [NOT] EXISTS correlated by an equality (run as a semi-join and an
// anti-join) of the rows of BenchmarkFullScan (FLUSS_BENCH_ROWS, default
// 1,000,000) against a 100,000-row table of every tenth id.
//
//	go test -run X -bench Subquery -benchtime 5x ./
func BenchmarkSubquery(b *testing.B) {
	rows := scanBenchRows(b)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE f (` + scanBenchColumns + `) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	appendScanRows(b, db, "f", 0, rows)
	dn := min(rows, 100_000)
	_, err = db.Exec(`CREATE TABLE d (x BIGINT, k INT) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	_, err = db.Exec(`INSERT INTO d SELECT id * 10, k FROM f WHERE id < ?`, dn)
	require.NoError(b, err)
	var matches int64
	for i := int64(0); i < rows; i += 10 {
		if i/10 < dn {
			matches++
		}
	}
	for _, q := range []struct {
		name, sql string
		want      int64
	}{
		{"IN", `SELECT COUNT(*) FROM f WHERE id IN (SELECT x FROM d)`, matches},
		{"EXISTS", `SELECT COUNT(*) FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.x = f.id)`, matches},
		{"NOT_EXISTS", `SELECT COUNT(*) FROM f WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.x = f.id)`, rows - matches},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				var n int64
				require.NoError(b, db.QueryRow(q.sql).Scan(&n))
				if n != q.want {
					b.Fatalf("%s: %d, want %d", q.name, n, q.want)
				}
			}
		})
	}
}
