package fluss_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// tree maps every file and directory under dir (relative, slash
// separated) to its contents ("/" for a directory), leaving out LOCK,
// which an open creates.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return out
	}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || rel == "LOCK" {
			return err
		}
		if d.IsDir() {
			out[filepath.ToSlash(rel)] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return out
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(t, os.WriteFile(name, []byte(content), 0o644))
}

// openErr opens dsn and runs SELECT 1, returning the first error.
func openErr(dsn string) error {
	db, err := sql.Open("fluss", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`SELECT 1`)
	return err
}

// TestOpenRefusesEngineFilesWithoutCatalog: a directory holding what the
// engine writes but no catalog.json is not a new database; opening it
// once deleted every file under data/ and kv-snapshots/ it did not know.
func TestOpenRefusesEngineFilesWithoutCatalog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"photos under data", []string{"data/photos/img1.jpg"}, "data/"},
		{"kv-snapshots", []string{"kv-snapshots/1/b0/notes.txt"}, "kv-snapshots/"},
		{"lake", []string{"lake/1/snapshots/keep.json"}, "lake/"},
		{"journal", []string{"commits.log"}, "commits.log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			for _, f := range tc.files {
				writeFile(t, filepath.Join(dir, f), "precious")
			}
			before := tree(t, dir)
			err := openErr(dir)
			require.ErrorIs(t, err, fluss.ErrCorrupt)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), "catalog.json is missing")
			require.Equal(t, before, tree(t, dir), "a refused open changes nothing")
		})
	}

	t.Run("a real database whose catalog is lost", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "db")
		db, err := sql.Open("fluss", dir+"?tiering=off")
		require.NoError(t, err)
		mustExec(t, db, `CREATE TABLE t (id BIGINT) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`)
		mustExec(t, db, `CREATE TABLE k (id BIGINT PRIMARY KEY NOT ENFORCED, v STRING)`)
		for i := range 150 {
			mustExec(t, db, `INSERT INTO t VALUES (?)`, i)
		}
		mustExec(t, db, `INSERT INTO k VALUES (1, 'a'), (2, 'b')`)
		snapshot(t, db, "k")
		tier(t, db, "t")
		require.NoError(t, db.Close())

		cat := filepath.Join(dir, "catalog.json")
		saved, err := os.ReadFile(cat)
		require.NoError(t, err)
		require.NoError(t, os.Remove(cat))
		before := tree(t, dir)
		err = openErr(dir + "?tiering=off")
		require.ErrorIs(t, err, fluss.ErrCorrupt)
		require.Contains(t, err.Error(), "catalog.json is missing")
		require.Equal(t, before, tree(t, dir), "nothing of the database is removed")

		// With the catalog back, every row is still there.
		require.NoError(t, os.WriteFile(cat, saved, 0o644))
		db, err = sql.Open("fluss", dir+"?tiering=off")
		require.NoError(t, err)
		defer db.Close()
		require.Equal(t, [][]any{{int64(150)}}, queryAll(t, db, `SELECT count(*) FROM t`))
		require.Equal(t, [][]any{{int64(2)}}, queryAll(t, db, `SELECT count(*) FROM k`))
	})
}

// TestDirectoryWithoutEngineFilesOpensAsNew: only what the engine writes
// makes a directory a database; a fresh one is created with its catalog
// before anything else, so the second open of it is not refused.
func TestDirectoryWithoutEngineFilesOpensAsNew(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
	}{
		{"missing", nil},
		{"only a lock file", []string{"LOCK"}},
		{"foreign files", []string{"notes.txt", "photos/img1.jpg", "data2/x", "catalog.json.bak"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			for _, f := range tc.files {
				writeFile(t, filepath.Join(dir, f), "precious")
			}
			foreign := tree(t, dir)
			require.NoError(t, openErr(dir))
			require.FileExists(t, filepath.Join(dir, "catalog.json"), "the catalog is written when the database is created")
			db, err := sql.Open("fluss", dir)
			require.NoError(t, err)
			mustExec(t, db, `CREATE TABLE t (id BIGINT)`)
			mustExec(t, db, `INSERT INTO t VALUES (1)`)
			require.NoError(t, db.Close())
			db, err = sql.Open("fluss", dir)
			require.NoError(t, err)
			require.Equal(t, [][]any{{int64(1)}}, queryAll(t, db, `SELECT count(*) FROM t`))
			require.NoError(t, db.Close())
			after := tree(t, dir)
			for name, content := range foreign {
				require.Equal(t, content, after[name], name)
			}
		})
	}
}

