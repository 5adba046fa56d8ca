package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// typedSource yields the rows as records of per rows each, of the given
// column types; it releases what it did not hand out on Close.
func typedSource(t testing.TB, mem memory.Allocator, types []metadata.DataType, rows [][]any, per int) *sliceSource {
	t.Helper()
	cols := make([]metadata.Column, len(types))
	for i, ty := range types {
		cols[i] = metadata.Column{Name: fmt.Sprintf("c%d", i), Type: ty}
	}
	schema := metadata.ArrowSchema(cols)
	src := &sliceSource{}
	for start := 0; start < len(rows); start += per {
		b := array.NewRecordBuilder(mem, schema)
		for _, r := range rows[start:min(start+per, len(rows))] {
			for i, v := range r {
				require.NoError(t, metadata.AppendValue(b.Field(i), types[i], v))
			}
		}
		src.recs = append(src.recs, b.NewRecordBatch())
		b.Release()
	}
	return src
}

// everyOther hides the odd rows of each batch of its input through a
// selection vector, so that operators are fed selections as a filter
// would give them.
type everyOther struct {
	in  Operator
	sel []int32
}

func (e *everyOther) Next(ctx context.Context) (Batch, error) {
	b, err := e.in.Next(ctx)
	if err != nil {
		return b, err
	}
	e.sel = e.sel[:0]
	for i := 0; i < b.NumRows(); i += 2 {
		e.sel = append(e.sel, int32(b.Row(i)))
	}
	return Batch{Rec: b.Rec, Sel: e.sel}, nil
}

func (e *everyOther) Close() error { return e.in.Close() }

// drain reads op to its end and returns its visible rows as values.
func drain(t testing.TB, op Operator, types []metadata.DataType) [][]any {
	t.Helper()
	var out [][]any
	for {
		b, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, len(types), int(b.Rec.NumCols()))
		for i := 0; i < b.NumRows(); i++ {
			r := b.Row(i)
			row := make([]any, len(types))
			for c := range types {
				row[c] = metadata.ValueAt(b.Rec.Column(c), types[c], r)
			}
			out = append(out, row)
		}
	}
	return out
}

func rowString(r []any) string {
	parts := make([]string, len(r))
	for i, v := range r {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}

// multiset renders rows sorted, to compare results whose order SQL leaves
// open.
func multiset(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowString(r)
	}
	slices.Sort(out)
	return out
}

func colRef(name string, i int, t metadata.DataType) *sqlplan.ColumnRef {
	return &sqlplan.ColumnRef{Name: name, Index: i, T: t}
}

func identity(n int) Layout {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return NewLayout(n, cols)
}

// joinCase is a join of two row sets, run through HashJoin.
type joinCase struct {
	kind                   JoinKind
	probeTypes, buildTypes []metadata.DataType
	probe, build           [][]any
	probeKeys, buildKeys   []int // columns
	nullSafe               []bool
	residual               []sqlplan.Expr // over probe columns then build columns
	per                    int
	hide                   bool // feed both sides through a selection vector
	opts                   Options
	probeOut, buildOut     []int // the columns yielded (JoinSpec.ProbeOut, BuildOut)
}

func (c joinCase) spec() JoinSpec {
	s := JoinSpec{Kind: c.kind, NullSafe: c.nullSafe,
		ProbeLayout: identity(len(c.probeTypes)), BuildLayout: identity(len(c.buildTypes)),
		ProbeTypes: c.probeTypes, BuildTypes: c.buildTypes, Residual: c.residual,
		ResidualLayout: identity(len(c.probeTypes) + len(c.buildTypes)),
		ProbeOut:       c.probeOut, BuildOut: c.buildOut}
	for _, k := range c.probeKeys {
		s.ProbeKeys = append(s.ProbeKeys, colRef(fmt.Sprintf("p%d", k), k, c.probeTypes[k]))
	}
	for _, k := range c.buildKeys {
		s.BuildKeys = append(s.BuildKeys, colRef(fmt.Sprintf("b%d", k), k, c.buildTypes[k]))
	}
	return s
}

func (c joinCase) outTypes() []metadata.DataType {
	if c.probeOut != nil || c.buildOut != nil {
		var out []metadata.DataType
		for _, i := range c.probeOut {
			out = append(out, c.probeTypes[i])
		}
		for _, i := range c.buildOut {
			out = append(out, c.buildTypes[i])
		}
		return out
	}
	if c.kind == JoinInner || c.kind == JoinLeft {
		return append(slices.Clone(c.probeTypes), c.buildTypes...)
	}
	return c.probeTypes
}

