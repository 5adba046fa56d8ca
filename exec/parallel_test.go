package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// starCase is a probe side joined with two build sides, filtered and
// grouped as a star join is: probe (a INT, b BIGINT, v DOUBLE, s STRING),
// d1 (id BIGINT, seg INT), d2 (id BIGINT, grp INT). The combined columns
// are probe 0-3, d1 4-5, d2 6-7.
type starCase struct {
	probe, d1, d2 [][]any
	kind1, kind2  JoinKind
	per           int
	// probeSrc, when set, wraps the probe source (to fail or cancel).
	probeSrc func(*sliceSource) Source
	filter   []sqlplan.Expr
	groupBy  []sqlplan.Expr
	output   []sqlplan.Expr
	limit    int64
}

var (
	starProbe = []metadata.DataType{intT, bigint, metadata.DoubleType(), str}
	starD     = []metadata.DataType{bigint, intT}
)

func (c starCase) query() Query {
	q := Query{Filter: c.filter, GroupBy: c.groupBy, Output: c.output, Limit: -1}
	for i := range c.output {
		q.Names = append(q.Names, fmt.Sprintf("o%d", i))
	}
	return q
}

// open builds the joins and the query over them with threads workers.
func (c starCase) open(t testing.TB, mem memory.Allocator, threads int, opts Options) (Operator, []*sliceSource) {
	t.Helper()
	per := max(c.per, 1)
	ps := typedSource(t, mem, starProbe, c.probe, per)
	d1, d2 := typedSource(t, mem, starD, c.d1, per), typedSource(t, mem, starD, c.d2, per)
	var src Source = ps
	if c.probeSrc != nil {
		src = c.probeSrc(ps)
	}
	combined := func(cols ...int) Layout { return layoutFor(8, cols) }
	opts.Allocator, opts.Threads = mem, threads
	j1, err := HashJoin(Scan(src), Scan(d1), JoinSpec{Kind: c.kind1,
		ProbeKeys: []sqlplan.Expr{colRef("f.a", 0, intT)}, BuildKeys: []sqlplan.Expr{colRef("d1.id", 4, bigint)},
		ProbeLayout: combined(0, 1, 2, 3), BuildLayout: combined(4, 5),
		ProbeTypes: starProbe, BuildTypes: starD}, opts)
	require.NoError(t, err)
	j2, err := HashJoin(j1, Scan(d2), JoinSpec{Kind: c.kind2,
		ProbeKeys: []sqlplan.Expr{colRef("f.b", 1, bigint)}, BuildKeys: []sqlplan.Expr{colRef("d2.id", 6, bigint)},
		ProbeLayout: combined(0, 1, 2, 3, 4, 5), BuildLayout: combined(6, 7),
		ProbeTypes: append(append([]metadata.DataType{}, starProbe...), starD...), BuildTypes: starD}, opts)
	require.NoError(t, err)
	op, err := Build(j2, c.query(), combined(0, 1, 2, 3, 4, 5, 6, 7), opts)
	require.NoError(t, err)
	return op, []*sliceSource{ps, d1, d2}
}

func layoutFor(n int, cols []int) Layout {
	l := make(Layout, n)
	for i := range l {
		l[i] = -1
	}
	for pos, c := range cols {
		l[c] = pos
	}
	return l
}

func (c starCase) outTypes() []metadata.DataType {
	ts := make([]metadata.DataType, len(c.output))
	for i, e := range c.output {
		ts[i] = resultType(e.Type())
	}
	return ts
}

// run runs the case with threads workers and returns its rows as a
// multiset, checking that every buffer is released, every input closed
// and, with more than one thread, that the aggregation ran in parallel.
func (c starCase) run(t testing.TB, threads int) []string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	op, srcs := c.open(t, mem, threads, Options{})
	_, parallel := op.(*projectOp).in.(*parallelAgg)
	require.Equal(t, threads > 1, parallel)
	rows := drain(t, op, c.outTypes())
	require.NoError(t, op.Close())
	for _, s := range srcs {
		require.True(t, s.closed)
	}
	return multiset(rows)
}

