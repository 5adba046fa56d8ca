package fluss

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// SET changes the connection's variables, which SHOW VARIABLES,
// information_schema.session_variables and @@name read back; a bad
// assignment is an error naming what was wrong and changes nothing.
func TestSetAndShowVariables(t *testing.T) {
	db, conn := openConn(t, ":memory:", nil)
	ctx := context.Background()
	one := func(c *sql.Conn, q string, args ...any) string {
		t.Helper()
		out := rowsOf(t, c, q, args...)
		require.Len(t, out, 1, q)
		return out[0]
	}
	// What GORM's and bun's dialectors ask.
	require.Equal(t, "8.0.0-fluss-0.1", one(conn, "SELECT VERSION()"))
	require.Equal(t, "8.0.0-fluss-0.1", one(conn, "SELECT @@version"))
	require.Equal(t, "version|8.0.0-fluss-0.1", one(conn, "SHOW VARIABLES LIKE 'version'"))
	require.Equal(t, []string{"version|8.0.0-fluss-0.1", "version_comment|fluss"}, rowsOf(t, conn, "SHOW SESSION VARIABLES LIKE 'VERSION%'"))
	require.Equal(t, "1|1", one(conn, "SELECT @@autocommit, @@SESSION.foreign_key_checks"), "numbers, as MySQL returns them")

	execAll(t, conn,
		"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci",
		"SET SESSION sql_mode = 'strict_all_tables,no_zero_date', @@session.time_zone = '+05:30', FOREIGN_KEY_CHECKS = OFF",
		"SET autocommit = 1",
	)
	rows, err := conn.QueryContext(ctx, "SHOW VARIABLES WHERE Variable_name IN ('sql_mode', 'time_zone', 'foreign_key_checks', 'collation_connection')")
	require.NoError(t, err)
	cols, err := rows.Columns()
	require.NoError(t, err)
	require.Equal(t, []string{"Variable_name", "Value"}, cols, "MySQL's column names")
	require.NoError(t, rows.Close())
	require.Equal(t, []string{
		"collation_connection|utf8mb4_unicode_ci",
		"foreign_key_checks|OFF",
		"sql_mode|STRICT_ALL_TABLES,NO_ZERO_DATE",
		"time_zone|+05:30",
	}, rowsOf(t, conn, "SHOW VARIABLES WHERE Variable_name IN ('sql_mode', 'time_zone', 'foreign_key_checks', 'collation_connection')"))
	require.Equal(t, "STRICT_ALL_TABLES,NO_ZERO_DATE|+05:30|0", one(conn, "SELECT @@sql_mode, @@session.time_zone, @@foreign_key_checks"))
	require.Equal(t, "+05:30", one(conn, "SELECT variable_value FROM information_schema.session_variables WHERE variable_name = 'time_zone'"))

	// Variables are the connection's: another one starts from the
	// defaults.
	other, err := db.Conn(ctx)
	require.NoError(t, err)
	defer other.Close()
	require.Equal(t, "ON", one(other, "SELECT variable_value FROM information_schema.session_variables WHERE variable_name = 'foreign_key_checks'"))
	require.Equal(t, "UTC", one(other, "SELECT @@time_zone"))

	for _, bad := range []struct {
		q, want string
		is      error
	}{
		{"SET nonsense = 1", "Unknown system variable 'nonsense'", metadata.ErrNotFound},
		{"SELECT @@nonsense", "Unknown system variable 'nonsense'", metadata.ErrNotFound},
		{"SET @x = 1", "user variables are not supported", metadata.ErrUnsupported},
		{"SELECT @x", "user variables", metadata.ErrUnsupported},
		{"SET GLOBAL sql_mode = ''", "SET GLOBAL is not supported", metadata.ErrUnsupported},
		{"SET autocommit = 0", "SET autocommit = 0 is not supported", metadata.ErrUnsupported},
		{"SET foreign_key_checks = 2", "Variable 'foreign_key_checks' can't be set to the value of '2'", metadata.ErrInvalidValue},
		{"SET sql_mode = 'ANSI_QUOTES'", "sql_mode ANSI_QUOTES is not supported", metadata.ErrUnsupported},
		{"SET time_zone = 'Mars/Olympus'", "Unknown or incorrect time zone: 'Mars/Olympus'", metadata.ErrInvalidValue},
		{"SET time_zone = '+14:30'", "Unknown or incorrect time zone: '+14:30'", metadata.ErrInvalidValue},
		{"SET NAMES latin1", `character set "latin1" is not supported`, metadata.ErrUnsupported},
		{"SET version = 'x'", "Variable 'version' is a read only variable", metadata.ErrUnsupported},
		// One bad assignment and the good one before it is not applied.
		{"SET time_zone = 'UTC', nonsense = 1", "Unknown system variable 'nonsense'", metadata.ErrNotFound},
	} {
		_, err := conn.ExecContext(ctx, bad.q)
		require.ErrorContains(t, err, bad.want, bad.q)
		require.ErrorIs(t, err, bad.is, bad.q)
	}
	require.Equal(t, "+05:30", one(conn, "SELECT @@time_zone"))
	execAll(t, conn, "SET sql_mode = DEFAULT, time_zone = DEFAULT")
	require.Equal(t, "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION|SYSTEM",
		one(conn, "SELECT @@sql_mode, @@time_zone"))
	// SET is no part of a transaction: it takes effect at once and
	// stays after a rollback, as in MySQL.
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "SET foreign_key_checks = 0")
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	require.Equal(t, "0", one(conn, "SELECT @@foreign_key_checks"))

	// A view does not depend on the connection.
	_, err = conn.ExecContext(ctx, "CREATE VIEW v AS SELECT @@version")
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}

