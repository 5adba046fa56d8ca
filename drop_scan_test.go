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
// bucket's log several files, a KV snapshot makes the key table's splits
// read one, and a tiering round puts half of the lake table's rows in
// Parquet files.
func TestScanWhileDropped(t *testing.T) {
	const perPartition = 6000
	for _, kind := range []string{"log", "pk", "lake"} {
		for _, drop := range []string{"table", "partition"} {
			for _, threads := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/%s/threads=%d", kind, drop, threads), func(t *testing.T) {
					db, _ := openDB(t, fmt.Sprintf("log.segment.file-size=16kb&threads=%d&tiering=off", threads))
					key, with := "", ""
					switch kind {
					case "pk":
						key = ", PRIMARY KEY (id, p) NOT ENFORCED"
					case "lake":
						with = ", 'table.datalake.enabled' = 'true'"
					}
					mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, p STRING NOT NULL, pad STRING`+key+`)
						PARTITIONED BY (p) WITH ('bucket.num' = '2'`+with+`)`)
					insertRows(t, db, "t", "a", 0, perPartition)
					insertRows(t, db, "t", "b", 0, perPartition)
					if kind == "lake" {
						// Half of each bucket in the lake, half in the log.
						tier(t, db, "t")
						insertRows(t, db, "t", "a", perPartition, 2*perPartition)
						insertRows(t, db, "t", "b", perPartition, 2*perPartition)
					}
					if kind == "pk" {
						mustExec(t, db, `CALL sys.kv_snapshot('t')`)
						insertRows(t, db, "t", "a", perPartition, perPartition+500)
						insertRows(t, db, "t", "b", perPartition, perPartition+500)
					}
					planned := 2 * perPartition
					switch kind {
					case "pk":
						planned += 1000
					case "lake":
						planned *= 2
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

// TestFullScanDuringPartitionChurn: partitions added and dropped while a
// full scan plans are no error of the scan. The planner lists the
// partitions, then asks for their offsets; a partition dropped between
// the two is read as absent, as if the scan had planned after the drop,
// instead of failing the query with "partition ... not found". The churned
// partitions hold no rows, so every count is exact.
func TestFullScanDuringPartitionChurn(t *testing.T) {
	for _, kind := range []string{"log", "pk"} {
		t.Run(kind, func(t *testing.T) {
			db, _ := openDB(t)
			key := ""
			if kind == "pk" {
				key = ", PRIMARY KEY (id, p) NOT ENFORCED"
			}
			mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, p STRING NOT NULL, pad STRING`+key+`)
				PARTITIONED BY (p) WITH ('bucket.num' = '3')`)
			insertRows(t, db, "t", "a", 0, 500)
			insertRows(t, db, "t", "b", 0, 500)
			if kind == "pk" {
				mustExec(t, db, `CALL sys.kv_snapshot('t')`)
			}

			stop := make(chan struct{})
			churned := make(chan error, 1)
			go func() {
				var err error
				defer func() { churned <- err }()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					name := fmt.Sprintf("c%d", i%8)
					if _, err = db.Exec(`ALTER TABLE t ADD IF NOT EXISTS PARTITION (p = '` + name + `')`); err != nil {
						return
					}
					if _, err = db.Exec(`ALTER TABLE t DROP IF EXISTS PARTITION (p = '` + fmt.Sprintf("c%d", (i+4)%8) + `')`); err != nil {
						return
					}
				}
			}()
			var failed error
			for i := 0; i < 300 && failed == nil; i++ {
				var n int
				if failed = db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); failed == nil && n != 1000 {
					failed = fmt.Errorf("scan %d counted %d rows, want 1000", i, n)
				}
			}
			close(stop)
			require.NoError(t, <-churned)
			require.NoError(t, failed)
		})
	}
}
