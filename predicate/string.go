package predicate

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

var opText = map[Op]string{Eq: "=", NotEq: "<>", Lt: "<", LtEq: "<=", Gt: ">", GtEq: ">="}

// String renders the leaf as SQL: "amount >= 200", "address IS NOT NULL",
// "name LIKE 'a%'", "dt IN ('2026-01-01', '2026-01-02')".
func (l *Leaf) String() string {
	name := l.Name
	if name == "" {
		name = fmt.Sprintf("#%d", l.Column)
	}
	col := metadata.QuoteIdent(name)
	switch l.Op {
	case IsNull:
		return col + " IS NULL"
	case IsNotNull:
		return col + " IS NOT NULL"
	case In, NotIn:
		items := make([]string, len(l.Literals))
		for i, v := range l.Literals {
			items[i] = metadata.FormatLiteral(l.Type, v)
		}
		not := ""
		if l.Op == NotIn {
			not = "NOT "
		}
		return col + " " + not + "IN (" + strings.Join(items, ", ") + ")"
	}
	var lit any
	if len(l.Literals) > 0 {
		lit = l.Literals[0]
	}
	switch l.Op {
	case StartsWith, EndsWith, Contains:
		s, _ := lit.(string)
		s = escapeLike(s)
		switch l.Op {
		case StartsWith:
			s += "%"
		case EndsWith:
			s = "%" + s
		default:
			s = "%" + s + "%"
		}
		return col + " LIKE " + metadata.FormatLiteral(metadata.StringType(), s)
	}
	op, ok := opText[l.Op]
	if !ok {
		op = fmt.Sprintf("<op %d>", l.Op)
	}
	return col + " " + op + " " + metadata.FormatLiteral(l.Type, lit)
}

// escapeLike escapes LIKE's wildcards and its default escape character, so
// the printed pattern matches the literal text the leaf holds.
func escapeLike(s string) string {
	if !strings.ContainsAny(s, `%_\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == '%' || r == '_' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// String renders the conjunction as SQL; an OR child is parenthesised
// because AND binds tighter.
func (a *And) String() string {
	parts := make([]string, len(a.Children))
	for i, c := range a.Children {
		parts[i] = c.String()
		if _, ok := c.(*Or); ok {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	if len(parts) == 0 {
		return "TRUE"
	}
	return strings.Join(parts, " AND ")
}

// String renders the disjunction as SQL.
func (o *Or) String() string {
	parts := make([]string, len(o.Children))
	for i, c := range o.Children {
		parts[i] = c.String()
	}
	if len(parts) == 0 {
		return "FALSE"
	}
	return strings.Join(parts, " OR ")
}

// String renders the negation as SQL, always parenthesising its child.
func (n *Not) String() string { return "NOT (" + n.Child.String() + ")" }
