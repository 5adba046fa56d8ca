package fluss_test

import (
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// segmentFiles lists the log segment files of a database directory (its
// data/ folder; the KV store keeps files of its own elsewhere).
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "data"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".log") {
			out = append(out, path)
		}
		return nil
	}))
	sort.Strings(out)
	return out
}

// writeBatches creates a one-bucket table and writes one batch per
// statement, closing the database afterwards.
func writeBatches(t *testing.T, dsn string, batches int) {
	t.Helper()
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, s STRING) WITH ('bucket.num' = '1')`)
	for i := 0; i < batches; i++ {
		mustExec(t, db, `INSERT INTO t VALUES (?, ?), (?, ?)`, 2*i, "x", 2*i+1, "y")
	}
	require.NoError(t, db.Close())
}

// TestTornTailIsTruncatedOnOpen: a batch cut short past every
// acknowledged offset (a crash in the middle of the next statement's
// write) is truncated on open; nothing acknowledged is lost.
func TestTornTailIsTruncatedOnOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	writeBatches(t, dir, 5)
	segs := segmentFiles(t, dir)
	require.Len(t, segs, 1)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	// The start of one more batch: the first half of a copy of the
	// last one, after it.
	batch := len(data) / 5
	torn := append(data, data[len(data)-batch:len(data)-batch/2]...)
	require.NoError(t, os.WriteFile(segs[0], torn, 0o644))

	db, err := sql.Open("fluss", dir)
	require.NoError(t, err)
	defer db.Close()
	rows := queryAll(t, db, `SELECT id FROM t`)
	require.Len(t, rows, 10, "every acknowledged row survives")
	st, err := os.Stat(segs[0])
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), st.Size(), "the torn bytes are truncated away")
	for i, r := range rows {
		require.Equal(t, int64(i), r[0])
	}
	// The table keeps working: new rows land after the repaired tail.
	mustExec(t, db, `INSERT INTO t VALUES (100, 'z')`)
	require.Len(t, queryAll(t, db, `SELECT id FROM t`), 11)
	require.Equal(t, [][]any{{int64(100)}}, queryAll(t, db, `SELECT id FROM t WHERE s = 'z'`))
}

func TestCorruptionInsideSegmentIsReported(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	writeBatches(t, dir, 5)
	segs := segmentFiles(t, dir)
	require.Len(t, segs, 1)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	// Flip a byte inside the second batch (well before the tail).
	pos := len(data) / 4
	data[pos] ^= 0xff
	require.NoError(t, os.WriteFile(segs[0], data, 0o644))

	err = readAll(dir)
	require.Error(t, err)
	require.ErrorIs(t, err, fluss.ErrCorrupt)
	require.Contains(t, err.Error(), filepath.Base(segs[0]))
}

// readAll opens dsn and reads every row of t, returning the first error.
func readAll(dsn string) error {
	db, err := sql.Open("fluss", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id FROM t`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}
