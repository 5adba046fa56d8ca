package sqlplan

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Relation is a node of a bound FROM tree, the logical plan below the
// select list (DESIGN §9). Relations are inert: no file, goroutine or
// context. Every column of a FROM tree has one index in the query's
// combined column space, leaves in FROM order; the expressions of a
// query over a FROM tree refer to columns by that index, and each leaf
// owns the range [Offset, Offset+Width).
type Relation interface {
	// Spans are the combined index ranges of the leaves below the node,
	// each its first index and its number of columns. The join-order rule
	// may reorder leaves, so a join's columns need not be contiguous.
	Spans() []Span
	isRelation()
}

// Span is the combined index range of one leaf's columns.
type Span struct{ Offset, Width int }

// Covers reports whether combined index i is a column below rel.
func Covers(rel Relation, i int) bool {
	switch r := rel.(type) {
	case *ScanRel:
		return i >= r.Offset && i < r.Offset+len(r.Plan.Table.Schema.Columns)
	case *DerivedRel:
		return i >= r.Offset && i < r.Offset+len(r.Plan.Output)
	case *JoinRel:
		return Covers(r.L, i) || Covers(r.R, i)
	}
	return false
}

// ScanRel reads one table (or virtual table) through the single-table
// path: a point lookup or the table's split planner.
type ScanRel struct {
	// Plan is the single-table read. Its Table is the table read; its
	// Output lists the columns the query needs from it (ColumnRefs over
	// the table's schema, in schema order); Where holds the conjuncts the
	// optimizer pushed to it, over the table's schema.
	Plan *SelectPlan
	// Name is how the query names the table: its alias, else its name.
	Name   string
	Offset int
}

// DerivedRel is a derived table, FROM (SELECT ...) AS name: the rows of a
// bound query, whose outputs are its columns.
type DerivedRel struct {
	Plan   *SelectPlan
	Name   string
	Offset int
	// Text is the subquery as written when the derived table is the
	// inner query of a semi- or anti-join (see semiJoins); "" otherwise.
	Text string
}

// JoinRel joins two relations. Its rows hold the columns of L and R.
type JoinRel struct {
	// Kind is JoinInner (a cross join is an inner join without
	// condition), JoinLeft, JoinRight, or one of the semi- and anti-joins
	// the optimizer makes of a subquery (JoinSemi, JoinAnti,
	// JoinAntiNullAware), whose rows hold the columns of L only.
	Kind JoinKind
	L, R Relation
	// LeftKeys[i] = RightKeys[i] are the equalities of the condition
	// between an expression over L only and one over R only; NullSafe[i]
	// is true for <=>, which matches NULL with NULL.
	LeftKeys, RightKeys []Expr
	NullSafe            []bool
	// Cond are the condition's other conjuncts, over the columns of L and
	// R. For an outer join they decide which rows match; a row of the
	// preserved side that matches nothing is kept with NULLs.
	Cond []Expr
	// Keep, set by prune-columns, are the combined columns of the join's
	// rows that something above it reads, ascending; nil: all of them.
	// The join's own keys are often not among them.
	Keep []int
}

func (r *ScanRel) Spans() []Span    { return []Span{{r.Offset, len(r.Plan.Table.Schema.Columns)}} }
func (r *DerivedRel) Spans() []Span { return []Span{{r.Offset, len(r.Plan.Output)}} }
func (r *JoinRel) Spans() []Span    { return append(r.L.Spans(), r.R.Spans()...) }

func (*ScanRel) isRelation()    {}
func (*DerivedRel) isRelation() {}
func (*JoinRel) isRelation()    {}

// scopeRel is one leaf of a FROM tree as name resolution sees it.
type scopeRel struct {
	// name is the alias, else the table's name; db is the table's
	// database when there is no alias ("" otherwise), for db.t.col.
	name, db string
	offset   int
	cols     []metadata.Column
}

// scope resolves the names of a query over a FROM tree.
type scope struct {
	rels []scopeRel
	// hidden are the combined indexes that USING and NATURAL merged into
	// a column of the other side: unqualified names and * skip them.
	hidden map[int]bool
	// columns is the combined schema, a column nullable where an outer
	// join may extend it with NULLs.
	columns []metadata.Column
	// star lists the combined indexes * expands to, in MySQL's order: a
	// join by USING or NATURAL gives its merged columns first (see
	// fromBinder.starOrder). Nil for a plain table.
	star []int
}

func (r *scopeRel) matches(q string) bool {
	if strings.EqualFold(q, r.name) {
		return true
	}
	return r.db != "" && strings.EqualFold(q, r.db+"."+r.name)
}

// lookup resolves a column name, qualified or not, to its combined index
// and column; the index is -1 when no relation has it.
func (s *scope) lookup(qualifier, name string) (int, metadata.Column, error) {
	found := -1
	var where []string
	for i := range s.rels {
		r := &s.rels[i]
		if qualifier != "" && !r.matches(qualifier) {
			continue
		}
		for ci, c := range r.cols {
			if !strings.EqualFold(c.Name, name) {
				continue
			}
			idx := r.offset + ci
			if qualifier == "" && s.hidden[idx] {
				continue
			}
			if found < 0 {
				found = idx
			}
			where = append(where, r.name)
			break
		}
	}
	switch {
	case len(where) > 1:
		return -1, metadata.Column{}, atName(name, errorf(metadata.ErrInvalidValue,
			"column %s is ambiguous: %s have it; qualify it, as in %s.%s",
			quoteIdent(name), strings.Join(where, " and "), quoteIdent(where[0]), quoteIdent(name)))
	case found < 0:
		return -1, metadata.Column{}, nil
	}
	return found, s.columns[found], nil
}

// hasQualifier reports whether some relation is named q.
func (s *scope) hasQualifier(q string) bool {
	for i := range s.rels {
		if s.rels[i].matches(q) {
			return true
		}
	}
	return false
}

func (s *scope) names() string {
	var out []string
	for _, r := range s.rels {
		out = append(out, r.name)
	}
	return strings.Join(out, ", ")
}

// relOf names the relation that holds combined index i.
func (s *scope) relOf(i int) string {
	for _, r := range s.rels {
		if i >= r.offset && i < r.offset+len(r.cols) {
			return r.name
		}
	}
	return ""
}

// Leaves are the single-table plans a query reads: its own when it has
// no FROM tree, else those of every table and derived table below it, in
// FROM order.
func Leaves(sp *SelectPlan) []*SelectPlan {
	if sp.Compound != nil {
		var out []*SelectPlan
		for _, s := range sp.Compound.Selects() {
			out = append(out, Leaves(s)...)
		}
		return out
	}
	if sp.Source == nil {
		return []*SelectPlan{sp}
	}
	var out []*SelectPlan
	var walk func(Relation)
	walk = func(rel Relation) {
		switch r := rel.(type) {
		case *ScanRel:
			out = append(out, r.Plan)
		case *DerivedRel:
			out = append(out, Leaves(r.Plan)...)
		case *JoinRel:
			walk(r.L)
			walk(r.R)
		}
	}
	walk(sp.Source)
	return out
}
