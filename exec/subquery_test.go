package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// fakeRunner answers every subquery with rows(outer) and counts its runs.
type fakeRunner struct {
	rows  func(sub *sqlplan.Subquery, outer []any) []any
	runs  int
	ctxOK func(ctx context.Context) bool
}

func (f *fakeRunner) RunSubquery(ctx context.Context, sub *sqlplan.Subquery, outer []any, max int) ([][]any, error) {
	f.runs++
	if f.ctxOK != nil && !f.ctxOK(ctx) {
		return nil, errors.New("runner got another context")
	}
	vals := f.rows(sub, outer)
	if max >= 0 && len(vals) > max {
		vals = vals[:max]
	}
	rows := make([][]any, len(vals))
	for i, v := range vals {
		if tuple, ok := v.([]any); ok {
			rows[i] = tuple
		} else {
			rows[i] = []any{v}
		}
	}
	return rows, nil
}

// subquery builds a bound subquery whose inner query returns values of t.
func subquery(kind sqlplan.SubqueryKind, op sqlplan.CmpOp, not bool, e sqlplan.Expr, t metadata.DataType, outer ...sqlplan.Expr) *sqlplan.Subquery {
	return &sqlplan.Subquery{Kind: kind, Op: op, Not: not, E: e, Outer: outer, T: t, Text: "select v from u",
		Plan: &sqlplan.SelectPlan{Output: []sqlplan.OutputColumn{{Name: "v", Expr: &sqlplan.ColumnRef{Name: "v", Index: 0, T: t}}}}}
}

// runOutputs builds q over testRows and returns its rows.
func runOutputs(t *testing.T, ctx context.Context, q Query, opts Options) ([][]any, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts.Allocator = mem
	src := &sliceSource{recs: makeRecords(t, mem, testRows(), 2)}
	q.Limit = -1
	for i := range q.Output {
		q.Names = append(q.Names, fmt.Sprintf("c%d", i))
	}
	op, err := Build(Scan(src), q, NewLayout(3, []int{0, 1, 2}), opts)
	if err != nil {
		src.Close()
		return nil, err
	}
	defer op.Close()
	var out [][]any
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for r := 0; r < b.NumRows(); r++ {
			row := make([]any, len(q.Output))
			for c, e := range q.Output {
				row[c] = metadata.ValueAt(b.Rec.Column(c), resultType(e.Type()), b.Row(r))
			}
			out = append(out, row)
		}
	}
}

// naiveQuantified is x op ANY|ALL (vals) by its definition: an OR (ANY)
// or AND (ALL) of x op v over the values, with SQL's three-valued logic.
func naiveQuantified(op sqlplan.CmpOp, all bool, x any, vals []any) any {
	acc := triFalse
	if all {
		acc = triTrue
	}
	for _, v := range vals {
		c := triNull
		if x != nil && v != nil {
			c = triOf(cmpResult(op, sqlCompare(x, v)))
		}
		if all {
			acc = acc.and(c)
		} else {
			acc = acc.or(c)
		}
	}
	switch acc {
	case triTrue:
		return true
	case triFalse:
		return false
	}
	return nil
}

