package fluss_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// requireConflict checks that err is a commit's ErrConflict with its own
// code.
func requireConflict(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, fluss.ErrConflict)
	var fe *fluss.Error
	require.True(t, errors.As(err, &fe))
	_, top := err.(*fluss.Error)
	require.True(t, top, "a *fluss.Error itself: %T", err)
	require.Equal(t, fluss.CodeConflict, fe.Code)
	require.Equal(t, "conflict", fe.Code.String())
}

// TestTxConflictFirstCommitterWins: two transactions update one key; the
// second Commit fails with ErrConflict and none of it (also its write of
// another key) is applied; transactions of disjoint keys both commit.
func TestTxConflictFirstCommitterWins(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=3")
	mustExec(t, db, `CREATE TABLE kv (k INT, n INT, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 10), (2, 20), (3, 30)`)
	t1, err := db.Begin()
	require.NoError(t, err)
	t2, err := db.Begin()
	require.NoError(t, err)
	t3, err := db.Begin()
	require.NoError(t, err)
	require.EqualValues(t, 1, affected(t)(t1.Exec(`UPDATE kv SET n = n + 1 WHERE k = 1`)))
	require.EqualValues(t, 1, affected(t)(t2.Exec(`UPDATE kv SET n = n + 2 WHERE k = 1`)))
	require.EqualValues(t, 1, affected(t)(t2.Exec(`INSERT INTO kv VALUES (4, 40)`)))
	require.EqualValues(t, 1, affected(t)(t3.Exec(`DELETE FROM kv WHERE k = 2`)))
	require.NoError(t, t1.Commit())
	requireConflict(t, t2.Commit())
	require.NoError(t, t3.Commit(), "disjoint keys")
	require.Equal(t, []string{"1|11", "3|30"}, txRows(t, db, `SELECT k, n FROM kv`))

	// After a conflict the transaction is over, and a retry commits.
	require.ErrorIs(t, t2.Rollback(), sql.ErrTxDone)
	t2, err = db.Begin()
	require.NoError(t, err)
	require.EqualValues(t, 1, affected(t)(t2.Exec(`UPDATE kv SET n = n + 2 WHERE k = 1`)))
	require.NoError(t, t2.Commit())
	require.Equal(t, []string{"1|13", "3|30"}, txRows(t, db, `SELECT k, n FROM kv`))
}

// TestTxConflictAutocommitAndDelete: an autocommit statement writing the
// key after Begin wins; a delete and an update of one key conflict; a log
// table's appends never do; a transaction that wrote nothing commits.
func TestTxConflictAutocommitAndDelete(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, n INT, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `CREATE TABLE lt (n INT)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 10), (2, 20)`)

	tx, err := db.Begin()
	require.NoError(t, err)
	mustExec(t, db, `UPDATE kv SET n = 99 WHERE k = 1`)
	require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM kv WHERE k = 1`)))
	requireConflict(t, tx.Commit())

	tx, err = db.Begin()
	require.NoError(t, err)
	mustExec(t, db, `DELETE FROM kv WHERE k = 2`)
	_, err = tx.Exec(`INSERT INTO kv VALUES (2, 21)`)
	require.NoError(t, err)
	requireConflict(t, tx.Commit())
	require.Equal(t, []string{"1|99"}, txRows(t, db, `SELECT k, n FROM kv`))

	a, err := db.Begin()
	require.NoError(t, err)
	b, err := db.Begin()
	require.NoError(t, err)
	ro, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	idle, err := db.Begin()
	require.NoError(t, err)
	require.Equal(t, []string{"1|99"}, txRows(t, ro, `SELECT k, n FROM kv`))
	require.Equal(t, []string{"1|99"}, txRows(t, idle, `SELECT k, n FROM kv`))
	for _, tx := range []*sql.Tx{a, b} {
		_, err = tx.Exec(`INSERT INTO lt VALUES (1)`)
		require.NoError(t, err)
	}
	mustExec(t, db, `INSERT INTO lt VALUES (2)`)
	mustExec(t, db, `UPDATE kv SET n = 100 WHERE k = 1`)
	require.NoError(t, a.Commit())
	require.NoError(t, b.Commit(), "log appends never conflict")
	require.NoError(t, ro.Commit(), "a read-only transaction never conflicts")
	require.NoError(t, idle.Commit(), "a transaction that wrote nothing never conflicts")
	require.Equal(t, []string{"1", "1", "2"}, txRows(t, db, `SELECT n FROM lt`))
}

// TestTxConflictPartitions: one key value in two partitions is two keys.
func TestTxConflictPartitions(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE p (k INT, dt STRING, n INT, PRIMARY KEY (k, dt) NOT ENFORCED) PARTITIONED BY (dt)`)
	mustExec(t, db, `INSERT INTO p VALUES (1, 'a', 0), (1, 'b', 0)`)
	t1, err := db.Begin()
	require.NoError(t, err)
	t2, err := db.Begin()
	require.NoError(t, err)
	_, err = t1.Exec(`UPDATE p SET n = 1 WHERE k = 1 AND dt = 'a'`)
	require.NoError(t, err)
	_, err = t2.Exec(`UPDATE p SET n = 2 WHERE k = 1 AND dt = 'b'`)
	require.NoError(t, err)
	require.NoError(t, t1.Commit())
	require.NoError(t, t2.Commit())
	require.Equal(t, []string{"1|a|1", "1|b|2"}, txRows(t, db, `SELECT k, dt, n FROM p`))
}

