package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// querier is what *sql.DB, *sql.Conn and *sql.Tx share for reading.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// txRows returns every row of q rendered as "v1|v2|...", sorted.
func txRows(t *testing.T, q querier, query string, args ...any) []string {
	t.Helper()
	out := renderRows(t, q, false, query, args...)
	slices.Sort(out)
	return out
}

// renderRows returns the rows of query in the order they came, each as
// its values joined by '|'; bytesAsText prints []byte values as text.
func renderRows(t *testing.T, q querier, bytesAsText bool, query string, args ...any) []string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), query, args...)
	require.NoError(t, err, query)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		parts := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok && bytesAsText {
				v = string(b)
			}
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	require.NoError(t, rows.Err(), query)
	return out
}

// affected returns a function taking Exec's results and returning
// RowsAffected: affected(t)(db.Exec(q)).
func affected(t *testing.T) func(sql.Result, error) int64 {
	return func(res sql.Result, err error) int64 {
		t.Helper()
		require.NoError(t, err)
		n, err := res.RowsAffected()
		require.NoError(t, err)
		return n
	}
}

func TestTxIsolationLevels(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT)`)
	ctx := context.Background()
	for _, level := range []sql.IsolationLevel{
		sql.LevelDefault, sql.LevelReadUncommitted, sql.LevelReadCommitted, sql.LevelWriteCommitted,
		sql.LevelRepeatableRead, sql.LevelSnapshot, sql.LevelSerializable, sql.LevelLinearizable,
	} {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/readonly=%v", level, ro), func(t *testing.T) {
				tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level, ReadOnly: ro})
				switch level {
				case sql.LevelDefault, sql.LevelRepeatableRead, sql.LevelSnapshot:
					require.NoError(t, err)
					require.Empty(t, txRows(t, tx, `SELECT id FROM t`))
					_, err = tx.Exec(`INSERT INTO t VALUES (1)`)
					if ro {
						require.ErrorIs(t, err, fluss.ErrReadOnly)
					} else {
						require.NoError(t, err)
					}
					require.NoError(t, tx.Rollback())
				default:
					require.ErrorIs(t, err, fluss.ErrUnsupported)
					require.ErrorContains(t, err, level.String())
				}
			})
		}
	}
	require.Empty(t, txRows(t, db, `SELECT id FROM t`), "every transaction rolled back")
}

func TestTxNestedBeginRefused(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = conn.BeginTx(ctx, nil)
	require.ErrorIs(t, err, fluss.ErrUnsupported)
	require.ErrorContains(t, err, "already open")
	require.NoError(t, tx.Rollback())
	// Ended: a new one may begin.
	tx, err = conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
}

func TestTxReadOnlyRefusesWrites(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a')`)
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	defer tx.Rollback()
	for _, q := range []string{
		`INSERT INTO kv VALUES (2, 'b')`,
		`UPDATE kv SET v = 'x' WHERE k = 1`,
		`DELETE FROM kv WHERE k = 1`,
	} {
		_, err := tx.Exec(q)
		require.ErrorIs(t, err, fluss.ErrReadOnly, q)
	}
	require.Equal(t, []string{"1|a"}, txRows(t, tx, `SELECT k, v FROM kv`))
}

