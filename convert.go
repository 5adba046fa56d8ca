package fluss

import (
	"database/sql/driver"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
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
		return wrap(func(i int) driver.Value { return append([]byte(nil), a.Value(i)...) })
	case *array.FixedSizeBinary:
		return wrap(func(i int) driver.Value { return append([]byte(nil), a.Value(i)...) })
	}
	// Decimal, temporal and nested types go through the canonical value.
	return wrap(func(i int) driver.Value {
		return c.value(t, metadata.ValueAt(arr, t, i))
	})
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
		return append([]byte(nil), x...)
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
