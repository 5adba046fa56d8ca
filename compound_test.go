package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// openSetOpDB opens a database with a log table l and a primary-key table
// k whose rows overlap, with duplicates and NULLs in l.
func openSetOpDB(t *testing.T, opts ...string) *sql.DB {
	t.Helper()
	db, _ := openDB(t, opts...)
	mustExec(t, db, "CREATE TABLE l (id BIGINT, name STRING, v INT) WITH ('bucket.num' = '3')")
	mustExec(t, db, "INSERT INTO l VALUES (1, 'a', 10), (1, 'a', 10), (2, 'b', NULL), (2, 'b', NULL), (3, NULL, 30), (4, 'd', 40)")
	mustExec(t, db, "CREATE TABLE k (id INT NOT NULL, name STRING, score DECIMAL(10,2), PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')")
	mustExec(t, db, "INSERT INTO k VALUES (1, 'a', 1.50), (2, 'b', NULL), (5, 'e', 5.25)")
	return db
}

func TestSetOperations(t *testing.T) {
	db := openSetOpDB(t)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"SELECT id, name FROM l UNION ALL SELECT id, name FROM k",
			[]string{"1|a", "1|a", "1|a", "2|b", "2|b", "2|b", "3|<nil>", "4|d", "5|e"}},
		{"SELECT id, name FROM l UNION SELECT id, name FROM k",
			[]string{"1|a", "2|b", "3|<nil>", "4|d", "5|e"}},
		{"SELECT id, name FROM l UNION DISTINCT SELECT id, name FROM k",
			[]string{"1|a", "2|b", "3|<nil>", "4|d", "5|e"}},
		// NULL equals NULL in set operations.
		{"SELECT name, v FROM l INTERSECT SELECT name, NULL FROM k",
			[]string{"b|<nil>"}},
		{"SELECT id, name FROM l INTERSECT SELECT id, name FROM k",
			[]string{"1|a", "2|b"}},
		{"SELECT id, name FROM l INTERSECT ALL SELECT id, name FROM k UNION ALL SELECT 1, 'a'",
			[]string{"1|a", "1|a", "2|b"}},
		{"SELECT id, name FROM l EXCEPT SELECT id, name FROM k",
			[]string{"3|<nil>", "4|d"}},
		{"SELECT id, name FROM l EXCEPT ALL SELECT id, name FROM k",
			[]string{"1|a", "2|b", "3|<nil>", "4|d"}},
		// INTERSECT binds tighter: 1 UNION (2 INTERSECT 3) EXCEPT 1.
		{"SELECT 1 UNION SELECT 2 INTERSECT SELECT 3 EXCEPT SELECT 1", []string{}},
		{"SELECT 1 UNION (SELECT 2 INTERSECT SELECT 2) EXCEPT SELECT 1", []string{"2"}},
		// A table and no table; information_schema as a branch.
		{"SELECT name FROM l WHERE id = 4 UNION SELECT 'zz'", []string{"d", "zz"}},
		{"SELECT table_name FROM information_schema.tables WHERE table_schema = 'fluss' UNION SELECT 'k'", []string{"k", "l"}},
	} {
		require.Equal(t, tc.want, txRowsOrEmpty(t, db, tc.q), tc.q)
	}
}

func txRowsOrEmpty(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	out := txRows(t, db, q, args...)
	if out == nil {
		return []string{}
	}
	return out
}

func TestSetOperationOrderAndLimit(t *testing.T) {
	db := openSetOpDB(t)
	require.Equal(t, []string{"5|e", "4|d", "3|<nil>", "2|b", "1|a"},
		orderedRows(t, db, "SELECT id, name FROM l UNION SELECT id, name FROM k ORDER BY id DESC"))
	require.Equal(t, []string{"4|d", "3|<nil>"},
		orderedRows(t, db, "SELECT id, name FROM l UNION SELECT id, name FROM k ORDER BY 1 DESC LIMIT 2 OFFSET 1"))
	require.Equal(t, []string{"2|b", "3|<nil>"},
		orderedRows(t, db, "SELECT id AS n, name FROM l UNION SELECT id, name FROM k ORDER BY N LIMIT 1, 2"))
	require.Equal(t, []string{"3|<nil>", "4|d"},
		orderedRows(t, db, "SELECT id, name FROM l UNION ALL SELECT id, name FROM k ORDER BY id LIMIT 2 OFFSET 6"))
	// ORDER BY without LIMIT but with OFFSET, and LIMIT without ORDER BY.
	require.Equal(t, []string{"4", "5"}, orderedRows(t, db, "SELECT id FROM l UNION SELECT id FROM k ORDER BY id LIMIT 10 OFFSET 3"))
	require.Len(t, orderedRows(t, db, "SELECT id FROM l UNION ALL SELECT id FROM k LIMIT 4"), 4)
	// Parenthesised SELECTs keep their own ORDER BY and LIMIT, over
	// hidden sort columns too.
	require.Equal(t, []string{"4", "5"},
		orderedRows(t, db, "(SELECT id FROM l ORDER BY v DESC LIMIT 1) UNION ALL (SELECT id FROM k ORDER BY score DESC LIMIT 1) ORDER BY id"))
	// Placeholders number over the whole statement.
	require.Equal(t, []string{"4", "5"},
		orderedRows(t, db, "SELECT id FROM l WHERE v > ? UNION SELECT id FROM k WHERE score > ? ORDER BY id LIMIT ?", 30, 5, 2))
}