// run joins the case and returns its rows, checking that every Arrow
// buffer is released and both inputs are closed.
func (c joinCase) run(t testing.TB) [][]any {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	per := c.per
	if per == 0 {
		per = 3
	}
	ps, bs := typedSource(t, mem, c.probeTypes, c.probe, per), typedSource(t, mem, c.buildTypes, c.build, per)
	var probe, build Operator = Scan(ps), Scan(bs)
	if c.hide {
		probe, build = &everyOther{in: probe}, &everyOther{in: build}
	}
	opts := c.opts
	opts.Allocator = mem
	op, err := HashJoin(probe, build, c.spec(), opts)
	require.NoError(t, err)
	rows := drain(t, op, c.outTypes())
	require.NoError(t, op.Close())
	require.True(t, ps.closed)
	require.True(t, bs.closed)
	return rows
}

// visibleRows is what a side holds after everyOther when hide is set.
func visibleRows(rows [][]any, per int, hide bool) [][]any {
	if !hide {
		return rows
	}
	var out [][]any
	for start := 0; start < len(rows); start += per {
		for i := start; i < min(start+per, len(rows)); i += 2 {
			out = append(out, rows[i])
		}
	}
	return out
}

// naive is the join by its definition, pair by pair.
func (c joinCase) naive() [][]any {
	per := c.per
	if per == 0 {
		per = 3
	}
	probe, build := visibleRows(c.probe, per, c.hide), visibleRows(c.build, per, c.hide)
	resid := func(p, b []any) bool {
		for _, e := range c.residual {
			if evalRow(e, append(slices.Clone(p), b...)) != triTrue {
				return false
			}
		}
		return true
	}
	keysMatch := func(p, b []any) bool {
		for i := range c.probeKeys {
			x, y := p[c.probeKeys[i]], b[c.buildKeys[i]]
			if x == nil || y == nil {
				if i < len(c.nullSafe) && c.nullSafe[i] && x == nil && y == nil {
					continue
				}
				return false
			}
			if sqlCompare(x, y) != 0 {
				return false
			}
		}
		return true
	}
	var out [][]any
	for _, p := range probe {
		matched := false
		switch c.kind {
		case JoinAntiNullAware:
			emit := true
			any := false
			for _, b := range build {
				if !resid(p, b) {
					continue
				}
				any = true
				x, y := p[c.probeKeys[0]], b[c.buildKeys[0]]
				if x == nil || y == nil || sqlCompare(x, y) == 0 {
					emit = false
				}
			}
			if !any || emit {
				out = append(out, p)
			}
			continue
		}
		for _, b := range build {
			if keysMatch(p, b) && resid(p, b) {
				matched = true
				if c.kind == JoinInner || c.kind == JoinLeft {
					out = append(out, append(slices.Clone(p), b...))
				}
			}
		}
		switch {
		case c.kind == JoinLeft && !matched:
			row := slices.Clone(p)
			for range c.buildTypes {
				row = append(row, nil)
			}
			out = append(out, row)
		case c.kind == JoinSemi && matched, c.kind == JoinAnti && !matched:
			out = append(out, p)
		}
	}
	return out
}

