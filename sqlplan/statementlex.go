package sqlplan

import (
	"fmt"
	"strings"
)

// lexStatement splits a whole statement into tokens in one pass, ending
// with the tokEOF token; every later pass (the statement kind, the
// placeholders, wildcard escapes, ALL, the parts of WITH, CREATE VIEW and
// CREATE TABLE ... AS) reads this slice.
//
// The two grammars lex strings differently (MySQL's backslash escapes
// against Flink's literal backslashes), so the lexer switches to the
// MySQL rules at the token where the text xwb1989/sqlparser will read
// begins: the first token of a query, the one after EXPLAIN or CREATE
// [OR REPLACE] VIEW, and the one after the AS of CREATE TABLE ... AS. The
// tokens before that point lex alike either way.
//
// Parentheses nesting deeper than MaxNesting stop the lexer with an error
// that says so: the SELECT parser would stop there with a bare syntax
// error. A lexing error before that point wins, as it is the first thing
// wrong in the text.
func lexStatement(sql string) ([]token, error) {
	l := &lexer{src: sql}
	toks := make([]token, 0, 16+len(sql)/6)
	depth := 0
	// create is set while the tokens are CREATE TABLE's header, where an
	// AS at depth 0 starts the query.
	create := false
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		switch t.kind {
		case tokEOF:
			return toks, nil
		case tokPunct:
			switch t.text {
			case "(":
				if depth++; depth > MaxNesting {
					return nil, &SyntaxError{Pos: t.pos, Near: "(", Msg: fmt.Sprintf("parentheses nested more than %d deep", MaxNesting)}
				}
			case ")":
				depth--
			}
			if len(toks) == 1 && t.text == "(" {
				l.mysql = true
			}
		case tokIdent:
			if l.mysql {
				continue
			}
			switch n := len(toks); {
			case n == 1:
				switch strings.ToUpper(t.text) {
				case "SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "WITH", "EXPLAIN", "SET":
					// SET is MySQL's: its @@variables and strings lex
					// as MySQL's.
					l.mysql = true
				}
			case isWord(toks[0], "CREATE") && n <= 4:
				switch {
				case strings.EqualFold(t.text, "VIEW") && (n == 2 || n == 4 && isWord(toks[1], "OR") && isWord(toks[2], "REPLACE")):
					l.mysql = true
				case strings.EqualFold(t.text, "TABLE") && n == 2:
					create = true
				}
			case create && depth == 0 && strings.EqualFold(t.text, "AS"):
				l.mysql, create = true, false
			}
		}
	}
}

func isWord(t token, kw string) bool { return t.kind == tokIdent && strings.EqualFold(t.text, kw) }

// window returns the tokens toks[i:j] followed by a tokEOF token at end,
// the form the passes over a query expect. It copies: toks[j] stays as it
// is for the caller.
func window(toks []token, i, j, end int) []token {
	return append(toks[i:j:j], token{kind: tokEOF, pos: end, end: end})
}
