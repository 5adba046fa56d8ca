package fluss_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// tamperDB is a database directory built by a list of statements, with
// the queries that read it and the rows each returns.
type tamperDB struct {
	name    string
	options string
	setup   []string
	queries map[string][]string
}

func tamperInserts(table string, from, to, per int, row func(i int) string) []string {
	var out []string
	for i := from; i < to; i += per {
		var vals []string
		for j := i; j < min(i+per, to); j++ {
			vals = append(vals, row(j))
		}
		out = append(out, fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(vals, ", ")))
	}
	return out
}

// tamperRange is the rows "i s<i>" for i in [from, to) that keep says stay.
func tamperRange(from, to int, keep func(int) bool, value func(int) string) []string {
	out := []string{}
	for i := from; i < to; i++ {
		if keep == nil || keep(i) {
			out = append(out, fmt.Sprintf("%d %s", i, value(i)))
		}
	}
	slices.Sort(out)
	return out
}

func tamperDBs() []tamperDB {
	sv := func(i int) string { return fmt.Sprintf("s%d", i) }
	pv := func(i int) string { return fmt.Sprintf("p%d", i%3) }
	logRow := func(i int) string { return fmt.Sprintf("(%d, 's%d')", i, i) }
	partRow := func(i int) string { return fmt.Sprintf("(%d, 'p%d')", i, i%3) }

	logSetup := append([]string{`CREATE TABLE t (id BIGINT, s STRING) WITH ('bucket.num' = '2')`},
		tamperInserts("t", 0, 300, 10, logRow)...)
	partSetup := append([]string{`CREATE TABLE t (id BIGINT, s STRING) PARTITIONED BY (s) WITH ('bucket.num' = '2')`},
		tamperInserts("t", 0, 300, 15, partRow)...)
	kvSetup := append([]string{`CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')`},
		tamperInserts("t", 0, 300, 20, logRow)...)
	kvSetup = append(kvSetup, `DELETE FROM t WHERE id % 7 = 0`, `CALL sys.kv_snapshot('t')`,
		`INSERT INTO t VALUES (7, 's7'), (301, 's301')`)
	kvWant := append(tamperRange(0, 300, func(i int) bool { return i%7 != 0 || i == 7 }, sv), "301 s301")
	slices.Sort(kvWant)
	lakeSetup := []string{`CREATE TABLE t (id BIGINT, s STRING) PARTITIONED BY (s) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`}
	lakeSetup = append(lakeSetup, tamperInserts("t", 0, 120, 30, partRow)...)
	lakeSetup = append(lakeSetup, `CALL sys.tier('t')`)
	lakeSetup = append(lakeSetup, tamperInserts("t", 120, 240, 30, partRow)...)
	lakeSetup = append(lakeSetup, `CALL sys.tier('t')`)
	lakeSetup = append(lakeSetup, tamperInserts("t", 240, 300, 30, partRow)...)
	lakeKvSetup := []string{`CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`}
	lakeKvSetup = append(lakeKvSetup, tamperInserts("t", 0, 200, 25, logRow)...)
	lakeKvSetup = append(lakeKvSetup, `CALL sys.tier('t')`, `DELETE FROM t WHERE id >= 150`)
	lakeKvSetup = append(lakeKvSetup, tamperInserts("t", 150, 160, 5, logRow)...)

	return []tamperDB{
		{name: "log table", options: "log.segment.file-size=1kb", setup: logSetup, queries: map[string][]string{
			`SELECT id, s FROM t`:                 tamperRange(0, 300, nil, sv),
			`SELECT id, s FROM t WHERE id >= 250`: tamperRange(250, 300, nil, sv),
		}},
		{name: "partitioned log table", options: "log.segment.file-size=1kb", setup: partSetup, queries: map[string][]string{
			`SELECT id, s FROM t`:                tamperRange(0, 300, nil, pv),
			`SELECT id, s FROM t WHERE s = 'p1'`: tamperRange(0, 300, func(i int) bool { return i%3 == 1 }, pv),
		}},
		{name: "key table", options: "log.segment.file-size=1kb", setup: kvSetup, queries: map[string][]string{
			`SELECT id, s FROM t`:               kvWant,
			`SELECT id, s FROM t WHERE id = 14`: {},
			`SELECT id, s FROM t WHERE id = 15`: {"15 s15"},
			`SELECT id, s FROM t WHERE id = 7`:  {"7 s7"},
		}},
		{name: "lake log table", setup: lakeSetup, queries: map[string][]string{
			`SELECT id, s FROM t`:                tamperRange(0, 300, nil, pv),
			`SELECT id, s FROM t WHERE s = 'p2'`: tamperRange(0, 300, func(i int) bool { return i%3 == 2 }, pv),
		}},
		{name: "lake key table", setup: lakeKvSetup, queries: map[string][]string{
			`SELECT id, s FROM t`:                tamperRange(0, 160, nil, sv),
			`SELECT id, s FROM t WHERE id = 42`:  {"42 s42"},
			`SELECT id, s FROM t WHERE id = 170`: {},
		}},
	}
}

