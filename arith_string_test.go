package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A string constant in arithmetic with a number is the number it spells,
// as MySQL converts it (its numeric prefix, 0 without one): UPDATE ... SET
// balance = balance - ? with "10.00", the way a DECIMAL comes back to Go,
// works. Arithmetic on a STRING column stays an error.
func TestStringConstantsInArithmetic(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off")
	for _, q := range []string{
		`CREATE TABLE acc (id INT, balance DECIMAL(10, 2), n INT, s STRING, PRIMARY KEY (id) NOT ENFORCED)`,
		`INSERT INTO acc VALUES (1, 100.00, 7, 'x'), (2, 50.50, 8, 'y')`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	var balance string
	require.NoError(t, db.QueryRow(`SELECT balance FROM acc WHERE id = 1`).Scan(&balance))
	require.Equal(t, "100.00", balance)
	_, err := db.Exec(`UPDATE acc SET balance = balance - ? WHERE id = ?`, "10.25", 1)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE acc SET balance = ? + balance WHERE id = 2`, "10.00")
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1), "89.75"}, {int64(2), "60.50"}}, queryAll(t, db, `SELECT id, CAST(balance AS CHAR) FROM acc ORDER BY id`))

	for q, want := range map[string]string{
		`SELECT CAST(1 + '2' AS CHAR)`:                       "3",
		`SELECT CAST('1.5' * 2 AS CHAR)`:                     "3.0",
		`SELECT CAST('3' - ' 1 ' AS CHAR)`:                   "2",
		`SELECT CAST(n + '1' AS CHAR) FROM acc WHERE id = 1`: "8",
		`SELECT CAST(2 * '1e1' AS CHAR)`:                     "20",
		`SELECT CAST('-.5' + 1 AS CHAR)`:                     "0.5",
	} {
		var got string
		require.NoError(t, db.QueryRow(q).Scan(&got), q)
		require.Equal(t, want, got, q)
	}
	var null *string
	require.NoError(t, db.QueryRow(`SELECT '5' + NULL`).Scan(&null))
	require.Nil(t, null)

	for q, want := range map[string]int64{
		`SELECT 'abc' + 1`:                        1,
		`SELECT '12abc' + 1`:                      13,
		`SELECT n + '' FROM acc WHERE id = 2`:     8,
		`SELECT n - ' -2x' FROM acc WHERE id = 2`: 10,
	} {
		var got int64
		require.NoError(t, db.QueryRow(q).Scan(&got), q)
		require.Equal(t, want, got, q)
	}
	_, err = db.Query(`SELECT s + 1 FROM acc`)
	require.ErrorContains(t, err, "arithmetic on STRING")
}
