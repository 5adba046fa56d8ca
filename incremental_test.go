package fluss_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// incrementalHint is the OPTIONS hint of an incremental read of [start,
// end); end < 0 leaves the window open.
func incrementalHint(start, end int64) string {
	if end < 0 {
		return fmt.Sprintf("/*+ OPTIONS('scan.incremental.start.timestamp' = '%d') */", start)
	}
	return fmt.Sprintf("/*+ OPTIONS('scan.incremental.start.timestamp' = '%d', 'scan.incremental.end.timestamp' = '%d') */", start, end)
}

// change is one row of t$changelog, its commit time in milliseconds.
type change struct {
	ts     int64
	offset int64
	kind   string
	row    []any
}

// changelogOf reads every change of table t with its commit time.
func changelogOf(t *testing.T, db *sql.DB, table string) []change {
	t.Helper()
	rows := queryAll(t, db, fmt.Sprintf("SELECT * FROM `%s$changelog`", table))
	out := make([]change, len(rows))
	for i, r := range rows {
		out[i] = change{kind: r[0].(string), offset: r[1].(int64), ts: r[2].(time.Time).UnixMilli(), row: r[3:]}
	}
	return out
}

// commitTimes returns the distinct commit times of changes, ascending.
func commitTimes(changes []change) []int64 {
	var ts []int64
	for _, c := range changes {
		ts = append(ts, c.ts)
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// windowsOver are windows before, inside, between and after the commit
// times: every boundary is a commit time, one before it or one after.
func windowsOver(times []int64) [][2]int64 {
	var bounds []int64
	for _, ts := range times {
		bounds = append(bounds, ts-1, ts, ts+1)
	}
	bounds = append(bounds, 0, times[len(times)-1]+1000)
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var out [][2]int64
	for i, s := range bounds {
		out = append(out, [2]int64{s, -1})
		for _, e := range bounds[i+1:] {
			out = append(out, [2]int64{s, e})
		}
	}
	return out
}

func inWindow(c change, w [2]int64) bool {
	return c.ts >= w[0] && (w[1] < 0 || c.ts < w[1])
}

// sortedRows renders rows for an order-free comparison.
func sortedRows(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r...)
	}
	slices.Sort(out)
	return out
}

// commitSlowly runs each statement as its own commit, a few milliseconds
// apart, so that the commits have distinct timestamps.
func commitSlowly(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		mustExec(t, db, s)
		time.Sleep(3 * time.Millisecond)
	}
}

// The rows of an incremental read of a log table are the changelog's rows
// committed in the window, for every window over the data, in one
// segment and across many.
func TestIncrementalReadLogTableMatchesChangelog(t *testing.T) {
	for _, dsn := range []string{"", "log.segment.file-size=1kb"} {
		t.Run("dsn="+dsn, func(t *testing.T) {
			db, _ := openDB(t, dsn)
			mustExec(t, db, `CREATE TABLE lg (id INT, name STRING) WITH ('bucket.num' = '3')`)
			var stmts []string
			for i := range 12 {
				stmts = append(stmts, fmt.Sprintf(`INSERT INTO lg VALUES (%d, 'a%d'), (%d, 'b%d'), (%d, '%s')`,
					3*i, i, 3*i+1, i, 3*i+2, strings.Repeat("x", 100)))
			}
			commitSlowly(t, db, stmts...)
			changes := changelogOf(t, db, "lg")
			times := commitTimes(changes)
			require.Greater(t, len(times), 6, "commits a few milliseconds apart")
			for _, w := range windowsOver(times) {
				var want [][]any
				for _, c := range changes {
					if inWindow(c, w) {
						want = append(want, c.row)
					}
				}
				got := queryAll(t, db, "SELECT "+incrementalHint(w[0], w[1])+" id, name FROM lg")
				require.Equal(t, sortedRows(want), sortedRows(got), "window %v", w)
			}
		})
	}
}

