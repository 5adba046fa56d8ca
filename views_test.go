package fluss_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// openViewDB opens a database with a log table src and a view of it.
func openViewDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	db, dsn := openDB(t)
	mustExec(t, db, "CREATE TABLE src (id BIGINT, grp STRING, v INT) WITH ('bucket.num' = '2')")
	mustExec(t, db, "INSERT INTO src VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 30), (4, 'b', NULL)")
	mustExec(t, db, "CREATE VIEW big (id, val) AS SELECT id, v FROM src WHERE v > 15")
	return db, dsn
}

func requireSentinel(t *testing.T, err error, sentinel error, contains string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, sentinel, err.Error())
	require.Contains(t, err.Error(), contains)
}

func TestViewCatalogStatements(t *testing.T) {
	db, dsn := openViewDB(t)
	mustExec(t, db, "CREATE VIEW grps AS SELECT grp, COUNT(*) AS n FROM src GROUP BY grp")

	require.Equal(t, []string{"big", "grps", "src"}, txRows(t, db, "SHOW TABLES"))
	require.Equal(t, []string{"def|fluss|big|VIEW", "def|fluss|grps|VIEW", "def|fluss|src|BASE TABLE"},
		txRows(t, db, "SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema = 'fluss'"))
	require.Equal(t, []string{
		"fluss|big|SELECT id, v FROM src WHERE v > 15|NONE|NO",
		"fluss|grps|SELECT grp, COUNT(*) AS n FROM src GROUP BY grp|NONE|NO",
	}, txRows(t, db, "SELECT table_schema, table_name, view_definition, check_option, is_updatable FROM information_schema.views"))
	// A view's columns are listed with the types its query gives them.
	require.Equal(t, []string{"big|id|1|bigint|YES", "big|val|2|int|YES", "grps|grp|1|longtext|YES", "grps|n|2|bigint|NO"},
		txRows(t, db, "SELECT table_name, column_name, ordinal_position, column_type, is_nullable FROM information_schema.columns WHERE table_name IN ('big', 'grps')"))

	require.Equal(t, []string{"id|BIGINT|true||<nil>|<nil>", "val|INT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE big"))
	for _, q := range []string{"SHOW CREATE VIEW big", "SHOW CREATE TABLE big"} {
		var name, stmt string
		require.NoError(t, db.QueryRow(q).Scan(&name, &stmt), q)
		require.Equal(t, "big", name)
		require.Equal(t, "CREATE VIEW fluss.big (id, val) AS SELECT id, v FROM src WHERE v > 15", stmt)
	}
	_, err := db.Query("SHOW CREATE VIEW src")
	requireSentinel(t, err, fluss.ErrUnsupported, "fluss.src is a table, not a view")

	// Views and tables share one namespace.
	_, err = db.Exec("CREATE VIEW src AS SELECT 1")
	requireSentinel(t, err, fluss.ErrExists, "a table of that name exists")
	_, err = db.Exec("CREATE TABLE big (a INT)")
	requireSentinel(t, err, fluss.ErrExists, "a view of that name exists")
	_, err = db.Exec("CREATE VIEW big AS SELECT 1")
	requireSentinel(t, err, fluss.ErrExists, "view fluss.big")
	mustExec(t, db, "CREATE VIEW IF NOT EXISTS big AS SELECT 1")
	require.Equal(t, []string{"id|BIGINT|true||<nil>|<nil>", "val|INT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE big"), "IF NOT EXISTS keeps the view")

	// Statements for tables refuse a view, and DROP VIEW refuses a table.
	for _, q := range []string{
		"DROP TABLE big", "DROP TABLE IF EXISTS big", "INSERT INTO big VALUES (1, 2)", "INSERT INTO big SELECT id, v FROM src",
		"UPDATE big SET val = 1", "DELETE FROM big", "SHOW PARTITIONS big", "ALTER TABLE big SET ('bucket.num' = '3')",
	} {
		_, err := db.Exec(q)
		requireSentinel(t, err, fluss.ErrUnsupported, "fluss.big is a view, not a table")
	}
	for _, q := range []string{"DROP VIEW src", "DROP VIEW IF EXISTS src"} {
		_, err := db.Exec(q)
		requireSentinel(t, err, fluss.ErrUnsupported, "is a table, not a view")
	}
	require.Equal(t, []string{"4"}, txRows(t, db, "SELECT COUNT(*) FROM src"))

	// A view keeps its columns and query across a reopen.
	require.NoError(t, db.Close())
	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.Equal(t, []string{"big", "grps", "src"}, txRows(t, db, "SHOW TABLES"))
	require.Equal(t, []string{"id|BIGINT|true||<nil>|<nil>", "val|INT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE big"))

	mustExec(t, db, "CREATE OR REPLACE VIEW big AS SELECT id FROM src")
	require.Equal(t, []string{"id|BIGINT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE big"))
	mustExec(t, db, "DROP VIEW big")
	mustExec(t, db, "DROP VIEW IF EXISTS big")
	_, err = db.Exec("DROP VIEW big")
	requireSentinel(t, err, fluss.ErrNotFound, "unknown table 'fluss.big'")
	require.Equal(t, []string{"grps", "src"}, txRows(t, db, "SHOW TABLES"))
}

