package fluss_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// ids returns the first column of every row of q as int64s, sorted.
func ids(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	var out []int64
	for _, r := range queryAll(t, db, q, args...) {
		out = append(out, r[0].(int64))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func snapshot(t *testing.T, db *sql.DB, table string) [][]any {
	t.Helper()
	return queryAll(t, db, `CALL sys.kv_snapshot('`+table+`')`)
}

func TestPrimaryKeyUpsertDeleteAndSnapshots(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (v STRING, k BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '3')`)
	res := mustExec(t, db, `INSERT INTO kv VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4)`)
	n, _ := res.RowsAffected()
	require.EqualValues(t, 4, n)
	snaps := snapshot(t, db, "kv")
	require.Len(t, snaps, 3, "one snapshot per bucket")

	// After the snapshot: update 1, update-then-delete 2, lone delete 3,
	// insert-then-delete 5 (tail only), insert 6.
	res = mustExec(t, db, `INSERT INTO kv VALUES ('a2', 1), ('b2', 2), ('x', 5), ('f', 6)`)
	n, _ = res.RowsAffected()
	require.EqualValues(t, 4, n)
	res = mustExec(t, db, `DELETE FROM kv WHERE k IN (2, 3, 5)`)
	n, _ = res.RowsAffected()
	require.EqualValues(t, 3, n)
	res = mustExec(t, db, `DELETE FROM kv WHERE k = 99`)
	n, _ = res.RowsAffected()
	require.EqualValues(t, 0, n)
	// An upsert that changes nothing affects no row.
	res = mustExec(t, db, `INSERT INTO kv VALUES ('a2', 1)`)
	n, _ = res.RowsAffected()
	require.EqualValues(t, 0, n)

	want := [][]any{{"a2", int64(1)}, {"d", int64(4)}, {"f", int64(6)}}
	got := queryAll(t, db, `SELECT v, k FROM kv`)
	sort.Slice(got, func(i, j int) bool { return got[i][1].(int64) < got[j][1].(int64) })
	require.Equal(t, want, got)

	plan := queryAll(t, db, `EXPLAIN SELECT v FROM kv`)
	require.Equal(t, "FlussScan: [fluss.kv], Type: [Upsert]", plan[0][0])
	require.Equal(t, "Branch: log-only", plan[1][0])
	for _, l := range plan[2:] {
		require.True(t, strings.HasPrefix(l[0].(string), "Split: kv+log "), l[0])
		require.Contains(t, l[0], "kv_snapshot=")
	}

	// read.optimized reads the snapshots only: the state before the tail.
	ro := queryAll(t, db, `SELECT /*+ OPTIONS('read.optimized'='true') */ v, k FROM kv`)
	sort.Slice(ro, func(i, j int) bool { return ro[i][1].(int64) < ro[j][1].(int64) })
	require.Equal(t, [][]any{{"a", int64(1)}, {"b", int64(2)}, {"c", int64(3)}, {"d", int64(4)}}, ro)
}

func TestPrimaryKeyNoDataHole(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	ins := func(from, to int) {
		var b strings.Builder
		for i := from; i <= to; i++ {
			if i > from {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, %d)", i, i*10)
		}
		mustExec(t, db, `INSERT INTO kv VALUES `+b.String())
	}
	ins(1, 100)
	snapshot(t, db, "kv")
	ins(101, 200)
	got := ids(t, db, `SELECT k FROM kv`)
	require.Len(t, got, 200)
	require.Equal(t, int64(1), got[0])
	require.Equal(t, int64(200), got[199])
}

func TestPrimaryKeyPointLookup(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE users (name STRING, id BIGINT, region STRING, PRIMARY KEY (region, id) NOT ENFORCED) PARTITIONED BY (region)`)
	mustExec(t, db, `INSERT INTO users VALUES ('ann', 1, 'EU'), ('bob', 2, 'US'), ('cy', 1, 'US')`)
	plan := queryAll(t, db, `EXPLAIN SELECT name FROM users WHERE id = 1 AND region = 'US'`)
	require.Contains(t, plan[0][0], "FlussLookup: [fluss.users]")
	require.Equal(t, [][]any{{"cy"}}, queryAll(t, db, `SELECT name FROM users WHERE id = ? AND region = ?`, 1, "US"))
	require.Empty(t, queryAll(t, db, `SELECT name FROM users WHERE id = 3 AND region = 'US'`))
	require.Empty(t, queryAll(t, db, `SELECT name FROM users WHERE id = 1 AND region = 'APAC'`))
	require.Empty(t, queryAll(t, db, `SELECT name FROM users WHERE id = 1 AND region = 'US' AND name = 'zed'`))
	// Without the whole key it is a scan, pruned by partition.
	plan = queryAll(t, db, `EXPLAIN SELECT name FROM users WHERE region = 'US'`)
	require.Contains(t, plan[0][0], "Type: [Upsert]")
	require.Contains(t, plan[0][0], "PartitionFilter: region = 'US'")
	require.ElementsMatch(t, [][]any{{"bob"}, {"cy"}}, queryAll(t, db, `SELECT name FROM users WHERE region = 'US'`))
}

