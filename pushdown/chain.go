package pushdown

import (
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/sqlplan"
)

// convertChain converts a run of one boolean operator (a AND b AND c, or
// the same with OR, nested any way) into one flat node. The parser nests
// a chain of n terms n deep; combining two converted halves at every level
// would copy the children gathered so far each time, O(n²) for a WHERE of
// many ORs, so the terms are gathered first and converted once each.
func convertChain(table *metadata.TableInfo, e sqlplan.Expr) (predicate.P, bool, bool) {
	_, isOr := e.(*sqlplan.Or)
	var children []predicate.P
	negatable := true
	for _, t := range chainTerms(e, isOr) {
		p, neg, ok := convert(table, t)
		if !ok {
			return nil, false, false
		}
		negatable = negatable && neg
		// A term may convert to the same operator (NOT BETWEEN is an OR,
		// BETWEEN an AND): its children join this node.
		switch x := p.(type) {
		case *predicate.Or:
			if isOr {
				children = append(children, x.Children...)
				continue
			}
		case *predicate.And:
			if !isOr {
				children = append(children, x.Children...)
				continue
			}
		}
		children = append(children, p)
	}
	if isOr {
		return &predicate.Or{Children: children}, negatable, true
	}
	return &predicate.And{Children: children}, negatable, true
}

// chainTerms lists, in order, the operands of the run of AND (or OR) at e:
// the nearest expressions below it that are not that operator. It walks
// with its own stack, so a chain of any length costs no recursion depth.
func chainTerms(e sqlplan.Expr, isOr bool) []sqlplan.Expr {
	var out []sqlplan.Expr
	stack := []sqlplan.Expr{e}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if l, r, ok := chainSides(x, isOr); ok {
			// Right first, so the left side comes off the stack first.
			stack = append(stack, r, l)
			continue
		}
		out = append(out, x)
	}
	return out
}

func chainSides(e sqlplan.Expr, isOr bool) (l, r sqlplan.Expr, ok bool) {
	if isOr {
		if o, ok := e.(*sqlplan.Or); ok {
			return o.L, o.R, true
		}
		return nil, nil, false
	}
	if a, ok := e.(*sqlplan.And); ok {
		return a.L, a.R, true
	}
	return nil, nil, false
}
