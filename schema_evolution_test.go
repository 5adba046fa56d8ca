package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// TestAddColumnReadsEverySchema: rows written before ALTER TABLE ... ADD
// COLUMN read the new column as NULL from every place they are kept (the
// log, the KV store, a KV snapshot, the lake), rows written after carry
// it, and both survive a reopen.
func TestAddColumnReadsEverySchema(t *testing.T) {
	db, dsn := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE lg (id BIGINT, s STRING) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`)
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`)
	mustExec(t, db, `INSERT INTO lg VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	queryAll(t, db, `CALL sys.tier('lg')`)
	queryAll(t, db, `CALL sys.tier('kv')`)
	mustExec(t, db, `INSERT INTO lg VALUES (3, 'c')`)
	mustExec(t, db, `INSERT INTO kv VALUES (4, 'd')`)
	queryAll(t, db, `CALL sys.kv_snapshot('kv')`)

	mustExec(t, db, `ALTER TABLE lg ADD COLUMN n INT COMMENT 'added'`)
	mustExec(t, db, `ALTER TABLE kv ADD n INT, ADD COLUMN m STRING`)
	mustExec(t, db, `INSERT INTO lg VALUES (4, 'd', 40)`)
	mustExec(t, db, `INSERT INTO kv VALUES (5, 'e', 50, 'x'), (2, 'B', 20, NULL)`)
	mustExec(t, db, `UPDATE kv SET s = 'C' WHERE id = 3`)

	check := func(db *sql.DB) {
		t.Helper()
		require.Equal(t, [][]any{{int64(1), "a", nil}, {int64(2), "b", nil}, {int64(3), "c", nil}, {int64(4), "d", int64(40)}},
			queryAll(t, db, `SELECT id, s, n FROM lg ORDER BY id`))
		require.Equal(t, [][]any{{int64(1), "a", nil, nil}, {int64(2), "B", int64(20), nil}, {int64(3), "C", nil, nil}, {int64(4), "d", nil, nil}, {int64(5), "e", int64(50), "x"}},
			queryAll(t, db, `SELECT id, s, n, m FROM kv ORDER BY id`))
		require.Equal(t, [][]any{{int64(1), "a", nil, nil}}, queryAll(t, db, `SELECT * FROM kv WHERE id = 1`))
		require.Equal(t, [][]any{{int64(4)}}, queryAll(t, db, `SELECT id FROM lg WHERE n = 40`))
		require.Equal(t, [][]any{{int64(3)}}, queryAll(t, db, `SELECT count(*) FROM lg WHERE n IS NULL`))
		require.Equal(t, [][]any{{int64(3)}}, queryAll(t, db, `SELECT count(*) FROM kv WHERE n IS NULL`))
	}
	checkTieredAndReopened(t, db, dsn, check, "lg", "kv")
}

// checkTieredAndReopened runs check on db, again after a tiering round of
// each table, and again on the database reopened, which it returns.
func checkTieredAndReopened(t *testing.T, db *sql.DB, dsn string, check func(*sql.DB), tables ...string) *sql.DB {
	t.Helper()
	check(db)
	for _, table := range tables {
		queryAll(t, db, `CALL sys.tier(?)`, table)
	}
	check(db)
	db2 := reopenDB(t, db, dsn)
	check(db2)
	return db2
}

// TestAddColumnRules: the statement's refusals, in Fluss's words, and what
// the catalog views show after it.
func TestAddColumnRules(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	for q, want := range map[string]string{
		`ALTER TABLE t ADD COLUMN s INT`:                                 "Column s already exists.",
		`ALTER TABLE t ADD COLUMN S INT`:                                 "Column S already exists.",
		`ALTER TABLE t ADD a INT, ADD a BIGINT`:                          "Column a already exists.",
		`ALTER TABLE t ADD COLUMN n INT NOT NULL`:                        "Column n must be nullable.",
		`ALTER TABLE t ADD COLUMN n INT FIRST`:                           "Only support addColumn column at last now.",
		`ALTER TABLE t ADD COLUMN n INT AFTER id`:                        "Only support addColumn column at last now.",
		`ALTER TABLE t DROP COLUMN s`:                                    "Not support drop column now.",
		`ALTER TABLE t MODIFY COLUMN s BIGINT`:                           "Not support modify column now.",
		`ALTER TABLE t RENAME COLUMN s TO u`:                             "Not support rename column now.",
		`ALTER TABLE t ADD COLUMN _change_type INT`:                      "reserved for system columns",
		`ALTER TABLE nope ADD COLUMN n INT`:                              "nope",
		`ALTER TABLE t ADD COLUMN n TIMESTAMP DEFAULT CURRENT_TIMESTAMP`: "cannot default to CURRENT_TIMESTAMP",
		`ALTER TABLE t ADD COLUMN n INT DEFAULT 'x'`:                     "DEFAULT 'x'",
		`ALTER TABLE t ADD COLUMN n INT PRIMARY KEY`:                     "Column n must be nullable.",
		`ALTER TABLE t ADD COLUMN n INT, ADD s2 NOPE`:                    "NOPE",
	} {
		_, err := db.Exec(q)
		require.ErrorContains(t, err, want, q)
	}
	// Nothing of a refused statement is applied.
	require.Len(t, queryAll(t, db, `DESCRIBE t`), 2)

	mustExec(t, db, `ALTER TABLE t ADD COLUMN n INT COMMENT 'the count', ADD u DECIMAL(10, 2)`)
	desc := queryAll(t, db, `DESCRIBE t`)
	require.Len(t, desc, 4)
	require.Equal(t, "n", desc[2][0])
	require.Equal(t, "u", desc[3][0])
	show := queryAll(t, db, `SHOW CREATE TABLE t`)[0][1].(string)
	require.Contains(t, show, "n INT COMMENT 'the count',\n  u DECIMAL(10, 2),")
	require.Equal(t, [][]any{{"id", int64(1)}, {"s", int64(2)}, {"n", int64(3)}, {"u", int64(4)}},
		queryAll(t, db, `SELECT column_name, ordinal_position FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position`))
	// A table of the same name created again starts from one schema.
	mustExec(t, db, `DROP TABLE t`)
	mustExec(t, db, `CREATE TABLE t (id BIGINT)`)
	require.Len(t, queryAll(t, db, `DESCRIBE t`), 1)
}

// TestAddColumnStreamsAndViews: the changelog and subscriptions read
// across the change (one started before keeps the columns it bound), and
// a transaction begun before it reads the rows of its view, the new
// column NULL, and commits what it wrote with NULL there.
func TestAddColumnStreamsAndViews(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '1')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b')`)
	ctx := context.Background()
	before, err := fluss.Subscribe(ctx, conn(t, db), "kv", fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest})
	require.NoError(t, err)
	defer before.Close()

	tx, err := db.Begin()
	require.NoError(t, err)
	require.Equal(t, []string{"1|a"}, renderRows(t, tx, false, `SELECT * FROM kv WHERE id = 1`))
	_, err = tx.Exec(`INSERT INTO kv VALUES (3, 'c')`)
	require.NoError(t, err)

	mustExec(t, db, `ALTER TABLE kv ADD COLUMN n BIGINT`)
	mustExec(t, db, `INSERT INTO kv VALUES (2, 'B', 20)`)

	// The transaction reads the table in the shape it had when it began:
	// its view's rows and its own, without the new column.
	require.Equal(t, []string{"1|a", "2|b", "3|c"}, renderRows(t, tx, false, `SELECT * FROM kv ORDER BY id`))
	require.Equal(t, []string{"2|b"}, renderRows(t, tx, false, `SELECT * FROM kv WHERE id = 2`))
	_, err = tx.Exec(`UPDATE kv SET s = 'a1' WHERE id = 1`)
	require.NoError(t, err)
	require.Equal(t, []string{"1|a1"}, renderRows(t, tx, false, `SELECT * FROM kv WHERE id = 1`))
	require.NoError(t, tx.Commit())
	// Another connection never saw the old shape.
	require.Equal(t, [][]any{{int64(1), "a1", nil}}, queryAll(t, db, `SELECT * FROM kv WHERE id = 1`))
	mustExec(t, db, `UPDATE kv SET s = 'a' WHERE id = 1`)
	require.Equal(t, [][]any{{int64(1), "a", nil}, {int64(2), "B", int64(20)}, {int64(3), "c", nil}}, queryAll(t, db, `SELECT * FROM kv ORDER BY id`))

	require.Equal(t, [][]any{
		{"insert", int64(0), int64(1), "a", nil},
		{"insert", int64(1), int64(2), "b", nil},
		{"update_before", int64(2), int64(2), "b", nil},
		{"update_after", int64(3), int64(2), "B", int64(20)},
		{"insert", int64(4), int64(3), "c", nil},
		{"update_before", int64(5), int64(1), "a", nil},
		{"update_after", int64(6), int64(1), "a1", nil},
		{"update_before", int64(7), int64(1), "a1", nil},
		{"update_after", int64(8), int64(1), "a", nil},
	}, queryAll(t, db, "SELECT _change_type, _log_offset, id, s, n FROM `kv$changelog` ORDER BY _log_offset"))

	// The subscription started before reads on with the columns it bound.
	var got [][]any
	for len(got) < 5 && before.Next() {
		got = append(got, subRows(t, before)...)
	}
	require.NoError(t, before.Err())
	require.Equal(t, []string{"id", "s"}, subDataColumns(before))
	require.Equal(t, [][]any{{"+I", int64(1), "a"}, {"+I", int64(2), "b"}, {"-U", int64(2), "b"}, {"+U", int64(2), "B"}, {"+I", int64(3), "c"}}, got[:5])

	// One started after reads the old rows with the new column NULL.
	after, err := fluss.Subscribe(ctx, conn(t, db), "kv", fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest})
	require.NoError(t, err)
	defer after.Close()
	got = nil
	for len(got) < 5 && after.Next() {
		got = append(got, subRows(t, after)...)
	}
	require.NoError(t, after.Err())
	require.Equal(t, []string{"id", "s", "n"}, subDataColumns(after))
	require.Equal(t, [][]any{{"+I", int64(1), "a", nil}, {"+I", int64(2), "b", nil}, {"-U", int64(2), "b", nil}, {"+U", int64(2), "B", int64(20)}, {"+I", int64(3), "c", nil}}, got[:5])

	plan := queryAll(t, db, `EXPLAIN SELECT n FROM kv WHERE n = 20`)
	require.NotEmpty(t, plan)
}

