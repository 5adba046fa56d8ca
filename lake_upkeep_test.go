package fluss_test

import (
	"database/sql"
	"encoding/csv"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// openDir opens the database in dir with the DSN options opts; the caller
// may close it early.
func openDir(t *testing.T, dir, opts string) *sql.DB {
	t.Helper()
	db, err := sql.Open("fluss", dir+"?"+opts)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// lakeParquetFiles lists the Parquet files under a database's lake.
func lakeParquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// A key table tiered round after round keeps the snapshots its retention
// asks for and the files they need, no more; a transaction whose view
// holds an old snapshot keeps its files until it ends; t$lake$snapshots
// lists what is kept, and the file list beside the manifests names
// exactly the newest snapshot's files.
func TestLakeSnapshotRetention(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := openDir(t, dir, "tiering=off")
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)
		WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2', 'table.datalake.snapshot.retention' = '3')`)
	var vals []string
	for i := range 100 {
		vals = append(vals, fmt.Sprintf("(%d, 0)", i))
	}
	mustExec(t, db, `INSERT INTO kv VALUES `+strings.Join(vals, ", "))
	round := func(r int) {
		t.Helper()
		// 10% of the rows change each round.
		mustExec(t, db, `UPDATE kv SET v = ? WHERE id >= ? AND id < ?`, r, (r*10)%100, (r*10)%100+10)
		queryAll(t, db, `CALL sys.tier('kv')`)
	}
	for r := 1; r <= 5; r++ {
		round(r)
	}
	snaps := queryAll(t, db, "SELECT snapshot_id, files, rows, readable FROM `kv$lake$snapshots` ORDER BY snapshot_id")
	require.Equal(t, [][]any{{int64(3), int64(2), int64(100), false}, {int64(4), int64(2), int64(100), false}, {int64(5), int64(2), int64(100), true}}, snaps)
	require.Len(t, lakeParquetFiles(t, dir), 6, "the two files of snapshot 5 and the two undo files each of 4 and 5")

	// A transaction reading the lake pins snapshot 5.
	tx, err := db.Begin()
	require.NoError(t, err)
	var sum int64
	require.NoError(t, tx.QueryRow("SELECT sum(v) FROM `kv$lake`").Scan(&sum))
	for r := 6; r <= 10; r++ {
		round(r)
	}
	ids := queryAll(t, db, "SELECT snapshot_id FROM `kv$lake$snapshots` ORDER BY snapshot_id")
	// 5 is pinned by the open transaction, and 6 and 7 stay with it: a
	// key table's older snapshot is read through the undo files of every
	// snapshot after it.
	require.Equal(t, [][]any{{int64(5)}, {int64(6)}, {int64(7)}, {int64(8)}, {int64(9)}, {int64(10)}}, ids)
	var again int64
	require.NoError(t, tx.QueryRow("SELECT sum(v) FROM `kv$lake`").Scan(&again))
	require.Equal(t, sum, again, "the transaction reads the snapshot of its view")
	require.NoError(t, tx.Commit())
	round(11)
	ids = queryAll(t, db, "SELECT snapshot_id FROM `kv$lake$snapshots` ORDER BY snapshot_id")
	require.Equal(t, [][]any{{int64(9)}, {int64(10)}, {int64(11)}}, ids)
	files := lakeParquetFiles(t, dir)
	require.Len(t, files, 6)

	// The file list names the newest snapshot's files.
	lists, err := filepath.Glob(filepath.Join(dir, "lake", "*", "snapshots", "files.csv"))
	require.NoError(t, err)
	require.Len(t, lists, 1)
	f, err := os.Open(lists[0])
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"path", "snapshot_id", "partition", "bucket", "rows"}, recs[0])
	require.Len(t, recs, 3, "a header and the two files of snapshot 11")
	var listedRows int
	for _, r := range recs[1:] {
		require.Equal(t, "11", r[1])
		require.FileExists(t, r[0])
		var n int
		fmt.Sscan(r[4], &n)
		listedRows += n
	}
	require.Equal(t, 100, listedRows)

	// The same after a reopen; the retention may change.
	require.NoError(t, db.Close())
	db = openDir(t, dir, "tiering=off")
	mustExec(t, db, `ALTER TABLE kv SET ('table.datalake.snapshot.retention' = '1')`)
	round(12)
	require.Equal(t, [][]any{{int64(12), true}}, queryAll(t, db, "SELECT snapshot_id, readable FROM `kv$lake$snapshots`"))
	require.Len(t, lakeParquetFiles(t, dir), 2)
	_, err = db.Exec(`ALTER TABLE kv SET ('table.datalake.snapshot.retention' = '0')`)
	require.ErrorContains(t, err, "at least 1")
}

