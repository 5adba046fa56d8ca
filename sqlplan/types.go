package sqlplan

import (
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// source is the value conversions start from: the caller's argument for a
// bound placeholder, else the literal's value.
func (e *Literal) source() any {
	if e.arg != nil {
		return e.arg
	}
	return e.Value
}

// describe renders a literal for an error message, including arguments
// whose type is not known yet.
func (e *Literal) describe() string {
	if e.T.Root == 0 && e.arg != nil {
		return fmt.Sprintf("%v", e.arg)
	}
	return e.String()
}

// argLiteral types a bound argument by its Go type: integers BIGINT,
// floats DOUBLE, time.Time TIMESTAMP_LTZ(9) (its instant), and the
// canonical forms their type. Slices and maps stay untyped until compared
// with or assigned to a column.
func argLiteral(v any) (*Literal, error) {
	for range 16 {
		if dv, ok := v.(driver.Valuer); ok {
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
				return &Literal{}, nil
			}
			nv, err := dv.Value()
			if err != nil {
				return nil, wrapf(metadata.ErrInvalidValue, err, "argument %T", v)
			}
			v = nv
			continue
		}
		break
	}
	lit := func(val any, t metadata.DataType) (*Literal, error) {
		return &Literal{Value: val, T: t, arg: v}, nil
	}
	switch x := v.(type) {
	case nil:
		return &Literal{}, nil
	case bool:
		return lit(x, metadata.BooleanType())
	case string:
		return lit(x, metadata.StringType())
	case []byte:
		return lit(append([]byte{}, x...), metadata.BytesType())
	case time.Time:
		return lit(x.UTC(), metadata.TimestampLTZType(9))
	case metadata.DecimalValue:
		return lit(x, metadata.DecimalType(decimalPrecision(x), int(x.Scale)))
	case metadata.DateValue:
		return lit(x, metadata.DateType())
	case metadata.TimeValue:
		return lit(x, metadata.TimeType(9))
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return &Literal{}, nil
		}
		return argLiteral(rv.Elem().Interface())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return lit(rv.Int(), metadata.BigIntType())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u <= math.MaxInt64 {
			return lit(int64(u), metadata.BigIntType())
		}
		l, err := numberLiteral(strconv.FormatUint(u, 10))
		if err != nil {
			return nil, err
		}
		l.arg = v
		return l, nil
	case reflect.Float32, reflect.Float64:
		return lit(rv.Float(), metadata.DoubleType())
	case reflect.String:
		return lit(rv.String(), metadata.StringType())
	case reflect.Slice, reflect.Map, reflect.Struct, reflect.Array:
		return &Literal{arg: v}, nil
	}
	return nil, errorf(metadata.ErrInvalidValue, "arguments of type %T are not supported", v)
}

func decimalPrecision(d metadata.DecimalValue) int {
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(d.String()), "0")
	p := max(len(digits), int(d.Scale), 1)
	return min(p, metadata.MaxDecimalPrecision)
}

// coercePair converts a literal on one side of a comparison to the type of
// the other side.
func coercePair(l, r Expr) (Expr, Expr, error) {
	var err error
	_, ll := l.(*Literal)
	_, rl := r.(*Literal)
	switch {
	case rl && !ll:
		r, err = coerceTo(r, l)
	case ll && !rl:
		l, err = coerceTo(l, r)
	}
	return l, r, err
}

// coerceTo converts v, when it is a literal, to the type of target, when
// target is not one.
func coerceTo(v, target Expr) (Expr, error) {
	l, ok := v.(*Literal)
	if !ok {
		return v, nil
	}
	if _, isLit := target.(*Literal); isLit || target.Type().Root == 0 {
		return v, nil
	}
	what := "expression " + target.String()
	if c, ok := target.(*ColumnRef); ok {
		what = "column " + quoteIdent(c.Name)
	}
	out, err := coerceLiteral(l, target.Type(), what)
	if err != nil && l.outer {
		return v, nil
	}
	return out, err
}

