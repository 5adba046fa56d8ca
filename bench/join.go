package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// The join workloads of issue 16 (J1..J3) read their own tables, pure
// functions of the row number as the rows of t are:
//
//	f   (id BIGINT, a INT, b INT, v DOUBLE)    the fact log table, -join-rows rows
//	f10 the first tenth of f's rows            J3's outer table, J1's second memory size
//	d1  (id BIGINT key, seg INT, name STRING)  a dimension key table, -join-rows/100 rows
//	d2  (id BIGINT key, region INT, grp INT)   a dimension key table, 1,000 rows
//	jk  (id BIGINT)                            J2's probe keys into kv, -join-keys rows
//
// -join-rows sizes f (and so f10 and d1) apart from -rows. At the default
// -rows of 10,000,000 these are the sizes of the issue:
// a 10M-row fact table, a 100k-row and a 1k-row dimension, J3 over
// 1M x 100k rows, and J2's 10,000 keys into the 10M-row kv.

// joinSet is the sizes of the join tables.
type joinSet struct {
	fact, small, dim1, dim2 int64
	keys                    int64
	kvRows                  int64
}

// newJoinSet sizes the join tables: the fact tables and d1 by factRows,
// jk's keys within kv's rows.
func newJoinSet(factRows, kvRows int64, keys int) joinSet {
	return joinSet{
		fact:   factRows,
		small:  max(factRows/10, 1),
		dim1:   max(factRows/100, 100),
		dim2:   1000,
		keys:   min(int64(keys), kvRows),
		kvRows: kvRows,
	}
}

// joinSet of this run: -join-rows, or -rows when it is not given.
func (h *harness) joinSet() joinSet {
	fact := h.cfg.joinRows
	if fact == 0 {
		fact = h.g.n
	}
	return newJoinSet(fact, h.g.n, h.cfg.joinKeys)
}

// factRow is row i of f (and of f10, its first tenth).
type factRow struct {
	id   int64
	a, b int32
	v    float64
}

func (j joinSet) factAt(i int64) factRow {
	u := uint64(i) * 7
	return factRow{
		id: i,
		a:  int32(mix(u+1) % uint64(j.dim1)),
		b:  int32(mix(u+2) % uint64(j.dim2)),
		// Multiples of 1/16 below 2^20: sums of them are exact in a
		// double, whatever order an engine adds them in.
		v: float64(mix(u+3)>>44) / 16,
	}
}

func dim1Seg(id int64) int32        { return int32(id % 10) }
func dim1Name(id int64) string      { return "c-" + strconv.FormatInt(id, 36) }
func dim2Region(id int64) int32     { return int32(id % 10) }
func dim2Grp(id int64) int32        { return int32(id % 25) }
func (j joinSet) key(i int64) int64 { return int64(mix(uint64(i)*13+5) % uint64(j.kvRows)) }

const (
	// j1Query is TPC-H Q5's shape: a fact table joined with two
	// dimensions, filtered on both, grouped by one of them.
	j1Query = `SELECT d2.grp, SUM(f.v), COUNT(*) FROM f JOIN d1 ON f.a = d1.id JOIN d2 ON f.b = d2.id
WHERE d1.seg = 3 AND d2.region < 5 GROUP BY d2.grp`
	j1SmallQuery = `SELECT d2.grp, SUM(f10.v), COUNT(*) FROM f10 JOIN d1 ON f10.a = d1.id JOIN d2 ON f10.b = d2.id
WHERE d1.seg = 3 AND d2.region < 5 GROUP BY d2.grp`
	// j2Query probes kv with every key of jk: few rows on one side and
	// the whole primary key of the other.
	j2Query   = `SELECT COUNT(*), SUM(kv.v) FROM jk JOIN kv ON kv.id = jk.id`
	j3InQuery = `SELECT COUNT(*), SUM(f10.v) FROM f10 WHERE f10.a IN (SELECT d1.id FROM d1 WHERE d1.seg < 5)`
	j3ExQuery = `SELECT COUNT(*), SUM(f10.v) FROM f10 WHERE EXISTS (SELECT 1 FROM d1 WHERE d1.id = f10.a AND d1.seg < 5)`
)

