package metadata

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// ArrowType is the Arrow type that holds values of t, as Fluss maps it:
// integers to Int8..Int64, FLOAT/DOUBLE to Float32/64, CHAR/STRING to Utf8,
// BINARY(n) to FixedSizeBinary(n), BYTES to Binary, DECIMAL to
// Decimal128(p, s), DATE to Date32, TIME and the timestamps to the unit
// their precision needs (0: s, 1-3: ms, 4-6: us, 7-9: ns; TIME in Time32 up
// to ms, Time64 above), ARRAY to List, MAP to Map and ROW to Struct.
// Timestamps carry no time zone: TIMESTAMP_LTZ is told apart from
// TIMESTAMP by the schema, as in Fluss's Java writer. Nested elements and
// fields are nullable, map keys are not. An invalid t yields Null.
func (t DataType) ArrowType() arrow.DataType {
	switch t.Root {
	case Boolean:
		return arrow.FixedWidthTypes.Boolean
	case TinyInt:
		return arrow.PrimitiveTypes.Int8
	case SmallInt:
		return arrow.PrimitiveTypes.Int16
	case Int:
		return arrow.PrimitiveTypes.Int32
	case BigInt:
		return arrow.PrimitiveTypes.Int64
	case Float:
		return arrow.PrimitiveTypes.Float32
	case Double:
		return arrow.PrimitiveTypes.Float64
	case Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Char, String:
		return arrow.BinaryTypes.String
	case Binary:
		return &arrow.FixedSizeBinaryType{ByteWidth: t.Length}
	case Bytes:
		return arrow.BinaryTypes.Binary
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Time:
		switch unit := timeUnit(t.Precision); unit {
		case arrow.Second, arrow.Millisecond:
			return &arrow.Time32Type{Unit: unit}
		default:
			return &arrow.Time64Type{Unit: unit}
		}
	case Timestamp, TimestampLTZ:
		return &arrow.TimestampType{Unit: timeUnit(t.Precision)}
	case Array:
		if t.Elem == nil {
			return arrow.Null
		}
		return arrow.ListOf(t.Elem.ArrowType())
	case Map:
		if t.Elem == nil || t.Value == nil {
			return arrow.Null
		}
		return arrow.MapOf(t.Elem.ArrowType(), t.Value.ArrowType())
	case Row:
		fields := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = arrow.Field{Name: f.Name, Type: f.Type.ArrowType(), Nullable: true}
		}
		return arrow.StructOf(fields...)
	}
	return arrow.Null
}

// timeUnit is the Arrow unit that holds precision p (fraction digits).
func timeUnit(p int) arrow.TimeUnit {
	switch {
	case p <= 0:
		return arrow.Second
	case p <= 3:
		return arrow.Millisecond
	case p <= 6:
		return arrow.Microsecond
	}
	return arrow.Nanosecond
}

// ArrowSchema is the Arrow schema of cols; a field is nullable unless its
// column is NOT NULL.
func ArrowSchema(cols []Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: !c.NotNull}
	}
	return arrow.NewSchema(fields, nil)
}

// AppendValue appends one canonical value of type t (nil: NULL) to b, a
// builder made for t.ArrowType(). A value of the wrong Go type, or one out
// of the Arrow type's range, is ErrInvalidValue and leaves b unchanged for
// scalars; CoerceValue first to get canonical values. For nested values a
// failure part-way leaves a partial element behind, so the builder should
// then be discarded.
func AppendValue(b array.Builder, t DataType, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	wrong := func() error {
		return fmt.Errorf("%w: cannot append %s value %s to an Arrow %s column of type %s", ErrInvalidValue, goKind(v), describe(v), b.Type(), t)
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return wrong()
		}
		bb.Append(x)
	case *array.Int8Builder:
		x, ok := v.(int64)
		if !ok || x < math.MinInt8 || x > math.MaxInt8 {
			return wrong()
		}
		bb.Append(int8(x))
	case *array.Int16Builder:
		x, ok := v.(int64)
		if !ok || x < math.MinInt16 || x > math.MaxInt16 {
			return wrong()
		}
		bb.Append(int16(x))
	case *array.Int32Builder:
		x, ok := v.(int64)
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return wrong()
		}
		bb.Append(int32(x))
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return wrong()
		}
		bb.Append(x)
	case *array.Float32Builder:
		x, ok := v.(float64)
		if !ok {
			return wrong()
		}
		bb.Append(float32(x))
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return wrong()
		}
		bb.Append(x)
	case *array.Decimal128Builder:
		x, ok := v.(DecimalValue)
		if !ok {
			return wrong()
		}
		dt := bb.Type().(*arrow.Decimal128Type)
		r, ok := x.Rescale(dt.Scale)
		if !ok || !r.Num.FitsInPrecision(dt.Precision) {
			return wrong()
		}
		bb.Append(r.Num)
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return wrong()
		}
		bb.Append(x)
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return wrong()
		}
		bb.Append(x)
	case *array.FixedSizeBinaryBuilder:
		x, ok := v.([]byte)
		if !ok || len(x) != bb.Type().(*arrow.FixedSizeBinaryType).ByteWidth {
			return wrong()
		}
		bb.Append(x)
	case *array.Date32Builder:
		x, ok := v.(DateValue)
		if !ok {
			return wrong()
		}
		bb.Append(arrow.Date32(x))
	case *array.Time32Builder:
		x, ok := v.(TimeValue)
		n, in := TimeIn(x, bb.Type().(*arrow.Time32Type).Unit)
		if !ok || !in {
			return wrong()
		}
		bb.Append(arrow.Time32(n))
	case *array.Time64Builder:
		x, ok := v.(TimeValue)
		n, in := TimeIn(x, bb.Type().(*arrow.Time64Type).Unit)
		if !ok || !in {
			return wrong()
		}
		bb.Append(arrow.Time64(n))
	case *array.TimestampBuilder:
		x, ok := v.(time.Time)
		if !ok {
			return wrong()
		}
		n, ok := timestampIn(x, bb.Type().(*arrow.TimestampType).Unit)
		if !ok {
			return wrong()
		}
		bb.Append(arrow.Timestamp(n))
	case *array.MapBuilder:
		x, ok := v.(MapValue)
		if !ok || t.Root != Map || t.Elem == nil || t.Value == nil || len(x.Keys) != len(x.Values) {
			return wrong()
		}
		for _, k := range x.Keys {
			if k == nil {
				return fmt.Errorf("%w: NULL key in %s", ErrInvalidValue, t)
			}
		}
		bb.Append(true)
		kb, ib := bb.KeyBuilder(), bb.ItemBuilder()
		for i := range x.Keys {
			if err := AppendValue(kb, *t.Elem, x.Keys[i]); err != nil {
				return err
			}
			if err := AppendValue(ib, *t.Value, x.Values[i]); err != nil {
				return err
			}
		}
	case *array.ListBuilder:
		x, ok := v.([]any)
		if !ok || t.Root != Array || t.Elem == nil {
			return wrong()
		}
		bb.Append(true)
		eb := bb.ValueBuilder()
		for _, e := range x {
			if err := AppendValue(eb, *t.Elem, e); err != nil {
				return err
			}
		}
	case *array.StructBuilder:
		x, ok := v.([]any)
		if !ok || t.Root != Row || len(x) != len(t.Fields) || bb.NumField() != len(x) {
			return wrong()
		}
		bb.Append(true)
		for i, f := range t.Fields {
			if err := AppendValue(bb.FieldBuilder(i), f.Type, x[i]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: no Arrow builder %T for %s", ErrUnsupported, b, t)
	}
	return nil
}