// evalRow evaluates a condition over one row of canonical values, for the
// reference joins.
func evalRow(e sqlplan.Expr, row []any) tri {
	mem := memory.NewGoAllocator()
	types := make([]metadata.DataType, len(row))
	cols := make([]metadata.Column, len(row))
	collectTypes(e, types)
	for i := range types {
		if types[i].Root == 0 {
			types[i] = metadata.BigIntType()
		}
		cols[i] = metadata.Column{Name: fmt.Sprint(i), Type: types[i]}
	}
	b := array.NewRecordBuilder(mem, metadata.ArrowSchema(cols))
	defer b.Release()
	for i, v := range row {
		if types[i].Root == metadata.BigInt {
			if _, ok := v.(int64); !ok {
				v = nil
			}
		}
		if err := metadata.AppendValue(b.Field(i), types[i], v); err != nil {
			b.Field(i).AppendNull()
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := compileBool(e, &env{layout: identity(len(row))})
	if err != nil {
		panic(err)
	}
	return f(rec)(0)
}

func collectTypes(e sqlplan.Expr, types []metadata.DataType) {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		types[x.Index] = x.T
	case *sqlplan.Compare:
		collectTypes(x.L, types)
		collectTypes(x.R, types)
	case *sqlplan.IsNull:
		collectTypes(x.E, types)
	case *sqlplan.Or:
		collectTypes(x.L, types)
		collectTypes(x.R, types)
	}
}

var (
	bigint = metadata.BigIntType()
	intT   = metadata.IntType()
	str    = metadata.StringType()
)

func TestHashJoinKinds(t *testing.T) {
	probe := [][]any{
		{int64(1), "a"}, {int64(2), "b"}, {nil, "c"}, {int64(2), "d"}, {int64(4), "e"}, {int64(5), "f"},
	}
	build := [][]any{
		{int64(2), "x"}, {int64(1), "y"}, {int64(2), "z"}, {nil, "n"}, {int64(3), "w"},
	}
	for _, kind := range []JoinKind{JoinInner, JoinLeft, JoinSemi, JoinAnti} {
		t.Run(kind.String(), func(t *testing.T) {
			c := joinCase{kind: kind, probeTypes: []metadata.DataType{bigint, str}, buildTypes: []metadata.DataType{intT, str},
				probe: probe, build: build, probeKeys: []int{0}, buildKeys: []int{0}}
			got := multiset(c.run(t))
			require.Equal(t, multiset(c.naive()), got)
			want := map[JoinKind][]string{
				JoinInner: {"1|a|1|y", "2|b|2|x", "2|b|2|z", "2|d|2|x", "2|d|2|z"},
				JoinLeft:  {"1|a|1|y", "2|b|2|x", "2|b|2|z", "2|d|2|x", "2|d|2|z", "4|e|NULL|NULL", "5|f|NULL|NULL", "NULL|c|NULL|NULL"},
				JoinSemi:  {"1|a", "2|b", "2|d"},
				JoinAnti:  {"4|e", "5|f", "NULL|c"},
			}[kind]
			require.Equal(t, want, got)
		})
	}
}

func TestHashJoinNullAwareAnti(t *testing.T) {
	types := []metadata.DataType{bigint}
	cases := []struct {
		name         string
		probe, build [][]any
		want         []string
	}{
		{"no null", [][]any{{int64(1)}, {int64(2)}, {nil}}, [][]any{{int64(2)}, {int64(3)}}, []string{"1"}},
		{"null on the build side", [][]any{{int64(1)}, {int64(2)}, {nil}}, [][]any{{int64(2)}, {nil}}, nil},
		{"empty build side", [][]any{{int64(1)}, {nil}}, nil, []string{"1", "NULL"}},
		{"only nulls built", [][]any{{int64(1)}}, [][]any{{nil}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := joinCase{kind: JoinAntiNullAware, probeTypes: types, buildTypes: types, probe: tc.probe, build: tc.build,
				probeKeys: []int{0}, buildKeys: []int{0}}
			got := multiset(c.run(t))
			require.Equal(t, multiset(c.naive()), got)
			if tc.want == nil {
				tc.want = []string{}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestHashJoinNullSafe(t *testing.T) {
	for _, ty := range []metadata.DataType{bigint, str} {
		v := func(i int64) any {
			if ty.Root == metadata.String {
				return fmt.Sprint(i)
			}
			return i
		}
		c := joinCase{kind: JoinInner, probeTypes: []metadata.DataType{ty}, buildTypes: []metadata.DataType{ty},
			probe: [][]any{{v(1)}, {nil}, {v(2)}}, build: [][]any{{nil}, {v(1)}, {nil}},
			probeKeys: []int{0}, buildKeys: []int{0}, nullSafe: []bool{true}}
		got := multiset(c.run(t))
		require.Equal(t, []string{"1|1", "NULL|NULL", "NULL|NULL"}, got, ty.String())
		c.nullSafe = []bool{false}
		require.Equal(t, []string{"1|1"}, multiset(c.run(t)), ty.String())
	}
}

// Keys of different types match when = holds between their values, as
// the equality the join stands for would say.
func TestHashJoinMixedKeyTypes(t *testing.T) {
	dec := func(s string) metadata.DecimalValue {
		d, err := metadata.ParseDecimal(s, 20, len(s)-strings.IndexByte(s, '.')-1)
		require.NoError(t, err)
		return d
	}
	cases := []struct {
		name           string
		pType, bType   metadata.DataType
		probe, build   []any
		wantPairs      []string
		multiKeyString bool
	}{
		{"int with bigint", metadata.IntType(), bigint, []any{int64(1), int64(-7), nil}, []any{int64(-7), int64(1), int64(1) << 40}, []string{"-7|-7", "1|1"}, false},
		{"tinyint with smallint", metadata.TinyIntType(), metadata.SmallIntType(), []any{int64(5)}, []any{int64(5), int64(6)}, []string{"5|5"}, false},
		{"int with decimal", bigint, metadata.DecimalType(10, 2), []any{int64(3), int64(4)}, []any{dec("3.00"), dec("4.50")}, []string{"3|3.00"}, false},
		{"decimal scales", metadata.DecimalType(10, 1), metadata.DecimalType(12, 3), []any{dec("1.5"), dec("2.0")}, []any{dec("1.500"), dec("2.001")}, []string{"1.5|1.500"}, false},
		{"int with double", bigint, metadata.DoubleType(), []any{int64(2), int64(3)}, []any{float64(2), 3.5}, []string{"2|2"}, false},
		{"decimal with double", metadata.DecimalType(5, 2), metadata.DoubleType(), []any{dec("0.50"), dec("0.10")}, []any{0.5, 0.1}, []string{"0.50|0.5"}, false},
		{"string with number", str, bigint, []any{"12", "x"}, []any{int64(12), int64(0)}, []string{"12|12", "x|0"}, false},
		{"strings", metadata.CharType(3), str, []any{"abc", "ab"}, []any{"abc", "abd"}, []string{"abc|abc"}, false},
		{"dates", metadata.DateType(), metadata.DateType(), []any{metadata.DateValue(10), metadata.DateValue(11)}, []any{metadata.DateValue(11)}, []string{"1970-01-12|1970-01-12"}, false},
		{"timestamps of two precisions", metadata.TimestampType(3), metadata.TimestampType(6),
			[]any{time.UnixMilli(1500).UTC(), time.UnixMilli(2500).UTC()}, []any{time.UnixMicro(1500000).UTC(), time.UnixMicro(2500001).UTC()},
			[]string{"1970-01-01 00:00:01.500|1970-01-01 00:00:01.500000"}, false},
		{"decimal key", metadata.DecimalType(10, 2), metadata.DecimalType(10, 2), []any{dec("1.25"), nil}, []any{dec("1.25"), nil}, []string{"1.25|1.25"}, false},
		{"fixed and variable binary", metadata.BinaryType(2), metadata.BytesType(), []any{[]byte("ab"), []byte("cd")}, []any{[]byte("ab"), []byte("abc")}, []string{"6162|6162"}, false},
		{"times of two precisions", metadata.TimeType(0), metadata.TimeType(6), []any{metadata.TimeValue(3600e9), metadata.TimeValue(7200e9)}, []any{metadata.TimeValue(3600e9), metadata.TimeValue(3600e9 + 1000)}, []string{"01:00:00|01:00:00.000000"}, false},
		{"two keys", bigint, str, []any{int64(1), int64(2)}, []any{"1", "2"}, []string{"1|1", "2|2"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := joinCase{kind: JoinInner, probeTypes: []metadata.DataType{tc.pType}, buildTypes: []metadata.DataType{tc.bType},
				probeKeys: []int{0}, buildKeys: []int{0}}
			for _, v := range tc.probe {
				c.probe = append(c.probe, []any{v})
			}
			for _, v := range tc.build {
				c.build = append(c.build, []any{v})
			}
			if tc.multiKeyString {
				// The same column twice: a two-key join goes through the
				// encoded keys.
				c.probeKeys, c.buildKeys = []int{0, 0}, []int{0, 0}
			}
			got := c.run(t)
			strs := make([]string, len(got))
			for i, r := range got {
				strs[i] = metadata.FormatValue(tc.pType, r[0]) + "|" + metadata.FormatValue(tc.bType, r[1])
			}
			slices.Sort(strs)
			require.Equal(t, multiset(c.naive()), multiset(got))
			require.Equal(t, tc.wantPairs, strs)
		})
	}
}

func TestHashJoinIncomparableKeys(t *testing.T) {
	c := joinCase{kind: JoinInner, probeTypes: []metadata.DataType{bigint}, buildTypes: []metadata.DataType{metadata.DateType()},
		probeKeys: []int{0}, buildKeys: []int{0}}
	_, err := HashJoin(Scan(&sliceSource{}), Scan(&sliceSource{}), c.spec(), Options{})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.ErrorContains(t, err, "cannot compare")

	s := c.spec()
	s.Kind = 0
	_, err = HashJoin(Scan(&sliceSource{}), Scan(&sliceSource{}), s, Options{})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)

	na := joinCase{kind: JoinAntiNullAware, probeTypes: []metadata.DataType{bigint, bigint}, buildTypes: []metadata.DataType{bigint, bigint},
		probeKeys: []int{0, 1}, buildKeys: []int{0, 1}}
	_, err = HashJoin(Scan(&sliceSource{}), Scan(&sliceSource{}), na.spec(), Options{})
	require.ErrorContains(t, err, "one key")
}

// The input records must hold the columns the spec names.
func TestHashJoinChecksInputTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := joinCase{kind: JoinInner, probeTypes: []metadata.DataType{bigint}, buildTypes: []metadata.DataType{bigint},
		probeKeys: []int{0}, buildKeys: []int{0}}
	build := typedSource(t, mem, []metadata.DataType{str}, [][]any{{"x"}}, 1)
	op, err := HashJoin(Scan(&sliceSource{}), Scan(build), c.spec(), Options{Allocator: mem})
	require.NoError(t, err)
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "join build input column 0 is utf8, not int64")
	require.NoError(t, op.Close())
}

func TestHashJoinResidual(t *testing.T) {
	// ON p.k = b.k AND p.v < b.v, where NULL values make the residual NULL.
	types := []metadata.DataType{bigint, bigint}
	probe := [][]any{{int64(1), int64(5)}, {int64(1), nil}, {int64(2), int64(1)}, {int64(3), int64(0)}, {nil, int64(0)}}
	build := [][]any{{int64(1), int64(6)}, {int64(1), int64(4)}, {int64(2), int64(1)}, {int64(3), nil}, {int64(3), int64(9)}}
	resid := []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpLt, L: colRef("p.v", 1, bigint), R: colRef("b.v", 3, bigint)}}
	for _, kind := range []JoinKind{JoinInner, JoinLeft, JoinSemi, JoinAnti, JoinAntiNullAware} {
		for _, keys := range [][]int{{0}, nil} {
			c := joinCase{kind: kind, probeTypes: types, buildTypes: types, probe: probe, build: build,
				probeKeys: keys, buildKeys: keys, residual: resid}
			if kind == JoinAntiNullAware && keys == nil {
				continue
			}
			name := fmt.Sprintf("%s keys=%d", kind, len(keys))
			require.Equal(t, multiset(c.naive()), multiset(c.run(t)), name)
		}
	}
	// The unique-key path: every build key once.
	unique := [][]any{{int64(1), int64(6)}, {int64(2), int64(1)}, {int64(3), nil}}
	for _, kind := range []JoinKind{JoinInner, JoinLeft, JoinSemi, JoinAnti} {
		c := joinCase{kind: kind, probeTypes: types, buildTypes: types, probe: probe, build: unique,
			probeKeys: []int{0}, buildKeys: []int{0}, residual: resid}
		require.Equal(t, multiset(c.naive()), multiset(c.run(t)), kind.String())
	}
	c := joinCase{kind: JoinLeft, probeTypes: types, buildTypes: types, probe: probe, build: unique,
		probeKeys: []int{0}, buildKeys: []int{0}, residual: resid}
	require.Equal(t, []string{"1|5|1|6", "1|NULL|NULL|NULL", "2|1|NULL|NULL", "3|0|NULL|NULL", "NULL|0|NULL|NULL"}, multiset(c.run(t)))
}

// Random joins agree with the pair-by-pair definition, for every kind,
// with and without a residual, selections and batch sizes.
func TestHashJoinMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	types := []metadata.DataType{bigint, bigint}
	gen := func(n, keys int, nulls bool) [][]any {
		rows := make([][]any, n)
		for i := range rows {
			var k any = int64(rng.IntN(keys))
			if nulls && rng.IntN(6) == 0 {
				k = nil
			}
			var v any = int64(rng.IntN(10))
			if rng.IntN(8) == 0 {
				v = nil
			}
			rows[i] = []any{k, v}
		}
		return rows
	}
	resid := []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpLt, L: colRef("p.v", 1, bigint), R: colRef("b.v", 3, bigint)}}
	orResid := []sqlplan.Expr{&sqlplan.Or{
		L: &sqlplan.Compare{Op: sqlplan.OpGtEq, L: colRef("p.v", 1, bigint), R: colRef("b.v", 3, bigint)},
		R: &sqlplan.IsNull{E: colRef("b.v", 3, bigint)}}}
	// A conjunct of literal comparisons runs through the selection kernels.
	litResid := []sqlplan.Expr{
		&sqlplan.Compare{Op: sqlplan.OpGt, L: colRef("b.v", 3, bigint), R: lit(int64(2), bigint)},
		&sqlplan.Compare{Op: sqlplan.OpNotEq, L: colRef("p.v", 1, bigint), R: lit(int64(5), bigint)}}
	for iter := 0; iter < 200; iter++ {
		kind := []JoinKind{JoinInner, JoinLeft, JoinSemi, JoinAnti, JoinAntiNullAware}[iter%5]
		keyRange := 1 + rng.IntN(12)
		c := joinCase{kind: kind, probeTypes: types, buildTypes: types,
			probe: gen(rng.IntN(40), keyRange, true), build: gen(rng.IntN(30), keyRange, rng.IntN(3) == 0),
			probeKeys: []int{0}, buildKeys: []int{0}, per: 1 + rng.IntN(7), hide: rng.IntN(3) == 0}
		switch rng.IntN(4) {
		case 1:
			c.residual = resid
		case 2:
			c.residual = orResid
		case 3:
			c.residual = litResid
		}
		if kind != JoinAntiNullAware && rng.IntN(5) == 0 {
			c.probeKeys, c.buildKeys = nil, nil
		}
		if kind != JoinAntiNullAware && rng.IntN(4) == 0 && c.probeKeys != nil {
			// Both columns as keys: the encoded-key path.
			c.probeKeys, c.buildKeys = []int{0, 1}, []int{0, 1}
			c.nullSafe = []bool{rng.IntN(2) == 0, false}
		}
		name := fmt.Sprintf("iter %d: %s keys=%v nullsafe=%v resid=%d per=%d hide=%v", iter, kind, c.probeKeys, c.nullSafe, len(c.residual), c.per, c.hide)
		require.Equal(t, multiset(c.naive()), multiset(c.run(t)), name)
	}
}

