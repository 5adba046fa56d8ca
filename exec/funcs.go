package exec

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Scalar functions follow MySQL where its dialect implies them; the
// binder (sqlplan) has typed every call already. Unless a function says
// otherwise, a NULL argument makes the result NULL.

// call is one bound function call being evaluated.
type call struct {
	f  *sqlplan.Func
	ts []metadata.DataType // argument types
}

type scalarFunc struct {
	// nulls: the function sees NULL arguments instead of returning NULL.
	nulls bool
	eval  func(c *call, args []any) (any, error)
}

var scalarFuncs map[string]scalarFunc

func init() {
	scalarFuncs = map[string]scalarFunc{
		"coalesce": {nulls: true, eval: fnCoalesce},
		"ifnull":   {nulls: true, eval: fnCoalesce},
		"nullif":   {nulls: true, eval: fnNullIf},
		"abs":      {eval: fnAbs},
		"round":    {eval: fnRound},
		"floor":    {eval: fnFloorCeil},
		"ceil":     {eval: fnFloorCeil},
		"ceiling":  {eval: fnFloorCeil},
		"mod": {eval: func(c *call, a []any) (any, error) {
			return arith('%', c.f.T, a[0], a[1])
		}},
		"lower":            {eval: fnCase(strings.ToLower)},
		"lcase":            {eval: fnCase(strings.ToLower)},
		"upper":            {eval: fnCase(strings.ToUpper)},
		"ucase":            {eval: fnCase(strings.ToUpper)},
		"length":           {eval: fnLength},
		"octet_length":     {eval: fnLength},
		"char_length":      {eval: fnCharLength},
		"character_length": {eval: fnCharLength},
		"substring":        {eval: fnSubstring},
		"substr":           {eval: fnSubstring},
		"concat":           {eval: fnConcat},
		"trim":             {eval: fnTrim(func(s string) string { return strings.Trim(s, " ") })},
		"ltrim":            {eval: fnTrim(func(s string) string { return strings.TrimLeft(s, " ") })},
		"rtrim":            {eval: fnTrim(func(s string) string { return strings.TrimRight(s, " ") })},
		"replace":          {eval: fnReplace},
		"reverse":          {eval: fnReverse},
		"year":             {eval: fnDatePart(func(t time.Time) int64 { return int64(t.Year()) })},
		"month":            {eval: fnDatePart(func(t time.Time) int64 { return int64(t.Month()) })},
		"day":              {eval: fnDatePart(func(t time.Time) int64 { return int64(t.Day()) })},
		"dayofmonth":       {eval: fnDatePart(func(t time.Time) int64 { return int64(t.Day()) })},
		"date_format":      {eval: fnDateFormat},
	}
}

func compileFunc(x *sqlplan.Func, env *env) (valueBinder, error) {
	if isAggregate(x) {
		return nil, fmt.Errorf("aggregate %s outside an aggregation: %w", x, metadata.ErrUnsupported)
	}
	fn, ok := scalarFuncs[x.Name]
	if !ok {
		return nil, unsupported(x)
	}
	args := make([]valueBinder, len(x.Args))
	c := &call{f: x, ts: make([]metadata.DataType, len(x.Args))}
	for i, a := range x.Args {
		b, err := compileValue(a, env)
		if err != nil {
			return nil, err
		}
		args[i], c.ts[i] = b, a.Type()
	}
	return func(rec arrow.RecordBatch) valueFn {
		fs := make([]valueFn, len(args))
		for i, b := range args {
			fs[i] = b(rec)
		}
		vals := make([]any, len(fs))
		return func(i int) any {
			for j, f := range fs {
				vals[j] = f(i)
				if vals[j] == nil && !fn.nulls {
					return nil
				}
			}
			v, err := fn.eval(c, vals)
			if err != nil {
				env.fail(fmt.Errorf("%s: %w", x, err))
				return nil
			}
			return conform(v, x.T)
		}
	}, nil
}

func fnCoalesce(_ *call, a []any) (any, error) {
	for _, v := range a {
		if v != nil {
			return v, nil
		}
	}
	return nil, nil
}

func fnNullIf(_ *call, a []any) (any, error) {
	if a[0] == nil || a[1] == nil {
		return a[0], nil
	}
	if sqlCompare(a[0], a[1]) == 0 {
		return nil, nil
	}
	return a[0], nil
}

func fnAbs(_ *call, a []any) (any, error) {
	switch x := a[0].(type) {
	case int64:
		if x == math.MinInt64 {
			return nil, errOverflow
		}
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case float64:
		return math.Abs(x), nil
	case metadata.DecimalValue:
		return metadata.DecimalValue{Num: x.Num.Abs(), Scale: x.Scale}, nil
	}
	return nil, nil
}

