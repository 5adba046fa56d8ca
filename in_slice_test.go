package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A slice bound to one placeholder of IN (...) expands to its elements,
// as sqlx.In and GORM expand `IN (?)`: in SELECT, UPDATE and DELETE, with
// NOT IN, beside other items, for log and key tables. An empty slice is an
// error naming the placeholder; a slice anywhere else is no list.
func TestInPlaceholderTakesASlice(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off")
	for _, q := range []string{
		`CREATE TABLE u (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)`,
		`CREATE TABLE l (id BIGINT, name STRING)`,
		`INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')`,
		`INSERT INTO l VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	names := func(q string, args ...any) []string {
		t.Helper()
		rows, err := db.Query(q, args...)
		require.NoError(t, err, q)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	for _, table := range []string{"u", "l"} {
		q := `SELECT name FROM ` + table + ` WHERE id IN (?) ORDER BY name`
		require.Equal(t, []string{"a", "c"}, names(q, []int{1, 3}))
		require.Equal(t, []string{"b", "d"}, names(q, []int64{2, 4}))
		require.Equal(t, []string{"a", "b"}, names(q, []any{int64(1), "2"}))
		require.Equal(t, []string{"b", "c", "d"}, names(`SELECT name FROM `+table+` WHERE id NOT IN (?) ORDER BY name`, []int{1}))
		require.Equal(t, []string{"a", "b", "d"}, names(`SELECT name FROM `+table+` WHERE id IN (?, 4, ?) ORDER BY name`, []int{1}, []int32{2}))
		require.Equal(t, []string{"1", "3"}, names(`SELECT id FROM `+table+` WHERE name IN (?) ORDER BY id`, []string{"a", "c"}))
		_, err := db.Query(q, []int{})
		require.ErrorContains(t, err, "empty list")
	}
	_, err := db.Exec(`UPDATE u SET name = 'z' WHERE id IN (?)`, []int{1, 2})
	require.NoError(t, err)
	_, err = db.Exec(`DELETE FROM u WHERE id IN (?)`, []int{3})
	require.NoError(t, err)
	require.Equal(t, []string{"d", "z", "z"}, names(`SELECT name FROM u ORDER BY name`))
	_, err = db.Query(`SELECT name FROM u WHERE id = ?`, []int{1, 2})
	require.Error(t, err, "a slice compared with = is no list")
}
