package fluss_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// insertRows writes ids [lo, hi) into partition p of t, 1000 rows a
// statement.
func insertRows(t *testing.T, db *sql.DB, table, p string, lo, hi int) {
	t.Helper()
	for from := lo; from < hi; from += 1000 {
		to := min(from+1000, hi)
		q := "INSERT INTO " + table + " VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", to-from), ", ")
		args := make([]any, 0, 3*(to-from))
		for id := from; id < to; id++ {
			args = append(args, id, p, strings.Repeat("x", 40))
		}
		mustExec(t, db, q, args...)
	}
}

// TestScanWhileDropped: a scan that is streaming when its table or one of
// its partitions is dropped either returns every row it planned or fails
// with ErrNotFound naming what is gone; it never reads a file the drop
// closed under it ("file already closed"). Small segments make every
// bucket's log several files, and a KV snapshot makes the key table's
// splits read one.
func TestScanWhileDropped(t *testing.T) {
	const perPartition = 6000
	for _, kind := range []string{"log", "pk"} {
		for _, drop := range []string{"table", "partition"} {
			for _, threads := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/%s/threads=%d", kind, drop, threads), func(t *testing.T) {
					db, _ := openDB(t, fmt.Sprintf("log.segment.file-size=16kb&threads=%d", threads))
					key := ""
					if kind == "pk" {
						key = ", PRIMARY KEY (id, p) NOT ENFORCED"
					}
					mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, p STRING NOT NULL, pad STRING`+key+`)
						PARTITIONED BY (p) WITH ('bucket.num' = '2')`)
					insertRows(t, db, "t", "a", 0, perPartition)
					insertRows(t, db, "t", "b", 0, perPartition)
					if kind == "pk" {
						mustExec(t, db, `CALL sys.kv_snapshot('t')`)
						insertRows(t, db, "t", "a", perPartition, perPartition+500)
						insertRows(t, db, "t", "b", perPartition, perPartition+500)
					}
					planned := 2 * perPartition
					if kind == "pk" {
						planned += 1000
					}

					rows, err := db.Query(`SELECT id, p, pad FROM t`)
					require.NoError(t, err)
					defer rows.Close()
					n := 0
					for n < 10 && rows.Next() {
						n++
					}
					require.Equal(t, 10, n)
					if drop == "table" {
						mustExec(t, db, `DROP TABLE t`)
					} else {
						mustExec(t, db, `ALTER TABLE t DROP PARTITION (p = 'a')`)
					}
					for rows.Next() {
						n++
					}
					err = rows.Err()
					if err != nil {
						require.NotContains(t, err.Error(), "file already closed")
						require.True(t, errors.Is(err, fluss.ErrNotFound), "%v", err)
						require.Contains(t, err.Error(), "fluss.t")
						require.Contains(t, err.Error(), "dropped")
						t.Logf("after %d rows: %v", n, err)
						return
					}
					require.Equal(t, planned, n, "a scan that ends without an error returns every planned row")
					t.Logf("all %d planned rows", n)
				})
			}
		}
	}
}
