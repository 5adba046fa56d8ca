package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openOwnWritesDB opens a database with a primary-key table acc, a log
// table ev and a log table names, each holding a few committed rows.
func openOwnWritesDB(t *testing.T) *sql.DB {
	t.Helper()
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE acc (id INT, owner STRING, bal INT, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO acc VALUES (1, 'ann', 100), (2, 'bob', 50), (3, 'cid', 70)`)
	mustExec(t, db, `CREATE TABLE ev (id INT, kind STRING)`)
	mustExec(t, db, `INSERT INTO ev VALUES (1, 'x'), (2, 'y')`)
	mustExec(t, db, `CREATE TABLE names (owner STRING, full_name STRING)`)
	mustExec(t, db, `INSERT INTO names VALUES ('ann', 'Ann A'), ('bob', 'Bob B'), ('cid', 'Cid C')`)
	return db
}

// explainText is the plan of q, one line per row.
func explainText(t *testing.T, q querier, query string) string {
	t.Helper()
	return strings.Join(renderRows(t, q, true, "EXPLAIN "+query), "\n")
}

// TestTxReadsOwnWrites is the isolation matrix of a transaction's own
// writes: every kind of read inside the transaction sees them, laid over
// the view taken at Begin; other connections see none of them before
// Commit, and Rollback drops them.
func TestTxReadsOwnWrites(t *testing.T) {
	begin := func(t *testing.T, db *sql.DB) *sql.Tx {
		tx, err := db.Begin()
		require.NoError(t, err)
		t.Cleanup(func() { _ = tx.Rollback() })
		return tx
	}

	t.Run("insert then read", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc VALUES (4, 'dan', 10)`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO names VALUES ('dan', 'Dan D')`)))
		// A scan, with and without the key in its projection.
		require.Equal(t, []string{"1|100", "2|50", "3|70", "4|10"}, txRows(t, tx, `SELECT id, bal FROM acc`))
		require.Equal(t, []string{"10", "50"}, txRows(t, tx, `SELECT bal FROM acc WHERE bal < 60`))
		// A point lookup.
		require.Equal(t, []string{"dan|10"}, txRows(t, tx, `SELECT owner, bal FROM acc WHERE id = 4`))
		plan := explainText(t, tx, `SELECT owner FROM acc WHERE id = 4`)
		require.Contains(t, plan, "FlussLookup: [fluss.acc]")
		require.Contains(t, plan, "TxOverlay: 1 rows (this transaction's buffered writes by primary key: 1 upserted, 0 deleted")
		require.Contains(t, strings.Join(renderRows(t, tx, true, `EXPLAIN ANALYZE SELECT id FROM acc`), "\n"), "result_rows=4")
		// Aggregates.
		require.Equal(t, []string{"4|230|10"}, txRows(t, tx, `SELECT COUNT(*), SUM(bal), MIN(bal) FROM acc`))
		// A join of two written tables, and a subquery.
		require.Equal(t, []string{"4|Dan D"}, txRows(t, tx, `SELECT a.id, n.full_name FROM acc a JOIN names n ON n.owner = a.owner WHERE a.bal < 20`))
		require.Equal(t, []string{"Dan D"}, txRows(t, tx, `SELECT full_name FROM names WHERE owner IN (SELECT owner FROM acc WHERE bal < 20)`))
		// Nobody else sees them.
		require.Equal(t, []string{"3|220"}, txRows(t, db, `SELECT COUNT(*), SUM(bal) FROM acc`))
		require.NotContains(t, explainText(t, db, `SELECT owner FROM acc WHERE id = 4`), "TxOverlay")
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"4|230"}, txRows(t, db, `SELECT COUNT(*), SUM(bal) FROM acc`))
	})

	t.Run("lookup join", func(t *testing.T) {
		db := openLookupDB(t)
		q := "SELECT p.tag, b.name FROM probe p JOIN big b ON b.id = p.k"
		tx := begin(t, db)
		mustTx := func(q string) { _, err := tx.Exec(q); require.NoError(t, err, q) }
		mustTx("INSERT INTO big VALUES (401, 'new')")
		mustTx("UPDATE big SET name = 'seven' WHERE id = 7")
		mustTx("DELETE FROM big WHERE id = 12")
		mustTx("INSERT INTO probe VALUES (8, 8.0, 'f')")
		plan := explainText(t, tx, q)
		require.Contains(t, plan, "[Lookup: right")
		require.Contains(t, plan, "TxOverlay: 3 rows (this transaction's buffered writes by primary key: 2 upserted, 1 deleted")
		require.Contains(t, plan, "TxOverlay: 1 rows (this transaction's buffered appends")
		require.Equal(t, []string{"a|seven", "b|seven", "d|new", "f|n8"}, txRows(t, tx, q))
		require.Equal(t, []string{"a|seven", "b|seven", "c|<nil>", "d|new", "e|<nil>", "f|n8"},
			txRows(t, tx, "SELECT p.tag, b.name FROM probe p LEFT JOIN big b ON b.id = p.k"))
		// The key table's own conjuncts filter the buffered rows too.
		require.Equal(t, []string{"d|new", "f|n8"}, txRows(t, tx, q+" WHERE b.name <> 'seven'"))
		require.Equal(t, []string{"a|n7", "b|n7", "e|n12"}, txRows(t, db, q))
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"a|seven", "b|seven", "d|new", "f|n8"}, txRows(t, db, q))
	})

	t.Run("update twice", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		// A transfer, then another debit of the same row.
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE acc SET bal = bal - ? WHERE id = ?`, 10, 1)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE acc SET bal = bal + ? WHERE id = ?`, 10, 2)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE acc SET bal = bal - ? WHERE id = ?`, "5.00", 1)))
		require.Equal(t, []string{"1|85", "2|60", "3|70"}, txRows(t, tx, `SELECT id, bal FROM acc`))
		require.Equal(t, []string{"85"}, txRows(t, tx, `SELECT bal FROM acc WHERE id = 1`))
		require.Equal(t, []string{"1|100", "2|50", "3|70"}, txRows(t, db, `SELECT id, bal FROM acc`))
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"1|85", "2|60", "3|70"}, txRows(t, db, `SELECT id, bal FROM acc`))
	})

	t.Run("pushed filter hides the old row", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE acc SET bal = 0 WHERE id = 1`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE acc SET bal = 500 WHERE id = 2`)))
		// The view's row of key 1 passes bal >= 100, its buffered row does
		// not: neither is read. Key 2 is the other way round.
		require.Equal(t, []string{"2|500"}, txRows(t, tx, `SELECT id, bal FROM acc WHERE bal >= 100`))
		require.Equal(t, []string{"1"}, txRows(t, tx, `SELECT id FROM acc WHERE bal = 0`))
	})

	t.Run("limit over hidden rows", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 2, affected(t)(tx.Exec(`DELETE FROM acc WHERE id <= 2`)))
		require.Equal(t, []string{"3"}, txRows(t, tx, `SELECT id FROM acc LIMIT 1`))
		require.Equal(t, []string{"3"}, txRows(t, tx, `SELECT id FROM acc LIMIT 5`))
		// A log table's buffered rows follow the view's, under the limit.
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO ev VALUES (3, 'x')`)))
		require.Equal(t, []string{"3"}, txRows(t, tx, `SELECT COUNT(*) FROM (SELECT id FROM ev LIMIT 3) d`))
		require.Equal(t, []string{"1", "2", "3"}, txRows(t, tx, `SELECT id FROM ev LIMIT 5`))
	})

	t.Run("delete then re-insert", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM acc WHERE id = 1`)))
		require.Equal(t, []string{"2", "3"}, txRows(t, tx, `SELECT id FROM acc`))
		require.Empty(t, txRows(t, tx, `SELECT id FROM acc WHERE id = 1`))
		require.EqualValues(t, 0, affected(t)(tx.Exec(`UPDATE acc SET bal = 1 WHERE id = 1`)), "the row is deleted")
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc VALUES (1, 'zed', 7)`)))
		require.Equal(t, []string{"1|zed|7"}, txRows(t, tx, `SELECT * FROM acc WHERE id = 1`))
		require.Equal(t, []string{"3|127"}, txRows(t, tx, `SELECT COUNT(*), SUM(bal) FROM acc`))
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"1|zed|7", "2|bob|50", "3|cid|70"}, txRows(t, db, `SELECT * FROM acc`))
	})

	t.Run("insert then delete", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc VALUES (9, 'ivy', 9)`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM acc WHERE owner = 'ivy'`)))
		require.Empty(t, txRows(t, tx, `SELECT id FROM acc WHERE id = 9`))
		require.Equal(t, []string{"3"}, txRows(t, tx, `SELECT COUNT(*) FROM acc`))
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"1", "2", "3"}, txRows(t, db, `SELECT id FROM acc`))
	})

	t.Run("upsert then lookup", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc VALUES (2, 'bea', 55)`)))
		require.Equal(t, []string{"bea|55"}, txRows(t, tx, `SELECT owner, bal FROM acc WHERE id = ?`, 2))
		require.Equal(t, []string{"bob|50"}, txRows(t, db, `SELECT owner, bal FROM acc WHERE id = ?`, 2))
		// ON DUPLICATE KEY UPDATE over a buffered row.
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc VALUES (2, 'bo', 1) ON DUPLICATE KEY UPDATE bal = VALUES(bal)`)))
		require.Equal(t, []string{"bea|1"}, txRows(t, tx, `SELECT owner, bal FROM acc WHERE id = 2`))
	})

	t.Run("partial update then read", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc (id, bal) VALUES (1, 999)`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO acc (id, bal) VALUES (5, 5)`)))
		require.Equal(t, []string{"1|ann|999", "2|bob|50", "3|cid|70", "5|<nil>|5"}, txRows(t, tx, `SELECT * FROM acc`))
		require.Equal(t, []string{"ann|999"}, txRows(t, tx, `SELECT owner, bal FROM acc WHERE id = 1`))
		require.Equal(t, []string{"5"}, txRows(t, tx, `SELECT id FROM acc WHERE owner IS NULL`))
	})

	t.Run("log append then read with filter", func(t *testing.T) {
		db := openOwnWritesDB(t)
		tx := begin(t, db)
		require.EqualValues(t, 2, affected(t)(tx.Exec(`INSERT INTO ev VALUES (3, 'x'), (4, 'z')`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO ev VALUES (5, 'x')`)))
		require.Equal(t, []string{"1", "3", "5"}, txRows(t, tx, `SELECT id FROM ev WHERE kind = 'x'`))
		// The view's rows come first, then the buffered ones in order.
		require.Equal(t, []string{"3", "5"}, renderRows(t, tx, false, `SELECT id FROM ev WHERE kind = 'x' AND id > 1`))
		require.Equal(t, []string{"x|3", "y|1", "z|1"}, txRows(t, tx, `SELECT kind, COUNT(*) FROM ev GROUP BY kind`))
		require.Equal(t, []string{"5"}, txRows(t, tx, `SELECT COUNT(*) FROM ev`))
		require.Equal(t, []string{"1"}, txRows(t, tx, `SELECT 1 FROM ev WHERE id = 5`))
		require.Contains(t, explainText(t, tx, `SELECT id FROM ev WHERE kind = 'x'`), "TxOverlay: 3 rows (this transaction's buffered appends, read after the view's rows)")
		// INSERT ... SELECT reads them too.
		require.EqualValues(t, 3, affected(t)(tx.Exec(`INSERT INTO ev SELECT id + 10, 'w' FROM ev WHERE kind = 'x'`)))
		require.Equal(t, []string{"11", "13", "15"}, txRows(t, tx, `SELECT id FROM ev WHERE kind = 'w'`))
		require.Equal(t, []string{"2"}, txRows(t, db, `SELECT COUNT(*) FROM ev`))
		require.NoError(t, tx.Rollback())
		require.Equal(t, []string{"2"}, txRows(t, db, `SELECT COUNT(*) FROM ev`), "Rollback drops them")
	})

	t.Run("partitioned key table with a new partition", func(t *testing.T) {
		db, _ := openDB(t)
		mustExec(t, db, `CREATE TABLE pk (dt STRING, id INT, v INT, PRIMARY KEY (dt, id) NOT ENFORCED) PARTITIONED BY (dt) WITH ('bucket.num' = '2')`)
		mustExec(t, db, `INSERT INTO pk VALUES ('d1', 1, 10), ('d1', 2, 20)`)
		tx := begin(t, db)
		require.EqualValues(t, 2, affected(t)(tx.Exec(`INSERT INTO pk VALUES ('d2', 1, 100), ('d2', 3, 300)`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE pk SET v = v + 1 WHERE dt = 'd1' AND id = 2`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM pk WHERE dt = 'd2' AND id = 3`)))
		require.Equal(t, []string{"d1|1|10", "d1|2|21", "d2|1|100"}, txRows(t, tx, `SELECT * FROM pk`))
		require.Equal(t, []string{"1|100"}, txRows(t, tx, `SELECT id, v FROM pk WHERE dt = 'd2'`))
		require.Equal(t, []string{"100"}, txRows(t, tx, `SELECT v FROM pk WHERE dt = 'd2' AND id = 1`))
		require.Empty(t, txRows(t, tx, `SELECT v FROM pk WHERE dt = 'd2' AND id = 3`))
		require.Equal(t, []string{"d1|1|10"}, txRows(t, tx, `SELECT * FROM pk WHERE dt = 'd1' AND v < 15`))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE pk SET v = 0 WHERE dt = 'd2'`)))
		require.Equal(t, []string{"d2|1|0"}, txRows(t, tx, `SELECT * FROM pk WHERE dt = 'd2'`))
		require.Equal(t, []string{"d1|1|10", "d1|2|20"}, txRows(t, db, `SELECT * FROM pk`))
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"d1|1|10", "d1|2|21", "d2|1|0"}, txRows(t, db, `SELECT * FROM pk`))
	})

	t.Run("lake-union", func(t *testing.T) {
		db, _ := openDB(t)
		mustExec(t, db, `CREATE TABLE lk (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '1', 'table.datalake.enabled' = 'true')`)
		mustExec(t, db, `INSERT INTO lk VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
		var snap any
		require.NoError(t, db.QueryRow("CALL sys.tier('lk')").Scan(&snap))
		mustExec(t, db, `INSERT INTO lk VALUES (4, 'd')`)
		tx := begin(t, db)
		require.Contains(t, explainText(t, tx, `SELECT * FROM lk`), "Branch: lake-union")
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE lk SET v = 'A' WHERE id = 1`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM lk WHERE v = 'd'`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO lk VALUES (5, 'e')`)))
		plan := explainText(t, tx, `SELECT * FROM lk`)
		require.Contains(t, plan, "Branch: lake-union")
		require.Contains(t, plan, "TxOverlay: 3 rows")
		require.Equal(t, []string{"1|A", "2|b", "3|c", "5|e"}, txRows(t, tx, `SELECT * FROM lk`))
		require.Equal(t, []string{"2|b"}, txRows(t, tx, `SELECT * FROM lk WHERE v = 'b' OR v = 'a'`))
		require.NoError(t, tx.Commit())
		require.Equal(t, []string{"1|A", "2|b", "3|c", "5|e"}, txRows(t, db, `SELECT * FROM lk`))
	})

	t.Run("keys of other types", func(t *testing.T) {
		db, _ := openDB(t)
		mustExec(t, db, `CREATE TABLE dk (d DATE, x DECIMAL(10, 2), v INT, PRIMARY KEY (d, x) NOT ENFORCED)`)
		mustExec(t, db, `INSERT INTO dk VALUES ('2026-01-01', 1.50, 1), ('2026-01-02', 2.25, 2), ('2026-01-03', 3.00, 3)`)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE dk SET v = 10 WHERE x = 1.5`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM dk WHERE d = '2026-01-02'`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO dk VALUES ('2026-01-04', 4.75, 4)`)))
		require.Equal(t, []string{"1.50|10", "3.00|3", "4.75|4"}, txRows(t, tx, `SELECT x, v FROM dk`))
		require.Equal(t, []string{"10"}, txRows(t, tx, `SELECT v FROM dk WHERE d = '2026-01-01' AND x = 1.50`))
	})

	t.Run("views and derived tables", func(t *testing.T) {
		db := openOwnWritesDB(t)
		mustExec(t, db, `CREATE VIEW rich AS SELECT id, owner FROM acc WHERE bal >= 70`)
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`UPDATE acc SET bal = 80 WHERE id = 2`)))
		require.EqualValues(t, 1, affected(t)(tx.Exec(`DELETE FROM acc WHERE id = 3`)))
		require.Equal(t, []string{"1|ann", "2|bob"}, txRows(t, tx, `SELECT * FROM rich`))
		require.Equal(t, []string{"2"}, txRows(t, tx, `SELECT COUNT(*) FROM (SELECT id FROM acc WHERE bal > 60) d`))
		require.Equal(t, []string{"1|ann", "3|cid"}, txRows(t, db, `SELECT * FROM rich`))
	})

	t.Run("read-only and unwritten tables", func(t *testing.T) {
		db := openOwnWritesDB(t)
		ro, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
		require.NoError(t, err)
		defer ro.Rollback()
		tx := begin(t, db)
		require.EqualValues(t, 1, affected(t)(tx.Exec(`INSERT INTO ev VALUES (3, 'x')`)))
		// A table the transaction did not write reads the view alone.
		require.NotContains(t, explainText(t, tx, `SELECT * FROM acc`), "TxOverlay")
		require.Equal(t, []string{"1|100", "2|50", "3|70"}, txRows(t, tx, `SELECT id, bal FROM acc`))
		require.NoError(t, tx.Commit())
		// The read-only transaction still reads its view: the commit came
		// after its Begin.
		require.Equal(t, []string{"2"}, txRows(t, ro, `SELECT COUNT(*) FROM ev`))
		require.NotContains(t, explainText(t, ro, `SELECT * FROM ev`), "TxOverlay")
	})
}

