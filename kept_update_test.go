package fluss_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// The UPDATE of one row by its key with placeholders in SET keeps its
// binding on the connection (query.Kept). These tests run each statement
// after the connection has kept it, and check the answer a fresh binding
// gives.

// TestKeptUpdateAgreesWithBinding: values, conversions, a missing key, a
// key out of the column's range, and the errors of NULL into a NOT NULL
// column, of a value that does not convert and of the wrong number of
// arguments are what a fresh binding gives, on a connection that kept
// the statement.
func TestKeptUpdateAgreesWithBinding(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	mustExec(t, db, `CREATE TABLE acct (id INT, balance BIGINT NOT NULL, note STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acct VALUES (1, 100, 'a'), (2, 200, 'b')`)
	const upd = `UPDATE acct SET balance = ?, note = 'kept' WHERE id = ?`
	// kept runs every statement (and keeps the binding); fresh, held at
	// the same time so that it is another connection, binds in full.
	kept, err := db.Conn(ctx)
	require.NoError(t, err)
	defer kept.Close()
	fresh, err := db.Conn(ctx)
	require.NoError(t, err)
	defer fresh.Close()
	affected := func(args ...any) int64 {
		t.Helper()
		res, err := kept.ExecContext(ctx, upd, args...)
		require.NoError(t, err)
		n, err := res.RowsAffected()
		require.NoError(t, err)
		return n
	}
	require.Equal(t, int64(1), affected(150, 1), "the binding that is kept")
	require.Equal(t, int64(1), affected("250", 2), "a string converted as a fresh binding converts it")
	require.Equal(t, int64(0), affected(1, 3), "no such key")
	require.Equal(t, int64(0), affected(1, int64(1)<<40), "a key no INT holds")
	for _, bad := range [][]any{{nil, 1}, {"x", 1}, {1}, {1, 2, 3}} {
		_, errKept := kept.ExecContext(ctx, upd, bad...)
		_, errFresh := fresh.ExecContext(ctx, upd, bad...)
		require.Error(t, errFresh, "%v", bad)
		require.EqualError(t, errKept, errFresh.Error(), "%v", bad)
	}
	require.Equal(t, []string{"1|150|kept", "2|250|kept"}, txRows(t, db, `SELECT id, balance, note FROM acct`))
}

// TestKeptUpdateFollowsTheTable: when the table is dropped and created
// again with its columns elsewhere, the kept UPDATE writes the columns the
// new table has under those names.
func TestKeptUpdateFollowsTheTable(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	const upd = `UPDATE acct SET balance = ? WHERE id = ?`
	mustExec(t, db, `CREATE TABLE acct (id BIGINT, balance BIGINT, note STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acct VALUES (1, 100, 'a')`)
	mustExec(t, db, upd, 5, 1)
	mustExec(t, db, upd, 6, 1)
	mustExec(t, db, `DROP TABLE acct`)
	mustExec(t, db, `CREATE TABLE acct (id BIGINT, note STRING, balance BIGINT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acct VALUES (1, 'a', 100)`)
	mustExec(t, db, upd, 7, 1)
	var note string
	var balance int64
	require.NoError(t, db.QueryRow(`SELECT note, balance FROM acct WHERE id = 1`).Scan(&note, &balance))
	require.Equal(t, "a", note)
	require.Equal(t, int64(7), balance)
}

// TestKeptUpdateOwnWrites: in a transaction the kept UPDATE reads the
// row as the transaction sees it, its own writes over its view, and a
// rollback undoes it.
func TestKeptUpdateOwnWrites(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	const upd = `UPDATE acct SET balance = ? WHERE id = ?`
	mustExec(t, db, `CREATE TABLE acct (id BIGINT, balance BIGINT, note STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acct VALUES (1, 100, 'a')`)
	mustExec(t, db, upd, 101, 1) // kept from here
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO acct VALUES (2, 1, 'new')`)
	require.NoError(t, err)
	for _, k := range []int64{1, 2} {
		res, err := tx.Exec(upd, 500+k, k)
		require.NoError(t, err)
		n, err := res.RowsAffected()
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "key %d", k)
	}
	_, err = tx.Exec(`DELETE FROM acct WHERE id = 1`)
	require.NoError(t, err)
	res, err := tx.Exec(upd, 9, 1)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "deleted by the transaction")
	require.Equal(t, []string{"2|502|new"}, txRows(t, tx, `SELECT id, balance, note FROM acct`))
	require.NoError(t, tx.Rollback())
	var balance int64
	require.NoError(t, db.QueryRow(`SELECT balance FROM acct WHERE id = 1`).Scan(&balance))
	require.Equal(t, int64(101), balance)
	require.ErrorIs(t, db.QueryRow(`SELECT balance FROM acct WHERE id = 2`).Scan(&balance), sql.ErrNoRows)
}
