package fluss_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// seedOrders fills a log table, a primary-key table and lake-tiered
// copies of both with the same rows, so every query below runs over each
// kind of read: log, kv+log, lake and lake+log splits.
func seedOrders(t *testing.T, db *sql.DB) []string {
	mustExec(t, db, `CREATE TABLE orders (id BIGINT, region STRING, amount DECIMAL(10,2), qty INT, note STRING)
		WITH ('bucket.num' = '3')`)
	mustExec(t, db, `CREATE TABLE orders_pk (id BIGINT NOT NULL, region STRING, amount DECIMAL(10,2), qty INT, note STRING,
		PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	mustExec(t, db, `CREATE TABLE orders_lake (id BIGINT, region STRING, amount DECIMAL(10,2), qty INT, note STRING)
		WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE orders_pk_lake (id BIGINT NOT NULL, region STRING, amount DECIMAL(10,2), qty INT, note STRING,
		PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`)
	tables := []string{"orders", "orders_pk", "orders_lake", "orders_pk_lake"}
	for _, tbl := range tables {
		mustExec(t, db, `INSERT INTO `+tbl+` VALUES
			(1, 'EU', 10.50, 1, 'a'), (2, 'US', 20.00, 2, NULL), (3, 'EU', 5.25, NULL, 'b'),
			(4, NULL, 7.00, 4, 'c'), (5, 'US', NULL, 5, 'd'), (6, 'APAC', 99.99, 6, 'e')`)
	}
	// The lake tables' rows in the lake, with a change in the log tail.
	tier(t, db, "orders_lake")
	tier(t, db, "orders_pk_lake")
	mustExec(t, db, `INSERT INTO orders_lake VALUES (7, 'EU', 1.00, 7, 'f')`)
	mustExec(t, db, `INSERT INTO orders_pk_lake VALUES (7, 'EU', 1.00, 7, 'f'), (8, 'US', 1, 1, 'x')`)
	mustExec(t, db, `DELETE FROM orders_pk_lake WHERE id = 8`)
	mustExec(t, db, `INSERT INTO orders VALUES (7, 'EU', 1.00, 7, 'f')`)
	mustExec(t, db, `INSERT INTO orders_pk VALUES (7, 'EU', 1.00, 7, 'f')`)
	return tables
}

func TestSelectAggregatesEverySplitKind(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	for _, tbl := range seedOrders(t, db) {
		t.Run(tbl, func(t *testing.T) {
			// COUNT(*) reads no column.
			require.Equal(t, [][]any{{int64(7)}}, queryAll(t, db, `SELECT COUNT(*) FROM `+tbl))
			require.Equal(t, [][]any{{int64(7), int64(6), "143.74", int64(25), "23.956667", int64(3)}},
				queryAll(t, db, `SELECT COUNT(*), COUNT(amount), SUM(amount), SUM(qty), AVG(amount), COUNT(DISTINCT region) FROM `+tbl))
			require.Equal(t, [][]any{
				{nil, int64(1), "7.00"},
				{"APAC", int64(1), "99.99"},
				{"EU", int64(3), "16.75"},
				{"US", int64(2), "20.00"},
			}, queryAll(t, db, `SELECT region, COUNT(*), SUM(amount) FROM `+tbl+` GROUP BY region ORDER BY region`))
			require.Equal(t, [][]any{{"EU", int64(3)}},
				queryAll(t, db, `SELECT region, COUNT(*) AS n FROM `+tbl+` GROUP BY region HAVING n > 2`))
			// ORDER BY with LIMIT/OFFSET (top-N), NULLs first ascending.
			require.Equal(t, [][]any{{int64(4)}, {int64(6)}, {int64(1)}},
				queryAll(t, db, `SELECT id FROM `+tbl+` ORDER BY region, amount DESC LIMIT 3`))
			require.Equal(t, [][]any{{int64(2)}, {int64(1)}},
				queryAll(t, db, `SELECT id FROM `+tbl+` ORDER BY qty DESC LIMIT 2 OFFSET 4`))
			require.Equal(t, [][]any{{int64(7)}, {int64(6)}, {int64(5)}},
				queryAll(t, db, `SELECT id FROM `+tbl+` ORDER BY id DESC LIMIT ?`, 3))
			require.Equal(t, [][]any{{nil}, {"APAC"}, {"EU"}, {"US"}},
				queryAll(t, db, `SELECT DISTINCT region FROM `+tbl+` ORDER BY 1`))
			// Expressions and a filter above an aggregate.
			require.Equal(t, [][]any{{"EU", "eu-3"}, {"US", "us-1"}},
				queryAll(t, db, `SELECT region, CONCAT(LOWER(region), '-', COUNT(*)) FROM `+tbl+`
					WHERE region IS NOT NULL AND amount < 50 GROUP BY region ORDER BY region`))
		})
	}
}

func TestSelectWithoutFrom(t *testing.T) {
	db, _ := openDB(t)
	require.Equal(t, [][]any{{int64(1)}}, queryAll(t, db, `SELECT 1`))
	require.Equal(t, [][]any{{int64(3), "a"}}, queryAll(t, db, `SELECT 1+2, 'a'`))
	require.Equal(t, [][]any{{"8.0.0-fluss-0.1"}}, queryAll(t, db, `SELECT VERSION()`))
	require.Equal(t, [][]any{{"fluss"}}, queryAll(t, db, `SELECT DATABASE()`))
	mustExec(t, db, `CREATE DATABASE shop`)
	// USE changes the current database of one connection; pin it.
	conn, err := db.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(t.Context(), `USE shop`)
	require.NoError(t, err)
	var name string
	require.NoError(t, conn.QueryRowContext(t.Context(), `SELECT DATABASE()`).Scan(&name))
	require.Equal(t, "shop", name)
	var n int64
	require.NoError(t, db.QueryRow(`SELECT ? + 1`, 41).Scan(&n))
	require.Equal(t, int64(42), n)
}

func TestSelectColumnTypesOfComputedOutputs(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, name STRING, d DECIMAL(10,2))`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'a', 1.50)`)
	rows, err := db.Query(`SELECT id, COUNT(*), SUM(d), AVG(id), UPPER(name), 'x', NULL FROM t GROUP BY id, name`)
	require.NoError(t, err)
	defer rows.Close()
	types, err := rows.ColumnTypes()
	require.NoError(t, err)
	var got []string
	for _, ct := range types {
		nullable, ok := ct.Nullable()
		require.True(t, ok)
		got = append(got, fmt.Sprintf("%s %v", ct.DatabaseTypeName(), nullable))
	}
	require.Equal(t, []string{"BIGINT false", "BIGINT false", "DECIMAL true", "DOUBLE true", "STRING true", "STRING false", "STRING true"}, got)
	p, s, ok := types[2].DecimalSize()
	require.True(t, ok)
	require.Equal(t, []int64{38, 2}, []int64{p, s})
	require.True(t, rows.Next())
	var (
		id, cnt int64
		sum     string
		avg     float64
		upper   sql.NullString
		x       string
		null    sql.NullString
	)
	require.NoError(t, rows.Scan(&id, &cnt, &sum, &avg, &upper, &x, &null))
	require.Equal(t, "1.50", sum)
	require.Equal(t, "A", upper.String)
	require.False(t, null.Valid)
}

func TestSelectErrors(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, s STRING, v BIGINT)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'a', 9223372036854775807), (2, 'b', 1)`)
	for _, tc := range []struct {
		q        string
		sentinel error
		contains string
	}{
		{`SELECT s, id FROM t GROUP BY s`, fluss.ErrUnsupported, "column id must appear in GROUP BY"},
		{`SELECT DISTINCT s FROM t ORDER BY id`, fluss.ErrUnsupported, "ORDER BY id"},
		{`SELECT SUM(v) FROM t`, fluss.ErrInvalid, "SUM(v): invalid value: BIGINT overflow"},
		{`SELECT COUNT(*) FROM t WHERE COUNT(*) > 1`, fluss.ErrUnsupported, "not allowed in WHERE"},
		{`SELECT ABS(s) FROM t`, fluss.ErrUnsupported, "ABS of STRING"},
	} {
		rows, err := db.Query(tc.q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		require.ErrorIs(t, err, tc.sentinel, tc.q)
		require.ErrorContains(t, err, tc.contains, tc.q)
	}
}

func TestSelectMemoryLimit(t *testing.T) {
	db, _ := openDB(t, "memory.limit=1mb")
	mustExec(t, db, `CREATE TABLE t (id BIGINT, s STRING)`)
	// About 100 bytes per group: 15,000 groups need more than 1MiB.
	var vals []string
	for i := range 15000 {
		vals = append(vals, fmt.Sprintf("(%d, 'value-%06d')", i, i))
	}
	mustExec(t, db, `INSERT INTO t VALUES `+strings.Join(vals, ", "))
	rows, err := db.Query(`SELECT s, COUNT(*) FROM t GROUP BY s`)
	require.NoError(t, err)
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	require.ErrorIs(t, err, fluss.ErrInvalid)
	require.ErrorContains(t, err, "memory.limit of 1MiB exceeded by GROUP BY")
	require.ErrorContains(t, err, "raise memory.limit in the DSN")
	// A top-N holds only its n rows, and a global aggregate one group.
	require.Len(t, queryAll(t, db, `SELECT s FROM t ORDER BY s DESC LIMIT 5`), 5)
	require.Equal(t, [][]any{{int64(15000)}}, queryAll(t, db, `SELECT COUNT(*) FROM t`))

	_, err = fluss.ParseDSN(":memory:?memory.limit=12")
	require.ErrorContains(t, err, "memory.limit")
	cfg, err := fluss.ParseDSN(":memory:?memory.limit=512mb")
	require.NoError(t, err)
	require.Equal(t, int64(512<<20), cfg.MemoryLimit)
	cfg, err = fluss.ParseDSN(":memory:")
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), cfg.MemoryLimit)
}

