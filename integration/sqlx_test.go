package integration

import (
	"database/sql"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	_ "github.com/flusslite/fluss"
)

type item struct {
	ID    int64           `db:"id"`
	Name  string          `db:"name"`
	Price sql.NullFloat64 `db:"price"`
}

func TestSqlx(t *testing.T) {
	db, err := sqlx.Open("fluss", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	// sqlx knows no bind type for "fluss": it leaves '?' as it is (and
	// compiles named queries to '?'), which fluss reads. Registering
	// QUESTION changes nothing.
	require.Equal(t, sqlx.UNKNOWN, sqlx.BindType("fluss"))
	require.Equal(t, "SELECT * FROM items WHERE id = ? AND name = ?", db.Rebind("SELECT * FROM items WHERE id = ? AND name = ?"))

	db.MustExec("CREATE TABLE items (id BIGINT, name STRING, price DOUBLE, PRIMARY KEY (id) NOT ENFORCED)")
	res, err := db.NamedExec("INSERT INTO items (id, name, price) VALUES (:id, :name, :price)",
		[]item{{1, "pen", sql.NullFloat64{Float64: 1.5, Valid: true}}, {2, "ink", sql.NullFloat64{}}, {3, "pad", sql.NullFloat64{Float64: 4, Valid: true}}})
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	_, err = res.LastInsertId()
	require.Error(t, err, "no auto-increment column")
	_, err = db.NamedExec("INSERT INTO items (id, name) VALUES (:id, :name)", map[string]any{"id": 4, "name": "cap"})
	require.NoError(t, err)

	var one item
	require.NoError(t, db.Get(&one, "SELECT id, name, price FROM items WHERE id = ?", 1))
	require.Equal(t, item{1, "pen", sql.NullFloat64{Float64: 1.5, Valid: true}}, one)

	var all []item
	require.NoError(t, db.Select(&all, "SELECT * FROM items WHERE price IS NOT NULL ORDER BY id DESC"))
	require.Equal(t, []int64{3, 1}, ids(all))

	rows, err := db.Queryx("SELECT id, name, price FROM items WHERE name LIKE ? ORDER BY id", "p%")
	require.NoError(t, err)
	var scanned []item
	for rows.Next() {
		var it item
		require.NoError(t, rows.StructScan(&it))
		scanned = append(scanned, it)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Equal(t, []int64{1, 3}, ids(scanned))

	// sqlx.In expands a slice into one placeholder per element.
	q, args, err := sqlx.In("SELECT * FROM items WHERE id IN (?) AND name <> ? ORDER BY id", []int64{1, 2, 4}, "cap")
	require.NoError(t, err)
	require.Equal(t, "SELECT * FROM items WHERE id IN (?, ?, ?) AND name <> ? ORDER BY id", q)
	all = nil
	require.NoError(t, db.Select(&all, db.Rebind(q), args...))
	require.Equal(t, []int64{1, 2}, ids(all))

	// Named queries with a slice: sqlx.Named, then In, then Rebind.
	q, args, err = sqlx.Named("SELECT * FROM items WHERE id IN (:ids) ORDER BY id", map[string]any{"ids": []int{3, 4}})
	require.NoError(t, err)
	q, args, err = sqlx.In(q, args...)
	require.NoError(t, err)
	all = nil
	require.NoError(t, db.Select(&all, db.Rebind(q), args...))
	require.Equal(t, []int64{3, 4}, ids(all))
}

func ids(its []item) []int64 {
	out := make([]int64, len(its))
	for i, it := range its {
		out[i] = it.ID
	}
	return out
}
