package query

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/sqlplan"
)

// A view is stored as its query's text and its column names; everything
// else about it (its column types, whether it can be read at all) is
// found by binding that text again, as a query of the view does.

// createView runs CREATE VIEW. The query is bound now, in the
// session's current database, so that a view that cannot be read is refused
// when it is created and its column names are fixed from then on, as
// MySQL fixes them.
func (s *Session) createView(ctx context.Context, st *sqlplan.CreateView) error {
	path := s.path(st.View)
	if path.Database == InfoSchemaDB {
		return fmt.Errorf("cannot create view %s: information_schema is read-only: %w", path, metadata.ErrReadOnly)
	}
	out, err := bindViewQuery(ctx, st.Select, st.Compound, creatingView{sessionCatalog{eng: s.Engine}, path}, s.Database)
	if err != nil {
		return fmt.Errorf("view %s: %w", path, err)
	}
	names, err := viewColumnNames(path, st.Columns, out)
	if err != nil {
		return err
	}
	return s.Engine.CreateView(ctx, metadata.ViewInfo{
		Path:          path,
		QueryDatabase: s.Database,
		Query:         st.Query,
		Columns:       names,
	}, st.OrReplace, st.IfNotExists)
}

// bindViewQuery binds a view's query, a SELECT or a set operation, with
// every OPTIONS hint checked, and describes its output columns.
func bindViewQuery(ctx context.Context, sel *sqlplan.Select, c *sqlplan.Compound, cat sqlplan.Catalog, db string) ([]Column, error) {
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
	return ResultColumns(sp), nil
}

// viewColumnNames names a view's columns: its column list, which must
// match the query's output, or else the output's names, which must
// differ from each other (ignoring case) as a table's columns do.
func viewColumnNames(path metadata.TablePath, list []string, output []Column) ([]string, error) {
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
		k := strings.ToLower(o.Name)
		if seen[k] {
			return nil, fmt.Errorf("view %s: its query returns two columns named %s; give one an alias or list the view's columns: %w",
				path, o.Name, metadata.ErrInvalidValue)
		}
		seen[k] = true
		names[i] = o.Name
	}
	return names, nil
}

// bindView binds a view's stored query for what it returns: the columns
// of DESCRIBE, SHOW CREATE VIEW and information_schema.columns.
func (s *Session) bindView(ctx context.Context, v metadata.ViewInfo) ([]metadata.Column, error) {
	st, err := sqlplan.Parse(v.Query)
	if err != nil {
		return nil, fmt.Errorf("view %s: its stored query no longer parses: %w", v.Path, err)
	}
	var out []Column
	switch q := st.(type) {
	case *sqlplan.Select:
		out, err = bindViewQuery(ctx, q, nil, sessionCatalog{eng: s.Engine}, v.QueryDatabase)
	case *sqlplan.Compound:
		out, err = bindViewQuery(ctx, nil, q, sessionCatalog{eng: s.Engine}, v.QueryDatabase)
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
		cols[i] = metadata.Column{Name: v.Columns[i], Type: rc.Type, NotNull: !rc.Nullable}
	}
	return cols, nil
}

// dropView runs DROP VIEW: every view named, or, when one is missing
// without IF EXISTS, none (storage.Engine.DropViews).
func (s *Session) dropView(ctx context.Context, st *sqlplan.DropView) error {
	paths := make([]metadata.TablePath, len(st.Views))
	for i, v := range st.Views {
		paths[i] = s.path(v)
	}
	return s.Engine.DropViews(ctx, paths, st.IfExists)
}

// isViewErr reports whether err says a table statement met a view.
func isViewErr(err error) bool {
	var ve *metadata.ViewError
	return errors.As(err, &ve)
}

// showCreateView answers SHOW CREATE VIEW v (and SHOW CREATE TABLE v)
// with one row (view, statement), in MySQL's columns.
func (s *Session) showCreateView(ctx context.Context, path metadata.TablePath) (*Result, error) {
	v, err := s.Engine.View(ctx, path)
	if err != nil {
		return nil, err
	}
	return staticResult([]Column{
		{Name: "view", Type: metadata.StringType()},
		{Name: "create_view", Type: metadata.StringType()},
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
func (s *Session) describeView(ctx context.Context, path metadata.TablePath) (*Result, error) {
	v, err := s.Engine.View(ctx, path)
	if err != nil {
		return nil, err
	}
	cols, err := s.bindView(ctx, v)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(cols))
	for i, c := range cols {
		rows[i] = []any{c.Name, c.Type.String(), !c.NotNull, "", nil, nil}
	}
	return staticResult(describeColumns, rows)
}

// infoSchemaViewRows are the rows of information_schema table for the
// views of db: one per view in tables and views, one per column in
// columns (a view whose query no longer binds has none there, as its
// columns are unknown). A view dropped while it is listed is skipped.
func (s *Session) infoSchemaViewRows(ctx context.Context, table, catalog, db string) ([][]any, error) {
	if table != "tables" && table != "views" && table != "columns" {
		return nil, nil
	}
	eng := s.Engine
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
