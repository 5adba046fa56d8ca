package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// openSubqueryDB opens a database with a log table t1 (NULLs and
// duplicates in both columns), a primary-key table kv and an empty table.
func openSubqueryDB(t *testing.T, opts ...string) *sql.DB {
	t.Helper()
	db, _ := openDB(t, opts...)
	mustExec(t, db, "CREATE TABLE t1 (a INT, b INT) WITH ('bucket.num' = '2')")
	mustExec(t, db, "INSERT INTO t1 VALUES (1, 10), (2, 20), (2, 25), (3, NULL), (NULL, 30), (5, 10)")
	mustExec(t, db, "CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '3')")
	mustExec(t, db, "INSERT INTO kv VALUES (1, 'one'), (2, 'two'), (4, 'four')")
	mustExec(t, db, "CREATE TABLE e (x INT)")
	mustExec(t, db, "CREATE TABLE n (x INT)")
	mustExec(t, db, "INSERT INTO n VALUES (1), (NULL)")
	return db
}

func TestSubqueryInAndExists(t *testing.T) {
	db := openSubqueryDB(t)
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT a, b FROM t1 WHERE a IN (SELECT k FROM kv)", []string{"1|10", "2|20", "2|25"}},
		{"SELECT a, b FROM t1 WHERE a NOT IN (SELECT k FROM kv)", []string{"3|<nil>", "5|10"}},
		// NOT IN a set with a NULL is never true.
		{"SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM n)", nil},
		{"SELECT a FROM t1 WHERE a IN (SELECT x FROM n)", []string{"1"}},
		// Against no rows: IN is false and NOT IN true, for NULL too.
		{"SELECT a FROM t1 WHERE a NOT IN (SELECT x FROM e)", []string{"1", "2", "2", "3", "5", "<nil>"}},
		{"SELECT 1 IN (SELECT 1), NULL IN (SELECT x FROM e), NULL NOT IN (SELECT x FROM e), NULL IN (SELECT x FROM n), 2 IN (SELECT x FROM n)",
			[]string{"true|false|true|<nil>|<nil>"}},
		// Correlated EXISTS, with the outer table's name and unqualified.
		{"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM kv WHERE kv.k = t1.a)", []string{"1", "2", "2"}},
		{"SELECT a FROM t1 WHERE NOT EXISTS (SELECT * FROM kv WHERE k = a)", []string{"3", "5", "<nil>"}},
		// Correlated by an equality, against a set with a NULL key: the
		// semi-join and anti-join forms keep EXISTS's answers.
		{"SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM n WHERE n.x = t1.a)", []string{"1"}},
		{"SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.x = t1.a)", []string{"2", "2", "3", "5", "<nil>"}},
		{"SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.x = t1.a) AND NOT EXISTS (SELECT 1 FROM kv WHERE t1.a = k AND v = 'two')", []string{"3", "5", "<nil>"}},
		{"SELECT x FROM n WHERE NOT EXISTS (SELECT 1 FROM t1 WHERE t1.a = n.x)", []string{"<nil>"}},
		{"SELECT k FROM kv WHERE EXISTS (SELECT 1 FROM t1 WHERE b > 20)", []string{"1", "2", "4"}},
		{"SELECT k FROM kv WHERE NOT EXISTS (SELECT 1 FROM t1 WHERE b > 20)", nil},
		// IN with a correlated subquery, and a subquery in the select list.
		{"SELECT a, a IN (SELECT x.a FROM t1 AS x WHERE x.b > t1.b) FROM t1", []string{"1|<nil>", "2|<nil>", "2|true", "3|false", "5|<nil>", "<nil>|false"}},
		{"SELECT k FROM kv WHERE k IN (SELECT a FROM t1 WHERE b IS NOT NULL) AND v LIKE 't%'", []string{"2"}},
		// A UNION as the inner query.
		{"SELECT a FROM t1 WHERE a IN (SELECT k FROM kv UNION SELECT x FROM n)", []string{"1", "2", "2"}},
		{"SELECT a FROM t1 WHERE a NOT IN (SELECT k FROM kv UNION ALL SELECT 5)", []string{"3"}},
		{"SELECT (SELECT max(x) FROM n UNION SELECT 7 ORDER BY 1 DESC LIMIT 1)", []string{"7"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			require.Equal(t, tc.want, txRows(t, db, tc.sql))
		})
	}
}