func TestPrimaryKeyPartialUpdateAndUpdate(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE p (k INT, a STRING, b INT, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO p VALUES (1, 'x', 10), (2, 'y', 20)`)
	mustExec(t, db, `INSERT INTO p (k, b) VALUES (1, 11), (3, 33)`)
	require.ElementsMatch(t, [][]any{
		{int64(1), "x", int64(11)}, {int64(2), "y", int64(20)}, {int64(3), nil, int64(33)},
	}, queryAll(t, db, `SELECT k, a, b FROM p`))

	res := mustExec(t, db, `UPDATE p SET b = b + 1, a = 'z' WHERE b > 15`)
	n, _ := res.RowsAffected()
	require.EqualValues(t, 2, n)
	require.ElementsMatch(t, [][]any{
		{int64(1), "x", int64(11)}, {int64(2), "z", int64(21)}, {int64(3), "z", int64(34)},
	}, queryAll(t, db, `SELECT k, a, b FROM p`))

	for _, tc := range []struct{ q, want string }{
		{`UPDATE p SET k = 5 WHERE k = 1`, "k"},
		{`INSERT INTO p (a) VALUES ('no key')`, "k"},
		{`INSERT INTO p VALUES (NULL, 'a', 1)`, "k"},
	} {
		_, err := db.Exec(tc.q)
		require.Error(t, err, tc.q)
		require.Contains(t, err.Error(), tc.want, tc.q)
	}
	_, err := db.Exec(`INSERT INTO p VALUES (NULL, 'a', 1)`)
	require.ErrorIs(t, err, fluss.ErrConstraint)

	mustExec(t, db, `CREATE TABLE logt (x INT)`)
	for _, q := range []string{`DELETE FROM logt WHERE x = 1`, `UPDATE logt SET x = 2`} {
		_, err := db.Exec(q)
		require.ErrorIs(t, err, fluss.ErrUnsupported, q)
	}
}

func TestMergeEngines(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE first (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row')`)
	mustExec(t, db, `INSERT INTO first VALUES (1, 'first')`)
	res := mustExec(t, db, `INSERT INTO first VALUES (1, 'second'), (2, 'other')`)
	n, _ := res.RowsAffected()
	require.EqualValues(t, 1, n)
	require.ElementsMatch(t, [][]any{{int64(1), "first"}, {int64(2), "other"}}, queryAll(t, db, `SELECT k, v FROM first`))
	_, err := db.Exec(`DELETE FROM first WHERE k = 1`)
	require.ErrorIs(t, err, fluss.ErrUnsupported)

	mustExec(t, db, `CREATE TABLE ver (k INT, ver BIGINT, v STRING, PRIMARY KEY (k) NOT ENFORCED)
		WITH ('table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ver')`)
	mustExec(t, db, `INSERT INTO ver VALUES (1, 5, 'five')`)
	mustExec(t, db, `INSERT INTO ver VALUES (1, 3, 'three')`)
	require.Equal(t, [][]any{{int64(5), "five"}}, queryAll(t, db, `SELECT ver, v FROM ver`))
	mustExec(t, db, `INSERT INTO ver VALUES (1, 7, 'seven')`)
	require.Equal(t, [][]any{{int64(7), "seven"}}, queryAll(t, db, `SELECT ver, v FROM ver`))
	_, err = db.Exec(`UPDATE ver SET v = 'x' WHERE k = 1`)
	require.ErrorIs(t, err, fluss.ErrUnsupported)
}

func TestChangelogVirtualTable(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'b')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'b')`) // no change: no changelog
	mustExec(t, db, `DELETE FROM kv WHERE k = 1`)
	rows := queryAll(t, db, "SELECT _change_type, _log_offset, k, v FROM `kv$changelog`")
	require.Equal(t, [][]any{
		{"insert", int64(0), int64(1), "a"},
		{"update_before", int64(1), int64(1), "a"},
		{"update_after", int64(2), int64(1), "b"},
		{"delete", int64(3), int64(1), "b"},
	}, rows)
	all := queryAll(t, db, "SELECT * FROM `kv$changelog` LIMIT 1")
	require.Len(t, all[0], 5)

	mustExec(t, db, `CREATE TABLE lg (x INT) WITH ('bucket.num' = '1')`)
	mustExec(t, db, `INSERT INTO lg VALUES (7), (8)`)
	require.Equal(t, [][]any{{"insert", int64(0), int64(7)}, {"insert", int64(1), int64(8)}},
		queryAll(t, db, "SELECT _change_type, _log_offset, x FROM `lg$changelog`"))
}

func TestPrimaryKeyReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("fluss", dir)
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	snapshot(t, db, "kv")
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a2')`)
	mustExec(t, db, `DELETE FROM kv WHERE k = 2`)
	before := queryAll(t, db, `SELECT k, v FROM kv`)
	require.NoError(t, db.Close())

	db, err = sql.Open("fluss", dir)
	require.NoError(t, err)
	defer db.Close()
	require.ElementsMatch(t, before, queryAll(t, db, `SELECT k, v FROM kv`))
	require.Equal(t, [][]any{{"a2"}}, queryAll(t, db, `SELECT v FROM kv WHERE k = 1`))
}

