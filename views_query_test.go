package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// A view reads as its query would, in any FROM: alone, aliased, joined,
// under another view and from another database.
func TestViewQueries(t *testing.T) {
	db, _ := openViewDB(t)
	mustExec(t, db, "CREATE TABLE names (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)")
	mustExec(t, db, "INSERT INTO names VALUES (2, 'two'), (3, 'three'), (4, 'four')")

	require.Equal(t, []string{"2|20", "3|30"}, txRows(t, db, "SELECT * FROM big"))
	require.Equal(t, []string{"3"}, txRows(t, db, "SELECT b.id FROM big AS b WHERE b.val > 25"))
	require.Equal(t, []string{"2|two|20", "3|three|30"}, txRows(t, db, "SELECT big.id, n.name, big.val FROM big JOIN names n ON n.id = big.id"))
	require.Equal(t, []string{"50"}, txRows(t, db, "SELECT SUM(val) FROM big"))
	require.Equal(t, []string{"2|20"}, txRows(t, db, "SELECT * FROM (SELECT id, val FROM big WHERE id < 3) AS d"))

	// A view over a view, and one that aggregates.
	mustExec(t, db, "CREATE VIEW bigger AS SELECT id * 10 AS id10, val FROM big WHERE val > 25")
	require.Equal(t, []string{"30|30"}, txRows(t, db, "SELECT * FROM bigger"))
	mustExec(t, db, "CREATE VIEW per_grp (g, n, total) AS SELECT grp, COUNT(*), SUM(v) FROM src GROUP BY grp")
	require.Equal(t, []string{"a|2|30", "b|2|30"}, txRows(t, db, "SELECT * FROM per_grp"))
	require.Equal(t, []string{"b|30"}, txRows(t, db, "SELECT p.g, p.total FROM per_grp p JOIN big ON big.id = 3 WHERE p.g = 'b'"))

	// Its unqualified names resolve in the database it was created from.
	mustExec(t, db, "CREATE DATABASE other")
	mustExec(t, db, "CREATE TABLE other.src (id BIGINT, grp STRING, v INT)")
	mustExec(t, db, "INSERT INTO other.src VALUES (9, 'z', 99)")
	conn, err := db.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(t.Context(), "USE other")
	require.NoError(t, err)
	require.Equal(t, []string{"2|20", "3|30"}, txRows(t, conn, "SELECT * FROM fluss.big"))
	_, err = conn.ExecContext(t.Context(), "CREATE VIEW fluss.from_other AS SELECT id FROM src")
	require.NoError(t, err)
	require.Equal(t, []string{"9"}, txRows(t, db, "SELECT * FROM from_other"))

	// CREATE TABLE ... AS reads views; INSERT ... SELECT too.
	mustExec(t, db, "CREATE TABLE snap AS SELECT * FROM big")
	require.Equal(t, []string{"2|20", "3|30"}, txRows(t, db, "SELECT id, val FROM snap"))
	mustExec(t, db, "INSERT INTO snap SELECT id10, val FROM bigger")
	require.Equal(t, []string{"2|20", "30|30", "3|30"}, txRows(t, db, "SELECT id, val FROM snap"))

	// A view whose table is gone fails when it is queried, naming both.
	mustExec(t, db, "DROP TABLE other.src")
	_, err = db.Query("SELECT * FROM from_other")
	requireSentinel(t, err, fluss.ErrNotFound, "view fluss.from_other")
	require.Contains(t, err.Error(), "other.src")

	// OR REPLACE cannot make a view read itself, directly or through another.
	mustExec(t, db, "CREATE VIEW c1 AS SELECT id FROM big")
	mustExec(t, db, "CREATE VIEW c2 AS SELECT id FROM c1")
	for _, q := range []string{"CREATE OR REPLACE VIEW c1 AS SELECT id FROM c2", "CREATE OR REPLACE VIEW c1 AS SELECT id FROM c1"} {
		_, err = db.Exec(q)
		requireSentinel(t, err, fluss.ErrUnsupported, "view fluss.c1 would read itself")
	}
	require.Equal(t, []string{"2", "3"}, txRows(t, db, "SELECT * FROM c2"))
}

