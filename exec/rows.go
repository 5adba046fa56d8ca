package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// This file holds the row-level machinery the blocking operators share:
// evaluating an expression into an Arrow array, encoding values as hash
// keys, comparing rows for ORDER BY, and copying rows between batches.

// exprColumn evaluates one expression for whole batches: a column
// reference passes the record's array through, anything else is computed
// for the visible rows (hidden rows are NULL).
type exprColumn struct {
	pos  int // record column, or -1 when computed
	eval valueBinder
	t    metadata.DataType
	name string
}

func newExprColumn(e sqlplan.Expr, env *env) (exprColumn, error) {
	t := e.Type()
	if t.Root == 0 {
		t = metadata.StringType() // an untyped NULL
	}
	if c, ok := e.(*sqlplan.ColumnRef); ok {
		pos, err := columnPos(c, env)
		if err != nil {
			return exprColumn{}, err
		}
		return exprColumn{pos: pos, t: t, name: e.String()}, nil
	}
	vb, err := compileValue(e, env)
	if err != nil {
		return exprColumn{}, err
	}
	return exprColumn{pos: -1, eval: vb, t: t, name: e.String()}, nil
}

// array returns the column's values for b; the caller releases it.
func (c *exprColumn) array(b Batch, mem memory.Allocator, env *env) (arrow.Array, error) {
	if c.pos >= 0 {
		a := b.Rec.Column(c.pos)
		a.Retain()
		return a, nil
	}
	n := int(b.Rec.NumRows())
	bld := array.NewBuilder(mem, c.t.ArrowType())
	defer bld.Release()
	bld.Reserve(n)
	f := c.eval(b.Rec)
	vis := 0
	for r := 0; r < n; r++ {
		if vis < b.NumRows() && b.Row(vis) == r {
			vis++
			if err := metadata.AppendValue(bld, c.t, f(r)); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			continue
		}
		bld.AppendNull()
	}
	if err := env.takeErr(); err != nil {
		return nil, err
	}
	return bld.NewArray(), nil
}