// fnRound rounds half away from zero, for DOUBLE too (SQLite's rule; MySQL
// leaves DOUBLE to the C library). A negative count of digits rounds
// to the left of the point.
func fnRound(c *call, a []any) (any, error) {
	var d int64
	if len(a) == 2 {
		switch x := a[1].(type) {
		case int64:
			d = x
		case float64:
			d = int64(math.Round(x))
		case metadata.DecimalValue:
			d = int64(math.Round(x.Float64()))
		default:
			return nil, nil
		}
	}
	d = max(min(d, 38), -38)
	switch x := a[0].(type) {
	case int64:
		if d >= 0 {
			return x, nil
		}
		r := rescale(scaled{n: big.NewInt(x)}, int32(d))
		r.Mul(r, pow10(int32(-d)))
		if !r.IsInt64() {
			return nil, errOverflow
		}
		return r.Int64(), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return x, nil
		}
		p := math.Pow(10, float64(d))
		r := math.Round(x*p) / p
		if math.IsInf(x*p, 0) {
			return x, nil
		}
		return r, nil
	case metadata.DecimalValue:
		scale := int32(c.f.T.Scale)
		n := rescale(scaled{n: x.Num.BigInt(), scale: x.Scale}, int32(min(d, int64(x.Scale))))
		if d < 0 {
			n.Mul(n, pow10(int32(-d)))
			n = rescale(scaled{n: n}, scale)
		} else {
			n = rescale(scaled{n: n, scale: int32(min(d, int64(x.Scale)))}, scale)
		}
		return decimalResult(n, scale)
	}
	return nil, nil
}

func decimalResult(n *big.Int, scale int32) (any, error) {
	if new(big.Int).Abs(n).Cmp(maxDecimal) > 0 {
		return nil, fmt.Errorf("%w: DECIMAL overflow (more than %d digits)", metadata.ErrInvalidValue, metadata.MaxDecimalPrecision)
	}
	return metadata.DecimalValue{Num: decimal128.FromBigInt(n), Scale: scale}, nil
}

func fnFloorCeil(c *call, a []any) (any, error) {
	ceil := c.f.Name != "floor"
	switch x := a[0].(type) {
	case int64:
		return x, nil
	case float64:
		if ceil {
			return math.Ceil(x), nil
		}
		return math.Floor(x), nil
	case metadata.DecimalValue:
		q, r := new(big.Int).QuoRem(x.Num.BigInt(), pow10(x.Scale), new(big.Int))
		if r.Sign() != 0 {
			if ceil && r.Sign() > 0 {
				q.Add(q, big.NewInt(1))
			} else if !ceil && r.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			}
		}
		if c.f.T.Root == metadata.BigInt {
			if !q.IsInt64() {
				return nil, errOverflow
			}
			return q.Int64(), nil
		}
		return decimalResult(q, 0)
	}
	return nil, nil
}

func fnCase(f func(string) string) func(*call, []any) (any, error) {
	return func(c *call, a []any) (any, error) {
		return f(toText(c.ts[0], a[0])), nil
	}
}

// fnLength is LENGTH: bytes, as MySQL counts them.
func fnLength(c *call, a []any) (any, error) {
	if b, ok := a[0].([]byte); ok {
		return int64(len(b)), nil
	}
	return int64(len(toText(c.ts[0], a[0]))), nil
}

func fnCharLength(c *call, a []any) (any, error) {
	if b, ok := a[0].([]byte); ok {
		return int64(len(b)), nil
	}
	return int64(utf8.RuneCountInString(toText(c.ts[0], a[0]))), nil
}

func intArg(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(math.Round(x)), true
	case metadata.DecimalValue:
		return int64(math.Round(x.Float64())), true
	case string:
		return int64(math.Round(mysqlNumber(x))), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// fnSubstring is SUBSTRING(s, pos[, len]) in characters: pos counts from
// 1, a negative pos counts from the end, pos 0 or beyond the string gives
// ”, as do a negative or zero len.
func fnSubstring(c *call, a []any) (any, error) {
	s := []rune(toText(c.ts[0], a[0]))
	pos, ok := intArg(a[1])
	if !ok {
		return nil, nil
	}
	n := int64(len(s))
	switch {
	case pos > 0:
		pos--
	case pos < 0:
		pos = n + pos
		if pos < 0 {
			return "", nil
		}
	default:
		return "", nil
	}
	if pos >= n {
		return "", nil
	}
	end := n
	if len(a) == 3 {
		l, ok := intArg(a[2])
		if !ok {
			return nil, nil
		}
		if l <= 0 {
			return "", nil
		}
		end = min(n, pos+l)
	}
	return string(s[pos:end]), nil
}

func fnConcat(c *call, a []any) (any, error) {
	var b strings.Builder
	for i, v := range a {
		b.WriteString(toText(c.ts[i], v))
	}
	return b.String(), nil
}

func fnTrim(f func(string) string) func(*call, []any) (any, error) {
	return func(c *call, a []any) (any, error) { return f(toText(c.ts[0], a[0])), nil }
}

func fnReplace(c *call, a []any) (any, error) {
	from := toText(c.ts[1], a[1])
	if from == "" {
		return toText(c.ts[0], a[0]), nil
	}
	return strings.ReplaceAll(toText(c.ts[0], a[0]), from, toText(c.ts[2], a[2])), nil
}

func fnReverse(c *call, a []any) (any, error) {
	r := []rune(toText(c.ts[0], a[0]))
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r), nil
}