// TestQuantifiedSubqueries checks IN, NOT IN, ANY and ALL against their
// definition for sets with and without NULLs, empty ones included, for
// types compared in one order (a sorted set) and a string set compared
// with numbers (a linear one).
func TestQuantifiedSubqueries(t *testing.T) {
	bigint, str := metadata.BigIntType(), metadata.StringType()
	sets := map[string][]any{
		"empty":     {},
		"one":       {int64(7)},
		"one null":  {nil},
		"with null": {int64(7), nil, int64(1)},
		"many":      {int64(100), int64(-5), int64(7), int64(7), int64(1000)},
		"strings":   {"7", "100", "abc", nil},
	}
	ops := []sqlplan.CmpOp{sqlplan.OpEq, sqlplan.OpNotEq, sqlplan.OpLt, sqlplan.OpLtEq, sqlplan.OpGt, sqlplan.OpGtEq}
	for name, set := range sets {
		typ := bigint
		if name == "strings" {
			typ = str
		}
		runner := &fakeRunner{rows: func(*sqlplan.Subquery, []any) []any { return set }}
		var exprs []sqlplan.Expr
		var want []func(x any) any
		for _, op := range ops {
			for _, all := range []bool{false, true} {
				kind := sqlplan.SubAny
				if all {
					kind = sqlplan.SubAll
				}
				exprs = append(exprs, subquery(kind, op, false, col(2), typ))
				want = append(want, func(x any) any { return naiveQuantified(op, all, x, set) })
			}
		}
		exprs = append(exprs, subquery(sqlplan.SubIn, sqlplan.OpEq, false, col(2), typ), subquery(sqlplan.SubIn, sqlplan.OpEq, true, col(2), typ))
		want = append(want,
			func(x any) any { return naiveQuantified(sqlplan.OpEq, false, x, set) },
			func(x any) any { return naiveQuantified(sqlplan.OpNotEq, true, x, set) })
		exprs = append(exprs, col(2))
		t.Run(name, func(t *testing.T) {
			rows, err := runOutputs(t, context.Background(), Query{Output: exprs}, Options{Subqueries: runner})
			require.NoError(t, err)
			require.Len(t, rows, len(testRows()))
			for _, row := range rows {
				x := row[len(row)-1]
				for i, w := range want {
					require.Equal(t, w(x), row[i], "%v: %s", x, exprs[i])
				}
			}
			// Uncorrelated: one run per subquery node for the whole query.
			require.Equal(t, len(exprs)-1, runner.runs)
		})
	}
}

// TestNotInNullSemantics pins the two rules users trip over.
func TestNotInNullSemantics(t *testing.T) {
	bigint := metadata.BigIntType()
	withNull := &fakeRunner{rows: func(*sqlplan.Subquery, []any) []any { return []any{int64(2), nil} }}
	// x NOT IN (2, NULL) is never true: NULL for x <> 2, false for x = 2.
	rows, err := runOutputs(t, context.Background(), Query{Filter: []sqlplan.Expr{subquery(sqlplan.SubIn, sqlplan.OpEq, true, col(0), bigint)}, Output: []sqlplan.Expr{col(0)}}, Options{Subqueries: withNull})
	require.NoError(t, err)
	require.Empty(t, rows)
	// NULL IN (no rows) is false, and NULL NOT IN (no rows) true.
	empty := &fakeRunner{rows: func(*sqlplan.Subquery, []any) []any { return nil }}
	rows, err = runOutputs(t, context.Background(), Query{
		Filter: []sqlplan.Expr{&sqlplan.IsNull{E: col(2)}},
		Output: []sqlplan.Expr{subquery(sqlplan.SubIn, sqlplan.OpEq, false, col(2), bigint), subquery(sqlplan.SubIn, sqlplan.OpEq, true, col(2), bigint)},
	}, Options{Subqueries: empty})
	require.NoError(t, err)
	require.Equal(t, [][]any{{false, true}}, rows)
}

// TestCorrelatedSubqueryCache: a correlated subquery runs once per
// distinct tuple of outer values, within the operator's context.
func TestCorrelatedSubqueryCache(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "query")
	var seen []any
	runner := &fakeRunner{
		rows: func(_ *sqlplan.Subquery, outer []any) []any {
			seen = append(seen, outer[0])
			if s, ok := outer[0].(string); ok && len(s) > 0 && s[0] == 'a' {
				return []any{int64(1)}
			}
			return nil
		},
		ctxOK: func(c context.Context) bool { return c.Value(key{}) == "query" },
	}
	// s has a NULL; the outer value of each row is s's first letter, so
	// apple, apricot and a_b%c share one run.
	first := &sqlplan.Func{Name: "substring", Args: []sqlplan.Expr{col(1), lit(int64(1), metadata.BigIntType()), lit(int64(1), metadata.BigIntType())}, T: metadata.StringType()}
	exists := subquery(sqlplan.SubExists, 0, false, nil, metadata.BigIntType(), first)
	notExists := subquery(sqlplan.SubExists, 0, true, nil, metadata.BigIntType(), first)
	notExists.Plan = exists.Plan
	rows, err := runOutputs(t, ctx, Query{Filter: []sqlplan.Expr{exists}, Output: []sqlplan.Expr{col(0), notExists}}, Options{Subqueries: runner})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1), false}, {int64(4), false}, {int64(5), false}}, rows)
	require.ElementsMatch(t, []any{"a", "b", nil, "c"}, seen)
}