func TestScalarSubqueries(t *testing.T) {
	db := openSubqueryDB(t)
	// The count of rows with a smaller b, for each row: the shape of many
	// sqllogictest queries, over the same table under an alias.
	got := txRows(t, db, "SELECT a, b, (SELECT count(*) FROM t1 AS x WHERE x.b < t1.b) FROM t1")
	bs := []any{10, 20, 25, nil, 30, 10}
	as := []any{1, 2, 2, 3, nil, 5}
	var want []string
	for i, b := range bs {
		n := 0
		for _, o := range bs {
			if b != nil && o != nil && o.(int) < b.(int) {
				n++
			}
		}
		bText := fmt.Sprint(b)
		if b == nil {
			bText = "<nil>"
		}
		aText := fmt.Sprint(as[i])
		if as[i] == nil {
			aText = "<nil>"
		}
		want = append(want, fmt.Sprintf("%s|%s|%d", aText, bText, n))
	}
	slices.Sort(want)
	require.Equal(t, want, got)

	for _, tc := range []struct {
		sql  string
		want []string
	}{
		// No row is NULL.
		{"SELECT a, (SELECT v FROM kv WHERE k = t1.a) FROM t1 WHERE a < 4", []string{"1|one", "2|two", "2|two", "3|<nil>"}},
		{"SELECT (SELECT max(b) FROM t1), (SELECT x FROM e)", []string{"30|<nil>"}},
		// In WHERE, HAVING and ORDER BY.
		{"SELECT a FROM t1 WHERE b = (SELECT max(b) FROM t1)", []string{"<nil>"}},
		{"SELECT a, count(*) FROM t1 GROUP BY a HAVING count(*) > (SELECT count(*) FROM kv WHERE k = 1)", []string{"2|2"}},
		{"SELECT a, sum(b) FROM t1 GROUP BY a HAVING sum(b) > (SELECT min(b) FROM t1 AS x WHERE x.a = t1.a)", []string{"2|45"}},
		// An outer reference in HAVING is the group's key.
		{"SELECT a FROM t1 GROUP BY a HAVING (SELECT v FROM kv WHERE k = a) IS NOT NULL", []string{"1", "2"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			require.Equal(t, tc.want, txRows(t, db, tc.sql))
		})
	}
	ordered := queryAll(t, db, "SELECT k FROM kv ORDER BY (SELECT count(*) FROM t1 WHERE t1.a = kv.k) DESC, k")
	require.Equal(t, [][]any{{int64(2)}, {int64(1)}, {int64(4)}}, ordered)
}

func TestSubqueryErrors(t *testing.T) {
	db := openSubqueryDB(t)
	for _, tc := range []struct {
		sql  string
		is   error
		text string
	}{
		{"SELECT (SELECT a FROM t1)", fluss.ErrInvalid, "subquery (SELECT a FROM t1) returns more than 1 row"},
		{"SELECT a FROM t1 WHERE b = (SELECT b FROM t1 AS x WHERE x.a = t1.a)", fluss.ErrInvalid, "returns more than 1 row"},
		{"SELECT (SELECT k, v FROM kv)", fluss.ErrInvalid, "returns 2 columns; one is needed here"},
		{"SELECT a FROM t1 WHERE a IN (SELECT k, v FROM kv)", fluss.ErrInvalid, "returns 2 columns"},
		// A UNION's SELECTs bind as a derived table's do, in scopes of
		// their own.
		{"SELECT a FROM t1 WHERE EXISTS (SELECT k FROM kv WHERE k = t1.a UNION SELECT 1)", fluss.ErrNotFound, "table t1 of column t1.a is not in FROM"},
		// MySQL's LIMIT takes a number or a placeholder only.
		{"SELECT a FROM t1 LIMIT (SELECT 1)", fluss.ErrSyntax, "LIMIT and OFFSET take a number or a placeholder"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			rows, err := db.Query(tc.sql)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				require.NoError(t, rows.Close())
			}
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.text)
		})
	}
	// An unknown column in a subquery is placed at its name.
	_, err := db.Query("SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM kv WHERE kv.nosuch = t1.a)")
	require.ErrorIs(t, err, fluss.ErrNotFound)
	var fe *fluss.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, 57, fe.Pos)
	require.ErrorContains(t, err, "column nosuch does not exist in table fluss.kv at line 1, column 58")
	_, err = db.Query("SELECT a FROM t1 AS y WHERE EXISTS (SELECT 1 FROM kv WHERE k = t1.a)")
	require.ErrorIs(t, err, fluss.ErrNotFound)
	require.ErrorContains(t, err, "table t1 of column t1.a is not in FROM")
}