// A join told to yield some columns of each side (ProbeOut, BuildOut)
// yields the rows of the whole join with just those columns, through the
// aligned, the compact and the pair-by-pair outputs alike; a subset with
// a residual or of a semi-join is refused.
func TestHashJoinYieldsChosenColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	types := []metadata.DataType{bigint, bigint, metadata.StringType()}
	gen := func(n, keys int, unique bool) [][]any {
		rows := make([][]any, n)
		for i := range rows {
			var k any = int64(rng.IntN(keys))
			if unique {
				k = int64(i)
			} else if rng.IntN(6) == 0 {
				k = nil
			}
			rows[i] = []any{k, int64(rng.IntN(10)), fmt.Sprintf("s%d", rng.IntN(5))}
		}
		return rows
	}
	subset := func() []int {
		var out []int
		for c := range types {
			if rng.IntN(2) == 0 {
				out = append(out, c)
			}
		}
		if out == nil {
			out = []int{}
		}
		return out
	}
	for iter := 0; iter < 150; iter++ {
		kind := []JoinKind{JoinInner, JoinLeft}[iter%2]
		c := joinCase{kind: kind, probeTypes: types, buildTypes: types,
			probe: gen(rng.IntN(60), 1+rng.IntN(20), false), build: gen(rng.IntN(30), 1+rng.IntN(20), iter%3 == 0),
			probeKeys: []int{0}, buildKeys: []int{0}, per: 1 + rng.IntN(9), hide: rng.IntN(3) == 0,
			probeOut: subset(), buildOut: subset()}
		if rng.IntN(5) == 0 {
			c.probeKeys, c.buildKeys = nil, nil
		}
		if len(c.probeOut)+len(c.buildOut) == 0 {
			c.buildOut = []int{2}
		}
		whole := c
		whole.probeOut, whole.buildOut = nil, nil
		var want [][]any
		for _, r := range whole.naive() {
			var row []any
			for _, i := range c.probeOut {
				row = append(row, r[i])
			}
			for _, i := range c.buildOut {
				row = append(row, r[len(types)+i])
			}
			want = append(want, row)
		}
		name := fmt.Sprintf("iter %d: %s probeOut=%v buildOut=%v per=%d hide=%v", iter, kind, c.probeOut, c.buildOut, c.per, c.hide)
		require.Equal(t, multiset(want), multiset(c.run(t)), name)
	}
	refused := func(c joinCase) {
		_, err := HashJoin(Scan(typedSource(t, memory.NewGoAllocator(), types, nil, 1)),
			Scan(typedSource(t, memory.NewGoAllocator(), types, nil, 1)), c.spec(), Options{})
		require.ErrorIs(t, err, metadata.ErrInvalidValue)
	}
	refused(joinCase{kind: JoinSemi, probeTypes: types, buildTypes: types, probeKeys: []int{0}, buildKeys: []int{0}, probeOut: []int{1}})
	refused(joinCase{kind: JoinInner, probeTypes: types, buildTypes: types, probeKeys: []int{0}, buildKeys: []int{0}, probeOut: []int{1},
		residual: []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpLt, L: colRef("p.v", 1, bigint), R: colRef("b.v", 4, bigint)}}})
	refused(joinCase{kind: JoinInner, probeTypes: types, buildTypes: types, probeKeys: []int{0}, buildKeys: []int{0}, buildOut: []int{3}})
}

