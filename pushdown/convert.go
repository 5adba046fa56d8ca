package pushdown

import (
	"bytes"
	"math/big"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/sqlplan"
)

// Convert turns a bound boolean expression into the neutral predicate tree
// when every part of it converts, and reports whether it did. Convertible:
// column op literal for =, <>, <, <=, >, >=, <=> (literal op column is
// turned around), IS [NOT] NULL, [NOT] IN (literals), [NOT] BETWEEN,
// [NOT] LIKE 'p%' / '%s' / '%s%' without other wildcards, AND, OR and NOT
// of convertible parts. Literals are converted to the column's type when
// that is exact; a literal the type cannot hold (int_col > 2.5,
// tinyint_col = 300, a timestamp finer than the column) keeps its exact
// value rather than compare as a rounded, clamped or wrapped one (see
// literal).
//
// The predicate is exact: Test on it answers what the expression answers
// in a WHERE clause.
func Convert(table *metadata.TableInfo, e sqlplan.Expr) (predicate.P, bool) {
	p, _, ok := convert(table, e)
	return p, ok
}

// convert also reports whether p may be negated: a <=> 5 becomes a = 5,
// which differs from it only on NULL (unknown instead of false) — harmless
// where only TRUE counts, wrong under a NOT.
func convert(table *metadata.TableInfo, e sqlplan.Expr) (p predicate.P, negatable, ok bool) {
	switch e := e.(type) {
	case *sqlplan.Compare:
		return convertCompare(table, e)
	case *sqlplan.IsNull:
		col, ok := column(table, e.E)
		if !ok {
			return nil, false, false
		}
		op := predicate.IsNull
		if e.Not {
			op = predicate.IsNotNull
		}
		return leaf(col, op), true, true
	case *sqlplan.In:
		col, ok := column(table, e.E)
		if !ok || len(e.List) == 0 {
			return nil, false, false
		}
		l := leaf(col, predicate.In)
		if e.Not {
			l.Op = predicate.NotIn
		}
		for _, x := range e.List {
			v, wide, ok := literal(col, x)
			if !ok {
				return nil, false, false
			}
			l.Literals = append(l.Literals, v)
			l.Type = widest(l.Type, wide)
		}
		return l, true, true
	case *sqlplan.Between:
		col, ok := column(table, e.E)
		if !ok {
			return nil, false, false
		}
		lo, wideLo, okLo := literal(col, e.Lo)
		hi, wideHi, okHi := literal(col, e.Hi)
		if !okLo || !okHi {
			return nil, false, false
		}
		if e.Not {
			return &predicate.Or{Children: []predicate.P{
				typed(leaf(col, predicate.Lt, lo), wideLo), typed(leaf(col, predicate.Gt, hi), wideHi),
			}}, true, true
		}
		return &predicate.And{Children: []predicate.P{
			typed(leaf(col, predicate.GtEq, lo), wideLo), typed(leaf(col, predicate.LtEq, hi), wideHi),
		}}, true, true
	case *sqlplan.Like:
		col, ok := column(table, e.E)
		if !ok || !col.t.IsString() {
			return nil, false, false
		}
		lit, ok := e.Pattern.(*sqlplan.Literal)
		if !ok {
			return nil, false, false
		}
		pattern, ok := lit.Value.(string)
		if !ok {
			return nil, false, false
		}
		op, text, ok := parseLike(pattern, e.Escape)
		if !ok {
			return nil, false, false
		}
		var l predicate.P = leaf(col, op, text)
		if e.Not {
			l = &predicate.Not{Child: l}
		}
		return l, true, true
	case *sqlplan.And, *sqlplan.Or:
		return convertChain(table, e)
	case *sqlplan.Not:
		c, neg, ok := convert(table, e.E)
		if !ok || !neg {
			return nil, false, false
		}
		if n, ok := predicate.Negate(c); ok {
			return n, true, true
		}
		return &predicate.Not{Child: c}, true, true
	}
	return nil, false, false
}

var flipped = map[sqlplan.CmpOp]sqlplan.CmpOp{
	sqlplan.OpEq: sqlplan.OpEq, sqlplan.OpNotEq: sqlplan.OpNotEq, sqlplan.OpNullSafeEq: sqlplan.OpNullSafeEq,
	sqlplan.OpLt: sqlplan.OpGt, sqlplan.OpGt: sqlplan.OpLt,
	sqlplan.OpLtEq: sqlplan.OpGtEq, sqlplan.OpGtEq: sqlplan.OpLtEq,
}

var leafOp = map[sqlplan.CmpOp]predicate.Op{
	sqlplan.OpEq: predicate.Eq, sqlplan.OpNotEq: predicate.NotEq,
	sqlplan.OpLt: predicate.Lt, sqlplan.OpLtEq: predicate.LtEq,
	sqlplan.OpGt: predicate.Gt, sqlplan.OpGtEq: predicate.GtEq,
}