// TestTableIDNotReusedWhileItsFilesRemain: a catalog.json older than the
// files (restored from a backup) once gave the next table the id of one
// whose lake was still on disk; the new table adopted it and counted 151
// rows where it had one.
func TestTableIDNotReusedWhileItsFilesRemain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	dsn := dir + "?tiering=off"
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	mustExec(t, db, `CREATE DATABASE scratch`)
	require.NoError(t, db.Close())
	cat := filepath.Join(dir, "catalog.json")
	backup, err := os.ReadFile(cat)
	require.NoError(t, err)

	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE old (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	for i := range 150 {
		mustExec(t, db, `INSERT INTO old VALUES (?)`, i)
	}
	tier(t, db, "old")
	require.NoError(t, db.Close())
	require.NoError(t, os.WriteFile(cat, backup, 0o644))

	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()
	mustExec(t, db, `CREATE TABLE fresh (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO fresh VALUES (1)`)
	tier(t, db, "fresh")
	require.Equal(t, [][]any{{int64(1)}}, queryAll(t, db, `SELECT count(*) FROM fresh`))
	require.DirExists(t, filepath.Join(dir, "data", "1"), "the files of the table the catalog forgot are kept")
	require.DirExists(t, filepath.Join(dir, "lake", "1"))
}

// lakeTableDirs lists the table directories under dir/lake.
func lakeTableDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "lake"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if _, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestDroppedTablesLeaveNoLake: DROP DATABASE ... CASCADE left the lake
// of its tables behind, and DDL churn with concurrent CALL sys.tier left
// lake/<id>/ of dropped tables (9 after a minute).
func TestDroppedTablesLeaveNoLake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	dsn := dir + "?tiering=off"
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()

	mustExec(t, db, `CREATE DATABASE d`)
	mustExec(t, db, `CREATE TABLE d.t (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO d.t VALUES (1), (2)`)
	tier(t, db, "d.t")
	require.NotEmpty(t, lakeTableDirs(t, dir))
	mustExec(t, db, `DROP DATABASE d CASCADE`)
	require.Empty(t, lakeTableDirs(t, dir), "DROP DATABASE CASCADE removes the lakes of its tables")
	churnWithTiering(t, db)
	require.NoError(t, db.Close())
	require.NoError(t, openErr(dsn))
	require.Empty(t, lakeTableDirs(t, dir), "no lake of a dropped table is left after a reopen")
}

// churnWithTiering creates, fills and drops lake tables in a loop while
// other goroutines tier them.
func churnWithTiering(t *testing.T, db *sql.DB) {

	duration := 2 * time.Second
	if testing.Short() {
		duration = 500 * time.Millisecond
	}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 2 {
		wg.Add(2)
		name := fmt.Sprintf("churn%d", w)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				for _, q := range []string{
					`CREATE TABLE ` + name + ` (id BIGINT, p STRING) PARTITIONED BY (p) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`,
					`INSERT INTO ` + name + ` VALUES (1, 'a'), (2, 'b'), (3, 'a')`,
					`INSERT INTO ` + name + ` VALUES (4, 'c')`,
					`DROP TABLE ` + name,
				} {
					if _, err := db.Exec(q); err != nil {
						errs <- fmt.Errorf("%s: %w", q, err)
						return
					}
				}
			}
		}()
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				rows, err := db.Query(`CALL sys.tier('` + name + `')`)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
				// A table dropped under a round is not found; the
				// round must not claim a recovery will record it.
				if err != nil && (!strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "recovery records it")) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// catalogTableID reads the id of a table of the default database from
// the catalog.
func catalogTableID(t *testing.T, dir, table string) int64 {
	t.Helper()
	id, _ := catalogTable(t, dir, table)
	return id
}

// catalogTable reads the id and the partition ids of a table of the
// default database from the catalog.
func catalogTable(t *testing.T, dir, table string) (int64, []int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "catalog.json"))
	require.NoError(t, err)
	var cat struct {
		Databases map[string]struct {
			Tables map[string]struct {
				Info struct {
					TableID int64 `json:"table_id"`
				} `json:"info"`
				Partitions []struct {
					ID int64 `json:"id"`
				} `json:"partitions"`
			} `json:"tables"`
		} `json:"databases"`
	}
	require.NoError(t, json.Unmarshal(b, &cat))
	entry, ok := cat.Databases["fluss"].Tables[table]
	require.True(t, ok, table)
	var parts []int64
	for _, p := range entry.Partitions {
		parts = append(parts, p.ID)
	}
	return entry.Info.TableID, parts
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// plantForeign puts files and directories the engine never writes into
// every directory under dir, some named almost as the engine's own, and
// returns what it planted.
func plantForeign(t *testing.T, dir string) map[string]string {
	t.Helper()
	var dirs []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	}))
	planted := map[string]string{}
	plant := func(name, content string) {
		writeFile(t, name, content)
		rel, err := filepath.Rel(dir, name)
		require.NoError(t, err)
		planted[filepath.ToSlash(rel)] = content
	}
	for i, d := range dirs {
		plant(filepath.Join(d, "notes.txt"), fmt.Sprintf("precious %d", i))
		plant(filepath.Join(d, "photos", "img1.jpg"), "precious photo")
		// Directories named as the engine's own, with ids the catalog
		// never allocated, or buckets beyond the table's.
		for _, near := range []string{"9999", "p999", "b7"} {
			plant(filepath.Join(d, near, "keep.txt"), "kept "+near)
		}
		for _, near := range []string{"007", "99", "p0x", "b01", "notes.index", "+5.log", "00000000000000000000.log.bak", "x.snap.tmp", "x.tmp", "extra.parquet", "1-x.parquet"} {
			plant(filepath.Join(d, near), "near "+near)
		}
	}
	return planted
}