func TestQuantifiedSubqueries(t *testing.T) {
	db := openSubqueryDB(t)
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT a FROM t1 WHERE a > ALL (SELECT k FROM kv WHERE k < 3)", []string{"3", "5"}},
		{"SELECT a FROM t1 WHERE a >= ANY (SELECT k FROM kv WHERE k > 3)", []string{"5"}},
		{"SELECT a FROM t1 WHERE a = SOME (SELECT k FROM kv)", []string{"1", "2", "2"}},
		{"SELECT a FROM t1 WHERE a <> ALL (SELECT k FROM kv)", []string{"3", "5"}},
		// ALL over a set with a NULL is never true, but can be false.
		{"SELECT a, a < ALL (SELECT x FROM n) FROM t1", []string{"1|false", "2|false", "2|false", "3|false", "5|false", "<nil>|<nil>"}},
		{"SELECT 0 < ALL (SELECT x FROM n), 0 < ANY (SELECT x FROM n), 5 < ANY (SELECT x FROM n)", []string{"<nil>|true|<nil>"}},
		// Against no rows ALL is true and ANY false, for NULL too.
		{"SELECT NULL = ALL (SELECT x FROM e), NULL = ANY (SELECT x FROM e)", []string{"true|false"}},
		// Correlated; for a NULL a no row matches, and ALL of none is true.
		{"SELECT a, b FROM t1 WHERE b >= ALL (SELECT x.b FROM t1 AS x WHERE x.a = t1.a)", []string{"1|10", "2|25", "5|10", "<nil>|30"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			require.Equal(t, tc.want, txRows(t, db, tc.sql))
		})
	}
}

// TestNestedSubqueries: a subquery inside a subquery, correlated with
// the query right around it and with the outermost one.
func TestNestedSubqueries(t *testing.T) {
	db := openSubqueryDB(t)
	require.Equal(t, []string{"1", "2"}, txRows(t, db,
		"SELECT k FROM kv WHERE EXISTS (SELECT 1 FROM t1 WHERE t1.a = kv.k AND t1.b IN (SELECT y.b FROM t1 AS y WHERE y.a = kv.k AND y.b < 25))"))
	require.Equal(t, []string{"1|1", "2|1", "4|0"}, txRows(t, db,
		"SELECT k, (SELECT count(*) FROM kv AS m WHERE m.k = kv.k AND EXISTS (SELECT 1 FROM t1 WHERE t1.a = m.k AND t1.b < kv.k * 11)) FROM kv"))
}

