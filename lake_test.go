package fluss_test

import (
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func tier(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	rows := queryAll(t, db, `CALL sys.tier('`+table+`')`)
	require.Len(t, rows, 1)
	return rows[0][0].(int64)
}

// planLines returns the EXPLAIN lines of q.
func planLines(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	var out []string
	for _, r := range queryAll(t, db, "EXPLAIN "+q) {
		out = append(out, r[0].(string))
	}
	return out
}

func countKinds(lines []string) map[string]int {
	kinds := map[string]int{}
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "Split: "); ok {
			kinds[strings.Fields(rest)[0]]++
		}
	}
	return kinds
}

func TestLakeUnionLogTable(t *testing.T) {
	db, dsn := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT, dt STRING) PARTITIONED BY (dt)
		WITH ('bucket.num' = '3', 'table.datalake.enabled' = 'true')`)
	// No snapshot yet: log-only.
	mustExec(t, db, `INSERT INTO ev VALUES (1, 'a'), (2, 'a'), (3, 'b')`)
	plan := planLines(t, db, `SELECT id FROM ev`)
	require.Equal(t, "FlussScan: [fluss.ev], Type: [Append]", plan[0])
	require.Equal(t, "Branch: log-only", plan[1])
	require.Empty(t, queryAll(t, db, "SELECT id FROM `ev$lake`"))

	// Everything tiered: lake splits only.
	snap := tier(t, db, "ev")
	plan = planLines(t, db, `SELECT id FROM ev`)
	require.Equal(t, "FlussScan: [fluss.ev], Type: [LakeAppend]", plan[0])
	require.Equal(t, fmt.Sprintf("Branch: lake-union (snapshot %d)", snap), plan[1])
	require.Zero(t, countKinds(plan)["log"])
	require.NotZero(t, countKinds(plan)["lake"])
	require.Equal(t, []int64{1, 2, 3}, ids(t, db, `SELECT id FROM ev`))

	// A tail after the snapshot, and a partition created after it.
	mustExec(t, db, `INSERT INTO ev VALUES (4, 'a'), (5, 'c')`)
	plan = planLines(t, db, `SELECT id FROM ev`)
	require.NotZero(t, countKinds(plan)["log"])
	require.Equal(t, []int64{1, 2, 3, 4, 5}, ids(t, db, `SELECT id FROM ev`))
	require.Equal(t, []int64{1, 2, 3}, ids(t, db, "SELECT id FROM `ev$lake`"))
	require.Equal(t, []int64{5}, ids(t, db, `SELECT id FROM ev WHERE dt = 'c'`))

	// A second round; then drop a partition that the lake still holds.
	snap2 := tier(t, db, "ev")
	require.Greater(t, snap2, snap)
	mustExec(t, db, `ALTER TABLE ev DROP PARTITION (dt = 'a')`)
	require.Equal(t, []int64{1, 2, 4}, ids(t, db, `SELECT id FROM ev WHERE dt = 'a'`), "lake-only partition read from the lake")
	require.Equal(t, []int64{3}, ids(t, db, `SELECT id FROM ev WHERE dt = 'b'`))
	require.Equal(t, []int64{1, 2, 3, 4, 5}, ids(t, db, `SELECT id FROM ev`))
	require.Len(t, queryAll(t, db, `SELECT id FROM ev LIMIT 2`), 2)

	// Reopen keeps the lake and the engine's record of it.
	require.NoError(t, db.Close())
	db2, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db2.Close()
	require.Equal(t, []int64{1, 2, 3, 4, 5}, ids(t, db2, `SELECT id FROM ev`))
	require.Contains(t, planLines(t, db2, `SELECT id FROM ev`)[1], fmt.Sprintf("snapshot %d", snap2))
}

func TestLakeUnionPrimaryKeyTable(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)
		WITH ('bucket.num' = '3', 'table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')`)
	tier(t, db, "kv")
	// After tiering: update, update-then-delete, delete, insert.
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a2'), (2, 'b2'), (5, 'e')`)
	mustExec(t, db, `DELETE FROM kv WHERE k IN (2, 3)`)
	want := [][]any{{int64(1), "a2"}, {int64(4), "d"}, {int64(5), "e"}}
	require.ElementsMatch(t, want, queryAll(t, db, `SELECT k, v FROM kv`))
	plan := planLines(t, db, `SELECT k FROM kv`)
	require.Equal(t, "FlussScan: [fluss.kv], Type: [LakeUpsert]", plan[0])
	require.NotZero(t, countKinds(plan)["lake+log"])
	require.ElementsMatch(t, [][]any{{int64(1), "a"}, {int64(2), "b"}, {int64(3), "c"}, {int64(4), "d"}},
		queryAll(t, db, "SELECT k, v FROM `kv$lake`"))
	tier(t, db, "kv")
	require.ElementsMatch(t, want, queryAll(t, db, `SELECT k, v FROM kv`))
	require.ElementsMatch(t, want, queryAll(t, db, "SELECT k, v FROM `kv$lake`"))
	require.ElementsMatch(t, [][]any{{int64(5), "e"}}, queryAll(t, db, `SELECT k, v FROM kv WHERE v = 'e'`))
}

