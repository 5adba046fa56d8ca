package exec

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// tri is a SQL truth value: false, true or unknown (NULL).
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func (t tri) and(o tri) tri {
	if t == triFalse || o == triFalse {
		return triFalse
	}
	if t == triNull || o == triNull {
		return triNull
	}
	return triTrue
}

func (t tri) or(o tri) tri {
	if t == triTrue || o == triTrue {
		return triTrue
	}
	if t == triNull || o == triNull {
		return triNull
	}
	return triFalse
}

func (t tri) not() tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triNull
}

// valueFn returns the canonical value of row i (nil for NULL).
type valueFn func(i int) any

// boolFn returns the truth value of row i.
type boolFn func(i int) tri

// Compiled expressions are bound to each record batch before use: binding
// looks the columns up once, so the per-row closures do no lookups.
type valueBinder func(rec arrow.RecordBatch) valueFn
type boolBinder func(rec arrow.RecordBatch) boolFn

func unsupported(e sqlplan.Expr) error {
	return fmt.Errorf("expression %s is not supported yet: %w", e, metadata.ErrUnsupported)
}

func compileValue(e sqlplan.Expr, env *env) (valueBinder, error) {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		pos, err := columnPos(x, env)
		if err != nil {
			return nil, err
		}
		t := x.T
		return func(rec arrow.RecordBatch) valueFn {
			arr := rec.Column(pos)
			return func(i int) any { return metadata.ValueAt(arr, t, i) }
		}, nil
	case *sqlplan.Literal:
		v := x.Value
		return func(arrow.RecordBatch) valueFn { return func(int) any { return v } }, nil
	case *sqlplan.Arith:
		return compileArith(x, env)
	case *sqlplan.Neg:
		return compileNeg(x, env)
	case *sqlplan.Func:
		return compileFunc(x, env)
	case *sqlplan.Case:
		return compileCase(x, env)
	case *sqlplan.Cast:
		return compileCast(x, env)
	case *sqlplan.Subquery:
		if x.Kind == sqlplan.SubScalar {
			return compileScalarSubquery(x, env)
		}
		return boolValue(e, env)
	case *sqlplan.Compare, *sqlplan.And, *sqlplan.Or, *sqlplan.Not, *sqlplan.IsNull,
		*sqlplan.In, *sqlplan.Between, *sqlplan.Like:
		return boolValue(e, env)
	}
	return nil, unsupported(e)
}

// boolValue evaluates a condition as a value: TRUE, FALSE or NULL.
func boolValue(e sqlplan.Expr, env *env) (valueBinder, error) {
	b, err := compileBool(e, env)
	if err != nil {
		return nil, err
	}
	return func(rec arrow.RecordBatch) valueFn {
		f := b(rec)
		return func(i int) any {
			switch f(i) {
			case triTrue:
				return true
			case triFalse:
				return false
			}
			return nil
		}
	}, nil
}

func columnPos(c *sqlplan.ColumnRef, env *env) (int, error) {
	layout := env.layout
	if c.Index < 0 || c.Index >= len(layout) || layout[c.Index] < 0 {
		return 0, fmt.Errorf("column %s is not read by the scan", c.Name)
	}
	return layout[c.Index], nil
}

// env is what compiled expressions share: the scan's layout, and the first
// error raised while evaluating rows (an integer overflow, a division by
// zero), which the operator reports after the batch. subs runs the
// subqueries, within ctx: the operator's context, set before each batch.
type env struct {
	layout Layout
	err    error
	subs   *subqueries
	ctx    context.Context
}

func (e *env) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// takeErr returns and clears the evaluation error.
func (e *env) takeErr() error {
	err := e.err
	e.err = nil
	return err
}

