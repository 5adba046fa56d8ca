package fluss_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// openStarDB fills a fact log table and two key tables at dsn, in
// several commits so that the fact table has many batches.
func openStarDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE f (id BIGINT, a INT, b INT, v DOUBLE, s STRING) WITH ('bucket.num' = '4')")
	mustExec(t, db, "CREATE TABLE d1 (id BIGINT, seg INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')")
	mustExec(t, db, "CREATE TABLE d2 (id BIGINT, region INT, grp INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')")
	var vals []string
	for i := range 200 {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, i%10))
	}
	mustExec(t, db, "INSERT INTO d1 VALUES "+strings.Join(vals, ", "))
	vals = vals[:0]
	for i := range 40 {
		grp := fmt.Sprint(i % 7)
		if i == 39 {
			grp = "NULL"
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, %s)", i, i%10, grp))
	}
	mustExec(t, db, "INSERT INTO d2 VALUES "+strings.Join(vals, ", "))
	id := 0
	for range 20 {
		vals = vals[:0]
		for range 300 {
			a, b := fmt.Sprint(id*7%230), fmt.Sprint(id*13%45)
			if id%17 == 0 {
				a = "NULL"
			}
			if id%19 == 0 {
				b = "NULL"
			}
			// Multiples of 1/16: a DOUBLE sum is exact in any order.
			vals = append(vals, fmt.Sprintf("(%d, %s, %s, %g, 's%d')", id, a, b, float64(id%1000)/16, id%37))
			id++
		}
		mustExec(t, db, "INSERT INTO f VALUES "+strings.Join(vals, ", "))
	}
	return db
}

// A join with GROUP BY over several workers gives the rows the same plan
// gives on one, and EXPLAIN says which way it runs.
func TestParallelJoinAggregateMatchesSerial(t *testing.T) {
	dir := t.TempDir() + "/db"
	queries := []string{
		`SELECT d2.grp, SUM(f.v), COUNT(*) FROM f JOIN d1 ON f.a = d1.id JOIN d2 ON f.b = d2.id
			WHERE d1.seg = 3 AND d2.region < 5 GROUP BY d2.grp`,
		`SELECT d2.grp, COUNT(f.a), MIN(f.s), MAX(f.v), AVG(f.v), SUM(f.id) FROM f LEFT JOIN d2 ON f.b = d2.id
			GROUP BY d2.grp HAVING COUNT(*) > 10 ORDER BY d2.grp`,
		`SELECT COUNT(*), SUM(f.v) FROM f JOIN d1 ON f.a = d1.id WHERE f.v > 10 AND d1.seg <> 2`,
		`SELECT d1.seg, COUNT(*) FROM f JOIN d1 ON f.a = d1.id AND f.id % 3 = 0 GROUP BY d1.seg ORDER BY 2 DESC LIMIT 3`,
	}
	serialDB := openStarDB(t, dir+"?threads=1")
	var serial [][]string
	for _, q := range queries {
		rows := txRows(t, serialDB, q)
		require.NotEmpty(t, rows, q)
		serial = append(serial, rows)
		plan := orderedRows(t, serialDB, "EXPLAIN "+q)
		require.Contains(t, plan[0], "[Serial: threads=1]", q)
	}
	require.NoError(t, serialDB.Close())

	db, err := sql.Open("fluss", dir+"?threads=4")
	require.NoError(t, err)
	defer db.Close()
	for i, q := range queries {
		require.Equal(t, serial[i], txRows(t, db, q), q)
		plan := orderedRows(t, db, "EXPLAIN "+q)
		require.Contains(t, plan[0], "[Parallel: 4 workers]", q)
	}
	// An aggregate that does not merge keeps the plan on one goroutine.
	q := "SELECT d2.grp, COUNT(DISTINCT f.a) FROM f JOIN d2 ON f.b = d2.id GROUP BY d2.grp"
	plan := orderedRows(t, db, "EXPLAIN "+q)
	require.Contains(t, plan[0], "[Serial: COUNT(DISTINCT f.a) does not merge]")
	require.Len(t, txRows(t, db, q), 8)
}