func TestLakeFilterPrunesAllFilesOfAPartition(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE m (id BIGINT, v INT, dt STRING) PARTITIONED BY (dt)
		WITH ('bucket.num' = '1', 'table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO m VALUES (1, 10, 'x'), (2, 20, 'x')`)
	tier(t, db, "m")
	mustExec(t, db, `INSERT INTO m VALUES (3, 1000, 'x')`)
	plan := planLines(t, db, `SELECT id FROM m WHERE v > 500`)
	// The lake file (v in 10..20) is pruned; the tail still starts at the
	// tiered offset, not at the log start (Fluss #4325).
	require.Zero(t, countKinds(plan)["lake"], strings.Join(plan, "\n"))
	require.Contains(t, strings.Join(plan, "\n"), "log=2..3")
	require.Equal(t, []int64{3}, ids(t, db, `SELECT id FROM m WHERE v > 500`))
}

// TestLakeDifferential runs the same queries before tiering, after it,
// after more writes and a second round, and on a copy with tiering never
// run, against a model.
func TestLakeDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	dir := t.TempDir()
	lakeDB, err := sql.Open("fluss", filepath.Join(dir, "lake")+"?tiering=off")
	require.NoError(t, err)
	defer lakeDB.Close()
	plainDB, err := sql.Open("fluss", filepath.Join(dir, "plain")+"?tiering=off")
	require.NoError(t, err)
	defer plainDB.Close()
	for _, db := range []*sql.DB{lakeDB, plainDB} {
		lakeOn := "true"
		if db == plainDB {
			lakeOn = "false"
		}
		mustExec(t, db, `CREATE TABLE lg (id BIGINT, v INT, s STRING, p INT) PARTITIONED BY (p)
			WITH ('bucket.num' = '2', 'table.datalake.enabled' = '`+lakeOn+`')`)
		mustExec(t, db, `CREATE TABLE kv (id INT, v INT, s STRING, PRIMARY KEY (id) NOT ENFORCED)
			WITH ('bucket.num' = '3', 'table.datalake.enabled' = '`+lakeOn+`')`)
	}
	logModel := map[int64][]any{}
	kvModel := map[int64][]any{}
	nextID := int64(0)
	write := func(n int) {
		for i := 0; i < n; i++ {
			id := nextID
			nextID++
			v := int64(rng.IntN(100))
			s := fmt.Sprintf("s%d", rng.IntN(10))
			p := int64(rng.IntN(3))
			k := int64(rng.IntN(40))
			del := rng.IntN(5) == 0
			for _, db := range []*sql.DB{lakeDB, plainDB} {
				mustExec(t, db, `INSERT INTO lg VALUES (?, ?, ?, ?)`, id, v, s, p)
				if del {
					mustExec(t, db, `DELETE FROM kv WHERE id = ?`, k)
				} else {
					mustExec(t, db, `INSERT INTO kv VALUES (?, ?, ?)`, k, v, s)
				}
			}
			logModel[id] = []any{id, v, s, p}
			if del {
				delete(kvModel, k)
			} else {
				kvModel[k] = []any{k, v, s}
			}
		}
	}
	queries := []struct {
		q     string
		model func() [][]any
	}{
		{`SELECT id, v, s, p FROM lg`, func() [][]any { return values(logModel, nil) }},
		{`SELECT id, v, s, p FROM lg WHERE v < 30 AND p = 1`, func() [][]any {
			return values(logModel, func(r []any) bool { return r[1].(int64) < 30 && r[3].(int64) == 1 })
		}},
		{`SELECT id, v, s FROM kv`, func() [][]any { return values(kvModel, nil) }},
		{`SELECT id, v, s FROM kv WHERE s IN ('s1', 's2') OR v > 90`, func() [][]any {
			return values(kvModel, func(r []any) bool {
				return r[2] == "s1" || r[2] == "s2" || r[1].(int64) > 90
			})
		}},
	}
	check := func(stage string) {
		for _, q := range queries {
			want := q.model()
			for _, db := range []*sql.DB{lakeDB, plainDB} {
				require.ElementsMatch(t, want, queryAll(t, db, q.q), "%s: %s", stage, q.q)
			}
		}
	}
	write(60)
	check("before tiering")
	tier(t, lakeDB, "lg")
	tier(t, lakeDB, "kv")
	check("after tiering")
	write(60)
	check("with a tail")
	tier(t, lakeDB, "lg")
	tier(t, lakeDB, "kv")
	write(20)
	check("after a second round and a tail")
}

