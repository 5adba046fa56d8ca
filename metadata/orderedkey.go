package metadata

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// EncodeOrderedKey encodes key values so that bytes.Compare of two
// encodings orders them as Compare orders the values, field by field (a
// "memcomparable" encoding). It keys the KV store, orders KV snapshots and
// the log-tail fold, and sorts the lake. The fields are concatenated in key
// order; each field's length is implied by its type or by a terminator, so
// a shorter field never collides with a longer one:
//
//	BOOLEAN                 1 byte: 0 false, 1 true
//	TINYINT SMALLINT INT    the value in 1, 2, 4 or 8 big-endian bytes
//	BIGINT                  with the sign bit flipped
//	FLOAT DOUBLE            IEEE bits big-endian; positive numbers get the
//	                        sign bit set, negative ones every bit flipped;
//	                        -0 is written as 0 and every NaN as one NaN,
//	                        which sorts after +Inf (as Compare does)
//	DECIMAL(p<=18)          the unscaled value as BIGINT (8 bytes)
//	DECIMAL(p>18)           the unscaled 128-bit value: high 64 bits with
//	                        the sign bit flipped, then the low 64 bits
//	CHAR STRING BINARY      the bytes with each 0x00 written 0x00 0xFF,
//	BYTES                   then the terminator 0x00 0x01 (so a prefix
//	                        sorts before its extensions)
//	DATE                    days as INT (4 bytes)
//	TIME                    nanoseconds of the day as BIGINT (8 bytes)
//	TIMESTAMP[_LTZ]         Unix seconds as BIGINT, then the nanoseconds
//	                        within the second (4 bytes big-endian)
//
// Values are coerced to their types first (so decimals share the type's
// scale). NULL is ErrConstraint (key columns are NOT NULL); ARRAY, MAP and
// ROW are ErrUnsupported.
func EncodeOrderedKey(types []DataType, values []any) ([]byte, error) {
	return AppendOrderedKey(nil, types, values)
}

// AppendOrderedKey appends EncodeOrderedKey(types, values) to dst.
func AppendOrderedKey(dst []byte, types []DataType, values []any) ([]byte, error) {
	if len(types) != len(values) {
		return nil, fmt.Errorf("%w: %d key types but %d key values", ErrInvalidValue, len(types), len(values))
	}
	for i, t := range types {
		v, err := CoerceValue(t, values[i])
		if err != nil {
			return nil, fmt.Errorf("key field %d: %w", i, err)
		}
		if v == nil {
			return nil, fmt.Errorf("%w: key field %d (%s) must not be NULL", ErrConstraint, i, t)
		}
		if dst, err = appendOrderedField(dst, t, v); err != nil {
			return nil, fmt.Errorf("key field %d: %w", i, err)
		}
	}
	return dst, nil
}

const signBit64 = uint64(1) << 63

func appendOrderedField(buf []byte, t DataType, v any) ([]byte, error) {
	switch t.Root {
	case Boolean:
		if v.(bool) {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case TinyInt:
		return append(buf, uint8(int8(v.(int64)))^0x80), nil
	case SmallInt:
		return binary.BigEndian.AppendUint16(buf, uint16(int16(v.(int64)))^0x8000), nil
	case Int:
		return binary.BigEndian.AppendUint32(buf, uint32(int32(v.(int64)))^0x80000000), nil
	case BigInt:
		return binary.BigEndian.AppendUint64(buf, uint64(v.(int64))^signBit64), nil
	case Float:
		f := float32(v.(float64))
		var bits uint32
		switch {
		case f != f:
			bits = 0x7fc00000
		case f == 0:
			bits = 0
		default:
			bits = math.Float32bits(f)
		}
		if bits&0x80000000 != 0 {
			bits = ^bits
		} else {
			bits |= 0x80000000
		}
		return binary.BigEndian.AppendUint32(buf, bits), nil
	case Double:
		f := v.(float64)
		var bits uint64
		switch {
		case math.IsNaN(f):
			bits = 0x7ff8000000000000
		case f == 0:
			bits = 0
		default:
			bits = math.Float64bits(f)
		}
		if bits&signBit64 != 0 {
			bits = ^bits
		} else {
			bits |= signBit64
		}
		return binary.BigEndian.AppendUint64(buf, bits), nil
	case Decimal:
		d := v.(DecimalValue)
		if t.Precision <= 18 {
			return binary.BigEndian.AppendUint64(buf, uint64(d.Num.LowBits())^signBit64), nil
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(d.Num.HighBits())^signBit64)
		return binary.BigEndian.AppendUint64(buf, d.Num.LowBits()), nil
	case Char, String:
		return appendEscaped(buf, v.(string)), nil
	case Binary, Bytes:
		return appendEscaped(buf, v.([]byte)), nil
	case Date:
		return binary.BigEndian.AppendUint32(buf, uint32(int32(v.(DateValue)))^0x80000000), nil
	case Time:
		return binary.BigEndian.AppendUint64(buf, uint64(int64(v.(TimeValue)))^signBit64), nil
	case Timestamp, TimestampLTZ:
		ts := v.(time.Time)
		buf = binary.BigEndian.AppendUint64(buf, uint64(ts.Unix())^signBit64)
		return binary.BigEndian.AppendUint32(buf, uint32(ts.Nanosecond())), nil
	}
	return nil, fmt.Errorf("%w: %s cannot be part of a key", ErrUnsupported, t)
}

// appendEscaped writes s with 0x00 escaped as 0x00 0xFF and the terminator
// 0x00 0x01: the terminator sorts below every escaped byte, so "a" sorts
// before "a\x00" and before "ab".
func appendEscaped[S string | []byte](buf []byte, s S) []byte {
	i := 0
	for i < len(s) && s[i] != 0 {
		i++
	}
	buf = append(buf, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == 0 {
			buf = append(buf, 0, 0xFF)
		} else {
			buf = append(buf, s[i])
		}
	}
	return append(buf, 0, 1)
}

// DecodeOrderedKey is the inverse of EncodeOrderedKey: the canonical
// values of the fields of key, of types. A -0 comes back as 0 and every
// NaN as one NaN, as they were encoded; a timestamp comes back in UTC. A
// key that is not an encoding of types is ErrInvalidValue.
func DecodeOrderedKey(types []DataType, key []byte) ([]any, error) {
	out := make([]any, len(types))
	for i, t := range types {
		v, n, err := decodeOrderedField(t, key)
		if err != nil {
			return nil, fmt.Errorf("key field %d: %w", i, err)
		}
		out[i], key = v, key[n:]
	}
	if len(key) > 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last key field", ErrInvalidValue, len(key))
	}
	return out, nil
}

