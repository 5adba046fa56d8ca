package fluss

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// A view is stored as its query's text and its column names; everything
// else about it (its column types, whether it can be read at all) is
// found by binding that text again, as a query of the view does.

// createView runs CREATE VIEW. The query is bound now, in the
// connection's database, so that a view that cannot be read is refused
// when it is created and its column names are fixed from then on, as
// MySQL fixes them.
func (s *Stmt) createView(ctx context.Context, st *sqlplan.CreateView) error {
	path := s.path(st.View)
	if path.Database == infoSchemaDB {
		return fmt.Errorf("cannot create view %s: information_schema is read-only: %w", path, metadata.ErrReadOnly)
	}
	out, err := bindViewQuery(ctx, st.Select, st.Compound, creatingView{sessionCatalog{eng: s.engine()}, path}, s.conn.database)
	if err != nil {
		return fmt.Errorf("view %s: %w", path, err)
	}
	names, err := viewColumnNames(path, st.Columns, out)
	if err != nil {
		return err
	}
	return s.engine().CreateView(ctx, metadata.ViewInfo{
		Path:          path,
		QueryDatabase: s.conn.database,
		Query:         st.Query,
		Columns:       names,
	}, st.OrReplace, st.IfNotExists)
}

// creatingView is the catalog CREATE VIEW binds its query against: the
// session's, where the view being created (or replaced) reads as a cycle,
// not as its old definition, so that OR REPLACE cannot make a view that
// reads itself through others.
type creatingView struct {
	sessionCatalog
	path metadata.TablePath
}

func (c creatingView) View(ctx context.Context, path metadata.TablePath) (metadata.ViewInfo, bool, error) {
	if path == c.path {
		return metadata.ViewInfo{}, false, fmt.Errorf("view %s would read itself: %w", path, metadata.ErrUnsupported)
	}
	return c.sessionCatalog.View(ctx, path)
}

// bindViewQuery binds a view's query, a SELECT or a set operation, with
// every OPTIONS hint checked, and describes its output columns.
func bindViewQuery(ctx context.Context, sel *sqlplan.Select, c *sqlplan.Compound, cat sqlplan.Catalog, db string) ([]resultColumn, error) {
	sels := []*sqlplan.Select{sel}
	if c != nil {
		sels = c.Selects()
	}
	for _, s := range sels {
		if err := planner.CheckOptions(s.Hints); err != nil {
			return nil, fmt.Errorf("OPTIONS hint: %w", err)
		}
	}
	if c != nil {
		cp, err := sqlplan.BindCompound(ctx, c, cat, db, nil)
		if err != nil {
			return nil, err
		}
		return compoundColumns(cp), nil
	}
	sp, err := sqlplan.BindSelect(ctx, sel, cat, db, nil)
	if err != nil {
		return nil, err
	}
	return resultColumns(sp), nil
}

// viewColumnNames names a view's columns: its column list, which must
// match the query's output, or else the output's names, which must
// differ from each other (ignoring case) as a table's columns do.
func viewColumnNames(path metadata.TablePath, list []string, output []resultColumn) ([]string, error) {
	if list != nil {
		if len(list) != len(output) {
			return nil, fmt.Errorf("view %s names %s but its query returns %s: %w",
				path, plural(len(list), "column"), plural(len(output), "column"), metadata.ErrInvalidValue)
		}
		return list, nil
	}
	names := make([]string, len(output))
	seen := make(map[string]bool, len(output))
	for i, o := range output {
		k := strings.ToLower(o.name)
		if seen[k] {
			return nil, fmt.Errorf("view %s: its query returns two columns named %s; give one an alias or list the view's columns: %w",
				path, o.name, metadata.ErrInvalidValue)
		}
		seen[k] = true
		names[i] = o.name
	}
	return names, nil
}

