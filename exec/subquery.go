package exec

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// SubqueryRunner runs the inner query of a subquery; query.Session
// implements it (exec reads no table). It must be safe to call from the goroutine
// that drives the operators; calls do not overlap.
type SubqueryRunner interface {
	// RunSubquery runs sub's inner query with outer as the values of its
	// correlation (sub.Outer, in order; empty when uncorrelated) and
	// returns its first max rows (all of them when max < 0), each its
	// first sub.Width() columns, in canonical form.
	RunSubquery(ctx context.Context, sub *sqlplan.Subquery, outer []any, max int) ([][]any, error)
}

// subqueries runs and caches the subqueries of one query's operators:
// an uncorrelated one once, a correlated one once per distinct tuple of
// outer values. The cached results are charged to the memory limit.
type subqueries struct {
	run    SubqueryRunner
	budget memBudget
	// cache maps an inner plan (shared by the copies of a Subquery node
	// that rewrites make) to its results by encoded outer tuple.
	cache map[*sqlplan.SelectPlan]map[string]*subResult
	held  int64
	key   []byte
	// err is the first failure: the query fails with it, so the rows
	// left in its batch do not run the subquery again.
	err error
}

func newSubqueries(opts Options) *subqueries {
	return &subqueries{run: opts.Subqueries, budget: memBudget{limit: opts.MemoryLimit},
		cache: map[*sqlplan.SelectPlan]map[string]*subResult{}}
}

// subResult is what the expressions need of a subquery's rows.
type subResult struct {
	rows int // rows read, at most the kind's max
	// first is the first row's value (a scalar subquery's result).
	first any
	// vals are the distinct non-NULL values, sorted when sorted is set
	// (every comparison with them then agrees with that order).
	vals    []any
	sorted  bool
	hasNull bool
	// ints and strs hold vals as a hash set when they are all integers
	// or all strings: what equality with an integer or string column
	// probes, without a comparison per value.
	ints map[int64]struct{}
	strs map[string]struct{}
	// tuples are the encoded rows of a SubSemi without a NULL.
	tuples map[string]struct{}
}

// maxRows is how many rows a form needs to tell its answer: one for
// EXISTS, two for a scalar subquery (a second is an error), all for the
// others.
func maxRows(k sqlplan.SubqueryKind) int {
	switch k {
	case sqlplan.SubExists:
		return 1
	case sqlplan.SubScalar:
		return 2
	}
	return -1
}

// valueOrder is how the values of an IN, ANY or ALL result are held for
// the comparisons its expression makes.
type valueOrder uint8

const (
	// unordered values are compared one by one.
	unordered valueOrder = iota
	// sortedValues answer by their ends or a binary search.
	sortedValues
	// hashedValues answer equality from a hash set, and are sorted only
	// when they are of mixed kinds and no set holds them.
	hashedValues
)

func (s *subqueries) result(ctx context.Context, sub *sqlplan.Subquery, outer []any, order valueOrder) (*subResult, error) {
	if s.err != nil {
		return nil, s.err
	}
	r, err := s.lookup(ctx, sub, outer, order)
	if err != nil {
		s.err = err
	}
	return r, err
}

