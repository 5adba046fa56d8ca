package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeptLookupFollowsTheName: a connection keeps the point-lookup
// binding of a SELECT run through Query; when its table is dropped, its
// name becomes a view's, or a new table takes it, the statement answers as
// a fresh binding would.
func TestKeptLookupFollowsTheName(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'a')`)
	var v string
	require.NoError(t, db.QueryRow(`SELECT v FROM t WHERE id = ?`, 1).Scan(&v))
	mustExec(t, db, `DROP TABLE t`)
	mustExec(t, db, `CREATE TABLE u (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO u VALUES (1, 'b')`)
	mustExec(t, db, `CREATE VIEW t AS SELECT id, v FROM u`)
	require.NoError(t, db.QueryRow(`SELECT v FROM t WHERE id = ?`, 1).Scan(&v))
	require.Equal(t, "b", v)
	mustExec(t, db, `DROP VIEW t`)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, v STRING, x INT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'c', 5)`)
	require.NoError(t, db.QueryRow(`SELECT v FROM t WHERE id = ?`, 1).Scan(&v))
	require.Equal(t, "c", v)
}

// TestKeptLookupOwnWritesPrepared: a prepared point lookup in a
// transaction sees the transaction's own writes to its table.
func TestKeptLookupOwnWritesPrepared(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, `CREATE TABLE a (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO a VALUES (1, 10)`)
	var v int64
	tx, err := db.Begin()
	require.NoError(t, err)
	st, err := tx.Prepare(`SELECT v FROM a WHERE id = ?`)
	require.NoError(t, err)
	require.NoError(t, st.QueryRow(1).Scan(&v))
	_, err = tx.Exec(`UPDATE a SET v = 11 WHERE id = 1`)
	require.NoError(t, err)
	require.NoError(t, st.QueryRow(1).Scan(&v))
	require.Equal(t, int64(11), v, "own write, prepared")
	require.NoError(t, tx.Rollback())
}

// TestKeptLookupOwnWrites: the same for a SELECT run through Query,
// whose binding the connection kept from before the transaction.
func TestKeptLookupOwnWrites(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, `CREATE TABLE a (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO a VALUES (1, 10)`)
	var v int64
	require.NoError(t, db.QueryRow(`SELECT v FROM a WHERE id = ?`, 1).Scan(&v))
	require.NoError(t, db.QueryRow(`SELECT v FROM a WHERE id = ?`, 1).Scan(&v))
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`UPDATE a SET v = 11 WHERE id = 1`)
	require.NoError(t, err)
	require.NoError(t, tx.QueryRow(`SELECT v FROM a WHERE id = ?`, 1).Scan(&v))
	require.Equal(t, int64(11), v, "own write")
	require.NoError(t, tx.Rollback())
	require.NoError(t, db.QueryRow(`SELECT v FROM a WHERE id = ?`, 1).Scan(&v))
	require.Equal(t, int64(10), v, "rolled back")
}
