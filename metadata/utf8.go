package metadata

import (
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// CheckUTF8 checks that every text in arr, a column of type t, is valid
// UTF-8: its STRING, CHAR and VARCHAR values, also inside arrays, maps
// and rows. Parquet, and every engine that reads the lake, takes STRING
// to be UTF-8, and INSERT refuses anything else, so a record must too. It
// returns the first row (0-based) holding invalid text and an error
// wrapping ErrInvalidValue that quotes its value, or -1 and nil.
//
// A column whose values are all valid costs one pass of utf8.Valid over
// its data and a look at the first byte of each value; the offending row
// is searched for only when that fails.
func CheckUTF8(arr arrow.Array, t DataType) (int, error) {
	r := invalidUTF8Row(arr)
	if r < 0 {
		return -1, nil
	}
	if _, err := CoerceValue(t, ValueAt(arr, t, r)); err != nil {
		return r, err
	}
	return r, fmt.Errorf("%w: value is not valid UTF-8 text for %s", ErrInvalidValue, t)
}

// invalidUTF8Row is the first valid (non-NULL) row of arr holding text
// that is not UTF-8, or -1.
func invalidUTF8Row(arr arrow.Array) int {
	switch a := arr.(type) {
	case *array.String:
		if textValid(a.ValueBytes(), a.ValueOffsets()) {
			return -1
		}
		for i := range a.Len() {
			if a.IsValid(i) && !utf8.ValidString(a.Value(i)) {
				return i
			}
		}
	case array.ListLike:
		if invalidUTF8Row(a.ListValues()) < 0 {
			return -1
		}
		// The values may hold invalid text only under NULL rows, which
		// nobody reads; look row by row.
		for i := range a.Len() {
			if !a.IsValid(i) {
				continue
			}
			start, end := a.ValueOffsets(i)
			vals := array.NewSlice(a.ListValues(), start, end)
			bad := invalidUTF8Row(vals) >= 0
			vals.Release()
			if bad {
				return i
			}
		}
	case *array.Struct:
		first := -1
		for f := range a.NumField() {
			r := invalidUTF8Row(a.Field(f))
			for r >= 0 && !a.IsValid(r) {
				// Under a NULL row: look past it.
				rest := array.NewSlice(a.Field(f), int64(r+1), int64(a.Len()))
				next := invalidUTF8Row(rest)
				rest.Release()
				if next < 0 {
					r = -1
				} else {
					r += 1 + next
				}
			}
			if r >= 0 && (first < 0 || r < first) {
				first = r
			}
		}
		return first
	}
	return -1
}

// textValid reports whether each of the values that offsets cut data into
// is valid UTF-8. data as a whole being valid is not enough: a character
// cut in two by a value boundary is valid across the boundary and
// invalid in both values. In valid UTF-8 a boundary inside a character
// falls on a continuation byte (10xxxxxx), so a boundary on any other
// byte cuts none.
func textValid(data []byte, offsets []int32) bool {
	if !utf8.Valid(data) {
		return false
	}
	if len(offsets) == 0 {
		return true
	}
	base := offsets[0]
	for _, o := range offsets[1:] {
		if i := int(o - base); i < len(data) && data[i]&0xC0 == 0x80 {
			return false
		}
	}
	return true
}