// j1Want is J1's answer over the first n fact rows: per group, the row
// count and the sum of v.
func (j joinSet) j1Want(n int64) map[int64][2]float64 {
	out := map[int64][2]float64{}
	for i := range n {
		r := j.factAt(i)
		if dim1Seg(int64(r.a)) != 3 || dim2Region(int64(r.b)) >= 5 {
			continue
		}
		g := int64(dim2Grp(int64(r.b)))
		w := out[g]
		w[0]++
		w[1] += r.v
		out[g] = w
	}
	return out
}

// j3Want is J3's answer: the f10 rows whose a is in d1 with seg < 5.
func (j joinSet) j3Want() (n int64, sum float64) {
	for i := range j.small {
		if r := j.factAt(i); dim1Seg(int64(r.a)) < 5 {
			n++
			sum += r.v
		}
	}
	return n, sum
}

// j2Want is J2's answer: every key of jk found in kv, with its value
// (every tenth key was updated after the load).
func (j joinSet) j2Want(g gen) (n int64, sum float64) {
	for i := range j.keys {
		k := j.key(i)
		gn := 0
		if k%10 == 0 {
			gn = 1
		}
		n++
		sum += g.at(k, gn).v
	}
	return n, sum
}

func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// checkJ1 runs q and compares its groups with want.
func checkJ1(ctx context.Context, db *sql.DB, q string, want map[int64][2]float64) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var (
			g, c int64
			sum  float64
		)
		if err := rows.Scan(&g, &sum, &c); err != nil {
			return err
		}
		w, ok := want[g]
		if !ok || float64(c) != w[0] || !closeTo(sum, w[1]) {
			return fmt.Errorf("J1 group %d: %d rows, sum %v; want %v rows, sum %v", g, c, sum, w[0], w[1])
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if seen != len(want) {
		return fmt.Errorf("J1 returned %d groups, want %d", seen, len(want))
	}
	return nil
}

// checkCountSum runs a query of one row (COUNT(*), SUM(v)) and compares it.
func checkCountSum(ctx context.Context, db *sql.DB, what, q string, wantN int64, wantSum float64) error {
	var (
		n   int64
		sum sql.NullFloat64
	)
	if err := db.QueryRowContext(ctx, q).Scan(&n, &sum); err != nil {
		return err
	}
	if n != wantN || (wantN > 0 && !closeTo(sum.Float64, wantSum)) {
		return fmt.Errorf("%s returned %d rows, sum %v; want %d rows, sum %v", what, n, sum.Float64, wantN, wantSum)
	}
	return nil
}

// joinEngine is what fluss, DuckDB and SQLite add to engine for the join
// workloads (the floor has no tables to join).
type joinEngine interface {
	// loadJoin creates and fills f, f10, d1, d2 and jk.
	loadJoin(ctx context.Context, j joinSet, log func(phase string, rows int64, d time.Duration)) error
}

