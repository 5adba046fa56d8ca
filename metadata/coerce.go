package metadata

import (
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// CoerceValue converts a Go value to the canonical form of type t (see
// value.go), checking that it fits. v may be what database/sql hands a
// driver or what a SQL literal holds: nil, bool, any integer or float kind,
// string, []byte, time.Time, DecimalValue, DateValue, TimeValue, MapValue,
// []any, any other slice, a map, a driver.Valuer, or a pointer to one of
// these. A value that does not fit is ErrInvalidValue naming the value and
// the type (e.g. "value 300 out of range for TINYINT").
//
// The rules, chosen to refuse anything that would silently change a value:
//   - integers accept integral floats and decimals and numeric strings;
//     never booleans;
//   - FLOAT refuses finite values beyond float32's range and keeps the
//     nearest float32;
//   - DECIMAL rounds extra fractional digits half away from zero, as Fluss
//     does, and refuses a value with too many integer digits;
//   - CHAR(n) refuses more than n characters and keeps shorter strings as
//     they are (no padding); strings must be valid UTF-8; numbers are
//     accepted into strings in their plain text form;
//   - BINARY(n) needs exactly n bytes; strings are taken as their bytes;
//   - DATE reads "2006-01-02" (or a timestamp text at midnight) or the
//     date of a time.Time's wall clock;
//   - TIME reads "15:04:05[.fffffffff]" or "15:04", or a time.Time's clock;
//   - TIMESTAMP reads "2006-01-02 15:04:05[.fffffffff]" ('T' also
//     separates), "2006-01-02 15:04", "2006-01-02", or RFC 3339 with an
//     offset, whose wall clock it keeps; a time.Time gives its wall clock
//     read as UTC;
//   - TIMESTAMP_LTZ takes the instant: of a time.Time, of a string with an
//     offset, or of a string without one read in UTC (CoerceValueIn takes
//     another zone);
//   - fractional seconds beyond the precision of TIME and the timestamps
//     are truncated; years must be in [1, 9999] (for precisions 7 to 9,
//     whose Arrow unit is the nanosecond, in [1678, 2261]);
//   - ARRAY, MAP and ROW convert their elements; a ROW takes []any with one
//     value per field or map[string]any keyed by field name; map keys must
//     not be NULL or repeat.
func CoerceValue(t DataType, v any) (any, error) {
	return CoerceValueIn(t, v, time.UTC)
}

// CoerceValueIn is CoerceValue reading TIMESTAMP_LTZ strings that carry no
// offset in loc (nil: UTC).
func CoerceValueIn(t DataType, v any, loc *time.Location) (any, error) {
	if loc == nil {
		loc = time.UTC
	}
	return coerce(t, v, loc, 0)
}

// maxCoerceDepth bounds the recursion through Valuers, pointers and nested
// values, so a self-referencing Valuer fails instead of overflowing.
const maxCoerceDepth = 64

func coerce(t DataType, v any, loc *time.Location, depth int) (any, error) {
	if depth > maxCoerceDepth {
		return nil, fmt.Errorf("%w: value nested too deeply for %s", ErrInvalidValue, t)
	}
	v, err := normalize(v)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	switch t.Root {
	case Boolean:
		return toBool(t, v)
	case TinyInt, SmallInt, Int, BigInt:
		return toInteger(t, v)
	case Float, Double:
		return toFloat(t, v)
	case Decimal:
		return toDecimal(t, v)
	case Char, String:
		return toString(t, v)
	case Binary, Bytes:
		return toBytes(t, v)
	case Date:
		return toDate(t, v)
	case Time:
		return toTime(t, v)
	case Timestamp, TimestampLTZ:
		return toTimestamp(t, v, loc)
	case Array:
		return toArray(t, v, loc, depth)
	case Map:
		return toMap(t, v, loc, depth)
	case Row:
		return toRow(t, v, loc, depth)
	}
	return nil, fmt.Errorf("%w: cannot convert a value to unknown type %s", ErrInvalidType, t)
}

// normalize brings the scalar kinds to int64, uint64, float64, float32,
// string and []byte, and unwraps Valuers and pointers; canonical and
// nested values pass through.
func normalize(v any) (any, error) {
	for range maxCoerceDepth {
		switch x := v.(type) {
		case nil, bool, int64, uint64, float64, float32, string, []byte, time.Time,
			DecimalValue, DateValue, TimeValue, MapValue, []any, map[string]any, map[any]any:
			return v, nil
		case int:
			return int64(x), nil
		case int8:
			return int64(x), nil
		case int16:
			return int64(x), nil
		case int32:
			return int64(x), nil
		case uint:
			return uint64(x), nil
		case uint8:
			return uint64(x), nil
		case uint16:
			return uint64(x), nil
		case uint32:
			return uint64(x), nil
		case *big.Int:
			if x == nil {
				return nil, nil
			}
			return DecimalValue{Num: decimal128.FromBigInt(x)}, bigFits(x)
		case driver.Valuer:
			rv := reflect.ValueOf(x)
			if rv.Kind() == reflect.Pointer && rv.IsNil() {
				return nil, nil
			}
			nv, err := x.Value()
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalidValue, err)
			}
			v = nv
			continue
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Pointer:
			if rv.IsNil() {
				return nil, nil
			}
			v = rv.Elem().Interface()
			continue
		case reflect.Bool:
			return rv.Bool(), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return rv.Int(), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return rv.Uint(), nil
		case reflect.Float32:
			return float32(rv.Float()), nil
		case reflect.Float64:
			return rv.Float(), nil
		case reflect.String:
			return rv.String(), nil
		case reflect.Slice:
			if rv.IsNil() {
				return nil, nil
			}
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				return rv.Bytes(), nil
			}
			return v, nil
		case reflect.Map:
			if rv.IsNil() {
				return nil, nil
			}
			return v, nil
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: value nested too deeply", ErrInvalidValue)
}