// appendKey appends an encoding of row i of arr to dst such that two rows
// of arrays of one type encode equally exactly when they are the same
// value (NULL included, as GROUP BY and DISTINCT treat it): -0 and 0 are
// one value, and so is every NaN.
func appendKey(dst []byte, arr arrow.Array, t metadata.DataType, i int) []byte {
	if arr.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	switch a := arr.(type) {
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Int16:
		return binary.LittleEndian.AppendUint16(dst, uint16(a.Value(i)))
	case *array.Int8:
		return append(dst, byte(a.Value(i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(dst, floatBits(a.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint64(dst, floatBits(float64(a.Value(i))))
	case *array.String:
		s := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case *array.Binary:
		v := a.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Decimal128:
		v := a.Value(i)
		dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
		return binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
	case *array.Date32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Time32:
		return binary.LittleEndian.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Time64:
		return binary.LittleEndian.AppendUint64(dst, uint64(a.Value(i)))
	}
	// Nested and rare types: their display form, length-prefixed.
	s := metadata.FormatValue(t, metadata.ValueAt(arr, t, i))
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func floatBits(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case math.IsNaN(f):
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(f)
}

// keyBytes is the approximate memory a hashed key of n bytes holds in a
// Go map (the string, its header and the map's slot).
func keyBytes(n int) int64 { return int64(n) + 48 }

// colCmp compares row i of batch x with row j of batch y in one column;
// NULL is the smallest value.
type colCmp interface {
	add(arr arrow.Array)
	reset()
	// truncate forgets every batch from n on.
	truncate(n int)
	cmp(x int, i int, y int, j int) int
}

func newColCmp(t metadata.DataType, sample arrow.Array) colCmp {
	switch sample.(type) {
	case *array.Int64:
		return &typedCmp[int64]{values: func(a arrow.Array) []int64 { return a.(*array.Int64).Int64Values() }}
	case *array.Int32:
		return &typedCmp[int32]{values: func(a arrow.Array) []int32 { return a.(*array.Int32).Int32Values() }}
	case *array.Int16:
		return &typedCmp[int16]{values: func(a arrow.Array) []int16 { return a.(*array.Int16).Int16Values() }}
	case *array.Int8:
		return &typedCmp[int8]{values: func(a arrow.Array) []int8 { return a.(*array.Int8).Int8Values() }}
	case *array.Date32:
		return &typedCmp[arrow.Date32]{values: func(a arrow.Array) []arrow.Date32 { return a.(*array.Date32).Date32Values() }}
	case *array.Timestamp:
		return &typedCmp[arrow.Timestamp]{values: func(a arrow.Array) []arrow.Timestamp { return a.(*array.Timestamp).TimestampValues() }}
	case *array.Float64:
		return &floatCmp{}
	case *array.String:
		return &stringCmp{}
	case *array.Decimal128:
		return &decimalCmp{}
	}
	return &genericCmp{t: t}
}

type ordered interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type typedCmp[T ordered] struct {
	values func(arrow.Array) []T
	arrs   []arrow.Array
	vals   [][]T
}

func (c *typedCmp[T]) add(a arrow.Array) {
	c.arrs = append(c.arrs, a)
	c.vals = append(c.vals, c.values(a))
}
func (c *typedCmp[T]) reset()         { c.truncate(0) }
func (c *typedCmp[T]) truncate(n int) { c.arrs, c.vals = c.arrs[:n], c.vals[:n] }
func (c *typedCmp[T]) cmp(x, i, y, j int) int {
	if n := nullCmp(c.arrs[x], i, c.arrs[y], j); n != 2 {
		return n
	}
	a, b := c.vals[x][i], c.vals[y][j]
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nullCmp orders NULLs first; 2 means neither is NULL.
func nullCmp(a arrow.Array, i int, b arrow.Array, j int) int {
	an, bn := a.IsNull(i), b.IsNull(j)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return 2
}

type floatCmp struct{ arrs []*array.Float64 }

func (c *floatCmp) add(a arrow.Array) { c.arrs = append(c.arrs, a.(*array.Float64)) }
func (c *floatCmp) reset()            { c.arrs = c.arrs[:0] }
func (c *floatCmp) truncate(n int)    { c.arrs = c.arrs[:n] }
func (c *floatCmp) cmp(x, i, y, j int) int {
	if n := nullCmp(c.arrs[x], i, c.arrs[y], j); n != 2 {
		return n
	}
	return metadata.Compare(c.arrs[x].Value(i), c.arrs[y].Value(j))
}

type stringCmp struct{ arrs []*array.String }

func (c *stringCmp) add(a arrow.Array) { c.arrs = append(c.arrs, a.(*array.String)) }
func (c *stringCmp) reset()            { c.arrs = c.arrs[:0] }
func (c *stringCmp) truncate(n int)    { c.arrs = c.arrs[:n] }
func (c *stringCmp) cmp(x, i, y, j int) int {
	if n := nullCmp(c.arrs[x], i, c.arrs[y], j); n != 2 {
		return n
	}
	return strings.Compare(c.arrs[x].Value(i), c.arrs[y].Value(j))
}

type decimalCmp struct{ arrs []*array.Decimal128 }

func (c *decimalCmp) add(a arrow.Array) { c.arrs = append(c.arrs, a.(*array.Decimal128)) }
func (c *decimalCmp) reset()            { c.arrs = c.arrs[:0] }
func (c *decimalCmp) truncate(n int)    { c.arrs = c.arrs[:n] }
func (c *decimalCmp) cmp(x, i, y, j int) int {
	if n := nullCmp(c.arrs[x], i, c.arrs[y], j); n != 2 {
		return n
	}
	// One column has one scale, so the unscaled values order.
	return decimal128.Num(c.arrs[x].Value(i)).Cmp(decimal128.Num(c.arrs[y].Value(j)))
}

type genericCmp struct {
	t    metadata.DataType
	arrs []arrow.Array
}

func (c *genericCmp) add(a arrow.Array) { c.arrs = append(c.arrs, a) }
func (c *genericCmp) reset()            { c.arrs = c.arrs[:0] }
func (c *genericCmp) truncate(n int)    { c.arrs = c.arrs[:n] }
func (c *genericCmp) cmp(x, i, y, j int) int {
	if n := nullCmp(c.arrs[x], i, c.arrs[y], j); n != 2 {
		return n
	}
	return metadata.Compare(metadata.ValueAt(c.arrs[x], c.t, i), metadata.ValueAt(c.arrs[y], c.t, j))
}

// rowRef names row r of retained batch b.
type rowRef struct{ b, r int32 }

// copyRows builds a record of the given rows of batches, in order.
func copyRows(mem memory.Allocator, schema *arrow.Schema, types []metadata.DataType, batches []arrow.RecordBatch, refs []rowRef) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		bld := array.NewBuilder(mem, schema.Field(c).Type)
		bld.Reserve(len(refs))
		for _, ref := range refs {
			if err := appendFrom(bld, batches[ref.b].Column(c), types[c], int(ref.r)); err != nil {
				bld.Release()
				return nil, err
			}
		}
		cols[c] = bld.NewArray()
		bld.Release()
	}
	return array.NewRecordBatch(schema, cols, int64(len(refs))), nil
}

// appendFrom appends row i of arr to bld, built for arr's type.
func appendFrom(bld array.Builder, arr arrow.Array, t metadata.DataType, i int) error {
	if arr.IsNull(i) {
		bld.AppendNull()
		return nil
	}
	switch a := arr.(type) {
	case *array.Int64:
		bld.(*array.Int64Builder).Append(a.Value(i))
	case *array.Int32:
		bld.(*array.Int32Builder).Append(a.Value(i))
	case *array.Float64:
		bld.(*array.Float64Builder).Append(a.Value(i))
	case *array.String:
		bld.(*array.StringBuilder).Append(a.Value(i))
	case *array.Boolean:
		bld.(*array.BooleanBuilder).Append(a.Value(i))
	case *array.Decimal128:
		bld.(*array.Decimal128Builder).Append(a.Value(i))
	case *array.Date32:
		bld.(*array.Date32Builder).Append(a.Value(i))
	case *array.Timestamp:
		bld.(*array.TimestampBuilder).Append(a.Value(i))
	default:
		return metadata.AppendValue(bld, t, metadata.ValueAt(arr, t, i))
	}
	return nil
}