func (s *subqueries) lookup(ctx context.Context, sub *sqlplan.Subquery, outer []any, order valueOrder) (*subResult, error) {
	s.key = appendTuple(s.key[:0], outer)
	byKey := s.cache[sub.Plan]
	if r, ok := byKey[string(s.key)]; ok {
		return r, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := s.run.RunSubquery(ctx, sub, outer, maxRows(sub.Kind))
	if err != nil {
		return nil, err
	}
	r := &subResult{rows: len(rows)}
	switch sub.Kind {
	case sqlplan.SubScalar:
		if len(rows) > 1 {
			return nil, fmt.Errorf("subquery %s returns more than 1 row: %w", sub, metadata.ErrInvalidValue)
		}
		if len(rows) == 1 {
			r.first = rows[0][0]
		}
	case sqlplan.SubIn, sqlplan.SubAny, sqlplan.SubAll:
		first := make([]any, len(rows))
		for i, row := range rows {
			first[i] = row[0]
		}
		switch order {
		case hashedValues:
			r.vals, r.hasNull, _ = distinctValues(first, false)
			if r.hashSet(); r.ints == nil && r.strs == nil {
				r.vals, _, r.sorted = distinctValues(r.vals, true)
			}
		default:
			r.vals, r.hasNull, r.sorted = distinctValues(first, order == sortedValues)
		}
	case sqlplan.SubSemi:
		r.tuples = map[string]struct{}{}
		var buf []byte
	rows:
		for _, row := range rows {
			for _, v := range row {
				if v == nil {
					continue rows
				}
			}
			buf = appendTuple(buf[:0], row)
			if _, dup := r.tuples[string(buf)]; !dup {
				r.tuples[string(buf)] = struct{}{}
				s.budget.grow(int64(len(buf)) + 48)
			}
		}
	}
	if byKey == nil {
		byKey = map[string]*subResult{}
		s.cache[sub.Plan] = byKey
	}
	byKey[string(s.key)] = r
	s.held++
	s.budget.grow(int64(len(s.key)) + 64 + r.bytes())
	if err := s.budget.check("subquery results", func() string { return count(s.held, "cached result") }); err != nil {
		return nil, err
	}
	return r, nil
}

// distinctValues returns the distinct non-NULL values of rows, sorted
// when sorted is set, and whether a NULL was among them.
func distinctValues(rows []any, sorted bool) (vals []any, hasNull, isSorted bool) {
	for _, v := range rows {
		if v == nil {
			hasNull = true
			continue
		}
		vals = append(vals, v)
	}
	if !sorted {
		return vals, hasNull, false
	}
	slices.SortFunc(vals, sqlCompare)
	vals = slices.CompactFunc(vals, func(a, b any) bool { return sqlCompare(a, b) == 0 })
	return vals, hasNull, true
}

func (r *subResult) bytes() int64 {
	n := 16 + valueBytes(r.first)
	for _, v := range r.vals {
		n += 16 + valueBytes(v)
	}
	if r.ints != nil || r.strs != nil {
		// A map entry: the key, its hash and its share of the buckets.
		n += int64(len(r.vals)) * 32
	}
	return n
}

// hashSet fills ints or strs when every value is of one of those kinds.
func (r *subResult) hashSet() {
	if len(r.vals) == 0 {
		return
	}
	switch r.vals[0].(type) {
	case int64:
		m := make(map[int64]struct{}, len(r.vals))
		for _, v := range r.vals {
			x, ok := v.(int64)
			if !ok {
				return
			}
			m[x] = struct{}{}
		}
		r.ints = m
	case string:
		m := make(map[string]struct{}, len(r.vals))
		for _, v := range r.vals {
			x, ok := v.(string)
			if !ok {
				return
			}
			m[x] = struct{}{}
		}
		r.strs = m
	}
}

// in is x IN (rows) for an integer or string x read straight from its
// column (null reports a NULL x), from the hash set; ok is false when
// the set is not of x's kind.
func (r *subResult) in(null bool, found func(*subResult) (bool, bool)) (t tri, ok bool) {
	if r.rows == 0 {
		return triFalse, true
	}
	if null {
		return triNull, true
	}
	if len(r.vals) == 0 {
		return triNull, true // only NULLs
	}
	hit, ok := found(r)
	if !ok {
		return 0, false
	}
	switch {
	case hit:
		return triTrue, true
	case r.hasNull:
		return triNull, true
	}
	return triFalse, true
}

// appendTuple encodes a tuple of canonical values so that two tuples
// encode alike only when their values are equal and of the same Go type
// (-0 and 0 are one value).
func appendTuple(b []byte, vals []any) []byte {
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			b = append(b, 'n')
		case int64:
			b = strconv.AppendInt(append(b, 'i'), x, 10)
		case float64:
			if x == 0 {
				x = 0
			}
			b = strconv.AppendUint(append(b, 'f'), math.Float64bits(x), 16)
		case bool:
			b = strconv.AppendBool(append(b, 'b'), x)
		case string:
			b = strconv.AppendInt(append(b, 's'), int64(len(x)), 10)
			b = append(append(b, ':'), x...)
		case []byte:
			b = strconv.AppendInt(append(b, 'x'), int64(len(x)), 10)
			b = append(append(b, ':'), x...)
		case time.Time:
			b = append(b, 't')
			b = x.AppendFormat(b, time.RFC3339Nano)
		default:
			s := fmt.Sprintf("%T:%v", x, x)
			b = strconv.AppendInt(append(b, 'o'), int64(len(s)), 10)
			b = append(append(b, ':'), s...)
		}
		b = append(b, ';')
	}
	return b
}

// outerFn evaluates a subquery's correlation for a row.
type outerFn func(i int) []any

func compileOuter(sub *sqlplan.Subquery, env *env) (func(rec arrow.RecordBatch) outerFn, error) {
	if env.subs == nil || env.subs.run == nil {
		return nil, fmt.Errorf("subquery %s cannot run here: %w", sub, metadata.ErrUnsupported)
	}
	bs := make([]valueBinder, len(sub.Outer))
	for i, e := range sub.Outer {
		b, err := compileValue(e, env)
		if err != nil {
			return nil, err
		}
		bs[i] = b
	}
	return func(rec arrow.RecordBatch) outerFn {
		fs := make([]valueFn, len(bs))
		for i, b := range bs {
			fs[i] = b(rec)
		}
		vals := make([]any, len(fs))
		return func(i int) []any {
			for j, f := range fs {
				vals[j] = f(i)
			}
			return vals
		}
	}, nil
}

