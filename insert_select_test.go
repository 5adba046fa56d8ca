package fluss_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// openInsertSelectDB opens a database with a log table src of five rows
// and a primary-key table kv of three.
func openInsertSelectDB(t *testing.T, opts ...string) *sql.DB {
	t.Helper()
	db, _ := openDB(t, opts...)
	mustExec(t, db, "CREATE TABLE src (id BIGINT, grp STRING, v INT) WITH ('bucket.num' = '2')")
	mustExec(t, db, "INSERT INTO src VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 30), (4, 'b', NULL), (5, 'c', 50)")
	mustExec(t, db, "CREATE TABLE kv (id BIGINT, name STRING, score INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')")
	mustExec(t, db, "INSERT INTO kv VALUES (1, 'ann', 1), (2, 'bob', 2), (3, 'cid', 3)")
	return db
}

func TestInsertSelectLogToLog(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE dst (id BIGINT, grp STRING, v INT)")
	n := affected(t)(db.Exec("INSERT INTO dst SELECT id, grp, v FROM src WHERE v IS NOT NULL ORDER BY v DESC LIMIT 3"))
	require.EqualValues(t, 3, n)
	require.Equal(t, []string{"2|a|20", "3|b|30", "5|c|50"}, txRows(t, db, "SELECT * FROM dst"))

	// A column list in another order; the unlisted column of a log table
	// is NULL.
	n = affected(t)(db.Exec("INSERT INTO dst (v, id) SELECT v + 1, id * 10 FROM src WHERE grp = 'a'"))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"10|<nil>|11", "20|<nil>|21"}, txRows(t, db, "SELECT * FROM dst WHERE grp IS NULL"))

	// SELECT * and an empty result.
	mustExec(t, db, "CREATE TABLE copy (id BIGINT, grp STRING, v INT)")
	require.EqualValues(t, 5, affected(t)(db.Exec("INSERT INTO copy SELECT * FROM src")))
	require.Equal(t, txRows(t, db, "SELECT * FROM src"), txRows(t, db, "SELECT * FROM copy"))
	require.EqualValues(t, 0, affected(t)(db.Exec("INSERT INTO copy SELECT * FROM src WHERE id > 100")))
	require.Equal(t, []string{"5"}, txRows(t, db, "SELECT count(*) FROM copy"))
}

func TestInsertSelectIntoKeyTable(t *testing.T) {
	db := openInsertSelectDB(t)
	// Upsert: keys 1 and 2 change, 4 and 5 are new, 3 is written with
	// the value it has.
	n := affected(t)(db.Exec("INSERT INTO kv SELECT id, grp, v FROM src WHERE id <> 3 AND v IS NOT NULL"))
	require.EqualValues(t, 3, n, "rows inserted plus rows changed, as for VALUES")
	mustExec(t, db, "INSERT INTO kv SELECT 3, 'cid', 3")
	require.Equal(t, []string{"1|a|10", "2|a|20", "3|cid|3", "5|c|50"}, txRows(t, db, "SELECT * FROM kv"))

	// A column list that leaves a column out is a partial update: the
	// stored value stays, a new key has NULL.
	n = affected(t)(db.Exec("INSERT INTO kv (id, score) SELECT id, v * 2 FROM src WHERE grp = 'b'"))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"1|a|10", "2|a|20", "3|cid|60", "4|<nil>|<nil>", "5|c|50"}, txRows(t, db, "SELECT * FROM kv"))

	// ON DUPLICATE KEY UPDATE: an existing key takes only the columns the
	// clause updates.
	n = affected(t)(db.Exec("INSERT INTO kv SELECT id, 'new', 0 FROM src WHERE id IN (1, 6) ON DUPLICATE KEY UPDATE name = VALUES(name)"))
	require.EqualValues(t, 1, n)
	require.Equal(t, []string{"1|new|10"}, txRows(t, db, "SELECT * FROM kv WHERE id = 1"))

	// A list without the key is refused as for VALUES.
	_, err := db.Exec("INSERT INTO kv (name) SELECT grp FROM src")
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "primary-key column id is not listed")
}

