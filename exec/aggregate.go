package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Hash aggregation. The operator reads its whole input, assigning each
// visible row a group (GROUP BY keys hashed; NULL is a group of its own),
// and keeps per group only the aggregates' running states, so its memory
// grows with the number of groups, not of rows. Without GROUP BY there is
// exactly one group, even for an empty input: COUNT gives 0 and the other
// aggregates NULL.
//
// Its output record holds the group keys, then the aggregates, in the
// order given; rewriteAggregates maps the query's expressions onto it.

// outBatchRows is the number of rows per batch the blocking operators emit.
const outBatchRows = 4096

func isAggregate(f *sqlplan.Func) bool {
	switch f.Name {
	case "count", "sum", "avg", "min", "max":
		return true
	}
	return false
}

type aggregateOp struct {
	in     Operator
	env    *env
	mem    memory.Allocator
	keys   []exprColumn
	aggs   []*aggCall
	budget memBudget
	schema *arrow.Schema

	mode      groupMode
	intGroups *intMap
	strGroups map[string]int32
	groups    map[string]int32
	nullGroup int32
	ngroups   int
	keyVals   [][]any // per key column, per group
	keyBuf    []byte
	gids      []int32
	rows      []int32 // the visible rows of the current batch
	every     []int32 // 0, 1, 2, ...: rows of a batch without selection

	consumed bool
	emitted  int
	out      arrow.RecordBatch
}

type groupMode uint8

const (
	groupGlobal groupMode = iota
	groupInt
	groupString
	groupAny
)

type aggCall struct {
	f     *sqlplan.Func
	arg   exprColumn // unset for COUNT(*)
	state aggregator
	// seen holds (group, value) pairs of a DISTINCT aggregate.
	seen  map[string]struct{}
	buf   []byte
	gids  []int32
	rows  []int32
	total int64 // distinct pairs held
}

// Aggregate groups in by keys and computes aggs (bound aggregate calls) per
// group. See the comment above for its output.
func Aggregate(in Operator, keys []sqlplan.Expr, aggs []*sqlplan.Func, layout Layout, opts Options) (Operator, error) {
	return aggregateWith(in, keys, aggs, layout, opts, newSubqueries(opts))
}

// aggregateWith is Aggregate whose keys and arguments may hold subqueries
// run by subs.
func aggregateWith(in Operator, keys []sqlplan.Expr, aggs []*sqlplan.Func, layout Layout, opts Options, subs *subqueries) (Operator, error) {
	opts = opts.withDefaults()
	env := &env{layout: layout, subs: subs}
	op := &aggregateOp{in: in, env: env, mem: opts.Allocator, budget: memBudget{limit: opts.MemoryLimit}, nullGroup: -1}
	var fields []arrow.Field
	for i, k := range keys {
		c, err := newExprColumn(k, env)
		if err != nil {
			return nil, err
		}
		op.keys = append(op.keys, c)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("k%d", i), Type: c.t.ArrowType(), Nullable: true})
	}
	for i, f := range aggs {
		ac := &aggCall{f: f}
		argT := metadata.DataType{}
		if !f.Star {
			if len(f.Args) != 1 {
				return nil, fmt.Errorf("%s takes one argument: %w", f, metadata.ErrInvalidValue)
			}
			c, err := newExprColumn(f.Args[0], env)
			if err != nil {
				return nil, err
			}
			ac.arg, argT = c, c.t
		}
		state, err := newAggregator(f, argT)
		if err != nil {
			return nil, err
		}
		ac.state = state
		if f.Distinct {
			ac.seen = map[string]struct{}{}
		}
		op.aggs = append(op.aggs, ac)
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("a%d", i), Type: resultType(f.T).ArrowType(), Nullable: true})
	}
	op.schema = arrow.NewSchema(fields, nil)
	op.keyVals = make([][]any, len(keys))
	switch {
	case len(keys) == 0:
		op.mode = groupGlobal
		op.newGroup(nil, 0)
	case len(keys) == 1 && isIntArrow(op.keys[0].t.ArrowType()):
		op.mode, op.intGroups = groupInt, newIntMap()
	case len(keys) == 1 && op.keys[0].t.ArrowType().ID() == arrow.STRING:
		op.mode, op.strGroups = groupString, map[string]int32{}
	default:
		op.mode, op.groups = groupAny, map[string]int32{}
	}
	return op, nil
}

