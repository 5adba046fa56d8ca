package sqlplan

import (
	"slices"
	"sort"
)

// A rule rewrites a bound query over a FROM tree into an equivalent one.
// Rules are deterministic and run in the order of rules; each has its
// own golden test (testdata/plan).
type rule struct {
	name string
	fn   func(*SelectPlan) *SelectPlan
	// oneTable makes the rule run on a query of one table too, which it
	// may turn into a query over a FROM tree; the others run only on a
	// query over a FROM tree.
	oneTable bool
}

var rules = []rule{
	{"semi-join", semiJoins, true},
	{"push-conjuncts", pushConjuncts, false},
	{"join-order", joinOrder, false},
	{"equi-join", equiJoins, false},
	{"prune-columns", pruneColumns, false},
	{"limit-pushdown", pushLimit, false},
}

// columnSet is the combined indexes an expression reads.
func columnSet(e Expr) []int {
	var out []int
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColumnRef); ok && c.Index >= 0 && !slices.Contains(out, c.Index) {
			out = append(out, c.Index)
		}
		return true
	})
	return out
}

// within reports whether every column e reads lies in rel's span; an
// expression that reads no column lies in none (it stays where it was
// written).
func within(e Expr, rel Relation) bool {
	cols := columnSet(e)
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		if !Covers(rel, c) {
			return false
		}
	}
	return true
}

// pushConjuncts moves every conjunct of WHERE and of each join condition
// to the lowest node that has its columns, so each table's scan gets the
// conjuncts on it alone and plans them through pushdown (partition
// pruning, pushed predicates, point lookups). Outer joins keep SQL's
// meaning: a WHERE conjunct is not pushed below the side a join extends
// with NULLs, and an ON conjunct is not pushed into the preserved side.
func pushConjuncts(p *SelectPlan) *SelectPlan {
	var plain, subs []Expr
	for _, c := range append(Conjuncts(p.Where), placeOnSubqueries(p.Source, false)...) {
		if hasSubquery(c) {
			subs = append(subs, c)
		} else {
			plain = append(plain, c)
		}
	}
	rest := push(p.Source, plain)
	for _, c := range subs {
		if !pushToScan(p.Source, c) {
			rest = append(rest, c)
		}
	}
	p.Where = andOf(rest)
	return p
}

// placeOnSubqueries takes every conjunct holding a subquery out of the
// join conditions below rel, which evaluate no subquery, and moves it to
// a scan's filter: one over the null-extended side of an outer join (or
// either side of an inner one) filters that side before the join, as its
// ON would. One that no scan can take is returned, for the query's
// filter, when its join is inner and no outer join extends it with NULLs
// (underNulls), where ON and WHERE mean the same; else it stays, and the
// join refuses to run it. Nothing is returned from under an extended side.
func placeOnSubqueries(rel Relation, underNulls bool) []Expr {
	r, ok := rel.(*JoinRel)
	if !ok {
		return nil
	}
	lifted := append(placeOnSubqueries(r.L, underNulls || r.Kind == JoinRight),
		placeOnSubqueries(r.R, underNulls || r.Kind == JoinLeft)...)
	var keep []Expr
	for _, c := range r.Cond {
		switch {
		case !hasSubquery(c):
			keep = append(keep, c)
		case within(c, r.R) && r.Kind != JoinRight && pushToScan(r.R, c):
		case within(c, r.L) && r.Kind != JoinLeft && pushToScan(r.L, c):
		case r.Kind == JoinInner && !underNulls:
			lifted = append(lifted, c)
		default:
			keep = append(keep, c)
		}
	}
	r.Cond = keep
	return lifted
}

// pushToScan moves a WHERE conjunct that holds a subquery to the scan of
// the one table it reads, by push's rules for a WHERE conjunct, and
// reports whether it did. Such a conjunct never joins a join's condition:
// the subquery runs where a scan's or the query's filter evaluates it.
func pushToScan(rel Relation, c Expr) bool {
	switch r := rel.(type) {
	case *ScanRel:
		if !within(c, r) {
			return false
		}
		r.Plan.Where = andOf(append(Conjuncts(r.Plan.Where), shiftColumns(c, -r.Offset)))
		return true
	case *JoinRel:
		switch {
		case within(c, r.L) && r.Kind != JoinRight:
			return pushToScan(r.L, c)
		case within(c, r.R) && r.Kind != JoinLeft:
			return pushToScan(r.R, c)
		}
	}
	return false
}

