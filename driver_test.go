package fluss_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// openDB opens a database in a fresh directory and closes it at the end of
// the test.
func openDB(t *testing.T, opts ...string) (*sql.DB, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	dsn := dir
	if len(opts) > 0 {
		dsn += "?" + opts[0]
	}
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// reopenDB closes db and opens dsn again, closed at the end of the test.
func reopenDB(t *testing.T, db *sql.DB, dsn string) *sql.DB {
	t.Helper()
	require.NoError(t, db.Close())
	db2, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db2.Close() })
	return db2
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	res, err := db.Exec(q, args...)
	require.NoError(t, err, q)
	return res
}

// queryAll returns every row of q, each value as database/sql scanned it
// into *any.
func queryAll(t *testing.T, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.Query(q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestDriverRegistered(t *testing.T) {
	require.Contains(t, sql.Drivers(), "fluss")
}

func TestCreateInsertSelectAndReopen(t *testing.T) {
	db, dsn := openDB(t, "default.bucket.number=3")
	mustExec(t, db, `CREATE TABLE events (id BIGINT NOT NULL, name STRING, score DOUBLE)`)
	res := mustExec(t, db, `INSERT INTO events VALUES (1, 'a', 1.5), (2, 'b', NULL), (3, NULL, 3.5)`)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	mustExec(t, db, `INSERT INTO events (id, name) VALUES (?, ?)`, 4, "d")

	want := map[int64][]any{
		1: {int64(1), "a", 1.5},
		2: {int64(2), "b", nil},
		3: {int64(3), nil, 3.5},
		4: {int64(4), "d", nil},
	}
	check := func(db *sql.DB) {
		got := map[int64][]any{}
		for _, r := range queryAll(t, db, `SELECT * FROM events`) {
			got[r[0].(int64)] = r
		}
		require.Equal(t, want, got)
	}
	check(db)
	db2 := reopenDB(t, db, dsn)
	check(db2)
	// Rows spread round-robin over the 3 buckets: every bucket has a split.
	plan := queryAll(t, db2, `EXPLAIN SELECT id FROM events`)
	require.Equal(t, "FlussScan: [fluss.events], Type: [Append]", plan[0][0])
	require.Equal(t, "Branch: log-only", plan[1][0])
	require.Len(t, plan, 5)
}

func TestWhereAndLimit(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id INT, s STRING, d DECIMAL(10,2))`)
	for i := 0; i < 50; i++ {
		var s any = fmt.Sprintf("s%02d", i)
		if i%10 == 0 {
			s = nil
		}
		mustExec(t, db, `INSERT INTO t VALUES (?, ?, ?)`, i, s, fmt.Sprintf("%d.25", i))
	}
	count := func(q string, args ...any) int {
		return len(queryAll(t, db, q, args...))
	}
	require.Equal(t, 50, count(`SELECT id FROM t`))
	require.Equal(t, 10, count(`SELECT id FROM t WHERE id < 10`))
	require.Equal(t, 10, count(`SELECT id FROM t WHERE 10 > id`))
	require.Equal(t, 5, count(`SELECT id FROM t WHERE s IS NULL`))
	require.Equal(t, 45, count(`SELECT id FROM t WHERE s IS NOT NULL`))
	require.Equal(t, 3, count(`SELECT id FROM t WHERE id IN (1, 2, 3, 999)`))
	require.Equal(t, 11, count(`SELECT id FROM t WHERE id BETWEEN 10 AND 20`))
	require.Equal(t, 9, count(`SELECT id FROM t WHERE s LIKE 's1%'`))
	require.Equal(t, 5, count(`SELECT id FROM t WHERE s LIKE '%5'`))
	require.Equal(t, 2, count(`SELECT id FROM t WHERE d > 47.5`))
	require.Equal(t, 1, count(`SELECT id FROM t WHERE d = '3.25'`))
	require.Equal(t, 0, count(`SELECT id FROM t WHERE id > 2.5 AND id < 3`))
	require.Equal(t, 7, count(`SELECT id FROM t LIMIT 7`))
	require.Equal(t, 4, count(`SELECT id FROM t WHERE id >= 10 LIMIT ? OFFSET ?`, 4, 2))
	require.Equal(t, 2, count(`SELECT id FROM t WHERE id < 10 LIMIT 100 OFFSET 8`))
	require.Equal(t, 0, count(`SELECT id FROM t WHERE s = NULL`))
	require.Equal(t, 5, count(`SELECT id FROM t WHERE s <=> NULL`))
	require.Equal(t, 45, count(`SELECT id FROM t WHERE NOT (s IS NULL)`))
	require.Equal(t, 11, count(`SELECT id FROM t WHERE id < 2 OR s LIKE 's4_'`))
	require.Equal(t, 0, count(`SELECT id FROM t WHERE id = 300000000000`))

	rows := queryAll(t, db, `SELECT s, id AS ident FROM t WHERE id = ?`, 12)
	require.Equal(t, [][]any{{"s12", int64(12)}}, rows)
}

func TestTinyIntOutOfRangeLiteralMatchesNothing(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (x TINYINT)`)
	mustExec(t, db, `INSERT INTO t VALUES (127), (-128), (44)`)
	require.Empty(t, queryAll(t, db, `SELECT x FROM t WHERE x = 300`))
	require.Len(t, queryAll(t, db, `SELECT x FROM t WHERE x < 300`), 3)
	_, err := db.Exec(`INSERT INTO t VALUES (300)`)
	require.Error(t, err)
	require.ErrorIs(t, err, fluss.ErrInvalid)
	require.Contains(t, err.Error(), "300")
	require.Len(t, queryAll(t, db, `SELECT x FROM t`), 3)
}