// TestSubqueryInWrites: UPDATE and DELETE whose WHERE holds a subquery,
// and an UPDATE that assigns one; their reads are pinned before anything
// is written.
func TestSubqueryInWrites(t *testing.T) {
	db := openSubqueryDB(t)
	require.EqualValues(t, 2, affected(t)(db.Exec("UPDATE kv SET v = 'seen' WHERE k IN (SELECT a FROM t1 WHERE b < 25)")))
	require.Equal(t, []string{"1|seen", "2|seen", "4|four"}, txRows(t, db, "SELECT * FROM kv"))
	require.EqualValues(t, 3, affected(t)(db.Exec("UPDATE kv SET v = (SELECT CAST(max(b) AS CHAR) FROM t1 WHERE t1.a = kv.k)")))
	require.Equal(t, []string{"1|10", "2|25", "4|<nil>"}, txRows(t, db, "SELECT * FROM kv"))
	require.EqualValues(t, 1, affected(t)(db.Exec("DELETE FROM kv WHERE NOT EXISTS (SELECT 1 FROM t1 WHERE t1.a = kv.k)")))
	require.Equal(t, []string{"1|10", "2|25"}, txRows(t, db, "SELECT * FROM kv"))
	require.EqualValues(t, 1, affected(t)(db.Exec("DELETE FROM kv WHERE k = (SELECT min(a) FROM t1)")))
	require.Equal(t, []string{"2|25"}, txRows(t, db, "SELECT * FROM kv"))
	// INSERT ... SELECT with a subquery in its query.
	mustExec(t, db, "CREATE TABLE dst (a INT)")
	require.EqualValues(t, 2, affected(t)(db.Exec("INSERT INTO dst SELECT a FROM t1 WHERE a IN (SELECT k FROM kv)")))
	require.Equal(t, []string{"2", "2"}, txRows(t, db, "SELECT * FROM dst"))
}

// TestSubqueryInTransaction: inside a transaction a subquery reads the
// transaction's view, as its query does.
func TestSubqueryInTransaction(t *testing.T) {
	db := openSubqueryDB(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	require.Equal(t, []string{"1", "2", "2"}, txRows(t, tx, "SELECT a FROM t1 WHERE a IN (SELECT k FROM kv)"))
	mustExec(t, db, "INSERT INTO kv VALUES (5, 'five')")
	require.Equal(t, []string{"1", "2", "2"}, txRows(t, tx, "SELECT a FROM t1 WHERE a IN (SELECT k FROM kv)"))
	require.Equal(t, []string{"1|one", "2|two", "2|two", "5|<nil>"}, txRows(t, tx, "SELECT a, (SELECT v FROM kv WHERE k = t1.a) FROM t1 WHERE a IN (1, 2, 5)"))
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"1", "2", "2", "5"}, txRows(t, db, "SELECT a FROM t1 WHERE a IN (SELECT k FROM kv)"))
}

// TestSubqueryPlaceholders: placeholders count and bind across the
// statement's subqueries, also for a correlated one bound per outer row.
func TestSubqueryPlaceholders(t *testing.T) {
	db := openSubqueryDB(t)
	const q = "SELECT a FROM t1 WHERE a IN (SELECT k FROM kv WHERE k < ? AND k = t1.a) AND b > ?"
	for _, tc := range []struct {
		lt, gt int
		want   []string
	}{{3, 0, []string{"1", "2", "2"}}, {2, 0, []string{"1"}}, {3, 20, []string{"2"}}} {
		require.Equal(t, tc.want, txRows(t, db, q, tc.lt, tc.gt))
	}
}

