package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// T2: a lookup by a unique secondary index through a prepared statement.
// Each system gets the table ux (id, email, v) keyed by id with a UNIQUE
// index on email, of t2Rows rows written by multi-row INSERTs in one
// transaction, and looks rows up by email, as W6 looks them up by key.
const (
	t2Rows    = 100_000
	t2Query   = `SELECT v FROM ux WHERE email = ?`
	t2PKQuery = `SELECT v FROM ux WHERE id = ?`
)

// t2DDL is each system's CREATE TABLE (and CREATE INDEX) of ux.
func t2DDL(system string) ([]string, error) {
	switch system {
	case colFluss:
		return []string{`CREATE TABLE ux (id BIGINT, email STRING, v DOUBLE, PRIMARY KEY (id) NOT ENFORCED, UNIQUE KEY ux_email (email)) WITH ('bucket.num' = '4')`}, nil
	case colSQLite:
		return []string{`CREATE TABLE ux (id INTEGER PRIMARY KEY, email TEXT, v REAL)`, `CREATE UNIQUE INDEX ux_email ON ux (email)`}, nil
	case colDuck:
		return []string{`CREATE TABLE ux (id BIGINT PRIMARY KEY, email VARCHAR, v DOUBLE)`, `CREATE UNIQUE INDEX ux_email ON ux (email)`}, nil
	}
	return nil, na("no DDL for %s", system)
}

func t2Email(i int64) string { return fmt.Sprintf("user%07d@example.com", i) }
func t2V(i int64) float64    { return float64(i) * 0.5 }

// t2Load creates and fills ux.
func t2Load(ctx context.Context, system string, db *sql.DB) error {
	ddl, err := t2DDL(system)
	if err != nil {
		return err
	}
	for _, q := range ddl {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	const per = 1000
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := "INSERT INTO ux VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", per), ", ")
	st, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer st.Close()
	args := make([]any, 0, 3*per)
	for lo := int64(0); lo < t2Rows; lo += per {
		args = args[:0]
		for i := lo; i < lo+per; i++ {
			args = append(args, i, t2Email(i), t2V(i))
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// t2 measures the lookups by email and, on the same table, by key: p50
// of each per system, and fluss's ratio of the two.
func (h *harness) t2(ctx context.Context) {
	byIndex := h.res("T2p50", fmt.Sprintf("lookup by a unique secondary index, prepared statement, p50 (%d rows)", t2Rows), "µs", false)
	byKey := h.res("T2pk", "the same table's lookup by primary key, p50 (compare: W6)", "µs", false)
	loaded := map[string]error{}
	for _, e := range h.engines {
		start := time.Now()
		loaded[e.name()] = t2Load(ctx, e.name(), e.db())
		if loaded[e.name()] == nil {
			fmt.Printf("  T2  %-8s loaded %d rows in %s\n", e.name(), t2Rows, time.Since(start).Round(time.Millisecond))
		}
	}
	for run := 0; run < h.cfg.runs; run++ {
		for _, e := range h.engines {
			if err := loaded[e.name()]; err != nil {
				h.record(byIndex, e.name(), 0, err)
				h.record(byKey, e.name(), 0, err)
				continue
			}
			v, err := h.t2Lookups(ctx, e.db(), t2Query, uint64(run), func(i int64) any { return t2Email(i) })
			h.record(byIndex, e.name(), v, err)
			v, err = h.t2Lookups(ctx, e.db(), t2PKQuery, uint64(run), func(i int64) any { return i })
			h.record(byKey, e.name(), v, err)
		}
	}
	for _, e := range h.engines {
		a, okA := byIndex.median(e.name())
		b, okB := byKey.median(e.name())
		if okA && okB {
			fmt.Printf("  T2  %-8s p50 %s by index, %s by key (%.2fx)\n", e.name(), format(a, "µs"), format(b, "µs"), a/b)
		} else {
			fmt.Printf("  T2  %-8s %s\n", e.name(), byIndex.notes[e.name()])
		}
	}
}

// t2Lookups runs -lookups lookups of random rows through one prepared
// statement (stopping after -lookup-time once it has 1,000) and returns
// their p50 in µs; every answer is checked.
func (h *harness) t2Lookups(ctx context.Context, db *sql.DB, q string, seed uint64, arg func(int64) any) (float64, error) {
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(seed, 2))
	lat := make([]time.Duration, h.cfg.lookups)
	deadline := time.Now().Add(h.cfg.lookupTime)
	var v float64
	for i := range lat {
		if i >= 1000 && time.Now().After(deadline) {
			lat = lat[:i]
			break
		}
		key := rng.Int64N(t2Rows)
		a := arg(key)
		t0 := time.Now()
		if err := st.QueryRowContext(ctx, a).Scan(&v); err != nil {
			return 0, fmt.Errorf("T2 lookup of %v: %w", a, err)
		}
		lat[i] = time.Since(t0)
		if v != t2V(key) {
			return 0, fmt.Errorf("T2 lookup of %v returned v=%v, want %v", a, v, t2V(key))
		}
	}
	slices.Sort(lat)
	return float64(lat[len(lat)/2]) / float64(time.Microsecond), nil
}
