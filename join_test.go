package fluss_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// openJoinDB opens a database with a log table of orders, a primary-key
// table of customers with a log tail over a tiered lake, and a small
// primary-key table of regions.
func openJoinDB(t *testing.T) *sql.DB {
	t.Helper()
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE orders (id BIGINT, cust INT, amount INT, note STRING) WITH ('bucket.num' = '2')")
	mustExec(t, db, `INSERT INTO orders VALUES (1, 1, 10, 'a'), (2, 1, 20, NULL), (3, 2, 30, 'c'),
		(4, 9, 40, 'orphan'), (5, NULL, 50, 'no customer'), (6, 3, 60, 'f')`)
	mustExec(t, db, `CREATE TABLE customers (id INT, name STRING, region INT, PRIMARY KEY (id) NOT ENFORCED)
		WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`)
	mustExec(t, db, "INSERT INTO customers VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'cid', NULL)")
	var snap any
	require.NoError(t, db.QueryRow("CALL sys.tier('customers')").Scan(&snap))
	// A log tail over the lake: bob moves, dan is new.
	mustExec(t, db, "INSERT INTO customers VALUES (2, 'bob', 10), (4, 'dan', 20)")
	mustExec(t, db, "CREATE TABLE regions (id INT, rname STRING, PRIMARY KEY (id) NOT ENFORCED)")
	mustExec(t, db, "INSERT INTO regions VALUES (10, 'north'), (20, 'south'), (30, 'east')")
	return db
}

// orderedRows returns the rows of q in the order they came, each as its
// values joined by '|'.
func orderedRows(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	return renderRows(t, db, true, q, args...)
}

func TestJoinInner(t *testing.T) {
	db := openJoinDB(t)
	want := []string{"1|ann|10", "2|ann|20", "3|bob|30", "6|cid|60"}
	for _, q := range []string{
		"SELECT o.id, c.name, o.amount FROM orders o JOIN customers c ON o.cust = c.id",
		"SELECT o.id, c.name, o.amount FROM orders AS o INNER JOIN customers AS c ON c.id = o.cust",
		"SELECT o.id, c.name, o.amount FROM orders o, customers c WHERE o.cust = c.id",
		"SELECT orders.id, name, amount FROM orders CROSS JOIN customers WHERE cust = customers.id",
		"SELECT o.id, c.name, o.amount FROM (orders o, customers c) WHERE o.cust = c.id",
		"SELECT o.id, c.name, o.amount FROM customers c JOIN orders o ON o.cust = c.id",
	} {
		require.Equal(t, want, txRows(t, db, q), q)
	}
	// The tail wins over the lake: bob is in region 10 now.
	require.Equal(t, []string{"ann|north", "bob|north", "dan|south"},
		txRows(t, db, "SELECT c.name, r.rname FROM customers c JOIN regions r ON c.region = r.id"))
}

func TestJoinOuter(t *testing.T) {
	db := openJoinDB(t)
	require.Equal(t, []string{"1|ann", "2|ann", "3|bob", "4|<nil>", "5|<nil>", "6|cid"},
		txRows(t, db, "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id"))
	// An ON conjunct on the extended side filters before the match; a
	// WHERE conjunct after it.
	require.Equal(t, []string{"1|<nil>", "2|<nil>", "3|bob", "4|<nil>", "5|<nil>", "6|<nil>"},
		txRows(t, db, "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id AND c.name = 'bob'"))
	require.Equal(t, []string{"3|bob"},
		txRows(t, db, "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id WHERE c.name = 'bob'"))
	// An ON conjunct on the preserved side keeps every row of it.
	require.Equal(t, []string{"1|<nil>", "2|<nil>", "3|bob", "4|<nil>", "5|<nil>", "6|<nil>"},
		txRows(t, db, "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id AND o.amount = 30"))
	// A LIMIT reaches the preserved side; each of its rows still joins.
	got := txRows(t, db, "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id LIMIT 2 OFFSET 1")
	require.Len(t, got, 2)
	all := txRows(t, db, "SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.cust = c.id")
	require.Subset(t, all, got)
	// Anti-join by IS NULL.
	require.Equal(t, []string{"4", "5"},
		txRows(t, db, "SELECT o.id FROM orders o LEFT JOIN customers c ON o.cust = c.id WHERE c.id IS NULL"))
	require.Equal(t, []string{"1|ann", "2|ann", "3|bob", "6|cid", "<nil>|dan"},
		txRows(t, db, "SELECT o.id, c.name FROM orders o RIGHT JOIN customers c ON o.cust = c.id"))
	// Without an equality the join is a nested loop, outer all the same.
	require.Equal(t, []string{"ann|1", "bob|2", "cid|4", "dan|5"},
		txRows(t, db, "SELECT c.name, count(o.id) FROM customers c LEFT JOIN orders o ON o.amount < c.id * 15 GROUP BY c.name"))
}

