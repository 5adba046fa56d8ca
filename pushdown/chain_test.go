package pushdown_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/pushdown"
	"github.com/flusslite/fluss/sqlplan"
)

// idEquals is the bound `id = v` on orders.
func idEquals(v int64) sqlplan.Expr {
	return &sqlplan.Compare{Op: sqlplan.OpEq,
		L: &sqlplan.ColumnRef{Name: "id", Index: 0, T: metadata.BigIntType()},
		R: &sqlplan.Literal{Value: v, T: metadata.BigIntType()}}
}

// chain folds terms the way the parser nests a run of one operator: to
// the left, n deep.
func chain(or bool, terms ...sqlplan.Expr) sqlplan.Expr {
	e := terms[0]
	for _, t := range terms[1:] {
		if or {
			e = &sqlplan.Or{L: e, R: t}
		} else {
			e = &sqlplan.And{L: e, R: t}
		}
	}
	return e
}

// idChain is `id = 0 OR id = 1 OR ...` over n terms, values cycling
// through 0..6.
func idChain(n int) sqlplan.Expr {
	terms := make([]sqlplan.Expr, n)
	for i := range terms {
		terms[i] = idEquals(int64(i % 7))
	}
	return chain(true, terms...)
}

type row []any

func (r row) Value(i int) any { return r[i] }

// allocated is the number of bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestConvertOrChainLinear pins issue 15 item 7: converting a chain of n
// ORs combined the two converted halves at every level, copying the
// children gathered so far each time (O(n²): 40,000 terms planned in
// 12.8 s). Converting costs in proportion to the terms now, and the
// result is one flat OR that answers what the WHERE answers.
func TestConvertOrChainLinear(t *testing.T) {
	orders := tables["orders"]
	convert := func(n int) (predicate.P, uint64) {
		e := idChain(n)
		var p predicate.P
		var ok bool
		bytes := allocated(func() { p, ok = pushdown.Convert(orders, e) })
		require.True(t, ok)
		return p, bytes
	}
	_, smallBytes := convert(2000)
	p, largeBytes := convert(16000)
	// 8 times the terms: linear is 8 times the bytes, quadratic 64.
	require.Less(t, largeBytes, 16*smallBytes, "converting 16000 terms took %d bytes, 2000 took %d", largeBytes, smallBytes)

	or, isOr := p.(*predicate.Or)
	require.True(t, isOr, "%T", p)
	require.Len(t, or.Children, 16000)
	for i, c := range or.Children {
		l, isLeaf := c.(*predicate.Leaf)
		require.True(t, isLeaf, "child %d is %T", i, c)
		require.Equal(t, predicate.Eq, l.Op)
		require.Equal(t, []any{int64(i % 7)}, l.Literals, "child %d", i)
	}
	for id := int64(0); id < 10; id++ {
		r := make(row, len(orders.Schema.Columns))
		r[0] = id
		require.Equal(t, id < 7, predicate.Test(p, r), "id %d", id)
	}
	require.False(t, predicate.Test(p, make(row, len(orders.Schema.Columns))), "NULL id")
}

// TestConvertChainShapes pins how runs of AND and OR flatten: a run of
// one operator becomes one node whatever its nesting, a run of the other
// operator inside stays a child, and a BETWEEN (an AND) or NOT BETWEEN (an
// OR) joins a run of its own operator.
func TestConvertChainShapes(t *testing.T) {
	orders := tables["orders"]
	between := func(not bool, lo, hi int64) sqlplan.Expr {
		return &sqlplan.Between{Not: not, E: &sqlplan.ColumnRef{Name: "id", Index: 0, T: metadata.BigIntType()},
			Lo: &sqlplan.Literal{Value: lo, T: metadata.BigIntType()}, Hi: &sqlplan.Literal{Value: hi, T: metadata.BigIntType()}}
	}
	for _, tc := range []struct {
		e    sqlplan.Expr
		want string
	}{
		{chain(false, idEquals(1), idEquals(2), idEquals(3)), "And[id = 1, id = 2, id = 3]"},
		// Right-nested, as parentheses write it.
		{&sqlplan.Or{L: idEquals(1), R: &sqlplan.Or{L: idEquals(2), R: idEquals(3)}}, "Or[id = 1, id = 2, id = 3]"},
		{chain(false, chain(true, idEquals(1), idEquals(2)), chain(true, idEquals(3), idEquals(4))),
			"And[Or[id = 1, id = 2], Or[id = 3, id = 4]]"},
		{chain(true, chain(false, idEquals(1), idEquals(2)), idEquals(3), chain(false, idEquals(4), idEquals(5))),
			"Or[And[id = 1, id = 2], id = 3, And[id = 4, id = 5]]"},
		{chain(true, idEquals(1), between(true, 3, 5)), "Or[id = 1, id < 3, id > 5]"},
		{chain(false, idEquals(1), between(false, 3, 5)), "And[id = 1, id >= 3, id <= 5]"},
		{chain(true, idEquals(1), between(false, 3, 5)), "Or[id = 1, And[id >= 3, id <= 5]]"},
	} {
		p, ok := pushdown.Convert(orders, tc.e)
		require.True(t, ok, tc.e.String())
		require.Equal(t, tc.want, shape(p), tc.e.String())
	}
	// One term that does not convert leaves the whole run unconverted.
	_, ok := pushdown.Convert(orders, chain(true, idEquals(1), &sqlplan.Compare{Op: sqlplan.OpEq,
		L: &sqlplan.ColumnRef{Name: "id", Index: 0, T: metadata.BigIntType()},
		R: &sqlplan.ColumnRef{Name: "qty", Index: 9, T: metadata.IntType()}}, idEquals(2)))
	require.False(t, ok)
}

// shape prints a predicate with its nesting visible.
func shape(p predicate.P) string {
	list := func(name string, cs []predicate.P) string {
		s := name + "["
		for i, c := range cs {
			if i > 0 {
				s += ", "
			}
			s += shape(c)
		}
		return s + "]"
	}
	switch x := p.(type) {
	case *predicate.And:
		return list("And", x.Children)
	case *predicate.Or:
		return list("Or", x.Children)
	}
	return p.String()
}

// BenchmarkConvertOrChain reports what converting a WHERE of n ORs costs;
// ns/op per term should stay flat as n grows.
func BenchmarkConvertOrChain(b *testing.B) {
	orders := tables["orders"]
	for _, n := range []int{5000, 10000, 20000, 40000} {
		e := idChain(n)
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := pushdown.Convert(orders, e); !ok {
					b.Fatal("did not convert")
				}
			}
		})
	}
}