func TestTypesRoundTrip(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE every (
		id INT NOT NULL,
		b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT,
		f FLOAT, d DOUBLE,
		dec DECIMAL(38, 10), dec2 DECIMAL(5, 2),
		c CHAR(3), s STRING, vc VARCHAR(20),
		bin BINARY(4), bytes BYTES,
		dt DATE, tm TIME(3), ts TIMESTAMP(9), ts3 TIMESTAMP(3), ltz TIMESTAMP_LTZ(3),
		arr ARRAY<INT>, m MAP<STRING, INT>, r ROW<a INT, b STRING>
	)`)
	ts := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	ltz := time.Date(2026, 3, 4, 5, 6, 7, 125000000, time.FixedZone("X", 3600))
	mustExec(t, db, `INSERT INTO every VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		1, true, -128, 32767, math.MinInt32, int64(math.MaxInt64),
		float32(1.5), 2.25,
		"1234567890123456789012345678.0123456789", "-999.99",
		"abc", "héllo", "vc",
		[]byte{1, 2, 3, 4}, []byte{0, 255},
		"2026-03-04", "05:06:07.891", ts, "2026-03-04 05:06:07.125", ltz,
		[]int32{1, 2, 3}, map[string]int32{"k": 7}, []any{int32(10), "x"},
	)
	mustExec(t, db, `INSERT INTO every (id) VALUES (2)`)
	mustExec(t, db, `INSERT INTO every (id, arr, m, r) VALUES (3, ARRAY(4, NULL), MAP('a', 1, 'b', 2), ROW(NULL, 'y'))`)

	rows, err := db.Query(`SELECT * FROM every WHERE id = 1`)
	require.NoError(t, err)
	types, err := rows.ColumnTypes()
	require.NoError(t, err)
	byName := map[string]*sql.ColumnType{}
	for _, ct := range types {
		byName[ct.Name()] = ct
		require.NotNil(t, ct.ScanType(), ct.Name())
	}
	require.NoError(t, rows.Close())

	require.Equal(t, "DECIMAL", byName["dec"].DatabaseTypeName())
	p, s, ok := byName["dec"].DecimalSize()
	require.True(t, ok)
	require.Equal(t, [2]int64{38, 10}, [2]int64{p, s})
	l, ok := byName["c"].Length()
	require.True(t, ok)
	require.EqualValues(t, 3, l)
	l, ok = byName["s"].Length()
	require.True(t, ok)
	require.EqualValues(t, math.MaxInt64, l)
	nullable, ok := byName["id"].Nullable()
	require.True(t, ok)
	require.False(t, nullable)
	require.Equal(t, reflect.TypeFor[int64](), byName["id"].ScanType())
	require.Equal(t, reflect.TypeFor[sql.NullInt64](), byName["bi"].ScanType())
	require.Equal(t, "TIMESTAMP_LTZ", byName["ltz"].DatabaseTypeName())
	require.Equal(t, "ARRAY<INT>", byName["arr"].DatabaseTypeName())
	require.Equal(t, "MAP<STRING, INT>", byName["m"].DatabaseTypeName())
	p, _, ok = byName["ts"].DecimalSize()
	require.True(t, ok)
	require.EqualValues(t, 9, p)

	got := queryAll(t, db, `SELECT * FROM every WHERE id = 1`)
	require.Len(t, got, 1)
	r := got[0]
	want := []any{
		int64(1), true, int64(-128), int64(32767), int64(math.MinInt32), int64(math.MaxInt64),
		1.5, 2.25,
		"1234567890123456789012345678.0123456789", "-999.99",
		"abc", "héllo", "vc",
		[]byte{1, 2, 3, 4}, []byte{0, 255},
		time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC),
		time.Date(1970, 1, 1, 5, 6, 7, 891000000, time.UTC),
		ts,
		time.Date(2026, 3, 4, 5, 6, 7, 125000000, time.UTC),
		ltz.UTC(),
		[]any{int64(1), int64(2), int64(3)},
		map[any]any{"k": int64(7)},
		map[string]any{"a": int64(10), "b": "x"},
	}
	require.Equal(t, len(want), len(r))
	for i := range want {
		if wt, ok := want[i].(time.Time); ok {
			require.True(t, wt.Equal(r[i].(time.Time)), "column %d: want %v got %v", i, wt, r[i])
			continue
		}
		require.Equal(t, want[i], r[i], "column %d (%s)", i, types[i].Name())
	}

	nulls := queryAll(t, db, `SELECT * FROM every WHERE id = 2`)
	require.Len(t, nulls, 1)
	for i, v := range nulls[0][1:] {
		require.Nil(t, v, "column %d", i+1)
	}
	nested := queryAll(t, db, `SELECT arr, m, r FROM every WHERE id = 3`)
	require.Equal(t, [][]any{{
		[]any{int64(4), nil},
		map[any]any{"a": int64(1), "b": int64(2)},
		map[string]any{"a": nil, "b": "y"},
	}}, nested)
}

