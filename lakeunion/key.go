package lakeunion

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
)

// keyEncoder computes metadata.EncodeOrderedKey of a row's key columns
// straight from Arrow arrays. The common key types (integers, DATE,
// strings) are encoded in place, without boxing a value; the others go
// through metadata.AppendOrderedKey. A test holds the two paths equal.
type keyEncoder struct {
	types []metadata.DataType
	// one reused pair for the slow path, so it does not allocate slices
	// per row
	oneType  [1]metadata.DataType
	oneValue [1]any
}

func newKeyEncoder(types []metadata.DataType) *keyEncoder {
	return &keyEncoder{types: types}
}

// appendKey appends the key of row i of cols (one array per key column, in
// key order) to dst.
func (e *keyEncoder) appendKey(dst []byte, cols []arrow.Array, i int) ([]byte, error) {
	for f, arr := range cols {
		t := e.types[f]
		if arr.IsNull(i) {
			return nil, fmt.Errorf("%w: key column %d (%s) is NULL", metadata.ErrCorrupt, f, t)
		}
		switch a := arr.(type) {
		case *array.Int8:
			if t.Root == metadata.TinyInt {
				dst = append(dst, uint8(a.Value(i))^0x80)
				continue
			}
		case *array.Int16:
			if t.Root == metadata.SmallInt {
				dst = binary.BigEndian.AppendUint16(dst, uint16(a.Value(i))^0x8000)
				continue
			}
		case *array.Int32:
			if t.Root == metadata.Int {
				dst = binary.BigEndian.AppendUint32(dst, uint32(a.Value(i))^0x80000000)
				continue
			}
		case *array.Int64:
			if t.Root == metadata.BigInt {
				dst = binary.BigEndian.AppendUint64(dst, uint64(a.Value(i))^(1<<63))
				continue
			}
		case *array.Date32:
			if t.Root == metadata.Date {
				dst = binary.BigEndian.AppendUint32(dst, uint32(a.Value(i))^0x80000000)
				continue
			}
		case *array.String:
			if t.Root == metadata.String {
				dst = appendEscaped(dst, a.Value(i))
				continue
			}
		}
		e.oneType[0], e.oneValue[0] = t, metadata.ValueAt(arr, t, i)
		var err error
		if dst, err = metadata.AppendOrderedKey(dst, e.oneType[:], e.oneValue[:]); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// appendEscaped is the string field of metadata.EncodeOrderedKey: each
// 0x00 written 0x00 0xFF, then the terminator 0x00 0x01.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}
