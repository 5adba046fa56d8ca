package fluss

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// openConn opens the database at dsn with a logger and one connection on
// it.
func openConn(t *testing.T, dsn string, logs *bytes.Buffer) (*sql.DB, *sql.Conn) {
	t.Helper()
	var opts []ConnectorOption
	if logs != nil {
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	}
	ctr, err := NewConnector(dsn, opts...)
	require.NoError(t, err)
	db := sql.OpenDB(ctr)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(); db.Close() })
	return db, conn
}

func execAll(t *testing.T, conn *sql.Conn, qs ...string) {
	t.Helper()
	for _, q := range qs {
		_, err := conn.ExecContext(context.Background(), q)
		require.NoError(t, err, q)
	}
}

// Foreign keys are recorded, listed in information_schema as MySQL lists
// them, survive a reopen, and are dropped by name; nothing enforces them.
func TestForeignKeysRecorded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	var logs bytes.Buffer
	db, conn := openConn(t, dir, &logs)
	ctx := context.Background()
	execAll(t, conn,
		"CREATE TABLE `users` (`id` bigint unsigned AUTO_INCREMENT, `email` varchar(191), PRIMARY KEY (`id`), UNIQUE INDEX `idx_email` (`email`))",
		"CREATE TABLE `orders` (`id` bigint AUTO_INCREMENT, `user_id` bigint unsigned, `parent_id` bigint, PRIMARY KEY (`id`),"+
			" CONSTRAINT `fk_users_orders` FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON DELETE CASCADE,"+
			" FOREIGN KEY (`parent_id`) REFERENCES `orders` (`id`))",
	)
	require.Contains(t, logs.String(), "fk_users_orders")
	require.Contains(t, logs.String(), "not enforced")

	check := func(conn *sql.Conn) {
		t.Helper()
		require.Equal(t, []string{ // byte-wise order: upper case first
			"PRIMARY|orders|PRIMARY KEY|YES",
			"fk_users_orders|orders|FOREIGN KEY|NO",
			"orders_ibfk_2|orders|FOREIGN KEY|NO",
		}, rowsOf(t, conn, "SELECT constraint_name, table_name, constraint_type, enforced FROM information_schema.table_constraints WHERE constraint_schema = ? AND table_name = ? ORDER BY constraint_name", "fluss", "orders"))
		// What GORM's HasConstraint sends.
		hasConstraint := "SELECT count(*) FROM INFORMATION_SCHEMA.table_constraints WHERE constraint_schema = ? AND table_name = ? AND constraint_name = ?"
		require.Equal(t, []string{"1"}, rowsOf(t, conn, hasConstraint, "fluss", "orders", "fk_users_orders"))
		require.Equal(t, []string{"0"}, rowsOf(t, conn, hasConstraint, "fluss", "users", "fk_users_orders"))
		// UNIQUE constraints come from the UNIQUE indexes, which are enforced.
		require.Equal(t, []string{"PRIMARY|PRIMARY KEY|YES", "idx_email|UNIQUE|YES"}, rowsOf(t, conn,
			"SELECT constraint_name, constraint_type, enforced FROM information_schema.table_constraints WHERE table_name = 'users' ORDER BY constraint_type"))
		require.Equal(t, []string{
			"PRIMARY|id|1|<nil>|<nil>|<nil>",
			"fk_users_orders|user_id|1|fluss|users|id",
			"orders_ibfk_2|parent_id|1|fluss|orders|id",
		}, rowsOf(t, conn, "SELECT constraint_name, column_name, ordinal_position, referenced_table_schema, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage WHERE table_name = 'orders' ORDER BY constraint_name"))
		require.Equal(t, []string{
			"fk_users_orders|PRIMARY|NONE|NO ACTION|CASCADE|orders|users",
			"orders_ibfk_2|PRIMARY|NONE|NO ACTION|NO ACTION|orders|orders",
		}, rowsOf(t, conn, "SELECT constraint_name, unique_constraint_name, match_option, update_rule, delete_rule, table_name, referenced_table_name FROM information_schema.referential_constraints ORDER BY constraint_name"))
	}
	check(conn)

	// Not enforced: a child naming no parent is stored.
	execAll(t, conn, "INSERT INTO orders (user_id) VALUES (42)")

	// The keys are in the catalog: they survive a reopen.
	require.NoError(t, conn.Close())
	require.NoError(t, db.Close())
	logs.Reset()
	_, conn = openConn(t, dir, &logs)
	check(conn)

	// ALTER TABLE ... ADD CONSTRAINT, as GORM's AutoMigrate sends it for
	// an association, and the two ways of dropping one.
	execAll(t, conn, "CREATE TABLE `items` (`id` bigint AUTO_INCREMENT, `order_id` bigint, PRIMARY KEY (`id`))",
		"ALTER TABLE `items` ADD CONSTRAINT `fk_orders_items` FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE SET NULL",
		"ALTER TABLE items ADD FOREIGN KEY (order_id) REFERENCES orders (id)")
	require.Contains(t, logs.String(), "ALTER TABLE: recorded CONSTRAINT fk_orders_items FOREIGN KEY")
	require.Equal(t, []string{"fk_orders_items", "items_ibfk_2"}, rowsOf(t, conn,
		"SELECT constraint_name FROM information_schema.table_constraints WHERE table_name = 'items' AND constraint_type = 'FOREIGN KEY' ORDER BY constraint_name"))
	var create string
	require.NoError(t, conn.QueryRowContext(ctx, "SHOW CREATE TABLE items").Scan(new(string), &create))
	require.Contains(t, create, "CONSTRAINT fk_orders_items FOREIGN KEY (order_id) REFERENCES fluss.orders (id) ON UPDATE SET NULL")
	execAll(t, conn, "ALTER TABLE `items` DROP CONSTRAINT `fk_orders_items`", "ALTER TABLE items DROP FOREIGN KEY items_ibfk_2")
	require.Equal(t, []string{"0"}, rowsOf(t, conn, "SELECT count(*) FROM information_schema.referential_constraints WHERE table_name = 'items'"))

	for _, bad := range []struct{ q, want string }{
		{"ALTER TABLE items DROP CONSTRAINT fk_gone", `no foreign key "fk_gone"`},
		{"ALTER TABLE items DROP FOREIGN KEY fk_gone", `no foreign key "fk_gone"`},
		{"ALTER TABLE users DROP CONSTRAINT idx_email", "is an index, not a foreign key"},
		{"ALTER TABLE orders ADD CONSTRAINT fk_users_orders FOREIGN KEY (user_id) REFERENCES users (id)", `already has a constraint named "fk_users_orders"`},
		{"ALTER TABLE items ADD FOREIGN KEY (nope) REFERENCES orders (id)", `"nope"`},
		// With foreign_key_checks on (the default) the parent must exist,
		// with the referenced columns, of the same type.
		{"ALTER TABLE items ADD FOREIGN KEY (order_id) REFERENCES ghosts (id)", "ghosts"},
		{"ALTER TABLE items ADD FOREIGN KEY (order_id) REFERENCES orders (nope)", `"nope"`},
		{"ALTER TABLE items ADD FOREIGN KEY (order_id) REFERENCES users (email)", "is BIGINT but fluss.users.email is STRING"},
		{"CREATE TABLE t2 (a BIGINT, FOREIGN KEY (a) REFERENCES ghosts (id))", "ghosts"},
		// ... and a referenced table is not dropped.
		{"DROP TABLE users", "Cannot drop table 'users' referenced by a foreign key constraint 'fk_users_orders' on table 'orders'"},
	} {
		_, err := conn.ExecContext(ctx, bad.q)
		require.ErrorContains(t, err, bad.want, bad.q)
	}
	_, err := conn.ExecContext(ctx, "DROP TABLE users")
	require.ErrorIs(t, err, metadata.ErrConstraint)
	// CREATE TABLE IF NOT EXISTS of a table that exists creates nothing,
	// so its keys are not checked.
	execAll(t, conn, "CREATE TABLE IF NOT EXISTS items (id BIGINT, FOREIGN KEY (id) REFERENCES ghosts (id))")

	// SET FOREIGN_KEY_CHECKS = 0 lets a key name a parent not created
	// yet, and a parent be dropped (what GORM's Migrator().DropTable
	// sends around its DROP TABLE ... CASCADE).
	execAll(t, conn, "SET FOREIGN_KEY_CHECKS = 0",
		"CREATE TABLE t2 (a BIGINT, FOREIGN KEY (a) REFERENCES ghosts (id))",
		"DROP TABLE IF EXISTS `users` CASCADE",
		"SET FOREIGN_KEY_CHECKS = 1")
	require.Equal(t, []string{"0"}, rowsOf(t, conn, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'users'"))
	require.Equal(t, []string{"t2_ibfk_1|ghosts|<nil>"}, rowsOf(t, conn,
		"SELECT constraint_name, referenced_table_name, unique_constraint_name FROM information_schema.referential_constraints WHERE table_name = 't2'"))
}