// coerceLiteral converts l to t when nothing is lost, and otherwise keeps
// it as it is so that the comparison stays exact (tinyint_col = 300 is
// simply false; int_col > 2.5 compares with 2.5). A string that must be a
// date, time, timestamp or number and does not parse is an error.
func coerceLiteral(l *Literal, t metadata.DataType, what string) (*Literal, error) {
	src := l.source()
	if src == nil {
		return l, nil
	}
	fail := func() (*Literal, error) {
		return nil, errorf(metadata.ErrInvalidValue, "cannot convert %s to %s for %s", l.describe(), t, what)
	}
	try := func(tt metadata.DataType, v any) (*Literal, bool) {
		out, err := metadata.CoerceValue(tt, v)
		if err != nil {
			return nil, false
		}
		return &Literal{Value: out, T: tt}, true
	}
	_, isString := src.(string)
	switch {
	case t.IsTemporal():
		switch src.(type) {
		case string, time.Time, metadata.DateValue, metadata.TimeValue:
		default:
			return l, nil
		}
		tt := t
		if tt.Root != metadata.Date {
			// Keep every fractional digit of the literal: compared with a
			// TIMESTAMP(3) column, '...00.0005' must not become '...00.000'.
			tt.Precision = metadata.MaxTimePrecision
		}
		if out, ok := try(tt, src); ok {
			return out, nil
		}
		return fail()
	case t.IsNumeric():
		n := l
		if isString {
			var err error
			if n, err = numberLiteral(strings.TrimSpace(src.(string))); err != nil {
				return fail()
			}
		}
		switch {
		case n.T.IsInteger():
			x := n.Value.(int64)
			if (t.Root == metadata.Float || t.Root == metadata.Double) && (x > 1<<53 || x < -(1<<53)) {
				return n, nil
			}
			if out, ok := try(t, x); ok {
				return out, nil
			}
		case n.T.Root == metadata.Decimal:
			if t.Root == metadata.Decimal && n.T.Scale > t.Scale || t.IsInteger() {
				return n, nil
			}
			if out, ok := try(t, n.Value); ok {
				return out, nil
			}
		case n.T.Root == metadata.Double && (t.Root == metadata.Float || t.Root == metadata.Double):
			if out, ok := try(t, n.Value); ok {
				return out, nil
			}
		}
		return n, nil
	case t.IsString():
		if t.Root == metadata.Char && isString {
			if out, ok := try(t, src); ok {
				return out, nil
			}
		}
		return l, nil
	case t.IsBinary():
		switch src.(type) {
		case string, []byte:
			if out, ok := try(t, src); ok {
				return out, nil
			}
			if out, ok := try(metadata.BytesType(), src); ok {
				return out, nil
			}
		}
		return l, nil
	case t.Root == metadata.Boolean:
		if x, ok := l.Value.(int64); ok && (x == 0 || x == 1) {
			return &Literal{Value: x == 1, T: t}, nil
		}
		return l, nil
	case t.IsNested():
		if out, ok := try(t, src); ok {
			return out, nil
		}
		return fail()
	}
	return l, nil
}

// checkComparable refuses comparing values of unrelated types.
func checkComparable(a, b Expr) error {
	ta, tb := a.Type(), b.Type()
	if ta.Root == 0 || tb.Root == 0 || comparableTypes(ta, tb) || stringNumber(ta, tb) {
		return nil
	}
	return errorf(metadata.ErrUnsupported, "cannot compare %s (%s) with %s (%s)", describeExpr(a), ta, describeExpr(b), tb)
}

func describeExpr(e Expr) string {
	if l, ok := e.(*Literal); ok {
		return l.describe()
	}
	return e.String()
}

// stringNumber reports a string compared with a number, which compares
// numerically, as in MySQL: the string is read as a number (its longest
// numeric prefix, 0 if none).
func stringNumber(a, b metadata.DataType) bool {
	return a.IsString() && b.IsNumeric() || a.IsNumeric() && b.IsString()
}

func comparableTypes(a, b metadata.DataType) bool {
	switch {
	case a.IsNumeric():
		return b.IsNumeric()
	case a.IsString():
		return b.IsString()
	case a.IsBinary():
		return b.IsBinary()
	case a.IsNested():
		return a.Equal(b)
	}
	return a.Root == b.Root
}