func hasSubquery(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// push hands conds to rel and returns the ones rel cannot take.
func push(rel Relation, conds []Expr) []Expr {
	switch r := rel.(type) {
	case *ScanRel:
		var rest []Expr
		off := r.Offset
		for _, c := range conds {
			if !within(c, r) {
				rest = append(rest, c)
				continue
			}
			local := shiftColumns(c, -off)
			r.Plan.Where = andOf(append(Conjuncts(r.Plan.Where), local))
		}
		return rest
	case *JoinRel:
		var rest []Expr
		// The join's own condition first: its single-sided conjuncts go
		// down where the join kind allows.
		var keep []Expr
		for _, c := range r.Cond {
			switch {
			case r.Kind != JoinRight && within(c, r.R) && r.Kind != JoinInner:
				keep = append(keep, push(r.R, []Expr{c})...)
			case r.Kind == JoinRight && within(c, r.L):
				keep = append(keep, push(r.L, []Expr{c})...)
			case r.Kind == JoinInner && within(c, r.L):
				keep = append(keep, push(r.L, []Expr{c})...)
			case r.Kind == JoinInner && within(c, r.R):
				keep = append(keep, push(r.R, []Expr{c})...)
			default:
				keep = append(keep, c)
			}
		}
		r.Cond = keep
		for _, c := range conds {
			switch {
			case within(c, r.L) && r.Kind != JoinRight:
				r.Cond = append(r.Cond, push(r.L, []Expr{c})...)
			case within(c, r.R) && r.Kind != JoinLeft:
				r.Cond = append(r.Cond, push(r.R, []Expr{c})...)
			case within(c, r) && r.Kind == JoinInner:
				r.Cond = append(r.Cond, c)
			default:
				rest = append(rest, c)
			}
		}
		if r.Kind != JoinInner {
			// What an outer join's side gives back cannot join its
			// condition: a WHERE conjunct must filter after the join.
			var back []Expr
			for _, c := range r.Cond[len(keep):] {
				back = append(back, c)
			}
			r.Cond = r.Cond[:len(keep)]
			rest = append(rest, back...)
		}
		return rest
	}
	return conds
}

// shiftColumns moves the column indexes of e by delta.
func shiftColumns(e Expr, delta int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok && c.Index >= 0 {
			c.Index += delta
		}
		return x
	})
}

func andOf(conds []Expr) Expr {
	var out Expr
	for _, c := range conds {
		if out == nil {
			out = c
			continue
		}
		out = &And{L: out, R: c}
	}
	return out
}

// equiJoins turns each equality of a join condition between an
// expression over one side and one over the other into a key of the join,
// so it runs as a hash join rather than a nested loop.
func equiJoins(p *SelectPlan) *SelectPlan {
	visitJoins(p.Source, func(j *JoinRel) {
		if j.Kind == JoinAntiNullAware {
			// NOT IN has one key; its condition picks the inner rows
			// that count, NULL keys among them.
			return
		}
		var rest []Expr
		for _, c := range j.Cond {
			cmp, ok := c.(*Compare)
			if !ok || cmp.Op != OpEq && cmp.Op != OpNullSafeEq {
				rest = append(rest, c)
				continue
			}
			l, r := cmp.L, cmp.R
			if within(r, j.L) && within(l, j.R) {
				l, r = r, l
			}
			if !within(l, j.L) || !within(r, j.R) || !keyComparable(l, r) {
				rest = append(rest, c)
				continue
			}
			j.LeftKeys = append(j.LeftKeys, l)
			j.RightKeys = append(j.RightKeys, r)
			j.NullSafe = append(j.NullSafe, cmp.Op == OpNullSafeEq)
		}
		j.Cond = rest
	})
	return p
}

// keyComparable reports whether two sides of an equality can be hashed
// as one key: numbers with numbers, strings with strings, and otherwise
// equal kinds. A string compared with a number compares numerically,
// which hashing cannot do; it stays a condition.
func keyComparable(a, b Expr) bool {
	ta, tb := a.Type(), b.Type()
	switch {
	case ta.Root == 0 || tb.Root == 0:
		return false
	case ta.IsNumeric() || tb.IsNumeric():
		return ta.IsNumeric() && tb.IsNumeric()
	}
	return comparableTypes(ta, tb)
}

