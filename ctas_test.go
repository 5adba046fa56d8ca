package fluss_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

func TestCreateTableAsSelect(t *testing.T) {
	db := openInsertSelectDB(t)
	n := affected(t)(db.Exec("CREATE TABLE dst AS SELECT id, grp, v * 2 AS v2 FROM src WHERE v IS NOT NULL"))
	require.EqualValues(t, 4, n)
	require.Equal(t, []string{"1|a|20", "2|a|40", "3|b|60", "5|c|100"}, txRows(t, db, "SELECT * FROM dst"))
	// The columns are the query's names and types, nullable.
	require.Equal(t, []string{"grp|STRING|true||<nil>|<nil>", "id|BIGINT|true||<nil>|<nil>", "v2|BIGINT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE dst"))

	// WITH options, a primary key (NOT NULL, an upsert table) and a
	// placeholder in the query.
	n = affected(t)(db.Exec("CREATE TABLE byid (PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '3') AS SELECT id, name FROM kv WHERE score >= ?", 2))
	require.EqualValues(t, 2, n)
	require.Equal(t, []string{"2|bob", "3|cid"}, txRows(t, db, "SELECT * FROM byid"))
	var name, stmt string
	require.NoError(t, db.QueryRow("SHOW CREATE TABLE byid").Scan(&name, &stmt))
	require.Contains(t, stmt, "id BIGINT NOT NULL")
	require.Contains(t, stmt, "PRIMARY KEY (id) NOT ENFORCED")
	require.Contains(t, stmt, "'bucket.num' = '3'")
	mustExec(t, db, "INSERT INTO byid VALUES (2, 'upserted')")
	require.Equal(t, []string{"2|upserted", "3|cid"}, txRows(t, db, "SELECT * FROM byid"))

	// Aggregates, a query without FROM, an empty result.
	mustExec(t, db, "CREATE TABLE sums AS SELECT grp, SUM(v) AS total, COUNT(*) AS n FROM src GROUP BY grp")
	require.Equal(t, []string{"a|30|2", "b|30|2", "c|50|1"}, txRows(t, db, "SELECT * FROM sums"))
	mustExec(t, db, "CREATE TABLE one AS SELECT 1 AS x, 'y' AS y")
	require.Equal(t, []string{"1|y"}, txRows(t, db, "SELECT * FROM one"))
	require.EqualValues(t, 0, affected(t)(db.Exec("CREATE TABLE none AS SELECT * FROM src WHERE id > 100")))
	require.Equal(t, []string{"grp|STRING|true||<nil>|<nil>", "id|BIGINT|true||<nil>|<nil>", "v|INT|true||<nil>|<nil>"}, txRows(t, db, "DESCRIBE none"))

	// IF NOT EXISTS leaves an existing table as it is and reads nothing.
	require.EqualValues(t, 0, affected(t)(db.Exec("CREATE TABLE IF NOT EXISTS one AS SELECT nosuch FROM nosuch")))
	require.Equal(t, []string{"1|y"}, txRows(t, db, "SELECT * FROM one"))
	_, err := db.Exec("CREATE TABLE one AS SELECT 2 AS x")
	requireSentinel(t, err, fluss.ErrExists, "fluss.one")
}

// A CREATE TABLE ... AS that fails leaves no table: not when its query
// fails, nor its definition, nor its write.
func TestCreateTableAsFailureLeavesNoTable(t *testing.T) {
	db := openInsertSelectDB(t, "memory.limit=1mb")
	mustExec(t, db, "CREATE TABLE wide (id BIGINT, s STRING)")
	mustExec(t, db, "INSERT INTO wide SELECT id, '"+strings.Repeat("x", 200)+"' FROM src")
	for range 10 {
		mustExec(t, db, "INSERT INTO wide SELECT id, s FROM wide")
	}
	for _, c := range []struct {
		q        string
		sentinel error
		contains string
	}{
		{"CREATE TABLE bad AS SELECT nosuch FROM src", fluss.ErrNotFound, "nosuch"},
		{"CREATE TABLE bad AS SELECT id, v AS id FROM src", fluss.ErrInvalidTable, "declared twice"},
		{"CREATE TABLE bad (PRIMARY KEY (nosuch)) AS SELECT id FROM src", fluss.ErrNotFound, "nosuch"},
		{"CREATE TABLE bad WITH ('bucket.num' = 'x') AS SELECT id FROM src", fluss.ErrInvalidOption, "bucket.num"},
		{"CREATE TABLE bad PARTITIONED BY (nosuch) AS SELECT id FROM src", fluss.ErrNotFound, "nosuch"},
		// The query fails while it is read.
		{"CREATE TABLE bad AS SELECT s FROM wide", fluss.ErrInvalid, "memory.limit"},
		// The write fails: a NULL in the primary key.
		{"CREATE TABLE bad (PRIMARY KEY (v)) AS SELECT v, id FROM src", fluss.ErrConstraint, "NULL"},
		{"CREATE TABLE information_schema.bad AS SELECT 1 AS x", fluss.ErrReadOnly, "read-only"},
	} {
		_, err := db.Exec(c.q)
		requireSentinel(t, err, c.sentinel, c.contains)
		require.Equal(t, []string{"kv", "src", "wide"}, txRows(t, db, "SHOW TABLES"), c.q)
	}

	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("CREATE TABLE bad AS SELECT id FROM src")
	requireSentinel(t, err, fluss.ErrUnsupported, "inside a transaction")
	require.NoError(t, tx.Rollback())
	require.Equal(t, []string{"kv", "src", "wide"}, txRows(t, db, "SHOW TABLES"))
}