// build creates c's database in a fresh directory, checks its queries
// and closes it.
func (c tamperDB) build(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("fluss", c.dsn(dir))
	require.NoError(t, err)
	for _, q := range c.setup {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	for q, want := range c.queries {
		require.Equal(t, want, corruptRows(queryAll(t, db, q)), q)
	}
	require.NoError(t, db.Close())
	return dir
}

func (c tamperDB) dsn(dir string) string {
	dsn := dir + "?tiering=off"
	if c.options != "" {
		dsn += "&" + c.options
	}
	return dsn
}

// tamperCopy copies a built database to a fresh directory.
func tamperCopy(t *testing.T, pristine string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.CopyFS(dir, os.DirFS(pristine)))
	return dir
}

// tamperOutcome opens dir and runs c's queries. Every query either
// returns its rows or fails with an error that names one of names (and,
// when corrupt, wraps ErrCorrupt); it returns how many failed.
func tamperOutcome(t *testing.T, c tamperDB, dir, what string, corrupt bool, names ...string) (failed int) {
	t.Helper()
	check := func(err error) bool {
		if err == nil {
			return false
		}
		if corrupt {
			require.ErrorIs(t, err, fluss.ErrCorrupt, what)
		}
		msg := filepath.ToSlash(err.Error())
		named := false
		for _, n := range names {
			named = named || strings.Contains(msg, filepath.ToSlash(n))
		}
		require.True(t, named, "%s: the error names none of %q: %v", what, names, err)
		return true
	}
	db, err := sql.Open("fluss", c.dsn(dir))
	if err == nil {
		err = db.Ping()
	}
	if check(err) {
		if db != nil {
			db.Close()
		}
		return len(c.queries)
	}
	defer db.Close()
	for q, want := range c.queries {
		got, err := corruptQuery(db, q)
		if check(err) {
			failed++
			continue
		}
		require.Equal(t, want, got, "%s: %s read wrong rows", what, q)
	}
	return failed
}

// tamperFiles lists the files and directories of a database, relative to
// it, with their kinds: the path with every number replaced by #. The
// KV store's own files are Pebble's and only its directory is listed.
func tamperFiles(t *testing.T, dir string) map[string][]string {
	t.Helper()
	digits := regexp.MustCompile(`[0-9]+`)
	kinds := map[string][]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "kv/") {
			return fs.SkipDir
		}
		kind := digits.ReplaceAllString(rel, "#")
		if d.IsDir() {
			kind += "/"
		}
		kinds[kind] = append(kinds[kind], rel)
		return nil
	}))
	return kinds
}

// tamperNames are what an error about rel may name: the path itself, the
// path inside the lake (lake files are named from there), or a file's
// directory (a missing segment is reported for its bucket).
func tamperNames(rel string, isDir bool) []string {
	names := []string{rel}
	if inLake, ok := strings.CutPrefix(rel, "lake/"); ok {
		names = append(names, inLake)
	}
	if !isDir {
		names = append(names, filepath.Base(rel), filepath.ToSlash(filepath.Dir(rel)))
	}
	return names
}

// tamperOp damages the file or directory rel of dir.
type tamperOp struct {
	name string
	// corrupt is whether the error must wrap ErrCorrupt; an unreadable
	// file is reported with the file system's own error.
	corrupt bool
	run     func(t *testing.T, dir, rel, sibling string, isDir bool)
}