// The result's columns are named after the first SELECT and typed by what
// every SELECT's column converts to.
func TestSetOperationTypes(t *testing.T) {
	db := openSetOpDB(t)
	rows, err := db.Query("SELECT id AS ident, v AS val FROM l UNION SELECT id, score FROM k")
	require.NoError(t, err)
	cts, err := rows.ColumnTypes()
	require.NoError(t, err)
	require.Equal(t, "ident", cts[0].Name())
	require.Equal(t, "BIGINT", cts[0].DatabaseTypeName())
	require.Equal(t, "val", cts[1].Name())
	require.Equal(t, "DECIMAL", cts[1].DatabaseTypeName())
	require.NoError(t, rows.Close())
	require.Equal(t, []string{"1|1.50", "1|10.00", "2|<nil>", "3|30.00", "4|40.00", "5|5.25"},
		txRows(t, db, "SELECT id AS ident, v AS val FROM l UNION SELECT id, score FROM k"))
	// A number and a text are text, as in MySQL.
	require.Equal(t, []string{"1", "x"}, txRows(t, db, "SELECT 1 UNION SELECT 'x'"))
	// NULLs take the other SELECT's type.
	require.Equal(t, []string{"1.50", "5.25", "<nil>"}, txRows(t, db, "SELECT NULL UNION SELECT score FROM k"))
	// Equal values of different types are one row.
	require.Equal(t, []string{"1"}, txRows(t, db, "SELECT 1 UNION SELECT 1.0 UNION SELECT 1e0"))
}

func TestSetOperationErrors(t *testing.T) {
	db := openSetOpDB(t)
	for q, want := range map[string]string{
		"SELECT id, name FROM l UNION SELECT id FROM k":              "each SELECT of a UNION must have the same number of columns, 2 and 1",
		"SELECT id FROM l INTERSECT SELECT id, name FROM k":          "each SELECT of an INTERSECT must have the same number of columns, 1 and 2",
		"SELECT id FROM l UNION SELECT id FROM k ORDER BY missing":   "ORDER BY missing names no column of a UNION",
		"SELECT id FROM l UNION SELECT id FROM k ORDER BY 3":         "ORDER BY position 3 is not in the select list (1 to 1)",
		"SELECT id FROM l ORDER BY id UNION SELECT id FROM k":        "ORDER BY and LIMIT of one SELECT of a UNION need parentheses",
		"SELECT id FROM l UNION SELECT nope FROM k":                  "nope",
		"SELECT id FROM l UNION SELECT id FROM missing":              "missing",
		"SELECT id FROM l UNION SELECT id FROM k ORDER BY l.id":      "ORDER BY of a set operation by anything but an output column's name or position is not supported",
		"SELECT /*+ OPTIONS('nope'='1') */ id FROM l UNION SELECT 1": "nope",
	} {
		_, err := db.Query(q)
		require.ErrorContains(t, err, want, q)
	}
}

func TestSetOperationMemoryLimit(t *testing.T) {
	db, dsn := openDB(t)
	mustExec(t, db, "CREATE TABLE big (s STRING)")
	mustExec(t, db, "INSERT INTO big VALUES (?)", "x")
	for i := range 15 {
		mustExec(t, db, "INSERT INTO big SELECT CONCAT(s, ?) FROM big", fmt.Sprint(i%10))
	}
	small, err := sql.Open("fluss", dsn+"?memory.limit=1mb")
	require.NoError(t, err)
	defer small.Close()
	rows, err := small.Query("SELECT s FROM big UNION SELECT s FROM big")
	require.NoError(t, err)
	for rows.Next() {
	}
	err = rows.Err()
	require.NoError(t, rows.Close())
	require.ErrorIs(t, err, fluss.ErrInvalid)
	require.ErrorContains(t, err, "memory.limit of 1MiB exceeded by UNION")
	// UNION ALL holds nothing.
	require.Len(t, txRows(t, small, "SELECT s FROM big UNION ALL SELECT s FROM big"), 2<<15)
}

