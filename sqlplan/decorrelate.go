package sqlplan

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// decorrelate is the rewrite of a correlated [NOT] EXISTS whose
// correlation is one equality into an uncorrelated IN over the inner
// key: the semi-join (anti-join) by a hash set of the inner keys, read
// once, instead of one run of the inner query per outer row.
//
//	EXISTS (SELECT ... FROM u WHERE u.k = t.a AND p(u))
//	  => t.a IN (SELECT u.k FROM u WHERE p(u))
//	NOT EXISTS (SELECT ... FROM u WHERE u.k = t.a AND p(u))
//	  => (t.a) NOT IN (SELECT u.k FROM u WHERE p(u))   (SubSemi, never NULL)
//	  or, where t.a and u.k are of types whose equal values differ as
//	  values (DOUBLE and INT, say), which SubSemi cannot hash alike:
//	  => t.a IS NULL OR t.a NOT IN (SELECT u.k FROM u WHERE p(u) AND u.k IS NOT NULL)
//
// The first holds where only TRUE counts (IN is NULL where EXISTS is
// FALSE: when t.a is NULL, or when no key matches and one is NULL), so
// it applies to the conjuncts of a WHERE only. In the second the inner
// keys have no NULL, so NOT IN is exactly NOT EXISTS for a non-NULL t.a,
// and a NULL t.a matches no key. The inner query must read nothing else
// of the outer one, and must not aggregate or cut its rows (EXISTS
// (SELECT COUNT(*) ...) is always true; LIMIT 0 is never).
func decorrelate(where Expr) Expr {
	conj := Conjuncts(where)
	changed := false
	for i, c := range conj {
		e, anti := c, false
		if n, ok := c.(*Not); ok {
			e, anti = n.E, true
		}
		sub, ok := e.(*Subquery)
		if !ok || !sub.Correlated() {
			continue
		}
		var r Expr
		switch {
		case sub.Kind == SubExists:
			r = semiJoin(sub, anti != sub.Not)
		case sub.Kind == SubIn && !sub.Not && !anti:
			// NOT IN is not an anti-join: a NULL makes it NULL.
			r = semiIn(sub)
		}
		if r != nil {
			conj[i], changed = r, true
		}
	}
	if !changed {
		return where
	}
	out := conj[0]
	for _, c := range conj[1:] {
		out = &And{L: out, R: c}
	}
	return out
}

// semiJoin returns the IN form of a correlated EXISTS (see decorrelate),
// or nil when it has no such form.
func semiJoin(sub *Subquery, anti bool) Expr {
	p := sub.Plan
	// An inner FROM tree has had its conjuncts pushed into it by the
	// optimizer, so the WHERE no longer holds them all.
	if !p.From || p.Source != nil || p.Limit >= 0 || p.Offset > 0 || len(p.GroupBy) > 0 || p.Having != nil {
		return nil
	}
	for _, o := range p.Output {
		if hasOuterRef(o.Expr) || hasAggregate(o.Expr) {
			return nil
		}
	}
	for _, o := range p.OrderBy {
		if hasOuterRef(o.Expr) || hasAggregate(o.Expr) {
			return nil
		}
	}
	pairs, rest, ok := splitCorrelation(p)
	if !ok || len(pairs) == 0 {
		return nil
	}
	if len(pairs) > 1 {
		return semiTuple(sub, anti, nil, nil, pairs, rest)
	}
	if anti {
		// The anti-join itself where the key's values hash alike: the
		// optimizer's semi-join rule makes an anti-join of it.
		if r := semiTuple(sub, true, nil, nil, pairs, rest); r != nil {
			return r
		}
	}
	key, slot := pairs[0].inner, pairs[0].slot
	if anti {
		rest = append(rest, &IsNull{E: key, Not: true})
	}
	inner := restrict(p, rest, []Expr{key})
	left := sub.Outer[slot]
	in := &Subquery{Kind: SubIn, Op: OpEq, Not: anti, E: left, Plan: inner,
		Text: key.String() + " of " + sub.Text, args: sub.args, currentDB: sub.currentDB}
	if !anti {
		return in
	}
	return &Or{L: &IsNull{E: left}, R: in}
}