// TestSubqueryLimits: a statement's deadline stops it while it runs a
// correlated subquery per row, and the results the subqueries hold count
// against memory.limit.
func TestSubqueryLimits(t *testing.T) {
	db := openSubqueryDB(t, "memory.limit=1mb")
	mustExec(t, db, "CREATE TABLE big (id BIGINT, s STRING)")
	var vals []string
	for i := range 3000 {
		vals = append(vals, fmt.Sprintf("(%d, '%s')", i, strings.Repeat("x", 400)))
	}
	mustExec(t, db, "INSERT INTO big VALUES "+strings.Join(vals, ", "))
	rows, err := db.Query("SELECT id FROM big WHERE s IN (SELECT concat(s, CAST(id AS CHAR)) FROM big)")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	require.ErrorIs(t, err, fluss.ErrInvalid)
	require.ErrorContains(t, err, "memory.limit of 1MiB exceeded by")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	rows, err = db.QueryContext(ctx, "SELECT id, (SELECT count(*) FROM big AS x WHERE x.id = big.id) FROM big")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestExplainSubquery: x IN (SELECT ...) in WHERE is a semi-join node of
// the tree, with the inner query's plan below it (an IN inside it its
// own join); every other subquery follows the plan as a node of its own:
// an uncorrelated one with its inner plan below it, a correlated one with
// what it runs per.
func TestExplainSubquery(t *testing.T) {
	db := openSubqueryDB(t)
	var got []string
	for _, r := range queryAll(t, db, "EXPLAIN SELECT a, (SELECT count(*) FROM kv WHERE kv.k < t1.b) FROM t1 WHERE a IN (SELECT k FROM kv WHERE k IN (SELECT x FROM n))") {
		got = append(got, r[0].(string))
	}
	require.Equal(t, []string{
		"Project: a, (SELECT COUNT(*) FROM kv WHERE kv.k < t1.b)",
		"  HashJoin: semi [Keys: a = subquery.k] [Build: right, ~? rows]",
		"    FlussScan: [fluss.t1], Type: [Append]",
	}, got[:3])
	at := slices.Index(got, "    Subquery: subquery (SELECT k FROM kv WHERE k IN (SELECT x FROM n))")
	require.Positive(t, at, "%q", got)
	require.Equal(t, []string{
		"      Project: k",
		"        HashJoin: semi [Keys: k = subquery.x]",
		"          FlussScan: [fluss.kv], Type: [Upsert]",
	}, got[at+1:at+4])
	require.Equal(t, []string{
		"          Subquery: subquery (SELECT x FROM n)",
		"            FlussScan: [fluss.n], Type: [Append]",
		"            Branch: log-only",
		"            Split: log partition=- bucket=0 log=0..2",
		"Subquery: (SELECT COUNT(*) FROM kv WHERE kv.k < t1.b) [Correlated: runs per distinct t1.b]",
	}, got[len(got)-5:])
	// Under OR the subquery stays in the scan's filter.
	lines := strings.Join(txRows(t, db, "EXPLAIN SELECT a FROM t1 WHERE b > 0 OR a IN (SELECT k FROM kv)"), "\n")
	require.Contains(t, lines, "PostFilter: (b > 0 OR a IN (SELECT k FROM kv))")
	require.Contains(t, lines, "Subquery: a IN (SELECT k FROM kv)")
	// A correlated EXISTS by an equality is a semi-join on the key, NOT
	// EXISTS an anti-join, NOT IN the null-aware anti-join.
	lines = strings.Join(txRows(t, db, "EXPLAIN SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM kv WHERE kv.k = t1.a)"), "\n")
	require.Contains(t, lines, "HashJoin: semi [Keys: t1.a = subquery.k]")
	require.Contains(t, lines, "Subquery: subquery (k of SELECT 1 FROM kv WHERE kv.k = t1.a)")
	lines = strings.Join(txRows(t, db, "EXPLAIN SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM kv WHERE kv.k = t1.a)"), "\n")
	require.Contains(t, lines, "HashJoin: anti [Keys: t1.a = subquery.k]")
	lines = strings.Join(txRows(t, db, "EXPLAIN ANALYZE SELECT a FROM t1 WHERE a NOT IN (SELECT k FROM kv)"), "\n")
	require.Contains(t, lines, "HashJoin: null-aware anti [Keys: a = subquery.k] [Build: right, ~? rows] (rows=2 ")
	require.Contains(t, lines, "Subquery: subquery (SELECT k FROM kv) (rows=3 ")
}

// TestSubqueriesOverJoins: subqueries in a query over a FROM tree,
// correlated with either side, and subqueries whose own FROM is a join.
func TestSubqueriesOverJoins(t *testing.T) {
	db := openSubqueryDB(t)
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT t1.a, kv.v FROM t1 JOIN kv ON kv.k = t1.a WHERE EXISTS (SELECT 1 FROM n WHERE n.x = t1.a)", []string{"1|one"}},
		{"SELECT t1.a, kv.k FROM t1 JOIN kv ON kv.k = t1.a WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.x = kv.k)", []string{"2|2", "2|2"}},
		{"SELECT t1.a, (SELECT count(*) FROM n WHERE n.x = t1.a OR n.x = kv.k) FROM t1 JOIN kv ON kv.k = t1.a", []string{"1|1", "2|0", "2|0"}},
		{"SELECT t1.a, kv.v FROM t1 LEFT JOIN kv ON kv.k = t1.a WHERE kv.v NOT IN (SELECT v FROM kv WHERE k > 1)", []string{"1|one"}},
		{"SELECT t1.a, t1.b FROM t1 JOIN kv ON kv.k = t1.a WHERE t1.b = (SELECT max(x.b) FROM t1 AS x WHERE x.a = t1.a)", []string{"1|10", "2|25"}},
		{"SELECT k FROM kv WHERE k IN (SELECT t1.a FROM t1 JOIN n ON n.x = t1.a)", []string{"1"}},
		{"SELECT k, (SELECT count(*) FROM t1 JOIN n ON n.x = t1.a WHERE t1.a = kv.k) FROM kv", []string{"1|1", "2|0", "4|0"}},
		{"SELECT k FROM kv WHERE EXISTS (SELECT 1 FROM t1, n WHERE t1.a = n.x AND t1.a = kv.k)", []string{"1"}},
		{"SELECT k FROM kv WHERE NOT EXISTS (SELECT 1 FROM t1, n WHERE t1.a = n.x AND t1.a = kv.k)", []string{"2", "4"}},
		// A condition with a subquery over both sides filters after the
		// join; one equal to a subquery over the other side is no join key.
		{"SELECT t1.a FROM t1 JOIN kv ON kv.k = t1.a WHERE (SELECT count(*) FROM n WHERE n.x = t1.a OR n.x = kv.k) > 0", []string{"1"}},
		{"SELECT t1.a FROM t1, kv WHERE t1.a = (SELECT max(x) FROM n WHERE n.x = kv.k)", []string{"1"}},
		{"SELECT t1.a, kv.k FROM t1 LEFT JOIN kv ON kv.k = t1.a WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.x = kv.k)", []string{"2|2", "2|2", "3|<nil>", "5|<nil>", "<nil>|<nil>"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			require.Equal(t, tc.want, txRows(t, db, tc.sql))
		})
	}
}

