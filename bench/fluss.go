package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flusslite/fluss"
)

// flussEngine is fluss on a directory. Its load path is its bulk write,
// fluss.AppendArrow, each call durable when it returns. Background tiering and KV snapshots
// are off so that the harness decides when they happen.
type flussEngine struct {
	dir   string
	sqlDB *sql.DB
	// tier and tiered are the timing of the one tiering round of tl, the
	// lake-enabled copy of t (W5), and the rows it moved.
	tier   time.Duration
	tiered int64
	w7     int
}

const flussDSNOptions = "?sync=on&tiering=off&kv.snapshot.interval=0"

func openFluss(dir string) (*flussEngine, error) {
	db, err := sql.Open("fluss", dir+flussDSNOptions)
	if err != nil {
		return nil, err
	}
	return &flussEngine{dir: dir, sqlDB: db}, nil
}

func (e *flussEngine) name() string       { return "fluss" }
func (e *flussEngine) db() *sql.DB        { return e.sqlDB }
func (e *flussEngine) driverName() string { return "fluss" }
func (e *flussEngine) dsn() string        { return e.dir + flussDSNOptions }
func (e *flussEngine) close() error       { return e.sqlDB.Close() }

// lakeDir is where the lake tier keeps its Parquet files.
func (e *flussEngine) lakeDir() string { return filepath.Join(e.dir, "lake") }

const flussColumns = `id BIGINT, ts TIMESTAMP(3), k INT, v DOUBLE, s STRING`

func (e *flussEngine) load(ctx context.Context, g gen, log func(string, int64, time.Duration)) (loadStats, error) {
	var st loadStats
	ddl := []string{
		`CREATE TABLE t (` + flussColumns + `) WITH ('bucket.num' = '4')`,
		`CREATE TABLE tp (` + flussColumns + `, day DATE) PARTITIONED BY (day) WITH ('bucket.num' = '4')`,
		`CREATE TABLE kv (` + flussColumns + `, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '4')`,
		`CREATE TABLE tl (` + flussColumns + `) WITH ('bucket.num' = '4', 'table.datalake.enabled' = 'true')`,
	}
	for _, q := range ddl {
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
		return e.appendArrow(ctx, "t", false, 0, g.n, g.row0)
	}); err != nil {
		return st, err
	}
	if _, err = timed("load tp", g.n, func() error {
		return e.appendArrow(ctx, "tp", true, 0, g.n, g.row0)
	}); err != nil {
		return st, err
	}
	if _, err = timed("load kv", g.n, func() error {
		return e.appendArrow(ctx, "kv", false, 0, g.n, g.row0)
	}); err != nil {
		return st, err
	}
	if _, err = timed("kv snapshot", g.n, func() error {
		_, err := e.sqlDB.ExecContext(ctx, `CALL sys.kv_snapshot('kv')`)
		return err
	}); err != nil {
		return st, err
	}
	st.nUpd = updatedKeys(g.n)
	if st.upsert, err = timed("upsert kv (every 10th key)", st.nUpd, func() error {
		return e.appendArrow(ctx, "kv", false, 0, st.nUpd, func(i int64) row { return g.at(i*10, 1) })
	}); err != nil {
		return st, err
	}
	// tl: the same rows as t, 90% of them tiered into the lake, the last
	// 10% in the log tail.
	cut := g.n * 9 / 10
	if _, err = timed("load tl (first 90%)", cut, func() error {
		return e.appendArrow(ctx, "tl", false, 0, cut, g.row0)
	}); err != nil {
		return st, err
	}
	if e.tier, err = timed("tier tl", cut, func() error {
		var id int64
		return e.sqlDB.QueryRowContext(ctx, `CALL sys.tier('tl')`).Scan(&id)
	}); err != nil {
		return st, err
	}
	e.tiered = cut
	if _, err = timed("load tl (last 10%)", g.n-cut, func() error {
		return e.appendArrow(ctx, "tl", false, cut, g.n, g.row0)
	}); err != nil {
		return st, err
	}
	return st, nil
}

func (e *flussEngine) w2Query(day time.Time) (string, []any) {
	return `SELECT id, ts, k, v, s FROM tp WHERE day = ?`, []any{day.Format(time.DateOnly)}
}

func (e *flussEngine) insert(ctx context.Context, g gen, w insertSpec) (int64, time.Duration, error) {
	e.w7++
	table := fmt.Sprintf("w7_%d", e.w7)
	if _, err := e.sqlDB.ExecContext(ctx, `CREATE TABLE `+table+` (`+flussColumns+`) WITH ('bucket.num' = '4')`); err != nil {
		return 0, 0, err
	}
	defer e.sqlDB.ExecContext(ctx, `DROP TABLE `+table)
	n, d, err := w.run(ctx, e.sqlDB, g, table)
	if errors.Is(err, fluss.ErrUnsupported) {
		return 0, 0, na("%v", err)
	}
	return n, d, err
}

// w5 reads tl, 90% of whose rows are in the lake, through database/sql.
func (e *flussEngine) w5(ctx context.Context, g gen) error {
	n, sum, err := scanAll(ctx, e.sqlDB, `SELECT id, ts, k, v, s FROM tl`)
	if err != nil {
		return err
	}
	return checkScan("W5", n, sum, g.n, idSum(0, g.n))
}
