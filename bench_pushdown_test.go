package fluss_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkSelectiveScan measures issue 5's benchmark: rows written in
// time order (one record batch per INSERT of benchRowsPerInsert rows), then
// `WHERE ts BETWEEN a AND b` selecting 1% of them, on a table with batch
// statistics (pushdown skips batches) and on the same rows without
// statistics (every batch is read and filtered). It reports the batches
// read and skipped per query. Rows: FLUSS_BENCH_ROWS (default 1,000,000).
//
//	go test -run X -bench BenchmarkSelectiveScan -benchtime 20x ./
//	FLUSS_BENCH_ROWS=10000000 go test -run X -bench BenchmarkSelectiveScan -benchtime 10x -timeout 1h ./
func BenchmarkSelectiveScan(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("FLUSS_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err)
		rows = n
	}
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	base := loadTimeOrdered(b, db, "ev", "", rows)
	loadTimeOrdered(b, db, "ev_nostats", ` WITH ('table.statistics.columns' = '')`, rows)

	// 1% of the rows, in the middle of the log.
	lo := base.Add(time.Duration(rows/2) * time.Millisecond)
	hi := lo.Add(time.Duration(rows/100-1) * time.Millisecond)
	for _, table := range []string{"ev", "ev_nostats"} {
		q := `SELECT id, v FROM ` + table + ` WHERE ts BETWEEN ? AND ?`
		b.Run(table, func(b *testing.B) {
			var read readTotals
			plan, err := db.Query("EXPLAIN ANALYZE "+q, lo, hi)
			require.NoError(b, err)
			for plan.Next() {
				var line string
				require.NoError(b, plan.Scan(&line))
				if strings.HasPrefix(line, "Read: ") {
					_, err := fmt.Sscanf(line, "Read: splits=%d/%d batches=%d skipped=%d row_groups=%d/%d rows=%d result_rows=%d",
						&read.opened, &read.splits, &read.batches, &read.skipped, &read.groups, &read.groupsAll, &read.rows, &read.result)
					require.NoError(b, err, line)
				}
			}
			require.NoError(b, plan.Err())
			plan.Close()
			require.Equal(b, int64(rows/100), read.result)
			b.ResetTimer()
			for b.Loop() {
				rs, err := db.Query(q, lo, hi)
				require.NoError(b, err)
				n := 0
				var id int64
				var v string
				for rs.Next() {
					if err := rs.Scan(&id, &v); err != nil {
						b.Fatal(err)
					}
					n++
				}
				require.NoError(b, rs.Err())
				rs.Close()
				if n != rows/100 {
					b.Fatalf("%d rows, want %d", n, rows/100)
				}
			}
			b.ReportMetric(float64(read.batches), "batches_read/op")
			b.ReportMetric(float64(read.skipped), "batches_skipped/op")
			b.ReportMetric(100*float64(read.batches)/float64(read.batches+read.skipped), "%batches_read")
		})
	}
}

// benchRowsPerInsert is the rows of one INSERT, hence of one batch.
const benchRowsPerInsert = 1000

// loadTimeOrdered creates table (ts TIMESTAMP(3), id BIGINT, v STRING) and
// writes rows rows one millisecond apart.
func loadTimeOrdered(tb testing.TB, db *sql.DB, table, with string, rows int) time.Time {
	tb.Helper()
	_, err := db.Exec(`CREATE TABLE ` + table + ` (ts TIMESTAMP(3), id BIGINT, v STRING)` + with)
	require.NoError(tb, err)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	holes := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", benchRowsPerInsert), ", ")
	stmt, err := db.Prepare(`INSERT INTO ` + table + ` VALUES ` + holes)
	require.NoError(tb, err)
	defer stmt.Close()
	args := make([]any, 0, 3*benchRowsPerInsert)
	for start := 0; start < rows; start += benchRowsPerInsert {
		args = args[:0]
		for i := start; i < start+benchRowsPerInsert; i++ {
			args = append(args, base.Add(time.Duration(i)*time.Millisecond), int64(i), "value-"+strconv.Itoa(i))
		}
		_, err := stmt.Exec(args...)
		require.NoError(tb, err)
	}
	return base
}