// semiIn returns the semi-join form of a correlated x IN (SELECT c ...
// WHERE u.k = t.a ...): (x, t.a) matches (c, u.k).
func semiIn(sub *Subquery) Expr {
	p := sub.Plan
	if !p.From || p.Source != nil || p.Limit >= 0 || p.Offset > 0 || len(p.GroupBy) > 0 || p.Having != nil || len(p.Output) != 1 {
		return nil
	}
	out := p.Output[0].Expr
	if hasOuterRef(out) || hasAggregate(out) {
		return nil
	}
	pairs, rest, ok := splitCorrelation(p)
	if !ok || len(pairs) == 0 {
		return nil
	}
	return semiTuple(sub, false, sub.E, out, pairs, rest)
}

// outerPair is an equality of the inner WHERE between an expression of
// the inner query and the outer value in slot.
type outerPair struct {
	inner Expr
	slot  int
}

// splitCorrelation splits the inner WHERE into its equalities with outer
// values and the conjuncts that read no outer value; ok is false when
// some other conjunct reads one.
func splitCorrelation(p *SelectPlan) (pairs []outerPair, rest []Expr, ok bool) {
	for _, c := range Conjuncts(p.Where) {
		if !hasOuterRef(c) {
			rest = append(rest, c)
			continue
		}
		cmp, isCmp := c.(*Compare)
		if !isCmp || cmp.Op != OpEq {
			return nil, nil, false
		}
		if o, isRef := cmp.R.(*OuterRef); isRef && !hasOuterRef(cmp.L) {
			pairs = append(pairs, outerPair{inner: cmp.L, slot: o.Slot})
		} else if o, isRef := cmp.L.(*OuterRef); isRef && !hasOuterRef(cmp.R) {
			pairs = append(pairs, outerPair{inner: cmp.R, slot: o.Slot})
		} else {
			return nil, nil, false
		}
	}
	return pairs, rest, true
}

// semiTuple builds the SubSemi of a tuple of keys: left = first (when
// set) and the outer side of each pair, against first's inner side and
// the inner side of each pair. A tuple matches by the exact values of its
// keys, so every key pair must be of types whose equal values are equal
// as values: integers with integers, strings with strings, or one type.
func semiTuple(sub *Subquery, anti bool, left, first Expr, pairs []outerPair, rest []Expr) Expr {
	var keys, inners []Expr
	if left != nil {
		keys, inners = append(keys, left), append(inners, first)
	}
	for _, pr := range pairs {
		keys, inners = append(keys, sub.Outer[pr.slot]), append(inners, pr.inner)
	}
	for i := range keys {
		if !sameValues(keys[i].Type(), inners[i].Type()) {
			return nil
		}
	}
	names := make([]string, len(inners))
	for i, e := range inners {
		names[i] = e.String()
	}
	return &Subquery{Kind: SubSemi, Not: anti, Keys: keys, Plan: restrict(sub.Plan, rest, inners),
		Text: "(" + strings.Join(names, ", ") + ") of " + sub.Text, args: sub.args, currentDB: sub.currentDB}
}

// sameValues reports whether two types hold equal values as equal
// canonical values.
func sameValues(a, b metadata.DataType) bool {
	switch {
	case a.IsInteger() && b.IsInteger(), a.IsString() && b.IsString():
		return true
	}
	return a.Root == b.Root && a.Root != 0 && !a.IsNested() && a.Root != metadata.Decimal &&
		a.Root != metadata.Float && a.Root != metadata.Double && a.Equal(b)
}

// restrict is p reading the outputs given, filtered by the conjuncts
// given.
func restrict(p *SelectPlan, where []Expr, outputs []Expr) *SelectPlan {
	inner := *p
	inner.Where = nil
	for _, c := range where {
		if inner.Where == nil {
			inner.Where = c
		} else {
			inner.Where = &And{L: inner.Where, R: c}
		}
	}
	inner.Output = make([]OutputColumn, len(outputs))
	for i, e := range outputs {
		inner.Output[i] = OutputColumn{Name: e.String(), Expr: e}
	}
	inner.OrderBy, inner.Distinct = nil, false
	inner.Columns = columnsRead(&inner)
	return &inner
}

func hasOuterRef(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}

func hasAggregate(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if f, ok := x.(*Func); ok && aggregates[f.Name] {
			found = true
		}
		return !found
	})
	return found
}
