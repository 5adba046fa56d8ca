package predicate_test

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// testSchema is the table the golden predicate tests read.
var testSchema = metadata.Schema{Columns: []metadata.Column{
	{Name: "i", Type: metadata.IntType()},
	{Name: "n", Type: metadata.BigIntType()},
	{Name: "s", Type: metadata.StringType()},
	{Name: "d", Type: metadata.DateType()},
	{Name: "f", Type: metadata.DoubleType()},
	{Name: "ok", Type: metadata.BooleanType()},
	{Name: "amount", Type: metadata.DecimalType(10, 2)},
}}

// parsePredicate reads a small SQL-like predicate syntax for tests:
//
//	col op lit | col IS [NOT] NULL | col [NOT] IN (lits) | col LIKE 'pattern'
//	combined with AND, OR, NOT and parentheses.
//
// Literals are parsed as the column's type; LIKE patterns take the forms
// 'p%', '%s' and '%s%'.
func parsePredicate(schema metadata.Schema, text string) (predicate.P, error) {
	p := &predParser{schema: schema, toks: tokenize(text)}
	out, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return out, nil
}

type predParser struct {
	schema metadata.Schema
	toks   []string
	pos    int
}

func tokenize(s string) []string {
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
		case strings.ContainsRune("(),", rune(c)):
			out = append(out, string(c))
			i++
		case strings.ContainsRune("<>=!", rune(c)):
			j := i + 1
			for j < len(s) && strings.ContainsRune("<>=", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || strings.ContainsRune("_.-:+", rune(s[j]))) {
				j++
			}
			if j == i {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

func (p *predParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *predParser) accept(kw string) bool {
	if strings.EqualFold(p.peek(), kw) {
		p.pos++
		return true
	}
	return false
}

func (p *predParser) next() (string, error) {
	if p.pos >= len(p.toks) {
		return "", fmt.Errorf("unexpected end")
	}
	p.pos++
	return p.toks[p.pos-1], nil
}

func (p *predParser) or() (predicate.P, error) {
	var cs []predicate.P
	for {
		c, err := p.and()
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
		if !p.accept("OR") {
			break
		}
	}
	if len(cs) == 1 {
		return cs[0], nil
	}
	return &predicate.Or{Children: cs}, nil
}

func (p *predParser) and() (predicate.P, error) {
	var cs []predicate.P
	for {
		c, err := p.not()
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
		if !p.accept("AND") {
			break
		}
	}
	if len(cs) == 1 {
		return cs[0], nil
	}
	return &predicate.And{Children: cs}, nil
}

func (p *predParser) not() (predicate.P, error) {
	if p.accept("NOT") {
		c, err := p.not()
		if err != nil {
			return nil, err
		}
		return &predicate.Not{Child: c}, nil
	}
	if p.accept("(") {
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.accept(")") {
			return nil, fmt.Errorf("missing )")
		}
		return c, nil
	}
	return p.leaf()
}

var testOps = map[string]predicate.Op{
	"=": predicate.Eq, "<>": predicate.NotEq, "!=": predicate.NotEq,
	"<": predicate.Lt, "<=": predicate.LtEq, ">": predicate.Gt, ">=": predicate.GtEq,
}

func (p *predParser) leaf() (predicate.P, error) {
	name, err := p.next()
	if err != nil {
		return nil, err
	}
	idx := p.schema.ColumnIndex(name)
	if idx < 0 {
		return nil, fmt.Errorf("unknown column %q", name)
	}
	col := p.schema.Columns[idx]
	l := &predicate.Leaf{Column: idx, Name: col.Name, Type: col.Type}
	switch {
	case p.accept("IS"):
		l.Op = predicate.IsNull
		if p.accept("NOT") {
			l.Op = predicate.IsNotNull
		}
		if !p.accept("NULL") {
			return nil, fmt.Errorf("IS without NULL")
		}
		return l, nil
	case strings.EqualFold(p.peek(), "IN") || strings.EqualFold(p.peek(), "NOT"):
		l.Op = predicate.In
		if p.accept("NOT") {
			l.Op = predicate.NotIn
		}
		if !p.accept("IN") || !p.accept("(") {
			return nil, fmt.Errorf("IN without (")
		}
		for !p.accept(")") {
			tok, err := p.next()
			if err != nil {
				return nil, err
			}
			if tok == "," {
				continue
			}
			v, err := parseLiteral(col.Type, tok)
			if err != nil {
				return nil, err
			}
			l.Literals = append(l.Literals, v)
		}
		return l, nil
	case p.accept("LIKE"):
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		pat := unquote(tok)
		switch {
		case len(pat) >= 2 && strings.HasPrefix(pat, "%") && strings.HasSuffix(pat, "%"):
			l.Op, pat = predicate.Contains, pat[1:len(pat)-1]
		case strings.HasSuffix(pat, "%"):
			l.Op, pat = predicate.StartsWith, pat[:len(pat)-1]
		case strings.HasPrefix(pat, "%"):
			l.Op, pat = predicate.EndsWith, pat[1:]
		default:
			return nil, fmt.Errorf("unsupported pattern %q", pat)
		}
		l.Literals = []any{pat}
		return l, nil
	}
	opTok, err := p.next()
	if err != nil {
		return nil, err
	}
	op, ok := testOps[opTok]
	if !ok {
		return nil, fmt.Errorf("unknown operator %q", opTok)
	}
	tok, err := p.next()
	if err != nil {
		return nil, err
	}
	v, err := parseLiteral(col.Type, tok)
	if err != nil {
		return nil, err
	}
	l.Op, l.Literals = op, []any{v}
	return l, nil
}

func unquote(tok string) string {
	if len(tok) >= 2 && tok[0] == '\'' && tok[len(tok)-1] == '\'' {
		return strings.ReplaceAll(tok[1:len(tok)-1], "''", "'")
	}
	return tok
}

// parseLiteral reads a literal or value token as type t; NULL is nil.
func parseLiteral(t metadata.DataType, tok string) (any, error) {
	switch strings.ToUpper(tok) {
	case "NULL":
		return nil, nil
	case "TRUE":
		return true, nil
	case "FALSE":
		return false, nil
	}
	return metadata.CoerceValue(t, unquote(tok))
}

// testRow is a Row over a slice indexed by column.
type testRow []any

func (r testRow) Value(c int) any { return r[c] }

// parseRow reads "col=value ..." into a row of schema; absent columns are
// NULL.
func parseRow(schema metadata.Schema, fields []string) (testRow, error) {
	row := make(testRow, len(schema.Columns))
	for _, f := range fields {
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("bad field %q", f)
		}
		idx := schema.ColumnIndex(name)
		if idx < 0 {
			return nil, fmt.Errorf("unknown column %q", name)
		}
		v, err := parseLiteral(schema.Columns[idx].Type, val)
		if err != nil {
			return nil, err
		}
		row[idx] = v
	}
	return row, nil
}

// testStats are statistics read from "rows=N min.col=v max.col=v
// nulls.col=n"; a statistic not given is missing.
type testStats struct {
	rows     int64
	min, max map[int]any
	nulls    map[int]int64
}

func (s *testStats) RowCount() int64 { return s.rows }
func (s *testStats) Min(c int) (any, bool) {
	v, ok := s.min[c]
	return v, ok
}
func (s *testStats) Max(c int) (any, bool) {
	v, ok := s.max[c]
	return v, ok
}
func (s *testStats) NullCount(c int) (int64, bool) {
	n, ok := s.nulls[c]
	return n, ok
}

func parseStats(schema metadata.Schema, fields []string) (*testStats, error) {
	s := &testStats{min: map[int]any{}, max: map[int]any{}, nulls: map[int]int64{}}
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("bad field %q", f)
		}
		if key == "rows" {
			if _, err := fmt.Sscan(val, &s.rows); err != nil {
				return nil, err
			}
			continue
		}
		kind, name, ok := strings.Cut(key, ".")
		idx := schema.ColumnIndex(name)
		if !ok || idx < 0 {
			return nil, fmt.Errorf("bad statistic %q", key)
		}
		switch kind {
		case "min", "max":
			v, err := parseLiteral(schema.Columns[idx].Type, val)
			if err != nil {
				return nil, err
			}
			if kind == "min" {
				s.min[idx] = v
			} else {
				s.max[idx] = v
			}
		case "nulls":
			var n int64
			if _, err := fmt.Sscan(val, &n); err != nil {
				return nil, err
			}
			s.nulls[idx] = n
		default:
			return nil, fmt.Errorf("bad statistic %q", key)
		}
	}
	return s, nil
}
