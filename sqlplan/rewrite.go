package sqlplan

import "strconv"

// Rewrite returns a copy of e in which every node, children first, is
// replaced by what fn returns for it (fn returns its argument to keep
// it). e itself is never changed: plans share expressions. A nil e is
// nil.
func Rewrite(e Expr, fn func(Expr) Expr) Expr {
	if e == nil {
		return nil
	}
	list := func(in []Expr) []Expr {
		if in == nil {
			return nil
		}
		out := make([]Expr, len(in))
		for i, x := range in {
			out[i] = Rewrite(x, fn)
		}
		return out
	}
	var out Expr
	switch x := e.(type) {
	case *Compare:
		out = &Compare{Op: x.Op, L: Rewrite(x.L, fn), R: Rewrite(x.R, fn)}
	case *And:
		out = &And{L: Rewrite(x.L, fn), R: Rewrite(x.R, fn)}
	case *Or:
		out = &Or{L: Rewrite(x.L, fn), R: Rewrite(x.R, fn)}
	case *Not:
		out = &Not{E: Rewrite(x.E, fn)}
	case *IsNull:
		out = &IsNull{E: Rewrite(x.E, fn), Not: x.Not}
	case *In:
		out = &In{E: Rewrite(x.E, fn), List: list(x.List), Not: x.Not}
	case *Between:
		out = &Between{E: Rewrite(x.E, fn), Lo: Rewrite(x.Lo, fn), Hi: Rewrite(x.Hi, fn), Not: x.Not}
	case *Like:
		out = &Like{E: Rewrite(x.E, fn), Pattern: Rewrite(x.Pattern, fn), Escape: x.Escape, Not: x.Not}
	case *Arith:
		out = &Arith{Op: x.Op, L: Rewrite(x.L, fn), R: Rewrite(x.R, fn), T: x.T}
	case *Neg:
		out = &Neg{E: Rewrite(x.E, fn)}
	case *Func:
		out = &Func{Name: x.Name, Args: list(x.Args), Distinct: x.Distinct, Star: x.Star, T: x.T}
	case *Case:
		c := &Case{Operand: Rewrite(x.Operand, fn), Else: Rewrite(x.Else, fn), T: x.T}
		for _, w := range x.Whens {
			c.Whens = append(c.Whens, When{Cond: Rewrite(w.Cond, fn), Result: Rewrite(w.Result, fn)})
		}
		out = c
	case *Cast:
		out = &Cast{E: Rewrite(x.E, fn), T: x.T}
	case *Subquery:
		// The inner query is a scope of its own: what belongs to the
		// enclosing query is the operand and the correlation.
		out = x.MapOperands(func(y Expr) Expr { return Rewrite(y, fn) })
	case *ColumnRef:
		c := *x
		out = &c
	default:
		// Leaves without children (literals, parameters) are shared.
		out = e
	}
	return fn(out)
}

// Fingerprint renders e so that two expressions have the same
// fingerprint exactly when they compute the same thing: as String, with
// every column reference also naming its index, so `t1.a` and `t2.a` of
// a join, which print alike, differ.
func Fingerprint(e Expr) string {
	if e == nil {
		return ""
	}
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok {
			c.Name = c.Name + "#" + strconv.Itoa(c.Index)
			c.Qualifier = ""
		}
		return x
	}).String()
}

// Qualified renders e as String does, with each column reference
// qualified by the relation it was resolved in (t1.a), as a query over
// several tables needs to be read.
func Qualified(e Expr) string {
	if e == nil {
		return ""
	}
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok {
			c.qualified = true
		}
		return x
	}).String()
}