func TestInsertSelectKeyToLog(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE names (name STRING, id BIGINT)")
	require.EqualValues(t, 3, affected(t)(db.Exec("INSERT INTO names SELECT name, id FROM kv")))
	// A point lookup is a SELECT like any other.
	require.EqualValues(t, 1, affected(t)(db.Exec("INSERT INTO names SELECT name, id FROM kv WHERE id = 2")))
	require.Equal(t, []string{"ann|1", "bob|2", "bob|2", "cid|3"}, txRows(t, db, "SELECT * FROM names"))
}

func TestInsertSelectAggregates(t *testing.T) {
	db := openInsertSelectDB(t)
	// count(*) is BIGINT, the column INT: converted as VALUES converts.
	mustExec(t, db, "CREATE TABLE totals (grp STRING, n INT, total BIGINT, PRIMARY KEY (grp) NOT ENFORCED)")
	n := affected(t)(db.Exec("INSERT INTO totals SELECT grp, count(*), sum(v) FROM src GROUP BY grp HAVING count(*) > 1"))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"a|2|30", "b|2|30"}, txRows(t, db, "SELECT * FROM totals"))

	mustExec(t, db, "CREATE TABLE grps (grp STRING)")
	require.EqualValues(t, 3, affected(t)(db.Exec("INSERT INTO grps SELECT DISTINCT grp FROM src")))
	mustExec(t, db, "INSERT INTO grps SELECT max(grp) FROM src")
	require.Equal(t, []string{"a", "b", "c", "c"}, txRows(t, db, "SELECT * FROM grps"))
}

// TestInsertSelectFromItself: the query is read in full before the first
// row is written, so it never reads the statement's own rows: each
// statement doubles the table exactly once.
func TestInsertSelectFromItself(t *testing.T) {
	db := openInsertSelectDB(t)
	for _, want := range []string{"10", "20", "40"} {
		n := affected(t)(db.Exec("INSERT INTO src SELECT * FROM src"))
		require.Equal(t, []string{want}, txRows(t, db, "SELECT count(*) FROM src"))
		require.EqualValues(t, n*2, mustCount(t, db, "src"))
	}
	require.Equal(t, []string{"a|16", "b|16", "c|8"}, txRows(t, db, "SELECT grp, count(*) FROM src GROUP BY grp"))

	// A key table doubles under new keys; the same keys change nothing.
	require.EqualValues(t, 3, affected(t)(db.Exec("INSERT INTO kv SELECT id + 10, name, score FROM kv")))
	require.Equal(t, []string{"11|ann|1", "12|bob|2", "13|cid|3", "1|ann|1", "2|bob|2", "3|cid|3"}, txRows(t, db, "SELECT * FROM kv"))
	require.EqualValues(t, 0, affected(t)(db.Exec("INSERT INTO kv SELECT * FROM kv")))
	require.EqualValues(t, 6, mustCount(t, db, "kv"))

	// In a transaction the query reads the transaction's view.
	tx, err := db.Begin()
	require.NoError(t, err)
	require.EqualValues(t, 40, affected(t)(tx.Exec("INSERT INTO src SELECT * FROM src")))
	require.NoError(t, tx.Commit())
	require.EqualValues(t, 80, mustCount(t, db, "src"))
}

func mustCount(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
	return n
}

func TestInsertSelectColumnCount(t *testing.T) {
	db := openInsertSelectDB(t)
	for q, want := range map[string]string{
		"INSERT INTO kv SELECT id, grp FROM src":               "INSERT has 3 target columns but the SELECT returns 2",
		"INSERT INTO kv (id, name) SELECT id, grp, v FROM src": "INSERT has 2 target columns but the SELECT returns 3",
		"INSERT INTO kv SELECT *, 1 FROM kv":                   "INSERT has 3 target columns but the SELECT returns 4",
	} {
		_, err := db.Exec(q)
		require.ErrorIs(t, err, fluss.ErrInvalid, q)
		require.ErrorContains(t, err, want, q)
	}
	require.EqualValues(t, 3, mustCount(t, db, "kv"))
}

