package fluss_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// requireDuplicate checks that err is the ErrConstraint of a UNIQUE index
// in MySQL's words.
func requireDuplicate(t *testing.T, err error, value, index string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.Contains(t, err.Error(), "Duplicate entry '"+value+"' for key '"+index+"'")
}

const usersDDL = `CREATE TABLE users (id BIGINT PRIMARY KEY, email VARCHAR(64), name VARCHAR(32), age INT,
	UNIQUE KEY idx_email (email), KEY idx_age (age)) WITH ('bucket.num' = '4')`

func TestUniqueIndexRefusesDuplicates(t *testing.T) {
	db, dsn := openDB(t)
	mustExec(t, db, usersDDL)
	mustExec(t, db, `INSERT INTO users VALUES (1, 'a@x', 'a', 30), (2, 'b@x', 'b', 40)`)

	// Two rows of one statement: nothing of it is stored.
	_, err := db.Exec(`INSERT INTO users VALUES (3, 'c@x', 'c', 1), (4, 'c@x', 'd', 2)`)
	requireDuplicate(t, err, "c@x", "idx_email")
	require.Empty(t, queryAll(t, db, `SELECT id FROM users WHERE id IN (3, 4)`))

	// Against a stored row, in another bucket or not.
	for id := 10; id < 20; id++ {
		_, err = db.Exec(`INSERT INTO users VALUES (?, 'a@x', 'z', 1)`, id)
		requireDuplicate(t, err, "a@x", "idx_email")
	}
	_, err = db.Exec(`UPDATE users SET email = 'b@x' WHERE id = 1`)
	requireDuplicate(t, err, "b@x", "idx_email")

	// A row replacing itself is no duplicate; NULLs never collide; a value
	// given up can be taken.
	mustExec(t, db, `INSERT INTO users VALUES (1, 'a@x', 'a2', 31)`)
	mustExec(t, db, `INSERT INTO users VALUES (5, NULL, 'n1', 1), (6, NULL, 'n2', 1)`)
	mustExec(t, db, `UPDATE users SET email = 'old@x' WHERE id = 2`)
	mustExec(t, db, `INSERT INTO users VALUES (7, 'b@x', 'g', 1)`)
	mustExec(t, db, `DELETE FROM users WHERE id = 7`)
	mustExec(t, db, `INSERT INTO users VALUES (8, 'b@x', 'h', 1)`)
	// Swapping two values in one statement is no duplicate either: the
	// rows are checked as the statement leaves them.
	mustExec(t, db, `INSERT INTO users VALUES (1, 'old@x', 'a', 31), (2, 'a@x', 'b', 40)`)

	// In a transaction, the statement that takes a value its earlier
	// writes or the committed rows hold is refused; rolled back to a
	// savepoint before it, the transaction goes on without it.
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO users VALUES (20, 'tx@x', 't', 1)`)
	require.NoError(t, err)
	_, err = tx.Exec(`SAVEPOINT s`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO users VALUES (21, 'tx@x', 't', 1)`)
	requireDuplicate(t, err, "tx@x", "idx_email")
	_, err = tx.Exec(`INSERT INTO users VALUES (21, 'b@x', 't', 1)`)
	requireDuplicate(t, err, "b@x", "idx_email")
	_, err = tx.Exec(`ROLLBACK TO SAVEPOINT s`)
	require.NoError(t, err)
	// A value the transaction gives up can be taken in it.
	_, err = tx.Exec(`INSERT INTO users VALUES (8, 'freed@x', 'h', 1)`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO users VALUES (22, 'b@x', 't', 1)`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.Equal(t, [][]any{{int64(22)}}, queryAll(t, db, `SELECT id FROM users WHERE email = 'b@x'`))
	require.Equal(t, [][]any{{int64(20)}}, queryAll(t, db, `SELECT id FROM users WHERE email = 'tx@x'`))
	require.Empty(t, queryAll(t, db, `SELECT id FROM users WHERE id = 21`))

	// After reopening, the index still refuses (rebuilt or kept).
	require.NoError(t, db.Close())
	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`INSERT INTO users VALUES (30, 'h', 'x', 1)`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO users VALUES (31, 'b@x', 'x', 1)`)
	requireDuplicate(t, err, "b@x", "idx_email")
	_, err = db.Exec(`INSERT INTO users VALUES (31, 'freed@x', 'x', 1)`)
	requireDuplicate(t, err, "freed@x", "idx_email")
}