func TestTxRefusesDDLAndCall(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.Exec(`SAVEPOINT before`)
	require.NoError(t, err)
	for _, q := range []string{
		`CREATE TABLE other (id BIGINT)`,
		`DROP TABLE kv`,
		`CALL sys.kv_snapshot('kv')`,
	} {
		_, err := tx.Exec(q)
		require.ErrorIs(t, err, fluss.ErrUnsupported, q)
		require.ErrorContains(t, err, "inside a transaction", q)
	}
	_, err = tx.Query(`CALL sys.kv_snapshot('kv')`)
	require.ErrorIs(t, err, fluss.ErrUnsupported)
	// Rolled back to the savepoint before the failures, the transaction
	// goes on, and nothing happened.
	_, err = tx.Exec(`ROLLBACK TO SAVEPOINT before`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO kv VALUES (1, 'a')`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"kv"}, txRows(t, db, `SHOW TABLES`))
}

// TestTxReadViewIsStable: rows committed by another connection after
// Begin are invisible to every query of the transaction (scans, point
// lookups, aggregates, t$changelog, t$lake, EXPLAIN's offsets), also after
// a KV snapshot, tiering rounds, new segments and a new partition; after
// Commit the connection sees them.
func TestTxReadViewIsStable(t *testing.T) {
	db, dsn := openDB(t, "tiering=off&log.segment.file-size=64kb&kv.snapshot.interval=0")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT, pad STRING, dt STRING) PARTITIONED BY (dt)
		WITH ('bucket.num' = '2', 'table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)
		WITH ('bucket.num' = '3', 'table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE plain (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	mustExec(t, db, `INSERT INTO ev VALUES (1, 'x', 'a'), (2, 'x', 'b')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'one'), (2, 'two'), (3, 'three')`)
	mustExec(t, db, `INSERT INTO plain VALUES (1, 'one'), (2, 'two')`)
	tier(t, db, "ev")
	mustExec(t, db, `INSERT INTO ev VALUES (3, 'x', 'a')`)
	mustExec(t, db, `INSERT INTO kv VALUES (2, 'two-2')`)
	mustExec(t, db, `CALL sys.kv_snapshot('plain')`)
	mustExec(t, db, `INSERT INTO plain VALUES (3, 'three')`)

	queries := []string{
		`SELECT id, dt FROM ev`,
		`SELECT count(*), sum(id) FROM ev WHERE dt = 'a'`,
		"SELECT id FROM `ev$lake`",
		`SELECT k, v FROM kv`,
		`SELECT v FROM kv WHERE k = 2`, // a point lookup
		`SELECT k, v FROM plain`,
		`SELECT v FROM plain WHERE k = 1`,
		"SELECT count(*) FROM `plain$changelog`",
		"SELECT count(*) FROM `kv$changelog`",
	}
	read := func(q querier) map[string][]string {
		out := map[string][]string{}
		for _, s := range queries {
			out[s] = txRows(t, q, s)
		}
		return out
	}

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSnapshot})
	require.NoError(t, err)
	before := read(tx)
	require.Equal(t, []string{"1|a", "2|b", "3|a"}, before[queries[0]])
	require.Equal(t, []string{"two-2"}, before[queries[4]])
	require.Equal(t, []string{"1|one", "2|two", "3|three"}, before[queries[5]])

	// Another connection: a commit across both partitions and tables,
	// new segments, KV snapshots, tiering rounds, a new partition,
	// updates and deletes.
	pad := strings.Repeat("p", 2000)
	for i := range 60 {
		mustExec(t, db, `INSERT INTO ev VALUES (?, ?, 'a'), (?, ?, 'b')`, 100+2*i, pad, 101+2*i, pad)
	}
	mustExec(t, db, `INSERT INTO ev VALUES (999, 'x', 'new')`)
	mustExec(t, db, `INSERT INTO kv VALUES (2, 'changed'), (4, 'four')`)
	mustExec(t, db, `DELETE FROM kv WHERE k = 1`)
	mustExec(t, db, `UPDATE plain SET v = 'changed' WHERE k <= 3`)
	mustExec(t, db, `CALL sys.kv_snapshot('plain')`)
	mustExec(t, db, `CALL sys.kv_snapshot('kv')`)
	tier(t, db, "ev")
	tier(t, db, "kv")
	mustExec(t, db, `INSERT INTO plain VALUES (10, 'ten')`)
	require.Greater(t, segmentCount(t, dsn), 10, "the writes rolled log segments")
	after := read(db)
	for _, s := range queries[:len(queries)-2] {
		require.NotEqual(t, before[s], after[s], "the writes after Begin change %s", s)
	}

	require.Equal(t, before, read(tx), "the transaction's view does not move")
	plan := txRows(t, tx, `EXPLAIN SELECT id FROM ev`)
	require.Contains(t, strings.Join(plan, "\n"), "snapshot 1)", "the lake snapshot of the view")
	require.NoError(t, tx.Commit())
	require.Equal(t, after, read(conn), "after Commit the connection reads the live state")
}

// segmentCount counts the log segment files under the directory of dsn.
func segmentCount(t *testing.T, dsn string) int {
	t.Helper()
	dir, _, _ := strings.Cut(dsn, "?")
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".log") && !d.IsDir() {
			n++
		}
		return err
	}))
	return n
}

func TestTxCommitAtomicAcrossPartitionsAndTables(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			db, dsn := openDB(t, "default.bucket.number=3")
			mustExec(t, db, `CREATE TABLE ev (id BIGINT, dt STRING) PARTITIONED BY (dt)`)
			mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
			mustExec(t, db, `INSERT INTO kv VALUES (1, 'one'), (2, 'two')`)

			tx, err := db.Begin()
			require.NoError(t, err)
			require.EqualValues(t, 2, affected(t)(tx.Exec(`UPDATE kv SET v = 'x' WHERE k < 3`)))
			require.EqualValues(t, 4, affected(t)(tx.ExecContext(context.Background(), `INSERT INTO ev VALUES (1, 'a'), (2, 'a'), (3, 'b'), (4, 'b')`)))
			ins, err := tx.Prepare(`INSERT INTO kv VALUES (?, ?)`)
			require.NoError(t, err)
			for k := 10; k < 15; k++ {
				require.EqualValues(t, 1, affected(t)(ins.Exec(k, fmt.Sprint("v", k))))
			}
			require.NoError(t, ins.Close())
			// A statement prepared on the pool, run through the transaction.
			dbStmt, err := db.Prepare(`INSERT INTO kv VALUES (?, ?)`)
			require.NoError(t, err)
			defer dbStmt.Close()
			require.EqualValues(t, 0, affected(t)(tx.Stmt(dbStmt).Exec(14, "v14")), "buffered key 14 already has v14")
			_, err = tx.Exec(`SAVEPOINT s`)
			require.NoError(t, err)
			_, err = tx.Exec(`DELETE FROM ev WHERE id = 100`)
			require.ErrorIs(t, err, fluss.ErrUnsupported, "a log table refuses DELETE")
			_, err = tx.Exec(`ROLLBACK TO SAVEPOINT s`)
			require.NoError(t, err, "the failure is behind the savepoint: the transaction may commit")

			// Nothing is visible to another connection before Commit; the
			// transaction reads its own writes, in the partitions they
			// create too.
			require.Empty(t, txRows(t, db, `SELECT id FROM ev`))
			require.Equal(t, []string{"1|a", "2|a", "3|b", "4|b"}, txRows(t, tx, `SELECT id, dt FROM ev`))
			require.Equal(t, []string{"3"}, txRows(t, tx, `SELECT id FROM ev WHERE dt = 'b' AND id > 3 - 1 AND id <> 4`))
			require.Equal(t, []string{"1|one", "2|two"}, txRows(t, db, `SELECT k, v FROM kv`))

			want := []string{"1|one", "2|two"}
			if commit {
				require.NoError(t, tx.Commit())
				want = []string{"1|x", "10|v10", "11|v11", "12|v12", "13|v13", "14|v14", "2|x"}
				slices.Sort(want)
			} else {
				require.NoError(t, tx.Rollback())
			}
			check := func(db *sql.DB) {
				if commit {
					require.Equal(t, []string{"1|a", "2|a", "3|b", "4|b"}, txRows(t, db, `SELECT id, dt FROM ev`))
				} else {
					require.Empty(t, txRows(t, db, `SELECT id, dt FROM ev`))
				}
				require.Equal(t, want, txRows(t, db, `SELECT k, v FROM kv`))
			}
			check(db)
			db2 := reopenDB(t, db, dsn)
			check(db2)
		})
	}
}

// TestTxFailedCommitLeavesNothing: a commit that fails on one of its
// writes applies none of them.
func TestTxFailedCommitLeavesNothing(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE a (id BIGINT, dt STRING) PARTITIONED BY (dt)`)
	mustExec(t, db, `CREATE TABLE b (id BIGINT, v STRING)`)
	mustExec(t, db, `CREATE TABLE c (id BIGINT)`)
	tx, err := db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO a VALUES (1, 'x'), (2, 'y')`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO b VALUES (1, NULL)`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO c VALUES (1)`)
	require.NoError(t, err)
	// Meanwhile b is re-created with v NOT NULL: the commit finds the
	// buffered row breaks the constraint.
	mustExec(t, db, `DROP TABLE b`)
	mustExec(t, db, `CREATE TABLE b (id BIGINT, v STRING NOT NULL)`)
	err = tx.Commit()
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.Empty(t, txRows(t, db, `SELECT id FROM a`))
	require.Empty(t, txRows(t, db, `SELECT id FROM b`))
	require.Empty(t, txRows(t, db, `SELECT id FROM c`))
	require.ErrorIs(t, tx.Rollback(), sql.ErrTxDone)

	// A table dropped meanwhile: ErrNotFound, nothing applied.
	tx, err = db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO a VALUES (3, 'x')`)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO c VALUES (3)`)
	require.NoError(t, err)
	mustExec(t, db, `DROP TABLE c`)
	require.ErrorIs(t, tx.Commit(), fluss.ErrNotFound)
	require.Empty(t, txRows(t, db, `SELECT id FROM a`))
}

// TestTxUpdateAfterOwnWrite: reads in a transaction see its own writes,
// so an UPDATE or DELETE of a table it already wrote reads the rows as the
// earlier writes left them, and the count says so.
func TestTxUpdateAfterOwnWrite(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, n INT, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `CREATE TABLE other (k INT, n INT, PRIMARY KEY (k) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 1), (2, 2)`)
	mustExec(t, db, `INSERT INTO other VALUES (1, 1)`)
	tx, err := db.Begin()
	require.NoError(t, err)
	require.EqualValues(t, 2, affected(t)(tx.Exec(`UPDATE kv SET n = n + 10`)))
	require.EqualValues(t, 2, affected(t)(tx.Exec(`UPDATE kv SET n = n + 10`)))
	require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM kv WHERE k = 1`)))
	require.EqualValues(t, 0, affected(t)(tx.Exec(`DELETE FROM kv WHERE k = 1`)), "already deleted by this transaction")
	require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM other WHERE k = 1`)))
	require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO kv VALUES (3, 3)`)))
	require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE kv SET n = n * 2 WHERE n = 3`)))
	require.Equal(t, []string{"2|22", "3|6"}, txRows(t, tx, `SELECT k, n FROM kv`))
	require.Equal(t, []string{"1|1", "2|2"}, txRows(t, db, `SELECT k, n FROM kv`), "other connections do not see the buffered writes")
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"2|22", "3|6"}, txRows(t, db, `SELECT k, n FROM kv`))
	require.Empty(t, txRows(t, db, `SELECT k FROM other`))
}

// rowsAffectedCase is one write and the RowsAffected it reports, run in
// sequence on one fresh set of tables.
type rowsAffectedCase struct {
	sql  string
	args []any
	want int64
}

// rowsAffectedCases is a sequence of writes over a log table lt and a
// primary-key tables kv holding (1, 'a'), (2, 'b'), (3, 'c') and other
// holding (1, 'x') at the start.
// Inside a transaction the counts must be the same: the dry run counts
// against the view plus the earlier writes of the same transaction.
var rowsAffectedCases = []rowsAffectedCase{
	{`INSERT INTO lt VALUES (1), (2), (3)`, nil, 3},
	{`INSERT INTO lt VALUES (?)`, []any{4}, 1},
	{`UPDATE kv SET v = 'b' WHERE k >= 2`, nil, 1}, // (2, 'b') already is
	{`INSERT INTO other VALUES (2, 'x')`, nil, 1},
	{`INSERT INTO kv VALUES (4, 'd')`, nil, 1}, // new key
	{`INSERT INTO kv VALUES (4, 'd')`, nil, 0}, // no-op upsert
	{`INSERT INTO kv VALUES (4, 'e'), (4, 'e')`, nil, 1},
	{`INSERT INTO kv VALUES (1, 'a'), (5, 'f'), (2, 'z')`, nil, 2},
	{`INSERT INTO kv (k) VALUES (1)`, nil, 0}, // partial: v keeps its value
	{`INSERT INTO kv (k) VALUES (6)`, nil, 1}, // partial, new key: v is NULL
	{`INSERT INTO kv (k, v) VALUES (6, NULL)`, nil, 0},
	{`UPDATE kv SET v = 'g' WHERE k >= 5`, nil, 2}, // reads (5, 'f') and (6, NULL) written above
	{`UPDATE kv SET v = NULL WHERE v = 'g' AND k > 5`, nil, 1},
	{`UPDATE kv SET v = 'z' WHERE k = 2`, nil, 0}, // a point lookup of a written key
}

func TestRowsAffected(t *testing.T) {
	for _, inTx := range []bool{false, true} {
		t.Run(fmt.Sprintf("tx=%v", inTx), func(t *testing.T) {
			db, _ := openDB(t, "default.bucket.number=2")
			mustExec(t, db, `CREATE TABLE lt (id BIGINT)`)
			mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
			mustExec(t, db, `CREATE TABLE other (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
			mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
			mustExec(t, db, `INSERT INTO other VALUES (1, 'x')`)
			var (
				exec = db.Exec
				tx   *sql.Tx
			)
			if inTx {
				var err error
				tx, err = db.Begin()
				require.NoError(t, err)
				exec = tx.Exec
			}
			for _, c := range rowsAffectedCases {
				require.Equal(t, c.want, affected(t)(exec(c.sql, c.args...)), c.sql)
			}
			// Then deletes and updates, each sequence in a transaction
			// of its own (or directly).
			for _, seq := range [][]rowsAffectedCase{
				{
					{`UPDATE other SET v = 'y' WHERE k = 1`, nil, 1},
					{`DELETE FROM kv WHERE k IN (4, 5, 77)`, nil, 2},
				},
				{
					{`DELETE FROM kv WHERE k = 9`, nil, 0},
					{`UPDATE other SET v = 'y' WHERE k = 1`, nil, 0},
				},
			} {
				if inTx {
					require.NoError(t, tx.Commit())
					var err error
					tx, err = db.Begin()
					require.NoError(t, err)
					exec = tx.Exec
				}
				for _, c := range seq {
					require.Equal(t, c.want, affected(t)(exec(c.sql, c.args...)), c.sql)
				}
			}
			if inTx {
				require.NoError(t, tx.Commit())
			}
			require.Equal(t, []string{"1|a", "2|z", "3|b", "6|<nil>"}, txRows(t, db, `SELECT k, v FROM kv`))
			require.Equal(t, []string{"1|y", "2|x"}, txRows(t, db, `SELECT k, v FROM other`))
			require.Len(t, txRows(t, db, `SELECT id FROM lt`), 4)
		})
	}
}

