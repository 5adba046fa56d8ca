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
	toks, err := lexStatement(sql)
	if err != nil {
		return nil, err
	}
	first := toks[0]
	switch {
	case first.kind == tokEOF:
		return nil, &SyntaxError{Pos: len(sql), Msg: "empty statement"}
	case first.kind == tokPunct && first.text == "(":
		return parseLocking(sql, toks, parseDMLSetOps)
	case first.kind != tokIdent:
		return nil, &SyntaxError{Pos: first.pos, Near: sql[first.pos:first.end], Msg: "expected a statement"}
	}
	switch strings.ToUpper(first.text) {
	case "SELECT":
		return parseLocking(sql, toks, parseDMLSetOps)
	case "INSERT", "REPLACE", "UPDATE", "DELETE":
		return parseDMLSetOps(sql, toks)
	case "WITH":
		return parseLocking(sql, toks, func(sql string, toks []token) (Statement, error) {
			return parseWith(sql, toks, &paramStyle{})
		})
	case "EXPLAIN":
		return parseExplain(sql, toks)
	}
	p := &parser{src: sql, toks: toks}
	return p.parseStatement()
}

// parseLocking parses a query with parse after cutting off the locking
// clause that ends it (cutLockClause), and sets the clause on the SELECT.
// A set operation with one is refused: which of its SELECTs' rows it
// would lock is not what MySQL's rules say either way.
func parseLocking(sql string, toks []token, parse func(string, []token) (Statement, error)) (Statement, error) {
	text, rest, mode := cutLockClause(sql, toks)
	st, err := parse(text, rest)
	if err != nil || mode == LockNone {
		return st, err
	}
	sel, ok := st.(*Select)
	if !ok {
		return nil, &PosError{Pos: len(text), Err: unsupported("%s after a set operation (lock the rows of each SELECT in a statement of its own)", mode)}
	}
	sel.Lock = mode
	return sel, nil
}

// MaxNesting is the deepest nesting of parentheses a statement may have.
// The SELECT parser stops at this depth with a bare syntax error; the
// check before it says what was wrong.
const MaxNesting = 199

// parseExplain parses the SELECT after EXPLAIN [ANALYZE | PLAN FOR];
// toks[0] is EXPLAIN.
func parseExplain(sql string, toks []token) (Statement, error) {
	i := 1
	analyze := false
	switch {
	case isWord(toks[i], "ANALYZE"):
		analyze = true
		i++
	case isWord(toks[i], "PLAN"):
		if f := toks[i+1]; !isWord(f, "FOR") {
			return nil, &SyntaxError{Pos: f.pos, Near: sql[f.pos:f.end], Msg: "expected FOR"}
		}
		i += 2
	}
	start := toks[i-1].end
	if t := toks[i]; !isWord(t, "SELECT") && !isWord(t, "WITH") && !isPunct(t, "(") {
		if t.kind == tokEOF {
			return nil, &SyntaxError{Pos: t.pos, Msg: "expected SELECT"}
		}
		return nil, &SyntaxError{Pos: t.pos, Near: sql[t.pos:t.end], Msg: "expected SELECT (EXPLAIN explains queries)"}
	}
	s, err := parseQueryTokens(sql, start, toks[i:], &paramStyle{})
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
