package main

import (
	"context"
	"database/sql/driver"
	"fmt"
	"time"
)

// loadJoin writes the join tables through the Appender; d1 and d2 have
// their keys declared, as a DuckDB user would declare them.
func (e *duckEngine) loadJoin(ctx context.Context, j joinSet, log func(string, int64, time.Duration)) error {
	for _, q := range []string{
		`CREATE TABLE f (id BIGINT, a INTEGER, b INTEGER, v DOUBLE)`,
		`CREATE TABLE f10 (id BIGINT, a INTEGER, b INTEGER, v DOUBLE)`,
		`CREATE TABLE d1 (id BIGINT PRIMARY KEY, seg INTEGER, name VARCHAR)`,
		`CREATE TABLE d2 (id BIGINT PRIMARY KEY, region INTEGER, grp INTEGER)`,
		`CREATE TABLE jk (id BIGINT)`,
	} {
		if _, err := e.sqlDB.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	vals := make([]driver.Value, 4)
	fact := func(i int64) []driver.Value {
		r := j.factAt(i)
		vals[0], vals[1], vals[2], vals[3] = r.id, r.a, r.b, r.v
		return vals
	}
	loads := []struct {
		table string
		rows  int64
		fill  func(i int64) []driver.Value
	}{
		{"f", j.fact, fact},
		{"f10", j.small, fact},
		{"d1", j.dim1, func(i int64) []driver.Value { return []driver.Value{i, dim1Seg(i), dim1Name(i)} }},
		{"d2", j.dim2, func(i int64) []driver.Value { return []driver.Value{i, dim2Region(i), dim2Grp(i)} }},
		{"jk", j.keys, func(i int64) []driver.Value { return []driver.Value{j.key(i)} }},
	}
	for _, l := range loads {
		start := time.Now()
		if err := e.appendRows(ctx, l.table, 0, l.rows, l.fill); err != nil {
			return fmt.Errorf("load %s: %w", l.table, err)
		}
		log("load "+l.table, l.rows, time.Since(start))
	}
	_, err := e.sqlDB.ExecContext(ctx, `CHECKPOINT`)
	return err
}