// TestInsertSelectCoercion: every value is converted to its column as a
// value of VALUES is, with the same errors; a row that fails writes
// nothing of the statement.
func TestInsertSelectCoercion(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE narrow (id BIGINT NOT NULL, tiny TINYINT, s STRING, d DECIMAL(5,1), PRIMARY KEY (id) NOT ENFORCED)")
	mustExec(t, db, "CREATE TABLE strict (id BIGINT, v INT NOT NULL)")
	for _, tc := range []struct {
		q    string
		is   error
		want string
	}{
		{"INSERT INTO narrow (id, tiny) SELECT id, v * 10 FROM src ORDER BY id", fluss.ErrInvalid, "row 2, column tiny: invalid value: value 200 out of range for TINYINT"},
		{"INSERT INTO strict SELECT id, v FROM src ORDER BY id", fluss.ErrConstraint, "row 4, column v: NULL in a NOT NULL column"},
		{"INSERT INTO narrow (id, s) SELECT v, grp FROM src ORDER BY id", fluss.ErrConstraint, "row 4, column id: NULL in a primary-key column"},
		{"INSERT INTO narrow (id, s) SELECT 1, CAST(X'FFFE' AS CHAR)", fluss.ErrInvalid, "not valid UTF-8"},
		{"INSERT INTO narrow (id, d) SELECT id, v * 1000 FROM src", fluss.ErrInvalid, "column d"},
	} {
		_, err := db.Exec(tc.q)
		require.ErrorIs(t, err, tc.is, tc.q)
		require.ErrorContains(t, err, tc.want, tc.q)
	}
	require.EqualValues(t, 0, mustCount(t, db, "narrow"))
	require.EqualValues(t, 0, mustCount(t, db, "strict"))

	// Values that fit are converted: BIGINT to TINYINT, INT to DECIMAL,
	// a number to text as VALUES would.
	require.EqualValues(t, 5, affected(t)(db.Exec("INSERT INTO narrow (id, tiny, d, s) SELECT id, id, v, id FROM src")))
	require.Equal(t, []string{"1|1|10.0|1", "2|2|20.0|2", "3|3|30.0|3", "4|4|<nil>|4", "5|5|50.0|5"},
		txRows(t, db, "SELECT id, tiny, d, s FROM narrow"))
}

func TestInsertSelectInTransaction(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE dst (id BIGINT, grp STRING, v INT)")

	tx, err := db.Begin()
	require.NoError(t, err)
	require.EqualValues(t, 5, affected(t)(tx.Exec("INSERT INTO dst SELECT * FROM src")))
	require.EqualValues(t, 3, affected(t)(tx.Exec("INSERT INTO kv SELECT id + 100, grp, v FROM src WHERE grp <> 'b' ORDER BY id")))
	require.EqualValues(t, 0, mustCount(t, db, "dst"), "buffered until Commit")
	// The query reads the transaction's own buffered rows: dst's appends,
	// and kv's upserts read back by the statement that upserts them again.
	require.EqualValues(t, 2, affected(t)(tx.Exec("INSERT INTO kv SELECT id + 200, grp, v FROM dst WHERE v > 25")))
	require.EqualValues(t, 3, affected(t)(tx.Exec("INSERT INTO kv SELECT id, name, score + 1 FROM kv WHERE id BETWEEN 101 AND 199")))
	require.NoError(t, tx.Commit())
	require.EqualValues(t, 5, mustCount(t, db, "dst"))
	require.Equal(t, []string{"101|a|11", "102|a|21", "105|c|51", "1|ann|1", "203|b|30", "205|c|50", "2|bob|2", "3|cid|3"}, txRows(t, db, "SELECT * FROM kv"))

	tx, err = db.Begin()
	require.NoError(t, err)
	require.EqualValues(t, 5, affected(t)(tx.Exec("INSERT INTO dst SELECT * FROM src")))
	require.NoError(t, tx.Rollback())
	require.EqualValues(t, 5, mustCount(t, db, "dst"))

	// The view is the one taken at Begin: a commit of another connection
	// after it is not read.
	tx, err = db.Begin()
	require.NoError(t, err)
	mustExec(t, db, "INSERT INTO src VALUES (6, 'd', 60)")
	require.EqualValues(t, 5, affected(t)(tx.Exec("INSERT INTO dst SELECT * FROM src")))
	require.NoError(t, tx.Commit())
	require.EqualValues(t, 10, mustCount(t, db, "dst"))

	tx, err = db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO dst SELECT * FROM src")
	require.ErrorIs(t, err, fluss.ErrReadOnly)
	require.NoError(t, tx.Rollback())
}

