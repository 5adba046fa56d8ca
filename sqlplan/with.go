package sqlplan

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// CTE is one common table expression of WITH name [(columns)] AS
// (query). Binding reads its name in a FROM of the query after it (and of
// the common table expressions after it) as a derived table of its
// query, so a common table expression may read the ones before it.
type CTE struct {
	Name string
	// Columns rename the query's output columns; nil keeps its names.
	Columns []string
	// Select is the query, or Compound when it is a set operation.
	Select   *Select
	Compound *Compound
}

// query is the CTE's query as a statement, for printing.
func (c *CTE) query() Statement {
	if c.Compound != nil {
		return c.Compound
	}
	return c.Select
}

// xwb1989/sqlparser has no WITH: parseWith finds each common table
// expression's name, column list and parenthesised query in the
// statement's tokens, hands each query and then the main one to the
// parser, and returns the main SELECT carrying them.

// parseQuery parses a query that may begin with WITH: the text
// src[start:end] whose tokens are toks (ending with a tokEOF token at end).
func parseQueryTokens(src string, start int, toks []token, ps *paramStyle) (Statement, error) {
	if isWord(toks[0], "WITH") {
		return parseWith(src, toks, ps)
	}
	return parseSetQuery(src, start, toks, ps)
}

// parseWith parses WITH cte, ... query; toks[0] is WITH.
func parseWith(src string, toks []token, ps *paramStyle) (Statement, error) {
	errAt := func(t token, msg string) error {
		return &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end], Msg: msg}
	}
	i := 1
	if isWord(toks[i], "RECURSIVE") {
		return nil, &PosError{Pos: toks[i].pos, Err: unsupported("WITH RECURSIVE (a recursive common table expression)")}
	}
	var ctes []CTE
	for {
		t := toks[i]
		if t.kind != tokIdent && t.kind != tokQuotedIdent || t.text == "" {
			return nil, errAt(t, "expected the name of a common table expression")
		}
		if isQueryKeyword(t.text) && t.kind == tokIdent {
			return nil, errAt(t, "expected the name of a common table expression (quote a keyword with backquotes)")
		}
		for _, c := range ctes {
			if strings.EqualFold(c.Name, t.text) {
				return nil, &PosError{Pos: t.pos, Err: errorf(metadata.ErrExists, "common table expression %s is defined twice", quoteIdent(t.text))}
			}
		}
		cte := CTE{Name: t.text}
		i++
		if toks[i].kind == tokPunct && toks[i].text == "(" {
			if n := toks[i+1]; isWord(n, "SELECT") || isWord(n, "WITH") {
				return nil, errAt(toks[i], "expected AS before the query of "+quoteIdent(cte.Name))
			}
			cols, next, err := cteColumns(src, toks, i+1)
			if err != nil {
				return nil, err
			}
			cte.Columns, i = cols, next
		}
		if !isWord(toks[i], "AS") {
			return nil, errAt(toks[i], "expected AS")
		}
		i++
		open := toks[i]
		if open.kind != tokPunct || open.text != "(" {
			return nil, errAt(open, "expected '(' before the query of "+quoteIdent(cte.Name))
		}
		closing, err := matchingParen(src, toks, i)
		if err != nil {
			return nil, err
		}
		body := window(toks, i+1, closing, toks[closing].pos)
		if first := body[0]; first.kind == tokEOF || !isWord(first, "SELECT") && !isWord(first, "WITH") && first.text != "(" {
			return nil, errAt(first, "expected a query in "+quoteIdent(cte.Name))
		}
		for _, b := range body {
			if b.kind == tokPunct && b.text == ";" {
				return nil, errAt(b, "expected ')'")
			}
		}
		st, err := parseQueryTokens(src, open.end, body, ps)
		if err != nil {
			return nil, err
		}
		switch q := st.(type) {
		case *Select:
			cte.Select = q
		case *Compound:
			cte.Compound = q
		default:
			return nil, &PosError{Pos: body[0].pos, Err: unsupported("%T as a common table expression", st)}
		}
		ctes = append(ctes, cte)
		i = closing + 1
		if toks[i].kind == tokPunct && toks[i].text == "," {
			i++
			continue
		}
		break
	}
	t := toks[i]
	switch {
	case isWord(t, "SELECT"), t.kind == tokPunct && t.text == "(":
	case isWord(t, "INSERT"), isWord(t, "REPLACE"):
		// MySQL's grammar has no WITH before INSERT: it goes before the
		// SELECT of INSERT ... SELECT.
		return nil, errAt(t, "expected SELECT after WITH (write INSERT INTO t WITH ... SELECT ...)")
	case isWord(t, "UPDATE"), isWord(t, "DELETE"):
		return nil, &PosError{Pos: t.pos, Err: unsupported("WITH before %s", strings.ToUpper(t.text))}
	case t.kind == tokEOF:
		return nil, &SyntaxError{Pos: t.pos, Msg: "expected the query after WITH"}
	default:
		return nil, errAt(t, "expected SELECT or ','")
	}
	st, err := parseSetQuery(src, t.pos, toks[i:], ps)
	if err != nil {
		return nil, err
	}
	switch q := st.(type) {
	case *Select:
		q.With = ctes
	case *Compound:
		q.With = ctes
	default:
		return nil, &PosError{Pos: t.pos, Err: unsupported("%T after WITH", st)}
	}
	return st, nil
}

// cteColumns reads the column list of a common table expression from
// toks[i] (after its '(') and returns the names and the index after ')'.
func cteColumns(src string, toks []token, i int) ([]string, int, error) {
	var cols []string
	for {
		t := toks[i]
		if t.kind != tokIdent && t.kind != tokQuotedIdent || t.text == "" {
			return nil, 0, &SyntaxError{Pos: t.pos, Near: src[t.pos:t.end], Msg: "expected a column name"}
		}
		for _, c := range cols {
			if strings.EqualFold(c, t.text) {
				return nil, 0, &PosError{Pos: t.pos, Err: errorf(metadata.ErrExists, "column %s is named twice", quoteIdent(t.text))}
			}
		}
		cols = append(cols, t.text)
		i++
		switch n := toks[i]; {
		case n.kind == tokPunct && n.text == ",":
			i++
		case n.kind == tokPunct && n.text == ")":
			return cols, i + 1, nil
		default:
			return nil, 0, &SyntaxError{Pos: n.pos, Near: src[n.pos:n.end], Msg: "expected ',' or ')'"}
		}
	}
}

// matchingParen returns the index of the ')' that closes toks[open].
func matchingParen(src string, toks []token, open int) (int, error) {
	depth := 0
	for j := open; j < len(toks); j++ {
		t := toks[j]
		if t.kind == tokEOF {
			return 0, &SyntaxError{Pos: t.pos, Msg: "expected ')'"}
		}
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return j, nil
			}
		}
	}
	return 0, &SyntaxError{Pos: len(src), Msg: "expected ')'"}
}

// formatWith renders the WITH clause of a query, "" without one.
func formatWith(ctes []CTE) string {
	if len(ctes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("WITH ")
	for i, c := range ctes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Name))
		if len(c.Columns) > 0 {
			b.WriteString(" (" + quoteIdents(c.Columns) + ")")
		}
		b.WriteString(" AS (" + c.query().String() + ")")
	}
	b.WriteString(" ")
	return b.String()
}

// withExprs lists the expressions of the common table expressions' queries.
func withExprs(ctes []CTE) []Expr {
	var es []Expr
	for _, c := range ctes {
		if c.Compound != nil {
			es = append(es, c.Compound.exprs()...)
		} else {
			es = append(es, c.Select.exprs()...)
		}
	}
	return es
}
