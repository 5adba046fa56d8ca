package predicate_test

import (
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// fuzzSchema has one column of each type family statistics are kept for.
var fuzzSchema = []metadata.DataType{
	metadata.BigIntType(),
	metadata.DoubleType(),
	metadata.StringType(),
	metadata.TimestampType(9),
	metadata.DecimalType(10, 2),
	metadata.BooleanType(),
	metadata.BytesType(),
	metadata.DateType(),
	metadata.TinyIntType(),
}

// fuzzBound is how long a string or byte-string bound may be in the
// fuzzed statistics: short, so truncated bounds come up often.
const fuzzBound = 2

// FuzzMaybeTest checks the one promise of statistics: for random rows and
// a random predicate, MaybeTest never answers "absent" (false) for a set
// of rows holding a row that Test matches. The statistics are built the
// way the log writer builds them (min and max by metadata.Compare, exact
// null counts), with string bounds truncated and some statistics missing.
func FuzzMaybeTest(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		{7, 200, 13, 5, 99, 1, 0, 0, 4, 250, 31, 8, 2, 77, 3, 3, 3, 9, 9},
		{1, 2, 0, 2, 6, 6, 6, 1, 1, 1, 5, 0, 4, 4, 4, 4},
		[]byte("statistics never drop a matching row"),
		[]byte("\xff\xfe\x00\x01NaN-0+Inf"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		nrows := 1 + int(g.u8()%6)
		rows := make([]testRow, nrows)
		for i := range rows {
			rows[i] = make(testRow, len(fuzzSchema))
			for c := range fuzzSchema {
				if g.u8()%5 != 0 {
					rows[i][c] = g.value(c)
				}
			}
		}
		p := g.pred(0)
		s := fuzzStats(g, rows)
		matched := false
		for _, r := range rows {
			matched = matched || predicate.Test(p, r)
		}
		if matched {
			require.True(t, predicate.MaybeTest(p, s), "%s answered absent for rows %v (stats %+v)", p, rows, s)
		}
		_ = p.String() // printing never panics either
	})
}

// gen draws values from the fuzzer's bytes; it reads zeros once they run
// out, so every input is a valid case.
type gen struct{ b []byte }

func (g *gen) u8() byte {
	if len(g.b) == 0 {
		return 0
	}
	v := g.b[0]
	g.b = g.b[1:]
	return v
}

func (g *gen) pick(n int) int { return int(g.u8()) % n }

var (
	fuzzBase    = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fuzzSteps   = []time.Duration{0, time.Nanosecond, time.Microsecond, time.Millisecond, time.Second, -time.Nanosecond, 999 * time.Microsecond}
	fuzzStrings = []string{"", "a", "ab", "abc", "abd", "b", "ba", "\xff", "\xff\xff", "ab\xff", "a\x00"}
	fuzzFloats  = []float64{-1.5, math.Copysign(0, -1), 0, 1, 2.5, math.NaN(), math.Inf(1), math.Inf(-1), 127}
)

func dec(n int64, scale int32) metadata.DecimalValue {
	return metadata.DecimalValue{Num: decimal128.FromI64(n), Scale: scale}
}

// value draws a canonical value of column c's type, from a small domain
// so that rows and literals meet.
func (g *gen) value(c int) any {
	switch c {
	case 0:
		if g.u8()%16 == 0 {
			return []int64{math.MinInt64, math.MaxInt64}[g.pick(2)]
		}
		return int64(g.pick(9)) - 4
	case 1:
		return fuzzFloats[g.pick(len(fuzzFloats))]
	case 2:
		return fuzzStrings[g.pick(len(fuzzStrings))]
	case 3:
		t := fuzzBase
		for range g.pick(3) {
			t = t.Add(fuzzSteps[g.pick(len(fuzzSteps))])
		}
		return t
	case 4:
		return dec(int64(g.pick(11))*25-125, 2)
	case 5:
		return g.u8()%2 == 0
	case 6:
		return []byte(fuzzStrings[g.pick(len(fuzzStrings))])
	case 7:
		return metadata.DateValue(20455 + g.pick(5))
	case 8:
		return []int64{-128, -1, 0, 1, 44, 127}[g.pick(6)]
	}
	return nil
}