func compileBool(e sqlplan.Expr, env *env) (boolBinder, error) {
	switch x := e.(type) {
	case *sqlplan.And:
		l, err := compileBool(x.L, env)
		if err != nil {
			return nil, err
		}
		r, err := compileBool(x.R, env)
		if err != nil {
			return nil, err
		}
		return func(rec arrow.RecordBatch) boolFn {
			lf, rf := l(rec), r(rec)
			return func(i int) tri {
				a := lf(i)
				if a == triFalse {
					return triFalse
				}
				return a.and(rf(i))
			}
		}, nil
	case *sqlplan.Or:
		l, err := compileBool(x.L, env)
		if err != nil {
			return nil, err
		}
		r, err := compileBool(x.R, env)
		if err != nil {
			return nil, err
		}
		return func(rec arrow.RecordBatch) boolFn {
			lf, rf := l(rec), r(rec)
			return func(i int) tri {
				a := lf(i)
				if a == triTrue {
					return triTrue
				}
				return a.or(rf(i))
			}
		}, nil
	case *sqlplan.Not:
		in, err := compileBool(x.E, env)
		if err != nil {
			return nil, err
		}
		return func(rec arrow.RecordBatch) boolFn {
			f := in(rec)
			return func(i int) tri { return f(i).not() }
		}, nil
	case *sqlplan.IsNull:
		if c, ok := x.E.(*sqlplan.ColumnRef); ok {
			pos, err := columnPos(c, env)
			if err != nil {
				return nil, err
			}
			not := x.Not
			return func(rec arrow.RecordBatch) boolFn {
				arr := rec.Column(pos)
				return func(i int) tri { return triOf(arr.IsNull(i) != not) }
			}, nil
		}
		v, err := compileValue(x.E, env)
		if err != nil {
			return nil, err
		}
		not := x.Not
		return func(rec arrow.RecordBatch) boolFn {
			f := v(rec)
			return func(i int) tri { return triOf((f(i) == nil) != not) }
		}, nil
	case *sqlplan.Compare:
		return compileCompare(x, env)
	case *sqlplan.Between:
		lo := &sqlplan.Compare{Op: sqlplan.OpGtEq, L: x.E, R: x.Lo}
		hi := &sqlplan.Compare{Op: sqlplan.OpLtEq, L: x.E, R: x.Hi}
		var both sqlplan.Expr = &sqlplan.And{L: lo, R: hi}
		if x.Not {
			both = &sqlplan.Not{E: both}
		}
		return compileBool(both, env)
	case *sqlplan.In:
		return compileIn(x, env)
	case *sqlplan.Subquery:
		if x.Kind == sqlplan.SubScalar {
			return valueCondition(e, env)
		}
		return compileSubqueryBool(x, env)
	case *sqlplan.Like:
		return compileLike(x, env)
	case *sqlplan.Literal:
		var t tri
		switch v := x.Value.(type) {
		case nil:
			t = triNull
		case bool:
			t = triOf(v)
		default:
			return nil, fmt.Errorf("%s is not a condition", e)
		}
		return func(arrow.RecordBatch) boolFn { return func(int) tri { return t } }, nil
	case *sqlplan.Func, *sqlplan.Case, *sqlplan.Cast:
		return valueCondition(e, env)
	case *sqlplan.ColumnRef:
		if x.T.Root != metadata.Boolean {
			return nil, fmt.Errorf("column %s of type %s is not a condition", x.Name, x.T)
		}
		pos, err := columnPos(x, env)
		if err != nil {
			return nil, err
		}
		return func(rec arrow.RecordBatch) boolFn {
			arr := rec.Column(pos).(*array.Boolean)
			return func(i int) tri {
				if arr.IsNull(i) {
					return triNull
				}
				return triOf(arr.Value(i))
			}
		}, nil
	}
	return nil, unsupported(e)
}

// valueCondition evaluates a BOOLEAN value as a condition.
func valueCondition(e sqlplan.Expr, env *env) (boolBinder, error) {
	if t := e.Type(); t.Root != 0 && t.Root != metadata.Boolean {
		return nil, fmt.Errorf("%s of type %s is not a condition: %w", e, t, metadata.ErrUnsupported)
	}
	v, err := compileValue(e, env)
	if err != nil {
		return nil, err
	}
	return func(rec arrow.RecordBatch) boolFn {
		f := v(rec)
		return func(i int) tri {
			switch f(i) {
			case true:
				return triTrue
			case false:
				return triFalse
			}
			return triNull
		}
	}, nil
}

// comparable reports whether values of two types can be compared.
func comparable(a, b metadata.DataType) bool {
	if a.Root == 0 || b.Root == 0 {
		return true // untyped NULL
	}
	switch {
	case a.IsNumeric() && b.IsNumeric():
		return true
	case a.IsString() && b.IsString():
		return true
	case a.IsBinary() && b.IsBinary():
		return true
	case a.IsNumeric() && b.IsString(), a.IsString() && b.IsNumeric():
		return true // numerically, as MySQL does
	case (a.Root == metadata.Timestamp || a.Root == metadata.TimestampLTZ) &&
		(b.Root == metadata.Timestamp || b.Root == metadata.TimestampLTZ):
		return true
	}
	return a.Root == b.Root && !a.IsNested()
}

