package metadata

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FormatLiteral renders a canonical value of type t as a SQL literal:
// numbers bare, strings and temporal values quoted, NULL as NULL.
func FormatLiteral(t DataType, v any) string {
	if v == nil {
		return "NULL"
	}
	switch x := v.(type) {
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(t, x)
	case DecimalValue:
		return x.String()
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return "X'" + hex.EncodeToString(x) + "'"
	case DateValue, TimeValue, time.Time:
		return "'" + FormatValue(t, v) + "'"
	}
	return "'" + strings.ReplaceAll(FormatValue(t, v), "'", "''") + "'"
}

// FormatValue renders a canonical value of type t for display: DATE as
// 2006-01-02, TIME as 15:04:05 and TIMESTAMP as 2006-01-02 15:04:05 with as
// many fraction digits as the type's precision (TIMESTAMP_LTZ in UTC),
// DECIMAL in plain notation with its scale, bytes as lower-case hex,
// ARRAY as [1, 2], MAP as {k=v, k2=v2}, ROW as (a, b), NULL as NULL.
// A value not in the canonical form of t is rendered by its Go type.
func FormatValue(t DataType, v any) string {
	var b strings.Builder
	formatValue(&b, t, v)
	return b.String()
}

func formatValue(b *strings.Builder, t DataType, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(formatFloat(t, x))
	case DecimalValue:
		b.WriteString(x.String())
	case string:
		b.WriteString(x)
	case []byte:
		b.WriteString(hex.EncodeToString(x))
	case DateValue:
		b.WriteString(x.Time().Format(time.DateOnly))
	case TimeValue:
		p := t.Precision
		if t.Root != Time {
			p = MaxTimePrecision
		}
		b.WriteString(x.Time().Format(time.TimeOnly))
		writeFraction(b, int(int64(x)%1e9), p)
	case time.Time:
		p := t.Precision
		if t.Root != Timestamp && t.Root != TimestampLTZ {
			p = MaxTimePrecision
		}
		u := x.UTC()
		b.WriteString(u.Format(time.DateTime))
		writeFraction(b, u.Nanosecond(), p)
	case []any:
		if t.Root == Row {
			b.WriteByte('(')
			for i, e := range x {
				if i > 0 {
					b.WriteString(", ")
				}
				var ft DataType
				if i < len(t.Fields) {
					ft = t.Fields[i].Type
				}
				formatValue(b, ft, e)
			}
			b.WriteByte(')')
			return
		}
		var et DataType
		if t.Root == Array && t.Elem != nil {
			et = *t.Elem
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, et, e)
		}
		b.WriteByte(']')
	case MapValue:
		var kt, vt DataType
		if t.Root == Map && t.Elem != nil && t.Value != nil {
			kt, vt = *t.Elem, *t.Value
		}
		b.WriteByte('{')
		for i := range x.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, kt, x.Keys[i])
			b.WriteByte('=')
			if i < len(x.Values) {
				formatValue(b, vt, x.Values[i])
			}
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// writeFraction writes ".fff" with p digits of the nanoseconds ns, or
// nothing when p is 0.
func writeFraction(b *strings.Builder, ns, p int) {
	if p <= 0 {
		return
	}
	p = min(p, 9)
	ns = (ns%1e9 + 1e9) % 1e9
	s := strconv.Itoa(ns + 1e9) // "1" and nine digits
	b.WriteByte('.')
	b.WriteString(s[1 : 1+p])
}

// formatFloat renders the shortest text that reads back as x; a FLOAT
// column is rendered at float32 precision so 1.1 stays "1.1".
func formatFloat(t DataType, x float64) string {
	bits := 64
	if t.Root == Float {
		bits = 32
	}
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(x, 'g', -1, bits)
}
