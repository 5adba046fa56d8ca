package query

import (
	"context"
	"fmt"
	"slices"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Reader opens a bound query of one table, of no table or of
// information_schema: the single-table path (Session), at the
// transaction's read view inside one. Its records hold the plan's
// Output columns first.
type Reader interface {
	Open(ctx context.Context, sp *sqlplan.SelectPlan) (exec.Operator, error)
	// Lookup reads the rows of sp's primary-key table whose key columns
	// (schema indexes cols) hold one of keys, and runs sp's WHERE and
	// outputs over them as Open would: the held side of a lookup join.
	// The keys' values are of the probe side's types; a value that is no
	// value of its column's type matches nothing.
	Lookup(ctx context.Context, sp *sqlplan.SelectPlan, cols []int, keys [][]any) (exec.Operator, error)
}

// Open builds the operators of sp, a query over a FROM tree. The records
// it yields hold the Output columns first, as exec.Build's do.
func Open(ctx context.Context, r Reader, sp *sqlplan.SelectPlan, opts exec.Options) (exec.Operator, error) {
	return open(ctx, r, sp, opts, nil)
}

// open opens sp, counting at each node into a when it is not nil.
func open(ctx context.Context, r Reader, sp *sqlplan.SelectPlan, opts exec.Options, a *Analysis) (exec.Operator, error) {
	if sp.Source == nil {
		return nil, fmt.Errorf("query.Open of a plan without a FROM tree: %w", metadata.ErrUnsupported)
	}
	if s, ok := r.(*Session); ok && opts.Threads == 0 {
		opts.Threads = s.Threads
	}
	in, err := openRelation(ctx, r, sp.Source, opts, a)
	if err != nil {
		return nil, err
	}
	q := exec.QueryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	if q.Aggregated() {
		if _, ok := sp.Source.(*sqlplan.JoinRel); ok {
			a.aggregation(sp, opts.Threads, parallelAggregation(q, in.op, opts.Threads))
		}
	}
	out, err := exec.Build(in.op, q, layoutOf(len(sp.Table.Schema.Columns), in.cols), opts)
	if err != nil {
		in.op.Close()
		return nil, err
	}
	return out, nil
}

// parallelAggregation is exec.Build's decision whether q's filter and
// aggregation over in run on several workers: why empty when they do.
func parallelAggregation(q exec.Query, in exec.Operator, threads int) (why string) {
	if why := exec.ParallelAggregation(q, threads); why != "" {
		return why
	}
	if _, ok := in.(exec.Splitter); !ok {
		return "the top join is a lookup join"
	}
	return ""
}

// layoutOf maps the combined indexes a relation's records hold (-1 for a
// record column no expression addresses) to their positions.
func layoutOf(n int, cols []int) exec.Layout {
	l := make(exec.Layout, n)
	for i := range l {
		l[i] = -1
	}
	for pos, c := range cols {
		if c >= 0 {
			l[c] = pos
		}
	}
	return l
}

// stream is an open relation: its operator, and for each column of its
// records the combined index it holds (-1: none an expression
// addresses) and its type.
type stream struct {
	op    exec.Operator
	cols  []int
	types []metadata.DataType
	// rows estimates the rows op yields; -1 when nothing tells.
	rows int64
}

// Estimator is implemented by the operators of Reader.Open that know
// how many rows they yield at most before their filters.
type Estimator interface {
	EstimatedRows() int64
}

func estimate(op exec.Operator) int64 {
	if e, ok := op.(Estimator); ok {
		return e.EstimatedRows()
	}
	return -1
}

func outputTypes(sp *sqlplan.SelectPlan) []metadata.DataType {
	ts := make([]metadata.DataType, len(sp.Output))
	for i, o := range sp.Output {
		ts[i] = exec.ResultType(o.Expr.Type())
	}
	return ts
}

// openRelation opens rel.
func openRelation(ctx context.Context, r Reader, rel sqlplan.Relation, opts exec.Options, a *Analysis) (stream, error) {
	s, err := openNode(ctx, r, rel, opts, a)
	if err == nil {
		s.op = a.track(rel, s.op)
	}
	return s, err
}

func openNode(ctx context.Context, r Reader, rel sqlplan.Relation, opts exec.Options, a *Analysis) (stream, error) {
	switch x := rel.(type) {
	case *sqlplan.ScanRel:
		op, err := r.Open(ctx, x.Plan)
		if err != nil {
			return stream{}, err
		}
		cols := make([]int, len(x.Plan.Output))
		for i, o := range x.Plan.Output {
			cols[i] = x.Offset + o.Expr.(*sqlplan.ColumnRef).Index
		}
		return stream{op: firstColumns(op, len(cols)), cols: cols, types: outputTypes(x.Plan), rows: estimate(op)}, nil
	case *sqlplan.DerivedRel:
		op, err := openPlan(ctx, r, x.Plan, opts, a)
		if err != nil {
			return stream{}, err
		}
		cols := make([]int, len(x.Plan.Output))
		for i := range cols {
			cols[i] = x.Offset + i
		}
		return stream{op: firstColumns(op, len(cols)), cols: cols, types: outputTypes(x.Plan), rows: -1}, nil
	case *sqlplan.JoinRel:
		return openJoin(ctx, r, x, opts, a)
	}
	return stream{}, fmt.Errorf("relation %T: %w", rel, metadata.ErrUnsupported)
}

// openPlan opens any bound query: over a FROM tree here, else through r.
func openPlan(ctx context.Context, r Reader, sp *sqlplan.SelectPlan, opts exec.Options, a *Analysis) (exec.Operator, error) {
	if sp.Compound != nil {
		return OpenCompound(ctx, r, sp.Compound, opts)
	}
	if sp.Source != nil {
		return open(ctx, r, sp, opts, a)
	}
	return r.Open(ctx, sp)
}

// openJoin opens both sides of a join and joins them. The probe side
// streams and the build side is held: an outer join probes with its
// preserved side, a semi- or anti-join with its outer rows; an inner
// join holds the side estimated smaller, the right one when the
// estimates do not tell them apart.
func openJoin(ctx context.Context, r Reader, j *sqlplan.JoinRel, opts exec.Options, a *Analysis) (stream, error) {
	left, err := openRelation(ctx, r, j.L, opts, a)
	if err != nil {
		return stream{}, err
	}
	right, err := openRelation(ctx, r, j.R, opts, a)
	if err != nil {
		left.op.Close()
		return stream{}, err
	}
	total := 0
	for _, sp := range j.Spans() {
		total = max(total, sp.Offset+sp.Width)
	}
	st := chooseStrategy(j, left.rows, right.rows)
	a.decided(j, st, left.rows, right.rows)
	probe, build := left, right
	pkeys, bkeys := j.LeftKeys, j.RightKeys
	heldRel := j.R
	if st.buildLeft {
		probe, build, pkeys, bkeys, heldRel = right, left, bkeys, pkeys, j.L
	}
	kind := joinKinds[j.Kind]
	cols := append(append([]int{}, probe.cols...), build.cols...)
	spec := exec.JoinSpec{
		Kind:           kind,
		ProbeKeys:      pkeys,
		BuildKeys:      bkeys,
		NullSafe:       j.NullSafe,
		ProbeLayout:    layoutOf(total, probe.cols),
		BuildLayout:    layoutOf(total, build.cols),
		ProbeTypes:     probe.types,
		BuildTypes:     build.types,
		Residual:       j.Cond,
		ResidualLayout: layoutOf(total, cols),
	}
	outCols, outTypes := cols, append(append([]metadata.DataType{}, probe.types...), build.types...)
	var op exec.Operator
	if st.lookup {
		// The key table is looked up, not read: its planned scan goes.
		build.op.Close()
		scan := heldRel.(*sqlplan.ScanRel)
		positions, tableCols := lookupKeys(scan, bkeys)
		fetch := func(ctx context.Context, tuples [][]any) (exec.Operator, error) {
			return r.Lookup(ctx, scan.Plan, tableCols, tuples)
		}
		op = exec.LookupJoin(probe.op, fetch, positions, spec, opts)
	} else {
		if kept, ok := pruneJoinOutput(j, &spec, probe, build); ok {
			outCols, outTypes = kept.cols, kept.types
		}
		if op, err = exec.HashJoin(probe.op, build.op, spec, opts); err != nil {
			probe.op.Close()
			build.op.Close()
			return stream{}, err
		}
	}
	if j.Kind.IsSemi() {
		// The probe rows that pass, nothing of the inner query's.
		return stream{op: op, cols: probe.cols, types: probe.types, rows: probe.rows}, nil
	}
	return stream{op: op, cols: outCols, types: outTypes, rows: joinEstimate(probe.rows, build.rows)}, nil
}

// pruneJoinOutput has an inner or outer hash join without residual yield
// only the columns something above it reads (j.Keep), when that drops
// any: the keys of a star join's dimensions are read by the join alone.
// It returns the columns and types the join then yields.
func pruneJoinOutput(j *sqlplan.JoinRel, spec *exec.JoinSpec, probe, build stream) (stream, bool) {
	if j.Keep == nil || len(j.Cond) > 0 || j.Kind.IsSemi() {
		return stream{}, false
	}
	var out stream
	pick := func(side stream) []int {
		var idx []int
		for i, c := range side.cols {
			if c >= 0 && slices.Contains(j.Keep, c) {
				idx = append(idx, i)
				out.cols, out.types = append(out.cols, c), append(out.types, side.types[i])
			}
		}
		if idx == nil {
			idx = []int{}
		}
		return idx
	}
	pOut, bOut := pick(probe), pick(build)
	if len(out.cols) == 0 || len(out.cols) == len(probe.cols)+len(build.cols) {
		return stream{}, false
	}
	spec.ProbeOut, spec.BuildOut = pOut, bOut
	return out, true
}

// joinKinds is the operator of each kind of join: a right join is a left
// join that probes with its right side.
var joinKinds = map[sqlplan.JoinKind]exec.JoinKind{
	sqlplan.JoinInner:         exec.JoinInner,
	sqlplan.JoinLeft:          exec.JoinLeft,
	sqlplan.JoinRight:         exec.JoinLeft,
	sqlplan.JoinSemi:          exec.JoinSemi,
	sqlplan.JoinAnti:          exec.JoinAnti,
	sqlplan.JoinAntiNullAware: exec.JoinAntiNullAware,
}

// Lookup joins: a join whose held side is a primary-key table, with keys
// covering its whole primary key, looks the probe side's keys up in the
// key-value state instead of reading the table, when the probe side is
// estimated at most LookupMaxProbe rows and at most 1/LookupRatio of the
// table (a lookup costs about as much as reading a few dozen rows).
const (
	LookupMaxProbe = 200_000
	LookupRatio    = 16
)

// strategy is how a join runs: which side is held, and whether the held
// side is looked up by key rather than read.
type strategy struct {
	buildLeft bool
	lookup    bool
}

// chooseStrategy decides how j runs from the estimated rows of its sides
// (-1: unknown). An outer join holds the side it extends with NULLs; an
// inner join prefers a lookup into either side, then holds the smaller
// side, the right one when the estimates do not tell.
func chooseStrategy(j *sqlplan.JoinRel, lrows, rrows int64) strategy {
	switch j.Kind {
	case sqlplan.JoinSemi, sqlplan.JoinAnti, sqlplan.JoinAntiNullAware:
		// The inner query is held: the outer rows are the ones that pass.
		return strategy{}
	case sqlplan.JoinLeft:
		return strategy{lookup: lookupTarget(j.R, j.RightKeys) && smallProbe(lrows, rrows)}
	case sqlplan.JoinRight:
		return strategy{buildLeft: true, lookup: lookupTarget(j.L, j.LeftKeys) && smallProbe(rrows, lrows)}
	}
	switch {
	case lookupTarget(j.R, j.RightKeys) && smallProbe(lrows, rrows):
		return strategy{lookup: true}
	case lookupTarget(j.L, j.LeftKeys) && smallProbe(rrows, lrows):
		return strategy{buildLeft: true, lookup: true}
	}
	return strategy{buildLeft: lrows >= 0 && rrows >= 0 && lrows < rrows}
}

func smallProbe(probe, table int64) bool {
	return probe >= 0 && probe <= LookupMaxProbe && (table < 0 || probe*LookupRatio <= table)
}

// lookupTarget reports whether rel is a primary-key table whose whole key
// the join keys over it fix.
func lookupTarget(rel sqlplan.Relation, keys []sqlplan.Expr) bool {
	scan, ok := rel.(*sqlplan.ScanRel)
	if !ok || scan.Plan.Virtual != "" || !scan.Plan.Table.HasPrimaryKey() || plannedOnly(scan.Plan) {
		return false
	}
	_, cols := lookupKeys(scan, keys)
	pk, err := scan.Plan.Table.Schema.Indexes(scan.Plan.Table.Schema.PrimaryKey)
	return err == nil && len(cols) == len(pk)
}

// lookupKeys picks, for each primary-key column of scan's table, the
// first join key that is that column: its position among keys and the
// column's schema index. A column no key is is left out.
func lookupKeys(scan *sqlplan.ScanRel, keys []sqlplan.Expr) (positions, cols []int) {
	pk, err := scan.Plan.Table.Schema.Indexes(scan.Plan.Table.Schema.PrimaryKey)
	if err != nil {
		return nil, nil
	}
	for _, c := range pk {
		for pos, k := range keys {
			if ref, ok := k.(*sqlplan.ColumnRef); ok && ref.Index-scan.Offset == c {
				positions, cols = append(positions, pos), append(cols, c)
				break
			}
		}
	}
	return positions, cols
}

// joinEstimate guesses a join's rows: the larger side (a key join rarely
// multiplies its rows), or unknown when a side is.
func joinEstimate(probe, build int64) int64 {
	if probe < 0 || build < 0 {
		return -1
	}
	return max(probe, build)
}