// Integer keys above the range a group table holds flat (and negative
// ones, and keys too sparse to hold flat) join as small ones do; a
// selective inner join yields its matching rows compacted.
func TestHashJoinLargeKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	types := []metadata.DataType{bigint, bigint}
	resid := []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpLt, L: colRef("p.v", 1, bigint), R: colRef("b.v", 3, bigint)}}
	for _, base := range []int64{0, 65_600, 70_000, 1 << 20, -50, 1 << 40} {
		for _, step := range []int64{1, 3, 1000} {
			var build, probe [][]any
			for i := range int64(300) {
				build = append(build, []any{base + i*step, int64(rng.IntN(10))})
			}
			for range 2000 {
				var k any = base + rng.Int64N(3000)*step
				if rng.IntN(30) == 0 {
					k = nil
				}
				probe = append(probe, []any{k, int64(rng.IntN(10))})
			}
			for _, kind := range []JoinKind{JoinInner, JoinLeft, JoinSemi, JoinAnti} {
				for _, r := range [][]sqlplan.Expr{nil, resid} {
					c := joinCase{kind: kind, probeTypes: types, buildTypes: types, probe: probe, build: build,
						probeKeys: []int{0}, buildKeys: []int{0}, per: 256, residual: r}
					name := fmt.Sprintf("base=%d step=%d %s resid=%d", base, step, kind, len(r))
					require.Equal(t, multiset(c.naive()), multiset(c.run(t)), name)
				}
			}
		}
	}
}