func TestInsertSelectSetOperation(t *testing.T) {
	db := openSetOpDB(t)
	// The query reads l before anything is written: l doubles exactly.
	n := affected(t)(db.Exec("INSERT INTO l SELECT id, name, v FROM l UNION ALL SELECT id, name, 5 FROM k WHERE id = 5"))
	require.EqualValues(t, 7, n)
	require.Equal(t, []string{"1|a|10|4", "2|b|<nil>|4", "3|<nil>|30|2", "4|d|40|2", "5|e|5|1"},
		txRows(t, db, "SELECT id, name, v, COUNT(*) FROM l GROUP BY id, name, v"))
	mustExec(t, db, "CREATE TABLE only (id BIGINT, PRIMARY KEY (id) NOT ENFORCED)")
	n = affected(t)(db.Exec("INSERT INTO only SELECT id FROM l EXCEPT SELECT id FROM k"))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"3", "4"}, txRows(t, db, "SELECT * FROM only"))
	_, err := db.Exec("INSERT INTO only SELECT id, name FROM l UNION SELECT id, name FROM k")
	require.ErrorContains(t, err, "INSERT has 1 target columns but the UNION returns 2")
}

func TestExplainSetOperation(t *testing.T) {
	db := openSetOpDB(t)
	lines := orderedRows(t, db, "EXPLAIN SELECT id FROM l WHERE v > 1 UNION ALL SELECT id FROM k WHERE id = 2 ORDER BY id LIMIT 3")
	require.Equal(t, "TopN: 3 by id", lines[0])
	require.Equal(t, "  Union All", lines[1])
	require.True(t, strings.HasPrefix(lines[2], "    FlussScan: [fluss.l]"), lines[2])
	var lookup bool
	for _, l := range lines[2:] {
		require.True(t, strings.HasPrefix(l, "    "), "every branch line is indented under the operation: %q", l)
		lookup = lookup || strings.HasPrefix(l, "    FlussLookup: [fluss.k]")
	}
	require.True(t, lookup, "the point lookup of the second SELECT: %q", lines)

	lines = orderedRows(t, db, "EXPLAIN SELECT 1 EXCEPT (SELECT 2 INTERSECT SELECT 3)")
	require.Equal(t, []string{"Except", "  Values: 1 row (no FROM)", "  Intersect", "    Values: 1 row (no FROM)", "    Values: 1 row (no FROM)"}, lines)

	// EXPLAIN ANALYZE gives each node its rows and time, as for a join:
	// the set operation, each SELECT, each node of a SELECT's FROM tree.
	lines = orderedRows(t, db, "EXPLAIN ANALYZE SELECT id FROM l UNION SELECT id FROM k")
	require.True(t, strings.HasPrefix(lines[0], "Union (rows=5 time="), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "  FlussScan: [fluss.l]") && strings.Contains(lines[1], " (rows=6 time="), lines[1])
	require.Equal(t, "Read: result_rows=5", lines[len(lines)-1])
	var scanK bool
	for _, l := range lines {
		scanK = scanK || strings.HasPrefix(l, "  FlussScan: [fluss.k]") && strings.Contains(l, " (rows=3 time=")
	}
	require.True(t, scanK, "%q", lines)

	lines = orderedRows(t, db, "EXPLAIN ANALYZE SELECT l.id FROM l JOIN k ON l.id = k.id EXCEPT ALL (SELECT 1 UNION ALL SELECT 9) ORDER BY 1 LIMIT 5")
	require.True(t, strings.HasPrefix(lines[0], "TopN: 5 by id (rows=3 time="), lines[0])
	require.Equal(t, "  Except All", lines[1])
	require.True(t, strings.HasPrefix(lines[2], "    Project: l.id (rows=4 time="), lines[2])
	require.True(t, strings.HasPrefix(lines[3], "      HashJoin: inner [Keys: l.id = k.id]") && strings.Contains(lines[3], " (rows=4 time="), lines[3])
	var union bool
	for _, l := range lines {
		union = union || strings.HasPrefix(l, "    Union All (rows=2 time=")
	}
	require.True(t, union, "%q", lines)
	require.Equal(t, "Read: result_rows=3", lines[len(lines)-1])
}

