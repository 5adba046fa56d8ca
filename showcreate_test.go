package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// SHOW CREATE TABLE gives a statement that recreates the table exactly:
// dropping the table and running it yields the same SHOW CREATE TABLE.
func TestShowCreateTableRoundTrips(t *testing.T) {
	db, _ := openDB(t)
	for _, ddl := range []string{
		`CREATE TABLE orders (region STRING NOT NULL, id BIGINT NOT NULL, amount DECIMAL(10, 2) COMMENT 'in euros', dt DATE NOT NULL,
			PRIMARY KEY (region, id, dt) NOT ENFORCED) COMMENT 'all orders' PARTITIONED BY (dt)
			WITH ('bucket.num' = '3', 'table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'id')`,
		"CREATE TABLE events (ts TIMESTAMP(3), `order` INT, `key` STRING, tags ARRAY<STRING>, payload ROW<a INT, b STRING>) WITH ('bucket.key' = 'key')",
	} {
		mustExec(t, db, ddl)
	}
	for _, table := range []string{"orders", "events"} {
		var name, stmt string
		require.NoError(t, db.QueryRow("SHOW CREATE TABLE "+table).Scan(&name, &stmt))
		require.Equal(t, table, name)
		require.Contains(t, stmt, "'bucket.num' = ")
		mustExec(t, db, "DROP TABLE "+table)
		mustExec(t, db, stmt)
		var again string
		require.NoError(t, db.QueryRow("SHOW CREATE TABLE "+table).Scan(&name, &again))
		require.Equal(t, stmt, again)
	}
	var name, stmt string
	require.NoError(t, db.QueryRow("SHOW CREATE TABLE orders").Scan(&name, &stmt))
	require.Contains(t, stmt, "PRIMARY KEY (region, id, dt) NOT ENFORCED")
	require.Contains(t, stmt, "PARTITIONED BY (dt)")
	require.Contains(t, stmt, "COMMENT 'all orders'")
	_, err := db.Query("SHOW CREATE TABLE nosuch")
	require.Error(t, err)
}
