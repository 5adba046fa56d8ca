package fluss_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddColumnReadsEverySchema: rows written before ALTER TABLE ... ADD
// COLUMN read the new column as NULL from every place they are kept (the
// log, the KV store, a KV snapshot, the lake), rows written after carry
// it, and both survive a reopen.
func TestAddColumnReadsEverySchema(t *testing.T) {
	db, dsn := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE lg (id BIGINT, s STRING) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`)
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`)
	mustExec(t, db, `INSERT INTO lg VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	queryAll(t, db, `CALL sys.tier('lg')`)
	queryAll(t, db, `CALL sys.tier('kv')`)
	mustExec(t, db, `INSERT INTO lg VALUES (3, 'c')`)
	mustExec(t, db, `INSERT INTO kv VALUES (4, 'd')`)
	queryAll(t, db, `CALL sys.kv_snapshot('kv')`)

	mustExec(t, db, `ALTER TABLE lg ADD COLUMN n INT COMMENT 'added'`)
	mustExec(t, db, `ALTER TABLE kv ADD n INT, ADD COLUMN m STRING`)
	mustExec(t, db, `INSERT INTO lg VALUES (4, 'd', 40)`)
	mustExec(t, db, `INSERT INTO kv VALUES (5, 'e', 50, 'x'), (2, 'B', 20, NULL)`)
	mustExec(t, db, `UPDATE kv SET s = 'C' WHERE id = 3`)

	check := func(db *sql.DB) {
		t.Helper()
		require.Equal(t, [][]any{{int64(1), "a", nil}, {int64(2), "b", nil}, {int64(3), "c", nil}, {int64(4), "d", int64(40)}},
			queryAll(t, db, `SELECT id, s, n FROM lg ORDER BY id`))
		require.Equal(t, [][]any{{int64(1), "a", nil, nil}, {int64(2), "B", int64(20), nil}, {int64(3), "C", nil, nil}, {int64(4), "d", nil, nil}, {int64(5), "e", int64(50), "x"}},
			queryAll(t, db, `SELECT id, s, n, m FROM kv ORDER BY id`))
		require.Equal(t, [][]any{{int64(1), "a", nil, nil}}, queryAll(t, db, `SELECT * FROM kv WHERE id = 1`))
		require.Equal(t, [][]any{{int64(4)}}, queryAll(t, db, `SELECT id FROM lg WHERE n = 40`))
		require.Equal(t, [][]any{{int64(3)}}, queryAll(t, db, `SELECT count(*) FROM lg WHERE n IS NULL`))
		require.Equal(t, [][]any{{int64(3)}}, queryAll(t, db, `SELECT count(*) FROM kv WHERE n IS NULL`))
	}
	check(db)
	queryAll(t, db, `CALL sys.tier('lg')`)
	queryAll(t, db, `CALL sys.tier('kv')`)
	check(db)
	require.NoError(t, db.Close())
	db2, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db2.Close()
	check(db2)
}
