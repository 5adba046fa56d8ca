package sqlplan

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

var cmpText = [...]string{OpEq: "=", OpNotEq: "<>", OpLt: "<", OpLtEq: "<=", OpGt: ">", OpGtEq: ">=", OpNullSafeEq: "<=>"}

func (op CmpOp) String() string { return cmpText[op] }

func (e *ColumnRef) String() string { return metadata.QuoteIdent(e.Name) }
func (e *Literal) String() string   { return metadata.FormatLiteral(e.T, e.Value) }
func (e *Param) String() string {
	if e.Name != "" {
		return ":" + e.Name
	}
	return fmt.Sprintf("$%d", e.Ordinal)
}
func (e *Compare) String() string { return e.L.String() + " " + e.Op.String() + " " + e.R.String() }
func (e *And) String() string     { return "(" + e.L.String() + " AND " + e.R.String() + ")" }
func (e *Or) String() string      { return "(" + e.L.String() + " OR " + e.R.String() + ")" }
func (e *Not) String() string     { return "NOT " + e.E.String() }
func (e *IsNull) String() string {
	if e.Not {
		return e.E.String() + " IS NOT NULL"
	}
	return e.E.String() + " IS NULL"
}
func (e *In) String() string {
	items := make([]string, len(e.List))
	for i, x := range e.List {
		items[i] = x.String()
	}
	not := ""
	if e.Not {
		not = "NOT "
	}
	return e.E.String() + " " + not + "IN (" + strings.Join(items, ", ") + ")"
}
func (e *Between) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	return e.E.String() + " " + not + "BETWEEN " + e.Lo.String() + " AND " + e.Hi.String()
}
func (e *Like) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	s := e.E.String() + " " + not + "LIKE " + e.Pattern.String()
	if e.Escape != 0 {
		s += " ESCAPE '" + string(e.Escape) + "'"
	}
	return s
}
func (e *Arith) String() string {
	op := string(e.Op)
	if e.Op == 'd' {
		op = "DIV"
	}
	return "(" + e.L.String() + " " + op + " " + e.R.String() + ")"
}
func (e *Neg) String() string { return "-" + e.E.String() }
func (e *Func) String() string {
	if e.Star {
		return strings.ToUpper(e.Name) + "(*)"
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = a.String()
	}
	d := ""
	if e.Distinct {
		d = "DISTINCT "
	}
	return strings.ToUpper(e.Name) + "(" + d + strings.Join(args, ", ") + ")"
}
func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if e.Operand != nil {
		b.WriteString(" " + e.Operand.String())
	}
	for _, w := range e.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if e.Else != nil {
		b.WriteString(" ELSE " + e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}
func (e *Cast) String() string { return "CAST(" + e.E.String() + " AS " + e.T.String() + ")" }

func (e *Default) String() string { return "DEFAULT" }