// TestPrimaryKeyModel runs random upserts, partial updates, deletes,
// snapshots and reopens against a map, and checks every read against it.
func TestPrimaryKeyModel(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			runModel(t, seed, 250)
		})
	}
}

type modelRow struct {
	a any // STRING or nil
	b any // BIGINT or nil
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	dir := filepath.Join(t.TempDir(), "db")
	open := func() *sql.DB {
		db, err := sql.Open("fluss", dir)
		require.NoError(t, err)
		return db
	}
	db := open()
	defer func() { db.Close() }()
	mustExec(t, db, `CREATE TABLE m (a STRING, k INT, b BIGINT, p STRING, PRIMARY KEY (p, k) NOT ENFORCED)
		PARTITIONED BY (p) WITH ('bucket.num' = '3')`)
	model := map[[2]any]modelRow{}
	parts := []string{"x", "y"}
	var history []string
	check := func() {
		got := queryAll(t, db, `SELECT p, k, a, b FROM m`)
		want := make([][]any, 0, len(model))
		for key, r := range model {
			want = append(want, []any{key[0], key[1], r.a, r.b})
		}
		require.ElementsMatch(t, want, got, "seed %d after:\n%s", seed, strings.Join(history, "\n"))
	}
	for step := 0; step < steps; step++ {
		k := int64(rng.IntN(30))
		p := parts[rng.IntN(len(parts))]
		key := [2]any{p, k}
		var op string
		switch x := rng.IntN(100); {
		case x < 45:
			var a, b any
			if rng.IntN(4) > 0 {
				a = fmt.Sprintf("s%d", rng.IntN(5))
			}
			if rng.IntN(4) > 0 {
				b = int64(rng.IntN(1000))
			}
			mustExec(t, db, `INSERT INTO m VALUES (?, ?, ?, ?)`, a, k, b, p)
			model[key] = modelRow{a, b}
			op = fmt.Sprintf("upsert %v %v %v %v", p, k, a, b)
		case x < 65:
			b := int64(rng.IntN(1000))
			mustExec(t, db, `INSERT INTO m (k, p, b) VALUES (?, ?, ?)`, k, p, b)
			r := model[key]
			r.b = b
			model[key] = r
			op = fmt.Sprintf("partial %v %v b=%v", p, k, b)
		case x < 80:
			mustExec(t, db, `DELETE FROM m WHERE k = ? AND p = ?`, k, p)
			delete(model, key)
			op = fmt.Sprintf("delete %v %v", p, k)
		case x < 85:
			lim := int64(rng.IntN(500))
			mustExec(t, db, `DELETE FROM m WHERE b < ?`, lim)
			for kk, r := range model {
				if b, ok := r.b.(int64); ok && b < lim {
					delete(model, kk)
				}
			}
			op = fmt.Sprintf("delete b < %d", lim)
		case x < 92:
			snapshot(t, db, "m")
			op = "snapshot"
		case x < 96:
			require.NoError(t, db.Close())
			db = open()
			op = "reopen"
		default:
			mustExec(t, db, `UPDATE m SET b = b + 1 WHERE b IS NOT NULL AND k < 10`)
			for kk, r := range model {
				if b, ok := r.b.(int64); ok && kk[1].(int64) < 10 {
					r.b = b + 1
					model[kk] = r
				}
			}
			op = "update b+1 where k < 10"
		}
		history = append(history, op)
		if step%10 == 9 {
			check()
		}
	}
	check()
}

// TestSnapshotDuringQuery takes a new KV snapshot while a query that
// planned the old one has not opened it yet: the query still reads the
// state it planned.
func TestSnapshotDuringQuery(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '1')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b')`)
	snapshot(t, db, "kv")
	rows, err := db.Query(`SELECT k, v FROM kv`)
	require.NoError(t, err)
	mustExec(t, db, `INSERT INTO kv VALUES (3, 'c')`)
	snapshot(t, db, "kv")
	var got []string
	for rows.Next() {
		var k int64
		var v string
		require.NoError(t, rows.Scan(&k, &v))
		got = append(got, fmt.Sprintf("%d %s", k, v))
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Equal(t, []string{"1 a", "2 b"}, got)
	require.Len(t, queryAll(t, db, `SELECT k FROM kv`), 3)
}