func tamperOps() []tamperOp {
	abs := func(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	return []tamperOp{
		{name: "delete", corrupt: true, run: func(t *testing.T, dir, rel, _ string, _ bool) {
			require.NoError(t, os.RemoveAll(abs(dir, rel)))
		}},
		{name: "truncate", corrupt: true, run: func(t *testing.T, dir, rel, _ string, isDir bool) {
			p := abs(dir, rel)
			if isDir {
				// A directory cut short keeps its first half of entries.
				ents, err := os.ReadDir(p)
				require.NoError(t, err)
				for _, e := range ents[len(ents)/2:] {
					require.NoError(t, os.RemoveAll(filepath.Join(p, e.Name())))
				}
				return
			}
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, st.Size()/2))
		}},
		{name: "empty", corrupt: true, run: func(t *testing.T, dir, rel, _ string, isDir bool) {
			p := abs(dir, rel)
			if isDir {
				require.NoError(t, os.RemoveAll(p))
				require.NoError(t, os.Mkdir(p, 0o755))
				return
			}
			require.NoError(t, os.Truncate(p, 0))
		}},
		{name: "swap", corrupt: true, run: func(t *testing.T, dir, rel, sibling string, _ bool) {
			a, b := abs(dir, rel), abs(dir, sibling)
			require.NoError(t, os.Rename(a, a+".swap"))
			require.NoError(t, os.Rename(b, a))
			require.NoError(t, os.Rename(a+".swap", b))
		}},
		{name: "unreadable", run: func(t *testing.T, dir, rel, _ string, isDir bool) {
			p := abs(dir, rel)
			if os.Geteuid() != 0 {
				require.NoError(t, os.Chmod(p, 0))
				t.Cleanup(func() { os.Chmod(p, 0o755) })
				return
			}
			// Permissions do not stop root: put something that cannot be
			// read as the kind it should be in its place.
			require.NoError(t, os.RemoveAll(p))
			if isDir {
				require.NoError(t, os.WriteFile(p, nil, 0o644))
			} else {
				require.NoError(t, os.Mkdir(p, 0o755))
			}
		}},
	}
}

// TestTamper damages, with the engine closed, every kind of file and
// directory a database holds (log segments and their indexes, bucket,
// partition and table directories, the catalog, the commit journal, the
// acknowledged-offsets checkpoint, KV snapshots, the KV store's
// directory, lake manifests and Parquet files and their directories), in
// turn: deleted, truncated, emptied, swapped with another of its kind,
// made unreadable. Every reopen either reads exactly the rows written or
// fails with an error naming what was damaged (ErrCorrupt, but for an
// unreadable file); never fewer rows, never a panic.
func TestTamper(t *testing.T) {
	ops := tamperOps()
	total, reported := 0, 0
	for _, c := range tamperDBs() {
		t.Run(c.name, func(t *testing.T) {
			pristine := c.build(t)
			kinds := tamperFiles(t, pristine)
			for _, kind := range slices.Sorted(func(yield func(string) bool) {
				for k := range kinds {
					if !yield(k) {
						return
					}
				}
			}) {
				paths := kinds[kind]
				isDir := strings.HasSuffix(kind, "/")
				if kind == "LOCK" {
					continue // the flock's file: any content works
				}
				for _, op := range ops {
					// The first and the last of a kind: the first and
					// last segments of a log are where a log starts and
					// ends.
					targets := []string{paths[0]}
					if len(paths) > 1 && op.name == "delete" {
						targets = append(targets, paths[len(paths)-1])
					}
					for _, rel := range targets {
						sibling := ""
						if op.name == "swap" {
							if len(paths) < 2 {
								continue
							}
							sibling = paths[(slices.Index(paths, rel)+1)%len(paths)]
						}
						what := fmt.Sprintf("%s: %s %s", c.name, op.name, rel)
						if sibling != "" {
							what += " with " + sibling
						}
						dir := tamperCopy(t, pristine)
						op.run(t, dir, rel, sibling, isDir)
						names := tamperNames(rel, isDir)
						if sibling != "" {
							names = append(names, tamperNames(sibling, isDir)...)
						}
						total++
						if tamperOutcome(t, c, dir, what, op.corrupt, names...) > 0 {
							reported++
						}
					}
				}
			}
		})
	}
	t.Logf("%d tamperings, %d reported, none read as fewer or wrong rows", total, reported)
}

// tamperSegments lists a bucket directory's segment files, oldest first.
func tamperSegments(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	slices.Sort(segs)
	require.NotEmpty(t, segs, dir)
	return segs
}