// DROP VIEW of several views drops all or, without IF EXISTS when one is
// missing, none, naming every missing one as MySQL does.
func TestDropViews(t *testing.T) {
	db, _ := openViewDB(t)
	mustExec(t, db, "CREATE VIEW v1 AS SELECT id FROM src")
	mustExec(t, db, "CREATE VIEW v2 AS SELECT v FROM src")
	_, err := db.Exec("DROP VIEW v1, nosuch, v2, other")
	requireSentinel(t, err, fluss.ErrNotFound, "unknown table 'fluss.nosuch,fluss.other'")
	require.Equal(t, []string{"big", "src", "v1", "v2"}, txRows(t, db, "SHOW TABLES"))
	_, err = db.Exec("DROP VIEW v1, src")
	requireSentinel(t, err, fluss.ErrUnsupported, "fluss.src is a table, not a view")
	require.Equal(t, []string{"big", "src", "v1", "v2"}, txRows(t, db, "SHOW TABLES"))
	mustExec(t, db, "DROP VIEW IF EXISTS v1, nosuch, fluss.v2")
	require.Equal(t, []string{"big", "src"}, txRows(t, db, "SHOW TABLES"))
	mustExec(t, db, "DROP VIEW big")
	require.Equal(t, []string{"src"}, txRows(t, db, "SHOW TABLES"))
}

// A view's query may be a set operation; the view reads as any other, in
// any FROM.
func TestViewOfSetOperation(t *testing.T) {
	db, _ := openViewDB(t)
	mustExec(t, db, "CREATE TABLE other (id BIGINT)")
	mustExec(t, db, "INSERT INTO other VALUES (2), (3), (9)")
	mustExec(t, db, "CREATE VIEW ids AS SELECT id FROM src UNION SELECT id FROM other")
	mustExec(t, db, "CREATE VIEW common (k) AS SELECT id FROM src INTERSECT SELECT id FROM other")
	require.Equal(t, []string{"1", "2", "3", "4", "9"}, txRows(t, db, "SELECT * FROM ids"))
	require.Equal(t, []string{"2|2", "3|3"}, txRows(t, db, "SELECT ids.id, common.k FROM ids JOIN common ON ids.id = common.k"))
	require.Equal(t, []string{"1", "4", "9"}, txRows(t, db, "SELECT id FROM ids WHERE id NOT IN (SELECT k FROM common)"))
	require.Equal(t, []string{"k|BIGINT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE common"))
	require.Equal(t, []string{"common|CREATE VIEW fluss.common (k) AS SELECT id FROM src INTERSECT SELECT id FROM other"},
		txRows(t, db, "SHOW CREATE VIEW common"))
	_, err := db.Exec("CREATE VIEW bad AS SELECT id FROM src UNION SELECT id, id FROM other")
	requireSentinel(t, err, fluss.ErrInvalid, "same number of columns")
}

func TestCreateViewRefusesWhatItCannotRead(t *testing.T) {
	db, _ := openViewDB(t)
	for _, c := range []struct {
		q        string
		sentinel error
		contains string
	}{
		{"CREATE VIEW w AS SELECT nosuch FROM src", fluss.ErrNotFound, "nosuch"},
		{"CREATE VIEW w AS SELECT 1 FROM nosuch", fluss.ErrNotFound, "nosuch"},
		{"CREATE VIEW w (a) AS SELECT id, v FROM src", fluss.ErrInvalid, "view fluss.w names 1 column but its query returns 2 columns"},
		{"CREATE VIEW w AS SELECT id, v AS id FROM src", fluss.ErrInvalid, "two columns named id"},
		{"CREATE VIEW w AS SELECT id FROM src WHERE id = ?", fluss.ErrUnsupported, "placeholders"},
		{"CREATE VIEW information_schema.w AS SELECT 1", fluss.ErrReadOnly, "information_schema is read-only"},
		{"CREATE VIEW nodb.w AS SELECT 1", fluss.ErrNotFound, "nodb"},
	} {
		_, err := db.Exec(c.q)
		requireSentinel(t, err, c.sentinel, c.contains)
	}
	require.Equal(t, []string{"big", "src"}, txRows(t, db, "SHOW TABLES"))

	// DDL inside a transaction is refused, as for tables.
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("CREATE VIEW w AS SELECT 1")
	requireSentinel(t, err, fluss.ErrUnsupported, "inside a transaction")
	_, err = tx.Exec("DROP VIEW big")
	requireSentinel(t, err, fluss.ErrUnsupported, "inside a transaction")
	require.NoError(t, tx.Rollback())
}

// A view with a dropped table reads as its query would: a clear error.
func TestViewOfDroppedTable(t *testing.T) {
	db, _ := openViewDB(t)
	mustExec(t, db, "DROP TABLE src")
	_, err := db.Query("DESCRIBE big")
	requireSentinel(t, err, fluss.ErrNotFound, "view fluss.big")
	require.Contains(t, err.Error(), "src")
	// information_schema still lists it; its columns are unknown.
	require.Equal(t, []string{"big|VIEW"}, txRows(t, db, "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'fluss'"))
	require.Empty(t, txRows(t, db, "SELECT column_name FROM information_schema.columns WHERE table_name = 'big'"))
	var fe *fluss.Error
	require.True(t, errors.As(err, &fe))
}