// subscriptionSystemColumns is the number of system columns before a
// subscription's table columns.
var subscriptionSystemColumns = []string{fluss.ColumnChangeType, fluss.ColumnPartition, fluss.ColumnBucket, fluss.ColumnLogOffset, fluss.ColumnCommitTimestamp}

// subDataColumns are the names of a subscription's table columns (after
// the system columns).
func subDataColumns(sub *fluss.Subscription) []string {
	var out []string
	for _, f := range sub.RecordBatch().Schema().Fields()[len(subscriptionSystemColumns):] {
		out = append(out, f.Name)
	}
	return out
}

// subRows are the change type and table columns of the subscription's
// current batch.
func subRows(t *testing.T, sub *fluss.Subscription) [][]any {
	t.Helper()
	rec := sub.RecordBatch()
	sys := len(subscriptionSystemColumns)
	var out [][]any
	for i := range int(rec.NumRows()) {
		row := []any{rec.Column(0).(*array.String).Value(i)}
		for c := sys; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			switch {
			case col.IsNull(i):
				row = append(row, nil)
			case col.DataType().ID() == arrow.INT64:
				row = append(row, col.(*array.Int64).Value(i))
			default:
				row = append(row, col.(*array.String).Value(i))
			}
		}
		out = append(out, row)
	}
	return out
}