// runJoins loads the join tables and runs J1..J3 and J1's memory.
func (h *harness) runJoins(ctx context.Context) error {
	if !h.want("J1") && !h.want("J2") && !h.want("J3") && !h.want("J1MEM") {
		return nil
	}
	j := h.joinSet()
	for _, e := range h.engines {
		fmt.Printf("loading the join tables into %s (f %d, f10 %d, d1 %d, d2 %d, jk %d rows)\n", e.name(), j.fact, j.small, j.dim1, j.dim2, j.keys)
		je, ok := e.(joinEngine)
		if !ok {
			return fmt.Errorf("%s cannot load the join tables", e.name())
		}
		err := je.loadJoin(ctx, j, func(phase string, rows int64, d time.Duration) {
			fmt.Printf("  %-28s %10d rows %10v %12.0f rows/s\n", phase, rows, d.Round(time.Millisecond), float64(rows)/d.Seconds())
		})
		if err != nil {
			return fmt.Errorf("load the join tables into %s: %w", e.name(), err)
		}
	}
	timed := func(fn func() error) (float64, error) {
		start := time.Now()
		err := fn()
		return ms(time.Since(start)), err
	}
	var j1 map[int64][2]float64
	if h.want("J1") || h.want("J1MEM") {
		j1 = j.j1Want(j.fact)
	}
	if h.want("J1") {
		r := h.res("J1", fmt.Sprintf("star join: f (%d rows) with d1 (%d, key) and d2 (%d, key), filter on both, GROUP BY d2.grp", j.fact, j.dim1, j.dim2), "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) {
			return timed(func() error { return checkJ1(ctx, e.db(), j1Query, j1) })
		})
	}
	if h.want("J2") {
		n, sum := j.j2Want(h.g)
		r := h.res("J2", fmt.Sprintf("lookup join: %d keys of jk into kv (%d rows, key table)", j.keys, j.kvRows), "ms", false)
		h.measure(r, h.engines, func(e engine) (float64, error) {
			return timed(func() error { return checkCountSum(ctx, e.db(), "J2", j2Query, n, sum) })
		})
		hr := h.res("J2hash", "J2 with fluss made to hash-join the whole of kv (ON kv.id + 0 = jk.id: no switch forces it)", "ms", false)
		h.measure(hr, []engine{h.fluss}, func(engine) (float64, error) {
			q, err := h.fluss.hashJoinQuery(j2Query)
			if err != nil {
				return 0, err
			}
			return timed(func() error { return checkCountSum(ctx, h.fluss.db(), "J2hash", q, n, sum) })
		})
		hr.notes[colDuck], hr.notes[colSQLite] = "-", "-"
		// Say how fluss ran each, so that a figure is read as what it is.
		for _, w := range []struct {
			r *result
			q string
		}{{r, j2Query}, {hr, ""}} {
			q := w.q
			if q == "" {
				q, _ = h.fluss.hashJoinQuery(j2Query)
			}
			if _, ok := w.r.median(colFluss); !ok {
				continue
			}
			if line, err := h.fluss.joinStrategy(ctx, q); err == nil {
				w.r.notes[colFluss] = "ran as " + line
			}
		}
	}
	if h.want("J3") {
		n, sum := j.j3Want()
		for _, w := range []struct{ id, title, q string }{
			{"J3in", fmt.Sprintf("f10 (%d rows) WHERE a IN (SELECT id FROM d1 (%d rows) WHERE ...)", j.small, j.dim1), j3InQuery},
			{"J3ex", fmt.Sprintf("f10 (%d rows) WHERE EXISTS (SELECT 1 FROM d1 (%d rows) WHERE d1.id = f10.a AND ...)", j.small, j.dim1), j3ExQuery},
		} {
			r := h.res(w.id, w.title, "ms", false)
			h.measure(r, h.engines, func(e engine) (float64, error) {
				return timed(func() error { return checkCountSum(ctx, e.db(), w.id, w.q, n, sum) })
			})
		}
	}
	if h.want("J1MEM") {
		h.j1Memory(ctx, j, j1)
	}
	return nil
}