// One probe row matching many build rows streams in bounded batches.
func TestHashJoinCrossJoinStreams(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 3000
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i)}
	}
	types := []metadata.DataType{bigint}
	probe, build := typedSource(t, mem, types, rows, 1024), typedSource(t, mem, types, rows, 1024)
	op, err := HashJoin(Scan(probe), Scan(build), JoinSpec{Kind: JoinInner, ProbeLayout: identity(1), BuildLayout: identity(1),
		ProbeTypes: types, BuildTypes: types}, Options{Allocator: mem})
	require.NoError(t, err)
	var total, sum int64
	for {
		b, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.LessOrEqual(t, b.NumRows(), outBatchRows)
		total += int64(b.NumRows())
		l, r := b.Rec.Column(0).(*array.Int64), b.Rec.Column(1).(*array.Int64)
		for i := 0; i < b.NumRows(); i++ {
			sum += l.Value(b.Row(i)) - r.Value(b.Row(i))
		}
	}
	require.Equal(t, int64(n*n), total)
	require.Zero(t, sum) // every pair once: the differences cancel out
	require.NoError(t, op.Close())
}

func TestHashJoinMemoryLimit(t *testing.T) {
	rows := make([][]any, 5000)
	for i := range rows {
		rows[i] = []any{int64(i), strings.Repeat("x", 50)}
	}
	types := []metadata.DataType{bigint, str}
	c := joinCase{kind: JoinInner, probeTypes: types, buildTypes: types, probe: rows[:10], build: rows,
		probeKeys: []int{0}, buildKeys: []int{0}, per: 500, opts: Options{MemoryLimit: 64 << 10}}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	probe, build := typedSource(t, mem, types, c.probe, 500), typedSource(t, mem, types, c.build, 500)
	op, err := HashJoin(Scan(probe), Scan(build), c.spec(), Options{Allocator: mem, MemoryLimit: 64 << 10})
	require.NoError(t, err)
	_, err = op.Next(context.Background())
	var mle *MemoryLimitError
	require.ErrorAs(t, err, &mle)
	require.ErrorIs(t, err, ErrMemoryLimit)
	require.Equal(t, "JOIN", mle.Op)
	require.Contains(t, err.Error(), "memory.limit of 64KiB exceeded by JOIN (")
	require.Contains(t, err.Error(), "build rows")
	// The error stays: a second Next does not retry.
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, ErrMemoryLimit)
	require.NoError(t, op.Close())
	require.True(t, probe.closed)
	require.True(t, build.closed)

	c.opts.MemoryLimit = 16 << 20
	require.Len(t, c.run(t), 10)
}

func TestHashJoinCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := make([][]any, 100)
	for i := range rows {
		rows[i] = []any{int64(i)}
	}
	types := []metadata.DataType{bigint}
	probe, build := typedSource(t, mem, types, rows, 10), typedSource(t, mem, types, rows, 10)
	op, err := HashJoin(Scan(probe), Scan(build), JoinSpec{Kind: JoinInner, ProbeLayout: identity(1), BuildLayout: identity(1),
		ProbeTypes: types, BuildTypes: types, ProbeKeys: []sqlplan.Expr{colRef("k", 0, bigint)}, BuildKeys: []sqlplan.Expr{colRef("k", 0, bigint)}},
		Options{Allocator: mem})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	b, err := op.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, 10, b.NumRows())
	cancel()
	_, err = op.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, op.Close())
	require.NoError(t, op.Close()) // idempotent

	// Cancelled while the build side is read.
	probe, build = typedSource(t, mem, types, rows, 10), typedSource(t, mem, types, rows, 10)
	op, err = HashJoin(Scan(probe), Scan(build), JoinSpec{Kind: JoinLeft, ProbeLayout: identity(1), BuildLayout: identity(1),
		ProbeTypes: types, BuildTypes: types}, Options{Allocator: mem})
	require.NoError(t, err)
	_, err = op.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, op.Close())
}