// TestAddColumnModel interleaves ADD COLUMN with writes of every kind
// (inserts, upserts, partial updates, deletes, transactions), KV
// snapshots, tiering rounds and reopens, on a key table and a log table,
// and checks every read against a model: whole tables, lookups by key,
// filters on added columns.
func TestAddColumnModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	dsn := filepath.Join(t.TempDir(), "db") + "?tiering=off&log.segment.file-size=2kb"
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer func() { db.Close() }()
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, c0 BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '3')`)
	mustExec(t, db, `CREATE TABLE lg (id BIGINT, c0 BIGINT) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`)
	cols := 1               // c0 .. c{cols-1}
	kv := map[int64][]any{} // id -> c0..
	var lg [][]any          // id, c0.. (as written, padded)
	nextLog := int64(0)
	val := func() any {
		if r.IntN(4) == 0 {
			return nil
		}
		return int64(r.IntN(100))
	}
	row := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = val()
		}
		return out
	}
	placeholders := func(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
	check := func(step int) {
		t.Helper()
		want := [][]any{}
		ids := make([]int64, 0, len(kv))
		for id := range kv {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			want = append(want, append([]any{id}, kv[id]...))
		}
		got := queryAll(t, db, `SELECT * FROM kv ORDER BY id`)
		if len(want) == 0 {
			require.Empty(t, got, "step %d", step)
		} else {
			require.Equal(t, want, got, "step %d: kv", step)
		}
		wantLog := [][]any{}
		for _, row := range lg {
			wantLog = append(wantLog, append(slices.Clone(row), make([]any, 1+cols-len(row))...))
		}
		gotLog := queryAll(t, db, `SELECT * FROM lg ORDER BY id`)
		if len(wantLog) == 0 {
			require.Empty(t, gotLog, "step %d", step)
		} else {
			require.Equal(t, wantLog, gotLog, "step %d: lg", step)
		}
		if len(ids) > 0 {
			id := ids[r.IntN(len(ids))]
			require.Equal(t, [][]any{append([]any{id}, kv[id]...)}, queryAll(t, db, `SELECT * FROM kv WHERE id = ?`, id), "step %d: lookup", step)
		}
		c := r.IntN(cols)
		n := 0
		for _, row := range kv {
			if row[c] == nil {
				n++
			}
		}
		require.Equal(t, [][]any{{int64(n)}}, queryAll(t, db, fmt.Sprintf(`SELECT count(*) FROM kv WHERE c%d IS NULL`, c)), "step %d: filter", step)
	}
	for step := range 120 {
		switch k := r.IntN(20); {
		case k == 0 && cols < 6:
			mustExec(t, db, fmt.Sprintf(`ALTER TABLE kv ADD COLUMN c%d BIGINT`, cols))
			mustExec(t, db, fmt.Sprintf(`ALTER TABLE lg ADD c%d BIGINT`, cols))
			for id := range kv {
				kv[id] = append(kv[id], nil)
			}
			cols++
		case k == 1:
			queryAll(t, db, `CALL sys.kv_snapshot('kv')`)
		case k == 2:
			queryAll(t, db, `CALL sys.tier('kv')`)
			queryAll(t, db, `CALL sys.tier('lg')`)
		case k == 3:
			require.NoError(t, db.Close())
			db, err = sql.Open("fluss", dsn)
			require.NoError(t, err)
		case k <= 5:
			id := int64(r.IntN(30))
			mustExec(t, db, `DELETE FROM kv WHERE id = ?`, id)
			delete(kv, id)
		case k <= 7:
			// A partial update of one column of an existing row.
			id, c, v := int64(r.IntN(30)), r.IntN(cols), val()
			mustExec(t, db, fmt.Sprintf(`UPDATE kv SET c%d = ? WHERE id = ?`, c), v, id)
			if old, ok := kv[id]; ok {
				old[c] = v
			}
		case k <= 9:
			// A transaction across both tables.
			tx, err := db.Begin()
			require.NoError(t, err)
			id, vals := int64(r.IntN(30)), row(cols)
			_, err = tx.Exec(`INSERT INTO kv VALUES (`+placeholders(cols+1)+`)`, append([]any{id}, vals...)...)
			require.NoError(t, err)
			lv := row(cols)
			_, err = tx.Exec(`INSERT INTO lg VALUES (`+placeholders(cols+1)+`)`, append([]any{nextLog}, lv...)...)
			require.NoError(t, err)
			if r.IntN(4) == 0 {
				require.NoError(t, tx.Rollback())
				break
			}
			require.NoError(t, tx.Commit())
			kv[id] = vals
			lg = append(lg, append([]any{nextLog}, lv...))
			nextLog++
		default:
			// Inserts (upserts) of some rows, and appends; some list
			// fewer columns than the table has.
			n := 1 + r.IntN(cols)
			names := []string{"id"}
			for c := range n {
				names = append(names, fmt.Sprintf("c%d", c))
			}
			id, vals := int64(r.IntN(30)), row(n)
			mustExec(t, db, `INSERT INTO kv (`+strings.Join(names, ", ")+`) VALUES (`+placeholders(n+1)+`)`, append([]any{id}, vals...)...)
			if old, ok := kv[id]; ok {
				copy(old, vals) // an existing key: a partial update
			} else {
				kv[id] = append(vals, make([]any, cols-n)...)
			}
			mustExec(t, db, `INSERT INTO lg (`+strings.Join(names, ", ")+`) VALUES (`+placeholders(n+1)+`)`, append([]any{nextLog}, vals...)...)
			lg = append(lg, append([]any{nextLog}, vals...))
			nextLog++
		}
		check(step)
	}
	t.Logf("%d columns added", cols-1)
}

// Statements prepared before the change run after it against the new
// schema: a lookup by key returns the new column, an UPDATE by key keeps
// it, and an INSERT without a column list is checked against it.
func TestAddColumnPreparedStatements(t *testing.T) {
	db, _ := openDB(t)
	db.SetMaxOpenConns(1)
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a')`)
	sel, err := db.Prepare(`SELECT * FROM kv WHERE id = ?`)
	require.NoError(t, err)
	defer sel.Close()
	upd, err := db.Prepare(`UPDATE kv SET s = ? WHERE id = ?`)
	require.NoError(t, err)
	defer upd.Close()
	ins, err := db.Prepare(`INSERT INTO kv VALUES (?, ?)`)
	require.NoError(t, err)
	defer ins.Close()
	require.Equal(t, []string{"1|a"}, renderRows(t, preparedQuerier{sel}, false, "", int64(1)))
	_, err = upd.Exec("b", int64(1))
	require.NoError(t, err)

	mustExec(t, db, `ALTER TABLE kv ADD COLUMN n BIGINT`)
	mustExec(t, db, `UPDATE kv SET n = 5 WHERE id = 1`)
	require.Equal(t, []string{"1|b|5"}, renderRows(t, preparedQuerier{sel}, false, "", int64(1)))
	_, err = upd.Exec("c", int64(1))
	require.NoError(t, err)
	require.Equal(t, []string{"1|c|5"}, renderRows(t, preparedQuerier{sel}, false, "", int64(1)), "the UPDATE kept n")
	_, err = ins.Exec(int64(2), "x")
	require.Error(t, err, "two values for three columns")
	require.Equal(t, [][]any{{int64(1)}}, queryAll(t, db, `SELECT count(*) FROM kv`))
}