func TestInsertSelectPlaceholders(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE dst (id BIGINT, tag STRING)")
	require.EqualValues(t, 2, affected(t)(db.Exec("INSERT INTO dst SELECT id, ? FROM src WHERE v > ?", "big", 25)))
	stmt, err := db.Prepare("INSERT INTO dst (tag, id) SELECT ?, id FROM src WHERE grp = ?")
	require.NoError(t, err)
	defer stmt.Close()
	require.EqualValues(t, 2, affected(t)(stmt.Exec("a", "a")))
	require.EqualValues(t, 1, affected(t)(stmt.Exec("c", "c")))
	require.Equal(t, []string{"1|a", "2|a", "3|big", "5|big", "5|c"}, txRows(t, db, "SELECT * FROM dst"))
	_, err = db.Exec("INSERT INTO dst SELECT id, ? FROM src WHERE v > ?", "x")
	require.ErrorContains(t, err, "statement has 2 placeholders but is given 1 argument")
}

func TestInsertSelectFromVirtualTables(t *testing.T) {
	db := openInsertSelectDB(t, "tiering=off")
	mustExec(t, db, "UPDATE kv SET score = 20 WHERE id = 2")
	mustExec(t, db, "CREATE TABLE audit (change STRING, id BIGINT, score INT)")
	n := affected(t)(db.Exec("INSERT INTO audit SELECT _change_type, id, score FROM `kv$changelog` WHERE id = 2"))
	require.EqualValues(t, 3, n)
	require.Equal(t, []string{"insert|2|2", "update_after|2|20", "update_before|2|2"}, txRows(t, db, "SELECT * FROM audit"))

	// information_schema is read like any SELECT of it.
	mustExec(t, db, "CREATE TABLE names (name STRING)")
	mustExec(t, db, "INSERT INTO names SELECT table_name FROM information_schema.tables WHERE table_schema = 'fluss'")
	require.Equal(t, []string{"audit", "kv", "names", "src"}, txRows(t, db, "SELECT * FROM names"))
	_, err := db.Exec("INSERT INTO information_schema.tables SELECT * FROM information_schema.tables")
	require.ErrorIs(t, err, fluss.ErrReadOnly)

	// The lake snapshot alone.
	mustExec(t, db, "CREATE TABLE ev (id BIGINT) WITH ('table.datalake.enabled' = 'true')")
	mustExec(t, db, "INSERT INTO ev VALUES (1), (2)")
	tier(t, db, "ev")
	mustExec(t, db, "INSERT INTO ev VALUES (3)")
	require.EqualValues(t, 2, affected(t)(db.Exec("INSERT INTO ev SELECT id + 10 FROM `ev$lake`")))
	require.Equal(t, []string{"1", "11", "12", "2", "3"}, txRows(t, db, "SELECT * FROM ev"))
}

func TestInsertSelectWithoutFrom(t *testing.T) {
	db := openInsertSelectDB(t)
	require.EqualValues(t, 1, affected(t)(db.Exec("INSERT INTO src SELECT 9, 'z', 1 + 1")))
	require.EqualValues(t, 0, affected(t)(db.Exec("INSERT INTO src SELECT 9, 'z', 1 WHERE 1 = 0")))
	require.EqualValues(t, 1, affected(t)(db.Exec("INSERT INTO src SELECT ?, NULL, NULL", 9)))
	require.Equal(t, []string{"9|<nil>|<nil>", "9|z|2"}, txRows(t, db, "SELECT * FROM src WHERE id = 9"))
}