func TestQueryArrowSetOperation(t *testing.T) {
	db := openSetOpDB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	rr, err := fluss.QueryArrow(ctx, conn, "SELECT id FROM l INTERSECT SELECT id FROM k")
	require.NoError(t, err)
	defer rr.Release()
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	require.NoError(t, rr.Err())
	require.EqualValues(t, 2, n)
}

// A SELECT of a set operation may join: each runs as it would alone.
func TestSetOperationOverJoins(t *testing.T) {
	db := openSetOpDB(t)
	q := "SELECT l.id, k.name FROM l JOIN k ON l.id = k.id UNION SELECT id, name FROM k WHERE id > 4"
	require.Equal(t, []string{"1|a", "2|b", "5|e"}, txRows(t, db, q))
	q = "SELECT l.id FROM l LEFT JOIN k ON l.id = k.id WHERE k.id IS NULL EXCEPT ALL SELECT 4"
	require.Equal(t, []string{"3"}, txRows(t, db, q))
	lines := orderedRows(t, db, "EXPLAIN SELECT l.id FROM l JOIN k ON l.id = k.id INTERSECT SELECT id FROM k")
	require.Equal(t, "Intersect", lines[0])
	var join bool
	for _, l := range lines[1:] {
		require.True(t, strings.HasPrefix(l, "  "), l)
		join = join || strings.Contains(l, "HashJoin")
	}
	require.True(t, join, "%q", lines)
}

// A derived table may be a set operation of any kind.
func TestSetOperationInDerivedTable(t *testing.T) {
	db := openSetOpDB(t)
	q := "SELECT d.x, COUNT(*) FROM (SELECT id AS x FROM l UNION ALL SELECT id FROM k) AS d GROUP BY d.x"
	require.Equal(t, []string{"1|3", "2|3", "3|1", "4|1", "5|1"}, txRows(t, db, q))
	q = "SELECT k.name, d.x FROM k JOIN (SELECT id AS x FROM l WHERE v > 20 UNION SELECT 5 ORDER BY 1 DESC LIMIT 2) AS d ON k.id = d.x"
	require.Equal(t, []string{"e|5"}, txRows(t, db, q))
	lines := orderedRows(t, db, "EXPLAIN SELECT * FROM (SELECT id FROM l UNION SELECT id FROM k) AS d JOIN k ON d.id = k.id")
	var derived, union bool
	for _, l := range lines {
		derived = derived || strings.Contains(l, "Derived: d")
		union = union || strings.TrimSpace(l) == "Union"
	}
	require.True(t, derived && union, "%q", lines)
	mustExec(t, db, "CREATE TABLE u (id BIGINT)")
	require.EqualValues(t, 5, affected(t)(db.Exec("INSERT INTO u SELECT x FROM (SELECT id AS x FROM l UNION SELECT id FROM k) AS d")))
}

// INTERSECT and EXCEPT in parentheses: a derived table, a subquery, an
// operand of a UNION; INTERSECT binds tighter there too.
func TestSetOperationInParentheses(t *testing.T) {
	db := openSetOpDB(t)
	for _, tc := range []struct {
		q    string
		args []any
		want []string
	}{
		{"SELECT x FROM (SELECT id AS x FROM l EXCEPT SELECT id FROM k) AS d", nil, []string{"3", "4"}},
		{"SELECT id FROM k WHERE id IN (SELECT id FROM l INTERSECT SELECT ?) AND id < ?", []any{2, 5}, []string{"2"}},
		{"SELECT id FROM k WHERE id NOT IN (SELECT id FROM l EXCEPT SELECT ?)", []any{1}, []string{"1", "5"}},
		{"SELECT (SELECT COUNT(*) FROM (SELECT id FROM l INTERSECT ALL SELECT id FROM k) AS z)", nil, []string{"2"}},
		// k EXCEPT (5 INTERSECT 7), not (k EXCEPT 5) INTERSECT 7.
		{"SELECT x FROM (SELECT id AS x FROM k EXCEPT SELECT 5 INTERSECT SELECT 7) AS d", nil, []string{"1", "2", "5"}},
		{"(SELECT id FROM l INTERSECT SELECT id FROM k) UNION SELECT 9", nil, []string{"1", "2", "9"}},
		{"SELECT x FROM ((SELECT id AS x FROM l EXCEPT SELECT id FROM k) UNION ALL SELECT 3) AS d", nil, []string{"3", "3", "4"}},
	} {
		require.Equal(t, tc.want, txRows(t, db, tc.q, tc.args...), tc.q)
	}
}