func cmpResult(op sqlplan.CmpOp, c int) bool {
	switch op {
	case sqlplan.OpEq, sqlplan.OpNullSafeEq:
		return c == 0
	case sqlplan.OpNotEq:
		return c != 0
	case sqlplan.OpLt:
		return c < 0
	case sqlplan.OpLtEq:
		return c <= 0
	case sqlplan.OpGt:
		return c > 0
	case sqlplan.OpGtEq:
		return c >= 0
	}
	return false
}

func compileCompare(x *sqlplan.Compare, env *env) (boolBinder, error) {
	if !comparable(x.L.Type(), x.R.Type()) {
		return nil, fmt.Errorf("cannot compare %s (%s) with %s (%s): %w",
			x.L, x.L.Type(), x.R, x.R.Type(), metadata.ErrUnsupported)
	}
	if b := fastCompare(x, env); b != nil {
		return b, nil
	}
	l, err := compileValue(x.L, env)
	if err != nil {
		return nil, err
	}
	r, err := compileValue(x.R, env)
	if err != nil {
		return nil, err
	}
	op := x.Op
	return func(rec arrow.RecordBatch) boolFn {
		lf, rf := l(rec), r(rec)
		return func(i int) tri {
			a, b := lf(i), rf(i)
			if a == nil || b == nil {
				if op == sqlplan.OpNullSafeEq {
					return triOf(a == nil && b == nil)
				}
				return triNull
			}
			return triOf(cmpResult(op, sqlCompare(a, b)))
		}
	}, nil
}

// fastCompare handles column-versus-literal comparisons of integer,
// floating-point and string columns without boxing each value. It returns
// nil when the general path must be used.
func fastCompare(x *sqlplan.Compare, env *env) boolBinder {
	col, ok := x.L.(*sqlplan.ColumnRef)
	lit, ok2 := x.R.(*sqlplan.Literal)
	op := x.Op
	if !ok || !ok2 {
		col, ok = x.R.(*sqlplan.ColumnRef)
		lit, ok2 = x.L.(*sqlplan.Literal)
		if !ok || !ok2 {
			return nil
		}
		op = flip(op)
	}
	if lit.Value == nil || op == sqlplan.OpNullSafeEq {
		return nil
	}
	pos, err := columnPos(col, env)
	if err != nil {
		return nil
	}
	switch v := lit.Value.(type) {
	case int64:
		if !col.T.IsInteger() {
			return nil
		}
		return func(rec arrow.RecordBatch) boolFn {
			arr := rec.Column(pos)
			get := intGetter(arr)
			return func(i int) tri {
				if arr.IsNull(i) {
					return triNull
				}
				a := get(i)
				c := 0
				if a < v {
					c = -1
				} else if a > v {
					c = 1
				}
				return triOf(cmpResult(op, c))
			}
		}
	case float64:
		if col.T.Root != metadata.Double {
			return nil
		}
		return func(rec arrow.RecordBatch) boolFn {
			arr := rec.Column(pos).(*array.Float64)
			return func(i int) tri {
				if arr.IsNull(i) {
					return triNull
				}
				return triOf(cmpResult(op, metadata.Compare(arr.Value(i), v)))
			}
		}
	case string:
		if !col.T.IsString() {
			return nil
		}
		return func(rec arrow.RecordBatch) boolFn {
			arr := rec.Column(pos).(*array.String)
			return func(i int) tri {
				if arr.IsNull(i) {
					return triNull
				}
				return triOf(cmpResult(op, strings.Compare(arr.Value(i), v)))
			}
		}
	}
	return nil
}

func intGetter(arr arrow.Array) func(i int) int64 {
	switch a := arr.(type) {
	case *array.Int8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int64:
		return a.Value
	}
	// Integer columns are Int8..Int64 by metadata's Arrow mapping; anything
	// else reads as NULL-free zero rather than crashing a query.
	return func(int) int64 { return 0 }
}

func flip(op sqlplan.CmpOp) sqlplan.CmpOp {
	switch op {
	case sqlplan.OpLt:
		return sqlplan.OpGt
	case sqlplan.OpLtEq:
		return sqlplan.OpGtEq
	case sqlplan.OpGt:
		return sqlplan.OpLt
	case sqlplan.OpGtEq:
		return sqlplan.OpLtEq
	}
	return op
}