func fn(name string, t metadata.DataType, args ...sqlplan.Expr) *sqlplan.Func {
	return &sqlplan.Func{Name: name, Args: args, T: t}
}

// randomStar makes a star join's rows with NULL keys, keys that match
// nothing, duplicate build keys when dup is set, and values that are
// multiples of 1/16, so that a DOUBLE sum is exact in any order.
func randomStar(seed uint64, n int, dup bool) starCase {
	r := rand.New(rand.NewPCG(seed, 1))
	c := starCase{kind1: JoinInner, kind2: JoinInner, per: 37}
	for i := range n {
		var a, b any = int64(r.IntN(120)), int64(r.IntN(30))
		if r.IntN(20) == 0 {
			a = nil
		}
		if r.IntN(25) == 0 {
			b = nil
		}
		var s any = fmt.Sprintf("s%03d", r.IntN(500))
		if r.IntN(10) == 0 {
			s = nil
		}
		c.probe = append(c.probe, []any{a, b, float64(r.IntN(1<<12)) / 16, s})
		_ = i
	}
	for id := range 100 {
		c.d1 = append(c.d1, []any{int64(id), int64(id % 7)})
		if dup && id%3 == 0 {
			c.d1 = append(c.d1, []any{int64(id), int64(id%7 + 10)})
		}
	}
	for id := range 25 {
		var g any = int64(id % 6)
		if id == 24 {
			g = nil
		}
		c.d2 = append(c.d2, []any{int64(id), g})
	}
	v := colRef("f.v", 2, metadata.DoubleType())
	b := colRef("f.b", 1, bigint)
	s := colRef("f.s", 3, str)
	grp := colRef("d2.grp", 7, intT)
	c.filter = []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpNotEq, L: colRef("d1.seg", 5, intT), R: lit(int64(3), intT)}}
	c.groupBy = []sqlplan.Expr{grp}
	c.output = []sqlplan.Expr{grp, fn("sum", metadata.DoubleType(), v), &sqlplan.Func{Name: "count", Star: true, T: bigint},
		fn("count", bigint, s), fn("avg", metadata.DoubleType(), v), fn("min", str, s), fn("max", bigint, b),
		fn("sum", bigint, b), fn("avg", metadata.DoubleType(), b)}
	return c
}

// A parallel run of a star join with GROUP BY yields what the serial
// one does: inner and left joins, NULL keys, duplicate build keys, many
// batches and several workers.
func TestParallelAggregateMatchesSerial(t *testing.T) {
	for _, dup := range []bool{false, true} {
		for _, kinds := range [][2]JoinKind{{JoinInner, JoinInner}, {JoinLeft, JoinInner}, {JoinInner, JoinLeft}, {JoinLeft, JoinLeft}} {
			for _, global := range []bool{false, true} {
				name := fmt.Sprintf("dup=%v/%s-%s/global=%v", dup, kinds[0], kinds[1], global)
				t.Run(name, func(t *testing.T) {
					c := randomStar(uint64(len(name)), 3000, dup)
					c.kind1, c.kind2 = kinds[0], kinds[1]
					if kinds[0] == JoinLeft {
						// A WHERE over the left join's columns would undo it.
						c.filter = nil
					}
					if global {
						c.groupBy, c.output = nil, c.output[1:]
					}
					serial := c.run(t, 1)
					require.NotEmpty(t, serial)
					for _, threads := range []int{2, 3, 8} {
						require.Equal(t, serial, c.run(t, threads), "threads=%d", threads)
					}
				})
			}
		}
	}
}

// An empty build side: no groups, or with no GROUP BY the one row of
// COUNT 0 and NULL sums, as the serial plan gives.
func TestParallelAggregateEmptyBuild(t *testing.T) {
	c := randomStar(7, 500, false)
	c.d2 = nil
	require.Empty(t, c.run(t, 1))
	require.Empty(t, c.run(t, 4))
	c.groupBy, c.output = nil, c.output[1:]
	serial := c.run(t, 1)
	require.Equal(t, []string{"NULL|0|0|NULL|NULL|NULL|NULL|NULL"}, serial)
	require.Equal(t, serial, c.run(t, 4))
}