func visitJoins(rel Relation, fn func(*JoinRel)) {
	if j, ok := rel.(*JoinRel); ok {
		visitJoins(j.L, fn)
		visitJoins(j.R, fn)
		fn(j)
	}
}

// pruneColumns makes each scan read only the columns the query uses
// above it: its outputs, the conditions and keys of the joins, and the
// clauses of the query.
func pruneColumns(p *SelectPlan) *SelectPlan {
	need := map[int]bool{}
	add := func(e Expr) {
		for _, c := range columnSet(e) {
			need[c] = true
		}
	}
	for _, c := range columnsRead(p) {
		need[c] = true
	}
	var walk func(Relation)
	walk = func(rel Relation) {
		switch r := rel.(type) {
		case *JoinRel:
			for _, e := range slices.Concat(r.LeftKeys, r.RightKeys, r.Cond) {
				add(e)
			}
			walk(r.L)
			walk(r.R)
		case *ScanRel:
			off, w := r.Offset, len(r.Plan.Table.Schema.Columns)
			var cols []int
			for i := off; i < off+w; i++ {
				if need[i] {
					cols = append(cols, i-off)
				}
			}
			if len(cols) == 0 {
				// A join still needs each row, if none of its values:
				// read the narrowest column.
				cols = []int{narrowest(r)}
			}
			r.Plan.Output = r.Plan.Output[:0]
			for _, i := range cols {
				c := r.Plan.Table.Schema.Columns[i]
				r.Plan.Output = append(r.Plan.Output, OutputColumn{Name: c.Name, Expr: &ColumnRef{Name: c.Name, Index: i, T: c.Type}})
			}
			r.Plan.Columns = columnsRead(r.Plan)
		}
	}
	walk(p.Source)
	keepAbove(p.Source, columnsRead(p))
	p.Columns = p.Columns[:0]
	for c := range need {
		p.Columns = append(p.Columns, c)
	}
	sort.Ints(p.Columns)
	return p
}

// keepAbove sets each join's Keep: the columns of its rows read above it,
// by the query (above) and by the conditions of the joins it is under.
func keepAbove(rel Relation, above []int) {
	j, ok := rel.(*JoinRel)
	if !ok {
		return
	}
	j.Keep = []int{}
	for _, c := range above {
		if Covers(j, c) {
			j.Keep = append(j.Keep, c)
		}
	}
	below := slices.Clone(above)
	for _, e := range slices.Concat(j.LeftKeys, j.RightKeys, j.Cond) {
		for _, c := range columnSet(e) {
			if !slices.Contains(below, c) {
				below = append(below, c)
			}
		}
	}
	sort.Ints(below)
	keepAbove(j.L, below)
	keepAbove(j.R, below)
}

// narrowest picks the column of a scan that is cheapest to read: a
// fixed-width one, the first such.
func narrowest(r *ScanRel) int {
	for i, c := range r.Plan.Table.Schema.Columns {
		if c.Type.IsNumeric() || c.Type.IsTemporal() {
			return i
		}
	}
	return 0
}

// joinOrder reorders each run of inner joins so that every join has a
// condition between its sides where the conditions allow: starting from
// the first relation in FROM order, it joins next the first relation
// that some condition connects with those joined so far; relations no
// condition connects to them start a group of their own, and the groups
// are crossed last. Each condition then
// sits at the lowest join that has all its columns. A comma list of
// eight tables joined by a chain of equalities so becomes a chain of
// hash joins instead of cross products. Outer joins keep their place:
// the relations of a run are its inner joins' inputs.
func joinOrder(p *SelectPlan) *SelectPlan {
	p.Source = reorder(p.Source)
	return p
}