func resultType(t metadata.DataType) metadata.DataType {
	if t.Root == 0 {
		return metadata.StringType()
	}
	return t
}

func isIntArrow(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func (a *aggregateOp) Next(ctx context.Context) (Batch, error) {
	if !a.consumed {
		if err := a.consume(ctx); err != nil {
			return Batch{}, err
		}
		a.consumed = true
	}
	a.release()
	if a.emitted >= a.ngroups {
		return Batch{}, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return Batch{}, err
	}
	from, to := a.emitted, min(a.ngroups, a.emitted+outBatchRows)
	rec, err := a.build(from, to)
	if err != nil {
		return Batch{}, err
	}
	a.emitted = to
	a.out = rec
	return Batch{Rec: rec}, nil
}

func (a *aggregateOp) consume(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := a.in.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		a.env.ctx = ctx
		if err := a.addBatch(b); err != nil {
			return err
		}
		if err := a.budget.check("GROUP BY", a.detail); err != nil {
			return err
		}
	}
}

func (a *aggregateOp) detail() string {
	d := count(int64(a.ngroups), "group")
	var pairs int64
	for _, ac := range a.aggs {
		pairs += ac.total
	}
	if pairs > 0 {
		d += ", " + count(pairs, "distinct value")
	}
	return d
}

func (a *aggregateOp) addBatch(b Batch) error {
	if b.Sel != nil {
		// Read only within this call, while b is valid.
		a.rows = b.Sel
	} else {
		// Every row: 0..n-1, kept in its own buffer so that b.Sel's
		// array is never written.
		n := b.NumRows()
		for i := len(a.every); i < n; i++ {
			a.every = append(a.every, int32(i))
		}
		a.rows = a.every[:n]
	}
	keyArrs := make([]arrow.Array, len(a.keys))
	defer releaseAll(keyArrs)
	for k := range a.keys {
		arr, err := a.keys[k].array(b, a.mem, a.env)
		if err != nil {
			return err
		}
		keyArrs[k] = arr
	}
	a.assignGroups(keyArrs)
	for _, ac := range a.aggs {
		if err := a.feed(ac, b); err != nil {
			return err
		}
	}
	return nil
}

func releaseAll(arrs []arrow.Array) {
	for _, x := range arrs {
		if x != nil {
			x.Release()
		}
	}
}

// assignGroups sets a.gids[i] to the group of row a.rows[i], creating
// groups as they appear.
func (a *aggregateOp) assignGroups(keyArrs []arrow.Array) {
	a.gids = a.gids[:0]
	switch a.mode {
	case groupGlobal:
		a.gids = resize(a.gids, len(a.rows))
		clear(a.gids)
	case groupInt:
		a.gids = resize(a.gids, len(a.rows))
		newGroup := func(r int32) int32 {
			a.budget.grow(keyBytes(8))
			return a.newGroup(keyArrs, int(r))
		}
		nullGroup := func(r int32) int32 { return a.nullGroupID(keyArrs, int(r)) }
		if !intIDsOf(a.intGroups, keyArrs[0], a.rows, a.gids, newGroup, nullGroup) {
			// Not an integer array after all: every row is NULL.
			for i, r := range a.rows {
				a.gids[i] = nullGroup(r)
			}
		}
	case groupString:
		arr := keyArrs[0].(*array.String)
		for _, r := range a.rows {
			i := int(r)
			if arr.IsNull(i) {
				a.gids = append(a.gids, a.nullGroupID(keyArrs, i))
				continue
			}
			v := arr.Value(i)
			g, ok := a.strGroups[v]
			if !ok {
				g = a.newGroup(keyArrs, i)
				a.strGroups[strings.Clone(v)] = g
				a.budget.grow(keyBytes(len(v)))
			}
			a.gids = append(a.gids, g)
		}
	default:
		for _, r := range a.rows {
			i := int(r)
			a.keyBuf = a.keyBuf[:0]
			for k, arr := range keyArrs {
				a.keyBuf = appendKey(a.keyBuf, arr, a.keys[k].t, i)
			}
			g, ok := a.groups[string(a.keyBuf)]
			if !ok {
				g = a.newGroup(keyArrs, i)
				a.groups[string(a.keyBuf)] = g
				a.budget.grow(keyBytes(len(a.keyBuf)))
			}
			a.gids = append(a.gids, g)
		}
	}
}