// negate folds -literal.
func negate(l *Literal) (*Literal, error) {
	switch x := l.Value.(type) {
	case nil:
		return l, nil
	case int64:
		if x == math.MinInt64 {
			return numberLiteral("9223372036854775808")
		}
		return &Literal{Value: -x, T: l.T}, nil
	case float64:
		return &Literal{Value: -x, T: l.T}, nil
	case metadata.DecimalValue:
		return &Literal{Value: metadata.DecimalValue{Num: x.Num.Negate(), Scale: x.Scale}, T: l.T}, nil
	}
	return nil, errorf(metadata.ErrUnsupported, "unary minus on %s", l.describe())
}

func scaleOf(t metadata.DataType) int {
	if t.Root == metadata.Decimal {
		return t.Scale
	}
	return 0
}

// arithType is the result type of l op r (DESIGN §6): integers give BIGINT
// (DIV too), anything with DOUBLE or FLOAT gives DOUBLE, DECIMAL with an
// exact operand gives DECIMAL(38, s); '/' of exact numbers is DECIMAL with
// four more fractional digits, as in MySQL.
func arithType(op byte, l, r metadata.DataType) (metadata.DataType, error) {
	if l.Root == 0 {
		l = r
	}
	if r.Root == 0 {
		r = l
	}
	if l.Root == 0 {
		return metadata.BigIntType(), nil
	}
	for _, t := range []metadata.DataType{l, r} {
		if !t.IsNumeric() {
			return metadata.DataType{}, errorf(metadata.ErrUnsupported, "arithmetic on %s", t)
		}
	}
	isFloat := func(t metadata.DataType) bool { return t.Root == metadata.Float || t.Root == metadata.Double }
	switch {
	case isFloat(l) || isFloat(r):
		return metadata.DoubleType(), nil
	case op == 'd':
		return metadata.BigIntType(), nil
	case op == '/':
		return metadata.DecimalType(metadata.MaxDecimalPrecision, min(scaleOf(l)+4, metadata.MaxDecimalPrecision)), nil
	case l.Root == metadata.Decimal || r.Root == metadata.Decimal:
		s := max(scaleOf(l), scaleOf(r))
		if op == '*' {
			s = min(scaleOf(l)+scaleOf(r), metadata.MaxDecimalPrecision)
		}
		return metadata.DecimalType(metadata.MaxDecimalPrecision, s), nil
	}
	return metadata.BigIntType(), nil
}

// commonType is the type values of the given types share (NULLs, of zero
// type, fit anywhere): wider numbers, STRING for strings, BYTES for binary.
func commonType(ts []metadata.DataType) (metadata.DataType, bool) {
	var out metadata.DataType
	for _, t := range ts {
		switch {
		case t.Root == 0:
		case out.Root == 0:
			out = t
		case out.Equal(t):
		case out.IsNumeric() && t.IsNumeric():
			switch {
			case out.Root == metadata.Double || t.Root == metadata.Double ||
				out.Root == metadata.Float || t.Root == metadata.Float:
				out = metadata.DoubleType()
			case out.Root == metadata.Decimal || t.Root == metadata.Decimal:
				out = metadata.DecimalType(metadata.MaxDecimalPrecision, max(scaleOf(out), scaleOf(t)))
			default:
				out = metadata.BigIntType()
			}
		case out.IsString() && t.IsString():
			out = metadata.StringType()
		case out.IsBinary() && t.IsBinary():
			out = metadata.BytesType()
		case out.Root == t.Root && t.IsTemporal():
			out.Precision = max(out.Precision, t.Precision)
		default:
			return metadata.DataType{}, false
		}
	}
	return out, true
}

func typeList(ts []metadata.DataType) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		if t.Root == 0 {
			parts[i] = "NULL"
		} else {
			parts[i] = t.String()
		}
	}
	return strings.Join(parts, ", ")
}