// A query whose aggregates do not merge, or with one thread, stays on one
// goroutine, and says why.
func TestParallelAggregationDecision(t *testing.T) {
	c := randomStar(3, 10, false)
	q := c.query()
	require.Empty(t, ParallelAggregation(q, 2))
	require.Equal(t, "threads=1", ParallelAggregation(q, 1))
	q.Output = append(q.Output, &sqlplan.Func{Name: "count", Args: []sqlplan.Expr{colRef("f.b", 1, bigint)}, Distinct: true, T: bigint})
	require.Contains(t, ParallelAggregation(q, 2), "does not merge")
	q = c.query()
	q.GroupBy, q.Output = nil, []sqlplan.Expr{colRef("f.b", 1, bigint)}
	require.Equal(t, "not aggregated", ParallelAggregation(q, 2))
}

// failingSource fails, or calls hook, at its n-th record.
type failingSource struct {
	*sliceSource
	n, seen int
	err     error
	hook    func()
}

func (s *failingSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s.seen++
	if s.seen == s.n {
		if s.hook != nil {
			s.hook()
		} else {
			return nil, s.err
		}
	}
	return s.sliceSource.Next(ctx)
}

// waitGoroutines waits until no more goroutines run than before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// runErr runs c with threads workers to its first error.
func (c starCase) runErr(t *testing.T, ctx context.Context, threads int, opts Options) error {
	t.Helper()
	before := runtime.NumGoroutine()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	op, srcs := c.open(t, mem, threads, opts)
	_, err := Drain(ctx, op)
	require.NoError(t, op.Close())
	for _, s := range srcs {
		require.True(t, s.closed)
	}
	waitGoroutines(t, before)
	return err
}

// An error in one worker's input ends the query with that error; the
// other workers stop and every buffer is released.
func TestParallelAggregateWorkerError(t *testing.T) {
	boom := errors.New("split unreadable")
	c := randomStar(11, 3000, false)
	c.probeSrc = func(s *sliceSource) Source { return &failingSource{sliceSource: s, n: 20, err: boom} }
	require.ErrorIs(t, c.runErr(t, context.Background(), 4, Options{}), boom)

	// An error of the aggregation itself in one worker: BIGINT overflow.
	c = randomStar(12, 3000, false)
	c.probe[1700][1] = int64(math.MaxInt64 - 5)
	c.probe[1701][1] = int64(math.MaxInt64 - 5)
	c.probe[1701][0], c.probe[1700][0] = int64(1), int64(1)
	c.filter, c.kind2 = nil, JoinLeft
	c.groupBy, c.output = nil, []sqlplan.Expr{fn("sum", bigint, colRef("f.b", 1, bigint))}
	err := c.runErr(t, context.Background(), 4, Options{})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.Contains(t, err.Error(), "BIGINT overflow")

	// A panic in a worker is its error.
	c = randomStar(13, 3000, false)
	c.probeSrc = func(s *sliceSource) Source {
		return &failingSource{sliceSource: s, n: 30, hook: func() { panic("reader bug") }}
	}
	err = c.runErr(t, context.Background(), 4, Options{})
	var pe *WorkerPanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "reader bug", pe.Value)
}

// Cancelling the query's context stops every worker.
func TestParallelAggregateCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := randomStar(14, 5000, false)
	c.probeSrc = func(s *sliceSource) Source { return &failingSource{sliceSource: s, n: 40, hook: cancel} }
	require.ErrorIs(t, c.runErr(t, ctx, 3, Options{}), context.Canceled)
}

// The workers' groups count against one memory.limit together.
func TestParallelAggregateMemoryLimit(t *testing.T) {
	c := randomStar(15, 4000, false)
	c.filter = nil
	s := colRef("f.s", 3, str)
	c.groupBy = []sqlplan.Expr{s}
	c.output = []sqlplan.Expr{s, &sqlplan.Func{Name: "count", Star: true, T: bigint}}
	err := c.runErr(t, context.Background(), 4, Options{MemoryLimit: 8 << 10})
	var mle *MemoryLimitError
	require.ErrorAs(t, err, &mle)
	require.Equal(t, "GROUP BY", mle.Op)
	require.Equal(t, c.run(t, 1), c.run(t, 4))
}
