package sqlplan

import (
	"fmt"
	"slices"

	"github.com/flusslite/fluss/metadata"
)

// The kinds of join the semi-join rule makes of a subquery in WHERE; no
// statement writes them. The right side is the inner query, whose
// columns nothing above the join reads; the join yields left rows only.
const (
	// JoinSemi keeps a left row once when some right row matches it (x
	// IN (SELECT ...), a decorrelated EXISTS).
	JoinSemi JoinKind = JoinRight + 1 + iota
	// JoinAnti keeps a left row when no right row matches it; a NULL key
	// matches nothing (a decorrelated NOT EXISTS).
	JoinAnti
	// JoinAntiNullAware is x NOT IN (SELECT ...): a left row is kept when
	// the right side is empty, or when x is not NULL, no right key equals
	// it and no right key is NULL.
	JoinAntiNullAware
)

// semiJoins turns each conjunct of WHERE that is x [NOT] IN (SELECT ...)
// or a decorrelated [NOT] EXISTS (SubSemi) over an uncorrelated inner
// query into a semi- or anti-join of the FROM tree with that query, a
// derived table: its rows are read and hashed once, and the outer rows
// probe them, instead of evaluating the subquery as an expression. A
// query of one table becomes a FROM tree of that table first. Only TRUE
// counts in WHERE, so a conjunct that is NULL drops its row as FALSE
// would: x IN (...) is a semi-join whose NULL keys match nothing, and NOT
// IN the null-aware anti-join (exactly SQL's: never TRUE when the inner
// query has a NULL, always TRUE when it has no row). The join goes down
// to the lowest node of the FROM tree that has x's columns, by the rules
// a WHERE conjunct is pushed by. Subqueries anywhere else (the select
// list, HAVING, under OR) and correlated ones stay expressions, but for
// NOT IN correlated by equalities (see correlatedNotIn).
//
// The rule runs first, so that push-conjuncts finds the rest of WHERE
// over the tree it builds.
func semiJoins(p *SelectPlan) *SelectPlan {
	if !p.From || p.Compound != nil || readsOuter(p) {
		return p
	}
	var joins []semi
	var rest []Expr
	for _, c := range Conjuncts(p.Where) {
		if s, ok := semiOf(c); ok {
			joins = append(joins, s)
		} else {
			rest = append(rest, c)
		}
	}
	if len(joins) == 0 {
		return p
	}
	if p.Source == nil {
		p = liftTable(p)
	}
	cols := slices.Clone(p.Table.Schema.Columns)
	for n, s := range joins {
		name := "subquery"
		if n > 0 {
			name = fmt.Sprintf("subquery%d", n+1)
		}
		d := &DerivedRel{Plan: s.plan, Name: name, Offset: len(cols), Text: s.text}
		var refs []Expr
		for i, o := range s.plan.Output {
			t := o.Expr.Type()
			cols = append(cols, metadata.Column{Name: o.Name, Type: t})
			refs = append(refs, &ColumnRef{Name: o.Name, Qualifier: name, Index: d.Offset + i, T: t})
		}
		var cond []Expr
		for i, o := range s.outer {
			cond = append(cond, &Compare{Op: OpEq, L: o, R: refs[len(s.left)+i]})
		}
		p.Source = attachSemi(p.Source, append(slices.Clone(s.left), s.outer...), func(rel Relation) Relation {
			return &JoinRel{Kind: s.kind, L: rel, R: d, LeftKeys: s.left, RightKeys: refs[:len(s.left)],
				NullSafe: make([]bool, len(s.left)), Cond: cond}
		})
	}
	p.Table = metadata.TableInfo{Schema: metadata.Schema{Columns: cols}}
	p.Where = andOf(rest)
	p.Columns = columnsRead(p)
	return p
}

// semi is a conjunct the rule joins: the kind of join, the outer keys
// and the inner query whose first outputs they match. outer are the
// outer values of a correlation by equalities that stays a condition of
// the join: outer[i] equals the inner query's output len(left)+i.
type semi struct {
	kind  JoinKind
	left  []Expr
	outer []Expr
	plan  *SelectPlan
	text  string
}

