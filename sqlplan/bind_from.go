package sqlplan

import (
	"context"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// fromBinder binds a FROM tree: it resolves each table, binds derived
// tables, lays the leaves out in the combined column space and binds the
// join conditions.
type fromBinder struct {
	ctx       context.Context
	cat       Catalog
	currentDB string
	args      []Arg
	scope     *scope
	// hints are the query's OPTIONS, which every table it reads takes.
	hints map[string]string
	// outer, in a subquery, resolves the names of the queries around it
	// in the ON conditions (a derived table binds in a scope of its own).
	outer outerScope
	// underNulls is set while binding a side an outer join extends with
	// NULLs.
	underNulls bool
	// stars holds each join's * order (see starOrder).
	stars map[*JoinRel][]int
}

// bindFromTree binds s's FROM tree into plan: plan.Source, and plan.Table
// as the combined schema the rest of the query binds against.
func bindFromTree(ctx context.Context, cat Catalog, currentDB string, args []Arg, s *Select, plan *SelectPlan, outer outerScope) (*scope, error) {
	fb := &fromBinder{ctx: ctx, cat: cat, currentDB: currentDB, args: args, scope: &scope{hidden: map[int]bool{}}, hints: s.Hints, outer: outer}
	rel, err := fb.bind(s.FromTree)
	if err != nil {
		return nil, err
	}
	fb.scope.star = fb.starOrder(rel)
	plan.Source = rel
	plan.Table = metadata.TableInfo{Schema: metadata.Schema{Columns: fb.scope.columns}}
	return fb.scope, nil
}

func (fb *fromBinder) bind(item FromItem) (Relation, error) {
	switch x := item.(type) {
	case *FromTable:
		return fb.table(x)
	case *FromSelect:
		return fb.derived(x)
	case *FromJoin:
		return fb.join(x)
	}
	return nil, unsupported("FROM item %T", item)
}

func (fb *fromBinder) addRel(r scopeRel) error {
	for _, o := range fb.scope.rels {
		if strings.EqualFold(o.name, r.name) && strings.EqualFold(o.db, r.db) {
			return atName(r.name, errorf(metadata.ErrInvalidValue, "table name %s appears twice in FROM; give one of them an alias", quoteIdent(r.name)))
		}
	}
	r.offset = len(fb.scope.columns)
	fb.scope.rels = append(fb.scope.rels, r)
	fb.scope.columns = append(fb.scope.columns, r.cols...)
	return nil
}

func (fb *fromBinder) table(t *FromTable) (Relation, error) {
	sp := &SelectPlan{From: true, Limit: -1, Hints: fb.hints}
	if err := resolveRead(fb.ctx, fb.cat, t.Table, fb.currentDB, sp); err != nil {
		return nil, err
	}
	r := scopeRel{name: t.Alias, cols: sp.Table.Schema.Columns}
	if r.name == "" {
		r.name, r.db = sp.Table.Path.Table, sp.Table.Path.Database
		if sp.Virtual != "" {
			// `t$changelog` is named by what was written.
			r.name = t.Table.Table
		}
	}
	if err := fb.addRel(r); err != nil {
		return nil, err
	}
	return &ScanRel{Plan: sp, Name: r.name, Offset: fb.scope.rels[len(fb.scope.rels)-1].offset}, nil
}

func (fb *fromBinder) derived(d *FromSelect) (Relation, error) {
	var inner *SelectPlan
	var err error
	if d.Compound != nil {
		var cp *CompoundPlan
		if cp, err = BindCompound(fb.ctx, d.Compound, fb.cat, fb.currentDB, fb.args); err == nil {
			inner = compoundRows(cp)
		}
	} else {
		// expandNames has expanded the names below already.
		inner, err = bindSelectRules(fb.ctx, d.Select, fb.cat, fb.currentDB, fb.args, rules)
	}
	if err != nil {
		if d.View != (metadata.TablePath{}) {
			return nil, &ViewQueryError{View: d.View, Err: err}
		}
		return nil, err
	}
	if d.Columns != nil && len(d.Columns) != len(inner.Output) {
		err := errorf(metadata.ErrInvalidValue, "%s names %d columns but its query returns %d", quoteIdent(d.Alias), len(d.Columns), len(inner.Output))
		if d.View != (metadata.TablePath{}) {
			return nil, &ViewQueryError{View: d.View, Err: err}
		}
		return nil, atName(d.Alias, err)
	}
	cols := make([]metadata.Column, len(inner.Output))
	for i, o := range inner.Output {
		name := o.Name
		if d.Columns != nil {
			name = d.Columns[i]
		}
		for _, prev := range cols[:i] {
			if strings.EqualFold(prev.Name, name) {
				return nil, atName(d.Alias, errorf(metadata.ErrInvalidValue, "derived table %s has two columns named %s; give one an alias", quoteIdent(d.Alias), quoteIdent(name)))
			}
		}
		t := o.Expr.Type()
		if t.Root == 0 {
			t = metadata.StringType()
		}
		cols[i] = metadata.Column{Name: name, Type: t}
	}
	if err := fb.addRel(scopeRel{name: d.Alias, cols: cols}); err != nil {
		return nil, err
	}
	return &DerivedRel{Plan: inner, Name: d.Alias, Offset: fb.scope.rels[len(fb.scope.rels)-1].offset}, nil
}

func (fb *fromBinder) join(j *FromJoin) (Relation, error) {
	first := len(fb.scope.rels)
	under := fb.underNulls
	fb.underNulls = under || j.Kind == JoinRight
	l, err := fb.bind(j.L)
	if err != nil {
		return nil, err
	}
	mid := len(fb.scope.rels)
	fb.underNulls = under || j.Kind == JoinLeft
	r, err := fb.bind(j.R)
	fb.underNulls = under
	if err != nil {
		return nil, err
	}
	out := &JoinRel{Kind: j.Kind, L: l, R: r}
	if out.Kind == JoinCross {
		out.Kind = JoinInner
	}
	// The side an outer join may extend with NULLs becomes nullable for
	// everything above it.
	var extended Relation
	switch out.Kind {
	case JoinLeft:
		extended = r
	case JoinRight:
		extended = l
	}
	if extended != nil {
		for _, sp := range extended.Spans() {
			for i := sp.Offset; i < sp.Offset+sp.Width; i++ {
				fb.scope.columns[i].NotNull = false
			}
		}
	}
	// The condition sees only the tables of this join.
	local := &scope{rels: fb.scope.rels[first:], hidden: fb.scope.hidden, columns: fb.scope.columns}
	using := j.Using
	if j.Natural {
		using = naturalColumns(fb.scope.rels[first:mid], fb.scope.rels[mid:], fb.scope.hidden)
	}
	merged := map[int]bool{}
	for _, name := range using {
		li, err := sideColumn(fb.scope, fb.scope.rels[first:mid], name, "left")
		if err != nil {
			return nil, err
		}
		ri, err := sideColumn(fb.scope, fb.scope.rels[mid:], name, "right")
		if err != nil {
			return nil, err
		}
		lc, rc := fb.scope.columns[li], fb.scope.columns[ri]
		lref := &ColumnRef{Name: lc.Name, Qualifier: fb.scope.relOf(li), Index: li, T: lc.Type}
		rref := &ColumnRef{Name: rc.Name, Qualifier: fb.scope.relOf(ri), Index: ri, T: rc.Type}
		if err := checkComparable(lref, rref); err != nil {
			return nil, err
		}
		out.Cond = append(out.Cond, &Compare{Op: OpEq, L: lref, R: rref})
		// The merged column is the preserved side's: the left one, or the
		// right one of a RIGHT JOIN.
		if out.Kind == JoinRight {
			fb.scope.hidden[li] = true
			merged[ri] = true
		} else {
			fb.scope.hidden[ri] = true
			merged[li] = true
		}
	}
	fb.joinStar(out, merged)
	if j.On != nil {
		b := &binder{args: fb.args, currentDB: fb.currentDB, ctx: fb.ctx, clause: inOn, scope: local,
			table: &metadata.TableInfo{Schema: metadata.Schema{Columns: fb.scope.columns}}, cat: fb.cat, outer: fb.outer}
		on, err := b.bindCondition(j.On)
		if err != nil {
			return nil, err
		}
		for _, c := range Conjuncts(on) {
			// An outer join's condition runs no subquery: one over the
			// extended side alone filters that side first (see
			// placeOnSubqueries); one that reads the preserved side
			// would decide which of its rows match.
			extended := out.R
			if out.Kind == JoinRight {
				extended = out.L
			}
			switch {
			case !hasSubquery(c):
			case out.Kind != JoinInner && !within(c, extended):
				return nil, unsupported("a subquery in the ON of an outer join that reads its preserved side (%s)", c)
			case out.Kind == JoinInner && fb.underNulls && !within(c, out.L) && !within(c, out.R):
				// It cannot move to WHERE from under an outer join.
				return nil, unsupported("a subquery in the ON of a join inside an outer join that reads both its sides (%s)", c)
			}
		}
		out.Cond = append(out.Cond, Conjuncts(on)...)
	}
	return out, nil
}

// starOrder returns the combined indexes that * expands to over rel.
// Over a join by USING or NATURAL, MySQL (and SQL:2003) lists the merged
// columns first, in the order of the first table (the right one of a
// RIGHT JOIN, which MySQL reads as a LEFT JOIN the other way round), then
// the first table's other columns, then the second's; over any other
// join, the left side's columns, then the right's.
func (fb *fromBinder) starOrder(rel Relation) []int {
	if j, ok := rel.(*JoinRel); ok {
		return fb.stars[j]
	}
	var out []int
	for _, sp := range rel.Spans() {
		for i := sp.Offset; i < sp.Offset+sp.Width; i++ {
			out = append(out, i)
		}
	}
	return out
}

// joinStar records the * order of a join; merged holds the combined
// index kept for each USING or NATURAL column.
func (fb *fromBinder) joinStar(j *JoinRel, merged map[int]bool) {
	first, second := fb.starOrder(j.L), fb.starOrder(j.R)
	if j.Kind == JoinRight && len(merged) > 0 {
		first, second = second, first
	}
	out := make([]int, 0, len(first)+len(second))
	for _, i := range first {
		if merged[i] {
			out = append(out, i)
		}
	}
	for _, side := range [][]int{first, second} {
		for _, i := range side {
			if !merged[i] && !fb.scope.hidden[i] {
				out = append(out, i)
			}
		}
	}
	if fb.stars == nil {
		fb.stars = map[*JoinRel][]int{}
	}
	fb.stars[j] = out
}

// naturalColumns are the names the two sides of a NATURAL join share.
func naturalColumns(left, right []scopeRel, hidden map[int]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range left {
		for ci, c := range l.cols {
			key := strings.ToLower(c.Name)
			if hidden[l.offset+ci] || seen[key] {
				continue
			}
			for _, r := range right {
				for rj, rc := range r.cols {
					if !hidden[r.offset+rj] && strings.EqualFold(rc.Name, c.Name) && !seen[key] {
						seen[key] = true
						out = append(out, c.Name)
					}
				}
			}
		}
	}
	return out
}

// sideColumn resolves a USING column on one side of a join.
func sideColumn(all *scope, side []scopeRel, name, which string) (int, error) {
	s := &scope{rels: side, hidden: all.hidden, columns: all.columns}
	i, _, err := s.lookup("", name)
	if err != nil {
		return -1, err
	}
	if i < 0 {
		return -1, atName(name, errorf(metadata.ErrNotFound, "USING column %s is not in the %s side of the join (%s)", quoteIdent(name), which, s.names()))
	}
	return i, nil
}

// expandScopeStar expands * or t.* over a FROM tree: every column of
// every relation in the order of scope.star (a column USING merged into
// the other side's once), or every column of t.
func (b *binder) expandScopeStar(it SelectItem, plan *SelectPlan) error {
	if it.Qualifier != "" && !b.scope.hasQualifier(it.Qualifier) {
		return atName(it.Qualifier, errorf(metadata.ErrNotFound, "table %s in %s.* is not in FROM (%s)", it.Qualifier, it.Qualifier, b.scope.names()))
	}
	if it.Qualifier == "" && b.scope.star != nil {
		for _, idx := range b.scope.star {
			c := b.scope.columns[idx]
			plan.Output = append(plan.Output, OutputColumn{Name: c.Name, Expr: &ColumnRef{Name: c.Name, Qualifier: b.scope.relOf(idx), Index: idx, T: c.Type}})
		}
		return nil
	}
	for _, r := range b.scope.rels {
		if it.Qualifier != "" && !r.matches(it.Qualifier) {
			continue
		}
		for ci := range r.cols {
			idx := r.offset + ci
			if it.Qualifier == "" && b.scope.hidden[idx] {
				continue
			}
			c := b.scope.columns[idx]
			plan.Output = append(plan.Output, OutputColumn{Name: c.Name, Expr: &ColumnRef{Name: c.Name, Qualifier: r.name, Index: idx, T: c.Type}})
		}
	}
	return nil
}

// scopeColumn resolves a column over a FROM tree; alias finds an output
// alias for the clauses that look at them after the tables.
func (b *binder) scopeColumn(c *ColumnRef, alias func() Expr) (Expr, error) {
	if c.Qualifier != "" && !b.scope.hasQualifier(c.Qualifier) {
		return nil, atName(c.Qualifier, errorf(metadata.ErrNotFound, "table %s of column %s.%s is not in FROM (%s)", c.Qualifier, c.Qualifier, c.Name, b.scope.names()))
	}
	i, col, err := b.scope.lookup(c.Qualifier, c.Name)
	if err != nil {
		return nil, err
	}
	if i >= 0 {
		q := c.Qualifier
		if q == "" {
			q = b.scope.relOf(i)
		}
		return &ColumnRef{Name: col.Name, Qualifier: q, Index: i, T: col.Type}, nil
	}
	if b.clause == inGroupBy || b.clause == inHaving {
		if e := alias(); e != nil {
			return e, nil
		}
	}
	if c.Qualifier != "" {
		return nil, atName(c.Qualifier+"."+c.Name, errorf(metadata.ErrNotFound, "column %s.%s does not exist", c.Qualifier, quoteIdent(c.Name)))
	}
	return nil, atName(c.Name, errorf(metadata.ErrNotFound, "column %s does not exist in %s", quoteIdent(c.Name), b.scope.names()))
}