func bigFits(x *big.Int) error {
	if !fitsDigits(x, MaxDecimalPrecision) {
		return fmt.Errorf("%w: value %s out of range for DECIMAL(38, 0)", ErrInvalidValue, x)
	}
	return nil
}

// describe renders a value for an error message.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 64 {
			x = x[:61] + "..."
		}
		return strconv.Quote(x)
	case []byte:
		if len(x) > 32 {
			return "X'" + hex.EncodeToString(x[:32]) + "...'"
		}
		return "X'" + hex.EncodeToString(x) + "'"
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case DecimalValue:
		return x.String()
	case DateValue, TimeValue:
		return FormatValue(DataType{}, x)
	}
	return fmt.Sprintf("%v", v)
}

func errRange(t DataType, v any) error {
	return fmt.Errorf("%w: value %s out of range for %s", ErrInvalidValue, describe(v), t)
}

func errMismatch(t DataType, v any) error {
	return fmt.Errorf("%w: cannot use %s value %s as %s", ErrInvalidValue, goKind(v), describe(v), t)
}

func errSyntax(t DataType, v any) error {
	return fmt.Errorf("%w: value %s is not a valid %s", ErrInvalidValue, describe(v), t)
}

func goKind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case int64, uint64:
		return "integer"
	case float32, float64:
		return "floating-point"
	case DecimalValue:
		return "decimal"
	case string:
		return "string"
	case []byte:
		return "binary"
	case time.Time:
		return "time.Time"
	case DateValue:
		return "DATE"
	case TimeValue:
		return "TIME"
	case MapValue:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

func toBool(t DataType, v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, errSyntax(t, v)
	}
	return nil, errMismatch(t, v)
}

func intRange(r TypeRoot) (lo, hi int64) {
	switch r {
	case TinyInt:
		return math.MinInt8, math.MaxInt8
	case SmallInt:
		return math.MinInt16, math.MaxInt16
	case Int:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func toInteger(t DataType, v any) (any, error) {
	lo, hi := intRange(t.Root)
	check := func(n int64) (any, error) {
		if n < lo || n > hi {
			return nil, errRange(t, v)
		}
		return n, nil
	}
	switch x := v.(type) {
	case int64:
		if x < lo || x > hi {
			return nil, errRange(t, v)
		}
		return v, nil // already the canonical value: no new boxing
	case uint64:
		if x > math.MaxInt64 {
			return nil, errRange(t, v)
		}
		return check(int64(x))
	case float32:
		return floatToInteger(t, v, float64(x), check)
	case float64:
		return floatToInteger(t, v, x, check)
	case DecimalValue:
		n := x.Num.BigInt()
		if x.Scale > 0 {
			var r big.Int
			n.QuoRem(n, pow10(int(x.Scale)), &r)
			if r.Sign() != 0 {
				return nil, fmt.Errorf("%w: value %s has a fractional part, not allowed for %s", ErrInvalidValue, describe(v), t)
			}
		}
		if !n.IsInt64() {
			return nil, errRange(t, v)
		}
		return check(n.Int64())
	case string:
		s := strings.TrimSpace(x)
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return check(n)
		}
		if errors.Is(err, strconv.ErrRange) {
			return nil, errRange(t, v)
		}
		// "1e3" and "10.0" are integers too.
		m, exp, ok := parseDecimalText(s)
		if !ok {
			return nil, errSyntax(t, v)
		}
		if exp > 0 {
			if exp > 19 && m.Sign() != 0 {
				return nil, errRange(t, v)
			}
			m.Mul(m, pow10(exp))
		} else if exp < 0 {
			var r big.Int
			m.QuoRem(m, pow10(-exp), &r)
			if r.Sign() != 0 {
				return nil, fmt.Errorf("%w: value %s has a fractional part, not allowed for %s", ErrInvalidValue, describe(v), t)
			}
		}
		if !m.IsInt64() {
			return nil, errRange(t, v)
		}
		return check(m.Int64())
	}
	return nil, errMismatch(t, v)
}

func floatToInteger(t DataType, v any, f float64, check func(int64) (any, error)) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return nil, errRange(t, v)
	}
	if f != math.Trunc(f) {
		return nil, fmt.Errorf("%w: value %s has a fractional part, not allowed for %s", ErrInvalidValue, describe(v), t)
	}
	return check(int64(f))
}