func (a *aggregateOp) nullGroupID(keyArrs []arrow.Array, i int) int32 {
	if a.nullGroup < 0 {
		a.nullGroup = a.newGroup(keyArrs, i)
	}
	return a.nullGroup
}

// newGroup adds a group whose keys are row i of keyArrs.
func (a *aggregateOp) newGroup(keyArrs []arrow.Array, i int) int32 {
	g := int32(a.ngroups)
	a.ngroups++
	var size int64
	for k, arr := range keyArrs {
		v := metadata.ValueAt(arr, a.keys[k].t, i)
		a.keyVals[k] = append(a.keyVals[k], v)
		size += 16 + valueBytes(v)
	}
	for _, ac := range a.aggs {
		ac.state.grow(a.ngroups)
		size += ac.state.bytesPerGroup()
	}
	a.budget.grow(size)
	return g
}

func valueBytes(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x))
	case []byte:
		return int64(len(x))
	case []any, metadata.MapValue:
		return 64
	}
	return 0
}

// feed passes the batch's rows to one aggregate, through its DISTINCT
// filter if it has one.
func (a *aggregateOp) feed(ac *aggCall, b Batch) error {
	var arr arrow.Array
	if !ac.f.Star {
		var err error
		if arr, err = ac.arg.array(b, a.mem, a.env); err != nil {
			return err
		}
		defer arr.Release()
	}
	gids, rows := a.gids, a.rows
	if c, ok := ac.state.(*countAgg); ok && c.star && a.mode == groupGlobal && ac.seen == nil {
		// COUNT(*) of the one group: the selection's length.
		c.n[0] += int64(len(rows))
		return nil
	}
	if ac.seen != nil {
		ac.gids, ac.rows = ac.gids[:0], ac.rows[:0]
		for i, r := range rows {
			if arr.IsNull(int(r)) {
				continue
			}
			ac.buf = binary.LittleEndian.AppendUint32(ac.buf[:0], uint32(gids[i]))
			ac.buf = appendKey(ac.buf, arr, ac.arg.t, int(r))
			if _, dup := ac.seen[string(ac.buf)]; dup {
				continue
			}
			ac.seen[string(ac.buf)] = struct{}{}
			ac.total++
			a.budget.grow(keyBytes(len(ac.buf)))
			ac.gids, ac.rows = append(ac.gids, gids[i]), append(ac.rows, r)
		}
		gids, rows = ac.gids, ac.rows
	}
	if err := ac.state.add(arr, gids, rows); err != nil {
		return fmt.Errorf("%s: %w", ac.f, err)
	}
	return nil
}