// TestSelectStringNumberComparison pins MySQL's rule: a string compared
// with a number compares numerically.
func TestSelectStringNumberComparison(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, s STRING)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, '10'), (2, '9'), (3, 'x'), (4, '10.0')`)
	require.Equal(t, [][]any{{int64(1)}, {int64(4)}}, queryAll(t, db, `SELECT id FROM t WHERE s = 10 ORDER BY id`))
	require.Equal(t, [][]any{{int64(1)}, {int64(4)}}, queryAll(t, db, `SELECT id FROM t WHERE s > 9 ORDER BY id`))
	// Strings with strings stay byte-wise: '9' > '10'.
	require.Equal(t, [][]any{{int64(2)}, {int64(3)}}, queryAll(t, db, `SELECT id FROM t WHERE s > '10.0' ORDER BY id`))
}

// TestUnknownHintOptionIsRefused: a hint option the engine does not read
// (a typo, or a Flink option for a read fluss does not have) would leave
// the query running as if it had not been given; it is refused, naming
// it, on every path a SELECT takes. The options the README lists keep
// working.
func TestUnknownHintOptionIsRefused(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE lg (id INT, v STRING)`)
	mustExec(t, db, `CREATE TABLE kv (k INT PRIMARY KEY, v STRING)`)
	mustExec(t, db, `INSERT INTO lg VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b')`)

	for _, q := range []string{
		`SELECT /*+ OPTIONS('read.optimised'='true') */ * FROM kv`,
		`SELECT /*+ OPTIONS('read.optimised'='true') */ * FROM lg`,
		`SELECT /*+ OPTIONS('read.optimised'='true') */ v FROM kv WHERE k = 1`,
		`SELECT /*+ OPTIONS('scan.max-records-per-split'='1', 'read.optimised'='true') */ * FROM lg`,
		`SELECT /*+ OPTIONS('read.optimised'='true') */ count(*) FROM lg`,
		`SELECT /*+ OPTIONS('read.optimised'='true') */ 1`,
		`EXPLAIN SELECT /*+ OPTIONS('read.optimised'='true') */ * FROM lg`,
	} {
		_, err := db.Query(q)
		require.Error(t, err, q)
		require.ErrorIs(t, err, fluss.ErrInvalidOption, q)
		require.ErrorContains(t, err, `'read.optimised'`, q)
		require.ErrorContains(t, err, `read.optimized`, q) // what it may have meant
	}
	_, err := db.Query(`SELECT /*+ OPTIONS('scan.startup.mode'='earliest') */ * FROM lg`)
	require.ErrorContains(t, err, `'scan.startup.mode'`)

	require.Len(t, queryAll(t, db, `SELECT /*+ OPTIONS('read.optimized'='true') */ * FROM kv`), 0) // no KV snapshot yet
	require.Len(t, queryAll(t, db, `SELECT /*+ OPTIONS('read.optimized'='false') */ * FROM kv`), 2)
	require.Len(t, queryAll(t, db, `SELECT /*+ OPTIONS('scan.max-records-per-split'='1') */ * FROM lg`), 2)
	require.Len(t, queryAll(t, db, `SELECT /*+ OPTIONS('read.optimized'='true') */ v FROM kv WHERE k = 1`), 1)
}