func TestScalarSubquery(t *testing.T) {
	bigint := metadata.BigIntType()
	runner := &fakeRunner{rows: func(_ *sqlplan.Subquery, outer []any) []any {
		switch outer[0] {
		case int64(1):
			return []any{int64(10)}
		case int64(2):
			return []any{int64(20), int64(21)}
		}
		return nil
	}}
	sc := subquery(sqlplan.SubScalar, 0, false, nil, bigint, col(0))
	rows, err := runOutputs(t, context.Background(), Query{Filter: []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpNotEq, L: col(0), R: lit(int64(2), bigint)}},
		Output: []sqlplan.Expr{col(0), sc}}, Options{Subqueries: runner})
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1), int64(10)}, {int64(3), nil}, {int64(4), nil}, {int64(5), nil}, {int64(6), nil}}, rows)

	_, err = runOutputs(t, context.Background(), Query{Output: []sqlplan.Expr{sc}}, Options{Subqueries: runner})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "subquery (select v from u) returns more than 1 row")
}

func TestSubqueryErrors(t *testing.T) {
	bigint := metadata.BigIntType()
	sc := subquery(sqlplan.SubScalar, 0, false, nil, bigint)
	_, err := runOutputs(t, context.Background(), Query{Output: []sqlplan.Expr{sc}}, Options{})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.ErrorContains(t, err, "subquery (select v from u) cannot run here")

	// Each distinct outer value holds a result: a small limit is exceeded.
	runner := &fakeRunner{rows: func(_ *sqlplan.Subquery, outer []any) []any { return []any{outer[0]} }}
	corr := subquery(sqlplan.SubIn, sqlplan.OpEq, false, col(0), bigint, col(0))
	_, err = runOutputs(t, context.Background(), Query{Output: []sqlplan.Expr{corr}}, Options{Subqueries: runner, MemoryLimit: 200})
	require.ErrorIs(t, err, ErrMemoryLimit)
	var ml *MemoryLimitError
	require.ErrorAs(t, err, &ml)
	require.Equal(t, "subquery results", ml.Op)
}

// TestSubqueryFailsOnce: the first failure ends the query; the rows left
// in the batch do not run the subquery again.
func TestSubqueryFailsOnce(t *testing.T) {
	boom := errors.New("boom")
	runner := &failingRunner{err: boom}
	corr := subquery(sqlplan.SubExists, 0, false, nil, metadata.BigIntType(), col(0))
	_, err := runOutputs(t, context.Background(), Query{Filter: []sqlplan.Expr{corr}, Output: []sqlplan.Expr{col(0)}}, Options{Subqueries: runner})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, runner.runs)
}

type failingRunner struct {
	err  error
	runs int
}

func (f *failingRunner) RunSubquery(context.Context, *sqlplan.Subquery, []any, int) ([][]any, error) {
	f.runs++
	return nil, f.err
}

// TestSemiJoin: the decorrelated form matches key tuples exactly, a NULL
// on either side matching nothing, and is never NULL.
func TestSemiJoin(t *testing.T) {
	bigint, str := metadata.BigIntType(), metadata.StringType()
	runner := &fakeRunner{rows: func(*sqlplan.Subquery, []any) []any {
		return []any{[]any{int64(1), "apple"}, []any{int64(3), nil}, []any{nil, "banana"}, []any{int64(4), "apricot"}, []any{int64(4), "apricot"}}
	}}
	semi := &sqlplan.Subquery{Kind: sqlplan.SubSemi, Keys: []sqlplan.Expr{col(0), col(1)}, Text: "(k, v) of select 1 from u",
		Plan: &sqlplan.SelectPlan{Output: []sqlplan.OutputColumn{{Name: "k", Expr: &sqlplan.ColumnRef{Name: "k", T: bigint}}, {Name: "v", Expr: &sqlplan.ColumnRef{Name: "v", Index: 1, T: str}}}}}
	anti := semi.MapOperands(func(e sqlplan.Expr) sqlplan.Expr { return e })
	anti.Not = true
	rows, err := runOutputs(t, context.Background(), Query{Output: []sqlplan.Expr{col(0), semi, anti}}, Options{Subqueries: runner})
	require.NoError(t, err)
	require.Equal(t, [][]any{
		{int64(1), true, false}, {int64(2), false, true}, {int64(3), false, true},
		{int64(4), true, false}, {int64(5), false, true}, {int64(6), false, true},
	}, rows)
	require.Equal(t, 1, runner.runs)
}