// bindView binds a view's stored query for what it returns: the columns
// of DESCRIBE, SHOW CREATE VIEW and information_schema.columns.
func (s *Stmt) bindView(ctx context.Context, v metadata.ViewInfo) ([]metadata.Column, error) {
	st, err := sqlplan.Parse(v.Query)
	if err != nil {
		return nil, fmt.Errorf("view %s: its stored query no longer parses: %w", v.Path, err)
	}
	var out []resultColumn
	switch q := st.(type) {
	case *sqlplan.Select:
		out, err = bindViewQuery(ctx, q, nil, sessionCatalog{eng: s.engine()}, v.QueryDatabase)
	case *sqlplan.Compound:
		out, err = bindViewQuery(ctx, nil, q, sessionCatalog{eng: s.engine()}, v.QueryDatabase)
	default:
		return nil, fmt.Errorf("view %s: its stored query is a %T, not a query: %w", v.Path, st, metadata.ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("view %s: %w", v.Path, err)
	}
	if len(out) != len(v.Columns) {
		return nil, fmt.Errorf("view %s has %s but its query now returns %s: %w",
			v.Path, plural(len(v.Columns), "column"), plural(len(out), "column"), metadata.ErrInvalidValue)
	}
	cols := make([]metadata.Column, len(out))
	for i, rc := range out {
		cols[i] = metadata.Column{Name: v.Columns[i], Type: rc.typ, NotNull: !rc.nullable}
	}
	return cols, nil
}

// dropView runs DROP VIEW. Every view is looked up before any is
// dropped, so that without IF EXISTS one that does not exist drops none,
// as in MySQL, whose error names every missing one.
func (s *Stmt) dropView(ctx context.Context, st *sqlplan.DropView) error {
	eng := s.engine()
	var drop []metadata.TablePath
	var missing []string
	for _, v := range st.Views {
		path := s.path(v)
		if _, err := eng.View(ctx, path); err != nil {
			if !errors.Is(err, metadata.ErrNotFound) {
				return err
			}
			if !st.IfExists {
				missing = append(missing, path.Database+"."+path.Table)
			}
			continue
		}
		drop = append(drop, path)
	}
	if len(missing) > 0 {
		// MySQL's words: Unknown table 'db.v1,db.v2'.
		return fmt.Errorf("unknown table '%s' (no view dropped): %w", strings.Join(missing, ","), metadata.ErrNotFound)
	}
	for _, path := range drop {
		if err := eng.DropView(ctx, path, st.IfExists); err != nil {
			return err
		}
	}
	return nil
}

// showTables lists a database's tables and views, sorted, as MySQL's
// SHOW TABLES does.
func (s *Stmt) showTables(ctx context.Context, db string) ([]string, error) {
	eng := s.engine()
	tables, err := eng.ListTables(ctx, db)
	if err != nil {
		return nil, err
	}
	views, err := eng.ListViews(ctx, db)
	if err != nil {
		return nil, err
	}
	names := append(tables, views...)
	sort.Strings(names)
	return names, nil
}

// isViewErr reports whether err says a table statement met a view.
func isViewErr(err error) bool {
	var ve *metadata.ViewError
	return errors.As(err, &ve)
}

// showCreateView answers SHOW CREATE VIEW v (and SHOW CREATE TABLE v)
// with one row (view, statement), in MySQL's columns.
func (s *Stmt) showCreateView(ctx context.Context, path metadata.TablePath) (*Rows, error) {
	v, err := s.engine().View(ctx, path)
	if err != nil {
		return nil, err
	}
	return s.static(ctx, []resultColumn{
		{name: "view", typ: metadata.StringType()},
		{name: "create_view", typ: metadata.StringType()},
	}, [][]any{{v.Path.Table, createViewText(v)}})
}

// createViewText is the statement that creates v again: its column list
// and its query as written, whose unqualified names resolve in the
// database the view was created from (v.QueryDatabase).
func createViewText(v metadata.ViewInfo) string {
	return "CREATE VIEW " + metadata.QuoteIdent(v.Path.Database) + "." + metadata.QuoteIdent(v.Path.Table) +
		" (" + quoteNames(v.Columns) + ") AS " + v.Query
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = metadata.QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// describeView answers DESCRIBE v: the view's columns with the types its
// query gives them now.
func (s *Stmt) describeView(ctx context.Context, path metadata.TablePath) (*Rows, error) {
	v, err := s.engine().View(ctx, path)
	if err != nil {
		return nil, err
	}
	cols, err := s.bindView(ctx, v)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(cols))
	for i, c := range cols {
		rows[i] = []any{c.Name, c.Type.String(), !c.NotNull, "", nil}
	}
	return s.static(ctx, describeColumns, rows)
}

// infoSchemaViewRows are the rows of information_schema table for the
// views of db: one per view in tables and views, one per column in
// columns (a view whose query no longer binds has none there, as its
// columns are unknown). A view dropped while it is listed is skipped.
func (s *Stmt) infoSchemaViewRows(ctx context.Context, table, catalog, db string) ([][]any, error) {
	if table != "tables" && table != "views" && table != "columns" {
		return nil, nil
	}
	eng := s.engine()
	names, err := eng.ListViews(ctx, db)
	if err != nil {
		if errors.Is(err, metadata.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	var rows [][]any
	for _, name := range names {
		if table == "tables" {
			rows = append(rows, []any{catalog, db, name, "VIEW", "VIEW"})
			continue
		}
		v, err := eng.View(ctx, metadata.TablePath{Database: db, Table: name})
		if err != nil {
			if errors.Is(err, metadata.ErrNotFound) {
				continue
			}
			return nil, err
		}
		if table == "views" {
			rows = append(rows, []any{catalog, db, name, v.Query, "NONE", "NO"})
			continue
		}
		cols, err := s.bindView(ctx, v)
		if err != nil {
			continue
		}
		info := metadata.TableInfo{Path: v.Path, Schema: metadata.Schema{Columns: cols}}
		for i, c := range cols {
			rows = append(rows, columnRow(catalog, &info, i, c))
		}
	}
	return rows, nil
}

// View makes the session's catalog a sqlplan.ViewCatalog, so binding
// expands views. information_schema has none; a table's name is no view.
func (c sessionCatalog) View(ctx context.Context, path metadata.TablePath) (metadata.ViewInfo, bool, error) {
	if strings.EqualFold(path.Database, infoSchemaDB) {
		return metadata.ViewInfo{}, false, nil
	}
	v, err := c.eng.View(ctx, path)
	switch {
	case err == nil:
		return v, true, nil
	case errors.Is(err, metadata.ErrNotFound), errors.Is(err, metadata.ErrUnsupported):
		return metadata.ViewInfo{}, false, nil
	}
	return metadata.ViewInfo{}, false, err
}

var _ sqlplan.ViewCatalog = sessionCatalog{}

// writeCatalog is the catalog UPDATE and DELETE bind against: the
// engine's tables, the target among them (a view or information_schema
// is no target), and the views their subqueries may read.
type writeCatalog struct {
	eng *storage.Engine
}

func (c writeCatalog) TableInfo(ctx context.Context, path metadata.TablePath) (metadata.TableInfo, error) {
	return c.eng.TableInfo(ctx, path)
}

func (c writeCatalog) View(ctx context.Context, path metadata.TablePath) (metadata.ViewInfo, bool, error) {
	return sessionCatalog{eng: c.eng}.View(ctx, path)
}

var _ sqlplan.ViewCatalog = writeCatalog{}