// values lists a model's rows that keep passes (nil: all), sorted by id.
func values(m map[int64][]any, keep func([]any) bool) [][]any {
	out := [][]any{}
	for _, r := range m {
		if keep == nil || keep(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0].(int64) < out[j][0].(int64) })
	return out
}

func TestDropTableRemovesItsLake(t *testing.T) {
	db, dsn := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO ev VALUES (1)`)
	tier(t, db, "ev")
	lakeDir := filepath.Join(strings.SplitN(dsn, "?", 2)[0], "lake")
	require.NotEmpty(t, parquetFiles(t, lakeDir))
	mustExec(t, db, `DROP TABLE ev`)
	require.Empty(t, parquetFiles(t, lakeDir))
	// A new table of the same name starts without a lake snapshot.
	mustExec(t, db, `CREATE TABLE ev (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	require.Empty(t, queryAll(t, db, "SELECT id FROM `ev$lake`"))
	require.Equal(t, "Branch: log-only", planLines(t, db, `SELECT id FROM ev`)[1])
}

func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".parquet") {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// TestLakeEmptyStringStatistics: a lake file whose values include the
// empty string is not pruned for it (its Parquet minimum leaves ” out).
func TestLakeEmptyStringStatistics(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, "CREATE TABLE t (id BIGINT, s STRING, b BYTES) WITH ('table.datalake.enabled' = 'true')")
	mustExec(t, db, "INSERT INTO t VALUES (1, '', X'')")
	mustExec(t, db, "INSERT INTO t VALUES (2, 'dog', X'01')")
	var snap any
	require.NoError(t, db.QueryRow("CALL sys.tier('t')").Scan(&snap))
	require.Equal(t, []string{"1"}, txRows(t, db, "SELECT id FROM t WHERE s = ''"))
	require.Equal(t, []string{"1"}, txRows(t, db, "SELECT id FROM t WHERE s < 'a'"))
	require.Equal(t, []string{"1"}, txRows(t, db, "SELECT id FROM `t$lake` WHERE s = ''"))
	require.Equal(t, []string{"1"}, txRows(t, db, "SELECT id FROM t WHERE b = X''"))
}