// funcType types a call of a known function; an unknown name is
// ErrUnsupported. Execution of the functions is the exec package's.
func funcType(f *Func, ts []metadata.DataType) (metadata.DataType, error) {
	name := strings.ToUpper(f.Name)
	nargs := func(lo, hi int) error {
		if len(ts) < lo || len(ts) > hi {
			if lo == hi {
				return errorf(metadata.ErrInvalidValue, "%s takes %d argument(s), not %d", name, lo, len(ts))
			}
			return errorf(metadata.ErrInvalidValue, "%s takes %d to %d arguments, not %d", name, lo, hi, len(ts))
		}
		return nil
	}
	var arg metadata.DataType
	if len(ts) > 0 {
		arg = ts[0]
	}
	switch f.Name {
	case "count":
		if f.Star {
			return metadata.BigIntType(), nil
		}
		return metadata.BigIntType(), nargs(1, 1)
	case "sum", "avg":
		if err := nargs(1, 1); err != nil {
			return arg, err
		}
		switch {
		case arg.Root == 0, arg.IsInteger():
			if f.Name == "avg" {
				return metadata.DoubleType(), nil
			}
			return metadata.BigIntType(), nil
		case arg.Root == metadata.Float || arg.Root == metadata.Double:
			return metadata.DoubleType(), nil
		case arg.Root == metadata.Decimal:
			if f.Name == "avg" {
				// As MySQL's division: four more fractional digits.
				return metadata.DecimalType(metadata.MaxDecimalPrecision, min(arg.Scale+4, metadata.MaxDecimalPrecision)), nil
			}
			return metadata.DecimalType(metadata.MaxDecimalPrecision, arg.Scale), nil
		}
		return arg, errorf(metadata.ErrUnsupported, "%s of %s", name, arg)
	case "min", "max":
		if err := nargs(1, 1); err != nil {
			return arg, err
		}
		if arg.Root != 0 && !arg.HasOrder() {
			return arg, errorf(metadata.ErrUnsupported, "%s of %s", name, arg)
		}
		return arg, nil
	case "version", "database", "schema":
		return metadata.StringType(), nargs(0, 0)
	case "lower", "upper", "lcase", "ucase", "trim", "ltrim", "rtrim", "reverse":
		return metadata.StringType(), nargs(1, 1)
	case "concat":
		return metadata.StringType(), nargs(1, 1<<16)
	case "substring", "substr":
		return metadata.StringType(), nargs(2, 3)
	case "replace":
		return metadata.StringType(), nargs(3, 3)
	case "length", "octet_length", "char_length", "character_length":
		return metadata.BigIntType(), nargs(1, 1)
	case "abs":
		if err := nargs(1, 1); err != nil {
			return arg, err
		}
		if arg.Root != 0 && !arg.IsNumeric() {
			return arg, errorf(metadata.ErrUnsupported, "ABS of %s", arg)
		}
		return numericResult(arg), nil
	case "round":
		if err := nargs(1, 2); err != nil {
			return arg, err
		}
		if err := wantNumeric(name, ts...); err != nil {
			return arg, err
		}
		if arg.Root == metadata.Decimal {
			// The scale is the digits kept: none without a count, the
			// count when it is a constant, else the argument's.
			s := 0
			if len(f.Args) == 2 {
				s = arg.Scale
				if l, ok := f.Args[1].(*Literal); ok {
					if d, ok := l.Value.(int64); ok {
						s = int(min(max(d, 0), int64(arg.Scale)))
					}
				}
			}
			return metadata.DecimalType(metadata.MaxDecimalPrecision, s), nil
		}
		return numericResult(arg), nil
	case "floor", "ceil", "ceiling":
		if err := nargs(1, 1); err != nil {
			return arg, err
		}
		if err := wantNumeric(name, ts...); err != nil {
			return arg, err
		}
		if arg.Root == metadata.Decimal {
			// An integer: BIGINT when every value fits, else DECIMAL(38, 0).
			if arg.Precision-arg.Scale <= 18 {
				return metadata.BigIntType(), nil
			}
			return metadata.DecimalType(metadata.MaxDecimalPrecision, 0), nil
		}
		return numericResult(arg), nil
	case "mod":
		if err := nargs(2, 2); err != nil {
			return arg, err
		}
		return arithType('%', ts[0], ts[1])
	case "year", "month", "day", "dayofmonth":
		if err := nargs(1, 1); err != nil {
			return arg, err
		}
		if err := wantDateLike(name, arg); err != nil {
			return arg, err
		}
		return metadata.BigIntType(), nil
	case "date_format":
		if err := nargs(2, 2); err != nil {
			return arg, err
		}
		if err := wantDateLike(name, arg); err != nil {
			return arg, err
		}
		if t := ts[1]; t.Root != 0 && !t.IsString() {
			return arg, errorf(metadata.ErrUnsupported, "DATE_FORMAT format of %s", t)
		}
		return metadata.StringType(), nil
	case "nullif":
		if err := nargs(2, 2); err != nil {
			return arg, err
		}
		if !(ts[0].Root == 0 || ts[1].Root == 0 || comparableTypes(ts[0], ts[1]) || stringNumber(ts[0], ts[1])) {
			return arg, errorf(metadata.ErrUnsupported, "NULLIF of %s and %s", ts[0], ts[1])
		}
		if arg.Root == 0 {
			return ts[1], nil
		}
		return arg, nil
	case "ifnull":
		if err := nargs(2, 2); err != nil {
			return arg, err
		}
		t, ok := commonType(ts)
		if !ok {
			return t, errorf(metadata.ErrUnsupported, "%s of different types (%s)", name, typeList(ts))
		}
		return t, nil
	case "coalesce":
		if err := nargs(1, 1<<16); err != nil {
			return arg, err
		}
		t, ok := commonType(ts)
		if !ok {
			return t, errorf(metadata.ErrUnsupported, "%s of different types (%s)", name, typeList(ts))
		}
		return t, nil
	case "array":
		if err := nargs(1, 1<<16); err != nil {
			return arg, err
		}
		t, ok := commonType(ts)
		if !ok {
			return t, errorf(metadata.ErrUnsupported, "ARRAY of different types (%s)", typeList(ts))
		}
		if t.Root == 0 {
			t = metadata.StringType()
		}
		return metadata.ArrayType(t), nil
	case "map":
		if len(ts) == 0 || len(ts)%2 != 0 {
			return arg, errorf(metadata.ErrInvalidValue, "MAP takes key, value pairs, not %d arguments", len(ts))
		}
		var ks, vs []metadata.DataType
		for i := 0; i < len(ts); i += 2 {
			ks, vs = append(ks, ts[i]), append(vs, ts[i+1])
		}
		kt, ok1 := commonType(ks)
		vt, ok2 := commonType(vs)
		if !ok1 || !ok2 {
			return arg, errorf(metadata.ErrUnsupported, "MAP of different types (%s)", typeList(ts))
		}
		if kt.Root == 0 {
			return arg, errorf(metadata.ErrInvalidValue, "MAP keys must not be NULL")
		}
		if vt.Root == 0 {
			vt = metadata.StringType()
		}
		return metadata.MapType(kt, vt), nil
	case "row":
		if err := nargs(1, 1<<16); err != nil {
			return arg, err
		}
		fields := make([]metadata.Field, len(ts))
		for i, t := range ts {
			if t.Root == 0 {
				t = metadata.StringType()
			}
			fields[i] = metadata.Field{Name: "f" + strconv.Itoa(i), Type: t}
		}
		return metadata.RowType(fields...), nil
	}
	return arg, errorf(metadata.ErrUnsupported, "function %s is not supported", name)
}