// decodeOrderedField decodes the field of type t at the start of buf and
// returns its value and length.
func decodeOrderedField(t DataType, buf []byte) (any, int, error) {
	if width := orderedFieldWidth(t); width > len(buf) {
		return nil, 0, fmt.Errorf("%w: %d bytes left for a %s field", ErrInvalidValue, len(buf), t)
	}
	switch t.Root {
	case Boolean:
		return buf[0] != 0, 1, nil
	case TinyInt:
		return int64(int8(buf[0] ^ 0x80)), 1, nil
	case SmallInt:
		return int64(int16(binary.BigEndian.Uint16(buf) ^ 0x8000)), 2, nil
	case Int:
		return int64(int32(binary.BigEndian.Uint32(buf) ^ 0x80000000)), 4, nil
	case BigInt:
		return int64(binary.BigEndian.Uint64(buf) ^ signBit64), 8, nil
	case Float:
		bits := binary.BigEndian.Uint32(buf)
		if bits&0x80000000 != 0 {
			bits &^= 0x80000000
		} else {
			bits = ^bits
		}
		return float64(math.Float32frombits(bits)), 4, nil
	case Double:
		bits := binary.BigEndian.Uint64(buf)
		if bits&signBit64 != 0 {
			bits &^= signBit64
		} else {
			bits = ^bits
		}
		return math.Float64frombits(bits), 8, nil
	case Decimal:
		if t.Precision <= 18 {
			return NewDecimal(int64(binary.BigEndian.Uint64(buf)^signBit64), int32(t.Scale)), 8, nil
		}
		hi := int64(binary.BigEndian.Uint64(buf) ^ signBit64)
		return DecimalValue{Num: decimal128.New(hi, binary.BigEndian.Uint64(buf[8:])), Scale: int32(t.Scale)}, 16, nil
	case Char, String, Binary, Bytes:
		var out []byte
		for i := 0; i+1 < len(buf); i++ {
			if buf[i] != 0 {
				out = append(out, buf[i])
				continue
			}
			switch buf[i+1] {
			case 0xFF:
				out = append(out, 0)
				i++
				continue
			case 1:
				if t.Root == Char || t.Root == String {
					return string(out), i + 2, nil
				}
				if out == nil {
					out = []byte{}
				}
				return out, i + 2, nil
			}
			return nil, 0, fmt.Errorf("%w: byte 0x%02x after 0x00 in a %s field", ErrInvalidValue, buf[i+1], t)
		}
		return nil, 0, fmt.Errorf("%w: unterminated %s field", ErrInvalidValue, t)
	case Date:
		return DateValue(int32(binary.BigEndian.Uint32(buf) ^ 0x80000000)), 4, nil
	case Time:
		return TimeValue(int64(binary.BigEndian.Uint64(buf) ^ signBit64)), 8, nil
	case Timestamp, TimestampLTZ:
		sec := int64(binary.BigEndian.Uint64(buf) ^ signBit64)
		return time.Unix(sec, int64(binary.BigEndian.Uint32(buf[8:]))).UTC(), 12, nil
	}
	return nil, 0, fmt.Errorf("%w: %s cannot be part of a key", ErrUnsupported, t)
}

// orderedFieldWidth is the length of a fixed-width field of type t; 0 for
// the terminated ones.
func orderedFieldWidth(t DataType) int {
	switch t.Root {
	case Boolean, TinyInt:
		return 1
	case SmallInt:
		return 2
	case Int, Float, Date:
		return 4
	case BigInt, Double, Time:
		return 8
	case Timestamp, TimestampLTZ:
		return 12
	case Decimal:
		if t.Precision <= 18 {
			return 8
		}
		return 16
	}
	return 0
}
