package fluss

import (
	"database/sql/driver"
	"strings"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
)

// getter reads row i of one column as a driver.Value.
type getter func(i int) driver.Value

// converter turns Arrow columns into driver values (DESIGN §7). One
// getter is built per column per batch, so the per-row work is a typed
// array access and no type switch.
type converter struct {
	loc *time.Location // for TIMESTAMP_LTZ
}

func (c *converter) getter(arr arrow.Array, t metadata.DataType) getter {
	nullable := arr.NullN() > 0
	wrap := func(g getter) getter {
		if !nullable {
			return g
		}
		return func(i int) driver.Value {
			if arr.IsNull(i) {
				return nil
			}
			return g(i)
		}
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return wrap(func(i int) driver.Value { return a.Value(i) })
	case *array.Int8:
		return wrap(func(i int) driver.Value { return int64(a.Value(i)) })
	case *array.Int16:
		return wrap(func(i int) driver.Value { return int64(a.Value(i)) })
	case *array.Int32:
		return wrap(func(i int) driver.Value { return int64(a.Value(i)) })
	case *array.Int64:
		return wrap(func(i int) driver.Value { return a.Value(i) })
	case *array.Float32:
		return wrap(func(i int) driver.Value { return float64(a.Value(i)) })
	case *array.Float64:
		return wrap(func(i int) driver.Value { return a.Value(i) })
	case *array.String:
		// Copied out of the Arrow buffer: a string aliasing it would pin or
		// outlive the batch.
		return wrap(func(i int) driver.Value { return strings.Clone(a.Value(i)) })
	case *array.Binary:
		return wrap(func(i int) driver.Value { return cloneBytes(a.Value(i)) })
	case *array.FixedSizeBinary:
		return wrap(func(i int) driver.Value { return cloneBytes(a.Value(i)) })
	}
	// Decimal, temporal and nested types go through the canonical value.
	return wrap(func(i int) driver.Value {
		return c.value(t, metadata.ValueAt(arr, t, i))
	})
}