func convertCompare(table *metadata.TableInfo, e *sqlplan.Compare) (predicate.P, bool, bool) {
	op, colExpr, litExpr := e.Op, e.L, e.R
	if _, isCol := e.L.(*sqlplan.ColumnRef); !isCol {
		op, colExpr, litExpr = flipped[e.Op], e.R, e.L
	}
	col, ok := column(table, colExpr)
	if !ok {
		return nil, false, false
	}
	v, wide, ok := literal(col, litExpr)
	if !ok {
		return nil, false, false
	}
	if op == sqlplan.OpNullSafeEq {
		if v == nil {
			return leaf(col, predicate.IsNull), true, true
		}
		return typed(leaf(col, predicate.Eq, v), wide), false, true
	}
	lop, ok := leafOp[op]
	if !ok {
		return nil, false, false
	}
	return typed(leaf(col, lop, v), wide), true, true
}

// col is a resolved column of the table.
type col struct {
	index int
	name  string
	t     metadata.DataType
}

func column(table *metadata.TableInfo, e sqlplan.Expr) (col, bool) {
	ref, ok := e.(*sqlplan.ColumnRef)
	if !ok || ref.Index < 0 || ref.Index >= len(table.Schema.Columns) {
		return col{}, false
	}
	c := table.Schema.Columns[ref.Index]
	if !c.Type.HasOrder() {
		return col{}, false
	}
	return col{index: ref.Index, name: c.Name, t: c.Type}, true
}

func leaf(c col, op predicate.Op, lits ...any) *predicate.Leaf {
	return &predicate.Leaf{Op: op, Column: c.index, Name: c.name, Type: c.t, Literals: lits}
}

// typed sets the type a leaf prints its literals with (see literal).
func typed(l *predicate.Leaf, t metadata.DataType) *predicate.Leaf {
	l.Type = t
	return l
}

// widest is the finer of two print types of one column.
func widest(a, b metadata.DataType) metadata.DataType {
	if b.Precision > a.Precision {
		return b
	}
	return a
}

// literal converts a literal expression to a value the leaf compares
// against the column: the canonical value of the column's type when the
// conversion is exact. When it is not — a number out of the type's range
// or with more digits than it holds (tinyint_col = 300, int_col > 2.5,
// dec_col = 1.005), a timestamp finer than the column's precision — the
// literal keeps its own exact value: metadata.Compare orders numbers of
// every form exactly against each other, and timestamps of every
// precision, so the leaf still answers exactly (tinyint_col = 300 matches
// nothing, tinyint_col < 300 every non-NULL row) with neither a wrap-around
// nor a rounded bound. The sqlplan binder keeps such literals the same
// way, so the residual and the pushed leaf agree. wide is the type to
// print the literal with: the column's, or a finer timestamp.
func literal(c col, e sqlplan.Expr) (v any, wide metadata.DataType, ok bool) {
	lit, ok := e.(*sqlplan.Literal)
	if !ok {
		return nil, c.t, false
	}
	if lit.Value == nil {
		return nil, c.t, true
	}
	if !compatible(c.t, lit.T, lit.Value) {
		return nil, c.t, false
	}
	v, err := metadata.CoerceValue(c.t, lit.Value)
	if err == nil && v != nil && exact(c.t, lit.Value, v) {
		return v, c.t, true
	}
	switch x := lit.Value.(type) {
	case int64, metadata.DecimalValue:
		if c.t.IsNumeric() {
			return x, c.t, true
		}
	case float64:
		// NaN and the infinities compare as metadata.Compare says, which
		// is how the residual compares them too.
		if c.t.IsNumeric() {
			return x, c.t, true
		}
	case string:
		if c.t.Root != metadata.Timestamp && c.t.Root != metadata.TimestampLTZ {
			break
		}
		wide, err := wideTimestamp(c.t.Root, x)
		if t, ok := wide.(time.Time); err == nil && ok {
			w := c.t
			w.Precision = max(w.Precision, fractionDigits(t))
			return t, w, true
		}
	case time.Time:
		if c.t.Root == metadata.Timestamp || c.t.Root == metadata.TimestampLTZ {
			w := c.t
			w.Precision = max(w.Precision, fractionDigits(x))
			return x.UTC(), w, true
		}
	}
	return nil, c.t, false
}

// fractionDigits is the number of fractional second digits t needs: 3, 6
// or 9.
func fractionDigits(t time.Time) int {
	ns := t.Nanosecond()
	switch {
	case ns%1e6 == 0:
		return 3
	case ns%1e3 == 0:
		return 6
	}
	return 9
}

