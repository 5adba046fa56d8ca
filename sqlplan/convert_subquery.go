package sqlplan

import (
	"github.com/xwb1989/sqlparser"
)

// The subquery forms of the parser's AST, converted with the rest of the
// statement (see convert.go).

func (c *converter) subquery(kind SubqueryKind, x *sqlparser.Subquery) (*Subquery, error) {
	if x == nil {
		return nil, unsupported("an empty subquery")
	}
	q, err := c.setOperand(x.Select)
	if err != nil {
		return nil, err
	}
	switch q := q.(type) {
	case *Select:
		// The canonical text of the inner query: placeholders in the
		// statement's style and names as written, so a statement holding
		// a subquery prints as text that parses back to it.
		return &Subquery{Kind: kind, Select: q, Text: q.String()}, nil
	case *Compound:
		// A UNION reads as the derived table it is: SELECT * FROM
		// (... UNION ...), whose SELECTs bind in scopes of their own.
		inner := &Select{From: true, FromTree: &FromSelect{Compound: q, Alias: "union_subquery"},
			Items: []SelectItem{{Star: true, Text: "*"}}}
		return &Subquery{Kind: kind, Select: inner, Text: q.String()}, nil
	}
	return nil, unsupported("%T in a subquery", q)
}

func (c *converter) inSubquery(left Expr, x *sqlparser.Subquery, not bool) (Expr, error) {
	sq, err := c.subquery(SubIn, x)
	if err != nil {
		return nil, err
	}
	sq.E, sq.Op, sq.Not = left, OpEq, not
	return sq, nil
}

// quantified matches the call the quantifier rewrite of parseDML writes
// for op ANY|SOME|ALL (SELECT ...).
func quantified(e sqlparser.Expr) (*quantifiedCall, bool) {
	f, ok := e.(*sqlparser.FuncExpr)
	if !ok || !f.Qualifier.IsEmpty() || len(f.Exprs) != 1 {
		return nil, false
	}
	var kind SubqueryKind
	switch f.Name.String() {
	case anyCall:
		kind = SubAny
	case allCall:
		kind = SubAll
	default:
		return nil, false
	}
	arg, ok := f.Exprs[0].(*sqlparser.AliasedExpr)
	if !ok {
		return nil, false
	}
	sub, ok := arg.Expr.(*sqlparser.Subquery)
	if !ok {
		return nil, false
	}
	return &quantifiedCall{kind: kind, sub: sub}, true
}

type quantifiedCall struct {
	kind SubqueryKind
	sub  *sqlparser.Subquery
}

func (c *converter) quantifiedSubquery(left Expr, op CmpOp, q *quantifiedCall) (Expr, error) {
	if op == OpNullSafeEq {
		return nil, unsupported("<=> with ANY or ALL")
	}
	sq, err := c.subquery(q.kind, q.sub)
	if err != nil {
		return nil, err
	}
	sq.E, sq.Op = left, op
	return sq, nil
}
