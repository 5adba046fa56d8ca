package metadata

import (
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxPartitionNameLength is the longest a rendered partition value may be.
const MaxPartitionNameLength = 200

// partitionReservedPrefix starts Fluss's system partition names
// ("__historical__"); user values may not use it.
const partitionReservedPrefix = "__"

// PartitionTypeAllowed reports whether a column of type t may be a partition
// key: Fluss allows CHAR, STRING, BOOLEAN, BINARY, BYTES, the integers,
// FLOAT, DOUBLE, DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ (not DECIMAL, not
// nested types).
func PartitionTypeAllowed(t DataType) bool {
	switch t.Root {
	case Char, String, Boolean, Binary, Bytes, TinyInt, SmallInt, Int, BigInt,
		Float, Double, Date, Time, Timestamp, TimestampLTZ:
		return true
	}
	return false
}

// PartitionName joins rendered partition values, in partition-key order,
// into a partition name: "2026-01-01$US".
func PartitionName(values []string) string { return strings.Join(values, "$") }

// PartitionValueString renders v, a value for a partition key of type t, the
// way Fluss names partitions: DATE yyyy-MM-dd; TIME HH-mm-ss_SSS (TIME(p)
// with p > 3 with p fraction digits, which Fluss, whose TIME holds
// milliseconds, never needs: a name identifies its value); TIMESTAMP
// and TIMESTAMP_LTZ (in UTC) yyyy-MM-dd-HH-mm-ss_ followed by the
// nanoseconds without trailing zeros; FLOAT and DOUBLE in Java's text with
// '.' replaced by '_' (NaN, Inf, -Inf); BINARY and BYTES in lower-case hex;
// booleans true/false; integers in decimal; strings as they are. v is
// coerced to t first. The result must be a valid name (1 to 200 characters
// of [A-Za-z0-9_-], not starting with "__"), else ErrInvalidValue.
func PartitionValueString(t DataType, v any) (string, error) {
	if !PartitionTypeAllowed(t) {
		return "", fmt.Errorf("%w: %s cannot be a partition key type", ErrInvalidType, t)
	}
	if v == nil {
		return "", fmt.Errorf("%w: a partition value must not be NULL (%s)", ErrInvalidValue, t)
	}
	c, err := CoerceValue(t, v)
	if err != nil {
		return "", err
	}
	if c == nil {
		return "", fmt.Errorf("%w: a partition value must not be NULL (%s)", ErrInvalidValue, t)
	}
	s := renderPartitionValue(t, c)
	if err := validatePartitionValue(s); err != nil {
		return "", fmt.Errorf("%w: partition value %s of %s: %s", ErrInvalidValue, describe(v), t, err)
	}
	return s, nil
}

func renderPartitionValue(t DataType, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case []byte:
		return hex.EncodeToString(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Inf"
		case math.IsInf(x, -1):
			return "-Inf"
		}
		bits := 64
		if t.Root == Float {
			bits = 32
		}
		return strings.ReplaceAll(javaFloatString(x, bits), ".", "_")
	case DateValue:
		return x.Time().Format(time.DateOnly)
	case TimeValue:
		ns := int64(x)
		clock := fmt.Sprintf("%02d-%02d-%02d_", ns/3600e9, ns/60e9%60, ns/1e9%60)
		return clock + fmt.Sprintf("%09d", ns%1e9)[:timeNameDigits(t)]
	case time.Time:
		u := x.UTC()
		frac := strings.TrimRight(fmt.Sprintf("%09d", u.Nanosecond()), "0")
		return u.Format("2006-01-02-15-04-05") + "_" + frac
	}
	return fmt.Sprint(v)
}

// javaFloatString renders f as Java's Float.toString / Double.toString do:
// plain with at least one fraction digit for 1e-3 <= |f| < 1e7, otherwise
// computerized scientific notation ("1.0E10", "1.5E-4"), with the fewest
// digits that read back as f.
func javaFloatString(f float64, bits int) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bits) // "1.5e-04", "1e+10"
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// validatePartitionValue applies Fluss's partition name rules, returning
// the reason a value is refused.
func validatePartitionValue(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("the empty string is not allowed")
	case len(s) > MaxPartitionNameLength:
		return fmt.Errorf("longer than %d characters", MaxPartitionNameLength)
	case strings.HasPrefix(s, partitionReservedPrefix):
		return fmt.Errorf("the prefix %q is reserved", partitionReservedPrefix)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("only ASCII letters, digits, '_' and '-' are allowed")
		}
	}
	return nil
}