func TestWithQueries(t *testing.T) {
	db, _ := openViewDB(t)
	require.Equal(t, []string{"1|10", "2|20"}, txRows(t, db, "WITH a AS (SELECT id, v FROM src WHERE grp = 'a') SELECT * FROM a"))
	// A column list, a CTE reading the one before it, a join of both.
	require.Equal(t, []string{"1|10|11", "2|20|21"}, txRows(t, db,
		"WITH a (k, x) AS (SELECT id, v FROM src WHERE grp = 'a'), b AS (SELECT k, x + 1 AS y FROM a) SELECT a.k, a.x, b.y FROM a JOIN b ON a.k = b.k"))
	// It hides a table of its name and reads views; placeholders count on.
	require.Equal(t, []string{"3"}, txRows(t, db, "WITH src AS (SELECT id FROM big WHERE id > ?) SELECT id FROM src WHERE id < ?", 2, 9))
	require.Equal(t, []string{"2"}, txRows(t, db, "WITH g AS (SELECT grp, COUNT(*) AS n FROM src GROUP BY grp) SELECT COUNT(*) FROM g WHERE n = 2"))
	// A common table expression may be a set operation.
	require.Equal(t, []string{"1", "2", "3"}, txRows(t, db, "WITH a (k) AS (SELECT id FROM src WHERE id < 3 UNION SELECT id FROM big) SELECT k FROM a"))
	require.Equal(t, []string{"2"}, txRows(t, db, "WITH a AS (SELECT id FROM src INTERSECT SELECT id FROM big WHERE id < 3) SELECT * FROM a"))
	// The query after WITH may be a set operation; each SELECT sees the WITH.
	require.Equal(t, []string{"1", "2", "3"}, txRows(t, db, "WITH a AS (SELECT id FROM src WHERE grp = ?) SELECT id FROM a UNION SELECT id FROM big ORDER BY 1", "a"))
	require.Equal(t, []string{"2"}, txRows(t, db, "WITH a AS (SELECT id FROM src WHERE grp = 'a') SELECT id FROM a INTERSECT SELECT id FROM big"))
	// A view and a table may be made from a WITH query.
	mustExec(t, db, "CREATE VIEW wv AS WITH a AS (SELECT id FROM src WHERE v IS NULL) SELECT id FROM a")
	require.Equal(t, []string{"4"}, txRows(t, db, "SELECT * FROM wv"))
	mustExec(t, db, "CREATE TABLE wt AS WITH a AS (SELECT id, grp FROM src WHERE id <= 2) SELECT grp, COUNT(*) AS n FROM a GROUP BY grp")
	require.Equal(t, []string{"a|2"}, txRows(t, db, "SELECT * FROM wt"))

	rows, err := db.Query("EXPLAIN WITH a AS (SELECT id FROM src) SELECT id FROM a")
	require.NoError(t, err)
	require.True(t, rows.Next())
	require.NoError(t, rows.Close())

	for _, c := range []struct {
		q        string
		sentinel error
		contains string
	}{
		{"WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r", fluss.ErrUnsupported, "WITH RECURSIVE"},
		{"WITH a (x, y) AS (SELECT id FROM src) SELECT * FROM a", fluss.ErrInvalid, "names 2 columns but its query returns 1"},
		{"WITH a AS (SELECT nosuch FROM src) SELECT * FROM a", fluss.ErrNotFound, "nosuch"},
		// MySQL's grammar has WITH after INSERT only.
		{"WITH a AS (SELECT id FROM src) INSERT INTO src SELECT * FROM a", fluss.ErrSyntax, "expected SELECT after WITH"},
	} {
		_, err := db.Query(c.q)
		requireSentinel(t, err, c.sentinel, c.contains)
	}
}

// Views and common table expressions read inside subqueries too, also
// those of UPDATE and DELETE; a common table expression hides a table of
// its name there as in FROM.
func TestViewsAndWithInSubqueries(t *testing.T) {
	db, _ := openViewDB(t)
	require.Equal(t, []string{"2", "3"}, txRows(t, db, "SELECT id FROM src WHERE id IN (SELECT id FROM big)"))
	require.Equal(t, []string{"1|30"}, txRows(t, db, "SELECT id, (SELECT MAX(val) FROM big) FROM src WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.id = src.id) AND v IS NOT NULL"))
	// The table src would give 2 and 3.
	require.Equal(t, []string{"2"}, txRows(t, db, "WITH src AS (SELECT 1 AS id) SELECT id FROM big WHERE id IN (SELECT id + 1 FROM src)"))

	mustExec(t, db, "CREATE TABLE kv (id BIGINT, n INT, PRIMARY KEY (id) NOT ENFORCED)")
	mustExec(t, db, "INSERT INTO kv VALUES (1, 0), (2, 0), (3, 0), (4, 0)")
	require.EqualValues(t, 2, affected(t)(db.Exec("UPDATE kv SET n = 1 WHERE id IN (SELECT id FROM big)")))
	require.EqualValues(t, 1, affected(t)(db.Exec("DELETE FROM kv WHERE id = (SELECT MIN(id) FROM big)")))
	require.Equal(t, []string{"1|0", "3|1", "4|0"}, txRows(t, db, "SELECT * FROM kv"))
}