// numericResult is the type of a function that keeps its argument's kind:
// integers BIGINT, FLOAT DOUBLE, DECIMAL(p, s) DECIMAL(38, s).
func numericResult(t metadata.DataType) metadata.DataType {
	switch {
	case t.Root == 0, t.IsInteger():
		return metadata.BigIntType()
	case t.Root == metadata.Float || t.Root == metadata.Double:
		return metadata.DoubleType()
	case t.Root == metadata.Decimal:
		return metadata.DecimalType(metadata.MaxDecimalPrecision, t.Scale)
	}
	return t
}

func wantNumeric(name string, ts ...metadata.DataType) error {
	for _, t := range ts {
		if t.Root != 0 && !t.IsNumeric() {
			return errorf(metadata.ErrUnsupported, "%s of %s", name, t)
		}
	}
	return nil
}

// wantDateLike accepts what date functions read: DATE, TIMESTAMP,
// TIMESTAMP_LTZ and strings (read as a date or timestamp, as MySQL does).
func wantDateLike(name string, t metadata.DataType) error {
	switch t.Root {
	case 0, metadata.Date, metadata.Timestamp, metadata.TimestampLTZ:
		return nil
	}
	if t.IsString() {
		return nil
	}
	return errorf(metadata.ErrUnsupported, "%s of %s", name, t)
}