func TestPartitionedTables(t *testing.T) {
	for _, tc := range []struct {
		name, typ  string
		values     []any
		where      string
		wantParts  int
		wantRows   int
		explainHas string
	}{
		{"int", "INT", []any{2, 10, 100}, "p > 5", 2, 4, "PartitionFilter: p > 5"},
		{"date", "DATE", []any{"2026-01-01", "2026-01-02", "2026-02-01"}, "p >= '2026-01-02'", 2, 4, "PartitionFilter: p >= '2026-01-02'"},
		{"string", "STRING", []any{"EU", "US", "APAC"}, "p IN ('US', 'EU')", 2, 4, "PartitionFilter: p IN ('US', 'EU')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := openDB(t)
			mustExec(t, db, fmt.Sprintf(`CREATE TABLE pt (id BIGINT, p %s) PARTITIONED BY (p) WITH ('bucket.num' = '2', 'bucket.key' = 'id')`, tc.typ))
			for i, v := range tc.values {
				mustExec(t, db, `INSERT INTO pt VALUES (?, ?), (?, ?)`, i*2, v, i*2+1, v)
			}
			parts := queryAll(t, db, `SHOW PARTITIONS pt`)
			require.Len(t, parts, 3)
			rows := queryAll(t, db, `SELECT id FROM pt WHERE `+tc.where)
			require.Len(t, rows, tc.wantRows)
			plan := queryAll(t, db, `EXPLAIN SELECT id FROM pt WHERE `+tc.where)
			require.Contains(t, plan[0][0], tc.explainHas)
			splits := 0
			partitions := map[string]bool{}
			for _, l := range plan[2:] {
				var kind, part string
				var bucket int
				_, err := fmt.Sscanf(l[0].(string), "Split: %s partition=%s bucket=%d", &kind, &part, &bucket)
				require.NoError(t, err, l[0])
				partitions[part] = true
				splits++
			}
			require.Len(t, partitions, tc.wantParts)
			require.GreaterOrEqual(t, splits, tc.wantParts)
		})
	}
}