// keyArrays builds the key columns of groups [from, to).
func (a *aggregateOp) keyArrays(from, to int) ([]arrow.Array, error) {
	cols := make([]arrow.Array, 0, len(a.keys))
	for k := range a.keys {
		bld := array.NewBuilder(a.mem, a.schema.Field(k).Type)
		for g := from; g < to; g++ {
			if err := metadata.AppendValue(bld, a.keys[k].t, a.keyVals[k][g]); err != nil {
				bld.Release()
				releaseAll(cols)
				return nil, err
			}
		}
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	return cols, nil
}

func (a *aggregateOp) build(from, to int) (arrow.RecordBatch, error) {
	cols, err := a.keyArrays(from, to)
	if err != nil {
		return nil, err
	}
	defer func() { releaseAll(cols) }()
	for j, ac := range a.aggs {
		bld := array.NewBuilder(a.mem, a.schema.Field(len(a.keys)+j).Type)
		for g := from; g < to; g++ {
			if err := ac.state.result(bld, g); err != nil {
				bld.Release()
				return nil, fmt.Errorf("%s: %w", ac.f, err)
			}
		}
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	rec := array.NewRecordBatch(a.schema, cols, int64(to-from))
	return rec, nil
}

func (a *aggregateOp) release() {
	if a.out != nil {
		a.out.Release()
		a.out = nil
	}
}

func (a *aggregateOp) Close() error {
	a.release()
	a.intGroups, a.strGroups, a.groups, a.keyVals = nil, nil, nil, nil
	return a.in.Close()
}

// aggregator is the per-group state of one aggregate function, kept in
// columns (one slice element per group).
type aggregator interface {
	// grow makes room for n groups.
	grow(n int)
	// add feeds row rows[i] of arr to group gids[i]; arr is nil for
	// COUNT(*).
	add(arr arrow.Array, gids []int32, rows []int32) error
	// result appends group g's value to bld.
	result(bld array.Builder, g int) error
	// merge adds the states of o, an aggregator of the same function
	// and type, to these: its group g to group into[g].
	merge(o aggregator, into []int32) error
	bytesPerGroup() int64
}

func newAggregator(f *sqlplan.Func, argT metadata.DataType) (aggregator, error) {
	isFloat := argT.Root == metadata.Double || argT.Root == metadata.Float
	switch f.Name {
	case "count":
		return &countAgg{star: f.Star}, nil
	case "sum":
		switch {
		case isFloat:
			return &sumFloatAgg{}, nil
		case argT.Root == metadata.Decimal:
			return &sumDecimalAgg{}, nil
		}
		return &sumIntAgg{}, nil
	case "avg":
		switch {
		case isFloat:
			return &avgAgg{kind: 'f'}, nil
		case argT.Root == metadata.Decimal:
			return &avgAgg{kind: 'd', argScale: int32(argT.Scale), t: f.T}, nil
		}
		return &avgAgg{kind: 'i'}, nil
	case "min", "max":
		m := &minMaxAgg{max: f.Name == "max", t: argT}
		at := argT.ArrowType()
		switch {
		case isIntArrow(at):
			m.kind = 'i'
		case at.ID() == arrow.FLOAT64:
			m.kind = 'f'
		case at.ID() == arrow.STRING:
			m.kind = 's'
		}
		return m, nil
	}
	return nil, fmt.Errorf("aggregate %s: %w", f, metadata.ErrUnsupported)
}

type countAgg struct {
	star bool
	n    []int64
}

func (c *countAgg) grow(n int) { c.n = growTo(c.n, n) }
func (c *countAgg) add(arr arrow.Array, gids []int32, rows []int32) error {
	if c.star || arr.NullN() == 0 {
		for _, g := range gids {
			c.n[g]++
		}
		return nil
	}
	for i, r := range rows {
		if !arr.IsNull(int(r)) {
			c.n[gids[i]]++
		}
	}
	return nil
}
func (c *countAgg) result(bld array.Builder, g int) error {
	bld.(*array.Int64Builder).Append(c.n[g])
	return nil
}
func (c *countAgg) bytesPerGroup() int64 { return 8 }

// resize returns s with length n, reusing its array when it is large
// enough; the contents are not kept.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func growTo[T any](s []T, n int) []T {
	for len(s) < n {
		var zero T
		s = append(s, zero)
	}
	return s
}

type sumIntAgg struct {
	sum  []int64
	seen []bool
}

func (s *sumIntAgg) grow(n int) { s.sum, s.seen = growTo(s.sum, n), growTo(s.seen, n) }
func (s *sumIntAgg) add(arr arrow.Array, gids []int32, rows []int32) error {
	if !isIntArrow(arr.DataType()) {
		return nil // an untyped NULL argument: nothing to add
	}
	if a, ok := arr.(*array.Int64); ok && arr.NullN() == 0 {
		vals := a.Int64Values()
		for i, r := range rows {
			g := gids[i]
			x, y := s.sum[g], vals[r]
			z := x + y
			if (z > x) != (y > 0) {
				return errOverflow
			}
			s.sum[g], s.seen[g] = z, true
		}
		return nil
	}
	get := intGetter(arr)
	for i, r := range rows {
		if arr.IsNull(int(r)) {
			continue
		}
		g := gids[i]
		x, y := s.sum[g], get(int(r))
		z := x + y
		if (z > x) != (y > 0) {
			return errOverflow
		}
		s.sum[g], s.seen[g] = z, true
	}
	return nil
}
func (s *sumIntAgg) result(bld array.Builder, g int) error {
	if !s.seen[g] {
		bld.AppendNull()
		return nil
	}
	bld.(*array.Int64Builder).Append(s.sum[g])
	return nil
}
func (s *sumIntAgg) bytesPerGroup() int64 { return 9 }

// floatValues reads a FLOAT or DOUBLE array.
func floatGetter(arr arrow.Array) func(int) float64 {
	switch a := arr.(type) {
	case *array.Float64:
		return a.Value
	case *array.Float32:
		return func(i int) float64 { return float64(a.Value(i)) }
	}
	return nil
}

type sumFloatAgg struct {
	sum  []float64
	seen []bool
}

func (s *sumFloatAgg) grow(n int) { s.sum, s.seen = growTo(s.sum, n), growTo(s.seen, n) }
func (s *sumFloatAgg) add(arr arrow.Array, gids []int32, rows []int32) error {
	get := floatGetter(arr)
	if get == nil {
		return nil
	}
	if a, ok := arr.(*array.Float64); ok && arr.NullN() == 0 {
		vals := a.Float64Values()
		for i, r := range rows {
			s.sum[gids[i]] += vals[r]
			s.seen[gids[i]] = true
		}
		return nil
	}
	for i, r := range rows {
		if !arr.IsNull(int(r)) {
			s.sum[gids[i]] += get(int(r))
			s.seen[gids[i]] = true
		}
	}
	return nil
}
func (s *sumFloatAgg) result(bld array.Builder, g int) error {
	if !s.seen[g] {
		bld.AppendNull()
		return nil
	}
	bld.(*array.Float64Builder).Append(s.sum[g])
	return nil
}
func (s *sumFloatAgg) bytesPerGroup() int64 { return 9 }

var errDecimalOverflow = fmt.Errorf("%w: DECIMAL overflow (more than %d digits)", metadata.ErrInvalidValue, metadata.MaxDecimalPrecision)

// addDecimal adds within 38 digits; the sum of two such values cannot wrap
// 128 bits, so checking the digits afterwards is enough.
func addDecimal(x, y decimal128.Num) (decimal128.Num, error) {
	z := x.Add(y)
	if !z.FitsInPrecision(metadata.MaxDecimalPrecision) {
		return z, errDecimalOverflow
	}
	return z, nil
}

type sumDecimalAgg struct {
	sum  []decimal128.Num
	seen []bool
}

func (s *sumDecimalAgg) grow(n int) { s.sum, s.seen = growTo(s.sum, n), growTo(s.seen, n) }
func (s *sumDecimalAgg) add(arr arrow.Array, gids []int32, rows []int32) error {
	a, ok := arr.(*array.Decimal128)
	if !ok {
		return nil
	}
	for i, r := range rows {
		if a.IsNull(int(r)) {
			continue
		}
		g := gids[i]
		z, err := addDecimal(s.sum[g], a.Value(int(r)))
		if err != nil {
			return err
		}
		s.sum[g], s.seen[g] = z, true
	}
	return nil
}
func (s *sumDecimalAgg) result(bld array.Builder, g int) error {
	if !s.seen[g] {
		bld.AppendNull()
		return nil
	}
	// SUM(DECIMAL(p, s)) is DECIMAL(38, s): the unscaled value carries over.
	bld.(*array.Decimal128Builder).Append(s.sum[g])
	return nil
}
func (s *sumDecimalAgg) bytesPerGroup() int64 { return 17 }

// avgAgg is AVG: of integers and DOUBLE a DOUBLE, of DECIMAL a DECIMAL
// rounded half away from zero. An integer sum beyond BIGINT continues in
// floating point rather than failing: AVG stays defined where SUM is not.
type avgAgg struct {
	kind     byte // 'i', 'f', 'd'
	argScale int32
	t        metadata.DataType
	n        []int64
	isum     []int64
	fsum     []float64
	over     []bool
	dsum     []decimal128.Num
}

func (s *avgAgg) grow(n int) {
	s.n = growTo(s.n, n)
	switch s.kind {
	case 'i':
		s.isum, s.fsum, s.over = growTo(s.isum, n), growTo(s.fsum, n), growTo(s.over, n)
	case 'f':
		s.fsum = growTo(s.fsum, n)
	case 'd':
		s.dsum = growTo(s.dsum, n)
	}
}

func (s *avgAgg) add(arr arrow.Array, gids []int32, rows []int32) error {
	switch s.kind {
	case 'i':
		if !isIntArrow(arr.DataType()) {
			return nil
		}
		get := intGetter(arr)
		for i, r := range rows {
			if arr.IsNull(int(r)) {
				continue
			}
			g := gids[i]
			y := get(int(r))
			s.n[g]++
			if s.over[g] {
				s.fsum[g] += float64(y)
				continue
			}
			x := s.isum[g]
			z := x + y
			if (z > x) != (y > 0) {
				s.over[g], s.fsum[g] = true, float64(x)+float64(y)
				continue
			}
			s.isum[g] = z
		}
	case 'f':
		get := floatGetter(arr)
		if get == nil {
			return nil
		}
		for i, r := range rows {
			if !arr.IsNull(int(r)) {
				s.n[gids[i]]++
				s.fsum[gids[i]] += get(int(r))
			}
		}
	case 'd':
		a, ok := arr.(*array.Decimal128)
		if !ok {
			return nil
		}
		for i, r := range rows {
			if a.IsNull(int(r)) {
				continue
			}
			g := gids[i]
			z, err := addDecimal(s.dsum[g], a.Value(int(r)))
			if err != nil {
				return err
			}
			s.dsum[g] = z
			s.n[g]++
		}
	}
	return nil
}

func (s *avgAgg) result(bld array.Builder, g int) error {
	if s.n[g] == 0 {
		bld.AppendNull()
		return nil
	}
	switch s.kind {
	case 'i':
		sum := float64(s.isum[g])
		if s.over[g] {
			sum = s.fsum[g]
		}
		bld.(*array.Float64Builder).Append(sum / float64(s.n[g]))
	case 'f':
		bld.(*array.Float64Builder).Append(s.fsum[g] / float64(s.n[g]))
	case 'd':
		v, err := decimalArith('/', s.t, scaled{n: s.dsum[g].BigInt(), scale: s.argScale}, toBig(s.n[g]))
		if err != nil {
			return err
		}
		return metadata.AppendValue(bld, s.t, v)
	}
	return nil
}

func (s *avgAgg) bytesPerGroup() int64 { return 32 }

// minMaxAgg is MIN or MAX: typed for integers, DOUBLE and strings, by
// canonical values otherwise.
type minMaxAgg struct {
	max  bool
	kind byte // 'i', 'f', 's', or 0 for any
	t    metadata.DataType
	seen []bool
	ints []int64
	flts []float64
	strs []string
	anys []any
}

func (m *minMaxAgg) grow(n int) {
	m.seen = growTo(m.seen, n)
	switch m.kind {
	case 'i':
		m.ints = growTo(m.ints, n)
	case 'f':
		m.flts = growTo(m.flts, n)
	case 's':
		m.strs = growTo(m.strs, n)
	default:
		m.anys = growTo(m.anys, n)
	}
}

// better reports whether a comparison result c (new vs current) replaces
// the current value.
func (m *minMaxAgg) better(c int) bool {
	if m.max {
		return c > 0
	}
	return c < 0
}

func (m *minMaxAgg) add(arr arrow.Array, gids []int32, rows []int32) error {
	switch m.kind {
	case 'i':
		get := intGetter(arr)
		for i, r := range rows {
			if arr.IsNull(int(r)) {
				continue
			}
			g, v := gids[i], get(int(r))
			if !m.seen[g] || (m.max && v > m.ints[g]) || (!m.max && v < m.ints[g]) {
				m.ints[g], m.seen[g] = v, true
			}
		}
	case 'f':
		a := arr.(*array.Float64)
		for i, r := range rows {
			if a.IsNull(int(r)) {
				continue
			}
			g, v := gids[i], a.Value(int(r))
			if !m.seen[g] || m.better(metadata.Compare(v, m.flts[g])) {
				m.flts[g], m.seen[g] = v, true
			}
		}
	case 's':
		a := arr.(*array.String)
		for i, r := range rows {
			if a.IsNull(int(r)) {
				continue
			}
			g, v := gids[i], a.Value(int(r))
			if !m.seen[g] || m.better(strings.Compare(v, m.strs[g])) {
				m.strs[g], m.seen[g] = strings.Clone(v), true
			}
		}
	default:
		for i, r := range rows {
			if arr.IsNull(int(r)) {
				continue
			}
			g := gids[i]
			if m.seen[g] {
				// Compare before copying the value out of the array.
				if !m.better(metadata.Compare(metadata.ValueAt(arr, m.t, int(r)), m.anys[g])) {
					continue
				}
			}
			m.anys[g], m.seen[g] = metadata.ValueAt(arr, m.t, int(r)), true
		}
	}
	return nil
}

func (m *minMaxAgg) result(bld array.Builder, g int) error {
	if !m.seen[g] {
		bld.AppendNull()
		return nil
	}
	switch m.kind {
	case 'i':
		return metadata.AppendValue(bld, m.t, m.ints[g])
	case 'f':
		bld.(*array.Float64Builder).Append(m.flts[g])
		return nil
	case 's':
		bld.(*array.StringBuilder).Append(m.strs[g])
		return nil
	}
	return metadata.AppendValue(bld, m.t, m.anys[g])
}

func (m *minMaxAgg) bytesPerGroup() int64 { return 24 }