// cloneBytes copies a binary value out of the buffer it was read from,
// never into a nil slice: database/sql passes a nil []byte on as NULL, so
// an empty value must stay an empty, non-nil slice to read as itself.
func cloneBytes(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// value converts a canonical value of type t into its driver form.
func (c *converter) value(t metadata.DataType, v any) any {
	if v == nil {
		return nil
	}
	switch x := v.(type) {
	case metadata.DecimalValue:
		return x.String()
	case metadata.DateValue:
		return time.Unix(int64(x)*86400, 0).UTC()
	case metadata.TimeValue:
		return time.Unix(0, int64(x)).UTC()
	case time.Time:
		if t.Root == metadata.TimestampLTZ {
			return x.In(c.loc)
		}
		return x.UTC()
	case string:
		return strings.Clone(x)
	case []byte:
		return cloneBytes(x)
	case metadata.MapValue:
		m := make(map[any]any, len(x.Keys))
		for i, k := range x.Keys {
			key := c.value(*t.Elem, k)
			if b, ok := key.([]byte); ok {
				key = string(b) // []byte cannot be a map key
			}
			m[key] = c.value(*t.Value, x.Values[i])
		}
		return m
	case []any:
		if t.Root == metadata.Row {
			m := make(map[string]any, len(x))
			for i, f := range t.Fields {
				if i < len(x) {
					m[f.Name] = c.value(f.Type, x[i])
				}
			}
			return m
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.value(*t.Elem, e)
		}
		return out
	}
	return v
}

// Converting a batch at a time, and boxing without an allocation per
// value.
//
// database/sql's Rows.Next hands each value to Scan as a driver.Value, an
// interface. Converting an int64, float64, string or time.Time to an
// interface allocates a copy of it on the heap, one allocation per value
// (small ints excepted); across a full scan that is several allocations
// per row and most of the driver's cost over database/sql's own. A batch
// is therefore converted once, column by column, into typed Go slices
// (one allocation per column per batch), and a driver.Value is an
// interface whose data word points at its element.
//
// This is sound because such a slice is never written again once built
// (every batch gets new ones: a caller scanning into *any keeps the
// interface, and with it the element, for as long as it likes), and is Go
// memory the collector traces through the interface's data word, which is
// a pointer for every non-pointer-shaped type boxed here. It relies on the
// gc toolchain's layout of an empty interface, a type word then a data
// word pointing at the value; TestBoxAt checks it.

// eface is the layout of an empty interface.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// typeWord returns the type word of an interface holding a T.
func typeWord[T any]() unsafe.Pointer {
	var v any = *new(T)
	return (*eface)(unsafe.Pointer(&v)).typ
}

var (
	typeWordInt64   = typeWord[int64]()
	typeWordFloat64 = typeWord[float64]()
	typeWordString  = typeWord[string]()
	typeWordTime    = typeWord[time.Time]()
)

// boxAt returns the interface of type word typ whose data word is p,
// without copying what p points at, which must never change again.
func boxAt(typ, p unsafe.Pointer) driver.Value {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// driverBatch is one batch of a result in driver form. It holds no Arrow
// memory, so it stays valid whatever happens to the batch it was made of.
type driverBatch struct {
	n    int // rows
	cols []driverColumn
}

// driverColumn is one column of a driverBatch: either a typed slice whose
// elements are boxed in place (typ, base and size) or, for the types
// converted one value at a time, vals.
type driverColumn struct {
	typ  unsafe.Pointer // type word of the elements
	base unsafe.Pointer // the first element
	size uintptr        // bytes per element
	null []bool         // per row; nil when no row is NULL
	vals []driver.Value // set for the types converted value by value
}

// len is the number of rows; 0 for a nil batch.
func (b *driverBatch) len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// row writes row p into dest.
func (b *driverBatch) row(p int, dest []driver.Value) {
	for i := range b.cols {
		c := &b.cols[i]
		switch {
		case c.vals != nil:
			dest[i] = c.vals[p]
		case c.null != nil && c.null[p]:
			dest[i] = nil
		default:
			dest[i] = boxAt(c.typ, unsafe.Add(c.base, uintptr(p)*c.size))
		}
	}
}

// convertBatch converts the visible rows of b into driver form, one column
// of types per result column.
func (c *converter) convertBatch(b query.Batch, types []metadata.DataType) *driverBatch {
	n := b.NumRows()
	out := &driverBatch{n: n, cols: make([]driverColumn, len(types))}
	if n == 0 {
		return out
	}
	for i, t := range types {
		out.cols[i] = c.convertColumn(b.Rec.Column(i), t, b.Sel, n)
	}
	return out
}

// convertColumn converts the n visible rows of arr, sel picking them (nil:
// the first n rows). The common scalar types become typed slices; the
// others go value by value through getter.
func (c *converter) convertColumn(arr arrow.Array, t metadata.DataType, sel []int32, n int) driverColumn {
	var col driverColumn
	switch a := arr.(type) {
	case *array.Int8:
		col = int64Column(a.Int8Values(), sel, n)
	case *array.Int16:
		col = int64Column(a.Int16Values(), sel, n)
	case *array.Int32:
		col = int64Column(a.Int32Values(), sel, n)
	case *array.Int64:
		col = int64Column(a.Int64Values(), sel, n)
	case *array.Float32:
		col = float64Column(a.Float32Values(), sel, n)
	case *array.Float64:
		col = float64Column(a.Float64Values(), sel, n)
	case *array.String:
		col = stringColumn(a, sel, n)
	case *array.Timestamp:
		col = c.timestampColumn(a, t, sel, n)
	default:
		g := c.getter(arr, t)
		vals := make([]driver.Value, n)
		if sel == nil {
			for p := range vals {
				vals[p] = g(p)
			}
		} else {
			for p, i := range sel[:n] {
				vals[p] = g(int(i))
			}
		}
		// A nil vals would read as a typed column: keep it non-nil.
		return driverColumn{vals: vals}
	}
	if arr.NullN() > 0 {
		col.null = make([]bool, n)
		for p := range n {
			col.null[p] = arr.IsNull(rowOf(sel, p))
		}
	}
	return col
}

func rowOf(sel []int32, p int) int {
	if sel == nil {
		return p
	}
	return int(sel[p])
}

// typedColumn is the driverColumn of a typed slice.
func typedColumn[T any](typ unsafe.Pointer, s []T) driverColumn {
	return driverColumn{typ: typ, base: unsafe.Pointer(unsafe.SliceData(s)), size: unsafe.Sizeof(*new(T))}
}

func int64Column[T int8 | int16 | int32 | int64](vals []T, sel []int32, n int) driverColumn {
	out := make([]int64, n)
	if sel == nil {
		for p, v := range vals[:n] {
			out[p] = int64(v)
		}
	} else {
		for p, i := range sel[:n] {
			out[p] = int64(vals[i])
		}
	}
	return typedColumn(typeWordInt64, out)
}

func float64Column[T float32 | float64](vals []T, sel []int32, n int) driverColumn {
	out := make([]float64, n)
	if sel == nil {
		for p, v := range vals[:n] {
			out[p] = float64(v)
		}
	} else {
		for p, i := range sel[:n] {
			out[p] = float64(vals[i])
		}
	}
	return typedColumn(typeWordFloat64, out)
}

// stringChunk is the size of the blocks stringColumn copies strings into.
// Strings share a block, so a caller keeping one string keeps its block
// alive: at most this much, never the batch.
const stringChunk = 1024

// stringColumn copies each string out of the Arrow buffer, which a later
// batch may release: a string aliasing it would pin or outlive it. The
// strings are packed into blocks of stringChunk bytes, one allocation per
// block rather than per string; a block is never written again where a
// string points into it.
func stringColumn(a *array.String, sel []int32, n int) driverColumn {
	out := make([]string, n)
	var block []byte
	for p := range out {
		v := a.Value(rowOf(sel, p))
		if len(v) == 0 {
			continue
		}
		if len(block)+len(v) > cap(block) {
			block = make([]byte, 0, max(stringChunk, len(v)))
		}
		start := len(block)
		block = append(block, v...)
		out[p] = unsafe.String(&block[start], len(v))
	}
	return typedColumn(typeWordString, out)
}

// timestampColumn converts as value does: TIMESTAMP as UTC wall clock,
// TIMESTAMP_LTZ in the connection's location.
func (c *converter) timestampColumn(a *array.Timestamp, t metadata.DataType, sel []int32, n int) driverColumn {
	loc := time.UTC
	if t.Root == metadata.TimestampLTZ && c.loc != nil {
		loc = c.loc
	}
	vals := a.TimestampValues()
	out := make([]time.Time, n)
	conv := func(v int64) time.Time { return time.Unix(0, v) }
	switch a.DataType().(*arrow.TimestampType).Unit {
	case arrow.Second:
		conv = func(v int64) time.Time { return time.Unix(v, 0) }
	case arrow.Millisecond:
		conv = time.UnixMilli
	case arrow.Microsecond:
		conv = time.UnixMicro
	}
	for p := range out {
		out[p] = conv(int64(vals[rowOf(sel, p)])).In(loc)
	}
	return typedColumn(typeWordTime, out)
}
