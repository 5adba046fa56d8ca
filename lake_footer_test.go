package fluss_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// TestLakeStoredSchemaFlip replays the flip TestCorruptFilesNeverReadAsData
// met at -corrupt.flips 96 (seed 20260101, flip 62 of "Parquet file of a
// log table": lake/1/data/-/b1/1-0.parquet byte 1266 ^= 0x2c), which
// made arrow-go allocate 32 GiB decoding the file's stored Arrow schema
// and got the process killed. The offset is taken from the stored
// schema's start, where the flip lands whatever the file's size: the 22nd
// base64 character of the value, in the schema message's vtable.
func TestLakeStoredSchemaFlip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("fluss", dir+"?tiering=off")
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE TABLE t (id BIGINT, s STRING) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`,
		`INSERT INTO t VALUES (1, 's1'), (2, 's2'), (3, 's3'), (4, 's4')`,
		`CALL sys.tier('t')`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	files, err := filepath.Glob(filepath.Join(dir, "lake", "*", "data", "-", "b*", "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	name := files[0]
	rel, err := filepath.Rel(filepath.Join(dir, "lake"), name)
	require.NoError(t, err)
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	key := bytes.Index(data, []byte("ARROW:schema"))
	require.Greater(t, key, 0)
	// The value is base64 of an IPC message opening with the 0xffffffff
	// continuation marker.
	value := bytes.Index(data[key:], []byte("/////"))
	require.Greater(t, value, 0)
	data[key+value+21] ^= 0x2c
	require.NoError(t, os.WriteFile(name, data, 0o644))

	db, err = sql.Open("fluss", dir+"?tiering=off")
	require.NoError(t, err)
	defer db.Close()
	_, err = corruptQuery(db, `SELECT id, s FROM t`)
	require.ErrorIs(t, err, fluss.ErrCorrupt)
	require.ErrorContains(t, err, filepath.ToSlash(rel))
}
