package pushdown_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// parseWhere reads a WHERE clause for tests into a bound sqlplan.Expr over
// table, the way the binder hands it to pushdown: columns carry index and
// type, integer literals are BIGINT, literals with a point DECIMAL, with
// an exponent DOUBLE, quoted ones STRING, DATE '...' and TIMESTAMP '...'
// typed, and '?' stays an unbound Param. It covers comparisons, IS [NOT]
// NULL, [NOT] IN, [NOT] BETWEEN, [NOT] LIKE [ESCAPE], AND, OR, NOT,
// + - * / %, and function calls.
func parseWhere(table *metadata.TableInfo, text string) (sqlplan.Expr, error) {
	p := &exprParser{table: table, toks: lex(text)}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return e, nil
}

type exprParser struct {
	table *metadata.TableInfo
	toks  []string
	pos   int
}

func lex(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '\'':
			j := i + 1
			for j < len(s) {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			out = append(out, s[i:min(j+1, len(s))])
			i = j + 1
		case strings.ContainsRune("<>=!", rune(c)):
			j := i + 1
			for j < len(s) && strings.ContainsRune("<>=", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || c == '_' || c == '.':
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || s[j] == '_' || s[j] == '.') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}

func (p *exprParser) peekIs(kw string) bool {
	return p.pos < len(p.toks) && strings.EqualFold(p.toks[p.pos], kw)
}

func (p *exprParser) accept(kw string) bool {
	if p.peekIs(kw) {
		p.pos++
		return true
	}
	return false
}

func (p *exprParser) expect(kw string) error {
	if !p.accept(kw) {
		return fmt.Errorf("expected %s at token %d", kw, p.pos)
	}
	return nil
}

func (p *exprParser) or() (sqlplan.Expr, error) {
	l, err := p.and()
	for err == nil && p.accept("OR") {
		var r sqlplan.Expr
		if r, err = p.and(); err == nil {
			l = &sqlplan.Or{L: l, R: r}
		}
	}
	return l, err
}

func (p *exprParser) and() (sqlplan.Expr, error) {
	l, err := p.not()
	for err == nil && p.accept("AND") {
		var r sqlplan.Expr
		if r, err = p.not(); err == nil {
			l = &sqlplan.And{L: l, R: r}
		}
	}
	return l, err
}

func (p *exprParser) not() (sqlplan.Expr, error) {
	if p.accept("NOT") {
		e, err := p.not()
		return &sqlplan.Not{E: e}, err
	}
	return p.predicate()
}

var cmpOps = map[string]sqlplan.CmpOp{
	"=": sqlplan.OpEq, "<>": sqlplan.OpNotEq, "!=": sqlplan.OpNotEq, "<": sqlplan.OpLt,
	"<=": sqlplan.OpLtEq, ">": sqlplan.OpGt, ">=": sqlplan.OpGtEq, "<=>": sqlplan.OpNullSafeEq,
}

func (p *exprParser) predicate() (sqlplan.Expr, error) {
	l, err := p.add()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		if op, ok := cmpOps[p.toks[p.pos]]; ok {
			p.pos++
			r, err := p.add()
			return &sqlplan.Compare{Op: op, L: l, R: r}, err
		}
	}
	if p.accept("IS") {
		not := p.accept("NOT")
		return &sqlplan.IsNull{E: l, Not: not}, p.expect("NULL")
	}
	not := p.accept("NOT")
	switch {
	case p.accept("IN"):
		in := &sqlplan.In{E: l, Not: not}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		for !p.accept(")") {
			if len(in.List) > 0 {
				if err := p.expect(","); err != nil {
					return nil, err
				}
			}
			x, err := p.add()
			if err != nil {
				return nil, err
			}
			in.List = append(in.List, x)
		}
		return in, nil
	case p.accept("BETWEEN"):
		lo, err := p.add()
		if err != nil {
			return nil, err
		}
		if err := p.expect("AND"); err != nil {
			return nil, err
		}
		hi, err := p.add()
		return &sqlplan.Between{E: l, Lo: lo, Hi: hi, Not: not}, err
	case p.accept("LIKE"):
		pat, err := p.add()
		like := &sqlplan.Like{E: l, Pattern: pat, Not: not}
		if err == nil && p.accept("ESCAPE") {
			var esc sqlplan.Expr
			esc, err = p.primary()
			if lit, ok := esc.(*sqlplan.Literal); ok {
				like.Escape = []rune(lit.Value.(string))[0]
			}
		}
		return like, err
	}
	if not {
		return nil, fmt.Errorf("NOT without IN, BETWEEN or LIKE")
	}
	return l, nil
}