func toFloat(t DataType, v any) (any, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint64:
		f = float64(x)
	case DecimalValue:
		f = x.Float64()
	case string:
		var err error
		f, err = strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return nil, errRange(t, v)
			}
			return nil, errSyntax(t, v)
		}
	default:
		return nil, errMismatch(t, v)
	}
	if t.Root == Float {
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) && !math.IsInf(f, 0) {
			return nil, errRange(t, v)
		}
		return float64(f32), nil
	}
	if _, same := v.(float64); same {
		return v, nil // already the canonical value: no new boxing
	}
	return f, nil
}

func toDecimal(t DataType, v any) (any, error) {
	var (
		d   DecimalValue
		err error
	)
	switch x := v.(type) {
	case DecimalValue:
		r, ok := x.round(t.Precision, t.Scale)
		if !ok {
			return nil, errRange(t, v)
		}
		return r, nil
	case int64:
		d, err = ParseDecimal(strconv.FormatInt(x, 10), t.Precision, t.Scale)
	case uint64:
		d, err = ParseDecimal(strconv.FormatUint(x, 10), t.Precision, t.Scale)
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errRange(t, v)
		}
		d, err = ParseDecimal(strconv.FormatFloat(float64(x), 'g', -1, 32), t.Precision, t.Scale)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errRange(t, v)
		}
		d, err = ParseDecimal(strconv.FormatFloat(x, 'g', -1, 64), t.Precision, t.Scale)
	case string:
		if err := t.Validate(); err != nil {
			return nil, err
		}
		n, exp, ok := parseDecimalText(x)
		if !ok {
			return nil, errSyntax(t, v)
		}
		n = roundScaled(n, exp+t.Scale)
		if !fitsDigits(n, t.Precision) {
			return nil, errRange(t, v)
		}
		return DecimalValue{Num: decimal128.FromBigInt(n), Scale: int32(t.Scale)}, nil
	default:
		return nil, errMismatch(t, v)
	}
	if err != nil {
		if errors.Is(err, ErrInvalidValue) {
			return nil, errRange(t, v)
		}
		return nil, err
	}
	return d, nil
}

func toString(t DataType, v any) (any, error) {
	var s string
	same := false // v is already the canonical value: no new boxing
	switch x := v.(type) {
	case string:
		s, same = x, true
	case []byte:
		s = string(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case DecimalValue:
		s = x.String()
	default:
		return nil, errMismatch(t, v)
	}
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: value %s is not valid UTF-8 text for %s", ErrInvalidValue, describe(v), t)
	}
	if t.Root == Char {
		if n := utf8.RuneCountInString(s); n > t.Length {
			return nil, fmt.Errorf("%w: value %s is too long for %s (%d characters)", ErrInvalidValue, describe(v), t, n)
		}
	}
	if same {
		return v, nil
	}
	return s, nil
}

func toBytes(t DataType, v any) (any, error) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		// Copied: database/sql lets a driver keep no reference to the
		// caller's buffer.
		b = append([]byte{}, x...)
	case string:
		b = []byte(x)
	default:
		return nil, errMismatch(t, v)
	}
	if t.Root == Binary && len(b) != t.Length {
		return nil, fmt.Errorf("%w: value %s has %d bytes, %s needs exactly %d", ErrInvalidValue, describe(v), len(b), t, t.Length)
	}
	return b, nil
}

