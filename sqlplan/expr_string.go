package sqlplan

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

var cmpText = [...]string{OpEq: "=", OpNotEq: "<>", OpLt: "<", OpLtEq: "<=", OpGt: ">", OpGtEq: ">=", OpNullSafeEq: "<=>"}

func (op CmpOp) String() string { return cmpText[op] }

// String quotes a name the query grammar would read as something else
// (a column named null, say), so the text parses back to the same column.
func (e *ColumnRef) String() string {
	name := metadata.QuoteIdent(e.Name)
	if isQueryKeyword(e.Name) {
		name = metadata.Backquote(e.Name)
	}
	// A parsed reference (not bound yet) keeps its qualifier, so the
	// statement reads back the same.
	if e.Qualifier != "" && (e.qualified || e.Index < 0) {
		return metadata.QuoteIdent(e.Qualifier) + "." + name
	}
	return name
}

// String renders the literal in the MySQL dialect queries are parsed in,
// where a backslash in a string escapes: it is doubled, so the text
// parses back to the same value.
func (e *Literal) String() string {
	if s, ok := e.Value.(string); ok {
		return "'" + literalEscaper.Replace(s) + "'"
	}
	return metadata.FormatLiteral(e.T, e.Value)
}

var literalEscaper = strings.NewReplacer(`\`, `\\`, "'", "''")

func (e *Param) String() string {
	if e.Name != "" {
		return ":" + e.Name
	}
	return fmt.Sprintf("$%d", e.Ordinal)
}
func (e *Default) String() string { return "DEFAULT" }

func (e *Compare) String() string { return exprString(e) }
func (e *And) String() string     { return exprString(e) }
func (e *Or) String() string      { return exprString(e) }
func (e *Not) String() string     { return exprString(e) }
func (e *IsNull) String() string  { return exprString(e) }
func (e *In) String() string      { return exprString(e) }
func (e *Between) String() string { return exprString(e) }
func (e *Like) String() string    { return exprString(e) }
func (e *Arith) String() string   { return exprString(e) }
func (e *Neg) String() string     { return exprString(e) }
func (e *Func) String() string    { return exprString(e) }
func (e *Case) String() string    { return exprString(e) }
func (e *Cast) String() string    { return exprString(e) }

// exprString renders e into one buffer. Concatenating each node's
// rendered children would copy the text below a node once per level: a
// chain of n ORs, n deep, would cost O(n²) to print.
func exprString(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// writeOperand writes a comparison's or an arithmetic operand, in
// parentheses when it is a predicate itself: NOT and the comparisons bind
// looser than '<' and '%' in the MySQL grammar, so 0 < (NOT 0) printed
// bare would not read back.
func writeOperand(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Not, *Compare, *IsNull, *In, *Between, *Like:
		b.WriteString("(")
		writeExpr(b, e)
		b.WriteString(")")
		return
	case *Subquery:
		if e.Kind != SubScalar {
			// A predicate over a subquery (IN, ANY, ALL, EXISTS) is
			// no operand the parser takes bare.
			b.WriteString("(")
			writeExpr(b, e)
			b.WriteString(")")
			return
		}
	}
	writeExpr(b, e)
}

func writeExpr(b *strings.Builder, e Expr) {
	not := func(n bool) {
		if n {
			b.WriteString("NOT ")
		}
	}
	switch e := e.(type) {
	case *Compare:
		writeOperand(b, e.L)
		b.WriteString(" " + e.Op.String() + " ")
		writeOperand(b, e.R)
	case *And:
		writeConnective(b, e.L, " AND ", e.R)
	case *Or:
		writeConnective(b, e.L, " OR ", e.R)
	case *Not:
		b.WriteString("NOT ")
		writeExpr(b, e.E)
	case *IsNull:
		writeOperand(b, e.E)
		if e.Not {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case *In:
		writeOperand(b, e.E)
		b.WriteString(" ")
		not(e.Not)
		b.WriteString("IN (")
		writeList(b, e.List)
		b.WriteString(")")
	case *Between:
		writeOperand(b, e.E)
		b.WriteString(" ")
		not(e.Not)
		b.WriteString("BETWEEN ")
		writeOperand(b, e.Lo)
		b.WriteString(" AND ")
		writeOperand(b, e.Hi)
	case *Like:
		writeOperand(b, e.E)
		b.WriteString(" ")
		not(e.Not)
		b.WriteString("LIKE ")
		writeOperand(b, e.Pattern)
		if e.Escape != 0 {
			b.WriteString(" ESCAPE '" + string(e.Escape) + "'")
		}
	case *Arith:
		op := string(e.Op)
		if e.Op == 'd' {
			op = "DIV"
		}
		b.WriteString("(")
		writeOperand(b, e.L)
		b.WriteString(" " + op + " ")
		writeOperand(b, e.R)
		b.WriteString(")")
	case *Neg:
		b.WriteString("-")
		if _, ok := e.E.(*Neg); ok {
			// "--" would start a comment.
			b.WriteString("(")
			writeExpr(b, e.E)
			b.WriteString(")")
			break
		}
		writeOperand(b, e.E)
	case *Func:
		b.WriteString(strings.ToUpper(e.Name) + "(")
		switch {
		case e.Star:
			b.WriteString("*")
		default:
			if e.Distinct {
				b.WriteString("DISTINCT ")
			}
			writeList(b, e.Args)
		}
		b.WriteString(")")
	case *Case:
		b.WriteString("CASE")
		if e.Operand != nil {
			b.WriteString(" ")
			writeExpr(b, e.Operand)
		}
		for _, w := range e.Whens {
			b.WriteString(" WHEN ")
			writeExpr(b, w.Cond)
			b.WriteString(" THEN ")
			writeExpr(b, w.Result)
		}
		if e.Else != nil {
			b.WriteString(" ELSE ")
			writeExpr(b, e.Else)
		}
		b.WriteString(" END")
	case *Cast:
		b.WriteString("CAST(")
		writeExpr(b, e.E)
		b.WriteString(" AS " + e.T.String() + ")")
	default:
		b.WriteString(e.String())
	}
}

func writeList(b *strings.Builder, es []Expr) {
	for i, x := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, x)
	}
}

// writeConnective writes "(l op r)", the form AND and OR print in.
func writeConnective(b *strings.Builder, l Expr, op string, r Expr) {
	b.WriteString("(")
	writeExpr(b, l)
	b.WriteString(op)
	writeExpr(b, r)
	b.WriteString(")")
}
