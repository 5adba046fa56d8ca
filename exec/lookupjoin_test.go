package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestLookupJoin: the lookup join asks for each distinct non-NULL key
// tuple once, of the keys it was given positions of, and joins what the
// lookup returns as the hash join would (inner and left, with a second
// key checked by the join), releasing everything.
func TestLookupJoin(t *testing.T) {
	i64, str := metadata.BigIntType(), metadata.StringType()
	table := map[int64]string{1: "one", 2: "two", 3: "three"}
	for _, kind := range []JoinKind{JoinInner, JoinLeft} {
		c := joinCase{
			kind:       kind,
			probeTypes: []metadata.DataType{i64, str},
			buildTypes: []metadata.DataType{i64, str},
			probe:      [][]any{{int64(1), "one"}, {int64(2), "x"}, {nil, "n"}, {int64(1), "one"}, {int64(9), "nine"}, {int64(3), "three"}},
			probeKeys:  []int{0, 1},
			buildKeys:  []int{0, 1},
			per:        2,
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var asked [][]any
		lookup := func(_ context.Context, keys [][]any) (Operator, error) {
			asked = keys
			var rows [][]any
			for _, k := range keys {
				if v, ok := table[k[0].(int64)]; ok {
					rows = append(rows, []any{k[0], v})
				}
			}
			return Scan(typedSource(t, mem, c.buildTypes, rows, 2)), nil
		}
		ps := typedSource(t, mem, c.probeTypes, c.probe, c.per)
		op := LookupJoin(Scan(ps), lookup, []int{0}, c.spec(), Options{Allocator: mem})
		got := drain(t, op, c.outTypes())
		require.NoError(t, op.Close())
		require.True(t, ps.closed)
		require.ElementsMatch(t, multiset(c.naiveWith(table)), multiset(got), "%s", kind)
		var keys []int64
		for _, k := range asked {
			require.Len(t, k, 1)
			keys = append(keys, k[0].(int64))
		}
		if kind == JoinInner {
			require.Equal(t, []int64{1, 2, 9, 3}, keys, "each distinct non-NULL key once, in probe order")
		}
		mem.AssertSize(t, 0)
	}
}

// naiveWith is the join of the case's probe rows with the table's rows.
func (c joinCase) naiveWith(table map[int64]string) [][]any {
	for k, v := range table {
		c.build = append(c.build, []any{k, v})
	}
	return c.naive()
}

func TestLookupJoinCloseBeforeNext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	types := []metadata.DataType{metadata.BigIntType()}
	ps := typedSource(t, mem, types, [][]any{{int64(1)}}, 1)
	spec := joinCase{kind: JoinInner, probeTypes: types, buildTypes: types, probeKeys: []int{0}, buildKeys: []int{0}}.spec()
	op := LookupJoin(Scan(ps), func(context.Context, [][]any) (Operator, error) {
		t.Fatal("no lookup before the first Next")
		return nil, nil
	}, []int{0}, spec, Options{Allocator: mem})
	require.NoError(t, op.Close())
	require.True(t, ps.closed)
	mem.AssertSize(t, 0)
}

func TestLookupJoinMemoryLimit(t *testing.T) {
	types := []metadata.DataType{metadata.BigIntType()}
	var rows [][]any
	for i := range 5000 {
		rows = append(rows, []any{int64(i)})
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ps := typedSource(t, mem, types, rows, 100)
	spec := joinCase{kind: JoinInner, probeTypes: types, buildTypes: types, probeKeys: []int{0}, buildKeys: []int{0}}.spec()
	op := LookupJoin(Scan(ps), func(context.Context, [][]any) (Operator, error) {
		t.Fatal("the limit stops the join before its lookup")
		return nil, nil
	}, []int{0}, spec, Options{Allocator: mem, MemoryLimit: 4096})
	_, err := op.Next(context.Background())
	require.ErrorIs(t, err, ErrMemoryLimit)
	require.ErrorContains(t, err, "JOIN")
	require.NoError(t, op.Close())
	mem.AssertSize(t, 0)
}