// t$lake$snapshots is refused on a table without a lake, and EXPLAIN
// names it.
func TestLakeSnapshotsTable(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE plain (id BIGINT)`)
	_, err := db.Query("SELECT * FROM `plain$lake$snapshots`")
	require.ErrorContains(t, err, "not lake-enabled")
	mustExec(t, db, `CREATE TABLE lg (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	require.Empty(t, queryAll(t, db, "SELECT * FROM `lg$lake$snapshots`"))
	mustExec(t, db, `INSERT INTO lg VALUES (1), (2)`)
	queryAll(t, db, `CALL sys.tier('lg')`)
	rows := queryAll(t, db, "SELECT snapshot_id, files, rows, tiered_offsets, readable FROM `lg$lake$snapshots`")
	require.Equal(t, [][]any{{int64(1), int64(1), int64(2), "0:2", true}}, rows)
	plan := queryAll(t, db, "EXPLAIN SELECT * FROM `lg$lake$snapshots`")
	require.Contains(t, fmt.Sprint(plan), "LakeSnapshots")
	_, err = db.Exec("INSERT INTO `lg$lake$snapshots` VALUES (1)")
	require.Error(t, err)
}

// A log table tiered round after round keeps few files: four small ones
// of a size class are rewritten into one, with the same rows, offsets and
// commit times; a target below the files' size turns it off.
func TestLakeCompactsSmallLogFiles(t *testing.T) {
	for _, c := range []struct {
		target  string
		maxFile int64
	}{{"128 mb", 4}, {"1 kb", 13}} {
		t.Run(c.target, func(t *testing.T) {
			db, _ := openDB(t, "tiering=off")
			mustExec(t, db, `CREATE TABLE lg (id BIGINT, s STRING) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '1',
				'table.datalake.compaction.target-file-size' = '`+c.target+`')`)
			want := [][]any{}
			for r := range 13 {
				mustExec(t, db, `INSERT INTO lg VALUES (?, 'x'), (?, 'y')`, 2*r, 2*r+1)
				want = append(want, []any{int64(2 * r), "x"}, []any{int64(2*r + 1), "y"})
				queryAll(t, db, `CALL sys.tier('lg')`)
				got := queryAll(t, db, "SELECT id, s FROM `lg$lake` ORDER BY id")
				require.Equal(t, want, got, "round %d", r)
			}
			var files int64
			require.NoError(t, db.QueryRow("SELECT files FROM `lg$lake$snapshots` WHERE readable").Scan(&files))
			require.LessOrEqual(t, files, c.maxFile)
			if c.maxFile < 13 {
				require.Less(t, files, int64(13), "compacted")
			} else {
				require.Equal(t, int64(13), files, "nothing below the target")
			}
			// The offsets and commit times are the log's.
			lake := queryAll(t, db, "SELECT id FROM `lg$lake` WHERE id >= 20 ORDER BY id")
			require.Len(t, lake, 6)
			require.Equal(t, [][]any{{int64(26)}}, queryAll(t, db, `SELECT count(*) FROM lg`))
		})
	}
	db, _ := openDB(t)
	_, err := db.Exec(`CREATE TABLE bad (id BIGINT) WITH ('table.datalake.compaction.target-file-size' = '10')`)
	require.ErrorContains(t, err, "at least 1 kb")
}