// TestSemiJoinForms: EXISTS correlated by several equalities and IN
// correlated by one run as a semi-join on a tuple of keys; NOT IN
// correlated by one as the null-aware anti-join with the correlation as
// its condition, whose NULLs differ from an anti-join's.
func TestSemiJoinForms(t *testing.T) {
	db := openSubqueryDB(t)
	mustExec(t, db, "CREATE TABLE p (a INT, b INT)")
	mustExec(t, db, "INSERT INTO p VALUES (2, 20), (2, 99), (NULL, 30), (5, NULL)")
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT a, b FROM t1 WHERE EXISTS (SELECT 1 FROM p WHERE p.a = t1.a AND p.b = t1.b)", []string{"2|20"}},
		{"SELECT a, b FROM t1 WHERE NOT EXISTS (SELECT 1 FROM p WHERE p.a = t1.a AND p.b = t1.b)",
			[]string{"1|10", "2|25", "3|<nil>", "5|10", "<nil>|30"}},
		{"SELECT a, b FROM t1 WHERE b IN (SELECT p.b FROM p WHERE p.a = t1.a)", []string{"2|20"}},
		{"SELECT a, b FROM t1 WHERE b IN (SELECT p.b FROM p WHERE p.a = t1.a) OR a = 1", []string{"1|10", "2|20"}},
		// NOT IN: for a = 5 the set is {NULL}, so NOT IN is NULL and the
		// row is dropped; for a = 2, b = 25 it is true.
		{"SELECT a, b FROM t1 WHERE b NOT IN (SELECT p.b FROM p WHERE p.a = t1.a)", []string{"1|10", "2|25", "3|<nil>", "<nil>|30"}},
		{"SELECT a, b IN (SELECT p.b FROM p WHERE p.a = t1.a) FROM t1", []string{"1|false", "2|false", "2|true", "3|false", "5|<nil>", "<nil>|false"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			require.Equal(t, tc.want, txRows(t, db, tc.sql))
		})
	}
	lines := strings.Join(txRows(t, db, "EXPLAIN SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM p WHERE p.a = t1.a AND p.b = t1.b)"), "\n")
	require.Contains(t, lines, "HashJoin: semi [Keys: t1.a = subquery.a, t1.b = subquery.b]")
}