func compileIn(x *sqlplan.In, env *env) (boolBinder, error) {
	v, err := compileValue(x.E, env)
	if err != nil {
		return nil, err
	}
	items := make([]valueBinder, len(x.List))
	for i, it := range x.List {
		if !comparable(x.E.Type(), it.Type()) {
			return nil, fmt.Errorf("cannot compare %s (%s) with %s (%s): %w",
				x.E, x.E.Type(), it, it.Type(), metadata.ErrUnsupported)
		}
		if items[i], err = compileValue(it, env); err != nil {
			return nil, err
		}
	}
	not := x.Not
	return func(rec arrow.RecordBatch) boolFn {
		vf := v(rec)
		fs := make([]valueFn, len(items))
		for i, b := range items {
			fs[i] = b(rec)
		}
		return func(i int) tri {
			a := vf(i)
			if a == nil {
				return triNull
			}
			res := triFalse
			for _, f := range fs {
				b := f(i)
				if b == nil {
					res = triNull
					continue
				}
				if sqlCompare(a, b) == 0 {
					res = triTrue
					break
				}
			}
			if not {
				return res.not()
			}
			return res
		}
	}, nil
}

func compileLike(x *sqlplan.Like, env *env) (boolBinder, error) {
	if !x.E.Type().IsString() && x.E.Type().Root != 0 {
		return nil, fmt.Errorf("LIKE needs a string, not %s (%s): %w", x.E, x.E.Type(), metadata.ErrUnsupported)
	}
	v, err := compileValue(x.E, env)
	if err != nil {
		return nil, err
	}
	p, err := compileValue(x.Pattern, env)
	if err != nil {
		return nil, err
	}
	esc := x.Escape
	if esc == 0 {
		esc = '\\'
	}
	not := x.Not
	// A literal pattern is compiled once; others per row.
	var fixed *likePattern
	if lit, ok := x.Pattern.(*sqlplan.Literal); ok {
		s, ok := lit.Value.(string)
		if !ok {
			if lit.Value != nil {
				return nil, fmt.Errorf("LIKE pattern %s is not a string", lit)
			}
		} else {
			lp := compileLikePattern(s, esc)
			fixed = &lp
		}
	}
	return func(rec arrow.RecordBatch) boolFn {
		vf, pf := v(rec), p(rec)
		return func(i int) tri {
			a, ok := vf(i).(string)
			if !ok {
				return triNull
			}
			var m bool
			if fixed != nil {
				m = fixed.match(a)
			} else {
				ps, ok := pf(i).(string)
				if !ok {
					return triNull
				}
				lp := compileLikePattern(ps, esc)
				m = lp.match(a)
			}
			return triOf(m != not)
		}
	}, nil
}

// likePattern is a LIKE pattern split into literal pieces and wildcards.
// Matching is byte-wise and case-sensitive; '_' matches one UTF-8
// character.
type likePattern struct {
	tokens []likeToken
}

type likeToken struct {
	kind byte // 'l' literal, '%' any run, '_' one character
	lit  []byte
}

func compileLikePattern(p string, esc rune) likePattern {
	var lp likePattern
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			lp.tokens = append(lp.tokens, likeToken{kind: 'l', lit: lit})
			lit = nil
		}
	}
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i++
			lit = append(lit, string(rs[i])...)
		case r == '%':
			flush()
			if n := len(lp.tokens); n == 0 || lp.tokens[n-1].kind != '%' {
				lp.tokens = append(lp.tokens, likeToken{kind: '%'})
			}
		case r == '_':
			flush()
			lp.tokens = append(lp.tokens, likeToken{kind: '_'})
		default:
			lit = append(lit, string(r)...)
		}
	}
	flush()
	return lp
}

func (lp *likePattern) match(s string) bool {
	return likeMatch(lp.tokens, []byte(s))
}

func likeMatch(toks []likeToken, s []byte) bool {
	for len(toks) > 0 {
		t := toks[0]
		switch t.kind {
		case 'l':
			if !bytes.HasPrefix(s, t.lit) {
				return false
			}
			s = s[len(t.lit):]
		case '_':
			if len(s) == 0 {
				return false
			}
			_, size := utf8.DecodeRune(s)
			s = s[size:]
		case '%':
			rest := toks[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeMatch(rest, s[i:]) {
					return true
				}
			}
			return false
		}
		toks = toks[1:]
	}
	return len(s) == 0
}
