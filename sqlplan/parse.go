package sqlplan

import (
	"fmt"
	"strings"
)

// Parse parses one SQL statement, optionally followed by ';'.
//
// DDL, SHOW, DESCRIBE, USE and CALL go through the grammar of this package
// (Flink/Fluss style: backquoted identifiers, 'strings' with doubled
// quotes). SELECT, INSERT, UPDATE and DELETE go through xwb1989/sqlparser
// and its MySQL dialect, where "text" in double quotes is a string and
// backslashes escape in strings. EXPLAIN [PLAN FOR] SELECT ... is split off here
// because that parser discards EXPLAIN's body.
//
// A text that does not parse returns a *SyntaxError; a well-formed
// statement that is wrong at a known place (an unknown data type, DECIMAL
// precision out of range) returns a *PosError; a form this engine does not
// implement returns an error matching metadata.ErrUnsupported.
func Parse(sql string) (stmt Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmt, err = nil, &SyntaxError{Msg: fmt.Sprintf("statement not understood (%v)", r)}
		}
	}()
	l := &lexer{src: sql}
	first, err := l.next()
	if err != nil {
		return nil, err
	}
	switch {
	case first.kind == tokEOF:
		return nil, &SyntaxError{Pos: len(sql), Msg: "empty statement"}
	case first.kind == tokPunct && first.text == "(":
		if err := checkNesting(sql); err != nil {
			return nil, err
		}
		return parseDMLWithSetOps(sql, 0)
	case first.kind != tokIdent:
		return nil, &SyntaxError{Pos: first.pos, Near: sql[first.pos:first.end], Msg: "expected a statement"}
	}
	switch strings.ToUpper(first.text) {
	case "SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE":
		if err := checkNesting(sql); err != nil {
			return nil, err
		}
		return parseDMLWithSetOps(sql, 0)
	case "WITH":
		return nil, unsupported("WITH (common table expressions)")
	case "EXPLAIN":
		return parseExplain(sql, l)
	}
	toks, err := lexAll(sql, false)
	if err != nil {
		return nil, err
	}
	p := &parser{src: sql, toks: toks}
	return p.parseStatement()
}

// MaxNesting is the deepest nesting of parentheses a statement may have.
// The SELECT parser stops at this depth with a bare syntax error; the
// check before it says what was wrong.
const MaxNesting = 199

// checkNesting refuses a statement whose parentheses nest deeper than
// MaxNesting, naming the position where they do. Lexing errors are left
// to the parser, which reports them with more context.
func checkNesting(sql string) error {
	l := &lexer{src: sql}
	depth := 0
	for {
		t, err := l.next()
		if err != nil || t.kind == tokEOF {
			return nil
		}
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(":
			if depth++; depth > MaxNesting {
				return &SyntaxError{Pos: t.pos, Near: "(", Msg: fmt.Sprintf("parentheses nested more than %d deep", MaxNesting)}
			}
		case ")":
			depth--
		}
	}
}

// parseExplain parses the SELECT after EXPLAIN [ANALYZE | PLAN FOR]; l
// has just read EXPLAIN.
func parseExplain(sql string, l *lexer) (Statement, error) {
	start := l.pos
	t, err := l.next()
	if err != nil {
		return nil, err
	}
	analyze := false
	if t.kind == tokIdent && strings.EqualFold(t.text, "ANALYZE") {
		analyze = true
		start = l.pos
		if t, err = l.next(); err != nil {
			return nil, err
		}
	} else if t.kind == tokIdent && strings.EqualFold(t.text, "PLAN") {
		f, err := l.next()
		if err != nil {
			return nil, err
		}
		if f.kind != tokIdent || !strings.EqualFold(f.text, "FOR") {
			return nil, &SyntaxError{Pos: f.pos, Near: sql[f.pos:f.end], Msg: "expected FOR"}
		}
		start = l.pos
		if t, err = l.next(); err != nil {
			return nil, err
		}
	}
	if (t.kind != tokIdent || !strings.EqualFold(t.text, "SELECT")) && !isPunct(t, "(") {
		if t.kind == tokEOF {
			return nil, &SyntaxError{Pos: t.pos, Msg: "expected SELECT"}
		}
		return nil, &SyntaxError{Pos: t.pos, Near: sql[t.pos:t.end], Msg: "expected SELECT (EXPLAIN explains queries)"}
	}
	if err := checkNesting(sql); err != nil {
		return nil, err
	}
	s, err := parseQuery(sql[start:], start)
	if err != nil {
		return nil, err
	}
	switch x := s.(type) {
	case *Select:
		return &Explain{Select: x, Analyze: analyze}, nil
	case *Compound:
		return &Explain{Compound: x, Analyze: analyze}, nil
	}
	return nil, unsupported("EXPLAIN of %T", s)
}
