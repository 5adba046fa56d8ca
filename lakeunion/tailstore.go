package lakeunion

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
)

// colStore holds one column of the folded tail: one slot per distinct
// key, overwritten in place by each later change of that key, so the fold
// keeps the last row per key and nothing else. Values are copied out of
// the log batch (strings and bytes included), since a batch is only valid
// until the log reader's next Next.
type colStore interface {
	// add appends an empty slot.
	add()
	// grow makes room for n more slots without another allocation.
	grow(n int)
	// set stores row i of arr in slot.
	set(slot int, arr arrow.Array, i int) error
	// emit appends slot's value to b.
	emit(b array.Builder, slot int) error
}

// newColStore returns the store of a column of type t: typed for flat
// types, boxed canonical values for the rest.
func newColStore(t metadata.DataType) colStore {
	switch t.ArrowType().(type) {
	case *arrow.BooleanType:
		return &primStore[bool]{}
	case *arrow.Int8Type:
		return &primStore[int8]{}
	case *arrow.Int16Type:
		return &primStore[int16]{}
	case *arrow.Int32Type:
		return &primStore[int32]{}
	case *arrow.Int64Type:
		return &primStore[int64]{}
	case *arrow.Float32Type:
		return &primStore[float32]{}
	case *arrow.Float64Type:
		return &primStore[float64]{}
	case *arrow.Decimal128Type:
		return &primStore[decimal128.Num]{}
	case *arrow.Date32Type:
		return &primStore[arrow.Date32]{}
	case *arrow.Time32Type:
		return &primStore[arrow.Time32]{}
	case *arrow.Time64Type:
		return &primStore[arrow.Time64]{}
	case *arrow.TimestampType:
		return &primStore[arrow.Timestamp]{}
	case *arrow.StringType:
		return &stringStore{}
	case *arrow.BinaryType, *arrow.FixedSizeBinaryType:
		return &bytesStore{}
	}
	return &anyStore{t: t}
}

// valuer is an Arrow array of T values.
type valuer[T any] interface {
	arrow.Array
	Value(int) T
}

// appender is an Arrow builder of T values.
type appender[T any] interface {
	array.Builder
	Append(T)
}

func mismatch(arr arrow.Array, want string) error {
	return fmt.Errorf("%w: tail column is %s, want %s", metadata.ErrCorrupt, arr.DataType(), want)
}

// primStore stores fixed-width values and their validity.
type primStore[T any] struct {
	vals  []T
	valid []bool
}

func (s *primStore[T]) grow(n int) {
	s.vals = slices.Grow(s.vals, n)
	s.valid = slices.Grow(s.valid, n)
}

func (s *primStore[T]) add() {
	var zero T
	s.vals = append(s.vals, zero)
	s.valid = append(s.valid, false)
}

func (s *primStore[T]) set(slot int, arr arrow.Array, i int) error {
	a, ok := arr.(valuer[T])
	if !ok {
		return mismatch(arr, fmt.Sprintf("%T", s.vals))
	}
	if s.valid[slot] = a.IsValid(i); s.valid[slot] {
		s.vals[slot] = a.Value(i)
	}
	return nil
}

func (s *primStore[T]) emit(b array.Builder, slot int) error {
	bb, ok := b.(appender[T])
	if !ok {
		return fmt.Errorf("%w: builder %T for %T values", metadata.ErrUnsupported, b, s.vals)
	}
	if s.valid[slot] {
		bb.Append(s.vals[slot])
	} else {
		bb.AppendNull()
	}
	return nil
}

// stringStore stores strings, cloned out of the batch.
type stringStore struct {
	vals  []string
	valid []bool
}

func (s *stringStore) grow(n int) {
	s.vals = slices.Grow(s.vals, n)
	s.valid = slices.Grow(s.valid, n)
}

func (s *stringStore) add() {
	s.vals = append(s.vals, "")
	s.valid = append(s.valid, false)
}

func (s *stringStore) set(slot int, arr arrow.Array, i int) error {
	a, ok := arr.(*array.String)
	if !ok {
		return mismatch(arr, "utf8")
	}
	if s.valid[slot] = a.IsValid(i); s.valid[slot] {
		s.vals[slot] = strings.Clone(a.Value(i))
	} else {
		s.vals[slot] = ""
	}
	return nil
}

func (s *stringStore) emit(b array.Builder, slot int) error {
	bb, ok := b.(*array.StringBuilder)
	if !ok {
		return fmt.Errorf("%w: builder %T for strings", metadata.ErrUnsupported, b)
	}
	if s.valid[slot] {
		bb.Append(s.vals[slot])
	} else {
		bb.AppendNull()
	}
	return nil
}

// bytesStore stores BYTES and BINARY(n) values, copied out of the batch;
// nil is NULL.
type bytesStore struct{ vals [][]byte }

func (s *bytesStore) grow(n int) { s.vals = slices.Grow(s.vals, n) }

func (s *bytesStore) add() { s.vals = append(s.vals, nil) }

func (s *bytesStore) set(slot int, arr arrow.Array, i int) error {
	a, ok := arr.(valuer[[]byte])
	if !ok {
		return mismatch(arr, "binary")
	}
	if a.IsNull(i) {
		s.vals[slot] = nil
		return nil
	}
	// Reuse the slot's buffer: a key updated again and again costs no new
	// allocation once its buffer is large enough.
	s.vals[slot] = append(s.vals[slot][:0:cap(s.vals[slot])], a.Value(i)...)
	if s.vals[slot] == nil {
		s.vals[slot] = []byte{}
	}
	return nil
}

func (s *bytesStore) emit(b array.Builder, slot int) error {
	bb, ok := b.(appender[[]byte])
	if !ok {
		return fmt.Errorf("%w: builder %T for bytes", metadata.ErrUnsupported, b)
	}
	if s.vals[slot] == nil {
		bb.AppendNull()
	} else {
		bb.Append(s.vals[slot])
	}
	return nil
}

// anyStore stores canonical values (metadata.ValueAt) of nested types.
type anyStore struct {
	t    metadata.DataType
	vals []any
}

func (s *anyStore) grow(n int) { s.vals = slices.Grow(s.vals, n) }

func (s *anyStore) add() { s.vals = append(s.vals, nil) }

func (s *anyStore) set(slot int, arr arrow.Array, i int) error {
	s.vals[slot] = metadata.ValueAt(arr, s.t, i)
	return nil
}

func (s *anyStore) emit(b array.Builder, slot int) error {
	return metadata.AppendValue(b, s.t, s.vals[slot])
}
