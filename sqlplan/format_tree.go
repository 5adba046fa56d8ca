package sqlplan

import (
	"fmt"
	"strings"
)

// FormatTree renders a bound query as a plan tree, one node a line and
// each node's inputs indented two spaces below it, top down: Limit,
// Sort (or TopN), Distinct, Project, Filter (HAVING), Aggregate, Filter
// (WHERE), then the FROM tree. leaf renders the read of one table (a
// plan without FROM tree); its lines are indented as a node's.
func FormatTree(sp *SelectPlan, leaf func(*SelectPlan) []string) []string {
	return FormatTreeNotes(sp, leaf, nil)
}

// FormatTreeNotes is FormatTree with a note (EXPLAIN ANALYZE's rows and
// time) after the first line of each node: note is called with each
// Relation of the FROM tree, with sp itself for its top line, and, for a
// set operation, with each *CompoundPlan and each SELECT below it. note
// may be nil.
func FormatTreeNotes(sp *SelectPlan, leaf func(*SelectPlan) []string, note func(node any) string) []string {
	if note == nil {
		note = func(any) string { return "" }
	}
	var lines []string
	depth := 0
	node := func(format string, args ...any) {
		lines = append(lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
		depth++
	}
	if sp.Compound != nil {
		return FormatCompoundNotes(sp.Compound, func(s *SelectPlan) []string { return FormatTreeNotes(s, leaf, note) }, note)
	}
	if sp.Source == nil {
		lines := leaf(sp)
		if len(lines) > 0 {
			lines[0] += note(sp)
		}
		return lines
	}
	switch {
	case len(sp.OrderBy) > 0 && sp.Limit >= 0:
		node("TopN: %d by %s%s", sp.Limit+sp.Offset, orderList(sp.OrderBy), offsetNote(sp.Offset))
	case sp.Limit >= 0 || sp.Offset > 0:
		node("Limit: %d%s", sp.Limit, offsetNote(sp.Offset))
	}
	if len(sp.OrderBy) > 0 && sp.Limit < 0 {
		node("Sort: %s", orderList(sp.OrderBy))
	}
	if sp.Distinct {
		node("Distinct")
	}
	outs := make([]string, len(sp.Output))
	for i, o := range sp.Output {
		outs[i] = Qualified(o.Expr)
	}
	node("Project: %s", strings.Join(outs, ", "))
	if sp.Having != nil {
		node("Filter: %s", Qualified(sp.Having))
	}
	if len(sp.GroupBy) > 0 || sp.Having != nil || hasAggregateOutput(sp) {
		keys := make([]string, len(sp.GroupBy))
		for i, g := range sp.GroupBy {
			keys[i] = Qualified(g)
		}
		node("Aggregate: [GroupBy: %s]", strings.Join(keys, ", "))
	}
	if sp.Where != nil {
		node("Filter: %s", Qualified(sp.Where))
	}
	if len(lines) > 0 {
		lines[0] += note(sp)
	}
	for _, l := range formatRelation(sp.Source, leaf, note) {
		lines = append(lines, strings.Repeat("  ", depth)+l)
	}
	return lines
}

func offsetNote(n int64) string {
	if n > 0 {
		return fmt.Sprintf(" offset %d", n)
	}
	return ""
}

func orderList(items []OrderItem) string {
	parts := make([]string, len(items))
	for i, o := range items {
		parts[i] = Qualified(o.Expr)
		if o.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

// hasAggregateOutput reports whether an output or ORDER BY key calls an
// aggregate function.
func hasAggregateOutput(sp *SelectPlan) bool {
	found := false
	visit := func(e Expr) {
		Walk(e, func(x Expr) bool {
			if f, ok := x.(*Func); ok && aggregates[f.Name] {
				found = true
			}
			return !found
		})
	}
	for _, o := range sp.Output {
		visit(o.Expr)
	}
	for _, o := range sp.OrderBy {
		visit(o.Expr)
	}
	return found
}

func formatRelation(rel Relation, leaf func(*SelectPlan) []string, note func(any) string) []string {
	indent := func(ls []string) []string {
		for i := range ls {
			ls[i] = "  " + ls[i]
		}
		return ls
	}
	switch r := rel.(type) {
	case *ScanRel:
		lines := leaf(r.Plan)
		if len(lines) > 0 {
			lines[0] += note(r)
		}
		return lines
	case *DerivedRel:
		head := "Derived: " + quoteIdent(r.Name)
		if r.Text != "" {
			head = "Subquery: " + quoteIdent(r.Name) + " (" + r.Text + ")"
		}
		return append([]string{head + note(r)}, indent(FormatTree(r.Plan, leaf))...)
	case *JoinRel:
		var b strings.Builder
		algo := "NestedLoopJoin"
		if len(r.LeftKeys) > 0 {
			algo = "HashJoin"
		}
		kind := map[JoinKind]string{JoinInner: "inner", JoinLeft: "left", JoinRight: "right",
			JoinSemi: "semi", JoinAnti: "anti", JoinAntiNullAware: "null-aware anti"}[r.Kind]
		b.WriteString(algo + ": " + kind)
		if len(r.LeftKeys) > 0 {
			keys := make([]string, len(r.LeftKeys))
			for i := range r.LeftKeys {
				op := " = "
				if r.NullSafe[i] {
					op = " <=> "
				}
				keys[i] = Qualified(r.LeftKeys[i]) + op + Qualified(r.RightKeys[i])
			}
			b.WriteString(" [Keys: " + strings.Join(keys, ", ") + "]")
		}
		if len(r.Cond) > 0 {
			conds := make([]string, len(r.Cond))
			for i, c := range r.Cond {
				conds[i] = Qualified(c)
			}
			b.WriteString(" [Cond: " + strings.Join(conds, " AND ") + "]")
		}
		lines := []string{b.String() + note(r)}
		lines = append(lines, indent(formatRelation(r.L, leaf, note))...)
		return append(lines, indent(formatRelation(r.R, leaf, note))...)
	}
	return []string{fmt.Sprintf("%T", rel)}
}