// tamperBuckets lists the bucket directories under a table's (or a
// partition's) data directory.
func tamperBuckets(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "b") {
			out = append(out, p)
		}
		return err
	}))
	slices.Sort(out)
	require.NotEmpty(t, out)
	return out
}

// requireCorrupt runs q and wants ErrCorrupt naming name, not rows.
func requireCorrupt(t *testing.T, db *sql.DB, q, name string) {
	t.Helper()
	got, err := corruptQuery(db, q)
	require.ErrorIs(t, err, fluss.ErrCorrupt, "%s read %d rows", q, len(got))
	require.ErrorContains(t, err, name)
}

// TestAcknowledgedLastBatchIsNotTorn: one byte flipped inside the last
// batch of a bucket's last segment of a database every commit of which
// was acknowledged (sync on, closed cleanly) is damage to acknowledged
// data, not a write that never completed: reads report it instead of
// quietly losing the batch's rows, and no write lands on its offsets.
func TestAcknowledgedLastBatchIsNotTorn(t *testing.T) {
	for _, c := range tamperDBs()[:3] {
		t.Run(c.name, func(t *testing.T) {
			dir := tamperCopy(t, c.build(t))
			buckets := tamperBuckets(t, dir)
			segs := tamperSegments(t, buckets[len(buckets)-1])
			last := segs[len(segs)-1]
			data, err := os.ReadFile(last)
			require.NoError(t, err)
			data[len(data)-3] ^= 0x55
			require.NoError(t, os.WriteFile(last, data, 0o644))

			db, err := sql.Open("fluss", c.dsn(dir))
			require.NoError(t, err)
			defer db.Close()
			for _, q := range slices.Sorted(func(yield func(string) bool) {
				for q := range c.queries {
					if !yield(q) {
						return
					}
				}
			}) {
				got, err := corruptQuery(db, q)
				if err == nil {
					require.Equal(t, c.queries[q], got, q)
					continue
				}
				require.ErrorIs(t, err, fluss.ErrCorrupt, q)
				require.ErrorContains(t, err, filepath.Base(last), q)
			}
			requireCorrupt(t, db, `SELECT id, s FROM t`, filepath.Base(last))
			_, err = db.Exec(`INSERT INTO t VALUES (1000, 'p2'), (1001, 'p2'), (1002, 'p2'), (1003, 'p2')`)
			require.ErrorIs(t, err, fluss.ErrCorrupt, "a write to the damaged bucket is refused")
		})
	}
}