func TestAddAndDropPartition(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE pt (id BIGINT, dt STRING, region STRING) PARTITIONED BY (dt, region)`)
	mustExec(t, db, `ALTER TABLE pt ADD PARTITION (dt = '2026-01-01', region = 'US')`)
	mustExec(t, db, `INSERT INTO pt VALUES (1, '2026-01-01', 'US'), (2, '2026-01-01', 'EU')`)
	parts := queryAll(t, db, `SHOW PARTITIONS pt`)
	names := []string{}
	for _, p := range parts {
		names = append(names, p[0].(string))
	}
	require.ElementsMatch(t, []string{"2026-01-01$US", "2026-01-01$EU"}, names)
	mustExec(t, db, `ALTER TABLE pt DROP PARTITION (dt = '2026-01-01', region = 'US')`)
	require.Equal(t, [][]any{{int64(2)}}, queryAll(t, db, `SELECT id FROM pt`))
	_, err := db.Exec(`ALTER TABLE pt DROP PARTITION (dt = '2026-01-01', region = 'US')`)
	require.ErrorIs(t, err, fluss.ErrNotFound)
	mustExec(t, db, `ALTER TABLE pt DROP IF EXISTS PARTITION (dt = '2026-01-01', region = 'US')`)
}

func TestShowDescribeUse(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE DATABASE shop`)
	mustExec(t, db, `CREATE TABLE shop.orders (id BIGINT NOT NULL COMMENT 'order id', dt STRING) PARTITIONED BY (dt)`)
	require.Equal(t, [][]any{{"fluss"}, {"shop"}}, queryAll(t, db, `SHOW DATABASES`))
	require.Equal(t, [][]any{{"orders"}}, queryAll(t, db, `SHOW TABLES FROM shop`))
	require.Empty(t, queryAll(t, db, `SHOW TABLES`))
	desc := queryAll(t, db, `DESCRIBE shop.orders`)
	require.Equal(t, [][]any{
		{"id", "BIGINT", false, "", nil, "order id"},
		{"dt", "STRING", true, "PART", nil, nil},
	}, desc)

	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), `USE shop`)
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), `INSERT INTO orders VALUES (1, 'x')`)
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), `USE nope`)
	require.ErrorIs(t, err, fluss.ErrNotFound)
	require.Equal(t, [][]any{{int64(1)}}, queryAll(t, db, `SELECT id FROM shop.orders`))
}

