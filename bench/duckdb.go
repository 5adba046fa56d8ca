package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// duckEngine is DuckDB on a database file. Its load path is the
// Appender, DuckDB's documented fastest way to load rows from Go.
type duckEngine struct {
	path  string
	sqlDB *sql.DB
	w7    int
}

func openDuck(path string) (*duckEngine, error) {
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, err
	}
	return &duckEngine{path: path, sqlDB: db}, nil
}

func (e *duckEngine) name() string       { return "DuckDB" }
func (e *duckEngine) db() *sql.DB        { return e.sqlDB }
func (e *duckEngine) driverName() string { return "duckdb" }
func (e *duckEngine) dsn() string        { return e.path }
func (e *duckEngine) close() error       { return e.sqlDB.Close() }

const duckColumns = `id BIGINT, ts TIMESTAMP, k INTEGER, v DOUBLE, s VARCHAR`

// appendRows writes rows from..to-1 into table through one Appender;
// fill returns a row's values.
func (e *duckEngine) appendRows(ctx context.Context, table string, from, to int64, fill func(i int64) []driver.Value) error {
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("duckdb connection is a %T", dc)
		}
		a, err := duckdb.NewAppenderFromConn(dconn, "", table)
		if err != nil {
			return err
		}
		for i := from; i < to; i++ {
			if err := a.AppendRow(fill(i)...); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
}

func duckRow(g gen, gn int) func(i int64) []driver.Value {
	vals := make([]driver.Value, 5)
	return func(i int64) []driver.Value {
		r := g.at(i, gn)
		vals[0], vals[1], vals[2], vals[3], vals[4] = r.id, r.ts, r.k, r.v, r.s
		return vals
	}
}

func (e *duckEngine) load(ctx context.Context, g gen, log func(string, int64, time.Duration)) (loadStats, error) {
	var st loadStats
	for _, q := range []string{
		`CREATE TABLE t (` + duckColumns + `)`,
		`CREATE TABLE tp (` + duckColumns + `, day DATE)`,
		`CREATE TABLE kv (id BIGINT PRIMARY KEY, ts TIMESTAMP, k INTEGER, v DOUBLE, s VARCHAR)`,
		`CREATE TABLE upd (` + duckColumns + `)`,
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
	var err error
	if st.load, err = timed("load t", g.n, func() error {
		return e.appendRows(ctx, "t", 0, g.n, duckRow(g, 0))
	}); err != nil {
		return st, err
	}
	dayVals := make([]driver.Value, 6)
	if _, err = timed("load tp", g.n, func() error {
		return e.appendRows(ctx, "tp", 0, g.n, func(i int64) []driver.Value {
			r := g.at(i, 0)
			dayVals[0], dayVals[1], dayVals[2], dayVals[3], dayVals[4], dayVals[5] = r.id, r.ts, r.k, r.v, r.s, r.day
			return dayVals
		})
	}); err != nil {
		return st, err
	}
	if _, err = timed("load kv", g.n, func() error {
		return e.appendRows(ctx, "kv", 0, g.n, duckRow(g, 0))
	}); err != nil {
		return st, err
	}
	// DuckDB's fastest bulk upsert: append the new values to a staging
	// table, then one INSERT OR REPLACE from it.
	st.nUpd = updatedKeys(g.n)
	upd := make([]driver.Value, 5)
	if st.upsert, err = timed("upsert kv (every 10th key)", st.nUpd, func() error {
		if err := e.appendRows(ctx, "upd", 0, st.nUpd, func(i int64) []driver.Value {
			r := g.at(i*10, 1)
			upd[0], upd[1], upd[2], upd[3], upd[4] = r.id, r.ts, r.k, r.v, r.s
			return upd
		}); err != nil {
			return err
		}
		_, err := e.sqlDB.ExecContext(ctx, `INSERT OR REPLACE INTO kv SELECT * FROM upd`)
		return err
	}); err != nil {
		return st, err
	}
	if _, err := e.sqlDB.ExecContext(ctx, `DROP TABLE upd`); err != nil {
		return st, err
	}
	_, err = e.sqlDB.ExecContext(ctx, `CHECKPOINT`)
	return st, err
}

func (e *duckEngine) w2Query(day time.Time) (string, []any) {
	return `SELECT id, ts, k, v, s FROM tp WHERE day = CAST(? AS DATE)`, []any{day.Format(time.DateOnly)}
}

func (e *duckEngine) freshTable(ctx context.Context) (string, func(), error) {
	e.w7++
	table := fmt.Sprintf("w7_%d", e.w7)
	if _, err := e.sqlDB.ExecContext(ctx, `CREATE TABLE `+table+` (`+duckColumns+`)`); err != nil {
		return "", nil, err
	}
	return table, func() { e.sqlDB.ExecContext(ctx, `DROP TABLE `+table) }, nil
}

func (e *duckEngine) insert(ctx context.Context, g gen, w insertSpec) (int64, time.Duration, error) {
	table, drop, err := e.freshTable(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer drop()
	return w.run(ctx, e.sqlDB, g, table)
}

func (e *duckEngine) appendBulk(ctx context.Context, g gen, rows int) (time.Duration, error) {
	table, drop, err := e.freshTable(ctx)
	if err != nil {
		return 0, err
	}
	defer drop()
	start := time.Now()
	err = e.appendRows(ctx, table, 0, int64(rows), duckRow(g, 0))
	return time.Since(start), err
}

// lakeCount counts the rows of the lake under dir as an outside engine
// reads it correctly: for each table, the files its newest snapshot lists
// in <table id>/snapshots/files.csv (a glob of every Parquet file would
// also read the files older snapshots keep).
func (e *duckEngine) lakeCount(ctx context.Context, dir string) (rows, files int64, err error) {
	lists, err := filepath.Glob(filepath.Join(dir, "*", "snapshots", "files.csv"))
	if err != nil {
		return 0, 0, err
	}
	conn, err := e.sqlDB.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	for _, list := range lists {
		if _, err := conn.ExecContext(ctx, `SET VARIABLE lake_files = (SELECT list(path) FROM read_csv(?, header = true))`, list); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", list, err)
		}
		var n, f int64
		if err := conn.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT filename) FROM read_parquet(getvariable('lake_files'), union_by_name = true, filename = true)`).Scan(&n, &f); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", list, err)
		}
		rows, files = rows+n, files+f
	}
	return rows, files, nil
}