// TestMissingLogIsReported deletes, with the engine closed, the first or
// the last segment of a bucket, a bucket directory or a partition
// directory: reads report what is missing instead of returning fewer
// rows, and new writes never take the offsets of the lost rows.
func TestMissingLogIsReported(t *testing.T) {
	dbs := tamperDBs()
	logDB, partDB := dbs[0], dbs[1]
	logDir, partDir := logDB.build(t), partDB.build(t)
	for _, tc := range []struct {
		name   string
		c      tamperDB
		from   string
		target func(dir string) string
	}{
		{"first segment", logDB, logDir, func(dir string) string { return tamperSegments(t, tamperBuckets(t, dir)[0])[0] }},
		{"last segment", logDB, logDir, func(dir string) string {
			segs := tamperSegments(t, tamperBuckets(t, dir)[0])
			return segs[len(segs)-1]
		}},
		{"bucket directory", logDB, logDir, func(dir string) string { return tamperBuckets(t, dir)[1] }},
		{"partition directory", partDB, partDir, func(dir string) string { return filepath.Dir(tamperBuckets(t, dir)[0]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tamperCopy(t, tc.from)
			target := tc.target(dir)
			require.NoError(t, os.RemoveAll(target))
			rel, err := filepath.Rel(dir, target)
			require.NoError(t, err)
			name := rel
			if tc.name != "bucket directory" && tc.name != "partition directory" {
				name = filepath.Dir(rel)
			}

			db, err := sql.Open("fluss", tc.c.dsn(dir))
			require.NoError(t, err)
			defer db.Close()
			requireCorrupt(t, db, `SELECT id, s FROM t`, name)
			for i := range 8 {
				_, err := db.Exec(`INSERT INTO t VALUES (?, 'p0')`, 1000+i)
				if err != nil {
					require.ErrorIs(t, err, fluss.ErrCorrupt)
				}
			}
			requireCorrupt(t, db, `SELECT id, s FROM t`, name)
			require.NoError(t, db.Close())

			// Reopened, it is still reported: nothing was written over
			// the lost offsets in between.
			db, err = sql.Open("fluss", tc.c.dsn(dir))
			require.NoError(t, err)
			defer db.Close()
			requireCorrupt(t, db, `SELECT id, s FROM t`, name)
			if tc.name == "partition directory" {
				// Dropping the damaged partition (the first, p0) leaves
				// the others readable and writable.
				mustExec(t, db, `ALTER TABLE t DROP PARTITION (s = 'p0')`)
				want := tamperRange(0, 300, func(i int) bool { return i%3 != 0 }, func(i int) string { return fmt.Sprintf("p%d", i%3) })
				got, err := corruptQuery(db, `SELECT id, s FROM t`)
				require.NoError(t, err)
				require.Equal(t, want, got)
				mustExec(t, db, `INSERT INTO t VALUES (2000, 'p0')`)
			}
		})
	}
}

// TestMissingKeyBucketIsReported deletes a key table's bucket directory
// with the engine closed: scans and lookups of the bucket report it; a
// lookup never finds a row the scan cannot see.
func TestMissingKeyBucketIsReported(t *testing.T) {
	c := tamperDBs()[2]
	dir := tamperCopy(t, c.build(t))
	bucketDir := tamperBuckets(t, dir)[0]
	require.NoError(t, os.RemoveAll(bucketDir))
	rel, err := filepath.Rel(dir, bucketDir)
	require.NoError(t, err)

	db, err := sql.Open("fluss", c.dsn(dir))
	require.NoError(t, err)
	defer db.Close()
	requireCorrupt(t, db, `SELECT id, s FROM t`, rel)
	var inLost, inKept int
	for id := 0; id < 300; id++ {
		got, err := corruptQuery(db, fmt.Sprintf(`SELECT id, s FROM t WHERE id = %d`, id))
		if err != nil {
			require.ErrorIs(t, err, fluss.ErrCorrupt, "lookup of %d", id)
			require.ErrorContains(t, err, rel)
			inLost++
			continue
		}
		want := []string{}
		if id%7 != 0 || id == 7 {
			want = []string{fmt.Sprintf("%d s%d", id, id)}
		}
		require.Equal(t, want, got, "lookup of %d", id)
		inKept++
	}
	require.NotZero(t, inLost, "lookups of keys in the lost bucket are reported")
	require.NotZero(t, inKept, "lookups in the other bucket still work")
}

// TestSwappedLakeFilesAreReported swaps two Parquet files of different
// partitions with the engine closed: a read checks each file's identity
// against the manifest and reports the file instead of returning rows of
// the wrong partition.
func TestSwappedLakeFilesAreReported(t *testing.T) {
	c := tamperDB{name: "lake", setup: []string{
		`CREATE TABLE t (id BIGINT, s STRING) PARTITIONED BY (s) WITH ('bucket.num' = '1', 'table.datalake.enabled' = 'true')`,
		`INSERT INTO t VALUES (1, 'pa'), (2, 'pa'), (3, 'pb'), (4, 'pb')`,
		`CALL sys.tier('t')`,
	}, queries: map[string][]string{`SELECT id, s FROM t WHERE s = 'pa'`: {"1 pa", "2 pa"}}}
	dir := tamperCopy(t, c.build(t))
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".parquet" {
			files = append(files, p)
		}
		return err
	}))
	slices.Sort(files)
	require.Len(t, files, 2)
	a, err := os.ReadFile(files[0])
	require.NoError(t, err)
	b, err := os.ReadFile(files[1])
	require.NoError(t, err)
	require.Equal(t, len(a), len(b), "the two files have the same size")
	require.NoError(t, os.WriteFile(files[0], b, 0o644))
	require.NoError(t, os.WriteFile(files[1], a, 0o644))

	db, err := sql.Open("fluss", c.dsn(dir))
	require.NoError(t, err)
	defer db.Close()
	got, err := corruptQuery(db, `SELECT id, s FROM t WHERE s = 'pa'`)
	require.ErrorIs(t, err, fluss.ErrCorrupt, "read %v", got)
	rel, _ := filepath.Rel(filepath.Join(dir, "lake"), files[0])
	require.True(t, errors.Is(err, fluss.ErrCorrupt) && strings.Contains(err.Error(), filepath.ToSlash(rel)), "%v names %s", err, rel)
}