// TestTxOwnWritesDifferential runs random sequences of writes inside a
// transaction of one database and directly (each committed at once) on
// another that starts with the same rows, and after each write compares
// queries read in the transaction against the same queries over the
// committed copy: a transaction reads its own writes exactly as if they
// were committed. RowsAffected must agree too.
func TestTxOwnWritesDifferential(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	setup := []string{
		`CREATE TABLE kt (p STRING, id INT, a INT, s STRING, PRIMARY KEY (p, id) NOT ENFORCED) PARTITIONED BY (p) WITH ('bucket.num' = '2')`,
		`CREATE TABLE lt (id INT, a INT)`,
		`INSERT INTO kt VALUES ('x', 1, 10, 'a'), ('x', 2, 20, 'b'), ('y', 3, 30, NULL), ('y', 4, 40, 'd')`,
		`INSERT INTO lt VALUES (1, 1), (3, 2)`,
	}
	queries := []string{
		`SELECT * FROM kt`,
		`SELECT id, a FROM kt WHERE a > 25`,
		`SELECT s FROM kt WHERE p = 'z'`,
		`SELECT a FROM kt WHERE p = 'x' AND id = 2`,
		`SELECT p, COUNT(*), SUM(a), MAX(s) FROM kt GROUP BY p`,
		`SELECT lt.id, kt.a FROM lt JOIN kt ON kt.id = lt.id`,
		`SELECT id FROM kt WHERE s IS NULL`,
		`SELECT * FROM lt WHERE a >= 2`,
		`SELECT COUNT(*) FROM (SELECT id FROM kt ORDER BY id LIMIT 3) d`,
		`SELECT id FROM kt WHERE id IN (SELECT id FROM lt)`,
		`SELECT COUNT(*) FROM lt`,
		`SELECT COUNT(*) FROM kt WHERE p <> 'x'`,
	}
	parts := []string{"'x'", "'y'", "'z'"}
	write := func() string {
		p, id, a := parts[r.IntN(len(parts))], r.IntN(8), r.IntN(60)
		switch r.IntN(7) {
		case 0:
			return fmt.Sprintf(`INSERT INTO kt VALUES (%s, %d, %d, 's%d')`, p, id, a, a%5)
		case 1:
			return fmt.Sprintf(`INSERT INTO kt (p, id, a) VALUES (%s, %d, %d)`, p, id, a)
		case 2:
			return fmt.Sprintf(`UPDATE kt SET a = a + %d WHERE a < %d`, r.IntN(10), a)
		case 3:
			return fmt.Sprintf(`UPDATE kt SET s = NULL WHERE p = %s AND id = %d`, p, id)
		case 4:
			return fmt.Sprintf(`DELETE FROM kt WHERE id = %d`, id)
		case 5:
			return fmt.Sprintf(`INSERT INTO lt VALUES (%d, %d)`, id, a)
		default:
			return fmt.Sprintf(`INSERT INTO kt SELECT p, id + 1, a, s FROM kt WHERE a < %d AND id < 7`, a)
		}
	}
	for round := 0; round < 4; round++ {
		inTx, _ := openDB(t, "default.bucket.number=2")
		direct, _ := openDB(t, "default.bucket.number=2")
		for _, q := range setup {
			mustExec(t, inTx, q)
			mustExec(t, direct, q)
		}
		tx, err := inTx.Begin()
		require.NoError(t, err)
		var steps []string
		for step := 0; step < 25; step++ {
			w := write()
			steps = append(steps, w)
			res, err := tx.Exec(w)
			require.NoError(t, err, "seed %d: %s", seed, w)
			got, err := res.RowsAffected()
			require.NoError(t, err)
			want := affected(t)(direct.Exec(w))
			require.Equal(t, want, got, "seed %d, RowsAffected of %s after\n%s", seed, w, strings.Join(steps, "\n"))
			for _, q := range queries {
				require.Equal(t, txRows(t, direct, q), txRows(t, tx, q), "seed %d: %s after\n%s", seed, q, strings.Join(steps, "\n"))
			}
		}
		require.NoError(t, tx.Commit())
		for _, q := range queries {
			require.Equal(t, txRows(t, direct, q), txRows(t, inTx, q), "seed %d: %s after Commit", seed, q)
		}
	}
}

