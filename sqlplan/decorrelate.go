package sqlplan

// decorrelate is the rewrite of a correlated [NOT] EXISTS whose
// correlation is one equality into an uncorrelated IN over the inner
// key: the semi-join (anti-join) by a hash set of the inner keys, read
// once, instead of one run of the inner query per outer row.
//
//	EXISTS (SELECT ... FROM u WHERE u.k = t.a AND p(u))
//	  => t.a IN (SELECT u.k FROM u WHERE p(u))
//	NOT EXISTS (SELECT ... FROM u WHERE u.k = t.a AND p(u))
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
		if !ok || sub.Kind != SubExists || !sub.Correlated() {
			continue
		}
		if sub.Not {
			anti = !anti
		}
		if r := semiJoin(sub, anti); r != nil {
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
	var key Expr
	slot := -1
	var rest []Expr
	for _, c := range Conjuncts(p.Where) {
		if !hasOuterRef(c) {
			rest = append(rest, c)
			continue
		}
		cmp, ok := c.(*Compare)
		if !ok || cmp.Op != OpEq || key != nil {
			return nil
		}
		if o, ok := cmp.R.(*OuterRef); ok && !hasOuterRef(cmp.L) {
			key, slot = cmp.L, o.Slot
		} else if o, ok := cmp.L.(*OuterRef); ok && !hasOuterRef(cmp.R) {
			key, slot = cmp.R, o.Slot
		} else {
			return nil
		}
	}
	if key == nil {
		return nil
	}
	if anti {
		rest = append(rest, &IsNull{E: key, Not: true})
	}
	inner := *p
	inner.Where = nil
	for _, c := range rest {
		if inner.Where == nil {
			inner.Where = c
		} else {
			inner.Where = &And{L: inner.Where, R: c}
		}
	}
	inner.Output = []OutputColumn{{Name: key.String(), Expr: key}}
	inner.OrderBy, inner.Distinct = nil, false
	inner.Columns = columnsRead(&inner)
	left := sub.Outer[slot]
	in := &Subquery{Kind: SubIn, Op: OpEq, Not: anti, E: left, Plan: &inner,
		Text: key.String() + " of " + sub.Text, args: sub.args, currentDB: sub.currentDB}
	if !anti {
		return in
	}
	return &Or{L: &IsNull{E: left}, R: in}
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
