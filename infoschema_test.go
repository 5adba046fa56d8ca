package fluss

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func TestInformationSchema(t *testing.T) {
	_, conn := openArrowDB(t)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.items (sku STRING NOT NULL, price DECIMAL(8,2), added TIMESTAMP(3), PRIMARY KEY (sku) NOT ENFORCED)",
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	require.Equal(t, []string{"fluss", "information_schema", "shop"},
		rowsOf(t, conn, "SELECT schema_name FROM information_schema.schemata ORDER BY schema_name"))

	require.Equal(t, []string{"fluss|logt|BASE TABLE", "fluss|pkt|BASE TABLE", "shop|items|BASE TABLE"},
		rowsOf(t, conn, "SELECT table_schema, table_name, table_type FROM information_schema.tables ORDER BY table_schema, table_name"))

	// What GORM's HasTable sends.
	hasTable := "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND table_type = ?"
	require.Equal(t, []string{"1"}, rowsOf(t, conn, hasTable, "shop", "items", "BASE TABLE"))
	require.Equal(t, []string{"0"}, rowsOf(t, conn, hasTable, "shop", "nope", "BASE TABLE"))
	require.Equal(t, []string{"0"}, rowsOf(t, conn, hasTable, "fluss", "items", "BASE TABLE"))

	// Types are named as MySQL names them.
	require.Equal(t, []string{
		"sku|1|longtext|longtext|NO|PRI|<nil>|<nil>|<nil>",
		"price|2|decimal|decimal(8,2)|YES||8|2|<nil>",
		"added|3|datetime|datetime(3)|YES||<nil>|<nil>|3",
	}, rowsOf(t, conn, `SELECT column_name, ordinal_position, data_type, column_type, is_nullable, column_key,
		numeric_precision, numeric_scale, datetime_precision
		FROM INFORMATION_SCHEMA.COLUMNS WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`, "shop", "items"))

	// A MySQL-dialect table reports the types it declared, and its
	// auto-increment key.
	_, err := conn.ExecContext(ctx, "CREATE TABLE shop.users (`id` bigint unsigned AUTO_INCREMENT, `email` varchar(191), `ok` boolean, `n` int, PRIMARY KEY (`id`), UNIQUE INDEX `idx_email` (`email`, `n`))")
	require.NoError(t, err)
	require.Equal(t, []string{
		"id|bigint|bigint unsigned|<nil>|PRI|auto_increment",
		"email|varchar|varchar(191)|191|MUL|",
		"ok|tinyint|tinyint(1)|<nil>||",
		"n|int|int|<nil>||",
	}, rowsOf(t, conn, `SELECT column_name, data_type, column_type, character_maximum_length, column_key, extra
		FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'users' ORDER BY ordinal_position`))

	// What GORM's HasIndex and Indexes send: the primary key and the
	// secondary indexes.
	require.Equal(t, []string{"2"}, rowsOf(t, conn, // one row per column, as in MySQL
		"SELECT count(*) FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? AND index_name = ?", "shop", "users", "idx_email"))
	require.Equal(t, []string{"users|id|PRIMARY|0", "users|email|idx_email|0", "users|n|idx_email|0"}, rowsOf(t, conn,
		"SELECT TABLE_NAME, COLUMN_NAME, INDEX_NAME, NON_UNIQUE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX", "shop", "users"))
	_, err = conn.ExecContext(ctx, "CREATE INDEX idx_n ON shop.users (n)")
	require.NoError(t, err)
	require.Equal(t, []string{"idx_n|n|1|1"}, rowsOf(t, conn,
		"SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX, NON_UNIQUE FROM information_schema.statistics WHERE table_schema = 'shop' AND table_name = 'users' AND index_name = 'idx_n'"))
	_, err = conn.ExecContext(ctx, "DROP INDEX idx_n ON shop.users")
	require.NoError(t, err)
	require.Equal(t, []string{"0"}, rowsOf(t, conn,
		"SELECT count(*) FROM information_schema.statistics WHERE table_schema = 'shop' AND table_name = 'users' AND index_name = 'idx_n'"))

	require.Equal(t, []string{"id|NO|PRI", "region|YES|"},
		rowsOf(t, conn, "SELECT column_name, is_nullable, column_key FROM information_schema.columns WHERE table_name = 'pkt' AND ordinal_position <= 2 ORDER BY ordinal_position"))

	// Tables dropped disappear; unknown information_schema tables are not found.
	_, err = conn.ExecContext(ctx, "DROP TABLE shop.items")
	require.NoError(t, err)
	require.Equal(t, []string{"0"}, rowsOf(t, conn, hasTable, "shop", "items", "BASE TABLE"))
	_, err = conn.QueryContext(ctx, "SELECT * FROM information_schema.triggers")
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, []string{"InformationSchema: [information_schema.tables]"},
		rowsOf(t, conn, "EXPLAIN SELECT * FROM information_schema.tables"))

	// The Arrow API reads it too.
	got, _ := arrowRowsOf(t, conn, memory.DefaultAllocator, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'fluss' ORDER BY table_name")
	require.Equal(t, []string{"logt", "pkt"}, got)
}