// BenchmarkTxScanOwnWrites times an aggregate over a 200,000-row key
// table outside a transaction, in one that did not write the table (no
// overlay: it must cost nothing), and in one that updated one of its rows
// (the overlay tests every row's key).
func BenchmarkTxScanOwnWrites(b *testing.B) {
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?default.bucket.number=2")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	exec := func(q querier, s string) {
		if _, err := q.(interface {
			ExecContext(context.Context, string, ...any) (sql.Result, error)
		}).ExecContext(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
	exec(db, `CREATE TABLE big (id BIGINT, v BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	for part := 0; part < 20; part++ {
		vals := make([]string, 0, 10000)
		for i := 0; i < 10000; i++ {
			id := part*10000 + i
			vals = append(vals, fmt.Sprintf("(%d, %d, 's%d')", id, id%97, id))
		}
		exec(db, "INSERT INTO big VALUES "+strings.Join(vals, ","))
	}
	const q = `SELECT COUNT(*), SUM(v) FROM big WHERE v < 50`
	run := func(b *testing.B, r querier) {
		for b.Loop() {
			rows, err := r.QueryContext(context.Background(), q)
			if err != nil {
				b.Fatal(err)
			}
			for rows.Next() {
			}
			if err := rows.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("outside", func(b *testing.B) { run(b, db) })
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.Run("tx-unwritten", func(b *testing.B) { run(b, tx) })
	exec(tx, `UPDATE big SET v = 1 WHERE id = 5`)
	b.Run("tx-written", func(b *testing.B) { run(b, tx) })
}
