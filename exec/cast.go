package exec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// CAST and CONVERT follow MySQL: a string that does not read as a date or
// time gives NULL, a string read as a number takes its numeric prefix
// ('12abc' is 12), a number to an integer rounds half away from zero, and
// CHAR(n) keeps the first n characters. A value too large for the target
// (an integer beyond BIGINT, digits beyond a DECIMAL's precision) is an
// error naming the expression, where MySQL would clip it with a warning.

func compileCast(x *sqlplan.Cast, env *env) (valueBinder, error) {
	in, err := compileValue(x.E, env)
	if err != nil {
		return nil, err
	}
	from, to := x.E.Type(), x.T
	return func(rec arrow.RecordBatch) valueFn {
		f := in(rec)
		return func(i int) any {
			v := f(i)
			if v == nil {
				return nil
			}
			out, err := castValue(from, to, v)
			if err != nil {
				env.fail(fmt.Errorf("%s: %w", x, err))
				return nil
			}
			return out
		}
	}, nil
}

func castValue(from, to metadata.DataType, v any) (any, error) {
	switch {
	case to.IsString():
		s := toText(from, v)
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("%w: %q is not valid UTF-8 text", metadata.ErrInvalidValue, s)
		}
		if to.Root == metadata.Char && utf8.RuneCountInString(s) > to.Length {
			s = string([]rune(s)[:to.Length])
		}
		return s, nil
	case to.IsBinary():
		b := []byte(toText(from, v))
		if to.Root == metadata.Binary {
			// MySQL pads BINARY(n) with zero bytes and cuts longer values.
			out := make([]byte, to.Length)
			copy(out, b)
			return out, nil
		}
		return b, nil
	case to.IsInteger():
		return castInteger(from, v)
	case to.Root == metadata.Decimal:
		var src any = v
		switch x := v.(type) {
		case string:
			s := strings.TrimLeft(x, " \t\n\r")
			src = s[:metadata.NumericPrefix(s)]
			if src == "" {
				src = "0"
			}
		case bool:
			src = int64(0)
			if x {
				src = int64(1)
			}
		case metadata.DateValue, time.Time:
			n, err := castInteger(from, v)
			if err != nil {
				return nil, err
			}
			src = n
		}
		return metadata.CoerceValue(to, src)
	case to.Root == metadata.Double || to.Root == metadata.Float:
		switch x := v.(type) {
		case string:
			return mysqlNumber(x), nil
		case int64:
			return float64(x), nil
		case metadata.DecimalValue:
			return x.Float64(), nil
		}
		return metadata.CoerceValue(to, v)
	case to.IsTemporal():
		out, err := metadata.CoerceValue(to, v)
		if err != nil {
			if errors.Is(err, metadata.ErrInvalidValue) || errors.Is(err, metadata.ErrInvalidType) {
				// MySQL: a value that is no date is NULL.
				return nil, nil
			}
			return nil, err
		}
		return out, nil
	case to.Root == metadata.Boolean:
		n, err := castInteger(from, v)
		if err != nil {
			return nil, err
		}
		return n.(int64) != 0, nil
	}
	return metadata.CoerceValue(to, v)
}

// castInteger converts to BIGINT (CAST AS SIGNED / UNSIGNED).
func castInteger(from metadata.DataType, v any) (any, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case float64:
		return roundFloat(x)
	case metadata.DecimalValue:
		n := rescale(scaled{n: x.Num.BigInt(), scale: x.Scale}, 0)
		if !n.IsInt64() {
			return nil, errOverflow
		}
		return n.Int64(), nil
	case string:
		s := strings.TrimLeft(x, " \t\n\r")
		p := s[:metadata.NumericPrefix(s)]
		if p == "" {
			return int64(0), nil
		}
		if !strings.ContainsAny(p, ".eE") {
			n, ok := new(big.Int).SetString(p, 10)
			if !ok || !n.IsInt64() {
				return nil, errOverflow
			}
			return n.Int64(), nil
		}
		return roundFloat(mysqlNumber(p))
	case metadata.DateValue:
		t := x.Time()
		return int64(t.Year()*10000 + int(t.Month())*100 + t.Day()), nil
	case time.Time:
		t := x.UTC()
		d := int64(t.Year()*10000 + int(t.Month())*100 + t.Day())
		return d*1000000 + int64(t.Hour()*10000+t.Minute()*100+t.Second()), nil
	case metadata.TimeValue:
		t := x.Time()
		return int64(t.Hour()*10000 + t.Minute()*100 + t.Second()), nil
	}
	return nil, fmt.Errorf("%w: cannot convert %s to BIGINT", metadata.ErrUnsupported, from)
}

func roundFloat(f float64) (any, error) {
	r := math.Round(f)
	if math.IsNaN(r) || r >= 9223372036854775808.0 || r < -9223372036854775808.0 {
		return nil, errOverflow
	}
	return int64(r), nil
}