const (
	minYear = 1
	maxYear = 9999
)

func yearOK(t time.Time) bool {
	y := t.Year()
	return y >= minYear && y <= maxYear
}

func toDate(t DataType, v any) (any, error) {
	switch x := v.(type) {
	case DateValue:
		if !yearOK(x.Time()) {
			return nil, errRange(t, v)
		}
		return x, nil
	case time.Time:
		if !yearOK(x) {
			return nil, errRange(t, v)
		}
		return DateOf(x), nil
	case string:
		s := strings.TrimSpace(x)
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			// A timestamp text at midnight is a date too.
			for _, layout := range timestampLayouts {
				if p, perr := time.Parse(layout, s); perr == nil && p.Equal(p.Truncate(24*time.Hour)) {
					d, err = p, nil
					break
				}
			}
		}
		if err != nil {
			return nil, errSyntax(t, v)
		}
		if !yearOK(d) {
			return nil, errRange(t, v)
		}
		return DateOf(d), nil
	}
	return nil, errMismatch(t, v)
}

// truncUnit is the nanoseconds of one unit of precision p.
func truncUnit(p int) int64 {
	u := int64(1)
	for i := p; i < 9; i++ {
		u *= 10
	}
	return u
}

const nanosPerDay = 86400 * int64(time.Second)

func toTime(t DataType, v any) (any, error) {
	var ns int64
	switch x := v.(type) {
	case TimeValue:
		ns = int64(x)
		if ns < 0 || ns >= nanosPerDay {
			return nil, errRange(t, v)
		}
	case time.Time:
		h, m, s := x.Clock()
		ns = int64(h)*int64(time.Hour) + int64(m)*int64(time.Minute) + int64(s)*int64(time.Second) + int64(x.Nanosecond())
	case string:
		s := strings.TrimSpace(x)
		var (
			p   time.Time
			err error
		)
		if len(s) == 5 {
			p, err = time.Parse("15:04", s)
		} else {
			p, err = time.Parse("15:04:05.999999999", s)
		}
		if err != nil {
			return nil, errSyntax(t, v)
		}
		h, m, sec := p.Clock()
		ns = int64(h)*int64(time.Hour) + int64(m)*int64(time.Minute) + int64(sec)*int64(time.Second) + int64(p.Nanosecond())
	default:
		return nil, errMismatch(t, v)
	}
	u := truncUnit(t.Precision)
	return TimeValue(ns - ns%u), nil
}

var (
	timestampLayouts = []string{
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04",
		"2006-01-02T15:04",
		time.DateOnly,
	}
	timestampOffsetLayouts = []string{
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999 Z07:00",
		"2006-01-02T15:04Z07:00",
		"2006-01-02 15:04Z07:00",
		// Offsets without a colon (+0000), and Go's time.Time.String
		// form (2026-01-02 03:04:05.123 +0000 UTC), which clients that
		// format times as text send.
		"2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02 15:04:05.999999999Z0700",
		"2006-01-02 15:04:05.999999999 Z0700",
		"2006-01-02 15:04:05.999999999 -0700 MST",
	}
)

func toTimestamp(t DataType, v any, loc *time.Location) (any, error) {
	var ts time.Time
	switch x := v.(type) {
	case time.Time:
		ts = x
	case DateValue:
		ts = x.Time()
	case string:
		s := strings.TrimSpace(x)
		ok := false
		for _, layout := range timestampOffsetLayouts {
			if p, err := time.Parse(layout, s); err == nil {
				ts, ok = p, true
				break
			}
		}
		if !ok {
			in := time.UTC
			if t.Root == TimestampLTZ {
				in = loc
			}
			for _, layout := range timestampLayouts {
				if p, err := time.ParseInLocation(layout, s, in); err == nil {
					ts, ok = p, true
					break
				}
			}
		}
		if !ok {
			return nil, errSyntax(t, v)
		}
	default:
		return nil, errMismatch(t, v)
	}
	if t.Root == Timestamp {
		ts = wallClockUTC(ts)
	} else {
		ts = ts.UTC()
	}
	if !yearOK(ts) || t.Precision > 6 && !nanosRepresentable(ts) {
		return nil, errRange(t, v)
	}
	u := truncUnit(t.Precision)
	ns := int64(ts.Nanosecond())
	return ts.Add(-time.Duration(ns % u)), nil
}