func TestInsertSelectAutoIncrement(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE users (`id` bigint AUTO_INCREMENT, `name` varchar(64), PRIMARY KEY (`id`))")
	res, err := db.Exec("INSERT INTO users (name) SELECT grp FROM src ORDER BY id")
	require.NoError(t, err)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	require.EqualValues(t, 1, id, "the first generated value, as for VALUES")
	require.EqualValues(t, 5, affected(t)(res, nil))
	require.Equal(t, []string{"1|a", "2|a", "3|b", "4|b", "5|c"}, txRows(t, db, "SELECT * FROM users"))
	// A 0 key is generated and a given one moves the counter past it,
	// as in VALUES: the counter moves first.
	mustExec(t, db, "INSERT INTO users SELECT CASE WHEN id = 1 THEN 0 ELSE id + 10 END, grp FROM src WHERE id < 3")
	mustExec(t, db, "INSERT INTO users (name) SELECT 'next'")
	require.Equal(t, []string{"12|a", "13|a", "14|next", "1|a", "2|a", "3|b", "4|b", "5|c"}, txRows(t, db, "SELECT * FROM users"))
}

func TestInsertSelectMemoryLimit(t *testing.T) {
	db, dsn := openDB(t)
	mustExec(t, db, "CREATE TABLE big (s STRING)")
	mustExec(t, db, "INSERT INTO big VALUES (?)", strings.Repeat("x", 1000))
	for range 11 {
		mustExec(t, db, "INSERT INTO big SELECT * FROM big")
	}
	require.EqualValues(t, 2048, mustCount(t, db, "big"))

	small, err := sql.Open("fluss", dsn+"?memory.limit=1mb")
	require.NoError(t, err)
	defer small.Close()
	_, err = small.Exec("INSERT INTO big SELECT * FROM big")
	require.ErrorIs(t, err, fluss.ErrInvalid)
	require.ErrorContains(t, err, "memory.limit of 1MiB exceeded by INSERT ... SELECT")
	require.EqualValues(t, 2048, mustCount(t, db, "big"), "nothing written")
}

// TestInsertSelectRefusals: a query the engine cannot answer keeps its
// own error, and the statement writes nothing.
func TestInsertSelectRefusals(t *testing.T) {
	db := openInsertSelectDB(t)
	for q, want := range map[string]string{
		"INSERT INTO src SELECT * FROM src, kv":                         "INSERT has 3 target columns but the SELECT returns 6",
		"INSERT INTO src SELECT * FROM nope":                            "table fluss.nope does not exist",
		"INSERT INTO src SELECT id, grp, nope FROM src":                 "column nope does not exist",
		"INSERT INTO `src$changelog` SELECT * FROM src":                 "virtual tables are read-only",
		"INSERT INTO src SELECT /*+ OPTIONS('bogus'='1') */ * FROM src": "OPTIONS hint",
	} {
		_, err := db.Exec(q)
		require.ErrorContains(t, err, want, q)
	}
	require.EqualValues(t, 5, mustCount(t, db, "src"))
}

// INSERT ... WITH ... SELECT, as MySQL writes it: the WITH belongs to the
// query; a set operation after it or INTERSECT alone works as well.
func TestInsertWithSelect(t *testing.T) {
	db := openInsertSelectDB(t)
	mustExec(t, db, "CREATE TABLE dst (id BIGINT, v INT)")
	n := affected(t)(db.Exec("INSERT INTO dst (v, id) WITH big AS (SELECT id, v FROM src WHERE v > ?) SELECT v, id FROM big WHERE id < ?", 15, 5))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"2|20", "3|30"}, txRows(t, db, "SELECT * FROM dst"))
	n = affected(t)(db.Exec("INSERT INTO dst WITH k AS (SELECT id FROM kv) SELECT id, 0 FROM k INTERSECT SELECT id, 0 FROM src WHERE grp = ?", "a"))
	require.EqualValues(t, 2, n)
	n = affected(t)(db.Exec("INSERT INTO dst SELECT id, 1 FROM src EXCEPT SELECT id, 1 FROM kv"))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"1|0", "2|0", "2|20", "3|30", "4|1", "5|1"}, txRows(t, db, "SELECT * FROM dst"))
	_, err := db.Exec("WITH k AS (SELECT id FROM kv) INSERT INTO dst SELECT id, 0 FROM k")
	requireSentinel(t, err, fluss.ErrSyntax, "expected SELECT after WITH")
}