// preparedQuerier runs a prepared statement as a querier, ignoring the
// query text.
type preparedQuerier struct{ st *sql.Stmt }

func (p preparedQuerier) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return p.st.QueryContext(ctx, args...)
}

// An added column with a constant DEFAULT reads it in the rows stored
// before, from every place they are kept, and may then be NOT NULL, as
// MySQL allows; filters on it skip or keep the old rows by that value.
func TestAddColumnDefault(t *testing.T) {
	db, dsn := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE lg (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO lg VALUES (1), (2)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1), (2)`)
	queryAll(t, db, `CALL sys.tier('lg')`)
	queryAll(t, db, `CALL sys.tier('kv')`)
	mustExec(t, db, `INSERT INTO lg VALUES (3)`)
	mustExec(t, db, `INSERT INTO kv VALUES (3)`)
	queryAll(t, db, `CALL sys.kv_snapshot('kv')`)
	mustExec(t, db, `ALTER TABLE lg ADD COLUMN n BIGINT NOT NULL DEFAULT 7, ADD s STRING DEFAULT 'none'`)
	mustExec(t, db, `ALTER TABLE kv ADD COLUMN n BIGINT NOT NULL DEFAULT 7, ADD s STRING DEFAULT 'none'`)
	mustExec(t, db, `INSERT INTO lg VALUES (4, 40, 'x')`)
	mustExec(t, db, `INSERT INTO lg (id) VALUES (5)`)
	mustExec(t, db, `INSERT INTO kv VALUES (4, 40, 'x')`)
	mustExec(t, db, `INSERT INTO kv (id) VALUES (5)`)
	_, err := db.Exec(`INSERT INTO kv VALUES (6, NULL, 'y')`)
	require.ErrorContains(t, err, "NOT NULL")

	check := func(db *sql.DB) {
		t.Helper()
		want := [][]any{{int64(1), int64(7), "none"}, {int64(2), int64(7), "none"}, {int64(3), int64(7), "none"}, {int64(4), int64(40), "x"}, {int64(5), int64(7), "none"}}
		require.Equal(t, want, queryAll(t, db, `SELECT id, n, s FROM lg ORDER BY id`))
		require.Equal(t, want, queryAll(t, db, `SELECT id, n, s FROM kv ORDER BY id`))
		require.Equal(t, [][]any{{int64(1), int64(7), "none"}}, queryAll(t, db, `SELECT * FROM kv WHERE id = 1`))
		require.Equal(t, [][]any{{int64(4)}}, queryAll(t, db, `SELECT count(*) FROM lg WHERE n = 7`))
		require.Equal(t, [][]any{{int64(4)}}, queryAll(t, db, `SELECT id FROM lg WHERE n = 40`))
		require.Equal(t, [][]any{{int64(0)}}, queryAll(t, db, `SELECT count(*) FROM kv WHERE n IS NULL`))
	}
	db2 := checkTieredAndReopened(t, db, dsn, check, "lg", "kv")
	show := queryAll(t, db2, `SHOW CREATE TABLE kv`)[0][1].(string)
	require.Contains(t, show, "DEFAULT 7")
}