// TestSemiJoinNulls: the semi-, anti- and null-aware anti-joins of IN,
// EXISTS, NOT IN and NOT EXISTS keep SQL's answers over NULL-heavy
// inputs, duplicates on either side, a key table whose state is a KV
// snapshot and a log tail over it, and inside a transaction. Each query
// is checked to run as the join (EXPLAIN) and to agree with the same
// condition under OR, which the expression evaluator answers.
func TestSemiJoinNulls(t *testing.T) {
	db := openSubqueryDB(t)
	mustExec(t, db, "CREATE TABLE o (x INT, s STRING) WITH ('bucket.num' = '2')")
	mustExec(t, db, "INSERT INTO o VALUES (1, 'a'), (1, 'a'), (NULL, 'b'), (2, NULL), (NULL, NULL), (3, 'c'), (4, 'd')")
	mustExec(t, db, "CREATE TABLE dup (y INT, s STRING)")
	mustExec(t, db, "INSERT INTO dup VALUES (1, 'a'), (1, 'a'), (1, 'z'), (3, NULL), (3, NULL), (NULL, 'b')")
	mustExec(t, db, "CREATE TABLE nulls (y INT)")
	mustExec(t, db, "INSERT INTO nulls VALUES (NULL), (NULL)")
	// kv: a KV snapshot of its first rows, then a log tail that updates,
	// deletes and adds keys.
	mustExec(t, db, "CALL sys.kv_snapshot('kv')")
	mustExec(t, db, "INSERT INTO kv VALUES (2, 'deux'), (3, 'three'), (7, 'seven')")
	mustExec(t, db, "DELETE FROM kv WHERE k = 1")
	for _, tc := range []struct {
		sql, node string
		want      []string
	}{
		// NOT IN: never TRUE against a NULL; always against no row.
		{"SELECT x FROM o WHERE x NOT IN (SELECT y FROM nulls)", "null-aware anti", nil},
		{"SELECT x FROM o WHERE x NOT IN (SELECT y FROM dup)", "null-aware anti", nil},
		{"SELECT x FROM o WHERE x NOT IN (SELECT y FROM dup WHERE y IS NOT NULL)", "null-aware anti", []string{"2", "4"}},
		{"SELECT x FROM o WHERE x NOT IN (SELECT x FROM e)", "null-aware anti", []string{"1", "1", "2", "3", "4", "<nil>", "<nil>"}},
		{"SELECT x FROM o WHERE x NOT IN (SELECT y FROM nulls WHERE y > 0)", "null-aware anti", []string{"1", "1", "2", "3", "4", "<nil>", "<nil>"}},
		// IN: each outer row once however often the inner query has its
		// key; NULLs match nothing.
		{"SELECT x, s FROM o WHERE x IN (SELECT y FROM dup)", "semi", []string{"1|a", "1|a", "3|c"}},
		{"SELECT x FROM o WHERE x IN (SELECT y FROM nulls)", "semi", nil},
		{"SELECT count(*), sum(x) FROM o WHERE x IN (SELECT y FROM dup) AND s IS NOT NULL", "semi", []string{"3|5"}},
		// EXISTS and NOT EXISTS by one or two equalities: a NULL on
		// either side matches nothing, so NOT EXISTS keeps the row.
		{"SELECT x FROM o WHERE EXISTS (SELECT 1 FROM dup WHERE dup.y = o.x)", "semi", []string{"1", "1", "3"}},
		{"SELECT x FROM o WHERE NOT EXISTS (SELECT 1 FROM dup WHERE dup.y = o.x)", "anti", []string{"2", "4", "<nil>", "<nil>"}},
		{"SELECT x FROM o WHERE NOT EXISTS (SELECT 1 FROM nulls WHERE nulls.y = o.x)", "anti", []string{"1", "1", "2", "3", "4", "<nil>", "<nil>"}},
		{"SELECT x, s FROM o WHERE EXISTS (SELECT 1 FROM dup WHERE dup.y = o.x AND dup.s = o.s)", "semi", []string{"1|a", "1|a"}},
		{"SELECT x, s FROM o WHERE NOT EXISTS (SELECT 1 FROM dup WHERE dup.y = o.x AND dup.s = o.s)", "anti",
			[]string{"2|<nil>", "3|c", "4|d", "<nil>|<nil>", "<nil>|b"}},
		// NOT IN correlated by an equality: each outer row against its
		// own set; an empty set keeps a NULL x, a NULL in a row's set
		// drops it.
		{"SELECT x, s FROM o WHERE x NOT IN (SELECT y FROM dup WHERE dup.s = o.s)", "null-aware anti",
			[]string{"2|<nil>", "3|c", "4|d", "<nil>|<nil>"}},
		{"SELECT x, s FROM o WHERE x NOT IN (SELECT y FROM dup WHERE dup.y = o.x)", "null-aware anti",
			[]string{"2|<nil>", "4|d", "<nil>|<nil>", "<nil>|b"}},
		// The key table as the inner query reads its snapshot with the
		// log tail applied: 1 deleted, 2 updated, 3 and 7 added.
		{"SELECT x FROM o WHERE x IN (SELECT k FROM kv)", "semi", []string{"2", "3", "4"}},
		{"SELECT x FROM o WHERE x IN (SELECT k FROM kv WHERE v = 'deux')", "semi", []string{"2"}},
		{"SELECT x FROM o WHERE x NOT IN (SELECT k FROM kv)", "null-aware anti", []string{"1", "1"}},
		{"SELECT x FROM o WHERE NOT EXISTS (SELECT 1 FROM kv WHERE kv.k = o.x)", "anti", []string{"1", "1", "<nil>", "<nil>"}},
		{"SELECT k FROM kv WHERE k IN (SELECT x FROM o) AND k NOT IN (SELECT y FROM dup WHERE y IS NOT NULL)", "semi", []string{"2", "4"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			require.Equal(t, tc.want, txRows(t, db, tc.sql))
			plan := strings.Join(txRows(t, db, "EXPLAIN "+tc.sql), "\n")
			require.Contains(t, plan, "HashJoin: "+tc.node+" [Keys: ")
			// The same condition under OR stays an expression.
			cond := tc.sql[strings.Index(tc.sql, " WHERE ")+len(" WHERE "):]
			evaluated := tc.sql[:strings.Index(tc.sql, " WHERE ")] + " WHERE (" + cond + ") OR 1 = 0"
			require.NotContains(t, strings.Join(txRows(t, db, "EXPLAIN "+evaluated), "\n"), "HashJoin: ")
			require.Equal(t, tc.want, txRows(t, db, evaluated))
		})
	}

	// Inside a transaction the inner query reads the transaction's view:
	// rows written after Begin are not in it.
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	mustExec(t, db, "INSERT INTO nulls VALUES (4)")
	mustExec(t, db, "INSERT INTO kv VALUES (1, 'un')")
	mustExec(t, db, "DELETE FROM kv WHERE k = 3")
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT x FROM o WHERE x IN (SELECT k FROM kv)", []string{"2", "3", "4"}},
		{"SELECT x FROM o WHERE x NOT IN (SELECT k FROM kv)", []string{"1", "1"}},
		{"SELECT x FROM o WHERE NOT EXISTS (SELECT 1 FROM kv WHERE kv.k = o.x)", []string{"1", "1", "<nil>", "<nil>"}},
		{"SELECT x FROM o WHERE x IN (SELECT y FROM nulls)", nil},
	} {
		require.Equal(t, tc.want, txRows(t, tx, tc.sql), "%s in the transaction", tc.sql)
	}
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"1", "1", "2", "4"}, txRows(t, db, "SELECT x FROM o WHERE x IN (SELECT k FROM kv)"))
	require.Equal(t, []string{"4"}, txRows(t, db, "SELECT x FROM o WHERE x IN (SELECT y FROM nulls)"))
}