func TestBadInput(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id INT NOT NULL, tiny TINYINT, d DATE)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 1, '2026-01-01')`)
	for _, tc := range []struct {
		q        string
		args     []any
		sentinel error
		contains []string
	}{
		{`CREATE TABLE u (a STRNG)`, nil, nil, []string{"STRNG", "at line 1, column 19"}},
		{`CREATE TABLE u (a INT`, nil, fluss.ErrSyntax, []string{"at line 1, column"}},
		{`CREATE TABLE t (a INT)`, nil, fluss.ErrExists, []string{"t"}},
		{`CREATE TABLE u (a INT) WITH ('bucket.nmu' = '2')`, nil, nil, []string{"bucket.nmu"}},
		{`INSERT INTO t VALUES (1, 2)`, nil, nil, []string{"3"}},
		{`INSERT INTO t VALUES (2, 300, NULL)`, nil, fluss.ErrInvalid, []string{"300", "TINYINT"}},
		{`INSERT INTO t VALUES (NULL, 1, NULL)`, nil, fluss.ErrConstraint, []string{"id"}},
		{`INSERT INTO nope VALUES (1)`, nil, fluss.ErrNotFound, []string{"nope"}},
		{`INSERT INTO t (id, nope) VALUES (1, 2)`, nil, fluss.ErrNotFound, []string{"nope"}},
		{`INSERT INTO t VALUES (3, 1, '2026-13-45')`, nil, fluss.ErrInvalid, []string{"2026-13-45"}},
		{`INSERT INTO t VALUES (?, 1, NULL)`, []any{"x"}, fluss.ErrInvalid, []string{"x"}},
		{`SELECT nope FROM t`, nil, fluss.ErrNotFound, []string{"nope"}},
		{`SELECT id FROM t WHERE d = '2026-02-30'`, nil, nil, []string{"2026-02-30"}},
		{`SELEC id FROM t`, nil, fluss.ErrSyntax, nil},
	} {
		var err error
		if len(tc.args) > 0 {
			_, err = db.Exec(tc.q, tc.args...)
		} else {
			_, err = db.Exec(tc.q)
		}
		require.Error(t, err, tc.q)
		var fe *fluss.Error
		require.True(t, errors.As(err, &fe), "%s: %T %v", tc.q, err, err)
		if tc.sentinel != nil {
			require.ErrorIs(t, err, tc.sentinel, tc.q)
		}
		for _, c := range tc.contains {
			require.Contains(t, err.Error(), c, tc.q)
		}
	}
	// Nothing of the failed statements was written.
	require.Equal(t, [][]any{{int64(1), int64(1)}}, queryAll(t, db, `SELECT id, tiny FROM t`))
}

func TestBadDSN(t *testing.T) {
	for _, tc := range []struct{ dsn, contains string }{
		{"", "empty DSN"},
		{":memory:?nope=1", `"nope"`},
		{":memory:?sync=maybe", "sync"},
		{":memory:?default.bucket.number=0", "default.bucket.number"},
		{":memory:?default.bucket.number=5000", "default.bucket.number"},
		{":memory:?loc=Mars/Base", "loc"},
		{":memory:?tiering=sometimes", "tiering"},
		{":memory:?kv.snapshot.interval=soon", "kv.snapshot.interval"},
		{":memory:?auto-partition.check.interval=soon", "auto-partition.check.interval"},
		{"file://otherhost/x", "host"},
	} {
		_, err := fluss.NewConnector(tc.dsn)
		require.Error(t, err, tc.dsn)
		require.Contains(t, err.Error(), tc.contains, tc.dsn)
		// database/sql reports the same error at first use.
		db, err := sql.Open("fluss", tc.dsn)
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		require.Error(t, err, tc.dsn)
	}
}

func TestDSNForms(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{
		filepath.Join(dir, "a"),
		"file:" + filepath.Join(dir, "b") + "?sync=off",
		"file://" + filepath.Join(dir, "c"),
		":memory:?default.bucket.number=4&loc=Europe/Berlin",
	} {
		cfg, err := fluss.ParseDSN(dsn)
		require.NoError(t, err, dsn)
		db, err := sql.Open("fluss", dsn)
		require.NoError(t, err)
		mustExec(t, db, `CREATE TABLE t (a INT)`)
		mustExec(t, db, `INSERT INTO t VALUES (1)`)
		require.Len(t, queryAll(t, db, `SELECT a FROM t`), 1)
		require.NoError(t, db.Close())
		if !cfg.InMemory {
			require.DirExists(t, cfg.Dir)
		}
	}
	cfg, err := fluss.ParseDSN(":memory:?default.bucket.number=4&loc=Europe/Berlin&sync=off")
	require.NoError(t, err)
	require.True(t, cfg.InMemory)
	require.Equal(t, 4, cfg.DefaultBucketNumber)
	require.False(t, cfg.Sync)
	require.Equal(t, "Europe/Berlin", cfg.Location.String())
}

func TestMemoryEnginesAreSeparate(t *testing.T) {
	a, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer a.Close()
	b, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer b.Close()
	a.SetMaxOpenConns(4)
	mustExec(t, a, `CREATE TABLE t (x INT)`)
	mustExec(t, a, `INSERT INTO t VALUES (1)`)
	// Another connection of the same *sql.DB sees the table.
	c1, err := a.Conn(context.Background())
	require.NoError(t, err)
	c2, err := a.Conn(context.Background())
	require.NoError(t, err)
	var n int64
	require.NoError(t, c2.QueryRowContext(context.Background(), `SELECT x FROM t`).Scan(&n))
	require.EqualValues(t, 1, n)
	c1.Close()
	c2.Close()
	_, err = b.Exec(`INSERT INTO t VALUES (1)`)
	require.ErrorIs(t, err, fluss.ErrNotFound)
}

func TestSameDirectorySharesEngine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	a, err := sql.Open("fluss", dir)
	require.NoError(t, err)
	b, err := sql.Open("fluss", "file:"+dir)
	require.NoError(t, err)
	mustExec(t, a, `CREATE TABLE t (x INT)`)
	mustExec(t, a, `INSERT INTO t VALUES (7)`)
	require.Equal(t, [][]any{{int64(7)}}, queryAll(t, b, `SELECT x FROM t`))
	require.NoError(t, a.Close())
	// b still works after a closed: the engine is reference counted.
	mustExec(t, b, `INSERT INTO t VALUES (8)`)
	require.Len(t, queryAll(t, b, `SELECT x FROM t`), 2)
	require.NoError(t, b.Close())
}

func TestContextCancelled(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (x INT)`)
	for i := 0; i < 5; i++ {
		mustExec(t, db, `INSERT INTO t VALUES (1), (2), (3)`)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rows, err := db.QueryContext(ctx, `SELECT x FROM t`)
	require.NoError(t, err)
	require.True(t, rows.Next())
	cancel()
	for rows.Next() {
	}
	require.ErrorIs(t, rows.Err(), context.Canceled)
	require.NoError(t, rows.Close())
	// The connection pool still works.
	require.Len(t, queryAll(t, db, `SELECT x FROM t`), 15)

	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = db.QueryContext(done, `SELECT x FROM t`)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSelectExpressions(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, d DECIMAL(10, 2))`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 2.50), (2, NULL)`)
	rows := queryAll(t, db, `SELECT id + 1, id * d, id / 3, -id, id = 1 AS one FROM t WHERE id = 1`)
	require.Equal(t, [][]any{{int64(2), "2.50", "0.3333", int64(-1), true}}, rows)
	rows = queryAll(t, db, `SELECT id * d FROM t WHERE id = 2`)
	require.Equal(t, [][]any{{nil}}, rows)
	// Evaluation is lazy: the overflow surfaces while the rows are read.
	r, err := db.Query(`SELECT id + 9223372036854775807 FROM t`)
	require.NoError(t, err)
	for r.Next() {
	}
	err = r.Err()
	require.NoError(t, r.Close())
	require.ErrorIs(t, err, fluss.ErrInvalid)
	require.ErrorContains(t, err, "overflow")
}

func TestUnknownColumnHasAPosition(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (amount INT)`)
	mustExec(t, db, `CREATE TABLE kv (k INT, amount INT, PRIMARY KEY (k) NOT ENFORCED)`)
	_, err := db.Query("SELECT amout FROM t")
	require.ErrorIs(t, err, fluss.ErrNotFound)
	var fe *fluss.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, 7, fe.Pos)
	require.EqualError(t, err, "fluss: column amout does not exist in table fluss.t at line 1, column 8")
	_, err = db.Exec("UPDATE kv\nSET amount = 1\nWHERE nope = 2")
	require.Error(t, err)
	require.Contains(t, err.Error(), "at line 3, column 7")
}
