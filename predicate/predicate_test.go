package predicate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// TestPredicate runs testdata/predicate. Command "eval": the first input
// line is a predicate, printed back by String; each following line is
// either "row col=v ..." (printed with Test's answer) or "stats rows=N
// min.col=v max.col=v nulls.col=n" (printed with MaybeTest's answer:
// "maybe" or "skip").
func TestPredicate(t *testing.T) {
	datadriven.RunTest(t, "testdata/predicate", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "eval":
			lines := strings.Split(d.Input, "\n")
			p, err := parsePredicate(testSchema, lines[0])
			if err != nil {
				return "error: " + err.Error()
			}
			var out strings.Builder
			fmt.Fprintln(&out, p.String())
			for _, line := range lines[1:] {
				fields := strings.Fields(line)
				if len(fields) == 0 {
					continue
				}
				switch fields[0] {
				case "row":
					row, err := parseRow(testSchema, fields[1:])
					require.NoError(t, err, line)
					fmt.Fprintf(&out, "%s: %t\n", line, predicate.Test(p, row))
				case "stats":
					s, err := parseStats(testSchema, fields[1:])
					require.NoError(t, err, line)
					verdict := "skip"
					if predicate.MaybeTest(p, s) {
						verdict = "maybe"
					}
					fmt.Fprintf(&out, "%s: %s\n", line, verdict)
				default:
					t.Fatalf("unknown line %q", line)
				}
			}
			return out.String()
		case "negate":
			p, err := parsePredicate(testSchema, d.Input)
			if err != nil {
				return "error: " + err.Error()
			}
			n, ok := predicate.Negate(p)
			if !ok {
				return "no negation"
			}
			return n.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// TestMaybeTestNeverSkipsAMatch checks MaybeTest against Test: for rows of
// a small domain and every predicate of a list, statistics built from the
// rows never answer "skip" while a row matches.
func TestMaybeTestNeverSkipsAMatch(t *testing.T) {
	preds := []string{
		"i = 3", "i <> 3", "i < 3", "i <= 3", "i > 3", "i >= 3", "i IS NULL", "i IS NOT NULL",
		"i IN (1, 5)", "i NOT IN (2, 3)", "i NOT IN (2, NULL)", "i = NULL",
		"s LIKE 'b%'", "s LIKE '%b'", "s LIKE '%b%'", "s = 'bb'",
		"NOT (i = 3)", "NOT (i IS NULL)", "NOT (s LIKE 'a%')", "NOT (i < 2 OR i > 4)",
		"i = 1 OR s LIKE 'c%'", "i > 1 AND s < 'b'", "NOT (NOT (i >= 4))",
	}
	ints := []any{nil, int64(1), int64(2), int64(3), int64(4), int64(5)}
	strs := []any{nil, "", "a", "ab", "b", "bb", "ba", "c"}
	// Every window of consecutive domain values (with and without a NULL)
	// is one set of rows.
	var sets [][]testRow
	for lo := 1; lo < len(ints); lo++ {
		for hi := lo; hi < len(ints); hi++ {
			for sLo := 1; sLo < len(strs); sLo += 2 {
				for _, withNull := range []bool{false, true} {
					var rows []testRow
					for k := lo; k <= hi; k++ {
						r := make(testRow, len(testSchema.Columns))
						r[0] = ints[k]
						r[2] = strs[min(sLo+k-lo, len(strs)-1)]
						rows = append(rows, r)
					}
					if withNull {
						rows = append(rows, make(testRow, len(testSchema.Columns)))
					}
					sets = append(sets, rows)
				}
			}
		}
	}
	for _, text := range preds {
		p, err := parsePredicate(testSchema, text)
		require.NoError(t, err, text)
		for _, rows := range sets {
			s := statsOf(rows)
			matched := false
			for _, r := range rows {
				matched = matched || predicate.Test(p, r)
			}
			if matched {
				require.True(t, predicate.MaybeTest(p, s), "%s skipped rows %v", text, rows)
			}
		}
	}
}

func statsOf(rows []testRow) *testStats {
	s := &testStats{rows: int64(len(rows)), min: map[int]any{}, max: map[int]any{}, nulls: map[int]int64{}}
	for c := range testSchema.Columns {
		s.nulls[c] = 0
		for _, r := range rows {
			v := r[c]
			if v == nil {
				s.nulls[c]++
				continue
			}
			if m, ok := s.min[c]; !ok || metadata.Compare(v, m) < 0 {
				s.min[c] = v
			}
			if m, ok := s.max[c]; !ok || metadata.Compare(v, m) > 0 {
				s.max[c] = v
			}
		}
	}
	return s
}

func TestAndOfAndConjuncts(t *testing.T) {
	a, err := parsePredicate(testSchema, "i = 1")
	require.NoError(t, err)
	b, err := parsePredicate(testSchema, "s = 'x' AND d > '2026-01-01'")
	require.NoError(t, err)
	require.Nil(t, predicate.AndOf(nil, nil))
	require.Same(t, a, predicate.AndOf(nil, a))
	both := predicate.AndOf(a, b)
	require.Equal(t, "i = 1 AND s = 'x' AND d > '2026-01-01'", both.String())
	require.Len(t, predicate.Conjuncts(both), 3)
	require.Equal(t, []int{0, 2, 3}, predicate.Columns(both))
	require.True(t, predicate.Test(nil, testRow{}))
	require.True(t, predicate.MaybeTest(nil, &testStats{}))
}

func TestFilterPartitionsTyped(t *testing.T) {
	table := &metadata.TableInfo{
		Path: metadata.TablePath{Database: "fluss", Table: "t"},
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "id", Type: metadata.BigIntType()},
			{Name: "p", Type: metadata.IntType()},
		}},
		PartitionKeys: []string{"p"},
	}
	parts := []metadata.PartitionInfo{
		{ID: 1, Name: "10", Values: []string{"10"}},
		{ID: 2, Name: "2", Values: []string{"2"}},
		{ID: 3, Name: "9", Values: []string{"9"}},
	}
	gt := &predicate.Leaf{Op: predicate.Gt, Column: 1, Name: "p", Type: metadata.IntType(), Literals: []any{int64(2)}}
	got, err := predicate.FilterPartitions(table, parts, gt)
	require.NoError(t, err)
	// Compared as strings, "10" > "2" would be false and "9" > "2" true.
	require.Equal(t, []metadata.PartitionInfo{parts[0], parts[2]}, got)

	all, err := predicate.FilterPartitions(table, parts, nil)
	require.NoError(t, err)
	require.Equal(t, parts, all)

	onData := &predicate.Leaf{Op: predicate.Eq, Column: 0, Name: "id", Type: metadata.BigIntType(), Literals: []any{int64(1)}}
	_, err = predicate.FilterPartitions(table, parts, onData)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.ErrorContains(t, err, "id, which is not a partition key")

	_, err = predicate.FilterPartitions(table, []metadata.PartitionInfo{{ID: 4, Name: "x", Values: []string{"x"}}}, gt)
	require.ErrorContains(t, err, `partition "x"`)
}
