package sqlplan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// ViewCatalog is the part of a Catalog that knows views. A Catalog
// without it has none: every name in FROM is a table.
type ViewCatalog interface {
	// View returns the view of a path; ok is false when the path names no
	// view (a table, or nothing).
	View(ctx context.Context, path metadata.TablePath) (v metadata.ViewInfo, ok bool, err error)
}

// maxViewDepth bounds views over views. A cycle (v1 over v2 over v1,
// which CREATE OR REPLACE VIEW can make) is found before it.
const maxViewDepth = 32

// expandNames returns s with each name in FROM that stands for a common
// table expression in scope or for a view replaced by a derived table of
// its query, so that the binder sees derived tables only. A common table
// expression is in scope in the query after it, in the common table
// expressions after it and in every derived table below them; a view's
// query is parsed again from its stored text and its unqualified names
// resolve in the database it was created from. s is never changed: a
// prepared statement shares it between executions.
func expandNames(ctx context.Context, s *Select, cat Catalog, currentDB string) (*Select, error) {
	views, _ := cat.(ViewCatalog)
	if len(s.With) == 0 && views == nil {
		return s, nil
	}
	if currentDB == "" {
		currentDB = metadata.DefaultDatabase
	}
	x := &expander{ctx: ctx, views: views, currentDB: currentDB}
	return x.selectStmt(s, nil, "")
}

// expandCompound is expandNames for a set operation, whose WITH is in
// scope in each of its SELECTs.
func expandCompound(ctx context.Context, c *Compound, cat Catalog, currentDB string) (*Compound, error) {
	views, _ := cat.(ViewCatalog)
	if len(c.With) == 0 && views == nil {
		return c, nil
	}
	if currentDB == "" {
		currentDB = metadata.DefaultDatabase
	}
	x := &expander{ctx: ctx, views: views, currentDB: currentDB}
	return x.compound(c, nil, "")
}

// with expands the common table expressions of a WITH, each in the scope
// of those before it, and returns the scope they make.
func (x *expander) with(ctes []CTE, scope *cteScope, db string) (*cteScope, error) {
	for _, c := range ctes {
		e := CTE{Name: c.Name, Columns: c.Columns}
		var err error
		if c.Compound != nil {
			e.Compound, err = x.compound(c.Compound, scope, db)
		} else {
			e.Select, err = x.selectStmt(c.Select, scope, db)
		}
		if err != nil {
			return nil, err
		}
		scope = &cteScope{parent: scope, cte: e}
	}
	return scope, nil
}

type expander struct {
	ctx   context.Context
	views ViewCatalog
	// currentDB is the connection's database, where a name outside any
	// view is looked up.
	currentDB string
	// stack holds the views being expanded, innermost last.
	stack []metadata.TablePath
}

// cteScope is the common table expressions visible at a point of the
// query, innermost first.
type cteScope struct {
	parent *cteScope
	cte    CTE // its Select already expanded
}

func (sc *cteScope) find(name string) (CTE, bool) {
	for ; sc != nil; sc = sc.parent {
		if strings.EqualFold(sc.cte.Name, name) {
			return sc.cte, true
		}
	}
	return CTE{}, false
}

// selectStmt expands s. db is the database unqualified table names
// resolve in when it is not the connection's (inside a view), "" else.
func (x *expander) selectStmt(s *Select, scope *cteScope, db string) (*Select, error) {
	out := *s
	out.With = nil
	scope, err := x.with(s.With, scope, db)
	if err != nil {
		return nil, err
	}
	if selectHasSubquery(s) {
		if err := x.subqueries(&out, scope, db); err != nil {
			return nil, err
		}
	}
	switch {
	case s.FromTree != nil:
		tree, err := x.fromItem(s.FromTree, scope, db)
		if err != nil {
			return nil, err
		}
		out.FromTree = tree
	case s.From:
		item, err := x.fromItem(&FromTable{Table: s.Table, Alias: s.Alias}, scope, db)
		if err != nil {
			return nil, err
		}
		if t, ok := item.(*FromTable); ok {
			out.Table, out.Alias = t.Table, t.Alias
			break
		}
		out.Table, out.Alias, out.FromTree = metadata.TablePath{}, "", item
	}
	return &out, nil
}

// selectHasSubquery reports whether a clause of s outside FROM holds a
// subquery.
func selectHasSubquery(s *Select) bool {
	for _, it := range s.Items {
		if hasSubquery(it.Expr) {
			return true
		}
	}
	for _, o := range s.OrderBy {
		if hasSubquery(o.Expr) {
			return true
		}
	}
	for _, g := range s.GroupBy {
		if hasSubquery(g) {
			return true
		}
	}
	return hasSubquery(s.Where) || hasSubquery(s.Having)
}

// subqueries expands the inner queries of the subqueries in out's
// clauses, in the scope of out's common table expressions: a name there
// may be one of them or a view. out is a copy whose slices are replaced,
// never written through.
func (x *expander) subqueries(out *Select, scope *cteScope, db string) error {
	var err error
	rw := func(e Expr) Expr {
		if err != nil || e == nil {
			return e
		}
		var r Expr
		r, err = x.rewriteSubqueries(e, scope, db)
		return r
	}
	items := make([]SelectItem, len(out.Items))
	for i, it := range out.Items {
		it.Expr = rw(it.Expr)
		items[i] = it
	}
	out.Items = items
	out.Where, out.Having = rw(out.Where), rw(out.Having)
	if out.GroupBy != nil {
		gb := make([]Expr, len(out.GroupBy))
		for i, g := range out.GroupBy {
			gb[i] = rw(g)
		}
		out.GroupBy = gb
	}
	if out.OrderBy != nil {
		ob := make([]OrderItem, len(out.OrderBy))
		for i, o := range out.OrderBy {
			o.Expr = rw(o.Expr)
			ob[i] = o
		}
		out.OrderBy = ob
	}
	return err
}