func TestJoinNullKeysNeverMatch(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE l (k INT, v STRING)")
	mustExec(t, db, "CREATE TABLE r (k BIGINT, w STRING)")
	mustExec(t, db, "INSERT INTO l VALUES (1, 'a'), (NULL, 'b'), (2, 'c'), (2, 'd')")
	mustExec(t, db, "INSERT INTO r VALUES (1, 'x'), (NULL, 'y'), (2, 'z'), (2, 'zz')")
	require.Equal(t, []string{"a|x", "c|z", "c|zz", "d|z", "d|zz"},
		txRows(t, db, "SELECT v, w FROM l JOIN r ON l.k = r.k"))
	require.Equal(t, []string{"a|x", "b|y", "c|z", "c|zz", "d|z", "d|zz"},
		txRows(t, db, "SELECT v, w FROM l JOIN r ON l.k <=> r.k"))
	require.Equal(t, []string{"1|1", "2|2", "2|2", "2|2", "2|2", "<nil>|<nil>"},
		txRows(t, db, "SELECT l.k, r.k FROM l LEFT JOIN r ON l.k = r.k AND l.k IS NULL OR l.k = r.k"))
}

func TestJoinUsingNaturalSelfAndThreeWay(t *testing.T) {
	db := openJoinDB(t)
	mustExec(t, db, "CREATE TABLE a (id INT, x STRING)")
	mustExec(t, db, "CREATE TABLE b (id INT, y STRING)")
	mustExec(t, db, "INSERT INTO a VALUES (1, 'a1'), (2, 'a2')")
	mustExec(t, db, "INSERT INTO b VALUES (2, 'b2'), (3, 'b3')")
	require.Equal(t, []string{"2|a2|b2"}, txRows(t, db, "SELECT * FROM a JOIN b USING (id)"))
	require.Equal(t, []string{"2|a2|b2"}, txRows(t, db, "SELECT * FROM a NATURAL JOIN b"))
	// * lists the merged columns first, then the first table's others,
	// then the second's, as MySQL does; RIGHT JOIN's first table is the
	// right one.
	mustExec(t, db, "CREATE TABLE c (y STRING, id INT, z INT)")
	mustExec(t, db, "INSERT INTO c VALUES ('c2', 2, 20), ('c3', 3, 30)")
	for q, want := range map[string][]string{
		"SELECT * FROM c JOIN a USING (id)":                  {"id|y|z|x"},
		"SELECT * FROM c NATURAL JOIN b":                     {"y|id|z"},
		"SELECT * FROM a RIGHT JOIN c USING (id)":            {"id|y|z|x"},
		"SELECT * FROM c JOIN a USING (id) JOIN b USING (y)": {"y|id|z|x|id"},
	} {
		rows, err := db.Query(q)
		require.NoError(t, err, q)
		cols, err := rows.Columns()
		require.NoError(t, err)
		require.NoError(t, rows.Close())
		require.Equal(t, want, []string{strings.Join(cols, "|")}, q)
	}
	require.Equal(t, []string{"2|c2|20|a2", "3|c3|30|<nil>"}, txRows(t, db, "SELECT * FROM a RIGHT JOIN c USING (id)"))
	require.Equal(t, []string{"1|a1|<nil>", "2|a2|b2"}, txRows(t, db, "SELECT id, x, y FROM a LEFT JOIN b USING (id)"))
	require.Equal(t, []string{"2|a2|b2", "3|<nil>|b3"}, txRows(t, db, "SELECT id, x, y FROM a RIGHT JOIN b USING (id)"))
	// A self-join by aliases.
	require.Equal(t, []string{"1|2", "1|3", "2|3"},
		txRows(t, db, "SELECT x.id, y.id FROM orders x JOIN orders y ON x.id < y.id WHERE y.id <= 3"))
	// Three tables, aggregated, ordered and limited.
	require.Equal(t, []string{"north|3|60", "south|0|<nil>"},
		orderedRows(t, db, `SELECT r.rname, count(o.id), sum(o.amount) FROM regions r
			JOIN customers c ON c.region = r.id
			LEFT JOIN orders o ON o.cust = c.id
			GROUP BY r.rname ORDER BY r.rname LIMIT 2`))
}

