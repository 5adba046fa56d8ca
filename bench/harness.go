package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/flusslite/fluss"
)

// Column names of the result table, in print order.
const (
	colFluss  = "fluss"
	colDuck   = "DuckDB"
	colSQLite = "SQLite"
	colFloor  = "floor"
)

var columns = []string{colFluss, colDuck, colSQLite, colFloor}

// result is one row of the table: a workload's figures per system, one
// per run. A system without a figure has a note instead (n/a or the
// error).
type result struct {
	id, title string
	unit      string // ms, µs, rows/s, MiB
	higher    bool   // a higher figure is better (rates)
	vals      map[string][]float64
	notes     map[string]string
}

// median of the runs of column c, and whether there is one.
func (r *result) median(c string) (float64, bool) {
	v := r.vals[c]
	if len(v) == 0 {
		return 0, false
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// harness holds the engines, the data set and the results of one run.
type harness struct {
	cfg     config
	dir     string
	g       gen
	fluss   *flussEngine
	duck    *duckEngine
	sqlite  *sqliteEngine
	engines []engine
	floor   *sql.DB
	results []*result
	byID    map[string]*result
	// failed is set when a measurement failed for another reason than a
	// missing feature: the run then exits non-zero.
	failed  bool
	machine []string
	// stRows is how many rows the streaming workloads' table holds.
	stRows int64
	// s3Tables numbers S3's tables of the rows behind.
	s3Tables int
	// streams is set once a streaming workload has a result row.
	streams bool
}

func newHarness(ctx context.Context, cfg config, dir string) (*harness, error) {
	h := &harness{cfg: cfg, dir: dir, g: newGen(cfg.rows), byID: map[string]*result{}}
	var err error
	if h.fluss, err = openFluss(filepath.Join(dir, "fluss")); err != nil {
		return nil, err
	}
	if h.duck, err = openDuck(filepath.Join(dir, "duck.db")); err != nil {
		return nil, err
	}
	if h.sqlite, err = openSQLite(filepath.Join(dir, "sqlite.db")); err != nil {
		return nil, err
	}
	h.engines = []engine{h.fluss, h.duck, h.sqlite}
	if h.floor, err = sql.Open(floorDriverName, fmt.Sprint(cfg.rows)); err != nil {
		return nil, err
	}
	h.machine = describeMachine(ctx, h.duck.sqlDB, h.sqlite.sqlDB)
	return h, nil
}

func (h *harness) close() error {
	var errs []error
	for _, e := range h.engines {
		errs = append(errs, e.close())
	}
	errs = append(errs, h.floor.Close())
	return errors.Join(errs...)
}

func (h *harness) want(id string) bool { return h.cfg.only == nil || h.cfg.only[id] }

// res returns the result row id, creating it in print order.
func (h *harness) res(id, title, unit string, higher bool) *result {
	if r, ok := h.byID[id]; ok {
		return r
	}
	r := &result{id: id, title: title, unit: unit, higher: higher,
		vals: map[string][]float64{}, notes: map[string]string{}}
	h.results = append(h.results, r)
	h.byID[id] = r
	return r
}

// record files the outcome of one run of a workload on system col.
func (h *harness) record(r *result, col string, v float64, err error) {
	var n naError
	switch {
	case err == nil:
		r.vals[col] = append(r.vals[col], v)
	case errors.As(err, &n):
		r.notes[col] = "n/a: " + n.why
	case col == colFluss && errors.Is(err, fluss.ErrUnsupported):
		r.notes[col] = "n/a: " + err.Error()
	default:
		r.notes[col] = "error: " + err.Error()
		h.failed = true
	}
}

// measure runs fn cfg.runs times per engine and records its figures. The
// runs take turns between the engines, so that a disturbance of the
// machine (anything else running) falls on all of them alike. A system
// that answered n/a or failed is not asked again.
func (h *harness) measure(r *result, engines []engine, fn func(e engine) (float64, error)) {
	done := map[string]bool{}
	for run := 0; run < h.cfg.runs; run++ {
		for _, e := range engines {
			if done[e.name()] {
				continue
			}
			v, err := fn(e)
			h.record(r, e.name(), v, err)
			done[e.name()] = err != nil
		}
	}
	for _, e := range engines {
		if m, ok := r.median(e.name()); ok {
			fmt.Printf("  %-3s %-8s %s\n", r.id, e.name(), format(m, r.unit))
		} else {
			fmt.Printf("  %-3s %-8s %s\n", r.id, e.name(), r.notes[e.name()])
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (h *harness) runAll(ctx context.Context) error {
	g := h.g
	fmt.Printf("%d rows, %d runs per workload, data in %s\n", g.n, h.cfg.runs, h.dir)
	for _, l := range h.machine {
		fmt.Println(l)
	}

	// Load: each system's fastest normal path, once.
	loadRes := h.res("load", "load t, fastest path (fluss: AppendArrow; DuckDB: Appender; SQLite: tx + prepared INSERT)", "rows/s", true)
	upsertRes := h.res("upsert", "upsert 10% of kv's keys (fluss: AppendArrow (upserts); DuckDB: Appender + INSERT OR REPLACE; SQLite: tx + prepared INSERT OR REPLACE)", "rows/s", true)
	for _, e := range h.engines {
		fmt.Printf("loading %s\n", e.name())
		st, err := e.load(ctx, g, func(phase string, rows int64, d time.Duration) {
			fmt.Printf("  %-28s %10d rows %10v %12.0f rows/s\n", phase, rows, d.Round(time.Millisecond), float64(rows)/d.Seconds())
		})
		if err != nil {
			return fmt.Errorf("load %s: %w", e.name(), err)
		}
		h.record(loadRes, e.name(), float64(g.n)/st.load.Seconds(), nil)
		h.record(upsertRes, e.name(), float64(st.nUpd)/st.upsert.Seconds(), nil)
	}
	tierRes := h.res("tier", "tiering throughput (CALL sys.tier of 90% of tl)", "rows/s", true)
	h.record(tierRes, colFluss, float64(h.fluss.tiered)/h.fluss.tier.Seconds(), nil)
	h.lakeCheck(ctx)

	if h.want("W1") {
		r := h.res("W1", "full scan, Query + Scan of every column", "ms", false)
		h.measure(r, append(slices.Clip(h.engines), floorEngine{h.floor}), func(e engine) (float64, error) {
			if _, ok := e.(floorEngine); ok {
				// The floor repeats a ring of rows: only its count is checked.
				return h.timedScan(ctx, "W1", e.db(), g.n, -1, w1Query)
			}
			return h.timedScan(ctx, "W1", e.db(), g.n, idSum(0, g.n), w1Query)
		})
	}
	if h.want("W2") {
		day := days * 37 / 100
		want := g.rowsInDay(day)
		lo := g.firstAtOrAfter(dayOf(day))
		r := h.res("W2", "partition-pruned scan, 1 of 100 days", "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) {
			q, args := e.w2Query(dayOf(day))
			return h.timedScan(ctx, "W2", e.db(), want, idSum(lo, lo+want), q, args...)
		})
	}
	if h.want("W3") {
		lo, hi, want := g.selectiveRange()
		first := g.firstAtOrAfter(lo)
		r := h.res("W3", "selective scan, 1% by ts range", "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) {
			return h.timedScan(ctx, "W3", e.db(), want, idSum(first, first+want), w3Query, lo, hi)
		})
	}
	if h.want("W4") {
		r := h.res("W4", "key table full read, 10% of keys updated (fluss: in the log tail past a KV snapshot)", "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) {
			return h.timedScan(ctx, "W4", e.db(), g.n, idSum(0, g.n), w4Query)
		})
	}
	if h.want("W5") {
		r := h.res("W5", "lake-union read, 90% of rows tiered (compare: W1, the same rows log-only)", "ms", false)
		h.measure(r, []engine{h.fluss}, func(engine) (float64, error) {
			start := time.Now()
			err := h.fluss.w5(ctx, g)
			return ms(time.Since(start)), err
		})
		r.notes[colDuck], r.notes[colSQLite] = "-", "-"
	}
	if h.want("W6") {
		h.w6(ctx)
	}
	if h.want("T2") {
		h.t2(ctx)
	}
	if h.want("W7") {
		h.w7(ctx)
	}
	if h.want("W8") {
		r := h.res("W8", "GROUP BY k (1,000 groups), SUM(v), COUNT(*)", "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) { return h.w8(ctx, e.db()) })
	}
	for _, q := range queryWorkloads {
		if !h.want(q.id) {
			continue
		}
		r := h.res(q.id, q.title, "ms", false)
		q := q
		h.measure(r, h.engines, func(e engine) (float64, error) { return h.runQuery(ctx, e.db(), q) })
	}
	if h.want("W9") {
		r := h.res("W9", "W1 through QueryArrow (Arrow record batches)", "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) {
			start := time.Now()
			n, err := e.arrowScan(ctx)
			if err == nil && n != g.n {
				err = fmt.Errorf("W9 read %d rows, want %d", n, g.n)
			}
			return ms(time.Since(start)), err
		})
	}
	if h.want("T1") {
		h.t1(ctx)
	}
	if err := h.runJoins(ctx); err != nil {
		return err
	}
	if h.wantStreams() {
		return h.runStreams(ctx)
	}
	return nil
}

// timedScan times scanAll and checks the row count and, unless wantSum is
// -1, the sum of the ids.
func (h *harness) timedScan(ctx context.Context, what string, db *sql.DB, wantN, wantSum int64, q string, args ...any) (float64, error) {
	start := time.Now()
	n, sum, err := scanAll(ctx, db, q, args...)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if wantSum < 0 {
		if n != wantN {
			return 0, fmt.Errorf("%s read %d rows, want %d", what, n, wantN)
		}
		return ms(d), nil
	}
	return ms(d), checkScan(what, n, sum, wantN, wantSum)
}

// w6 measures point lookups through a prepared statement: p50 and p99 of
// -lookups random keys per run (fewer, but at least 1,000, when they take
// longer than -lookup-time).
func (h *harness) w6(ctx context.Context) {
	p50 := h.res("W6p50", "point lookup by key, prepared statement, p50", "µs", false)
	p99 := h.res("W6p99", "point lookup by key, prepared statement, p99", "µs", false)
	done := map[string]bool{}
	for run := 0; run < h.cfg.runs; run++ {
		for _, e := range h.engines {
			if done[e.name()] {
				continue
			}
			a, b, err := h.lookups(ctx, e.db(), uint64(run))
			h.record(p50, e.name(), a, err)
			h.record(p99, e.name(), b, err)
			done[e.name()] = err != nil
		}
	}
	for _, e := range h.engines {
		a, _ := p50.median(e.name())
		b, _ := p99.median(e.name())
		fmt.Printf("  W6  %-8s p50 %s p99 %s\n", e.name(), format(a, "µs"), format(b, "µs"))
	}
}

func (h *harness) lookups(ctx context.Context, db *sql.DB, seed uint64) (p50, p99 float64, err error) {
	st, err := db.PrepareContext(ctx, w6Query)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(seed, 6))
	lat := make([]time.Duration, h.cfg.lookups)
	var v float64
	deadline := time.Now().Add(h.cfg.lookupTime)
	for i := range lat {
		// A slow system stops early, but with enough lookups for a p99.
		if i >= 1000 && time.Now().After(deadline) {
			lat = lat[:i]
			break
		}
		key := rng.Int64N(h.g.n)
		want := h.g.at(key, 0).v
		if key%10 == 0 {
			want = h.g.at(key, 1).v // an updated key
		}
		t0 := time.Now()
		if err := st.QueryRowContext(ctx, key).Scan(&v); err != nil {
			return 0, 0, fmt.Errorf("lookup of key %d: %w", key, err)
		}
		lat[i] = time.Since(t0)
		if v != want {
			return 0, 0, fmt.Errorf("lookup of key %d returned v=%v, want %v", key, v, want)
		}
	}
	slices.Sort(lat)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return us(lat[len(lat)/2]), us(lat[len(lat)*99/100]), nil
}

// w7 measures writes into a fresh table: a prepared single-row INSERT in a
// transaction, a prepared 1,000-row INSERT, and the bulk append API. Each
// run writes -insert-rows rows or stops after -insert-time, whichever
// comes first (a slow path would otherwise dominate the run), and counts
// rows per second.
func (h *harness) w7(ctx context.Context) {
	spec := insertSpec{rows: int(min(int64(h.cfg.insertRows), h.g.n)), budget: h.cfg.insertTime}
	rate := func(n int64, d time.Duration, err error) (float64, error) {
		if err != nil {
			return 0, err
		}
		return float64(n) / d.Seconds(), nil
	}
	r := h.res("W7", "prepared INSERT, 1 row per statement, in a transaction", "rows/s", true)
	h.measure(r, h.engines, func(e engine) (float64, error) {
		w := spec
		w.perStmt, w.inTx = 1, true
		return rate(e.insert(ctx, h.g, w))
	})
	r = h.res("W7b", "prepared INSERT, 1,000 rows per statement, in a transaction", "rows/s", true)
	h.measure(r, h.engines, func(e engine) (float64, error) {
		w := spec
		w.perStmt, w.inTx = 1000, true
		n, d, err := e.insert(ctx, h.g, w)
		var no naError
		if errors.As(err, &no) {
			w.inTx = false
			n, d, err = e.insert(ctx, h.g, w)
		}
		return rate(n, d, err)
	})
	r = h.res("W7c", "bulk append (fluss: AppendArrow; DuckDB: Appender)", "rows/s", true)
	h.measure(r, h.engines, func(e engine) (float64, error) {
		d, err := e.appendBulk(ctx, h.g, spec.rows)
		return rate(int64(spec.rows), d, err)
	})
	// The bar of AppendArrow is about the API: records the caller already
	// has, written durably. Building them from Go values (W7c) is the
	// caller's cost, not the write's.
	bulk := int(min(int64(h.cfg.arrowRows), h.g.n))
	r = h.res("W7d", fmt.Sprintf("AppendArrow of %d ready record batches of 64K rows", (bulk+arrowBatchRows-1)/arrowBatchRows), "rows/s", true)
	h.measure(r, []engine{h.fluss}, func(engine) (float64, error) {
		d, err := h.fluss.appendReady(ctx, h.g, bulk)
		return rate(int64(bulk), d, err)
	})
}

// w8 runs the GROUP BY and checks it found the 1,000 groups and every row.
func (h *harness) w8(ctx context.Context, db *sql.DB) (float64, error) {
	start := time.Now()
	rows, err := db.QueryContext(ctx, w8Query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var (
		groups, total, k, c int64
		sum                 float64
	)
	for rows.Next() {
		if err := rows.Scan(&k, &sum, &c); err != nil {
			return 0, err
		}
		groups++
		total += c
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if want := min(h.g.n, 1000); groups != want || total != h.g.n {
		return 0, fmt.Errorf("W8 returned %d groups counting %d rows, want %d groups and %d rows", groups, total, want, h.g.n)
	}
	return ms(d), nil
}

// lakeCheck asks DuckDB to read the Parquet files of fluss's lake and
// compares the count with the rows tiered. It is issue 4's proof that the
// lake is plain Parquet.
func (h *harness) lakeCheck(ctx context.Context) {
	r := h.res("lake", "DuckDB read_parquet of fluss's lake files: rows counted (must equal rows tiered)", "rows", true)
	rows, files, err := h.duck.lakeCount(ctx, h.fluss.lakeDir())
	if err == nil && rows != h.fluss.tiered {
		err = fmt.Errorf("DuckDB counted %d rows in %d lake files, fluss tiered %d", rows, files, h.fluss.tiered)
	}
	h.record(r, colDuck, float64(rows), err)
	h.record(r, colFluss, float64(h.fluss.tiered), nil)
	fmt.Printf("lake check: DuckDB counted %d rows in %d Parquet files, fluss tiered %d (err: %v)\n", rows, files, h.fluss.tiered, err)
}

// queryWorkload is one of issue 6's query shapes, checked by check.
type queryWorkload struct {
	id, title, query string
	// check validates the rows (each row's first column as int64) against
	// the generated data.
	check func(g gen, got []int64) error
}

// queryWorkloads are the executor workloads of issue 6, beside W8.
var queryWorkloads = []queryWorkload{
	{
		id: "Q1", title: "SELECT COUNT(*) ... WHERE k < 100 (10%)",
		query: `SELECT COUNT(*) FROM t WHERE k < 100`,
		check: func(g gen, got []int64) error {
			var want int64
			for i := int64(0); i < g.n; i++ {
				if g.at(i, 0).k < 100 {
					want++
				}
			}
			if len(got) != 1 || got[0] != want {
				return fmt.Errorf("Q1 returned %v, want [%d]", got, want)
			}
			return nil
		},
	},
	{
		id: "Q2", title: "ORDER BY v DESC LIMIT 10 (top-N)",
		query: `SELECT id FROM t ORDER BY v DESC, id LIMIT 10`,
		check: func(g gen, got []int64) error {
			if want := min(g.n, 10); int64(len(got)) != want {
				return fmt.Errorf("Q2 returned %d rows, want %d", len(got), want)
			}
			for i := 1; i < len(got); i++ {
				if g.at(got[i-1], 0).v < g.at(got[i], 0).v {
					return fmt.Errorf("Q2 rows are not in descending v order: %v", got)
				}
			}
			return nil
		},
	},
	{
		id: "Q3", title: "SELECT DISTINCT k (1,000 values)",
		query: `SELECT DISTINCT k FROM t`,
		check: func(g gen, got []int64) error {
			seen := map[int64]bool{}
			for _, k := range got {
				if seen[k] || k < 0 || k >= 1000 {
					return fmt.Errorf("Q3 returned k=%d twice or out of range", k)
				}
				seen[k] = true
			}
			if g.n >= 100_000 && len(got) != 1000 {
				return fmt.Errorf("Q3 returned %d distinct values, want 1000", len(got))
			}
			return nil
		},
	},
}

// runQuery times one query workload and checks its result.
func (h *harness) runQuery(ctx context.Context, db *sql.DB, q queryWorkload) (float64, error) {
	start := time.Now()
	rows, err := db.QueryContext(ctx, q.query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var got []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return 0, err
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if err := q.check(h.g, got); err != nil {
		return 0, err
	}
	return ms(d), nil
}
