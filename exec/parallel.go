package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Parallel aggregation over a join. The build sides of the hash joins are
// read and hashed once, on the caller's goroutine, and only read after
// that; the probe side's batches are then taken by Options.Threads
// workers, each of which probes them through its own copy of the join
// chain's probe state, filters the joined rows and aggregates them into
// partial states of its own. When every worker is done, the partial
// states are merged into one aggregation, which yields the groups as the
// serial one does. Group order differs from run to run, as it does over a
// parallel scan anyway; so does the order in which a DOUBLE sum adds its
// values, so its last bits may differ.

// Splitter is an operator whose batches several goroutines can produce
// at once.
type Splitter interface {
	Operator
	// Split readies the operator (a join reads its build side) and
	// returns n operators that together yield its batches, each to be
	// read by one goroutine. The operator is not read itself afterwards;
	// the parts are closed before it, and its Close ends what they share.
	Split(ctx context.Context, n int) ([]Operator, error)
}

// splitInput returns n operators over in: in's own parts when it is a
// Splitter, else parts that take turns reading in.
func splitInput(ctx context.Context, in Operator, n int) ([]Operator, error) {
	if s, ok := in.(Splitter); ok {
		return s.Split(ctx, n)
	}
	sh := &sharedInput{in: in}
	parts := make([]Operator, n)
	for i := range parts {
		parts[i] = &sharedPart{s: sh}
	}
	return parts, nil
}

// sharedInput is an operator read by several goroutines in turn: one
// Next at a time, under mu.
type sharedInput struct {
	mu   sync.Mutex
	in   Operator
	done bool
	err  error
}

// sharedPart is one goroutine's reader of a sharedInput. The batch it
// returns is its own: the record retained, the selection copied, so it
// stays valid while the others read on.
type sharedPart struct {
	s   *sharedInput
	rec arrow.RecordBatch
	sel []int32
}

func (p *sharedPart) Next(ctx context.Context) (Batch, error) {
	p.release()
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Batch{}, s.err
	}
	if s.done {
		return Batch{}, io.EOF
	}
	b, err := s.in.Next(ctx)
	if errors.Is(err, io.EOF) {
		s.done = true
		return Batch{}, io.EOF
	}
	if err != nil {
		s.err = err
		return Batch{}, err
	}
	b.Rec.Retain()
	p.rec = b.Rec
	out := Batch{Rec: b.Rec}
	if b.Sel != nil {
		p.sel = append(p.sel[:0], b.Sel...)
		out.Sel = p.sel
	}
	return out, nil
}

func (p *sharedPart) release() {
	if p.rec != nil {
		p.rec.Release()
		p.rec = nil
	}
}

// Close releases the part's batch; the shared input is its owner's to
// close.
func (p *sharedPart) Close() error {
	p.release()
	return nil
}

// ParallelAggregation says whether q's filter and aggregation can run
// on several workers over a join and merge their partial states: why is
// empty when they can, else names what keeps the query on one
// goroutine.
func ParallelAggregation(q Query, threads int) (why string) {
	if threads <= 1 {
		return "threads=1"
	}
	if !q.Aggregated() {
		return "not aggregated"
	}
	r := &aggRewriter{keys: q.GroupBy}
	if _, err := r.rewriteAll(q.Output); err != nil {
		return err.Error()
	}
	if q.Having != nil {
		if _, err := r.rewrite(q.Having); err != nil {
			return err.Error()
		}
	}
	for _, o := range q.OrderBy {
		if _, err := r.rewrite(o.Expr); err != nil {
			return err.Error()
		}
	}
	for _, f := range r.aggs {
		if f.Distinct {
			return sqlplan.Qualified(f) + " does not merge"
		}
	}
	exprs := append(append([]sqlplan.Expr{}, q.Filter...), q.GroupBy...)
	for _, f := range r.aggs {
		exprs = append(exprs, f.Args...)
	}
	for _, e := range exprs {
		if hasSubquery(e) {
			return "a subquery below the aggregation"
		}
	}
	return ""
}