func (p *exprParser) add() (sqlplan.Expr, error) {
	l, err := p.mul()
	for err == nil && (p.peekIs("+") || p.peekIs("-")) {
		op := p.toks[p.pos][0]
		p.pos++
		var r sqlplan.Expr
		if r, err = p.mul(); err == nil {
			l = &sqlplan.Arith{Op: op, L: l, R: r, T: metadata.BigIntType()}
		}
	}
	return l, err
}

func (p *exprParser) mul() (sqlplan.Expr, error) {
	l, err := p.primary()
	for err == nil && (p.peekIs("*") || p.peekIs("/") || p.peekIs("%")) {
		op := p.toks[p.pos][0]
		p.pos++
		var r sqlplan.Expr
		if r, err = p.primary(); err == nil {
			l = &sqlplan.Arith{Op: op, L: l, R: r, T: metadata.BigIntType()}
		}
	}
	return l, err
}

func (p *exprParser) primary() (sqlplan.Expr, error) {
	if p.pos >= len(p.toks) {
		return nil, fmt.Errorf("unexpected end")
	}
	tok := p.toks[p.pos]
	p.pos++
	switch {
	case tok == "(":
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	case tok == "-":
		e, err := p.primary()
		if lit, ok := e.(*sqlplan.Literal); ok && err == nil {
			return literal(lit.T, "-"+metadata.FormatValue(lit.T, lit.Value))
		}
		return &sqlplan.Neg{E: e}, err
	case tok == "?":
		return &sqlplan.Param{Ordinal: 1}, nil
	case strings.HasPrefix(tok, "'"):
		return &sqlplan.Literal{Value: unquote(tok), T: metadata.StringType()}, nil
	case strings.EqualFold(tok, "NULL"):
		return &sqlplan.Literal{}, nil
	case strings.EqualFold(tok, "TRUE"), strings.EqualFold(tok, "FALSE"):
		return &sqlplan.Literal{Value: strings.EqualFold(tok, "TRUE"), T: metadata.BooleanType()}, nil
	case strings.EqualFold(tok, "X") && p.pos < len(p.toks) && strings.HasPrefix(p.toks[p.pos], "'"):
		p.pos++
		b, err := hex.DecodeString(unquote(p.toks[p.pos-1]))
		return &sqlplan.Literal{Value: b, T: metadata.BytesType()}, err
	case strings.EqualFold(tok, "DATE"), strings.EqualFold(tok, "TIMESTAMP"):
		t := metadata.DateType()
		if strings.EqualFold(tok, "TIMESTAMP") {
			t = metadata.TimestampType(6)
		}
		if p.pos >= len(p.toks) {
			return nil, fmt.Errorf("%s without a string", tok)
		}
		p.pos++
		return literal(t, unquote(p.toks[p.pos-1]))
	case unicode.IsDigit(rune(tok[0])) || tok[0] == '.':
		switch {
		case strings.ContainsAny(tok, "eE"):
			return literal(metadata.DoubleType(), tok)
		case strings.Contains(tok, "."):
			_, frac, _ := strings.Cut(tok, ".")
			return literal(metadata.DecimalType(max(len(tok)-1, 1), len(frac)), tok)
		}
		return literal(metadata.BigIntType(), tok)
	}
	if p.accept("(") {
		f := &sqlplan.Func{Name: strings.ToLower(tok), T: metadata.StringType()}
		for !p.accept(")") {
			if len(f.Args) > 0 {
				if err := p.expect(","); err != nil {
					return nil, err
				}
			}
			a, err := p.or()
			if err != nil {
				return nil, err
			}
			f.Args = append(f.Args, a)
		}
		return f, nil
	}
	idx := p.table.Schema.ColumnIndex(tok)
	if idx < 0 {
		return nil, fmt.Errorf("unknown column %q", tok)
	}
	c := p.table.Schema.Columns[idx]
	return &sqlplan.ColumnRef{Name: c.Name, Index: idx, T: c.Type}, nil
}

func literal(t metadata.DataType, text string) (sqlplan.Expr, error) {
	v, err := metadata.CoerceValue(t, text)
	if err != nil {
		return nil, err
	}
	return &sqlplan.Literal{Value: v, T: t}, nil
}

func unquote(tok string) string {
	if len(tok) >= 2 && tok[0] == '\'' && tok[len(tok)-1] == '\'' {
		return strings.ReplaceAll(tok[1:len(tok)-1], "''", "'")
	}
	return tok
}
