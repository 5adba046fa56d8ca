package sqlplan

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// SyntaxError is SQL text that does not parse. It matches
// metadata.ErrSyntax with errors.Is.
type SyntaxError struct {
	// Pos is the byte offset, counting from 0, of the offending token in
	// the statement text; len(text) when the text ended too early.
	Pos int
	// Near is the offending token as written; empty at the end of the text.
	Near string
	// Msg says what was wrong or expected ("expected TABLE").
	Msg string
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	if e.Near != "" {
		fmt.Fprintf(&b, "syntax error at position %d near %q", e.Pos, e.Near)
	} else {
		fmt.Fprintf(&b, "syntax error at end of input (position %d)", e.Pos)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap makes a SyntaxError match metadata.ErrSyntax.
func (e *SyntaxError) Unwrap() error { return metadata.ErrSyntax }

// Position reports the byte offset the error refers to.
func (e *SyntaxError) Position() int { return e.Pos }

// PosError is a well-formed statement that is still wrong at a known
// place, such as a data type out of Fluss's limits or an unknown type name.
// It wraps the cause, which carries the metadata sentinel.
type PosError struct {
	Pos int
	Err error
}

func (e *PosError) Error() string { return fmt.Sprintf("%v at position %d", e.Err, e.Pos) }

// Unwrap returns the cause.
func (e *PosError) Unwrap() error { return e.Err }

// Position reports the byte offset the error refers to.
func (e *PosError) Position() int { return e.Pos }

// sentinelError is an error whose text reads as a sentence ("table
// fluss.t does not exist") and that still matches its sentinel, and its
// cause if any, with errors.Is.
type sentinelError struct {
	sentinel error
	msg      string
	cause    error
}

func (e *sentinelError) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *sentinelError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.sentinel, e.cause}
	}
	return []error{e.sentinel}
}

func errorf(sentinel error, format string, args ...any) error {
	return &sentinelError{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}

// wrapf is errorf with a cause whose text is appended after a colon.
func wrapf(sentinel, cause error, format string, args ...any) error {
	return &sentinelError{sentinel: sentinel, msg: fmt.Sprintf(format, args...), cause: cause}
}

func unsupported(format string, args ...any) error {
	return errorf(metadata.ErrUnsupported, format+" is not supported", args...)
}

// UnknownColumnError is a column name that does not resolve in its table.
// It wraps metadata.ErrNotFound; Column is the name as written, so that
// the driver can point at it in the SQL text (IdentPosition).
type UnknownColumnError struct {
	Column string
	Table  metadata.TablePath
}

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("column %s does not exist in table %s", quoteIdent(e.Column), e.Table)
}

// Unwrap returns metadata.ErrNotFound.
func (e *UnknownColumnError) Unwrap() error { return metadata.ErrNotFound }

// LocatedName is the name the driver looks for in the statement's text
// to place the error.
func (e *UnknownColumnError) LocatedName() string { return e.Column }

// NameError is an error about a name the statement uses (a function, a
// table, a column in the wrong place). Bound statements keep no positions,
// so the driver places the error at the name's first use in the text.
type NameError struct {
	Name string
	Err  error
}

func (e *NameError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *NameError) Unwrap() error { return e.Err }

// LocatedName is the name the driver looks for in the statement's text.
func (e *NameError) LocatedName() string { return e.Name }

// atName marks err as being about name; nil stays nil.
func atName(name string, err error) error {
	if err == nil {
		return nil
	}
	return &NameError{Name: name, Err: err}
}

func unknownColumn(name string, table metadata.TablePath) error {
	return &UnknownColumnError{Column: name, Table: table}
}

// IdentPosition returns the byte offset of the first use in sql of name
// (case-insensitively, quoted or not), or -1. Parsed statements carry no
// positions for their names, so an error about a name points at its
// first use. A dotted name (t.c) is found as its parts in sequence, at
// its last part; a plain one is first looked for where it stands alone,
// not as part of a dotted name, so an error about an unqualified column
// points at it rather than at t.col before it.
func IdentPosition(sql, name string) int {
	toks, err := lexAll(sql, true)
	if err != nil {
		return -1
	}
	isName := func(i int, s string) bool {
		t := toks[i]
		return (t.kind == tokIdent || t.kind == tokQuotedIdent) && strings.EqualFold(t.text, s)
	}
	dot := func(i int) bool {
		return i >= 0 && i < len(toks) && toks[i].kind == tokPunct && toks[i].text == "."
	}
	parts := strings.Split(name, ".")
	if len(parts) > 1 {
		for i := range toks {
			j, ok := i, true
			for k, p := range parts {
				if k > 0 {
					if !dot(j) {
						ok = false
						break
					}
					j++
				}
				if j >= len(toks) || !isName(j, p) {
					ok = false
					break
				}
				j++
			}
			if ok {
				return toks[j-1].pos
			}
		}
	}
	for i := range toks {
		if isName(i, name) && !dot(i-1) && !dot(i+1) {
			return toks[i].pos
		}
	}
	for i := range toks {
		if isName(i, name) {
			return toks[i].pos
		}
	}
	return -1
}

// firstColumn is the name of the first column e reads, or "" (an error
// placed at no name keeps no position).
func firstColumn(e Expr) string {
	name := ""
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColumnRef); ok && name == "" {
			name = c.Name
		}
		return name == ""
	})
	return name
}
