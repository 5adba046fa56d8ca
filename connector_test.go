package fluss_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// TestSecondDSNEngineOptions pins issue 15 item 8: a second handle on a
// directory already open in the process shares its engine, and used to
// take that engine's options silently (sync=off writes for a handle that
// asked for sync=on, one bucket where it asked for eight). Engine options
// that differ are an error naming each option and both values; options of
// the connection may differ and apply to their own handle.
func TestSecondDSNEngineOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	first, err := sql.Open("fluss", dir+"?sync=off")
	require.NoError(t, err)
	mustExec(t, first, `CREATE TABLE ev (id INT, at TIMESTAMP_LTZ(3))`)
	mustExec(t, first, `INSERT INTO ev VALUES (1, '2026-06-01 12:00:00')`)

	_, err = sql.Open("fluss", dir+"?sync=on&default.bucket.number=8")
	require.ErrorIs(t, err, fluss.ErrInvalidOption)
	require.ErrorContains(t, err, "sync=on, but the engine has sync=off")
	require.ErrorContains(t, err, "default.bucket.number=8, but the engine has default.bucket.number=1")
	// A DSN that leaves an engine option out asks for its default.
	_, err = sql.Open("fluss", dir)
	require.ErrorIs(t, err, fluss.ErrInvalidOption)
	require.ErrorContains(t, err, "sync=on, but the engine has sync=off")
	for _, dsn := range []string{
		dir + "?sync=off&tiering=off",
		dir + "?sync=off&kv.snapshot.interval=1m",
		dir + "?sync=off&log.segment.file-size=1mb",
	} {
		_, err = sql.Open("fluss", dsn)
		require.ErrorIs(t, err, fluss.ErrInvalidOption, dsn)
	}
	_, err = sql.Open("fluss", dir+"?sync=off&log.segment.file-size=1mb")
	require.ErrorContains(t, err, "log.segment.file-size=1mb, but the engine has log.segment.file-size=64mb")

	// The same engine options, other connection options: one engine, each
	// handle with its own time zone.
	second, err := sql.Open("fluss", dir+"?sync=0&log.segment.file-size=65536kb&loc=Asia/Tokyo&threads=1&memory.limit=64mb&scan.max-records-per-split=10")
	require.NoError(t, err)
	defer second.Close()
	var at1, at2 time.Time
	require.NoError(t, first.QueryRow(`SELECT at FROM ev`).Scan(&at1))
	require.NoError(t, second.QueryRow(`SELECT at FROM ev`).Scan(&at2))
	require.True(t, at1.Equal(at2))
	require.Equal(t, "UTC", at1.Location().String())
	require.Equal(t, "Asia/Tokyo", at2.Location().String())

	// Once every handle is closed the directory opens with new options.
	require.NoError(t, first.Close())
	require.NoError(t, second.Close())
	third, err := sql.Open("fluss", dir+"?sync=on&default.bucket.number=8")
	require.NoError(t, err)
	defer third.Close()
	mustExec(t, third, `CREATE TABLE wide (id INT)`)
	var name, stmt string
	require.NoError(t, third.QueryRow("SHOW CREATE TABLE wide").Scan(&name, &stmt))
	require.Contains(t, stmt, "'bucket.num' = '8'")
	require.Equal(t, [][]any{{int64(1)}}, queryAll(t, third, `SELECT count(*) FROM ev`))

	// In-memory engines are never shared, so their options never clash.
	for _, dsn := range []string{":memory:?sync=off", ":memory:?default.bucket.number=8"} {
		db, err := sql.Open("fluss", dsn)
		require.NoError(t, err, dsn)
		defer db.Close()
	}
}