func TestJoinDerivedTable(t *testing.T) {
	db := openJoinDB(t)
	require.Equal(t, []string{"ann|30", "bob|30", "cid|60"},
		txRows(t, db, `SELECT c.name, t.total FROM (SELECT cust, sum(amount) AS total FROM orders GROUP BY cust) AS t
			JOIN customers c ON c.id = t.cust`))
	require.Equal(t, []string{"2|60"},
		txRows(t, db, "SELECT count(*), max(d.amount) FROM (SELECT amount FROM orders ORDER BY amount DESC LIMIT 2) d WHERE d.amount > 40 OR d.amount = 60"))
	require.Equal(t, []string{"3"}, txRows(t, db, "SELECT n FROM (SELECT 1 + 2 AS n) AS one"))
	_, err := db.Query("SELECT * FROM (SELECT 1)")
	require.ErrorContains(t, err, "syntax error at line 1, column 24", "MySQL requires the alias of a derived table")
}

func TestJoinVirtualTables(t *testing.T) {
	db := openJoinDB(t)
	// The changelog of the key table joined with its current state: bob's
	// two versions both join his current row.
	require.Equal(t, []string{"insert|bob|20|10"},
		txRows(t, db, "SELECT l._change_type, l.name, l.region, c.region FROM `customers$changelog` l JOIN customers c ON l.id = c.id WHERE l.id = 2 AND l._change_type = 'insert'"))
	require.Equal(t, []string{"3"},
		txRows(t, db, "SELECT count(*) FROM `customers$changelog` l JOIN customers c ON l.id = c.id WHERE c.name = 'bob'"))
	require.Equal(t, []string{"ann|ann", "bob|bob", "cid|cid"},
		txRows(t, db, "SELECT l.name, c.name FROM `customers$lake` l JOIN customers c ON l.id = c.id"))
}

func TestJoinErrors(t *testing.T) {
	db := openJoinDB(t)
	for q, want := range map[string]string{
		"SELECT id FROM orders, customers":                     "column id is ambiguous: orders and customers have it",
		"SELECT o.nope FROM orders o JOIN customers c ON 1=1":  "column o.nope does not exist",
		"SELECT * FROM orders JOIN orders ON 1 = 1":            "table name orders appears twice in FROM",
		"SELECT * FROM orders o LEFT JOIN customers c":         "syntax error at line 1, column 45",
		"SELECT * FROM orders o JOIN customers c USING (note)": "USING column note is not in the right side",
		"SELECT * FROM orders o JOIN nosuch n ON o.id = n.id":  "does not exist",
	} {
		_, err := db.Query(q)
		require.ErrorContains(t, err, want, q)
	}
	// The error points at the name.
	_, err := db.Query("SELECT o.id,\n  id FROM orders o, customers c")
	var fe *fluss.Error
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, strings.Index("SELECT o.id,\n  id FROM orders o, customers c", "  id")+2, fe.Pos)
	require.Contains(t, err.Error(), "line 2, column 3")
}

func TestJoinInsertSelectAndTransaction(t *testing.T) {
	db := openJoinDB(t)
	mustExec(t, db, "CREATE TABLE report (name STRING, amount INT)")
	require.EqualValues(t, 4, affected(t)(db.Exec("INSERT INTO report SELECT c.name, o.amount FROM orders o JOIN customers c ON o.cust = c.id")))
	require.Equal(t, []string{"ann|10", "ann|20", "bob|30", "cid|60"}, txRows(t, db, "SELECT * FROM report"))

	// In a transaction a join reads the view taken at Begin.
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	defer tx.Rollback()
	mustExec(t, db, "INSERT INTO orders VALUES (7, 4, 70, 'after begin')")
	require.Equal(t, []string{"0"}, txRows(t, tx, "SELECT count(*) FROM orders o JOIN customers c ON o.cust = c.id WHERE c.name = 'dan'"))
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"1"}, txRows(t, db, "SELECT count(*) FROM orders o JOIN customers c ON o.cust = c.id WHERE c.name = 'dan'"))
}

