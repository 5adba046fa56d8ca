package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
)

// Join keys are hashed by an encoding in which two values have the same
// bytes exactly when SQL's = holds between them (metadata.Compare, after
// MySQL's reading of a string as a number). The two sides of one equality
// may have different types, so each equality picks a domain both sides
// encode into.

type keyDomain uint8

const (
	// domInt: both sides integers, read as int64.
	domInt keyDomain = iota
	// domRaw: both sides of one Arrow type; appendKey's encoding.
	domRaw
	// domNumeric: numbers of different kinds (or a number and a string),
	// in an exact canonical form.
	domNumeric
	// domTime: timestamps of different precisions, as instants.
	domTime
	// domValue: other pairs Compare accepts, by their canonical values.
	domValue
)

// keyDomainOf chooses how an equality between values of types a and b is
// hashed, or fails when = cannot compare them.
func keyDomainOf(a, b metadata.DataType) (keyDomain, error) {
	if a.Root == 0 {
		a = b // an untyped NULL: every value of that side is NULL
	}
	if b.Root == 0 {
		b = a
	}
	if a.Root == 0 {
		return domRaw, nil
	}
	if !comparable(a, b) {
		return 0, fmt.Errorf("cannot compare %s with %s in a join key: %w", a, b, metadata.ErrUnsupported)
	}
	switch {
	case a.IsInteger() && b.IsInteger():
		return domInt, nil
	case a.IsString() && b.IsString():
		return domRaw, nil
	case a.IsNumeric() != b.IsNumeric():
		return domNumeric, nil // a number and a string
	case arrow.TypeEqual(a.ArrowType(), b.ArrowType()):
		return domRaw, nil
	case a.IsNumeric():
		return domNumeric, nil
	case isTimestamp(a) && isTimestamp(b):
		return domTime, nil
	}
	return domValue, nil
}

func isTimestamp(t metadata.DataType) bool {
	return t.Root == metadata.Timestamp || t.Root == metadata.TimestampLTZ
}

// appendDomainKey appends the encoding of row i of arr (of type t) in
// domain d. A NULL is one zero byte, which no value's encoding is.
func appendDomainKey(dst []byte, d keyDomain, arr arrow.Array, t metadata.DataType, i int) []byte {
	if arr.IsNull(i) {
		return append(dst, 0)
	}
	switch d {
	case domInt:
		dst = append(dst, 1)
		return binary.LittleEndian.AppendUint64(dst, uint64(intGetter(arr)(i)))
	case domRaw:
		return appendKey(dst, arr, t, i)
	case domNumeric:
		v := metadata.ValueAt(arr, t, i)
		if s, ok := v.(string); ok {
			v = mysqlNumber(s)
		}
		return appendNumericKey(dst, v)
	case domTime:
		if x, ok := metadata.ValueAt(arr, t, i).(time.Time); ok {
			dst = append(dst, 't')
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x.Unix()))
			return binary.LittleEndian.AppendUint32(dst, uint32(x.Nanosecond()))
		}
	}
	return appendValueKey(dst, t, metadata.ValueAt(arr, t, i))
}

// appendValueKey encodes a canonical value by its Go type.
func appendValueKey(dst []byte, t metadata.DataType, v any) []byte {
	switch x := v.(type) {
	case int64, float64, metadata.DecimalValue:
		return appendNumericKey(dst, v)
	case string:
		dst = append(dst, 's')
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...)
	case []byte:
		dst = append(dst, 'b')
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...)
	case bool:
		if x {
			return append(dst, 'B', 1)
		}
		return append(dst, 'B', 0)
	case metadata.DateValue:
		return binary.LittleEndian.AppendUint32(append(dst, 'D'), uint32(x))
	case metadata.TimeValue:
		return binary.LittleEndian.AppendUint64(append(dst, 'T'), uint64(x))
	case time.Time:
		dst = binary.LittleEndian.AppendUint64(append(dst, 't'), uint64(x.Unix()))
		return binary.LittleEndian.AppendUint32(dst, uint32(x.Nanosecond()))
	}
	s := metadata.FormatValue(t, v)
	dst = append(dst, 'x')
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendNumericKey encodes a number by its exact value: an integer that
// fits BIGINT as 'i' and eight bytes, whatever its type; another value a
// DECIMAL can hold as 'd', its unscaled value without trailing zeros and
// its scale; any other DOUBLE (NaN, infinities, values beyond 38 digits)
// as 'f' and its bits, which only an equal DOUBLE has.
func appendNumericKey(dst []byte, v any) []byte {
	switch x := v.(type) {
	case int64:
		return appendIntKey(dst, x)
	case metadata.DecimalValue:
		return appendDecimalKey(dst, x.Num, x.Scale)
	case float64:
		if n, scale, ok := exactDecimal(x); ok {
			return appendDecimalKey(dst, n, scale)
		}
		return binary.LittleEndian.AppendUint64(append(dst, 'f'), floatBits(x))
	}
	return append(dst, 0)
}

func appendIntKey(dst []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, 'i'), uint64(v))
}

var ten = decimal128.FromI64(10)

func appendDecimalKey(dst []byte, n decimal128.Num, scale int32) []byte {
	for scale > 0 {
		q, r := n.Div(ten)
		if r.Sign() != 0 {
			break
		}
		n, scale = q, scale-1
	}
	if scale == 0 && fitsInt64(n) {
		return appendIntKey(dst, int64(n.LowBits()))
	}
	dst = append(dst, 'd')
	dst = binary.LittleEndian.AppendUint64(dst, n.LowBits())
	dst = binary.LittleEndian.AppendUint64(dst, uint64(n.HighBits()))
	return append(dst, byte(scale))
}

func fitsInt64(n decimal128.Num) bool {
	hi, lo := n.HighBits(), n.LowBits()
	return (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63)
}

// exactDecimal returns f as an unscaled value and scale when a DECIMAL
// holds it exactly (at most 38 digits, scale at most 38).
func exactDecimal(f float64) (decimal128.Num, int32, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return decimal128.Num{}, 0, false
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return decimal128.FromI64(int64(f)), 0, true
	}
	frac, exp := math.Frexp(f)
	mant := int64(frac * (1 << 53))
	exp -= 53
	for exp < 0 && mant%2 == 0 {
		mant /= 2
		exp++
	}
	n := big.NewInt(mant)
	scale := 0
	if exp >= 0 {
		n.Lsh(n, uint(exp))
	} else {
		// m / 2^k = m * 5^k / 10^k: k decimal places, exactly.
		scale = -exp
		if scale > metadata.MaxDecimalPrecision {
			return decimal128.Num{}, 0, false
		}
		n.Mul(n, new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(scale)), nil))
	}
	if new(big.Int).Abs(n).Cmp(maxDecimal) > 0 {
		return decimal128.Num{}, 0, false
	}
	return decimal128.FromBigInt(n), int32(scale), true
}
