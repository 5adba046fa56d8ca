package metadata

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Values travel between layers (literals, parameters, partition values,
// statistics, rows to write) in one canonical Go form per type root:
//
//	BOOLEAN                     bool
//	TINYINT SMALLINT INT BIGINT int64
//	FLOAT DOUBLE                float64 (FLOAT: a value a float32 holds exactly)
//	DECIMAL                     DecimalValue with Scale equal to the type's scale
//	CHAR STRING                 string (valid UTF-8)
//	BINARY BYTES                []byte
//	DATE                        DateValue
//	TIME                        TimeValue, truncated to the type's precision
//	TIMESTAMP TIMESTAMP_LTZ     time.Time in UTC (TIMESTAMP: the wall clock read as UTC),
//	                            truncated to the type's precision
//	ARRAY                       []any
//	MAP                         MapValue
//	ROW                         []any (one value per field)
//	NULL                        nil
//
// A value held for a column has already been checked against the column's
// type (range, precision, length); CoerceValue is the one place that does it.

// DecimalValue is an exact decimal number: Num × 10^-Scale.
type DecimalValue struct {
	Num   decimal128.Num
	Scale int32
}

// DateValue is a day count since 1970-01-01.
type DateValue int32

// TimeValue is nanoseconds since midnight.
type TimeValue int64

// MapValue is a MAP value: parallel keys and values, keys unique.
type MapValue struct {
	Keys   []any
	Values []any
}

// Time returns the day as midnight UTC.
func (d DateValue) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// DateOf returns the day of t's wall clock in t's location.
func DateOf(t time.Time) DateValue {
	y, m, d := t.Date()
	return DateValue(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// Time returns the time of day on 1970-01-01 UTC.
func (t TimeValue) Time() time.Time { return time.Unix(0, int64(t)).UTC() }

// Compare orders two canonical values of the same type family: -1, 0 or +1.
//
// int64, float64 and DecimalValue compare exactly as numbers with each
// other (no rounding through float64). NaN sorts after every other number
// and equals itself; -0 equals 0. Strings and bytes compare byte-wise,
// false sorts before true, []any (ARRAY, ROW) compare element by element.
// nil sorts before everything and equals nil. Values of unrelated families
// never panic: they are ordered by family, which callers should not rely on.
func Compare(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		default:
			return 1
		}
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return compareIntFloat(x, y)
		case DecimalValue:
			return NewDecimal(x, 0).Cmp(y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return CompareFloat(x, y)
		case int64:
			return -compareIntFloat(y, x)
		case DecimalValue:
			return -compareDecimalFloat(y, x)
		}
	case DecimalValue:
		switch y := b.(type) {
		case DecimalValue:
			return x.Cmp(y)
		case int64:
			return x.Cmp(NewDecimal(y, 0))
		case float64:
			return compareDecimalFloat(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0
			case !x:
				return -1
			default:
				return 1
			}
		}
	case DateValue:
		if y, ok := b.(DateValue); ok {
			return cmp.Compare(x, y)
		}
	case TimeValue:
		if y, ok := b.(TimeValue); ok {
			return cmp.Compare(x, y)
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case []any:
		if y, ok := b.([]any); ok {
			return compareSlices(x, y)
		}
	case MapValue:
		if y, ok := b.(MapValue); ok {
			if c := compareSlices(x.Keys, y.Keys); c != 0 {
				return c
			}
			return compareSlices(x.Values, y.Values)
		}
	}
	return cmp.Compare(family(a), family(b))
}

func compareSlices(x, y []any) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(x), len(y))
}

// family ranks the canonical forms so that unrelated values still order
// deterministically.
func family(v any) int {
	switch v.(type) {
	case bool:
		return 1
	case int64, float64, DecimalValue:
		return 2
	case string:
		return 3
	case []byte:
		return 4
	case DateValue:
		return 5
	case TimeValue:
		return 6
	case time.Time:
		return 7
	case []any:
		return 8
	case MapValue:
		return 9
	}
	return 10
}

// CompareFloat orders floats as Compare does: NaN above every number and
// equal to itself, so that sorting and statistics have one total order.
func CompareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}

// compareIntFloat compares without converting x to float64, which would
// round above 2^53.
func compareIntFloat(x int64, f float64) int {
	switch {
	case math.IsNaN(f):
		return -1
	case f >= 9223372036854775808.0: // 2^63, beyond every int64
		return -1
	case f < -9223372036854775808.0:
		return 1
	}
	t := int64(f) // exact: |f| < 2^63, truncated toward zero
	if c := cmp.Compare(x, t); c != 0 {
		return c
	}
	frac := f - float64(t)
	switch {
	case frac > 0:
		return -1
	case frac < 0:
		return 1
	}
	return 0
}

func compareDecimalFloat(d DecimalValue, f float64) int {
	switch {
	case math.IsNaN(f), math.IsInf(f, 1):
		return -1
	case math.IsInf(f, -1):
		return 1
	}
	var fr big.Rat
	fr.SetFloat64(f)
	dr := new(big.Rat).SetFrac(d.Num.BigInt(), pow10(max(int(d.Scale), 0)))
	return dr.Cmp(&fr)
}
