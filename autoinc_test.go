package fluss

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLastInsertId: as MySQL reports it, the first value a statement
// generated, the others following in row order.
func TestLastInsertId(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("fluss", dir)
	require.NoError(t, err)
	ctx := context.Background()
	exec := func(q string, args ...any) sql.Result {
		t.Helper()
		res, err := db.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
		return res
	}
	lastID := func(res sql.Result) int64 {
		t.Helper()
		id, err := res.LastInsertId()
		require.NoError(t, err)
		return id
	}
	exec("CREATE TABLE users (`id` bigint unsigned AUTO_INCREMENT, `name` varchar(64), PRIMARY KEY (`id`))")

	require.Equal(t, int64(1), lastID(exec("INSERT INTO users (name) VALUES ('ann')")))
	res := exec("INSERT INTO users (name) VALUES ('bob'), ('cid'), ('dee')")
	require.Equal(t, int64(2), lastID(res), "the first generated value of the statement")
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	require.Equal(t, int64(5), lastID(exec("INSERT INTO users VALUES (DEFAULT, 'eve'), (NULL, 'fay'), (0, 'gus')")))
	require.Equal(t, int64(8), lastID(exec("INSERT INTO users (id, name) VALUES (?, ?)", nil, "hal")))

	// An explicit key moves the counter past it; a statement that
	// generates nothing reports the last value it gave.
	require.Equal(t, int64(100), lastID(exec("INSERT INTO users VALUES (50, 'ida'), (100, 'jo')")))
	require.Equal(t, int64(101), lastID(exec("INSERT INTO users (name) VALUES ('kim')")))

	rows := map[int64]string{}
	r, err := db.QueryContext(ctx, "SELECT id, name FROM users")
	require.NoError(t, err)
	for r.Next() {
		var id int64
		var name string
		require.NoError(t, r.Scan(&id, &name))
		rows[id] = name
	}
	require.NoError(t, r.Err())
	require.NoError(t, r.Close())
	require.Equal(t, map[int64]string{1: "ann", 2: "bob", 3: "cid", 4: "dee", 5: "eve", 6: "fay", 7: "gus", 8: "hal",
		50: "ida", 100: "jo", 101: "kim"}, rows)

	// A table without an auto-increment column: LastInsertId is an error.
	exec("CREATE TABLE plain (id BIGINT, PRIMARY KEY (id) NOT ENFORCED)")
	_, err = exec("INSERT INTO plain VALUES (1)").LastInsertId()
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "auto-increment")
	exec("CREATE TABLE logt (id BIGINT)")
	_, err = exec("INSERT INTO logt VALUES (1)").LastInsertId()
	require.ErrorIs(t, err, ErrUnsupported)

	// Values are never handed out again after a reopen.
	require.NoError(t, db.Close())
	db, err = sql.Open("fluss", dir)
	require.NoError(t, err)
	defer db.Close()
	id := lastID(exec("INSERT INTO users (name) VALUES ('lou')"))
	require.Greater(t, id, int64(101))
	var count int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&count))
	require.Equal(t, 12, count, "no row was overwritten")
}

// TestAutoIncrementOutsideKey: Fluss's form, an auto-increment column
// outside the primary key (a dictionary table): a new key takes the next
// value, an existing key keeps its own, and no value may be given.
func TestAutoIncrementOutsideKey(t *testing.T) {
	db, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.ExecContext(ctx, `CREATE TABLE dict (word STRING, uid INT, n BIGINT, PRIMARY KEY (word) NOT ENFORCED)
		WITH ('auto-increment.fields' = 'uid')`)
	require.NoError(t, err)
	res, err := db.ExecContext(ctx, "INSERT INTO dict (word, n) VALUES ('a', 1), ('b', 1)")
	require.NoError(t, err)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	require.Equal(t, int64(1), id)
	res, err = db.ExecContext(ctx, "INSERT INTO dict (word, n) VALUES ('b', 2), ('c', 2)")
	require.NoError(t, err)
	id, err = res.LastInsertId()
	require.NoError(t, err)
	require.Equal(t, int64(3), id, "only the new key c takes a value")
	got := map[string][2]int64{}
	r, err := db.QueryContext(ctx, "SELECT word, uid, n FROM dict")
	require.NoError(t, err)
	for r.Next() {
		var w string
		var uid, n int64
		require.NoError(t, r.Scan(&w, &uid, &n))
		got[w] = [2]int64{uid, n}
	}
	require.NoError(t, r.Close())
	require.Equal(t, map[string][2]int64{"a": {1, 1}, "b": {2, 2}, "c": {3, 2}}, got)

	_, err = db.ExecContext(ctx, "INSERT INTO dict VALUES ('d', 9, 1)")
	require.ErrorIs(t, err, ErrConstraint)
	require.ErrorContains(t, err, "takes no explicit value")

	_, err = db.ExecContext(ctx, "CREATE TABLE bad (k STRING, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('auto-increment.fields' = 'v')")
	require.ErrorContains(t, err, "must be INT or BIGINT")
}

// TestOnDuplicateKeyUpdate: MySQL's upsert clause on a key table; columns
// the clause does not set from VALUES(col) keep their stored values for an
// existing key, and take the inserted ones for a new key.
func TestOnDuplicateKeyUpdate(t *testing.T) {
	db, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.ExecContext(ctx, "CREATE TABLE kv (k BIGINT, a STRING, b STRING, c STRING, PRIMARY KEY (k) NOT ENFORCED)")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO kv VALUES (1, 'a1', 'b1', 'c1')")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO kv VALUES (1, 'a2', 'b2', 'c2'), (2, 'a2', 'b2', 'c2') ON DUPLICATE KEY UPDATE a = VALUES(a), c = ?", "cx")
	require.NoError(t, err)
	var rows []string
	r, err := db.QueryContext(ctx, "SELECT CONCAT(a, b, c) FROM kv ORDER BY k")
	require.NoError(t, err)
	for r.Next() {
		var s string
		require.NoError(t, r.Scan(&s))
		rows = append(rows, s)
	}
	require.NoError(t, r.Close())
	require.Equal(t, []string{"a2b1cx", "a2b2c2"}, rows)

	_, err = db.ExecContext(ctx, "INSERT INTO kv VALUES (1, 'a', 'b', 'c') ON DUPLICATE KEY UPDATE a = CONCAT(a, 'x')")
	require.ErrorIs(t, err, ErrUnsupported)
}
