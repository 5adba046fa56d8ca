package fluss_test

import (
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

var corruptFlips = flag.Int("corrupt.flips", 24, "byte flips per file kind in TestCorruptFilesNeverReadAsData")

// corruptCase is one kind of file: how a directory holding it is made,
// which of its files are that kind, and the queries that read them with
// the rows each must return.
type corruptCase struct {
	kind    string
	setup   []string
	isFile  func(rel string) bool
	queries map[string][]string
}

// corruptRows renders rows as sorted lines.
func corruptRows(rows [][]any) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v %v", r[0], r[1]))
	}
	slices.Sort(out)
	return out
}

func corruptRange(from, to int, format string) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf(format, i, i))
	}
	slices.Sort(out)
	return out
}

func corruptCases() []corruptCase {
	insert := func(table string, from, to int, value string) string {
		var vals []string
		for i := from; i < to; i++ {
			vals = append(vals, fmt.Sprintf("(%d, '%s%d')", i, value, i))
		}
		return fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(vals, ", "))
	}
	log := []string{`CREATE TABLE t (id BIGINT, s STRING) WITH ('bucket.num' = '1')`}
	for i := range 6 {
		log = append(log, insert("t", 5*i, 5*i+5, "s"))
	}
	kv := []string{`CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')`,
		insert("t", 0, 30, "old"), insert("t", 0, 30, "s"), `CALL sys.kv_snapshot('t')`}
	lakeLog := []string{`CREATE TABLE t (id BIGINT, s STRING) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`,
		insert("t", 0, 20, "s"), `CALL sys.tier('t')`, insert("t", 20, 30, "s"), `CALL sys.tier('t')`}
	lakeKv := []string{`CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`,
		insert("t", 0, 30, "old"), `CALL sys.tier('t')`, insert("t", 0, 30, "s"), `CALL sys.tier('t')`}
	all := corruptRange(0, 30, "%d s%d")
	some := corruptRange(20, 30, "%d s%d")
	queries := map[string][]string{`SELECT id, s FROM t`: all, `SELECT id, s FROM t WHERE id >= 20`: some}
	isLake := func(ext string) func(string) bool {
		return func(rel string) bool {
			return strings.HasPrefix(rel, "lake"+string(filepath.Separator)) && filepath.Ext(rel) == ext
		}
	}
	return []corruptCase{
		{kind: "log segment", setup: log, queries: queries,
			// A damaged last batch was acknowledged: it is damage too,
			// never a torn tail to cut off.
			isFile: func(rel string) bool { return strings.HasPrefix(rel, "data") && filepath.Ext(rel) == ".log" }},
		{kind: "KV snapshot", setup: kv, queries: queries, isFile: func(rel string) bool { return filepath.Ext(rel) == ".snap" }},
		{kind: "Parquet file of a log table", setup: lakeLog, queries: queries, isFile: isLake(".parquet")},
		{kind: "Parquet file of a key table", setup: lakeKv, queries: queries, isFile: isLake(".parquet")},
		{kind: "lake manifest of a log table", setup: lakeLog, queries: queries, isFile: isLake(".json")},
		{kind: "lake manifest of a key table", setup: lakeKv, queries: queries, isFile: isLake(".json")},
	}
}

// TestCorruptFilesNeverReadAsData flips one byte at a time, at seeded
// offsets, in each kind of file the engine reads (log segments, KV
// snapshots, Parquet files and lake manifests), reopens a copy of the
// directory and runs queries that read the file. Each either returns the
// right rows (the byte did not matter) or fails with ErrCorrupt naming
// the file; it never returns a wrong row or panics.
func TestCorruptFilesNeverReadAsData(t *testing.T) {
	seed := uint64(20260101)
	rng := rand.New(rand.NewPCG(seed, 0x636f7272))
	tried, caught := 0, 0
	for _, c := range corruptCases() {
		t.Run(c.kind, func(t *testing.T) {
			pristine := filepath.Join(t.TempDir(), "db")
			db, err := sql.Open("fluss", pristine+"?tiering=off")
			require.NoError(t, err)
			for _, q := range c.setup {
				_, err := db.Exec(q)
				require.NoError(t, err, q)
			}
			for q, want := range c.queries {
				require.Equal(t, want, corruptRows(queryAll(t, db, q)), q)
			}
			require.NoError(t, db.Close())

			var files []string
			require.NoError(t, filepath.WalkDir(pristine, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(pristine, p)
				if c.isFile(rel) {
					files = append(files, rel)
				}
				return nil
			}))
			require.NotEmpty(t, files)

			for i := range *corruptFlips {
				file := files[i%len(files)]
				data, err := os.ReadFile(filepath.Join(pristine, file))
				require.NoError(t, err)
				// Every eighth flip goes into the last 64 bytes, where
				// headers, footers and the tail batch are.
				pos := rng.IntN(len(data))
				if i%8 == 7 {
					pos = max(0, len(data)-1-rng.IntN(64))
				}
				mask := byte(1 + rng.IntN(255))

				dir := filepath.Join(t.TempDir(), "db")
				require.NoError(t, os.CopyFS(dir, os.DirFS(pristine)))
				data[pos] ^= mask
				require.NoError(t, os.WriteFile(filepath.Join(dir, file), data, 0o644))
				what := fmt.Sprintf("%s byte %d ^= %#x (seed %d)", file, pos, mask, seed)
				tried++
				if corruptCheck(t, dir, c, filepath.Base(file), what) {
					caught++
				}
			}
		})
	}
	t.Logf("%d byte flips, %d reported as corruption, none read as data", tried, caught)
}

// corruptCheck opens dir and runs c's queries; it returns whether the
// damage was reported.
func corruptCheck(t *testing.T, dir string, c corruptCase, base, what string) (reported bool) {
	t.Helper()
	check := func(err error) bool {
		if err == nil {
			return false
		}
		require.ErrorIs(t, err, fluss.ErrCorrupt, what)
		require.ErrorContains(t, err, base, what)
		return true
	}
	db, err := sql.Open("fluss", dir+"?tiering=off")
	if err == nil {
		err = db.Ping()
	}
	if check(err) {
		return true
	}
	defer db.Close()
	for q, want := range c.queries {
		got, err := corruptQuery(db, q)
		if check(err) {
			reported = true
			continue
		}
		if !slices.Equal(want, got) {
			t.Fatalf("%s: %s read wrong rows:\n got %v\nwant %v", what, q, got, want)
		}
	}
	return reported
}

func corruptQuery(db *sql.DB, q string) ([]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return nil, err
		}
		out = append(out, []any{id, s})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return corruptRows(out), nil
}
