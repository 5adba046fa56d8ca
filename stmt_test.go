package fluss_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
	"github.com/flusslite/fluss/metadata"
)

// An argument no placeholder takes, or a placeholder no argument fills, is
// a mistake in the caller's code (a stale argument list, a placeholder
// lost in an edit); ignoring it would run a different query from the one
// meant. Every path refuses it, naming
// both counts: the connection's direct Query and Exec (which database/sql
// does not check, as the driver parses the text itself), a driver Stmt,
// named arguments and QueryArrow.
func TestArgumentCountMatchesPlaceholders(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT, v STRING)")
	mustExec(t, db, "CREATE TABLE k (id INT PRIMARY KEY, v STRING)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 'a')")
	mustExec(t, db, "INSERT INTO k VALUES (1, 'a')")

	refused := func(t *testing.T, err error, placeholders, args string) {
		t.Helper()
		require.Error(t, err)
		require.True(t, errors.Is(err, metadata.ErrInvalidValue), "%v", err)
		require.Contains(t, err.Error(), placeholders)
		require.Contains(t, err.Error(), args)
	}
	query := func(q string, args ...any) error {
		rows, err := db.Query(q, args...)
		if err == nil {
			rows.Close()
		}
		return err
	}
	exec := func(q string, args ...any) error {
		_, err := db.Exec(q, args...)
		return err
	}

	refused(t, query("SELECT * FROM t WHERE id = ?", 1, 2), "1 placeholder", "2 arguments")
	refused(t, query("SELECT * FROM t", 1), "0 placeholders", "1 argument")
	refused(t, query("SELECT * FROM k WHERE id = ?", 1, 2), "1 placeholder", "2 arguments")
	refused(t, query("SELECT * FROM t WHERE id = $1", 1, 2), "1 placeholder", "2 arguments")
	refused(t, query("SELECT * FROM t WHERE id = :a", sql.Named("a", 1), sql.Named("b", 2)), "1 placeholder", "2 arguments")
	refused(t, exec("INSERT INTO t VALUES (?, 'b')", 2, 3), "1 placeholder", "2 arguments")
	refused(t, exec("INSERT INTO k VALUES (?, ?)", 2, "b", 3), "2 placeholders", "3 arguments")
	refused(t, exec("UPDATE k SET v = ? WHERE id = ?", "c", 1, 9), "2 placeholders", "3 arguments")
	refused(t, exec("DELETE FROM k WHERE id = ?", 1, 2), "1 placeholder", "2 arguments")
	refused(t, exec("CREATE TABLE u (id INT)", 1), "0 placeholders", "1 argument")
	// Fewer arguments than placeholders name both counts too.
	refused(t, query("SELECT * FROM t WHERE id = ? AND v = ?", 1), "2 placeholders", "1 argument")
	refused(t, query("SELECT * FROM t WHERE id = :a AND v = :b", sql.Named("a", 1)), "2 placeholders", "1 argument")
	refused(t, exec("INSERT INTO k VALUES (?, ?)", 2), "2 placeholders", "1 argument")
	refused(t, exec("UPDATE k SET v = ? WHERE id = ?", "c"), "2 placeholders", "1 argument")
	refused(t, exec("DELETE FROM k WHERE id = ?"), "1 placeholder", "0 arguments")

	// The exact count keeps working, and nothing above was written.
	require.Equal(t, [][]any{{int64(1), "a"}}, queryAll(t, db, "SELECT * FROM t WHERE id = ?", 1))
	require.Equal(t, [][]any{{int64(1), "a"}}, queryAll(t, db, "SELECT * FROM k"))
	require.Equal(t, [][]any{{int64(1), "a"}}, queryAll(t, db, "SELECT * FROM t WHERE id = :a", sql.Named("a", 1)))
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM t").Scan(&n))
	require.Equal(t, 1, n)
	_, err := db.Exec("CREATE TABLE u (id INT)")
	require.NoError(t, err)

	// A statement prepared through database/sql is checked by database/sql
	// from NumInput; the driver's Stmt refuses on its own for callers that
	// use it directly.
	ps, err := db.Prepare("SELECT * FROM t WHERE id = ?")
	require.NoError(t, err)
	defer ps.Close()
	_, err = ps.Query(1, 2)
	require.ErrorContains(t, err, "expected 1 arguments, got 2")

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Raw(func(dc any) error {
		st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, "SELECT * FROM t WHERE id = ?")
		require.NoError(t, err)
		defer st.Close()
		_, err = st.(driver.StmtQueryContext).QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: int64(1)}, {Ordinal: 2, Value: int64(2)}})
		refused(t, err, "1 placeholder", "2 arguments")
		_, err = st.(driver.StmtExecContext).ExecContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: int64(1)}, {Ordinal: 2, Value: int64(2)}})
		refused(t, err, "1 placeholder", "2 arguments")
		return nil
	}))

	_, err = fluss.QueryArrow(ctx, conn, "SELECT * FROM t WHERE id = ?", 1, 2)
	refused(t, err, "1 placeholder", "2 arguments")
}