// semiOf reports whether a WHERE conjunct is one the rule joins, and how.
func semiOf(c Expr) (semi, bool) {
	negated := false
	if n, ok := c.(*Not); ok {
		c, negated = n.E, true
	}
	sub, ok := c.(*Subquery)
	if !ok || sub.Plan == nil {
		return semi{}, false
	}
	s := semi{plan: sub.Plan, text: sub.Text}
	switch {
	case sub.Correlated():
		if sub.Kind != SubIn || sub.Not == negated {
			return semi{}, false
		}
		var ok bool
		if s, ok = correlatedNotIn(sub); !ok {
			return semi{}, false
		}
	case sub.Kind == SubIn:
		s.kind, s.left = JoinSemi, []Expr{sub.E}
		if sub.Not != negated {
			s.kind = JoinAntiNullAware
		}
	case sub.Kind == SubSemi:
		// Never NULL: NOT of it is the anti-join.
		s.kind, s.left = JoinSemi, sub.Keys
		if sub.Not != negated {
			s.kind = JoinAnti
		}
	default:
		return semi{}, false
	}
	if len(s.left) == 0 || len(s.plan.Output) != len(s.left)+len(s.outer) {
		return semi{}, false
	}
	for i, x := range s.left {
		// A key that reads no column (a constant, an outer value) is
		// decided once by the expression; one holding a subquery runs it
		// where filters do.
		if len(columnSet(x)) == 0 || hasSubquery(x) || hasOuterRef(x) || !keyComparable(x, s.plan.Output[i].Expr) {
			return semi{}, false
		}
	}
	for _, x := range s.outer {
		if len(columnSet(x)) == 0 || hasSubquery(x) || hasOuterRef(x) {
			return semi{}, false
		}
	}
	return s, true
}

// correlatedNotIn is the join of x NOT IN (SELECT c FROM u WHERE u.k =
// t.a AND p(u)), correlated by equalities only: the null-aware anti-join
// on x = c whose condition t.a = u.k picks, for each outer row, the inner
// rows of its own set. A NULL x is then decided by whether any inner row
// meets the condition (its set is empty or not), and a NULL c counts
// only where it does. decorrelate cannot make it a SubSemi: a NULL makes
// NOT IN NULL, where the tuple's anti-join would be TRUE.
func correlatedNotIn(sub *Subquery) (semi, bool) {
	p := sub.Plan
	if !p.From || p.Source != nil || p.Compound != nil || p.Limit >= 0 || p.Offset > 0 || len(p.GroupBy) > 0 || p.Having != nil ||
		p.Distinct || len(p.Output) != 1 {
		return semi{}, false
	}
	out := p.Output[0].Expr
	if hasOuterRef(out) || hasAggregate(out) {
		return semi{}, false
	}
	pairs, rest, ok := splitCorrelation(p)
	if !ok || len(pairs) == 0 {
		return semi{}, false
	}
	outputs := []Expr{out}
	var outer []Expr
	for _, pr := range pairs {
		outputs = append(outputs, pr.inner)
		outer = append(outer, sub.Outer[pr.slot])
	}
	return semi{kind: JoinAntiNullAware, left: []Expr{sub.E}, outer: outer, plan: restrict(p, rest, outputs), text: sub.Text}, true
}

// liftTable is a query of one table as a query over a FROM tree of that
// table alone, whose combined columns are the table's.
func liftTable(p *SelectPlan) *SelectPlan {
	scan := &SelectPlan{Table: p.Table, From: true, Limit: -1, Hints: p.Hints, Virtual: p.Virtual, Base: p.Base}
	name := p.Table.Path.Table
	out := *p
	out.Source = &ScanRel{Plan: scan, Name: name}
	out.Table = metadata.TableInfo{Schema: metadata.Schema{Columns: p.Table.Schema.Columns}}
	out.Virtual, out.Base = "", metadata.TableInfo{}
	return &out
}

// attachSemi joins rel's lowest node that has the columns of keys with
// the inner query (mk), as push moves a WHERE conjunct: never into the
// side an outer join extends with NULLs.
func attachSemi(rel Relation, keys []Expr, mk func(Relation) Relation) Relation {
	all := func(side Relation) bool {
		for _, k := range keys {
			if !within(k, side) {
				return false
			}
		}
		return true
	}
	if j, ok := rel.(*JoinRel); ok {
		switch {
		case all(j.L) && j.Kind != JoinRight:
			j.L = attachSemi(j.L, keys, mk)
			return j
		case all(j.R) && (j.Kind == JoinInner || j.Kind == JoinRight):
			j.R = attachSemi(j.R, keys, mk)
			return j
		}
	}
	return mk(rel)
}

// readsOuter reports whether a query reads a value of an enclosing one:
// a correlated subquery's first binding, which runs only bound again
// with the outer values (BindValues), and which decorrelate looks into.
func readsOuter(p *SelectPlan) bool {
	es := []Expr{p.Where, p.Having}
	for _, o := range p.Output {
		es = append(es, o.Expr)
	}
	es = append(es, p.GroupBy...)
	for _, o := range p.OrderBy {
		es = append(es, o.Expr)
	}
	return slices.ContainsFunc(es, hasOuterRef)
}

// IsSemi reports whether a join yields only its left rows, keeping or
// dropping each by whether its right side matches it.
func (k JoinKind) IsSemi() bool {
	return k == JoinSemi || k == JoinAnti || k == JoinAntiNullAware
}