// A key table's window is folded per key: the last change in the window
// wins, and a key whose last change there is a delete is left out.
func TestIncrementalReadKeyTableFoldsWindow(t *testing.T) {
	for _, dsn := range []string{"", "log.segment.file-size=1kb"} {
		t.Run("dsn="+dsn, func(t *testing.T) {
			db, _ := openDB(t, dsn)
			mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '2')`)
			mustExec(t, db, `CREATE TABLE ids (k INT) WITH ('bucket.num' = '1')`)
			commitSlowly(t, db, `INSERT INTO ids VALUES (1)`)
			commitSlowly(t, db,
				`INSERT INTO kv VALUES (1, 'a'), (2, 'a'), (3, 'a')`,
				`INSERT INTO kv VALUES (1, 'b')`,
				`DELETE FROM kv WHERE k = 2`,
				`INSERT INTO kv VALUES (4, 'a'), (2, 'c')`,
				`UPDATE kv SET v = 'd' WHERE k = 3`,
				`DELETE FROM kv WHERE k = 1`,
				`INSERT INTO kv VALUES (5, 'a')`,
				`INSERT INTO kv VALUES (1, 'e'), (5, 'b')`,
				`DELETE FROM kv WHERE k = 4`,
			)
			changes := changelogOf(t, db, "kv")
			times := commitTimes(changes)
			require.Greater(t, len(times), 5)
			for _, w := range windowsOver(times) {
				last := map[int64]change{}
				for _, c := range changes { // each key's changes are in offset order
					if inWindow(c, w) {
						last[c.row[0].(int64)] = c
					}
				}
				var want [][]any
				for _, c := range last {
					if c.kind != "delete" && c.kind != "update_before" {
						want = append(want, c.row)
					}
				}
				got := queryAll(t, db, "SELECT "+incrementalHint(w[0], w[1])+" k, v FROM kv")
				require.Equal(t, sortedRows(want), sortedRows(got), "window %v", w)
			}

			// A WHERE fixing the key reads the window too, not the live row.
			first := times[0]
			require.Equal(t, [][]any{{int64(1), "a"}},
				queryAll(t, db, "SELECT "+incrementalHint(first, first+1)+" k, v FROM kv WHERE k = 1"))
			require.Empty(t, queryAll(t, db, "SELECT "+incrementalHint(first, first+1)+" k, v FROM kv WHERE k = 5"))
			// A join does not look the key table up in its live state
			// either; the window holds for both tables (ids was written
			// before kv).
			require.Equal(t, [][]any{{int64(1), "a"}},
				queryAll(t, db, "SELECT "+incrementalHint(0, first+1)+" kv.k, kv.v FROM ids JOIN kv ON ids.k = kv.k"))
		})
	}
}

func TestIncrementalReadErrors(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE lg (id INT) WITH ('bucket.num' = '1')`)
	mustExec(t, db, `CREATE TABLE kv (k INT, PRIMARY KEY (k) NOT ENFORCED)`)
	for _, tc := range []struct{ hint, table, err string }{
		{`'scan.incremental.start.timestamp' = '  '`, "lg",
			"'scan.incremental.start.timestamp' must not be blank. Provide epoch milliseconds or a 'yyyy-MM-dd HH:mm:ss' timestamp, or omit the option for a full-table batch read."},
		{`'scan.incremental.end.timestamp' = '1000'`, "lg",
			"'scan.incremental.end.timestamp' is set but 'scan.incremental.start.timestamp' is missing. An end timestamp alone cannot truncate a batch read; set a start timestamp for an incremental read, or remove the end option."},
		{`'scan.incremental.start.timestamp' = '2000', 'scan.incremental.end.timestamp' = '1000'`, "kv",
			"Invalid incremental time range: the start timestamp '2000' must be strictly before the end timestamp '1000'. The window is left-closed right-open '[start, end)'."},
		{`'scan.incremental.start.timestamp' = '1000', 'scan.incremental.end.timestamp' = '1000'`, "lg",
			"Invalid incremental time range: the start timestamp '1000' must be strictly before the end timestamp '1000'."},
		{`'scan.incremental.start.timestamp' = 'now'`, "lg",
			"Invalid value for 'scan.incremental.start.timestamp': 'now'. It should be epoch milliseconds or follow the format 'yyyy-MM-dd HH:mm:ss', e.g. '2023-12-09 23:09:12' or '1678883047356'."},
		{`'scan.incremental.start.timestamp' = '1000', 'read.optimized' = 'true'`, "kv",
			"'read.optimized' = 'true' cannot be combined with 'scan.incremental.start.timestamp' on fluss.kv"},
		{`'scan.incremental.start.timestamp' = '1000'`, "`kv$changelog`",
			"'scan.incremental.start.timestamp' reads a table's changes, not fluss.kv$changelog"},
	} {
		_, err := db.Query("SELECT /*+ OPTIONS(" + tc.hint + ") */ * FROM " + tc.table)
		require.Error(t, err, tc.hint)
		require.Contains(t, err.Error(), tc.err)
		require.ErrorIs(t, err, errorKindOf(tc.err))
	}
	_, err := db.Query(`SELECT /*+ OPTIONS('scan.incremental.end.timestamp' = '1000') */ * FROM kv WHERE k = 1`)
	require.ErrorContains(t, err, "is set but 'scan.incremental.start.timestamp' is missing", "a point lookup does not ignore it")
	// An end that is blank is no end: the window runs to the latest data.
	mustExec(t, db, `INSERT INTO lg VALUES (1)`)
	require.Len(t, queryAll(t, db, `SELECT /*+ OPTIONS('scan.incremental.start.timestamp' = '0', 'scan.incremental.end.timestamp' = '') */ * FROM lg`), 1)
}

func errorKindOf(msg string) error {
	if strings.Contains(msg, "reads a table's changes") {
		return fluss.ErrUnsupported
	}
	return fluss.ErrInvalidOption
}

// EXPLAIN shows the third branch and its window; a 'yyyy-MM-dd HH:mm:ss'
// value is read in the DSN's time zone.
func TestIncrementalReadExplain(t *testing.T) {
	db, _ := openDB(t, "loc=Asia/Tokyo")
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '1', 'table.datalake.enabled' = 'true')`)
	commitSlowly(t, db, `INSERT INTO kv VALUES (1, 'a')`, `INSERT INTO kv VALUES (1, 'b')`)
	mustExec(t, db, `CALL sys.tier('kv')`)
	mustExec(t, db, `CALL sys.kv_snapshot('kv')`)
	changes := changelogOf(t, db, "kv")
	second := changes[1].ts

	plan := func(q string) string {
		var lines []string
		for _, r := range queryAll(t, db, "EXPLAIN "+q) {
			lines = append(lines, r[0].(string))
		}
		return strings.Join(lines, "\n")
	}
	require.Equal(t, fmt.Sprintf(`FlussScan: [fluss.kv], Type: [Upsert] [TimeRange: [%d, latest)]
Branch: incremental
Split: kv+log partition=- bucket=0 log=1..3 kv_snapshot=none`, second),
		plan("SELECT "+incrementalHint(second, -1)+" * FROM kv"))
	require.Equal(t, fmt.Sprintf(`FlussScan: [fluss.kv], Type: [Upsert] [TimeRange: [0, %d)]
Branch: incremental
Split: kv+log partition=- bucket=0 log=0..1 kv_snapshot=none`, second),
		plan("SELECT "+incrementalHint(0, second)+" * FROM kv"))

	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	sec := time.UnixMilli(second).In(tokyo).Truncate(time.Second)
	hint := fmt.Sprintf("/*+ OPTIONS('scan.incremental.start.timestamp' = '%s') */", sec.Format("2006-01-02 15:04:05"))
	require.Contains(t, plan("SELECT "+hint+" * FROM kv"), fmt.Sprintf("[TimeRange: [%d, latest)]", sec.UnixMilli()))
	require.Equal(t, queryAll(t, db, "SELECT "+incrementalHint(sec.UnixMilli(), -1)+" * FROM kv"),
		queryAll(t, db, "SELECT "+hint+" * FROM kv"))
	// The full read still unions the lake.
	require.Contains(t, plan("SELECT * FROM kv"), "Branch: lake-union")
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A window older than table.log.ttl may have lost its oldest changes: the
// read warns through the engine's logger and returns what is left.
func TestIncrementalReadWarnsBeforeRetention(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctr, err := fluss.NewConnector(filepath.Join(t.TempDir(), "db"), fluss.WithLogger(logger))
	require.NoError(t, err)
	db := sql.OpenDB(ctr)
	defer db.Close()
	mustExec(t, db, `CREATE TABLE lg (id INT) WITH ('bucket.num' = '1', 'table.log.ttl' = '1 h')`)
	mustExec(t, db, `CREATE TABLE forever (id INT) WITH ('bucket.num' = '1', 'table.log.ttl' = '0')`)
	mustExec(t, db, `INSERT INTO lg VALUES (1)`)
	mustExec(t, db, `INSERT INTO forever VALUES (1)`)

	recent := time.Now().Add(-time.Minute).UnixMilli()
	require.Len(t, queryAll(t, db, "SELECT "+incrementalHint(recent, -1)+" * FROM lg"), 1)
	require.NotContains(t, logs.String(), "Incremental read")

	old := time.Now().Add(-2 * time.Hour).UnixMilli()
	require.Len(t, queryAll(t, db, "SELECT "+incrementalHint(old, -1)+" * FROM forever"), 1)
	require.NotContains(t, logs.String(), "Incremental read", "a log kept forever loses nothing")

	require.Len(t, queryAll(t, db, "SELECT "+incrementalHint(old, -1)+" * FROM lg"), 1)
	require.Contains(t, logs.String(), "level=WARN")
	require.Contains(t, logs.String(), fmt.Sprintf("Incremental read of fluss.lg starts at %d, which is earlier than the table is guaranteed to retain (table.log.ttl = 1h0m0s)", old))
}

// Inside a transaction the window is read at the transaction's view: a
// commit after Begin is not in it, nor are the transaction's own
// uncommitted writes.
func TestIncrementalReadInTransaction(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'a')`)
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	read := func() []string {
		rows, err := tx.Query("SELECT " + incrementalHint(0, -1) + " k, v FROM kv")
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var k int64
			var v string
			require.NoError(t, rows.Scan(&k, &v))
			out = append(out, fmt.Sprintf("%d %s", k, v))
		}
		require.NoError(t, rows.Err())
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"1 a", "2 a"}, read())
	mustExec(t, db, `INSERT INTO kv VALUES (3, 'a'), (1, 'b')`)
	_, err = tx.Exec(`INSERT INTO kv VALUES (4, 'tx')`)
	require.NoError(t, err)
	require.Equal(t, []string{"1 a", "2 a"}, read())
	require.NoError(t, tx.Rollback())
	require.Len(t, queryAll(t, db, "SELECT "+incrementalHint(0, -1)+" k, v FROM kv"), 3)
}