// An inner join against an empty build side does not read its probe side.
func TestHashJoinEmptyBuildSkipsProbe(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []metadata.DataType{bigint}
	cnt := &countingSource{}
	op, err := HashJoin(Scan(cnt), Scan(&sliceSource{}), JoinSpec{Kind: JoinInner, ProbeLayout: identity(1), BuildLayout: identity(1),
		ProbeTypes: types, BuildTypes: types}, Options{Allocator: mem})
	require.NoError(t, err)
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
	require.Zero(t, cnt.pulled)
	require.NoError(t, op.Close())

	for _, kind := range []JoinKind{JoinLeft, JoinAnti, JoinAntiNullAware} {
		c := joinCase{kind: kind, probeTypes: types, buildTypes: types, probe: [][]any{{int64(1)}, {nil}},
			probeKeys: []int{0}, buildKeys: []int{0}}
		require.Len(t, c.run(t), 2, kind.String())
	}
}

// Every column type survives the gathering into the joined record.
func TestHashJoinGathersEveryType(t *testing.T) {
	dec, err := metadata.ParseDecimal("12.345", 10, 3)
	require.NoError(t, err)
	types := []metadata.DataType{bigint, metadata.BooleanType(), metadata.TinyIntType(), metadata.SmallIntType(), metadata.IntType(),
		metadata.FloatType(), metadata.DoubleType(), metadata.DecimalType(10, 3), metadata.StringType(), metadata.BytesType(),
		metadata.DateType(), metadata.TimeType(3), metadata.TimestampType(6), metadata.ArrayType(metadata.IntType())}
	row := []any{int64(1), true, int64(-3), int64(300), int64(70000), 1.5, 2.25, dec, "text", []byte{1, 2},
		metadata.DateValue(19000), metadata.TimeValue(3600e9), time.UnixMicro(1700000000123456).UTC(), []any{int64(1), nil}}
	nulls := make([]any, len(row))
	nulls[0] = int64(1)
	other := slices.Clone(row)
	other[0] = int64(2)
	for _, kind := range []JoinKind{JoinInner, JoinLeft} {
		for _, build := range [][][]any{{row}, {row, nulls}} {
			c := joinCase{kind: kind, probeTypes: types, buildTypes: types, probe: [][]any{row, nulls, other}, build: build,
				probeKeys: []int{0}, buildKeys: []int{0}}
			got := c.run(t)
			require.Equal(t, multiset(c.naive()), multiset(got))
		}
	}
}

// reuseSource hands out prepared records without taking them over, so a
// benchmark builds its input once.
type reuseSource struct {
	recs []arrow.RecordBatch
	next int
}

func (s *reuseSource) Next(context.Context) (arrow.RecordBatch, error) {
	if s.next >= len(s.recs) {
		return nil, io.EOF
	}
	s.next++
	return s.recs[s.next-1], nil
}

func (s *reuseSource) Close() error { return nil }

func intRecords(b *testing.B, n, per int, key func(i int) int64) []arrow.RecordBatch {
	types := []metadata.DataType{bigint, bigint}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{key(i), int64(i)}
	}
	src := typedSource(b, memory.DefaultAllocator, types, rows, per)
	return src.recs
}

// BenchmarkHashJoin probes 1M rows against 100k unique keys (a fact table
// against a dimension), and against 100k keys of ten rows each.
func BenchmarkHashJoin(b *testing.B) {
	const probeRows, buildRows = 1_000_000, 100_000
	types := []metadata.DataType{bigint, bigint}
	probe := intRecords(b, probeRows, 8192, func(i int) int64 { return int64((i * 7919) % (2 * buildRows)) })
	for _, bc := range []struct {
		name string
		key  func(i int) int64
		kind JoinKind
	}{
		{"inner/unique", func(i int) int64 { return int64(i) * 2 }, JoinInner},
		{"inner/dense", func(i int) int64 { return int64(i) % 50_000 }, JoinInner},
		{"semi/unique", func(i int) int64 { return int64(i) * 2 }, JoinSemi},
		{"left/unique", func(i int) int64 { return int64(i) * 2 }, JoinLeft},
	} {
		build := intRecords(b, buildRows, 8192, bc.key)
		b.Run(bc.name, func(b *testing.B) {
			spec := JoinSpec{Kind: bc.kind, ProbeLayout: identity(2), BuildLayout: identity(2), ProbeTypes: types, BuildTypes: types,
				ProbeKeys: []sqlplan.Expr{colRef("p.k", 0, bigint)}, BuildKeys: []sqlplan.Expr{colRef("b.k", 0, bigint)}}
			var out int64
			for i := 0; i < b.N; i++ {
				op, err := HashJoin(Scan(&reuseSource{recs: probe}), Scan(&reuseSource{recs: build}), spec, Options{})
				require.NoError(b, err)
				n, err := Drain(context.Background(), op)
				require.NoError(b, err)
				require.NoError(b, op.Close())
				out = n
			}
			b.ReportMetric(float64(probeRows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
			b.ReportMetric(float64(out), "out-rows")
		})
	}
}