func TestJoinExplainTree(t *testing.T) {
	db := openJoinDB(t)
	lines := orderedRows(t, db, "EXPLAIN SELECT o.id, c.name FROM orders o JOIN customers c ON o.cust = c.id WHERE o.amount > 15 AND c.id = 2")
	require.GreaterOrEqual(t, len(lines), 5, strings.Join(lines, "\n"))
	require.Equal(t, "Project: o.id, c.name", lines[0])
	require.Equal(t, "  HashJoin: inner [Keys: o.cust = c.id] [Build: right, ~1 rows]", lines[1])
	require.True(t, strings.HasPrefix(lines[2], "    FlussScan: [fluss.orders], Type: [Append] [PushedPredicates: amount > 15]"), lines[2])
	var lookup bool
	for _, l := range lines[3:] {
		if strings.HasPrefix(l, "    FlussLookup: [fluss.customers]") {
			lookup = true
		}
		require.True(t, strings.HasPrefix(l, "    "), "every scan line is indented under the join: %q", l)
	}
	require.True(t, lookup, "c.id = 2 is a point lookup of customers:\n%s", strings.Join(lines, "\n"))
}

// openLookupDB opens a database with a primary-key table big enough that
// a join probing it with a few keys looks them up, and a small log table
// of probe rows.
func openLookupDB(t *testing.T) *sql.DB {
	t.Helper()
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE big (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '3')")
	var vals []string
	for i := 1; i <= 400; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'n%d')", i, i))
	}
	mustExec(t, db, "INSERT INTO big VALUES "+strings.Join(vals, ", "))
	mustExec(t, db, "CREATE TABLE probe (k INT, d DECIMAL(5, 1), tag STRING)")
	mustExec(t, db, "INSERT INTO probe VALUES (7, 7.0, 'a'), (7, 7.5, 'b'), (NULL, NULL, 'c'), (401, 401.0, 'd'), (12, 12.0, 'e')")
	return db
}

func TestLookupJoin(t *testing.T) {
	db := openLookupDB(t)
	q := "SELECT p.tag, b.name FROM probe p JOIN big b ON b.id = p.k"
	plan := strings.Join(orderedRows(t, db, "EXPLAIN "+q), "\n")
	require.Contains(t, plan, "HashJoin: inner [Keys: p.k = b.id] [Lookup: right, probe ~5 rows]")
	require.Equal(t, []string{"a|n7", "b|n7", "e|n12"}, txRows(t, db, q))
	// The same join with the key table first, and as a left join.
	require.Equal(t, []string{"a|n7", "b|n7", "e|n12"}, txRows(t, db, "SELECT p.tag, b.name FROM big b, probe p WHERE p.k = b.id"))
	require.Equal(t, []string{"a|n7", "b|n7", "c|<nil>", "d|<nil>", "e|n12"},
		txRows(t, db, "SELECT p.tag, b.name FROM probe p LEFT JOIN big b ON b.id = p.k"))
	// A DECIMAL key looks up only the values that are exactly keys.
	require.Equal(t, []string{"a|n7", "e|n12"}, txRows(t, db, "SELECT p.tag, b.name FROM probe p JOIN big b ON b.id = p.d"))
	// The key table's own conjuncts still filter what is looked up.
	require.Equal(t, []string{"e|n12"}, txRows(t, db, "SELECT p.tag, b.name FROM probe p JOIN big b ON b.id = p.k WHERE b.name <> 'n7'"))
	// A residual condition between the sides.
	require.Equal(t, []string{"a|n7"}, txRows(t, db, "SELECT p.tag, b.name FROM probe p JOIN big b ON b.id = p.k AND p.tag < b.name AND p.tag = 'a'"))

	// In a transaction the lookups read the view taken at Begin.
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	defer tx.Rollback()
	mustExec(t, db, "INSERT INTO big VALUES (401, 'late')")
	mustExec(t, db, "INSERT INTO big VALUES (7, 'seven')")
	require.Equal(t, []string{"a|n7", "b|n7", "e|n12"}, txRows(t, tx, q))
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"a|seven", "b|seven", "d|late", "e|n12"}, txRows(t, db, q))

	// EXPLAIN ANALYZE counts the rows of each node.
	lines := orderedRows(t, db, "EXPLAIN ANALYZE "+q)
	require.Contains(t, lines[0], "(rows=4 ")
	require.Contains(t, lines[1], "[Lookup: right, probe ~5 rows] (rows=4 ")
}

