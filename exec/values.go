package exec

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
)

// sqlCompare orders two canonical values the way a SQL comparison does.
// It is metadata.Compare, except that a string compared with a number is
// read as a number first (MySQL's rule; see mysqlNumber). Neither value
// may be nil.
func sqlCompare(a, b any) int {
	if s, ok := a.(string); ok && isNumber(b) {
		a = mysqlNumber(s)
	} else if s, ok := b.(string); ok && isNumber(a) {
		b = mysqlNumber(s)
	}
	return metadata.Compare(a, b)
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64, metadata.DecimalValue:
		return true
	}
	return false
}

// mysqlNumber reads a string as MySQL does where a number is wanted: the
// longest prefix that is a number, after leading spaces; 0 when there is
// none ('12abc' is 12, 'abc' is 0, ' 1e2x' is 100).
func mysqlNumber(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r")
	end := metadata.NumericPrefix(s)
	if end == 0 {
		return 0
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		// Out of range: ParseFloat returns ±Inf with the error.
		return f
	}
	return f
}

// conform converts a canonical value to the canonical form of t where the
// binder widened the type (an integer branch of a CASE whose type is
// DECIMAL or DOUBLE, a CHAR into STRING). Values already in t's form pass
// through; a value that cannot be converted is returned unchanged, and
// appending it reports the mismatch.
func conform(v any, t metadata.DataType) any {
	if v == nil {
		return nil
	}
	switch t.Root {
	case metadata.Double, metadata.Float:
		switch x := v.(type) {
		case int64:
			return float64(x)
		case metadata.DecimalValue:
			return x.Float64()
		}
	case metadata.Decimal:
		switch x := v.(type) {
		case int64:
			if d, ok := metadata.NewDecimal(x, 0).Rescale(int32(t.Scale)); ok {
				return d
			}
		case metadata.DecimalValue:
			if x.Scale == int32(t.Scale) {
				return x
			}
			if out, err := metadata.CoerceValue(metadata.DecimalType(metadata.MaxDecimalPrecision, t.Scale), x); err == nil {
				return out
			}
		}
	case metadata.BigInt, metadata.Int, metadata.SmallInt, metadata.TinyInt:
		if b, ok := v.(bool); ok {
			if b {
				return int64(1)
			}
			return int64(0)
		}
	}
	return v
}

// toText renders a value as MySQL converts it to a string: numbers in
// plain notation, DECIMAL with its scale, dates and times in ISO form,
// booleans as 1 and 0, bytes as they are.
func toText(t metadata.DataType, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatDouble(x)
	case metadata.DecimalValue:
		return x.String()
	case time.Time:
		// Fractional digits only when the type keeps some.
		return metadata.FormatValue(t, x)
	}
	return metadata.FormatValue(t, v)
}

// formatDouble prints a DOUBLE the shortest way that reads back exactly,
// in plain notation for everyday magnitudes (MySQL prints 1e20 as 1e20
// and 0.1 as 0.1).
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-4) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// decimalNum returns the unscaled value of a DecimalValue at scale, or
// false when it does not fit.
func decimalAt(d metadata.DecimalValue, scale int32) (decimal128.Num, bool) {
	r, ok := d.Rescale(scale)
	return r.Num, ok
}