// literal draws a literal for column c: usually a value of its type, but
// also the wider exact forms pushdown keeps for literals a type cannot
// hold (300 for a TINYINT, 2.5 for an integer, a decimal of finer scale),
// numbers of the other forms, and NULL.
func (g *gen) literal(c int) any {
	switch g.pick(8) {
	case 0:
		return nil
	case 1:
		switch c {
		case 0, 1, 4, 8:
			return []any{int64(300), int64(-300), dec(25, 1), dec(1005, 3), 2.5, math.NaN(), math.Inf(-1), int64(math.MaxInt64)}[g.pick(8)]
		case 3:
			return fuzzBase.Add(time.Duration(g.pick(2000)) * time.Microsecond / 3)
		}
	}
	return g.value(c)
}

var leafOps = []predicate.Op{
	predicate.Eq, predicate.NotEq, predicate.Lt, predicate.LtEq, predicate.Gt, predicate.GtEq,
	predicate.IsNull, predicate.IsNotNull, predicate.In, predicate.NotIn,
	predicate.StartsWith, predicate.EndsWith, predicate.Contains,
}

// pred draws a predicate tree at most three levels deep.
func (g *gen) pred(depth int) predicate.P {
	k := g.pick(8)
	if depth >= 3 {
		k = 0
	}
	switch k {
	case 5:
		return &predicate.And{Children: []predicate.P{g.pred(depth + 1), g.pred(depth + 1)}}
	case 6:
		return &predicate.Or{Children: []predicate.P{g.pred(depth + 1), g.pred(depth + 1)}}
	case 7:
		return &predicate.Not{Child: g.pred(depth + 1)}
	}
	c := g.pick(len(fuzzSchema))
	l := &predicate.Leaf{Op: leafOps[g.pick(len(leafOps))], Column: c, Name: "c", Type: fuzzSchema[c]}
	switch l.Op {
	case predicate.IsNull, predicate.IsNotNull:
	case predicate.In, predicate.NotIn:
		for range g.pick(4) {
			l.Literals = append(l.Literals, g.literal(c))
		}
	case predicate.StartsWith, predicate.EndsWith, predicate.Contains:
		if c != 2 && c != 6 {
			l.Column, l.Type = 2, fuzzSchema[2]
		}
		l.Literals = []any{fuzzStrings[g.pick(len(fuzzStrings))]}
	default:
		l.Literals = []any{g.literal(c)}
	}
	return l
}

// fuzzStats builds the statistics of rows, then degrades them as real
// ones may be: string bounds truncated to fuzzBound bytes (min to a
// prefix, max to a prefix with its last byte raised, or unknown), and
// some columns without min and max or without any statistics.
func fuzzStats(g *gen, rows []testRow) *testStats {
	s := &testStats{rows: int64(len(rows)), min: map[int]any{}, max: map[int]any{}, nulls: map[int]int64{}}
	for c := range fuzzSchema {
		mode := g.pick(6)
		if mode == 0 {
			continue // no statistics for this column
		}
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
		if mode == 1 {
			delete(s.min, c)
			delete(s.max, c)
			continue
		}
		if lo, ok := s.min[c]; ok {
			s.min[c] = truncLower(lo)
		}
		if hi, ok := s.max[c]; ok {
			if b := truncUpper(hi); b != nil {
				s.max[c] = b
			} else {
				delete(s.max, c)
			}
		}
	}
	return s
}

func truncLower(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > fuzzBound {
			return x[:fuzzBound]
		}
	case []byte:
		if len(x) > fuzzBound {
			return x[:fuzzBound]
		}
	}
	return v
}

// truncUpper shortens a string bound to one at least as large; nil when
// there is none that short.
func truncUpper(v any) any {
	var b []byte
	switch x := v.(type) {
	case string:
		if len(x) <= fuzzBound {
			return v
		}
		b = []byte(x[:fuzzBound])
	case []byte:
		if len(x) <= fuzzBound {
			return v
		}
		b = append([]byte(nil), x[:fuzzBound]...)
	default:
		return v
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			if _, ok := v.(string); ok {
				return string(b[:i+1])
			}
			return b[:i+1]
		}
	}
	return nil
}