// compileScalarSubquery is (SELECT ...) as a value.
func compileScalarSubquery(sub *sqlplan.Subquery, env *env) (valueBinder, error) {
	outer, err := compileOuter(sub, env)
	if err != nil {
		return nil, err
	}
	return func(rec arrow.RecordBatch) valueFn {
		of := outer(rec)
		return func(i int) any {
			r, err := env.subs.result(env.ctx, sub, of(i), unordered)
			if err != nil {
				env.fail(err)
				return nil
			}
			return r.first
		}
	}, nil
}

// compileSemi is the semi-join (anti-join) condition of SubSemi: whether
// the row's keys, none NULL, are one of the inner rows.
func compileSemi(sub *sqlplan.Subquery, env *env) (boolBinder, error) {
	outer, err := compileOuter(sub, env)
	if err != nil {
		return nil, err
	}
	keys := make([]valueBinder, len(sub.Keys))
	for i, k := range sub.Keys {
		if keys[i], err = compileValue(k, env); err != nil {
			return nil, err
		}
	}
	not := sub.Not
	return func(rec arrow.RecordBatch) boolFn {
		of := outer(rec)
		fs := make([]valueFn, len(keys))
		for i, k := range keys {
			fs[i] = k(rec)
		}
		vals := make([]any, len(fs))
		var buf []byte
		var fixed *subResult
		correlated := sub.Correlated()
		return func(i int) tri {
			r := fixed
			if r == nil {
				var err error
				if r, err = env.subs.result(env.ctx, sub, of(i), unordered); err != nil {
					env.fail(err)
					return triNull
				}
				if !correlated {
					fixed = r
				}
			}
			for j, f := range fs {
				if vals[j] = f(i); vals[j] == nil {
					return triOf(not)
				}
			}
			buf = appendTuple(buf[:0], vals)
			_, hit := r.tuples[string(buf)]
			return triOf(hit != not)
		}
	}, nil
}

// compileSubqueryBool is EXISTS, IN, ANY and ALL, with SQL's NULLs: x IN
// (...) is NULL when x is NULL or no value matches and one is NULL, and
// false for no rows at all, whatever x is; ALL is true for no rows.
func compileSubqueryBool(sub *sqlplan.Subquery, env *env) (boolBinder, error) {
	if sub.Kind == sqlplan.SubSemi {
		return compileSemi(sub, env)
	}
	outer, err := compileOuter(sub, env)
	if err != nil {
		return nil, err
	}
	if sub.Kind == sqlplan.SubExists {
		not := sub.Not
		return func(rec arrow.RecordBatch) boolFn {
			of := outer(rec)
			return func(i int) tri {
				r, err := env.subs.result(env.ctx, sub, of(i), unordered)
				if err != nil {
					env.fail(err)
					return triNull
				}
				return triOf((r.rows > 0) != not)
			}
		}, nil
	}
	if sub.E == nil || len(sub.Plan.Output) != 1 {
		return nil, fmt.Errorf("subquery %s has no operand to compare: %w", sub, metadata.ErrInvalidValue)
	}
	inner := sub.Plan.Output[0].Expr.Type()
	if !comparable(sub.E.Type(), inner) {
		return nil, fmt.Errorf("cannot compare %s (%s) with %s (%s): %w", sub.E, sub.E.Type(), sub.Plan.Output[0].Expr, inner, metadata.ErrUnsupported)
	}
	sorted := orderedTogether(sub.E.Type(), inner)
	order := unordered
	if sorted {
		order = sortedValues
	}
	left, err := compileValue(sub.E, env)
	if err != nil {
		return nil, err
	}
	op, all, not := sub.Op, sub.Kind == sqlplan.SubAll, sub.Kind == sqlplan.SubIn && sub.Not
	// x <> ALL (...) is NOT (x = ANY (...)): both probe for equality.
	equality := !all && op == sqlplan.OpEq || all && op == sqlplan.OpNotEq
	if all && op == sqlplan.OpNotEq {
		not = true
	}
	if c, ok := sub.E.(*sqlplan.ColumnRef); ok && sorted && equality && (c.T.IsInteger() || c.T.IsString()) {
		if b := probeColumn(sub, c, env, outer, not); b != nil {
			return b, nil
		}
	}
	return func(rec arrow.RecordBatch) boolFn {
		of, lf := outer(rec), left(rec)
		return func(i int) tri {
			r, err := env.subs.result(env.ctx, sub, of(i), order)
			if err != nil {
				env.fail(err)
				return triNull
			}
			var t tri
			switch {
			case all && op == sqlplan.OpNotEq:
				t = r.any(sqlplan.OpEq, lf(i))
			case all:
				t = r.all(op, lf(i))
			default:
				t = r.any(op, lf(i))
			}
			if not {
				return t.not()
			}
			return t
		}
	}, nil
}