// asTime reads a date-like value as a wall clock: DATE at midnight,
// TIMESTAMP as it is, TIMESTAMP_LTZ in UTC, a string as a date or a
// timestamp (false when it is neither, which makes the result NULL, as in
// MySQL).
func asTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case metadata.DateValue:
		return x.Time(), true
	case time.Time:
		return x.UTC(), true
	case string:
		if t, err := metadata.CoerceValue(metadata.TimestampType(metadata.MaxTimePrecision), x); err == nil {
			return t.(time.Time), true
		}
		if d, err := metadata.CoerceValue(metadata.DateType(), x); err == nil {
			return d.(metadata.DateValue).Time(), true
		}
	}
	return time.Time{}, false
}

func fnDatePart(part func(time.Time) int64) func(*call, []any) (any, error) {
	return func(_ *call, a []any) (any, error) {
		t, ok := asTime(a[0])
		if !ok {
			return nil, nil
		}
		return part(t), nil
	}
}

// fnDateFormat is MySQL's DATE_FORMAT for the specifiers it lists most
// (%Y %y %m %c %M %b %d %e %j %H %k %h %I %l %i %s %S %f %p %T %r %W %a
// %w %%); any other character after % stands for itself.
func fnDateFormat(c *call, a []any) (any, error) {
	t, ok := asTime(a[0])
	if !ok {
		return nil, nil
	}
	f := toText(c.ts[1], a[1])
	var b strings.Builder
	two := func(n int) { b.WriteString(fmt.Sprintf("%02d", n)) }
	hour12 := func() int {
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return h
	}
	ampm := func() string {
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			b.WriteString(fmt.Sprintf("%04d", t.Year()))
		case 'y':
			two(t.Year() % 100)
		case 'm':
			two(int(t.Month()))
		case 'c':
			b.WriteString(strconv.Itoa(int(t.Month())))
		case 'M':
			b.WriteString(t.Month().String())
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'd':
			two(t.Day())
		case 'e':
			b.WriteString(strconv.Itoa(t.Day()))
		case 'j':
			b.WriteString(fmt.Sprintf("%03d", t.YearDay()))
		case 'H':
			two(t.Hour())
		case 'k':
			b.WriteString(strconv.Itoa(t.Hour()))
		case 'h', 'I':
			two(hour12())
		case 'l':
			b.WriteString(strconv.Itoa(hour12()))
		case 'i':
			two(t.Minute())
		case 's', 'S':
			two(t.Second())
		case 'f':
			b.WriteString(fmt.Sprintf("%06d", t.Nanosecond()/1000))
		case 'p':
			b.WriteString(ampm())
		case 'T':
			b.WriteString(fmt.Sprintf("%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second()))
		case 'r':
			b.WriteString(fmt.Sprintf("%02d:%02d:%02d %s", hour12(), t.Minute(), t.Second(), ampm()))
		case 'W':
			b.WriteString(t.Weekday().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String(), nil
}

// compileCase evaluates CASE: the first WHEN that is TRUE (searched form)
// or equal to the operand (simple form) gives the result; else ELSE, or
// NULL without one.
func compileCase(x *sqlplan.Case, env *env) (valueBinder, error) {
	var operand valueBinder
	var err error
	if x.Operand != nil {
		if operand, err = compileValue(x.Operand, env); err != nil {
			return nil, err
		}
	}
	conds := make([]valueBinder, len(x.Whens))
	bconds := make([]boolBinder, len(x.Whens))
	results := make([]valueBinder, len(x.Whens))
	for i, w := range x.Whens {
		if operand != nil {
			conds[i], err = compileValue(w.Cond, env)
		} else {
			bconds[i], err = compileBool(w.Cond, env)
		}
		if err != nil {
			return nil, err
		}
		if results[i], err = compileValue(w.Result, env); err != nil {
			return nil, err
		}
	}
	var els valueBinder
	if x.Else != nil {
		if els, err = compileValue(x.Else, env); err != nil {
			return nil, err
		}
	}
	t := x.T
	return func(rec arrow.RecordBatch) valueFn {
		var op valueFn
		if operand != nil {
			op = operand(rec)
		}
		cf := make([]valueFn, len(conds))
		bf := make([]boolFn, len(conds))
		rf := make([]valueFn, len(conds))
		for i := range conds {
			if operand != nil {
				cf[i] = conds[i](rec)
			} else {
				bf[i] = bconds[i](rec)
			}
			rf[i] = results[i](rec)
		}
		var ef valueFn
		if els != nil {
			ef = els(rec)
		}
		return func(i int) any {
			var ov any
			if op != nil {
				ov = op(i)
			}
			for k := range rf {
				if op != nil {
					c := cf[k](i)
					if ov == nil || c == nil || sqlCompare(ov, c) != 0 {
						continue
					}
				} else if bf[k](i) != triTrue {
					continue
				}
				return conform(rf[k](i), t)
			}
			if ef != nil {
				return conform(ef(i), t)
			}
			return nil
		}
	}, nil
}
