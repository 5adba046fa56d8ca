package main

import (
	"context"
	"fmt"
	"time"
)

// loadJoin writes the join tables in one transaction each of prepared
// INSERTs. d1 and d2 are keyed by INTEGER PRIMARY KEY, the index SQLite
// joins through; the fact tables get none, as a star schema's facts
// usually have none on their dimension columns.
func (e *sqliteEngine) loadJoin(ctx context.Context, j joinSet, log func(string, int64, time.Duration)) error {
	for _, q := range []string{
		`CREATE TABLE f (id INTEGER, a INTEGER, b INTEGER, v REAL)`,
		`CREATE TABLE f10 (id INTEGER, a INTEGER, b INTEGER, v REAL)`,
		`CREATE TABLE d1 (id INTEGER PRIMARY KEY, seg INTEGER, name TEXT)`,
		`CREATE TABLE d2 (id INTEGER PRIMARY KEY, region INTEGER, grp INTEGER)`,
		`CREATE TABLE jk (id INTEGER)`,
	} {
		if _, err := e.sqlDB.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	fact := func(args []any, i int64) []any {
		r := j.factAt(i)
		return append(args, r.id, r.a, r.b, r.v)
	}
	loads := []struct {
		table string
		cols  int
		rows  int64
		fill  func(args []any, i int64) []any
	}{
		{"f", 4, j.fact, fact},
		{"f10", 4, j.small, fact},
		{"d1", 3, j.dim1, func(args []any, i int64) []any { return append(args, i, dim1Seg(i), dim1Name(i)) }},
		{"d2", 3, j.dim2, func(args []any, i int64) []any { return append(args, i, dim2Region(i), dim2Grp(i)) }},
		{"jk", 1, j.keys, func(args []any, i int64) []any { return append(args, j.key(i)) }},
	}
	for _, l := range loads {
		start := time.Now()
		err := insertTx(ctx, e.sqlDB, true, func(x execer) error {
			return insertBatched(ctx, x, "INSERT", l.table, l.cols, 1, 0, l.rows, l.fill)
		})
		if err != nil {
			return fmt.Errorf("load %s: %w", l.table, err)
		}
		log("load "+l.table, l.rows, time.Since(start))
	}
	_, err := e.sqlDB.ExecContext(ctx, `ANALYZE`)
	return err
}
