package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// engine is one system under measurement. The workloads that are plain
// SQL through database/sql run the same code against every engine; what
// differs (DDL, the load path, writes, Arrow reads) sits behind this
// interface. An engine is used by one goroutine at a time.
type engine interface {
	name() string
	db() *sql.DB
	// load creates the tables t (W1, W3, W8, W9), tp (W2: t plus a day
	// column, by day), kv (W4, W6: t keyed by id) and loads g's rows into
	// each with the engine's fastest normal load path; then it updates
	// every tenth key of kv. It reports what it timed.
	load(ctx context.Context, g gen, log func(phase string, rows int64, d time.Duration)) (loadStats, error)
	// w2Query selects every column of the rows of one day from tp.
	w2Query(day time.Time) (string, []any)
	// insert writes rows of W1's shape into a fresh table through a
	// prepared statement of perStmt rows, inTx in one transaction: w.rows
	// of them, or as many as fit in w.budget. It returns the rows written
	// and the time they took (the commit included).
	insert(ctx context.Context, g gen, w insertSpec) (int64, time.Duration, error)
	// appendBulk writes rows rows through the engine's bulk append API.
	appendBulk(ctx context.Context, g gen, rows int) (time.Duration, error)
	// arrowScan reads every row of t as Arrow record batches and returns
	// the row count.
	arrowScan(ctx context.Context) (int64, error)
	// driverName and dsn reopen the engine's data in another process.
	driverName() string
	dsn() string
	close() error
}

// loadStats are the timings of the one-off load phase.
type loadStats struct {
	load   time.Duration // t, the engine's fastest load path
	upsert time.Duration // updates of every tenth key of kv
	nUpd   int64
}

// naError marks a feature the engine does not have: the harness prints
// "n/a" and goes on, it never invents a figure.
type naError struct{ why string }

func (e naError) Error() string { return "n/a: " + e.why }

func na(format string, args ...any) error { return naError{fmt.Sprintf(format, args...)} }

// W1's statement and the scan every full-read workload shares.
const (
	w1Query = `SELECT id, ts, k, v, s FROM t`
	w3Query = `SELECT id, ts, k, v, s FROM t WHERE ts >= ? AND ts < ?`
	w4Query = `SELECT id, ts, k, v, s FROM kv`
	w6Query = `SELECT v FROM kv WHERE id = ?`
	w8Query = `SELECT k, SUM(v), COUNT(*) FROM t GROUP BY k`
)

// scanAll runs q and scans every column of every row into typed Go
// values, as an application would. It returns the row count and a
// checksum of the ids, so that a wrong answer cannot pass as a fast one.
func scanAll(ctx context.Context, db *sql.DB, q string, args ...any) (n, idSum int64, err error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var (
		id, k int64
		ts    time.Time
		v     float64
		s     string
	)
	for rows.Next() {
		if err := rows.Scan(&id, &ts, &k, &v, &s); err != nil {
			return 0, 0, err
		}
		n++
		idSum += id
	}
	return n, idSum, rows.Err()
}

// checkScan compares a scan's result with what the generator says it
// must be.
func checkScan(what string, n, idSum, wantN, wantSum int64) error {
	if n != wantN || idSum != wantSum {
		return fmt.Errorf("%s read %d rows (id sum %d), want %d rows (id sum %d)", what, n, idSum, wantN, wantSum)
	}
	return nil
}

// idSum is the sum of the ids lo..hi-1.
func idSum(lo, hi int64) int64 {
	if hi <= lo {
		return 0
	}
	return (lo + hi - 1) * (hi - lo) / 2
}

// insertStatement is `INSERT INTO table VALUES (?, ...), ...` for rows
// rows of cols columns.
func insertStatement(verb, table string, cols, rows int) string {
	var q strings.Builder
	q.WriteString(verb)
	q.WriteString(" INTO ")
	q.WriteString(table)
	q.WriteString(" VALUES ")
	tuple := "(" + strings.Repeat("?, ", cols-1) + "?)"
	for i := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(tuple)
	}
	return q.String()
}

// execer is what a batched insert runs on: a *sql.DB or a *sql.Tx.
type execer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// insertBatched writes the rows from..to-1 (their values filled in by
// fill) with prepared statements of perStmt rows, the last one shorter.
func insertBatched(ctx context.Context, db execer, verb, table string, cols, perStmt int, from, to int64,
	fill func(args []any, i int64) []any) error {
	_, err := insertUntil(ctx, db, verb, table, cols, perStmt, from, to, time.Time{}, fill)
	return err
}

// insertUntil is insertBatched that also stops after the statement that
// passes the deadline (zero: none), and returns the rows it wrote.
func insertUntil(ctx context.Context, db execer, verb, table string, cols, perStmt int, from, to int64,
	deadline time.Time, fill func(args []any, i int64) []any) (int64, error) {
	full, err := db.PrepareContext(ctx, insertStatement(verb, table, cols, perStmt))
	if err != nil {
		return 0, err
	}
	defer full.Close()
	args := make([]any, 0, cols*perStmt)
	i := from
	for i < to && (deadline.IsZero() || time.Now().Before(deadline)) {
		m := min(int64(perStmt), to-i)
		args = args[:0]
		for j := i; j < i+m; j++ {
			args = fill(args, j)
		}
		st := full
		if m < int64(perStmt) {
			if st, err = db.PrepareContext(ctx, insertStatement(verb, table, cols, int(m))); err != nil {
				return i - from, err
			}
		}
		_, err := st.ExecContext(ctx, args...)
		if st != full {
			st.Close()
		}
		if err != nil {
			return i - from, fmt.Errorf("insert into %s at row %d: %w", table, i, err)
		}
		i += m
	}
	return i - from, nil
}

// fillRow appends the five W1 columns of row i, generation g.
func fillRow(gn gen, g int) func(args []any, i int64) []any {
	return func(args []any, i int64) []any {
		r := gn.at(i, g)
		return append(args, r.id, r.ts, r.k, r.v, r.s)
	}
}

// fillDayRow appends the W1 columns and the day of row i.
func fillDayRow(gn gen) func(args []any, i int64) []any {
	return func(args []any, i int64) []any {
		r := gn.at(i, 0)
		return append(args, r.id, r.ts, r.k, r.v, r.s, r.day)
	}
}

// insertSpec is one W7 measurement.
type insertSpec struct {
	rows, perStmt int
	inTx          bool
	budget        time.Duration
}

// run writes the rows into table on db and times it.
func (w insertSpec) run(ctx context.Context, db *sql.DB, g gen, table string) (int64, time.Duration, error) {
	var written int64
	start := time.Now()
	err := insertTx(ctx, db, w.inTx, func(x execer) error {
		var err error
		written, err = insertUntil(ctx, x, "INSERT", table, 5, w.perStmt, 0, int64(w.rows), start.Add(w.budget), fillRow(g, 0))
		return err
	})
	return written, time.Since(start), err
}

// updatedKeys are the keys W4 updates: every tenth.
func updatedKeys(n int64) int64 { return (n + 9) / 10 }

// insertTx runs fn in a transaction on db when inTx, else on db itself.
func insertTx(ctx context.Context, db *sql.DB, inTx bool, fn func(execer) error) error {
	if !inTx {
		return fn(db)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// updateRow fills the update of the i-th updated key (key 10*i).
func updateRow(g gen) func(args []any, i int64) []any {
	return func(args []any, i int64) []any {
		r := g.at(i*10, 1)
		return append(args, r.id, r.ts, r.k, r.v, r.s)
	}
}
