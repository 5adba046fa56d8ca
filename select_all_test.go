package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// ALL is the default set quantifier: every query written with it returns
// what the same query without it returns, on every kind of split.
func TestSelectAllIsTheDefaultQuantifier(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	for _, tbl := range seedOrders(t, db) {
		t.Run(tbl, func(t *testing.T) {
			for _, tc := range []struct{ with, without string }{
				{`SELECT ALL region FROM ` + tbl + ` ORDER BY id`, `SELECT region FROM ` + tbl + ` ORDER BY id`},
				{`SELECT ALL * FROM ` + tbl + ` ORDER BY id`, `SELECT * FROM ` + tbl + ` ORDER BY id`},
				{`SELECT COUNT(ALL region), COUNT(ALL *), SUM(ALL qty), MIN(ALL amount), MAX(ALL note), AVG(ALL qty) FROM ` + tbl,
					`SELECT COUNT(region), COUNT(*), SUM(qty), MIN(amount), MAX(note), AVG(qty) FROM ` + tbl},
				{`SELECT ALL region, COUNT ( ALL qty ) FROM ` + tbl + ` GROUP BY region HAVING SUM(ALL qty) > 1 ORDER BY region`,
					`SELECT region, COUNT(qty) FROM ` + tbl + ` GROUP BY region HAVING SUM(qty) > 1 ORDER BY region`},
			} {
				require.Equal(t, queryAll(t, db, tc.without), queryAll(t, db, tc.with), tc.with)
			}
			// Duplicates stay: ALL is not DISTINCT, and DISTINCT still is.
			require.Equal(t, [][]any{{"EU"}, {"EU"}, {"EU"}},
				queryAll(t, db, `SELECT ALL region FROM `+tbl+` WHERE region = 'EU'`))
			require.Equal(t, [][]any{{"EU"}}, queryAll(t, db, `SELECT DISTINCT region FROM `+tbl+` WHERE region = 'EU'`))
			require.Equal(t, [][]any{{int64(6), int64(3), int64(7)}},
				queryAll(t, db, `SELECT COUNT(ALL region), COUNT(DISTINCT region), COUNT(ALL *) FROM `+tbl))
		})
	}
}

func TestSelectAllInExplainAndPreparedStatements(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	seedOrders(t, db)
	require.Equal(t,
		queryAll(t, db, `EXPLAIN SELECT region, COUNT(qty) FROM orders WHERE id > 2 GROUP BY region`),
		queryAll(t, db, `EXPLAIN SELECT ALL region, COUNT(ALL qty) FROM orders WHERE id > 2 GROUP BY region`))

	stmt, err := db.Prepare(`SELECT ALL COUNT(ALL qty), SUM(ALL qty) FROM orders WHERE region = ?`)
	require.NoError(t, err)
	defer stmt.Close()
	for region, want := range map[string][2]int64{"EU": {2, 8}, "US": {2, 7}} {
		var got [2]int64
		require.NoError(t, stmt.QueryRow(region).Scan(&got[0], &got[1]))
		require.Equal(t, want, got, region)
	}
}