func hasSubquery(e sqlplan.Expr) bool {
	found := false
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		if _, ok := x.(*sqlplan.Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// parallelAgg filters and aggregates the parts of a Splitter on one
// worker each, then merges the workers' states.
type parallelAgg struct {
	in      Splitter
	threads int
	// open builds one worker's filter and aggregation over its part.
	open func(part Operator, pool *atomic.Int64) (*aggregateOp, error)

	aggs   []*aggregateOp
	parts  []Operator
	merged *aggregateOp
	err    error
	closed bool
}

func (p *parallelAgg) Next(ctx context.Context) (Batch, error) {
	if p.err != nil {
		return Batch{}, p.err
	}
	if p.merged == nil {
		if err := p.run(ctx); err != nil {
			p.err = err
			return Batch{}, err
		}
	}
	return p.merged.Next(ctx)
}

// run splits the input, runs the workers to their end and merges their
// states. The first error cancels the other workers and is the query's.
func (p *parallelAgg) run(ctx context.Context) error {
	parts, err := p.in.Split(ctx, p.threads)
	if err != nil {
		return err
	}
	pool := &atomic.Int64{}
	for i, part := range parts {
		a, err := p.open(part, pool)
		if err != nil {
			// open closed part i.
			for _, rest := range parts[i+1:] {
				rest.Close()
			}
			return err
		}
		p.aggs = append(p.aggs, a)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, a := range p.aggs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runWorker(wctx, a); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(wctx); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	m := p.aggs[0]
	for _, a := range p.aggs[1:] {
		if err := m.merge(a); err != nil {
			return err
		}
		// a's states are m's now: count them once.
		pool.Add(-a.budget.used)
		if err := m.budget.check("GROUP BY", m.detail); err != nil {
			return err
		}
	}
	m.consumed = true
	p.merged = m
	return nil
}

// runWorker reads one worker's part to its end into its partial states;
// a panic is its error.
func runWorker(ctx context.Context, a *aggregateOp) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &WorkerPanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return a.consume(ctx)
}

// WorkerPanicError is a panic in a worker of a parallel plan, recovered
// and returned as the query's error.
type WorkerPanicError struct {
	Value any
	Stack []byte
}

func (e *WorkerPanicError) Error() string {
	return fmt.Sprintf("panic in a parallel worker: %v", e.Value)
}

func (p *parallelAgg) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	var err error
	for _, a := range p.aggs {
		if cerr := a.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := p.in.Close(); err == nil {
		err = cerr
	}
	return err
}

// merge adds the groups and states of o, a worker's aggregation of the
// same query, to a's.
func (a *aggregateOp) merge(o *aggregateOp) error {
	if o.ngroups == 0 {
		return nil
	}
	if len(a.aggs) != len(o.aggs) || len(a.keys) != len(o.keys) {
		return fmt.Errorf("merging aggregations of different shapes: %w", metadata.ErrInvalidValue)
	}
	// o's group keys as arrays: a assigns its groups to them as to rows.
	keyArrs, err := o.keyArrays(0, o.ngroups)
	if err != nil {
		return err
	}
	defer releaseAll(keyArrs)
	for i := len(a.every); i < o.ngroups; i++ {
		a.every = append(a.every, int32(i))
	}
	a.rows = a.every[:o.ngroups]
	if a.mode == groupGlobal {
		a.gids = resize(a.gids, o.ngroups)
		clear(a.gids)
	} else {
		a.assignGroups(keyArrs)
	}
	for j, ac := range a.aggs {
		if err := ac.state.merge(o.aggs[j].state, a.gids); err != nil {
			return fmt.Errorf("%s: %w", ac.f, err)
		}
	}
	return nil
}

func (c *countAgg) merge(o aggregator, into []int32) error {
	for g, n := range o.(*countAgg).n[:len(into)] {
		c.n[into[g]] += n
	}
	return nil
}

func (s *sumIntAgg) merge(o aggregator, into []int32) error {
	src := o.(*sumIntAgg)
	for g, d := range into {
		if !src.seen[g] {
			continue
		}
		x, y := s.sum[d], src.sum[g]
		z := x + y
		if (z > x) != (y > 0) {
			return errOverflow
		}
		s.sum[d], s.seen[d] = z, true
	}
	return nil
}

func (s *sumFloatAgg) merge(o aggregator, into []int32) error {
	src := o.(*sumFloatAgg)
	for g, d := range into {
		if src.seen[g] {
			s.sum[d] += src.sum[g]
			s.seen[d] = true
		}
	}
	return nil
}

func (s *sumDecimalAgg) merge(o aggregator, into []int32) error {
	src := o.(*sumDecimalAgg)
	for g, d := range into {
		if !src.seen[g] {
			continue
		}
		z, err := addDecimal(s.sum[d], src.sum[g])
		if err != nil {
			return err
		}
		s.sum[d], s.seen[d] = z, true
	}
	return nil
}

func (s *avgAgg) merge(o aggregator, into []int32) error {
	src := o.(*avgAgg)
	for g, d := range into {
		if src.n[g] == 0 {
			continue
		}
		s.n[d] += src.n[g]
		switch s.kind {
		case 'i':
			// An integer sum beyond BIGINT goes on in floating point,
			// as add does.
			if s.over[d] || src.over[g] {
				x, y := s.fsum[d], src.fsum[g]
				if !s.over[d] {
					x = float64(s.isum[d])
				}
				if !src.over[g] {
					y = float64(src.isum[g])
				}
				s.over[d], s.fsum[d] = true, x+y
				continue
			}
			x, y := s.isum[d], src.isum[g]
			z := x + y
			if (z > x) != (y > 0) {
				s.over[d], s.fsum[d] = true, float64(x)+float64(y)
				continue
			}
			s.isum[d] = z
		case 'f':
			s.fsum[d] += src.fsum[g]
		case 'd':
			z, err := addDecimal(s.dsum[d], src.dsum[g])
			if err != nil {
				return err
			}
			s.dsum[d] = z
		}
	}
	return nil
}

func (m *minMaxAgg) merge(o aggregator, into []int32) error {
	src := o.(*minMaxAgg)
	for g, d := range into {
		if !src.seen[g] {
			continue
		}
		switch m.kind {
		case 'i':
			if v := src.ints[g]; !m.seen[d] || (m.max && v > m.ints[d]) || (!m.max && v < m.ints[d]) {
				m.ints[d], m.seen[d] = v, true
			}
		case 'f':
			if v := src.flts[g]; !m.seen[d] || m.better(metadata.Compare(v, m.flts[d])) {
				m.flts[d], m.seen[d] = v, true
			}
		case 's':
			if v := src.strs[g]; !m.seen[d] || m.better(strings.Compare(v, m.strs[d])) {
				m.strs[d], m.seen[d] = v, true
			}
		default:
			if v := src.anys[g]; !m.seen[d] || m.better(metadata.Compare(v, m.anys[d])) {
				m.anys[d], m.seen[d] = v, true
			}
		}
	}
	return nil
}

// parallelAggregate is the filter and aggregation of Build over in, run
// on opts.Threads workers. Each worker compiles its own expressions, so
// no evaluation state is shared; subs is, which is why a query whose
// filter or aggregation holds a subquery does not run here.
func parallelAggregate(in Splitter, filter, keys []sqlplan.Expr, aggs []*sqlplan.Func, layout Layout, opts Options, subs *subqueries) Operator {
	return &parallelAgg{in: in, threads: opts.Threads,
		open: func(part Operator, pool *atomic.Int64) (*aggregateOp, error) {
			f, err := filterWith(part, filter, layout, subs)
			if err != nil {
				part.Close()
				return nil, err
			}
			op, err := aggregateWith(f, keys, aggs, layout, opts, subs)
			if err != nil {
				f.Close()
				return nil, err
			}
			a := op.(*aggregateOp)
			a.budget.pool = pool
			pool.Add(a.budget.used)
			return a, nil
		}}
}

// Split reads and hashes the build side, then returns n joins of parts
// of the probe side that share the hash table, each with probe state of
// its own.
func (j *hashJoin) Split(ctx context.Context, n int) ([]Operator, error) {
	if j.closed {
		return nil, fmt.Errorf("split of a closed join: %w", metadata.ErrInvalidValue)
	}
	if !j.built {
		if j.buildErr != nil {
			return nil, j.buildErr
		}
		if err := j.consumeBuild(ctx); err != nil {
			j.buildErr = err
			return nil, err
		}
		j.built = true
	}
	empty := j.nothingToYield()
	probes, err := splitInput(ctx, j.probe, n)
	if err != nil {
		return nil, err
	}
	parts := make([]Operator, n)
	for i, probe := range probes {
		p := &hashJoin{probe: probe, spec: j.spec, mem: j.mem, nullKeyGroup: -1, nullSafeGroup: -1, part: true}
		if err := p.compile(); err != nil {
			for _, rest := range probes[i:] {
				rest.Close()
			}
			for _, done := range parts[:i] {
				done.Close()
			}
			return nil, err
		}
		p.built, p.done = true, empty
		p.buildRec, p.nrows = j.buildRec, j.nrows
		p.ints, p.strs = j.ints, j.strs
		p.head, p.tail, p.next = j.head, j.tail, j.next
		p.unique, p.nullSafeGroup, p.nullKeyGroup = j.unique, j.nullSafeGroup, j.nullKeyGroup
		parts[i] = p
	}
	return parts, nil
}
