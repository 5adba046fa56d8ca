package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// bigTable fills a table of n rows (id, k, s, x) with few distinct keys,
// so that sorting has many ties and grouping many rows per group.
func bigTable(t *testing.T, n int, seed uint64) memCatalog {
	cat := memCatalog{}
	require.NoError(t, cat.exec(t, "CREATE TABLE t (id BIGINT, k INT, s STRING, x DOUBLE)"))
	r := rand.New(rand.NewPCG(seed, 1))
	tbl := cat[metadata.TablePath{Database: "fluss", Table: "t"}]
	for i := range n {
		var k, s, x any
		if r.IntN(10) > 0 {
			k = int64(r.IntN(50))
		}
		if r.IntN(10) > 0 {
			s = fmt.Sprintf("s%03d", r.IntN(300))
		}
		if r.IntN(10) > 0 {
			x = float64(r.IntN(1000)) / 4
		}
		tbl.rows = append(tbl.rows, []any{int64(i), k, s, x})
	}
	return cat
}

// TestTopNMatchesSort checks the bounded heap, across its compactions,
// against a full stable sort: same rows, same order, ties in input order.
func TestTopNMatchesSort(t *testing.T) {
	cat := bigTable(t, 12_000, 7)
	for _, q := range []string{
		"SELECT id, k FROM t ORDER BY k DESC, s LIMIT %d",
		"SELECT id, s FROM t ORDER BY s LIMIT %d",
		"SELECT id FROM t ORDER BY x, k DESC LIMIT %d OFFSET 3",
		"SELECT id, x FROM t ORDER BY x DESC, id LIMIT %d",
		"SELECT id, k FROM t ORDER BY k, x DESC LIMIT %d",
	} {
		all := strings.Replace(strings.Replace(q, " OFFSET 3", "", 1), "LIMIT %d", "", 1)
		full, err := cat.runQuery(t, all, 4096, Options{Allocator: memory.NewGoAllocator()})
		require.NoError(t, err)
		fullLines := strings.Split(full, "\n")
		if strings.Contains(q, "OFFSET 3") {
			// The full sort has no OFFSET: drop its first three rows.
			fullLines = append(fullLines[:1], fullLines[4:]...)
		}
		// 1 and 700 compact the heap's batches several times; 5000 not.
		for _, n := range []int{1, 700, 5000} {
			top, err := cat.runQuery(t, fmt.Sprintf(q, n), 1000, Options{Allocator: memory.NewGoAllocator()})
			require.NoError(t, err)
			topLines := strings.Split(strings.TrimSuffix(top, "\n"), "\n")
			require.Len(t, topLines, n+1)
			require.Equal(t, fullLines[:len(topLines)], topLines, "query %q n=%d", q, n)
		}
	}
}

// TestAggregateMatchesNaive checks grouping on each key path (integer,
// string, several keys) against a map computed here.
func TestAggregateMatchesNaive(t *testing.T) {
	cat := bigTable(t, 10_000, 3)
	tbl := cat[metadata.TablePath{Database: "fluss", Table: "t"}]
	type acc struct {
		count, nx int64
		sum       float64
	}
	naive := func(key func(r []any) string) map[string]acc {
		m := map[string]acc{}
		for _, r := range tbl.rows {
			a := m[key(r)]
			a.count++
			if r[3] != nil {
				a.nx++
				a.sum += r[3].(float64)
			}
			m[key(r)] = a
		}
		return m
	}
	show := func(v any) string {
		if s, ok := v.(string); ok {
			return fmt.Sprintf("%q", s)
		}
		return metadata.FormatValue(metadata.DataType{}, v)
	}
	for _, tc := range []struct {
		groupBy string
		key     func(r []any) string
	}{
		{"k", func(r []any) string { return show(r[1]) }},
		{"s", func(r []any) string { return show(r[2]) }},
		{"k, s", func(r []any) string { return show(r[1]) + " | " + show(r[2]) }},
	} {
		out, err := cat.runQuery(t, "SELECT "+tc.groupBy+", COUNT(*), COUNT(x), SUM(x) FROM t GROUP BY "+tc.groupBy, 1000, Options{Allocator: memory.NewGoAllocator()})
		require.NoError(t, err)
		want := naive(tc.key)
		lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
		require.Len(t, lines, len(want), tc.groupBy)
		var got []string
		for _, l := range lines {
			got = append(got, l)
		}
		var exp []string
		for k, a := range want {
			sum := "NULL"
			if a.nx > 0 {
				sum = metadata.FormatValue(metadata.DoubleType(), a.sum)
			}
			exp = append(exp, fmt.Sprintf("%s | %d | %d | %s", k, a.count, a.nx, sum))
		}
		slices.Sort(got)
		slices.Sort(exp)
		require.Equal(t, exp, got, tc.groupBy)
	}
}

// TestBlockingOperatorsCancel checks that a cancelled context stops a
// sort and an aggregation between batches with ctx.Err().
func TestBlockingOperatorsCancel(t *testing.T) {
	cat := bigTable(t, 1000, 1)
	tbl := cat[metadata.TablePath{Database: "fluss", Table: "t"}]
	for _, build := range []func(Operator) Operator{
		func(in Operator) Operator {
			return Sort(in, []SortKey{{Col: 0}}, []metadata.DataType{metadata.BigIntType()}, Options{})
		},
		func(in Operator) Operator {
			op, err := Aggregate(in, nil, nil, NewLayout(4, []int{0}), Options{})
			require.NoError(t, err)
			return op
		},
	} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		src := &sliceSource{recs: tbl.records(t, mem, []int{0}, 10)}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		op := build(Scan(src))
		_, err := op.Next(ctx)
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, op.Close())
		mem.AssertSize(t, 0)
	}
}

func TestMemoryLimitError(t *testing.T) {
	err := error(&MemoryLimitError{Limit: 256 << 20, Op: "GROUP BY", Detail: count(1234567, "group")})
	require.Equal(t, "memory.limit of 256MiB exceeded by GROUP BY (1,234,567 groups); raise memory.limit in the DSN", err.Error())
	require.ErrorIs(t, err, ErrMemoryLimit)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.Equal(t, "1 group", count(1, "group"))
	require.Equal(t, "1536KiB", FormatBytes(1536<<10))
	require.Equal(t, "1GiB", FormatBytes(1<<30))
}