// compatible says which literal forms may be read as a value of t (the
// column's type; lt is the literal's): numbers and numeric strings for
// numbers, strings and their own form for temporal types, strings only for
// strings (MySQL compares a string column with a number numerically, which
// a string leaf would not). A TIMESTAMP_LTZ literal is an instant and a
// TIMESTAMP or DATE column a wall clock: they do not mix.
func compatible(t, lt metadata.DataType, v any) bool {
	switch v.(type) {
	case string:
		return t.Root != metadata.Boolean
	case bool:
		return t.Root == metadata.Boolean
	case int64, float64, metadata.DecimalValue:
		return t.IsNumeric()
	case []byte:
		return t.IsBinary()
	case metadata.DateValue:
		return t.Root == metadata.Date
	case metadata.TimeValue:
		return t.Root == metadata.Time
	case time.Time:
		if lt.Root == metadata.TimestampLTZ {
			return t.Root == metadata.TimestampLTZ
		}
		return t.Root == metadata.Timestamp || t.Root == metadata.Date
	}
	return false
}

// exact reports whether converting orig to the column's type gave the same
// value: CoerceValue rounds decimals, narrows to float32, truncates
// fractional seconds and takes the date of a timestamp, and a predicate on
// the rounded value would select other rows.
func exact(t metadata.DataType, orig, got any) bool {
	switch {
	case t.IsNumeric():
		a, okA := toRat(orig)
		b, okB := toRat(got)
		if okA && okB {
			return a.Cmp(b) == 0
		}
		return metadata.Compare(orig, got) == 0 && isNumber(orig)
	case t.IsString():
		s, ok := orig.(string)
		return ok && s == got
	case t.IsBinary():
		g, _ := got.([]byte)
		switch o := orig.(type) {
		case []byte:
			return bytes.Equal(o, g)
		case string:
			return o == string(g)
		}
		return false
	case t.Root == metadata.Date:
		d, ok := got.(metadata.DateValue)
		if !ok {
			return false
		}
		if _, isDate := orig.(metadata.DateValue); isDate {
			return orig == got
		}
		// The literal read as a full timestamp must be that day's midnight.
		wide, err := wideTimestamp(metadata.Timestamp, orig)
		w, ok := wide.(time.Time)
		return err == nil && ok && w.Equal(d.Time())
	case t.Root == metadata.Time:
		wide, err := metadata.CoerceValue(metadata.TimeType(metadata.MaxTimePrecision), orig)
		return err == nil && wide == got
	case t.Root == metadata.Timestamp || t.Root == metadata.TimestampLTZ:
		wide, err := wideTimestamp(t.Root, orig)
		w, okW := wide.(time.Time)
		g, okG := got.(time.Time)
		return err == nil && okW && okG && w.Equal(g)
	case t.Root == metadata.Boolean:
		return orig == got
	}
	return false
}

// wideTimestamp reads v as a timestamp of the widest precision that holds
// it: nanoseconds, or microseconds outside the years nanoseconds reach.
func wideTimestamp(root metadata.TypeRoot, v any) (any, error) {
	t := metadata.DataType{Root: root, Precision: metadata.MaxTimePrecision}
	w, err := metadata.CoerceValue(t, v)
	if err != nil {
		t.Precision = 6
		w, err = metadata.CoerceValue(t, v)
	}
	return w, err
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64, metadata.DecimalValue:
		return true
	}
	return false
}

// toRat reads a number, or a string holding one, as an exact rational.
func toRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x), true
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case metadata.DecimalValue:
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(x.Scale, 0))), nil)
		return new(big.Rat).SetFrac(x.Num.BigInt(), den), true
	case string:
		s := strings.TrimSpace(x)
		if strings.Contains(s, "/") {
			return nil, false
		}
		return new(big.Rat).SetString(s)
	}
	return nil, false
}

// parseLike reads a LIKE pattern of the forms 'p%', '%s' and '%s%' (any
// run of '%' counts as one) into a starts-with, ends-with or contains test
// of its literal text. A '_' wildcard, a '%' inside the text, or a pattern
// without '%' (plain equality, whose CHAR semantics we leave to the
// residual) do not convert. esc is the escape character, 0 for '\'.
func parseLike(pattern string, esc rune) (predicate.Op, string, bool) {
	if esc == 0 {
		esc = '\\'
	}
	type tok struct {
		r    rune
		wild bool
	}
	var toks []tok
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == esc:
			if i+1 == len(rs) {
				return 0, "", false
			}
			i++
			toks = append(toks, tok{r: rs[i]})
		case r == '_':
			return 0, "", false
		case r == '%':
			toks = append(toks, tok{r: r, wild: true})
		default:
			toks = append(toks, tok{r: r})
		}
	}
	lead := 0
	for lead < len(toks) && toks[lead].wild {
		lead++
	}
	trail := 0
	for trail < len(toks)-lead && toks[len(toks)-1-trail].wild {
		trail++
	}
	var text strings.Builder
	for _, t := range toks[lead : len(toks)-trail] {
		if t.wild {
			return 0, "", false
		}
		text.WriteRune(t.r)
	}
	switch {
	case lead > 0 && trail > 0:
		return predicate.Contains, text.String(), true
	case trail > 0:
		return predicate.StartsWith, text.String(), true
	case lead > 0:
		return predicate.EndsWith, text.String(), true
	}
	return 0, "", false
}