// TestForeignFilesSurviveOpen: files the engine did not write survive
// every open, the removal of a dropped table's and partition's leftovers
// included, and DROP TABLE and DROP PARTITION too.
func TestForeignFilesSurviveOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	dsn := dir + "?tiering=off"
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE t (id BIGINT) WITH ('bucket.num' = '2')`)
	mustExec(t, db, `CREATE TABLE pt (id BIGINT, p STRING) PARTITIONED BY (p)`)
	mustExec(t, db, `CREATE TABLE k (id BIGINT PRIMARY KEY NOT ENFORCED, v STRING)`)
	mustExec(t, db, `CREATE TABLE lk (id BIGINT, p STRING) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE gone (id BIGINT PRIMARY KEY NOT ENFORCED) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE later (id BIGINT, p STRING) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO t VALUES (1), (2), (3)`)
	mustExec(t, db, `INSERT INTO pt VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	mustExec(t, db, `INSERT INTO k VALUES (1, 'x'), (2, 'y')`)
	mustExec(t, db, `INSERT INTO lk VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `INSERT INTO gone VALUES (1)`)
	mustExec(t, db, `INSERT INTO later VALUES (1, 'a'), (2, 'b')`)
	snapshot(t, db, "k")
	snapshot(t, db, "gone")
	tier(t, db, "lk")
	tier(t, db, "gone")
	tier(t, db, "later")
	require.NoError(t, db.Close())
	goneID := catalogTableID(t, dir, "gone")

	// A drop interrupted after the catalog forgot the table: its files
	// are still there at the next open.
	saved := filepath.Join(t.TempDir(), "gone")
	id := strconv.FormatInt(goneID, 10)
	for _, sub := range []string{"data", "kv-snapshots", "lake"} {
		copyTree(t, filepath.Join(dir, sub, id), filepath.Join(saved, sub))
	}
	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	mustExec(t, db, `DROP TABLE gone`)
	mustExec(t, db, `ALTER TABLE pt DROP PARTITION (p = 'b')`)
	require.NoError(t, db.Close())
	for _, sub := range []string{"data", "kv-snapshots", "lake"} {
		copyTree(t, filepath.Join(saved, sub), filepath.Join(dir, sub, id))
	}

	ptID, _ := catalogTable(t, dir, "pt")
	planted := plantForeign(t, dir)
	check := func(when string) {
		t.Helper()
		now := tree(t, dir)
		for name, content := range planted {
			require.Equal(t, content, now[name], "%s: %s", when, name)
		}
	}
	for round := range 3 {
		db, err = sql.Open("fluss", dsn)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2, 3}, ids(t, db, `SELECT id FROM t`))
		if round < 2 {
			require.Equal(t, []int64{1, 3}, ids(t, db, `SELECT id FROM pt`))
		} else {
			require.Equal(t, []int64{1}, ids(t, db, `SELECT id FROM pt`))
		}
		require.Equal(t, []int64{1, 2}, ids(t, db, `SELECT id FROM k`))
		require.Equal(t, []int64{1, 2}, ids(t, db, `SELECT id FROM lk`))
		if round == 1 {
			mustExec(t, db, `ALTER TABLE lk DROP PARTITION (p = 'b')`)
			mustExec(t, db, `ALTER TABLE pt DROP PARTITION (p = 'c')`)
			mustExec(t, db, `DROP TABLE later`)
		}
		require.NoError(t, db.Close())
		check(fmt.Sprintf("open %d", round))
	}
	// The dropped table's and partitions' own files went; what was
	// planted among them stayed.
	_, livePartitions := catalogTable(t, dir, "pt")
	for name, content := range tree(t, dir) {
		if _, ok := planted[name]; ok || content == "/" {
			continue
		}
		if rest, ok := strings.CutPrefix(name, fmt.Sprintf("data/%d/p", ptID)); ok {
			pid, err := strconv.ParseInt(strings.Split(rest, "/")[0], 10, 64)
			require.NoError(t, err, name)
			require.Contains(t, livePartitions, pid, "%s of a dropped partition is left", name)
		}
		if strings.HasPrefix(name, "data/"+id+"/") || strings.HasPrefix(name, "kv-snapshots/"+id+"/") || strings.HasPrefix(name, "lake/"+id+"/") {
			require.Fail(t, "a file of the dropped table is left", name)
		}
	}
}
