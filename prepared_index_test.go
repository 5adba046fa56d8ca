package fluss

import (
	"database/sql/driver"
	"testing"

	"github.com/stretchr/testify/require"
)

// A prepared lookup by all columns of a UNIQUE index keeps its binding and
// gives what a fresh binding gives: NULL and missing values, deleted and
// updated rows, a transaction that wrote the table, a dropped index, a
// table created again.
func TestPreparedIndexLookupAgreesWithBinding(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec(`CREATE TABLE ux (id BIGINT, email STRING, v DOUBLE, a INT, b STRING, PRIMARY KEY (id) NOT ENFORCED,
		UNIQUE KEY ux_email (email), UNIQUE KEY ux_ab (a, b)) WITH ('bucket.num' = '3')`)
	e.exec(`INSERT INTO ux VALUES (1, 'a@x', 1.5, 1, 'p'), (2, 'b@x', 2.5, 1, 'q'), (3, NULL, 3.5, NULL, 'r')`)
	st := e.prepare(`SELECT v, id FROM ux WHERE email = ?`)
	require.Contains(t, e.warmAndFresh(st, "a@x"), "1.5")
	require.NotNil(t, st.prepLookup.tmpl, "the unique-index lookup keeps its binding")
	require.NotNil(t, st.prepLookup.tmpl.Index())
	for _, a := range []any{"b@x", "none", nil, 1, "", "A@X", int64(2), "a@x\xff", []byte("a@x")} {
		e.warmAndFresh(st, a)
	}
	require.NotContains(t, e.warmAndFresh(st, nil), "3.5", "NULL = NULL finds no row")
	require.NotContains(t, e.warmAndFresh(st, "none"), "@")

	two := e.prepare(`SELECT id FROM ux WHERE b = ? AND a = ?`)
	require.Contains(t, e.warmAndFresh(two, "q", 1), "2")
	require.NotNil(t, two.prepLookup.tmpl)
	for _, a := range [][]any{{"p", 1}, {"r", nil}, {"p", 2}, {"p", "1"}} {
		e.warmAndFresh(two, a...)
	}
	// Not the shape: bound in full every time.
	for _, q := range []string{`SELECT v FROM ux WHERE a = ?`, `SELECT v FROM ux WHERE email = ? AND v > 0`, `SELECT v + 1 FROM ux WHERE email = ?`} {
		other := e.prepare(q)
		e.warmAndFresh(other, "a@x")
		require.False(t, other.prepLookup != nil && other.prepLookup.tmpl != nil, q)
	}

	// An updated indexed value and a deleted row.
	e.exec(`UPDATE ux SET email = 'c@x' WHERE id = 1`)
	require.NotContains(t, e.warmAndFresh(st, "a@x"), "1.5")
	require.Contains(t, e.warmAndFresh(st, "c@x"), "1.5")
	e.exec(`DELETE FROM ux WHERE id = 2`)
	require.NotContains(t, e.warmAndFresh(st, "b@x"), "2.5")

	// A transaction reads its own writes and its view.
	tx, err := e.conn.BeginTx(e.ctx, driver.TxOptions{})
	require.NoError(t, err)
	require.Contains(t, e.warmAndFresh(st, "c@x"), "1.5")
	other, err := e.ctr.Connect(e.ctx)
	require.NoError(t, err)
	defer other.Close()
	_, err = other.(*Conn).ExecContext(e.ctx, `INSERT INTO ux VALUES (4, 'd@x', 4.5, 4, 'd')`, nil)
	require.NoError(t, err)
	require.NotContains(t, e.warmAndFresh(st, "d@x"), "4.5", "the view is from before the other write")
	e.exec(`UPDATE ux SET email = 'e@x' WHERE id = 1`)
	require.Contains(t, e.warmAndFresh(st, "e@x"), "1.5", "the transaction's own write")
	require.NotContains(t, e.warmAndFresh(st, "c@x"), "1.5")
	require.NoError(t, tx.Rollback())
	require.Contains(t, e.warmAndFresh(st, "c@x"), "1.5")
	require.Contains(t, e.warmAndFresh(st, "d@x"), "4.5")

	// A dropped index: the statement still answers, by a scan.
	e.exec(`DROP INDEX ux_email ON ux`)
	require.Contains(t, e.warmAndFresh(st, "c@x"), "1.5")
	require.False(t, st.prepLookup != nil && st.prepLookup.tmpl != nil, "no kept lookup by a dropped index")
	e.exec(`CREATE UNIQUE INDEX ux_email ON ux (email)`)
	require.Contains(t, e.warmAndFresh(st, "d@x"), "4.5")
	// The name given to an index of another column: a lookup of b's
	// values would find nothing (d@x is no b).
	e.exec(`DROP INDEX ux_email ON ux`)
	e.exec(`CREATE UNIQUE INDEX ux_email ON ux (b)`)
	require.Contains(t, e.warmAndFresh(st, "d@x"), "4.5")
	require.NotContains(t, e.warmAndFresh(st, "d"), "4.5")
	e.exec(`DROP INDEX ux_email ON ux`)
	e.exec(`CREATE UNIQUE INDEX ux_email ON ux (email)`)

	// A table created again with other columns and rows.
	e.exec(`DROP TABLE ux`)
	require.Contains(t, e.warmAndFresh(st, "c@x"), "does not exist")
	e.exec(`CREATE TABLE ux (email STRING, id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED, UNIQUE KEY ux_email (email))`)
	e.exec(`INSERT INTO ux VALUES ('c@x', 9, 'new')`)
	require.Contains(t, e.warmAndFresh(st, "c@x"), `"new"`)
	require.NotNil(t, st.prepLookup.tmpl)
}