// TestTxForUpdate: the keys a locking SELECT returns join the conflict
// check in each spelling; a log table in it adds nothing; outside a
// transaction it is a plain read; what it cannot lock is refused.
func TestTxForUpdate(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE acct (id INT, bal INT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `CREATE TABLE audit (id INT, note STRING)`)
	mustExec(t, db, `CREATE TABLE other (k INT, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acct VALUES (1, 100), (2, 200), (3, 300)`)
	mustExec(t, db, `INSERT INTO audit VALUES (1, 'x')`)

	for _, clause := range []string{"FOR UPDATE", "FOR SHARE", "LOCK IN SHARE MODE"} {
		t.Run(clause, func(t *testing.T) {
			tx, err := db.Begin()
			require.NoError(t, err)
			require.Equal(t, []string{"1"}, txRows(t, tx, `SELECT id FROM acct WHERE id = ? `+clause, 1))
			mustExec(t, db, `UPDATE acct SET bal = bal + 1 WHERE id = 1`)
			_, err = tx.Exec(`INSERT INTO other VALUES (1)`)
			require.NoError(t, err)
			requireConflict(t, tx.Commit())
			require.Empty(t, txRows(t, db, `SELECT k FROM other`), "nothing of the losing transaction")
		})
	}

	// Rows the query does not return are not locked (here: filtered by
	// WHERE), and a key another commit wrote before Begin does not count.
	tx, err := db.Begin()
	require.NoError(t, err)
	require.Equal(t, []string{"2"}, txRows(t, tx, `SELECT id FROM acct WHERE bal = 200 FOR UPDATE`))
	mustExec(t, db, `UPDATE acct SET bal = 301 WHERE id = 3`)
	require.NoError(t, tx.Commit())

	// A join locks the key table's rows that join, not the log table's.
	tx, err = db.Begin()
	require.NoError(t, err)
	require.Equal(t, []string{"1|x"}, txRows(t, tx, `SELECT a.id, u.note FROM acct a JOIN audit u ON a.id = u.id FOR UPDATE`))
	mustExec(t, db, `INSERT INTO audit VALUES (1, 'y')`)
	mustExec(t, db, `UPDATE acct SET bal = 2 WHERE id = 2`)
	require.NoError(t, tx.Commit(), "neither an append nor a key outside the join's rows conflicts")
	tx, err = db.Begin()
	require.NoError(t, err)
	require.Len(t, txRows(t, tx, `SELECT a.id FROM acct a JOIN audit u ON a.id = u.id FOR UPDATE`), 2)
	mustExec(t, db, `DELETE FROM acct WHERE id = 1`)
	requireConflict(t, tx.Commit())

	// A prepared point lookup FOR UPDATE: its first run binds it in full,
	// later ones go through the kept lookup; each locks the key it found.
	tx, err = db.Begin()
	require.NoError(t, err)
	st, err := tx.Prepare(`SELECT bal FROM acct WHERE id = ? FOR UPDATE`)
	require.NoError(t, err)
	for _, id := range []int{2, 3} {
		var bal int64
		require.NoError(t, st.QueryRow(id).Scan(&bal))
	}
	require.NoError(t, st.Close())
	mustExec(t, db, `UPDATE acct SET bal = 302 WHERE id = 3`)
	requireConflict(t, tx.Commit())

	// Outside a transaction, and in a read-only one: a plain read.
	require.Equal(t, []string{"2"}, txRows(t, db, `SELECT bal FROM acct WHERE id = 2 FOR UPDATE`))
	ro, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	require.Equal(t, []string{"2"}, txRows(t, ro, `SELECT bal FROM acct WHERE id = 2 FOR UPDATE`))
	mustExec(t, db, `UPDATE acct SET bal = 3 WHERE id = 2`)
	require.NoError(t, ro.Commit())

	tx, err = db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	for q, msg := range map[string]string{
		`SELECT id FROM (SELECT id FROM acct) d FOR UPDATE`:                "derived table",
		`SELECT id FROM acct UNION SELECT k FROM other FOR UPDATE`:         "set operation",
		`SELECT id FROM acct WHERE id IN (SELECT k FROM other FOR UPDATE)`: "inside a query",
		`WITH c AS (SELECT id FROM acct) SELECT id FROM c FOR UPDATE`:      "common table expression",
	} {
		_, err := tx.Query(q)
		require.ErrorIs(t, err, fluss.ErrUnsupported, q)
		require.ErrorContains(t, err, msg, q)
	}
}