// probeColumn is x [NOT] IN (...) for an integer or string column x: it
// reads x from its array and probes the result's hash set, falling back
// to the comparisons of subResult.any for a set of mixed values.
func probeColumn(sub *sqlplan.Subquery, c *sqlplan.ColumnRef, env *env, outer func(rec arrow.RecordBatch) outerFn, not bool) boolBinder {
	pos, err := columnPos(c, env)
	if err != nil {
		return nil
	}
	isInt := c.T.IsInteger()
	return func(rec arrow.RecordBatch) boolFn {
		of := outer(rec)
		arr := rec.Column(pos)
		var (
			getInt func(int) int64
			strs   *array.String
		)
		if isInt {
			getInt = intGetter(arr)
		} else if a, ok := arr.(*array.String); ok {
			strs = a
		}
		correlated := sub.Correlated()
		var fixed *subResult
		return func(i int) tri {
			r := fixed
			if r == nil {
				var err error
				if r, err = env.subs.result(env.ctx, sub, of(i), hashedValues); err != nil {
					env.fail(err)
					return triNull
				}
				if !correlated {
					fixed = r
				}
			}
			null := arr.IsNull(i)
			t, ok := r.in(null, func(r *subResult) (bool, bool) {
				switch {
				case getInt != nil && r.ints != nil:
					_, hit := r.ints[getInt(i)]
					return hit, true
				case strs != nil && r.strs != nil:
					_, hit := r.strs[strs.Value(i)]
					return hit, true
				}
				return false, false
			})
			if !ok {
				t = r.any(sqlplan.OpEq, metadata.ValueAt(arr, c.T, i))
			}
			if not {
				return t.not()
			}
			return t
		}
	}
}

// orderedTogether reports whether values of the two types compare in one
// order, so that sorted values answer a comparison by their ends or a
// binary search. A string compared with a number compares as a number,
// which strings do not sort by.
func orderedTogether(a, b metadata.DataType) bool {
	switch {
	case a.Root == 0 || b.Root == 0:
		return false
	case a.IsNumeric() && b.IsNumeric(), a.IsString() && b.IsString():
		return true
	}
	return a.Root == b.Root && !a.IsNested()
}

// any is x op ANY (rows): TRUE when some value satisfies it; else NULL
// when x or some value is NULL; FALSE without rows.
func (r *subResult) any(op sqlplan.CmpOp, x any) tri {
	if r.rows == 0 {
		return triFalse
	}
	if x == nil {
		return triNull
	}
	if r.some(op, x, true) {
		return triTrue
	}
	if r.hasNull {
		return triNull
	}
	return triFalse
}

// all is x op ALL (rows): FALSE when some value fails it; else NULL when
// x or some value is NULL; TRUE without rows.
func (r *subResult) all(op sqlplan.CmpOp, x any) tri {
	if r.rows == 0 {
		return triTrue
	}
	if x == nil {
		return triNull
	}
	if r.some(op, x, false) {
		return triFalse
	}
	if r.hasNull {
		return triNull
	}
	return triTrue
}

// some reports whether a non-NULL value v has (x op v) == want.
func (r *subResult) some(op sqlplan.CmpOp, x any, want bool) bool {
	n := len(r.vals)
	if n == 0 {
		return false
	}
	if !r.sorted {
		for _, v := range r.vals {
			if cmpResult(op, sqlCompare(x, v)) == want {
				return true
			}
		}
		return false
	}
	found := func() bool {
		_, ok := slices.BinarySearchFunc(r.vals, x, sqlCompare)
		return ok
	}
	lo, hi := r.vals[0], r.vals[n-1]
	// The values that decide: for x < v the largest v makes it most
	// likely true and the smallest most likely false, and so on.
	switch op {
	case sqlplan.OpEq:
		if want {
			return found()
		}
		return n > 1 || sqlCompare(x, lo) != 0
	case sqlplan.OpNotEq:
		if want {
			return n > 1 || sqlCompare(x, lo) != 0
		}
		return found()
	case sqlplan.OpLt, sqlplan.OpLtEq:
		if want {
			return cmpResult(op, sqlCompare(x, hi))
		}
		return !cmpResult(op, sqlCompare(x, lo))
	case sqlplan.OpGt, sqlplan.OpGtEq:
		if want {
			return cmpResult(op, sqlCompare(x, lo))
		}
		return !cmpResult(op, sqlCompare(x, hi))
	}
	return false
}
