package sqlplan

import (
	"sort"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Select is a single-table SELECT, converted from xwb1989/sqlparser's AST.
// Names are not resolved yet; BindSelect resolves them into a SelectPlan.
type Select struct {
	// Table is the table read; Database is "" when the name is unqualified.
	// Virtual tables keep their suffix verbatim (`t$changelog`);
	// BindSelect resolves them.
	Table metadata.TablePath
	// Alias is the table's alias in FROM t AS x; "" if none.
	Alias string
	// From is false for a SELECT without FROM (SELECT 1, SELECT VERSION()).
	From bool
	// FromTree is the FROM clause when it is more than one plain table
	// (joins, comma lists, derived tables); Table and Alias are then
	// unset.
	FromTree FromItem
	Distinct bool
	Items    []SelectItem
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	OrderBy  []OrderItem
	// Limit and Offset are nil when absent; either may be a Param.
	Limit, Offset Expr
	// Hints are the key-value pairs of SELECT /*+ OPTIONS('k'='v') */.
	Hints map[string]string
	// With are the common table expressions of WITH ... SELECT; nil
	// without WITH.
	With []CTE
	// Lock is the locking clause that ends the statement (FOR UPDATE,
	// LOCK IN SHARE MODE, FOR SHARE); a subquery has none.
	Lock LockMode
}

// SelectItem is one entry of the select list.
type SelectItem struct {
	Expr  Expr
	Alias string
	// Star is * (Expr is nil); Qualifier is t in t.*.
	Star      bool
	Qualifier string
	// Text is the expression as the parser printed it, used to name an
	// unaliased output column that is not a bare column reference.
	Text string
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr
	Desc bool
}

// Insert is INSERT INTO t [(cols)] VALUES (...), ... or INSERT INTO t
// [(cols)] SELECT ...; exactly one of Rows, Select and Compound (a query
// with set operations) is set.
type Insert struct {
	Table    metadata.TablePath
	Columns  []string
	Rows     [][]Expr
	Select   *Select
	Compound *Compound
	// OnDup is MySQL's ON DUPLICATE KEY UPDATE; nil without it.
	OnDup *OnDuplicate
}

// OnDuplicate is ON DUPLICATE KEY UPDATE in the forms that mean an
// upsert: col = VALUES(col) takes the inserted value, col = col keeps the
// stored one. A primary-key table upserts anyway; the clause only decides
// which inserted columns an existing key takes.
type OnDuplicate struct {
	// Update lists the columns set from the inserted row, Keep the
	// columns assigned themselves, in the order written.
	Update, Keep []string
	// Set are the columns assigned a constant (a literal or placeholder:
	// GORM's updated_at = ?), which an existing key takes.
	Set []Assignment
}

func (s *Select) exprs() []Expr {
	es := withExprs(s.With)
	for _, it := range s.Items {
		es = append(es, it.Expr)
	}
	es = append(es, s.Where, s.Having, s.Limit, s.Offset)
	es = append(es, s.GroupBy...)
	for _, o := range s.OrderBy {
		es = append(es, o.Expr)
	}
	if s.FromTree != nil {
		es = append(es, fromExprs(s.FromTree)...)
	}
	return es
}

// NumInput counts the placeholders of the query.
func (s *Select) NumInput() int { return countInputs(s.exprs()...) }

// NumInput counts the placeholders of the rows or the query.
func (s *Insert) NumInput() int {
	var es []Expr
	for _, r := range s.Rows {
		es = append(es, r...)
	}
	if s.OnDup != nil {
		for _, a := range s.OnDup.Set {
			es = append(es, a.Expr)
		}
	}
	if s.Select != nil {
		es = append(es, s.Select.exprs()...)
	}
	if s.Compound != nil {
		es = append(es, s.Compound.exprs()...)
	}
	return countInputs(es...)
}

func (s *Select) String() string {
	var b strings.Builder
	b.WriteString(formatWith(s.With))
	b.WriteString("SELECT ")
	if len(s.Hints) > 0 {
		keys := make([]string, 0, len(s.Hints))
		for k := range s.Hints {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = quoteString(k) + "=" + quoteString(s.Hints[k])
		}
		b.WriteString("/*+ OPTIONS(" + strings.Join(keys, ", ") + ") */ ")
	}
	if s.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case it.Star && it.Qualifier != "":
			b.WriteString(quoteIdent(it.Qualifier) + ".*")
		case it.Star:
			b.WriteString("*")
		default:
			b.WriteString(it.Expr.String())
		}
		if it.Alias != "" {
			b.WriteString(" AS " + quoteIdent(it.Alias))
		}
	}
	switch {
	case s.FromTree != nil:
		b.WriteString(" FROM " + s.FromTree.String())
	case s.From:
		b.WriteString(" FROM " + quotePath(s.Table))
		if s.Alias != "" {
			b.WriteString(" AS " + quoteIdent(s.Alias))
		}
	}
	if s.Where != nil {
		b.WriteString(" WHERE " + s.Where.String())
	}
	if len(s.GroupBy) > 0 {
		b.WriteString(" GROUP BY " + joinExprs(s.GroupBy))
	}
	if s.Having != nil {
		b.WriteString(" HAVING " + s.Having.String())
	}
	if len(s.OrderBy) > 0 {
		b.WriteString(" ORDER BY ")
		for i, o := range s.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(o.Expr.String())
			if o.Desc {
				b.WriteString(" DESC")
			}
		}
	}
	if s.Limit != nil {
		b.WriteString(" LIMIT " + s.Limit.String())
	}
	if s.Offset != nil {
		b.WriteString(" OFFSET " + s.Offset.String())
	}
	if s.Lock != LockNone {
		b.WriteString(" " + s.Lock.String())
	}
	return b.String()
}

func (s *Insert) String() string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + quotePath(s.Table))
	if len(s.Columns) > 0 {
		b.WriteString(" (" + quoteIdents(s.Columns) + ")")
	}
	switch {
	case s.Select != nil:
		b.WriteString(" " + s.Select.String())
	case s.Compound != nil:
		b.WriteString(" " + s.Compound.String())
	default:
		b.WriteString(" VALUES ")
		for i, r := range s.Rows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + joinExprs(r) + ")")
		}
	}
	if s.OnDup != nil {
		b.WriteString(" ON DUPLICATE KEY UPDATE ")
		var sets []string
		for _, c := range s.OnDup.Update {
			sets = append(sets, quoteIdent(c)+" = VALUES("+quoteIdent(c)+")")
		}
		for _, c := range s.OnDup.Keep {
			sets = append(sets, quoteIdent(c)+" = "+quoteIdent(c))
		}
		for _, a := range s.OnDup.Set {
			sets = append(sets, quoteIdent(a.Column)+" = "+a.Expr.String())
		}
		b.WriteString(strings.Join(sets, ", "))
	}
	return b.String()
}

func joinExprs(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}
