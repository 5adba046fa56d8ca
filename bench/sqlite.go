package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// sqliteEngine is SQLite (mattn/go-sqlite3, cgo) on a database file in
// WAL mode. Its load path is one transaction of prepared single-row
// INSERTs, the documented fast path; indexes are built after the load.
// It gets the indexes a SQLite user would create for these queries: the
// key as INTEGER PRIMARY KEY, ts for W3, day for W2.
type sqliteEngine struct {
	path  string
	sqlDB *sql.DB
	w7    int
}

const sqliteDSNOptions = "?_journal_mode=WAL&_synchronous=NORMAL"

func openSQLite(path string) (*sqliteEngine, error) {
	db, err := sql.Open("sqlite3", "file:"+path+sqliteDSNOptions)
	if err != nil {
		return nil, err
	}
	// SQLite serialises writers; one connection avoids SQLITE_BUSY
	// between the harness's statements and costs its reads nothing.
	db.SetMaxOpenConns(1)
	return &sqliteEngine{path: path, sqlDB: db}, nil
}

func (e *sqliteEngine) name() string       { return "SQLite" }
func (e *sqliteEngine) db() *sql.DB        { return e.sqlDB }
func (e *sqliteEngine) driverName() string { return "sqlite3" }
func (e *sqliteEngine) dsn() string        { return "file:" + e.path + sqliteDSNOptions }
func (e *sqliteEngine) close() error       { return e.sqlDB.Close() }

// ts and day are declared TIMESTAMP and DATE so that the driver hands
// them back as time.Time, as an application would declare them.
const sqliteColumns = `id INTEGER, ts TIMESTAMP, k INTEGER, v REAL, s TEXT`

func (e *sqliteEngine) load(ctx context.Context, g gen, log func(string, int64, time.Duration)) (loadStats, error) {
	var st loadStats
	for _, q := range []string{
		`CREATE TABLE t (` + sqliteColumns + `)`,
		`CREATE TABLE tp (` + sqliteColumns + `, day DATE)`,
		`CREATE TABLE kv (id INTEGER PRIMARY KEY, ts TIMESTAMP, k INTEGER, v REAL, s TEXT)`,
	} {
		if _, err := e.sqlDB.ExecContext(ctx, q); err != nil {
			return st, err
		}
	}
	timed := func(phase string, rows int64, fn func() error) (time.Duration, error) {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, fmt.Errorf("%s: %w", phase, err)
		}
		d := time.Since(start)
		log(phase, rows, d)
		return d, nil
	}
	inTx := func(verb, table string, cols int, from, to int64, fill func([]any, int64) []any) func() error {
		return func() error {
			return insertTx(ctx, e.sqlDB, true, func(x execer) error {
				return insertBatched(ctx, x, verb, table, cols, 1, from, to, fill)
			})
		}
	}
	var err error
	if st.load, err = timed("load t", g.n, inTx("INSERT", "t", 5, 0, g.n, fillRow(g, 0))); err != nil {
		return st, err
	}
	if _, err = timed("index t(ts)", g.n, func() error {
		_, err := e.sqlDB.ExecContext(ctx, `CREATE INDEX t_ts ON t (ts)`)
		return err
	}); err != nil {
		return st, err
	}
	if _, err = timed("load tp", g.n, inTx("INSERT", "tp", 6, 0, g.n, fillDayRow(g))); err != nil {
		return st, err
	}
	if _, err = timed("index tp(day)", g.n, func() error {
		_, err := e.sqlDB.ExecContext(ctx, `CREATE INDEX tp_day ON tp (day)`)
		return err
	}); err != nil {
		return st, err
	}
	if _, err = timed("load kv", g.n, inTx("INSERT", "kv", 5, 0, g.n, fillRow(g, 0))); err != nil {
		return st, err
	}
	st.nUpd = updatedKeys(g.n)
	if st.upsert, err = timed("upsert kv (every 10th key)", st.nUpd,
		inTx("INSERT OR REPLACE", "kv", 5, 0, st.nUpd, updateRow(g))); err != nil {
		return st, err
	}
	_, err = e.sqlDB.ExecContext(ctx, `ANALYZE`)
	return st, err
}

// w2Query compares day with a bound time.Time: the driver stores and binds
// DATE values in the same text form, so the index on day serves it.
func (e *sqliteEngine) w2Query(day time.Time) (string, []any) {
	return `SELECT id, ts, k, v, s FROM tp WHERE day = ?`, []any{day}
}

func (e *sqliteEngine) insert(ctx context.Context, g gen, w insertSpec) (int64, time.Duration, error) {
	e.w7++
	table := fmt.Sprintf("w7_%d", e.w7)
	if _, err := e.sqlDB.ExecContext(ctx, `CREATE TABLE `+table+` (`+sqliteColumns+`)`); err != nil {
		return 0, 0, err
	}
	defer e.sqlDB.ExecContext(ctx, `DROP TABLE `+table)
	return w.run(ctx, e.sqlDB, g, table)
}

func (e *sqliteEngine) appendBulk(context.Context, gen, int) (time.Duration, error) {
	return 0, na("SQLite has no bulk append API")
}

func (e *sqliteEngine) arrowScan(context.Context) (int64, error) {
	return 0, na("SQLite has no Arrow interface")
}