func TestLastInsertIdWithoutAutoIncrement(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE lt (id BIGINT)`)
	res := mustExec(t, db, `INSERT INTO lt VALUES (1)`)
	_, err := res.LastInsertId()
	require.ErrorIs(t, err, fluss.ErrUnsupported)
	require.ErrorContains(t, err, "auto-increment")
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	res, err = tx.Exec(`INSERT INTO lt VALUES (2)`)
	require.NoError(t, err)
	_, err = res.LastInsertId()
	require.ErrorIs(t, err, fluss.ErrUnsupported)
}

// TestConcurrentReadersAndWriters runs writers and readers through one
// *sql.DB at once (under -race in CI). Each writer w appends seq = 0, 1,
// 2, ... to its own bucket (bucket.key is w): to solo with plain
// statements, and to ev and pair together in one transaction per step.
// Every read must see, per writer, a prefix 0..n-1 of its rows (no gap:
// a bucket's rows become visible in order), and a read-only transaction
// must see the same prefix in ev and pair (a commit is visible in every
// table or none).
func TestConcurrentReadersAndWriters(t *testing.T) {
	const writers, steps, readers, reads = 4, 20, 3, 15
	db, _ := openDB(t, "sync=off&tiering=off")
	for _, tbl := range []string{"solo", "ev", "pair"} {
		mustExec(t, db, `CREATE TABLE `+tbl+` (w INT, seq BIGINT) WITH ('bucket.num' = '4', 'bucket.key' = 'w')`)
	}
	ctx := context.Background()
	errs := make(chan error, writers+readers)
	for w := range writers {
		go func() {
			errs <- func() error {
				for seq := range steps {
					if _, err := db.ExecContext(ctx, `INSERT INTO solo VALUES (?, ?)`, w, seq); err != nil {
						return err
					}
					tx, err := db.BeginTx(ctx, nil)
					if err != nil {
						return err
					}
					for _, tbl := range []string{"ev", "pair"} {
						if _, err := tx.ExecContext(ctx, `INSERT INTO `+tbl+` VALUES (?, ?)`, w, seq); err != nil {
							tx.Rollback()
							return err
						}
					}
					if err := tx.Commit(); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	// prefixes reads (w, seq) rows and returns per writer how many it
	// has, failing on a gap or a duplicate.
	prefixes := func(q querier, table string) (map[int64]int64, error) {
		rows, err := q.QueryContext(ctx, `SELECT w, seq FROM `+table)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		seen := map[int64]map[int64]bool{}
		for rows.Next() {
			var w, seq int64
			if err := rows.Scan(&w, &seq); err != nil {
				return nil, err
			}
			if seen[w] == nil {
				seen[w] = map[int64]bool{}
			}
			if seen[w][seq] {
				return nil, fmt.Errorf("%s: writer %d seq %d read twice", table, w, seq)
			}
			seen[w][seq] = true
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		out := map[int64]int64{}
		for w, seqs := range seen {
			for s := range int64(len(seqs)) {
				if !seqs[s] {
					return nil, fmt.Errorf("%s: writer %d has %d rows but not seq %d: not a prefix", table, w, len(seqs), s)
				}
			}
			out[w] = int64(len(seqs))
		}
		return out, nil
	}
	for range readers {
		go func() {
			errs <- func() error {
				for range reads {
					if _, err := prefixes(db, "solo"); err != nil {
						return err
					}
					tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
					if err != nil {
						return err
					}
					ev, err := prefixes(tx, "ev")
					if err != nil {
						tx.Rollback()
						return err
					}
					pair, err := prefixes(tx, "pair")
					tx.Rollback()
					if err != nil {
						return err
					}
					if fmt.Sprint(ev) != fmt.Sprint(pair) {
						return fmt.Errorf("one transaction read ev %v but pair %v", ev, pair)
					}
				}
				return nil
			}()
		}()
	}
	for range writers + readers {
		require.NoError(t, <-errs)
	}
	want := map[int64]int64{0: steps, 1: steps, 2: steps, 3: steps}
	for _, tbl := range []string{"solo", "ev", "pair"} {
		got, err := prefixes(db, tbl)
		require.NoError(t, err)
		require.Equal(t, want, got, tbl)
	}
}