// ParsePartitionValue reads a rendered partition value back into the
// canonical value of type t, so that partitions compare as typed values
// (INT partition 10 is greater than 2). It is the inverse of
// PartitionValueString; malformed text is ErrInvalidValue.
func ParsePartitionValue(t DataType, s string) (any, error) {
	bad := func() error {
		return fmt.Errorf("%w: partition value %q is not a valid %s", ErrInvalidValue, s, t)
	}
	switch t.Root {
	case Char, String:
		return CoerceValue(t, s)
	case Boolean:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, bad()
	case Binary, Bytes:
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, bad()
		}
		return CoerceValue(t, b)
	case TinyInt, SmallInt, Int, BigInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, bad()
		}
		return CoerceValue(t, n)
	case Float, Double:
		var f float64
		switch s {
		case "NaN":
			f = math.NaN()
		case "Inf":
			f = math.Inf(1)
		case "-Inf":
			f = math.Inf(-1)
		default:
			var err error
			f, err = strconv.ParseFloat(strings.ReplaceAll(s, "_", "."), 64)
			if err != nil {
				return nil, bad()
			}
		}
		return CoerceValue(t, f)
	case Date:
		p := splitInts(s, "-", 3)
		if p == nil {
			return nil, bad()
		}
		d, ok := civil(p[0], p[1], p[2], 0, 0, 0, 0)
		if !ok {
			return nil, bad()
		}
		return DateOf(d), nil
	case Time:
		lo, _, ok := parseTimeName(t, s)
		if !ok {
			return nil, bad()
		}
		return lo, nil
	case Timestamp, TimestampLTZ:
		clock, frac := s, ""
		if i := strings.LastIndexByte(s, '_'); i >= 0 {
			clock, frac = s[:i], s[i+1:]
		}
		parts := strings.Split(clock, "-")
		if len(parts) < 3 || len(parts) > 6 || len(frac) > 9 {
			return nil, bad()
		}
		p := splitInts(clock, "-", len(parts))
		if p == nil {
			return nil, bad()
		}
		p = append(p, 0, 0, 0)
		ns := 0
		if frac != "" {
			n, err := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
			if err != nil || n < 0 {
				return nil, bad()
			}
			ns = n
		}
		ts, ok := civil(p[0], p[1], p[2], p[3], p[4], p[5], ns)
		if !ok {
			return nil, bad()
		}
		return CoerceValue(t, ts)
	}
	return nil, fmt.Errorf("%w: %s cannot be a partition key type", ErrInvalidType, t)
}

// splitInts splits s by sep into exactly n non-negative decimal integers,
// or returns nil.
func splitInts(s, sep string, n int) []int {
	parts := strings.Split(s, sep)
	if len(parts) != n {
		return nil
	}
	out := make([]int, n)
	for i, p := range parts {
		if p == "" || len(p) > 9 {
			return nil
		}
		for j := 0; j < len(p); j++ {
			if p[j] < '0' || p[j] > '9' {
				return nil
			}
		}
		out[i], _ = strconv.Atoi(p)
	}
	return out
}

// civil builds a UTC time from fields, refusing fields out of their range
// (time.Date would normalise February 30 into March).
func civil(y, mo, d, h, mi, s, ns int) (time.Time, bool) {
	if y < minYear || y > maxYear || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	if t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

// timeNameDigits is how many fraction digits name a TIME(p) partition:
// Fluss's three, or p when p is finer.
func timeNameDigits(t DataType) int { return max(3, timePrecision(t)) }

// timePrecision is t's precision within [0, 9], so that no type read from
// disk makes a name's arithmetic fail.
func timePrecision(t DataType) int { return min(max(t.Precision, 0), MaxTimePrecision) }

// parseTimeName reads a TIME partition name: the fraction has the type's
// name digits, or three for a TIME(p > 3) named to the millisecond (as
// earlier versions named them). The values the partition may hold
// run from lo to hi: the same value for an exact name, the millisecond's
// values at the type's precision for a coarser one.
func parseTimeName(t DataType, s string) (lo, hi TimeValue, ok bool) {
	clock, frac, found := strings.Cut(s, "_")
	p := splitInts(clock, "-", 3)
	if !found || p == nil || p[0] > 23 || p[1] > 59 || p[2] > 59 ||
		(len(frac) != 3 && len(frac) != timeNameDigits(t)) || strings.Trim(frac, "0123456789") != "" {
		return 0, 0, false
	}
	n, err := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
	if err != nil {
		return 0, 0, false
	}
	v := (int64(p[0])*3600+int64(p[1])*60+int64(p[2]))*1e9 + int64(n)
	step := int64(math.Pow10(9 - timePrecision(t))) // one unit of the type
	lo = TimeValue(v - v%step)
	hi = lo
	if len(frac) < timePrecision(t) {
		hi = TimeValue(v + int64(math.Pow10(9-len(frac))) - step)
	}
	return lo, hi, true
}

// ParsePartitionRange is ParsePartitionValue for a name that may be
// coarser than its type: it returns the least and the greatest value the
// partition may hold, equal for a name that identifies its value (every
// name this version renders). A TIME(p > 3) partition named to the
// millisecond by an older version holds the values of that millisecond.
func ParsePartitionRange(t DataType, s string) (lo, hi any, err error) {
	if t.Root == Time {
		l, h, ok := parseTimeName(t, s)
		if !ok {
			return nil, nil, fmt.Errorf("%w: partition value %q is not a valid %s", ErrInvalidValue, s, t)
		}
		return l, h, nil
	}
	v, err := ParsePartitionValue(t, s)
	return v, v, err
}

// PartitionNamesMayBeCoarse reports whether a partition key of type t may
// have partitions whose names are coarser than their values (see
// ParsePartitionRange), so that a predicate on the key must be tested on
// the rows as well as on the partitions.
func PartitionNamesMayBeCoarse(t DataType) bool { return t.Root == Time && timePrecision(t) > 3 }

// CoarsePartitionName returns the name earlier versions gave the partition
// of values (rendered, in partition-key order, for keys of types): each
// TIME(p > 3) value named to the millisecond. ok is false when no key has
// such a name. A partition of that name holds the value, and keeps
// getting the rows of its millisecond.
func CoarsePartitionName(types []DataType, values []string) (name string, ok bool) {
	if len(types) != len(values) {
		return "", false
	}
	out := slices.Clone(values)
	for i, t := range types {
		if !PartitionNamesMayBeCoarse(t) {
			continue
		}
		cut := timeNameDigits(t) - 3
		if _, frac, found := strings.Cut(out[i], "_"); found && len(frac) == timeNameDigits(t) {
			out[i] = out[i][:len(out[i])-cut]
			ok = true
		}
	}
	if !ok {
		return "", false
	}
	return PartitionName(out), true
}
