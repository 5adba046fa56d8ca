package lakeunion

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
)

// appendFrom appends row i of arr, a column of type t, to b, a builder of
// the same Arrow type. Flat types are copied without boxing; the others
// go through metadata.ValueAt and AppendValue.
func appendFrom(b array.Builder, arr arrow.Array, t metadata.DataType, i int) error {
	if arr.IsNull(i) {
		b.AppendNull()
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		if bb, ok := b.(*array.BooleanBuilder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Int8:
		if bb, ok := b.(*array.Int8Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Int16:
		if bb, ok := b.(*array.Int16Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Int32:
		if bb, ok := b.(*array.Int32Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Int64:
		if bb, ok := b.(*array.Int64Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Float32:
		if bb, ok := b.(*array.Float32Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Float64:
		if bb, ok := b.(*array.Float64Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.String:
		if bb, ok := b.(*array.StringBuilder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Binary:
		if bb, ok := b.(*array.BinaryBuilder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Date32:
		if bb, ok := b.(*array.Date32Builder); ok {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Timestamp:
		if bb, ok := b.(*array.TimestampBuilder); ok && arrow.TypeEqual(a.DataType(), bb.Type()) {
			bb.Append(a.Value(i))
			return nil
		}
	case *array.Decimal128:
		if bb, ok := b.(*array.Decimal128Builder); ok && arrow.TypeEqual(a.DataType(), bb.Type()) {
			bb.Append(a.Value(i))
			return nil
		}
	}
	return metadata.AppendValue(b, t, metadata.ValueAt(arr, t, i))
}

// appendRange appends rows [from, to) of arr, a column of type t, to b, a
// builder of the same Arrow type: fixed-width columns in one bulk copy,
// strings without a type switch per row, the rest row by row.
func appendRange(b array.Builder, arr arrow.Array, t metadata.DataType, from, to int) error {
	if from >= to {
		return nil
	}
	var valid []bool
	if arr.NullN() > 0 {
		valid = make([]bool, to-from)
		for i := range valid {
			valid[i] = arr.IsValid(from + i)
		}
	}
	switch a := arr.(type) {
	case *array.Int8:
		if bb, ok := b.(*array.Int8Builder); ok {
			bb.AppendValues(a.Int8Values()[from:to], valid)
			return nil
		}
	case *array.Int16:
		if bb, ok := b.(*array.Int16Builder); ok {
			bb.AppendValues(a.Int16Values()[from:to], valid)
			return nil
		}
	case *array.Int32:
		if bb, ok := b.(*array.Int32Builder); ok {
			bb.AppendValues(a.Int32Values()[from:to], valid)
			return nil
		}
	case *array.Int64:
		if bb, ok := b.(*array.Int64Builder); ok {
			bb.AppendValues(a.Int64Values()[from:to], valid)
			return nil
		}
	case *array.Float32:
		if bb, ok := b.(*array.Float32Builder); ok {
			bb.AppendValues(a.Float32Values()[from:to], valid)
			return nil
		}
	case *array.Float64:
		if bb, ok := b.(*array.Float64Builder); ok {
			bb.AppendValues(a.Float64Values()[from:to], valid)
			return nil
		}
	case *array.Date32:
		if bb, ok := b.(*array.Date32Builder); ok {
			bb.AppendValues(a.Date32Values()[from:to], valid)
			return nil
		}
	case *array.Timestamp:
		if bb, ok := b.(*array.TimestampBuilder); ok && arrow.TypeEqual(a.DataType(), bb.Type()) {
			bb.AppendValues(a.TimestampValues()[from:to], valid)
			return nil
		}
	case *array.String:
		if bb, ok := b.(*array.StringBuilder); ok {
			for i := from; i < to; i++ {
				if a.IsNull(i) {
					bb.AppendNull()
				} else {
					bb.Append(a.Value(i))
				}
			}
			return nil
		}
	}
	for i := from; i < to; i++ {
		if err := appendFrom(b, arr, t, i); err != nil {
			return err
		}
	}
	return nil
}

// checkColumns reports whether rec has exactly the columns of schema, by
// Arrow type, so that its columns can be put under schema without
// array.NewRecordBatch panicking.
func checkColumns(rec arrow.RecordBatch, schema *arrow.Schema, what string) error {
	if int(rec.NumCols()) != schema.NumFields() {
		return fmt.Errorf("%w: %s has %d columns, want %d", metadata.ErrCorrupt, what, rec.NumCols(), schema.NumFields())
	}
	for i, f := range schema.Fields() {
		if got := rec.Column(i).DataType(); !arrow.TypeEqual(got, f.Type) {
			return fmt.Errorf("%w: %s column %d (%s) is %s, want %s", metadata.ErrCorrupt, what, i, f.Name, got, f.Type)
		}
	}
	return nil
}