func reorder(rel Relation) Relation {
	j, ok := rel.(*JoinRel)
	if !ok {
		return rel
	}
	if j.Kind != JoinInner {
		j.L, j.R = reorder(j.L), reorder(j.R)
		return j
	}
	var units []Relation
	var conds []Expr
	var flatten func(Relation)
	flatten = func(r Relation) {
		if x, ok := r.(*JoinRel); ok && x.Kind == JoinInner {
			flatten(x.L)
			flatten(x.R)
			conds = append(conds, x.Cond...)
			return
		}
		units = append(units, reorder(r))
	}
	flatten(j)
	// owner[c] is the unit that holds column c (-1: none of them).
	width := 0
	for _, u := range units {
		for _, sp := range u.Spans() {
			width = max(width, sp.Offset+sp.Width)
		}
	}
	owner := make([]int, width)
	for c := range owner {
		owner[c] = -1
		for ui, u := range units {
			if Covers(u, c) {
				owner[c] = ui
				break
			}
		}
	}
	condUnits := make([][]int, len(conds))
	for i, c := range conds {
		for _, col := range columnSet(c) {
			u := -1
			if col < width {
				u = owner[col]
			}
			condUnits[i] = append(condUnits[i], u)
		}
	}
	joined := make([]bool, len(units))
	// connects reports whether some condition reads exactly the joined
	// units and unit u, both.
	connects := func(u int) bool {
		for _, us := range condUnits {
			var inJoined, inNext, elsewhere bool
			for _, x := range us {
				switch {
				case x >= 0 && joined[x]:
					inJoined = true
				case x == u:
					inNext = true
				default:
					elsewhere = true
				}
			}
			if inJoined && inNext && !elsewhere {
				return true
			}
		}
		return false
	}
	made := map[*JoinRel]bool{}
	join := func(l, r Relation) Relation {
		nj := &JoinRel{Kind: JoinInner, L: l, R: r}
		made[nj] = true
		return nj
	}
	// Grow each connected group of relations greedily; the groups, which
	// no condition connects, are crossed last.
	var groups []Relation
	rest := make([]int, len(units))
	for i := range rest {
		rest[i] = i
	}
	for len(rest) > 0 {
		clear(joined)
		joined[rest[0]] = true
		tree := units[rest[0]]
		rest = rest[1:]
		for {
			pick := -1
			for i, u := range rest {
				if connects(u) {
					pick = i
					break
				}
			}
			if pick < 0 {
				break
			}
			joined[rest[pick]] = true
			tree = join(tree, units[rest[pick]])
			rest = append(rest[:pick:pick], rest[pick+1:]...)
		}
		groups = append(groups, tree)
	}
	tree := groups[0]
	for _, g := range groups[1:] {
		tree = join(tree, g)
	}
	// Each condition at the lowest join of the run that has its columns
	// (never inside a unit: an outer join's condition means something
	// else).
	var place func(Relation, Expr) bool
	place = func(r Relation, c Expr) bool {
		x, ok := r.(*JoinRel)
		if !ok || !made[x] || !within(c, r) {
			return false
		}
		if place(x.L, c) || place(x.R, c) {
			return true
		}
		x.Cond = append(x.Cond, c)
		return true
	}
	top := tree.(*JoinRel)
	for _, c := range conds {
		if !place(tree, c) {
			top.Cond = append(top.Cond, c)
		}
	}
	return tree
}

// pushLimit hands a LIMIT down to the preserved side of a left join (a
// right join's right side), whose every row gives at least one row of
// the join: the side's scan may stop after LIMIT + OFFSET rows. It
// applies only when nothing above the join drops, reorders or merges
// rows: no WHERE left above it, GROUP BY, aggregate, DISTINCT or ORDER
// BY.
func pushLimit(p *SelectPlan) *SelectPlan {
	if p.Limit < 0 || p.Where != nil || p.Distinct || len(p.OrderBy) > 0 || len(p.GroupBy) > 0 || p.Having != nil || hasAggregateOutput(p) {
		return p
	}
	n := p.Limit + p.Offset
	rel := p.Source
	for {
		j, ok := rel.(*JoinRel)
		if !ok {
			return p
		}
		switch j.Kind {
		case JoinLeft:
			rel = j.L
		case JoinRight:
			rel = j.R
		default:
			return p
		}
		if scan, ok := rel.(*ScanRel); ok {
			if scan.Plan.Limit < 0 || scan.Plan.Limit > n {
				scan.Plan.Limit = n
			}
			return p
		}
	}
}