// rewriteSubqueries returns e with each subquery's inner query expanded.
func (x *expander) rewriteSubqueries(e Expr, scope *cteScope, db string) (Expr, error) {
	var err error
	out := Rewrite(e, func(n Expr) Expr {
		sq, ok := n.(*Subquery)
		if !ok || sq.Select == nil || err != nil {
			return n
		}
		inner, ierr := x.selectStmt(sq.Select, scope, db)
		if ierr != nil {
			err = ierr
			return n
		}
		c := *sq
		c.Select = inner
		return &c
	})
	return out, err
}

// compound expands each SELECT of a set operation.
func (x *expander) compound(c *Compound, scope *cteScope, db string) (*Compound, error) {
	out := *c
	out.With = nil
	scope, err := x.with(c.With, scope, db)
	if err != nil {
		return nil, err
	}
	for _, side := range []*SetOperand{&out.Left, &out.Right} {
		var err error
		switch o := (*side).(type) {
		case *Select:
			*side, err = x.selectStmt(o, scope, db)
		case *Compound:
			*side, err = x.compound(o, scope, db)
		}
		if err != nil {
			return nil, err
		}
	}
	return &out, nil
}

func (x *expander) fromItem(item FromItem, scope *cteScope, db string) (FromItem, error) {
	switch f := item.(type) {
	case *FromTable:
		return x.table(f, scope, db)
	case *FromSelect:
		out := *f
		var err error
		if f.Compound != nil {
			out.Compound, err = x.compound(f.Compound, scope, db)
		} else {
			out.Select, err = x.selectStmt(f.Select, scope, db)
		}
		if err != nil {
			return nil, err
		}
		return &out, nil
	case *FromJoin:
		l, err := x.fromItem(f.L, scope, db)
		if err != nil {
			return nil, err
		}
		r, err := x.fromItem(f.R, scope, db)
		if err != nil {
			return nil, err
		}
		out := *f
		out.L, out.R = l, r
		if f.On != nil && hasSubquery(f.On) {
			var err error
			if out.On, err = x.rewriteSubqueries(f.On, scope, db); err != nil {
				return nil, err
			}
		}
		return &out, nil
	}
	return item, nil
}

// table resolves one name of FROM: a common table expression, a view or
// a table, in that order, as MySQL resolves them.
func (x *expander) table(t *FromTable, scope *cteScope, db string) (FromItem, error) {
	alias := t.Alias
	if t.Table.Database == "" {
		if c, ok := scope.find(t.Table.Table); ok {
			if alias == "" {
				alias = c.Name
			}
			return &FromSelect{Select: c.Select, Compound: c.Compound, Alias: alias, Columns: c.Columns}, nil
		}
	}
	path := t.Table
	if path.Database == "" && db != "" {
		path.Database = db
	}
	if x.views != nil && !strings.Contains(path.Table, "$") {
		lookup := path
		if lookup.Database == "" {
			lookup.Database = x.currentDB
		}
		v, ok, err := x.views.View(x.ctx, lookup)
		if err != nil {
			return nil, err
		}
		if ok {
			return x.view(v, alias)
		}
	}
	if path == t.Table {
		return t, nil
	}
	return &FromTable{Table: path, Alias: t.Alias}, nil
}

// view expands a view into a derived table named by its alias, else its
// name.
func (x *expander) view(v metadata.ViewInfo, alias string) (FromItem, error) {
	for _, p := range x.stack {
		if p == v.Path {
			return nil, errorf(metadata.ErrUnsupported, "view %s refers to itself (through %s)", v.Path, viewChain(append(x.stack, v.Path)))
		}
	}
	if len(x.stack) >= maxViewDepth {
		return nil, errorf(metadata.ErrUnsupported, "views nest more than %d deep (%s)", maxViewDepth, viewChain(x.stack))
	}
	st, err := Parse(v.Query)
	if err != nil {
		return nil, &ViewQueryError{View: v.Path, Err: fmt.Errorf("its stored query no longer parses: %w", err)}
	}
	if alias == "" {
		alias = v.Path.Table
	}
	out := &FromSelect{Alias: alias, Columns: v.Columns, View: v.Path}
	x.stack = append(x.stack, v.Path)
	switch q := st.(type) {
	case *Select:
		out.Select, err = x.selectStmt(q, nil, v.QueryDatabase)
	case *Compound:
		out.Compound, err = x.compound(q, nil, v.QueryDatabase)
	default:
		err = &ViewQueryError{View: v.Path, Err: errorf(metadata.ErrCorrupt, "its stored query is a %T, not a query", st)}
	}
	x.stack = x.stack[:len(x.stack)-1]
	if err != nil {
		return nil, err
	}
	return out, nil
}

func viewChain(paths []metadata.TablePath) string {
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = p.String()
	}
	return strings.Join(parts, " -> ")
}

// ViewQueryError is an error met while binding a view's query. It names the
// view and matches what its cause matches, but it carries no position:
// the names in a view's query are not in the statement the caller wrote.
type ViewQueryError struct {
	View metadata.TablePath
	Err  error
}

func (e *ViewQueryError) Error() string { return fmt.Sprintf("view %s: %v", e.View, e.Err) }

// Is matches the sentinels the cause matches.
func (e *ViewQueryError) Is(target error) bool { return errors.Is(e.Err, target) }
