package sqlplan

import (
	"errors"
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Set is MySQL's SET of session variables: SET [SESSION | LOCAL]
// name = value, SET @@[session. | local.]name = value, SET NAMES cs
// [COLLATE c], SET CHARACTER SET cs, several separated by commas. The
// parser checks the form only; the session knows the variables, checks
// names and values, and applies every assignment or none.
type Set struct {
	Assignments []VarAssignment
}

// VarAssignment is one variable a SET assigns.
type VarAssignment struct {
	// Name is the variable's name in lower case, without its scope;
	// "names" for SET NAMES and "character set" for SET CHARACTER SET.
	Name string
	// Value is the value as written: the text of a quoted string, a
	// number, or a word (ON, OFF, DEFAULT, utf8mb4, ...), whose case is
	// kept.
	Value string
	// Quoted is set when Value was a quoted string.
	Quoted bool
	// Collate is the COLLATE of SET NAMES; "" when none was given.
	Collate string
}

func (*Set) isStatement()  {}
func (*Set) NumInput() int { return 0 }

func (s *Set) String() string {
	parts := make([]string, len(s.Assignments))
	for i, a := range s.Assignments {
		v := setText(a.Value, a.Quoted)
		switch a.Name {
		case "names":
			parts[i] = "NAMES " + v
			if a.Collate != "" {
				parts[i] += " COLLATE " + setText(a.Collate, false)
			}
		case "character set":
			parts[i] = "CHARACTER SET " + v
		default:
			parts[i] = quoteIdent(a.Name) + " = " + v
		}
	}
	return "SET " + strings.Join(parts, ", ")
}

// setText renders a value of SET so that it reads back the same.
func setText(v string, quoted bool) string {
	if quoted {
		return "'" + literalEscaper.Replace(v) + "'" // SET lexes as MySQL does
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return metadata.QuoteIdent(v) // a word; backquoted unless plain
}

// set reads what follows SET.
func (p *parser) set() (Statement, error) {
	if p.isKeyword(p.peek(), "TRANSACTION") || p.isKeyword(p.peekAt(1), "TRANSACTION") && (p.isKeyword(p.peek(), "SESSION") || p.isKeyword(p.peek(), "GLOBAL")) {
		return nil, &PosError{Pos: p.peek().pos, Err: errorf(metadata.ErrUnsupported,
			"SET TRANSACTION is not supported: choose the isolation level and read-only mode in BeginTx")}
	}
	s := &Set{}
	err := p.commaList(func() error {
		a, err := p.assignment()
		s.Assignments = append(s.Assignments, a)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// assignment reads one assignment of a SET.
func (p *parser) assignment() (VarAssignment, error) {
	var a VarAssignment
	t := p.peek()
	switch {
	case p.acceptKeyword("NAMES"):
		a.Name = "names"
		var err error
		if a.Value, a.Quoted, err = p.setValue(); err != nil {
			return a, err
		}
		if p.acceptKeyword("COLLATE") {
			if a.Collate, _, err = p.setValue(); err != nil {
				return a, err
			}
		}
		return a, nil
	case p.acceptKeyword("CHARACTER", "SET"), p.acceptKeyword("CHARSET"):
		a.Name = "character set"
		var err error
		a.Value, a.Quoted, err = p.setValue()
		return a, err
	case p.isKeyword(t, "GLOBAL"), p.isKeyword(t, "PERSIST"), p.isKeyword(t, "PERSIST_ONLY"),
		t.kind == tokIdent && (strings.HasPrefix(strings.ToLower(t.text), "@@global") || strings.HasPrefix(strings.ToLower(t.text), "@@persist")):
		return a, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
			"SET GLOBAL is not supported: fluss's variables belong to the connection (SET SESSION)")}
	case t.kind == tokIdent && strings.HasPrefix(t.text, "@") && !strings.HasPrefix(t.text, "@@"):
		return a, &PosError{Pos: t.pos, Err: errorf(metadata.ErrUnsupported,
			"user variables are not supported (SET %s)", t.text)}
	}
	switch {
	case p.acceptKeyword("SESSION"), p.acceptKeyword("LOCAL"):
	case t.kind == tokIdent && strings.HasPrefix(t.text, "@@"):
		scope := strings.ToLower(t.text[2:])
		switch {
		case (scope == "session" || scope == "local") && isPunct(p.peekAt(1), "."):
			p.i += 2
		case scope == "session" || scope == "local" || scope == "":
			return a, p.errAt(p.peekAt(1), "expected '.' and a variable name")
		default:
			// @@name: the name is the rest of the token.
			p.i++
			a.Name = scope
		}
	}
	if a.Name == "" {
		n, err := p.ident("variable name")
		if err != nil {
			return a, err
		}
		a.Name = strings.ToLower(n)
	}
	switch {
	case p.acceptPunct("="):
	case p.acceptPunct(":") && p.acceptPunct("="):
	default:
		return a, p.expected("'='")
	}
	var err error
	a.Value, a.Quoted, err = p.setValue()
	return a, err
}

// setValue reads the value of an assignment: a quoted string, a number
// (with its sign), or a word. An expression is refused: the value must
// be a constant.
func (p *parser) setValue() (string, bool, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.i++
		return t.text, true, nil
	case t.kind == tokNumber:
		p.i++
		return t.text, false, nil
	case isPunct(t, "-") && p.peekAt(1).kind == tokNumber:
		p.i += 2
		return "-" + p.toks[p.i-1].text, false, nil
	case t.kind == tokIdent && !strings.HasPrefix(t.text, "@"), t.kind == tokQuotedIdent:
		p.i++
		if n := p.peek(); isPunct(n, "(") || isPunct(n, ".") {
			return "", false, p.errAt(n, "expected a constant (a SET value is a string, a number or a word)")
		}
		return t.text, false, nil
	}
	return "", false, p.expected("a constant (a string, a number or a word)")
}

// showVariables reads what follows SHOW [GLOBAL | SESSION] VARIABLES:
// [LIKE 'pattern' | WHERE condition]. The statement is the query it
// stands for, over information_schema.session_variables, with MySQL's
// column names Variable_name and Value, so that WHERE takes any
// condition a query does. LIKE matches names case-insensitively, as in
// MySQL.
func (p *parser) showVariables() (Statement, error) {
	const (
		inner = "SELECT variable_name AS Variable_name, variable_value AS `Value` FROM information_schema.session_variables"
		order = " ORDER BY Variable_name"
	)
	var sql string
	offset := 0 // where the source text starts in sql
	switch t := p.peek(); {
	case t.kind == tokEOF || isPunct(t, ";"):
		sql = inner + order
	case p.acceptKeyword("LIKE"):
		pat := p.peek()
		if pat.kind != tokString {
			return nil, p.expected("a quoted pattern")
		}
		p.i++
		sql = inner + " WHERE LOWER(variable_name) LIKE LOWER(" + p.src[pat.pos:pat.end] + ")" + order
	case p.acceptKeyword("WHERE"):
		start := p.peek().pos
		prefix := "SELECT * FROM (" + inner + ") AS v WHERE "
		end := len(p.src)
		for p.peek().kind != tokEOF {
			p.i++
		}
		sql, offset = prefix+strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.src[start:end]), ";"))+order, len(prefix)-start
	default:
		return nil, p.expected("LIKE, WHERE or the end of the statement")
	}
	st, err := Parse(sql)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) && offset != 0 {
			if se.Pos -= offset; se.Pos < 0 || se.Pos > len(p.src) {
				se.Pos = len(p.src)
			}
		}
		return nil, err
	}
	return st, nil
}