func unitNanos(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	}
	return 1
}

// TimeIn counts x, a time of day, in unit as a TIME column of that unit
// stores it; ok is false when x is not within a day.
func TimeIn(x TimeValue, u arrow.TimeUnit) (int64, bool) {
	if x < 0 || int64(x) >= nanosPerDay {
		return 0, false
	}
	return int64(x) / unitNanos(u), true
}

// TimestampIn counts t in unit since the epoch, rounding toward the past,
// as a TIMESTAMP column of that unit stores it; ok is false when it does
// not fit.
func TimestampIn(t time.Time, u arrow.TimeUnit) (int64, bool) { return timestampIn(t, u) }

// timestampIn counts t in unit since the epoch, rounding toward the past.
func timestampIn(t time.Time, u arrow.TimeUnit) (int64, bool) {
	switch u {
	case arrow.Second:
		return t.Unix(), true
	case arrow.Millisecond:
		return t.UnixMilli(), true
	case arrow.Microsecond:
		return t.UnixMicro(), true
	}
	if !nanosRepresentable(t) {
		return 0, false
	}
	return t.UnixNano(), true
}

// ValueAt returns row i of arr as a canonical value of type t, nil when it
// is null. Strings and bytes are copied out of Arrow's buffers, so the
// result outlives arr. Timestamps of any unit come back as time.Time in
// UTC. An array that does not match t yields nil rather than a panic.
func ValueAt(arr arrow.Array, t DataType, i int) any {
	if i < 0 || i >= arr.Len() || arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return DecimalValue{Num: decimal128.Num(a.Value(i)), Scale: a.DataType().(*arrow.Decimal128Type).Scale}
	case *array.String:
		return strings.Clone(a.Value(i))
	case *array.LargeString:
		return strings.Clone(a.Value(i))
	case *array.Binary:
		return append([]byte{}, a.Value(i)...)
	case *array.LargeBinary:
		return append([]byte{}, a.Value(i)...)
	case *array.FixedSizeBinary:
		return append([]byte{}, a.Value(i)...)
	case *array.Date32:
		return DateValue(a.Value(i))
	case *array.Time32:
		return TimeValue(int64(a.Value(i)) * unitNanos(a.DataType().(*arrow.Time32Type).Unit))
	case *array.Time64:
		return TimeValue(int64(a.Value(i)) * unitNanos(a.DataType().(*arrow.Time64Type).Unit))
	case *array.Timestamp:
		n := int64(a.Value(i))
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			return time.Unix(n, 0).UTC()
		case arrow.Millisecond:
			return time.UnixMilli(n).UTC()
		case arrow.Microsecond:
			return time.UnixMicro(n).UTC()
		}
		return time.Unix(0, n).UTC()
	case *array.Map:
		if t.Root != Map || t.Elem == nil || t.Value == nil {
			return nil
		}
		entries, ok := a.ListValues().(*array.Struct)
		if !ok || entries.NumField() != 2 {
			return nil
		}
		start, end := a.ValueOffsets(i)
		keys, items := entries.Field(0), entries.Field(1)
		m := MapValue{Keys: make([]any, 0, end-start), Values: make([]any, 0, end-start)}
		for j := int(start); j < int(end); j++ {
			m.Keys = append(m.Keys, ValueAt(keys, *t.Elem, j))
			m.Values = append(m.Values, ValueAt(items, *t.Value, j))
		}
		return m
	case *array.List:
		if t.Root != Array || t.Elem == nil {
			return nil
		}
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			out = append(out, ValueAt(vals, *t.Elem, j))
		}
		return out
	case *array.Struct:
		if t.Root != Row || a.NumField() != len(t.Fields) {
			return nil
		}
		out := make([]any, len(t.Fields))
		for j, f := range t.Fields {
			out[j] = ValueAt(a.Field(j), f.Type, i)
		}
		return out
	}
	return nil
}