// j1Memory measures fluss's J1 at two sizes of the fact table (f10 and
// f: the build sides, d1 and d2, are the same): the bytes allocated per
// query and the peak of the Go heap while it runs. DuckDB and SQLite
// allocate outside the Go heap, so the figures are fluss's alone.
func (h *harness) j1Memory(ctx context.Context, j joinSet, j1 map[int64][2]float64) {
	for _, s := range []struct {
		n int64
		q string
	}{{j.small, j1SmallQuery}, {j.fact, j1Query}} {
		want := j1
		if s.n != j.fact {
			want = j.j1Want(s.n)
		}
		alloc := h.res(fmt.Sprintf("J1alloc@%d", s.n), fmt.Sprintf("J1 over %d fact rows: bytes allocated per query (Go heap)", s.n), "MiB", false)
		peak := h.res(fmt.Sprintf("J1heap@%d", s.n), fmt.Sprintf("J1 over %d fact rows: peak Go heap while it runs, above the heap before it", s.n), "MiB", false)
		for range h.cfg.runs {
			a, p, err := goHeapOf(func() error { return checkJ1(ctx, h.fluss.db(), s.q, want) })
			h.record(alloc, colFluss, a, err)
			h.record(peak, colFluss, p, err)
			if err != nil {
				break
			}
		}
		for _, r := range []*result{alloc, peak} {
			r.notes[colDuck], r.notes[colSQLite] = "-", "-"
			if m, ok := r.median(colFluss); ok {
				fmt.Printf("  %-14s fluss    %s\n", r.id, format(m, "MiB"))
			} else {
				fmt.Printf("  %-14s fluss    %s\n", r.id, r.notes[colFluss])
			}
		}
	}
}

// goHeapOf runs fn after a GC and returns the MiB it allocated and the
// peak of the heap's objects (live and not yet swept) above what the heap
// held before, sampled every millisecond (runtime/metrics reads it without
// stopping the world): what the query holds, not the database's own heap.
func goHeapOf(fn func() error) (allocMiB, peakMiB float64, err error) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	base, allocs0 := sample[0].Value.Uint64(), sample[1].Value.Uint64()
	var (
		mu   sync.Mutex
		high = base
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				metrics.Read(s)
				mu.Lock()
				high = max(high, s[0].Value.Uint64())
				mu.Unlock()
			}
		}
	}()
	err = fn()
	close(stop)
	<-done
	metrics.Read(sample)
	mu.Lock()
	defer mu.Unlock()
	high = max(high, sample[0].Value.Uint64())
	const mib = 1 << 20
	return float64(sample[1].Value.Uint64()-allocs0) / mib, float64(high-base) / mib, err
}

// joinBars are issue 16's bars, judged on this run.
func (h *harness) joinBars(get func(id, c string) (float64, bool)) []bar {
	var out []bar
	f1, ok1 := get("J1", colFluss)
	s1, okS1 := get("J1", colSQLite)
	d1, okD1 := get("J1", colDuck)
	out = append(out, judge("J1 at least 5x faster than SQLite", s1, f1, okS1, ok1, 5, false, "SQLite/fluss"))
	out = append(out, judge("J1 within 2x DuckDB", f1, d1, ok1, okD1, 2, true, "fluss/DuckDB"))
	f2, ok2 := get("J2", colFluss)
	s2, okS2 := get("J2", colSQLite)
	hash, okH := get("J2hash", colFluss)
	out = append(out, judge("J2 at least as fast as SQLite with its index", f2, s2, ok2, okS2, 1, true, "fluss/SQLite"))
	out = append(out, judge("J2 at least 20x faster than a hash join over kv", hash, f2, okH, ok2, 20, false, "hash/lookup"))
	for _, id := range []string{"J3in", "J3ex"} {
		f, ok := get(id, colFluss)
		d, okD := get(id, colDuck)
		out = append(out, judge(id+" within 2x DuckDB", f, d, ok, okD, 2, true, "fluss/DuckDB"))
	}
	j := h.joinSet()
	small, okSmall := get(fmt.Sprintf("J1heap@%d", j.small), colFluss)
	big, okBig := get(fmt.Sprintf("J1heap@%d", j.fact), colFluss)
	out = append(out, judge("J1 peak heap with a 10x fact table within 1.5x", big, small, okBig, okSmall, 1.5, true,
		fmt.Sprintf("heap at %d / at %d rows", j.fact, j.small)))
	return out
}

var (
	_ joinEngine = (*flussEngine)(nil)
	_ joinEngine = (*duckEngine)(nil)
	_ joinEngine = (*sqliteEngine)(nil)
)