// nanosRepresentable reports whether t fits int64 nanoseconds since the
// epoch (years 1678 to 2261), the Arrow unit of precisions 7 to 9.
func nanosRepresentable(t time.Time) bool {
	return t.Unix() > math.MinInt64/int64(time.Second) && t.Unix() < math.MaxInt64/int64(time.Second)
}

// wallClockUTC reads t's wall clock in its own location as a UTC time.
func wallClockUTC(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

func toArray(t DataType, v any, loc *time.Location, depth int) (any, error) {
	if t.Elem == nil {
		return nil, fmt.Errorf("%w: ARRAY without element type", ErrInvalidType)
	}
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		return nil, errMismatch(t, v)
	}
	out := make([]any, rv.Len())
	for i := range out {
		e, err := coerce(*t.Elem, rv.Index(i).Interface(), loc, depth+1)
		if err != nil {
			return nil, fmt.Errorf("element %d of %s: %w", i, t, err)
		}
		out[i] = e
	}
	return out, nil
}

func toMap(t DataType, v any, loc *time.Location, depth int) (any, error) {
	if t.Elem == nil || t.Value == nil {
		return nil, fmt.Errorf("%w: MAP without key or value type", ErrInvalidType)
	}
	var keys, vals []any
	switch x := v.(type) {
	case MapValue:
		if len(x.Keys) != len(x.Values) {
			return nil, fmt.Errorf("%w: map value has %d keys and %d values", ErrInvalidValue, len(x.Keys), len(x.Values))
		}
		keys, vals = x.Keys, x.Values
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Map {
			return nil, errMismatch(t, v)
		}
		it := rv.MapRange()
		for it.Next() {
			keys = append(keys, it.Key().Interface())
			vals = append(vals, it.Value().Interface())
		}
	}
	out := MapValue{Keys: make([]any, len(keys)), Values: make([]any, len(vals))}
	for i := range keys {
		k, err := coerce(*t.Elem, keys[i], loc, depth+1)
		if err != nil {
			return nil, fmt.Errorf("key of %s: %w", t, err)
		}
		if k == nil {
			return nil, fmt.Errorf("%w: NULL key in %s", ErrInvalidValue, t)
		}
		val, err := coerce(*t.Value, vals[i], loc, depth+1)
		if err != nil {
			return nil, fmt.Errorf("value of key %s in %s: %w", FormatValue(*t.Elem, k), t, err)
		}
		out.Keys[i], out.Values[i] = k, val
	}
	if _, isMapValue := v.(MapValue); !isMapValue {
		// Go maps iterate in random order; sorting keeps equal maps equal
		// on disk and in results.
		sort.Sort(mapByKey(out))
	}
	for i := 1; i < len(out.Keys); i++ {
		for j := 0; j < i; j++ {
			if Compare(out.Keys[i], out.Keys[j]) == 0 {
				return nil, fmt.Errorf("%w: key %s appears twice in %s", ErrInvalidValue, FormatValue(*t.Elem, out.Keys[i]), t)
			}
		}
	}
	return out, nil
}

type mapByKey MapValue

func (m mapByKey) Len() int           { return len(m.Keys) }
func (m mapByKey) Less(i, j int) bool { return Compare(m.Keys[i], m.Keys[j]) < 0 }
func (m mapByKey) Swap(i, j int) {
	m.Keys[i], m.Keys[j] = m.Keys[j], m.Keys[i]
	m.Values[i], m.Values[j] = m.Values[j], m.Values[i]
}

func toRow(t DataType, v any, loc *time.Location, depth int) (any, error) {
	out := make([]any, len(t.Fields))
	switch x := v.(type) {
	case []any:
		if len(x) != len(t.Fields) {
			return nil, fmt.Errorf("%w: %s needs %d values, got %d", ErrInvalidValue, t, len(t.Fields), len(x))
		}
		for i, f := range t.Fields {
			e, err := coerce(f.Type, x[i], loc, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s of %s: %w", f.Name, t, err)
			}
			out[i] = e
		}
	case map[string]any:
		used := 0
		for i, f := range t.Fields {
			raw, ok := x[f.Name]
			if !ok {
				continue
			}
			used++
			e, err := coerce(f.Type, raw, loc, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %s of %s: %w", f.Name, t, err)
			}
			out[i] = e
		}
		if used != len(x) {
			for name := range x {
				if !hasField(t, name) {
					return nil, fmt.Errorf("%w: %s has no field %q", ErrInvalidValue, t, name)
				}
			}
		}
	default:
		return nil, errMismatch(t, v)
	}
	return out, nil
}

func hasField(t DataType, name string) bool {
	for _, f := range t.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}