func TestUniqueIndexMultiColumnMessage(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE m (id INT PRIMARY KEY, a INT, b VARCHAR(8), UNIQUE (a, b))`)
	mustExec(t, db, `INSERT INTO m VALUES (1, 1, 'x'), (2, 1, 'y'), (3, NULL, 'x'), (4, NULL, 'x')`)
	_, err := db.Exec(`INSERT INTO m VALUES (5, 1, 'y')`)
	requireDuplicate(t, err, "1-y", "a")
}

func TestCreateIndexOnRowsAndDropIndex(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(8), w INT) WITH ('bucket.num' = '3')`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 1), (3, 'a', 2)`)

	// Existing rows violate it: refused, and no index is left behind.
	_, err := db.Exec(`CREATE UNIQUE INDEX uv ON t (v)`)
	requireDuplicate(t, err, "a", "uv")
	mustExec(t, db, `INSERT INTO t VALUES (4, 'a', 3)`)

	mustExec(t, db, `CREATE UNIQUE INDEX uw ON t (w, v)`)
	_, err = db.Exec(`INSERT INTO t VALUES (5, 'a', 1)`)
	requireDuplicate(t, err, "1-a", "uw")
	_, err = db.Exec(`CREATE INDEX uw ON t (v)`)
	require.ErrorIs(t, err, fluss.ErrExists)
	mustExec(t, db, `CREATE INDEX IF NOT EXISTS uw ON t (v)`)

	mustExec(t, db, `DROP INDEX uw ON t`)
	mustExec(t, db, `INSERT INTO t VALUES (5, 'a', 1)`)
	_, err = db.Exec(`DROP INDEX uw ON t`)
	require.ErrorIs(t, err, fluss.ErrNotFound)
	mustExec(t, db, `DROP INDEX IF EXISTS uw ON t`)

	// ALTER TABLE spellings.
	mustExec(t, db, `ALTER TABLE t ADD UNIQUE INDEX u_id_w (id, w)`)
	mustExec(t, db, `ALTER TABLE t ADD INDEX iv (v)`)
	mustExec(t, db, `ALTER TABLE t DROP INDEX iv`)
	_, err = db.Exec(`ALTER TABLE t ADD UNIQUE KEY u2 (w)`)
	requireDuplicate(t, err, "1", "u2")
}

func TestIndexRefusedOnLogTables(t *testing.T) {
	db, _ := openDB(t)
	for _, ddl := range []string{
		`CREATE TABLE l1 (a INT, b INT, UNIQUE (a))`,
		`CREATE TABLE l2 (a INT UNIQUE, b INT)`,
		`CREATE TABLE l3 (a INT, b INT, INDEX ia (a))`,
	} {
		_, err := db.Exec(ddl)
		require.Error(t, err, ddl)
		require.Contains(t, err.Error(), "log table", ddl)
	}
	mustExec(t, db, `CREATE TABLE l (a INT, b INT)`)
	for _, ddl := range []string{`CREATE INDEX ia ON l (a)`, `CREATE UNIQUE INDEX ia ON l (a)`} {
		_, err := db.Exec(ddl)
		require.Error(t, err, ddl)
		require.Contains(t, err.Error(), "log table", ddl)
	}
	_, err := db.Exec(`CREATE TABLE p (a INT PRIMARY KEY, b VARCHAR(4), FULLTEXT (b))`)
	require.ErrorIs(t, err, fluss.ErrUnsupported)
	_, err = db.Exec(`CREATE TABLE p (a INT PRIMARY KEY, b VARCHAR(4), UNIQUE (b(2)))`)
	require.ErrorIs(t, err, fluss.ErrUnsupported)
}

func TestUniqueIndexPartitionedTable(t *testing.T) {
	db, _ := openDB(t)
	_, err := db.Exec(`CREATE TABLE pt (id INT, dt VARCHAR(10), email VARCHAR(10), PRIMARY KEY (id, dt), UNIQUE (email)) PARTITIONED BY (dt)`)
	require.ErrorIs(t, err, fluss.ErrInvalidTable)
	require.Contains(t, err.Error(), "partition key")
	mustExec(t, db, `CREATE TABLE pt (id INT, dt VARCHAR(10), email VARCHAR(10), PRIMARY KEY (id, dt), UNIQUE KEY ue (email, dt)) PARTITIONED BY (dt)`)
	mustExec(t, db, `INSERT INTO pt VALUES (1, 'd1', 'a'), (2, 'd2', 'a')`)
	_, err = db.Exec(`INSERT INTO pt VALUES (3, 'd1', 'a')`)
	requireDuplicate(t, err, "a-d1", "ue")
}

// Two transactions storing one value concurrently: one of them fails.
func TestUniqueIndexConcurrentTransactions(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, usersDDL)
	for round := range 20 {
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		start := make(chan struct{})
		for g := range 2 {
			wg.Go(func() {
				tx, err := db.Begin()
				if err != nil {
					errs[g] = err
					return
				}
				<-start
				if _, err := tx.Exec(`INSERT INTO users VALUES (?, ?, 'c', 1)`, round*10+g, "v"+string(rune('a'+round))); err != nil {
					tx.Rollback()
					errs[g] = err
					return
				}
				errs[g] = tx.Commit()
			})
		}
		close(start)
		wg.Wait()
		failed := 0
		for _, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, fluss.ErrConstraint)
				failed++
			}
		}
		require.Equal(t, 1, failed, "round %d: %v", round, errs)
		require.Len(t, queryAll(t, db, `SELECT id FROM users WHERE email = ?`, "v"+string(rune('a'+round))), 1)
	}
}

// Reads through an index return what a scan returns, over random rows
// that keep changing (upserts moving values, deletes, NULLs), for =, IN
// and a leading column of a two-column index, before and after reopening
// and inside a transaction's view.
func TestIndexLookupEqualsScan(t *testing.T) {
	db, dsn := openDB(t)
	mustExec(t, db, `CREATE TABLE r (id INT PRIMARY KEY, a INT, b VARCHAR(4), c INT,
		KEY ia (a), KEY iab (b, a), UNIQUE KEY uc (c)) WITH ('bucket.num' = '3')`)
	rng := rand.New(rand.NewPCG(1, 2))
	val := func(n int) any {
		if rng.IntN(8) == 0 {
			return nil
		}
		return rng.IntN(n)
	}
	str := func() any {
		if rng.IntN(8) == 0 {
			return nil
		}
		return string(rune('a' + rng.IntN(5)))
	}
	uniq := 0
	write := func() {
		for range 40 {
			id := rng.IntN(60)
			switch rng.IntN(4) {
			case 0:
				mustExec(t, db, `DELETE FROM r WHERE id = ?`, id)
			default:
				uniq++
				var c any = uniq
				if rng.IntN(4) == 0 {
					c = nil
				}
				mustExec(t, db, `INSERT INTO r VALUES (?, ?, ?, ?)`, id, val(6), str(), c)
			}
		}
		mustExec(t, db, `UPDATE r SET a = a + 1 WHERE b = 'a'`)
	}
	type query struct {
		where string
		args  []any
		keep  func(row []any) bool
	}
	eq := func(v, want any) bool { return v != nil && want != nil && fmt.Sprint(v) == fmt.Sprint(want) }
	check := func(q interface {
		Query(string, ...any) (*sql.Rows, error)
	}, label string) {
		all := scanRows(t, q, `SELECT id, a, b, c FROM r`)
		var queries []query
		for range 20 {
			a, b, c := rng.IntN(6), string(rune('a'+rng.IntN(5))), rng.IntN(uniq+1)
			a2 := rng.IntN(6)
			queries = append(queries,
				query{`a = ?`, []any{a}, func(r []any) bool { return eq(r[1], a) }},
				query{`a IN (?, ?, NULL)`, []any{a, a2}, func(r []any) bool { return eq(r[1], a) || eq(r[1], a2) }},
				query{`b = ?`, []any{b}, func(r []any) bool { return eq(r[2], b) }},
				query{`b = ? AND a = ?`, []any{b, a}, func(r []any) bool { return eq(r[2], b) && eq(r[1], a) }},
				query{`c = ?`, []any{c}, func(r []any) bool { return eq(r[3], c) }},
				query{`a = ? AND id > 30`, []any{a}, func(r []any) bool { return eq(r[1], a) && r[0].(int64) > 30 }},
			)
		}
		for _, qq := range queries {
			var want []string
			for _, r := range all {
				if qq.keep(r) {
					want = append(want, fmt.Sprint(r))
				}
			}
			got := []string{}
			for _, r := range scanRows(t, q, `SELECT id, a, b, c FROM r WHERE `+qq.where, qq.args...) {
				got = append(got, fmt.Sprint(r))
			}
			sort.Strings(want)
			sort.Strings(got)
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, got, "%s: WHERE %s %v", label, qq.where, qq.args)
		}
	}
	for round := range 5 {
		write()
		check(db, fmt.Sprintf("round %d", round))
	}
	plan := queryAll(t, db, `EXPLAIN SELECT * FROM r WHERE c = 3`)
	require.Equal(t, "IndexLookup: [fluss.r] index=uc keys=1", plan[0][0])
	plan = queryAll(t, db, `EXPLAIN SELECT * FROM r WHERE b IN ('a', 'b') AND a = 1`)
	require.Equal(t, "IndexLookup: [fluss.r] index=iab keys=2", plan[0][0])

	tx, err := db.Begin()
	require.NoError(t, err)
	check(tx, "transaction")
	// Once the transaction wrote the table, its reads by an indexed
	// column see its writes too.
	_, err = tx.Exec(`INSERT INTO r VALUES (1000, 77, 'q', 99999)`)
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1000), int64(77), "q", int64(99999)}}, scanRows(t, tx, `SELECT id, a, b, c FROM r WHERE c = 99999`))
	require.Equal(t, [][]any{{int64(1000), int64(77), "q", int64(99999)}}, scanRows(t, tx, `SELECT id, a, b, c FROM r WHERE a = 77`))
	require.NoError(t, tx.Rollback())
	require.Empty(t, scanRows(t, db, `SELECT id, a, b, c FROM r WHERE c = 99999`))

	require.NoError(t, db.Close())
	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()
	check(db, "reopened")
	write()
	check(db, "reopened, written")
}

// scanRows reads every row of a query of (id, a, b, c) as int64 or
// string values.
func scanRows(t *testing.T, q interface {
	Query(string, ...any) (*sql.Rows, error)
}, query string, args ...any) [][]any {
	t.Helper()
	rows, err := q.Query(query, args...)
	require.NoError(t, err, query)
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, 4)
		ptrs := make([]any, 4)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestShowIndexAndShowCreateTable(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE s (id INT PRIMARY KEY, email VARCHAR(20) UNIQUE, a INT, b INT, KEY iab (a, b))`)
	mustExec(t, db, `CREATE INDEX ib ON s (b)`)
	require.Equal(t, [][]any{
		{"s", int64(0), "PRIMARY", int64(1), "id", "", "BTREE"},
		{"s", int64(0), "email", int64(1), "email", "YES", "BTREE"},
		{"s", int64(1), "iab", int64(1), "a", "YES", "BTREE"},
		{"s", int64(1), "iab", int64(2), "b", "YES", "BTREE"},
		{"s", int64(1), "ib", int64(1), "b", "YES", "BTREE"},
	}, queryAll(t, db, `SHOW INDEX FROM s`))
	require.Len(t, queryAll(t, db, `SHOW KEYS IN s FROM fluss`), 5)
	create := queryAll(t, db, `SHOW CREATE TABLE s`)[0][1].(string)
	require.Contains(t, create, "UNIQUE KEY email (email)")
	require.Contains(t, create, "KEY iab (a, b)")
	require.Contains(t, create, "KEY ib (b)")
	// What SHOW CREATE TABLE prints creates the same indexes.
	mustExec(t, db, `DROP TABLE s`)
	mustExec(t, db, create)
	require.Len(t, queryAll(t, db, `SHOW INDEX FROM s`), 5)
}

// TestUniqueIndexSavepointRestoresBufferedValues: rolled back to a
// savepoint, a transaction's buffer knows again which of its rows holds
// a UNIQUE value, so the statement that takes it a second time is
// refused at once, not only at Commit.
func TestUniqueIndexSavepointRestoresBufferedValues(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, usersDDL)
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	for _, q := range []string{
		`INSERT INTO users VALUES (1, 'x@x', 'a', 1)`,
		`SAVEPOINT s`,
		`UPDATE users SET email = 'y@x' WHERE id = 1`,
		`INSERT INTO users VALUES (2, 'x@x', 'b', 1)`,
		`ROLLBACK TO SAVEPOINT s`,
	} {
		_, err := tx.Exec(q)
		require.NoError(t, err, q)
	}
	_, err = tx.Exec(`INSERT INTO users VALUES (3, 'x@x', 'c', 1)`)
	requireDuplicate(t, err, "x@x", "idx_email")
}