func TestLookupJoinLakeOnlyPartition(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE pk (p STRING, id INT, v STRING, PRIMARY KEY (p, id) NOT ENFORCED)
		PARTITIONED BY (p) WITH ('bucket.num' = '1', 'table.datalake.enabled' = 'true')`)
	var vals []string
	for i := 1; i <= 100; i++ {
		vals = append(vals, fmt.Sprintf("('x', %d, 'x%d')", i, i), fmt.Sprintf("('y', %d, 'y%d')", i, i))
	}
	mustExec(t, db, "INSERT INTO pk VALUES "+strings.Join(vals, ", "))
	var snap any
	require.NoError(t, db.QueryRow("CALL sys.tier('pk')").Scan(&snap))
	mustExec(t, db, "ALTER TABLE pk DROP PARTITION (p = 'x')")
	mustExec(t, db, "CREATE TABLE keys (p STRING, id INT)")
	mustExec(t, db, "INSERT INTO keys VALUES ('x', 3), ('y', 4)")
	q := "SELECT k.p, k.id, pk.v FROM `keys` k JOIN pk ON pk.p = k.p AND pk.id = k.id"
	require.Contains(t, strings.Join(orderedRows(t, db, "EXPLAIN "+q), "\n"), "[Lookup: right")
	// The dropped partition is still in the lake, and a lookup reads it
	// as a scan does.
	require.Equal(t, []string{"x|3|x3", "y|4|y4"}, txRows(t, db, q))
	require.Equal(t, []string{"x3"}, txRows(t, db, "SELECT v FROM pk WHERE p = 'x' AND id = 3"))
}

// A subquery in ON filters the side it reads, or, over both sides of an
// inner join, the joined rows; one that would decide which rows of an
// outer join's preserved side match is refused. LIMIT takes no subquery,
// as in MySQL.
func TestJoinSubqueryInOn(t *testing.T) {
	db := openJoinDB(t)
	mustExec(t, db, "CREATE TABLE a (id INT, x INT)")
	mustExec(t, db, "CREATE TABLE b (id INT, y INT)")
	mustExec(t, db, "CREATE TABLE ok (y INT)")
	mustExec(t, db, "INSERT INTO a VALUES (1, 10), (2, 20), (3, 30)")
	mustExec(t, db, "INSERT INTO b VALUES (1, 100), (2, 200), (3, 300), (3, 301)")
	mustExec(t, db, "INSERT INTO ok VALUES (100), (301)")
	require.Equal(t, []string{"1|100", "3|301"},
		txRows(t, db, "SELECT a.id, b.y FROM a JOIN b ON b.id = a.id AND b.y IN (SELECT y FROM ok)"))
	require.Equal(t, []string{"1|100", "2|<nil>", "3|301"},
		txRows(t, db, "SELECT a.id, b.y FROM a LEFT JOIN b ON b.id = a.id AND b.y IN (SELECT y FROM ok)"))
	require.Equal(t, []string{"3|300", "3|301"},
		txRows(t, db, "SELECT a.id, b.y FROM a JOIN b ON b.id = a.id AND a.x + b.y > (SELECT MIN(y) FROM ok WHERE y > ?)", 200))
	require.Equal(t, []string{"1|100", "3|301"},
		txRows(t, db, "SELECT a.id, b.y FROM a JOIN b ON EXISTS (SELECT 1 FROM ok WHERE ok.y = b.y) AND a.id = b.id"))
	_, err := db.Exec("SELECT a.id FROM a LEFT JOIN b ON b.id = a.id AND a.x > (SELECT 15)")
	requireSentinel(t, err, fluss.ErrUnsupported, "a subquery in the ON of an outer join that reads its preserved side")
	_, err = db.Exec("SELECT id FROM a LIMIT (SELECT 1)")
	requireSentinel(t, err, fluss.ErrSyntax, "LIMIT and OFFSET take a number or a placeholder")
}