// TestTxSavepoints: SAVEPOINT, ROLLBACK TO [SAVEPOINT] and RELEASE
// SAVEPOINT as MySQL runs them: rolling back drops the writes, the FOR
// UPDATE keys and the row counts after the savepoint, keeps it and drops
// the later ones; a name in use moves; outside a transaction ROLLBACK TO
// and RELEASE find no savepoint.
func TestTxSavepoints(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `CREATE TABLE lt (n INT)`)
	mustExec(t, db, `INSERT INTO kv VALUES (9, 'nine')`)

	_, err := db.Exec(`SAVEPOINT s`)
	require.NoError(t, err, "outside a transaction SAVEPOINT does nothing")
	for _, q := range []string{`ROLLBACK TO SAVEPOINT s`, `ROLLBACK TO s`, `RELEASE SAVEPOINT s`} {
		_, err = db.Exec(q)
		require.ErrorIs(t, err, fluss.ErrNotFound, q)
		require.ErrorContains(t, err, "SAVEPOINT s does not exist", q)
	}

	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO kv VALUES (1, 'a')`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO lt VALUES (1)`)
	require.NoError(t, err)
	_, err = tx.Exec(`SAVEPOINT s1`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO lt VALUES (2)`) // merges with the append before s1
	require.NoError(t, err)
	require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO kv VALUES (2, 'b')`)))
	require.Equal(t, []string{"nine"}, txRows(t, tx, `SELECT v FROM kv WHERE k = 9 FOR UPDATE`))
	_, err = tx.Exec(`savepoint S2`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO kv VALUES (3, 'c')`)
	require.NoError(t, err)
	require.Equal(t, []string{"1|a", "2|b", "3|c", "9|nine"}, txRows(t, tx, `SELECT k, v FROM kv`))
	_, err = tx.Exec(`ROLLBACK WORK TO SAVEPOINT s1`)
	require.NoError(t, err)
	// The transaction's reads no longer see what it rolled back.
	require.Equal(t, []string{"1|a", "9|nine"}, txRows(t, tx, `SELECT k, v FROM kv`))
	require.Equal(t, []string{"1"}, txRows(t, tx, `SELECT n FROM lt`))
	_, err = tx.Exec(`RELEASE SAVEPOINT s2`)
	require.ErrorIs(t, err, fluss.ErrNotFound, "s2 came after s1: gone")
	require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO kv VALUES (2, 'b')`)), "key 2 is new again")
	_, err = tx.Exec(`ROLLBACK TO s1`)
	require.NoError(t, err, "s1 stays after a rollback to it, and the failed RELEASE after it is undone")
	// The key read FOR UPDATE after s1 no longer counts.
	mustExec(t, db, `UPDATE kv SET v = 'NINE' WHERE k = 9`)
	// A name in use moves: rolling back to s1 now keeps row 4.
	_, err = tx.Exec(`INSERT INTO kv VALUES (4, 'd')`)
	require.NoError(t, err)
	_, err = tx.Exec(`SAVEPOINT s1`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO kv VALUES (5, 'e')`)
	require.NoError(t, err)
	_, err = tx.Exec(`ROLLBACK TO SAVEPOINT s1`)
	require.NoError(t, err)
	_, err = tx.Exec(`RELEASE SAVEPOINT s1`)
	require.NoError(t, err)
	_, err = tx.Exec(`SAVEPOINT s3`)
	require.NoError(t, err)
	_, err = tx.Exec(`ROLLBACK TO SAVEPOINT s1`)
	require.ErrorIs(t, err, fluss.ErrNotFound, "released")
	// The failed statement is behind s3: rolled back to it, the
	// transaction may commit.
	_, err = tx.Exec(`ROLLBACK TO SAVEPOINT s3`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"1|a", "4|d", "9|NINE"}, txRows(t, db, `SELECT k, v FROM kv`))
	require.Equal(t, []string{"1"}, txRows(t, db, `SELECT n FROM lt`))
}

// TestTxErrorCommitsNothing: a transaction whose statement failed (a
// syntax error, as SAVEPOINT was before it parsed) and that database/sql
// then rolls back commits nothing; a connection returned to the pool
// with a transaction database/sql no longer knows of rolls it back
// rather than let the next user's statements join it.
func TestTxErrorCommitsNothing(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, PRIMARY KEY (k) NOT ENFORCED)`)
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO kv VALUES (1)`)
	require.NoError(t, err)
	_, err = tx.Exec(`SAVEPOINTX sp1`)
	require.ErrorIs(t, err, fluss.ErrSyntax)
	require.NoError(t, tx.Rollback())
	require.Empty(t, txRows(t, db, `SELECT k FROM kv`))

	// An ORM that keeps a statement's error on the side and commits
	// anyway (GORM's Transaction when the function returns nil after a
	// failed nested one): the Commit fails and nothing is committed.
	for _, failing := range []func(tx *sql.Tx) error{
		func(tx *sql.Tx) error { _, err := tx.Exec(`SAVEPOINTX sp1`); return err },
		func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO kv VALUES (NULL)`); return err },
		func(tx *sql.Tx) error { _, err := tx.Query(`SELECT nope FROM kv`); return err },
		func(tx *sql.Tx) error { _, err := tx.Prepare(`SELEC 1`); return err },
		func(tx *sql.Tx) error { _, err := tx.Exec(`ROLLBACK TO SAVEPOINT nope`); return err },
	} {
		tx, err := db.Begin()
		require.NoError(t, err)
		_, err = tx.Exec(`INSERT INTO kv VALUES (1)`)
		require.NoError(t, err)
		require.Error(t, failing(tx))
		_, err = tx.Exec(`INSERT INTO kv VALUES (2)`)
		require.NoError(t, err, "statements still run, as in MySQL")
		err = tx.Commit()
		require.Error(t, err)
		require.ErrorContains(t, err, "nothing was committed")
		fe, ok := err.(*fluss.Error)
		require.True(t, ok, "a *fluss.Error: %T", err)
		require.NotEqual(t, fluss.CodeInternal, fe.Code, "the failure's own code")
		require.Empty(t, txRows(t, db, `SELECT k FROM kv`))
	}

	// The driver connection itself: ResetSession, which database/sql
	// calls before reusing a connection, ends a transaction left open.
	c, err := fluss.NewConnector(t.TempDir())
	require.NoError(t, err)
	defer c.Close()
	dc, err := c.Connect(context.Background())
	require.NoError(t, err)
	defer dc.Close()
	conn := dc.(*fluss.Conn)
	_, err = conn.ExecContext(context.Background(), `CREATE TABLE kv (k INT, PRIMARY KEY (k) NOT ENFORCED)`, nil)
	require.NoError(t, err)
	_, err = conn.BeginTx(context.Background(), driver.TxOptions{})
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), `INSERT INTO kv VALUES (1)`, nil)
	require.NoError(t, err)
	require.NoError(t, conn.ResetSession(context.Background()))
	_, err = conn.ExecContext(context.Background(), `INSERT INTO kv VALUES (2)`, nil)
	require.NoError(t, err, "runs on its own, not in the forgotten transaction")
	cdb := sql.OpenDB(c)
	defer cdb.Close()
	require.Equal(t, []string{"2"}, txRows(t, cdb, `SELECT k FROM kv`))
}
