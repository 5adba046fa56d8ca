package sqlplan

import (
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// FromItem is one relation of a FROM clause that is more than one plain
// table: a table, a derived table or a join of two items. A SELECT of one
// plain table keeps it in Select.Table instead, so the single-table path
// reads it as before.
type FromItem interface {
	String() string
	isFromItem()
}

// FromTable is a table (or virtual table) named in FROM.
type FromTable struct {
	Table metadata.TablePath
	Alias string
}

// FromSelect is a derived table: FROM (SELECT ...) AS alias. MySQL
// requires the alias; so does fluss.
type FromSelect struct {
	Select *Select
	// Compound is set instead of Select for (SELECT ... UNION SELECT ...).
	Compound *Compound
	Alias    string
	// Columns rename the query's output columns, in order; nil keeps
	// their names. Binding sets them for a common table expression or a
	// view with a column list (the parser reads no column list here).
	Columns []string
	// View is the view this derived table expands, for errors; zero for
	// a derived table written as one or a common table expression.
	View metadata.TablePath
}

// JoinKind is the kind of a join in FROM.
type JoinKind uint8

const (
	// JoinCross is a comma list or CROSS JOIN: every pair of rows (an ON
	// condition makes it an inner join, as MySQL reads JOIN ... ON).
	JoinCross JoinKind = iota + 1
	JoinInner
	JoinLeft
	JoinRight
)

func (k JoinKind) String() string {
	switch k {
	case JoinCross:
		return "CROSS JOIN"
	case JoinInner:
		return "JOIN"
	case JoinLeft:
		return "LEFT JOIN"
	case JoinRight:
		return "RIGHT JOIN"
	case JoinSemi:
		return "SEMI JOIN"
	case JoinAnti:
		return "ANTI JOIN"
	case JoinAntiNullAware:
		return "NULL-AWARE ANTI JOIN"
	}
	return "JOIN?"
}

// FromJoin is L kind R [ON cond | USING (cols)], or NATURAL kind.
type FromJoin struct {
	Kind    JoinKind
	L, R    FromItem
	On      Expr
	Using   []string
	Natural bool
	// Comma is true for an item of a comma list, so the text reads back as
	// it was written.
	Comma bool
}

func (*FromTable) isFromItem()  {}
func (*FromSelect) isFromItem() {}
func (*FromJoin) isFromItem()   {}

func (f *FromTable) String() string {
	s := quotePath(f.Table)
	if f.Alias != "" {
		s += " AS " + quoteIdent(f.Alias)
	}
	return s
}

func (f *FromSelect) String() string {
	var s string
	if f.Compound != nil {
		s = "(" + f.Compound.String() + ") AS " + quoteIdent(f.Alias)
	} else {
		s = "(" + f.Select.String() + ") AS " + quoteIdent(f.Alias)
	}
	if f.Columns != nil {
		s += " (" + quoteIdents(f.Columns) + ")"
	}
	return s
}

func (f *FromJoin) String() string {
	r := f.R.String()
	if _, nested := f.R.(*FromJoin); nested {
		r = "(" + r + ")"
	}
	if f.Comma {
		return f.L.String() + ", " + r
	}
	var b strings.Builder
	l := f.L.String()
	if lj, ok := f.L.(*FromJoin); ok && lj.Comma {
		// A comma binds looser than JOIN.
		l = "(" + l + ")"
	}
	b.WriteString(l)
	b.WriteString(" ")
	if f.Natural {
		b.WriteString("NATURAL ")
	}
	b.WriteString(f.Kind.String())
	b.WriteString(" ")
	b.WriteString(r)
	switch {
	case f.On != nil:
		b.WriteString(" ON " + f.On.String())
	case len(f.Using) > 0:
		b.WriteString(" USING (" + quoteIdents(f.Using) + ")")
	}
	return b.String()
}

// fromExprs lists the expressions of a FROM tree (ON conditions and the
// clauses of derived tables), for counting placeholders.
func fromExprs(f FromItem) []Expr {
	switch x := f.(type) {
	case *FromSelect:
		if x.Compound != nil {
			return x.Compound.exprs()
		}
		return x.Select.exprs()
	case *FromJoin:
		return append(append(fromExprs(x.L), fromExprs(x.R)...), x.On)
	}
	return nil
}
