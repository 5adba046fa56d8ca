package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

func runSetOp(t *testing.T, kind sqlplan.SetOpKind, all bool, types []metadata.DataType, left, right [][]any, per int, hide bool) []string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ls, rs := typedSource(t, mem, types, left, per), typedSource(t, mem, types, right, per)
	var l, r Operator = Scan(ls), Scan(rs)
	if hide {
		l, r = &everyOther{in: l}, &everyOther{in: r}
	}
	op := SetOp(l, r, kind, all, types, Options{Allocator: mem})
	rows := drain(t, op, types)
	require.NoError(t, op.Close())
	require.NoError(t, op.Close())
	require.True(t, ls.closed)
	require.True(t, rs.closed)
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = rowString(row)
	}
	return out
}

// naiveSetOp is the set operation by its definition, in the order the
// operator promises.
func naiveSetOp(kind sqlplan.SetOpKind, all bool, left, right [][]any) []string {
	var l, r []string
	for _, row := range left {
		l = append(l, rowString(row))
	}
	for _, row := range right {
		r = append(r, rowString(row))
	}
	rightCount := map[string]int{}
	for _, k := range r {
		rightCount[k]++
	}
	seen := map[string]bool{}
	out := []string{}
	switch kind {
	case sqlplan.SetUnion:
		for _, k := range append(l, r...) {
			if all || !seen[k] {
				out = append(out, k)
			}
			seen[k] = true
		}
	case sqlplan.SetIntersect:
		for _, k := range l {
			if rightCount[k] > 0 && (all || !seen[k]) {
				out = append(out, k)
				rightCount[k]--
			}
			seen[k] = true
		}
	case sqlplan.SetExcept:
		for _, k := range l {
			if all {
				if rightCount[k] > 0 {
					rightCount[k]--
					continue
				}
				out = append(out, k)
				continue
			}
			if rightCount[k] == 0 && !seen[k] {
				out = append(out, k)
			}
			seen[k] = true
		}
	}
	return out
}

func TestSetOpCases(t *testing.T) {
	types := []metadata.DataType{bigint, str}
	left := [][]any{{int64(1), "a"}, {int64(1), "a"}, {int64(1), "a"}, {nil, "n"}, {nil, "n"}, {int64(2), nil}, {int64(3), "c"}}
	right := [][]any{{int64(1), "a"}, {nil, "n"}, {int64(2), nil}, {int64(2), nil}, {int64(4), "d"}, {int64(1), "a"}}
	want := map[string][]string{
		"UNION ALL":     {"1|a", "1|a", "1|a", "NULL|n", "NULL|n", "2|NULL", "3|c", "1|a", "NULL|n", "2|NULL", "2|NULL", "4|d", "1|a"},
		"UNION":         {"1|a", "NULL|n", "2|NULL", "3|c", "4|d"},
		"INTERSECT ALL": {"1|a", "1|a", "NULL|n", "2|NULL"},
		"INTERSECT":     {"1|a", "NULL|n", "2|NULL"},
		"EXCEPT ALL":    {"1|a", "NULL|n", "3|c"},
		"EXCEPT":        {"3|c"},
	}
	for _, kind := range []sqlplan.SetOpKind{sqlplan.SetUnion, sqlplan.SetIntersect, sqlplan.SetExcept} {
		for _, all := range []bool{true, false} {
			name := kind.String()
			if all {
				name += " ALL"
			}
			got := runSetOp(t, kind, all, types, left, right, 2, false)
			require.Equal(t, want[name], got, name)
			require.Equal(t, naiveSetOp(kind, all, left, right), got, name)
			// One integer column: the integer table.
			var l1, r1 [][]any
			for _, row := range left {
				l1 = append(l1, row[:1])
			}
			for _, row := range right {
				r1 = append(r1, row[:1])
			}
			require.Equal(t, naiveSetOp(kind, all, l1, r1), runSetOp(t, kind, all, types[:1], l1, r1, 3, false), name)
		}
	}
	require.Empty(t, runSetOp(t, sqlplan.SetIntersect, false, types, left, nil, 2, false))
	require.Equal(t, []string{"1|a", "NULL|n", "2|NULL", "3|c"}, runSetOp(t, sqlplan.SetExcept, false, types, left, nil, 2, false))
	require.Equal(t, []string{"1|a", "NULL|n", "2|NULL", "4|d"}, runSetOp(t, sqlplan.SetUnion, false, types, nil, right, 2, false))
}

func TestSetOpMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	gen := func(n int, types []metadata.DataType) [][]any {
		rows := make([][]any, n)
		for i := range rows {
			row := make([]any, len(types))
			for c, ty := range types {
				switch {
				case rng.IntN(5) == 0:
				case ty.Root == metadata.String:
					row[c] = fmt.Sprint(rng.IntN(3))
				case ty.Root == metadata.Double:
					row[c] = float64(rng.IntN(3)) / 2
				default:
					row[c] = int64(rng.IntN(4))
				}
			}
			rows[i] = row
		}
		return rows
	}
	shapes := [][]metadata.DataType{{bigint}, {metadata.IntType()}, {bigint, str}, {metadata.DoubleType()}, {str, metadata.DoubleType(), bigint}}
	for iter := 0; iter < 120; iter++ {
		types := shapes[iter%len(shapes)]
		kind := []sqlplan.SetOpKind{sqlplan.SetUnion, sqlplan.SetIntersect, sqlplan.SetExcept}[rng.IntN(3)]
		all := rng.IntN(2) == 0
		per, hide := 1+rng.IntN(5), rng.IntN(3) == 0
		left, right := gen(rng.IntN(25), types), gen(rng.IntN(25), types)
		got := runSetOp(t, kind, all, types, left, right, per, hide)
		want := naiveSetOp(kind, all, visibleRows(left, per, hide), visibleRows(right, per, hide))
		require.Equal(t, want, got, "iter %d: %s all=%v types=%v", iter, kind, all, types)
	}
}

func TestSetOpErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []metadata.DataType{bigint}

	// A right input of another type is an error, not a panic.
	l, r := typedSource(t, mem, types, [][]any{{int64(1)}}, 1), typedSource(t, mem, []metadata.DataType{str}, [][]any{{"x"}}, 1)
	op := SetOp(Scan(l), Scan(r), sqlplan.SetUnion, false, types, Options{Allocator: mem})
	_, err := op.Next(context.Background())
	require.NoError(t, err)
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "UNION right input column 0 is utf8, not int64")
	require.NoError(t, op.Close())

	op = SetOp(Scan(&sliceSource{}), Scan(&sliceSource{}), 0, false, types, Options{Allocator: mem})
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.NoError(t, op.Close())

	// The distinct rows held count against the memory limit.
	rows := make([][]any, 20000)
	for i := range rows {
		rows[i] = []any{int64(i)}
	}
	for _, kind := range []sqlplan.SetOpKind{sqlplan.SetUnion, sqlplan.SetIntersect, sqlplan.SetExcept} {
		l, r = typedSource(t, mem, types, rows, 1000), typedSource(t, mem, types, rows, 1000)
		op = SetOp(Scan(l), Scan(r), kind, false, types, Options{Allocator: mem, MemoryLimit: 256 << 10})
		_, err = Drain(context.Background(), op)
		var mle *MemoryLimitError
		require.ErrorAs(t, err, &mle, kind.String())
		require.Equal(t, kind.String(), mle.Op)
		require.ErrorContains(t, err, "distinct rows")
		require.NoError(t, op.Close())
	}

	// Cancellation.
	l, r = typedSource(t, mem, types, rows[:10], 1), typedSource(t, mem, types, rows[:10], 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	op = SetOp(Scan(l), Scan(r), sqlplan.SetExcept, true, types, Options{Allocator: mem})
	_, err = op.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, op.Close())
}