// SET time_zone is the connection's loc: TIMESTAMP_LTZ values come back
// in it and time.Time arguments are moved into it before a TIMESTAMP
// takes their wall clock, as the DSN's loc does.
func TestSetTimeZoneMovesLoc(t *testing.T) {
	_, conn := openConn(t, ":memory:", nil)
	ctx := context.Background()
	at := time.Date(2026, 1, 3, 2, 30, 0, 0, time.UTC)
	execAll(t, conn, "CREATE TABLE ev (id INT, ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), PRIMARY KEY (id) NOT ENFORCED)")
	for _, c := range []struct{ tz, wall, zone string }{
		{"+05:30", "2026-01-03 08:00:00.000", "+05:30"},
		{"Asia/Tokyo", "2026-01-03 11:30:00.000", "JST"},
		{"UTC", "2026-01-03 02:30:00.000", "UTC"},
	} {
		execAll(t, conn, "SET time_zone = '"+c.tz+"'")
		_, err := conn.ExecContext(ctx, "INSERT INTO ev VALUES (1, ?, ?)", at, at)
		require.NoError(t, err)
		var ts string
		var lt time.Time
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT CAST(ts AS CHAR), lt FROM ev WHERE id = 1").Scan(&ts, &lt))
		require.Equal(t, c.wall, ts, "the argument took the wall clock of %s", c.tz)
		require.True(t, lt.Equal(at), "TIMESTAMP_LTZ keeps the instant: %v", lt)
		name, _ := lt.Zone()
		require.Equal(t, c.zone, name, "TIMESTAMP_LTZ is returned in %s", c.tz)
	}

	// A TIMESTAMP's DEFAULT CURRENT_TIMESTAMP takes its wall clock there
	// too: read back as text it is the TIMESTAMP_LTZ's instant in +05:30.
	execAll(t, conn, "CREATE TABLE d (id INT, ts TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3), lt TIMESTAMP_LTZ(3) DEFAULT CURRENT_TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED)",
		"SET time_zone = '+05:30'", "INSERT INTO d (id) VALUES (1)")
	var ts string
	var lt time.Time
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT CAST(ts AS CHAR), lt FROM d").Scan(&ts, &lt))
	require.Equal(t, lt.Format("2006-01-02 15:04:05.000"), ts)
	name, _ := lt.Zone()
	require.Equal(t, "+05:30", name)
}

// A SET lasts as long as its connection: database/sql hands the same
// connection back from its pool with the variable still set, as MySQL
// keeps it.
func TestSetSurvivesPoolReuse(t *testing.T) {
	ctr, err := NewConnector(":memory:")
	require.NoError(t, err)
	db := sql.OpenDB(ctr)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec("SET time_zone = '+02:00'")
	require.NoError(t, err)
	var tz string
	require.NoError(t, db.QueryRow("SELECT @@time_zone").Scan(&tz))
	require.Equal(t, "+02:00", tz)
}
