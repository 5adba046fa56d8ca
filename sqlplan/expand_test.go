package sqlplan

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// viewCatalog is fakeCatalog with views.
type viewCatalog struct {
	fakeCatalog
	views map[metadata.TablePath]metadata.ViewInfo
}

func (c viewCatalog) View(_ context.Context, p metadata.TablePath) (metadata.ViewInfo, bool, error) {
	v, ok := c.views[p]
	return v, ok, nil
}

var _ ViewCatalog = viewCatalog{}

func newViewCatalog(views ...metadata.ViewInfo) viewCatalog {
	c := viewCatalog{fakeCatalog: newCatalog(), views: map[metadata.TablePath]metadata.ViewInfo{}}
	for _, v := range views {
		c.views[v.Path] = v
	}
	return c
}

func fv(db, name, queryDB, query string, cols ...string) metadata.ViewInfo {
	return metadata.ViewInfo{Path: metadata.TablePath{Database: db, Table: name}, QueryDatabase: queryDB, Query: query, Columns: cols}
}

func mustSelect(t *testing.T, sql string) *Select {
	t.Helper()
	st, err := Parse(sql)
	require.NoError(t, err, sql)
	sel, ok := st.(*Select)
	require.True(t, ok, "%T", st)
	return sel
}

// Common table expressions and views become derived tables before
// binding; the parsed statement is left as it was.
func TestExpandNames(t *testing.T) {
	cat := newViewCatalog(
		fv("fluss", "v", "shop", "SELECT id FROM t WHERE id > 1", "id"),
		fv("fluss", "vv", "fluss", "SELECT id AS k FROM v", "k"),
		fv("shop", "w", "shop", "WITH c AS (SELECT id FROM t) SELECT id FROM c", "id"),
	)
	for _, c := range []struct{ in, out string }{
		{"WITH a AS (SELECT id FROM t) SELECT id FROM a",
			"SELECT id FROM (SELECT id FROM t) AS a"},
		{"WITH a (x) AS (SELECT id FROM t), b AS (SELECT x FROM a) SELECT x FROM b AS bb",
			"SELECT x FROM (SELECT x FROM (SELECT id FROM t) AS a (x)) AS bb"},
		// A common table expression hides a table of its name; a
		// qualified name is a table's.
		{"WITH t AS (SELECT 1 AS one) SELECT one FROM t",
			"SELECT one FROM (SELECT 1 AS one) AS t"},
		{"WITH t AS (SELECT 1 AS one) SELECT id FROM fluss.t",
			"SELECT id FROM fluss.t"},
		// It is in scope below: in joins and derived tables.
		{"WITH a AS (SELECT id FROM t) SELECT a.id FROM a JOIN (SELECT id FROM a) AS d ON a.id = d.id",
			"SELECT a.id FROM (SELECT id FROM t) AS a JOIN (SELECT id FROM (SELECT id FROM t) AS a) AS d ON a.id = d.id"},
		// Not before its definition: b reads the table a, if any.
		{"WITH b AS (SELECT id FROM a), a AS (SELECT 1 AS id) SELECT id FROM b",
			"SELECT id FROM (SELECT id FROM a) AS b"},
		// A view's unqualified names resolve where it was created.
		{"SELECT id FROM v",
			"SELECT id FROM (SELECT id FROM shop.t WHERE id > 1) AS v (id)"},
		{"SELECT x.id FROM v AS x",
			"SELECT x.id FROM (SELECT id FROM shop.t WHERE id > 1) AS x (id)"},
		{"SELECT k FROM vv",
			"SELECT k FROM (SELECT id AS k FROM (SELECT id FROM shop.t WHERE id > 1) AS v (id)) AS vv (k)"},
		{"SELECT id FROM shop.w",
			"SELECT id FROM (SELECT id FROM (SELECT id FROM shop.t) AS c) AS w (id)"},
		// A common table expression hides a view too.
		{"WITH v AS (SELECT 2 AS id) SELECT id FROM v",
			"SELECT id FROM (SELECT 2 AS id) AS v"},
		{"SELECT id FROM t",
			"SELECT id FROM t"},
	} {
		sel := mustSelect(t, c.in)
		before := sel.String()
		got, err := expandNames(context.Background(), sel, cat, "fluss")
		require.NoError(t, err, c.in)
		require.Equal(t, c.out, got.String(), c.in)
		require.Equal(t, before, sel.String(), "the parsed statement is not changed")
	}
}

func TestExpandNamesErrors(t *testing.T) {
	cat := newViewCatalog(
		fv("fluss", "v1", "fluss", "SELECT id FROM v2", "id"),
		fv("fluss", "v2", "fluss", "SELECT id FROM v1", "id"),
		fv("fluss", "self", "fluss", "SELECT id FROM self", "id"),
		fv("fluss", "broken", "fluss", "SELECT id FROM", "id"),
		fv("fluss", "write", "fluss", "DELETE FROM t", "id"),
	)
	for _, c := range []struct {
		q        string
		sentinel error
		contains string
	}{
		{"SELECT id FROM v1", metadata.ErrUnsupported, "view fluss.v1 refers to itself (through fluss.v1 -> fluss.v2 -> fluss.v1)"},
		{"SELECT id FROM self", metadata.ErrUnsupported, "view fluss.self refers to itself"},
		{"SELECT id FROM broken", metadata.ErrSyntax, "view fluss.broken: its stored query no longer parses"},
		{"SELECT id FROM write", metadata.ErrCorrupt, "view fluss.write: its stored query is a *sqlplan.Delete"},
	} {
		_, err := expandNames(context.Background(), mustSelect(t, c.q), cat, "")
		require.ErrorIs(t, err, c.sentinel, c.q)
		require.ErrorContains(t, err, c.contains, c.q)
	}
}

// Binding sees the expanded names: output names follow the column lists,
// and an error inside a view names the view but carries no position of
// the caller's text.
func TestBindExpandedNames(t *testing.T) {
	cat := newViewCatalog(
		fv("fluss", "v", "fluss", "SELECT id, i FROM t", "k", "w"),
		fv("fluss", "gone", "fluss", "SELECT id FROM nosuch", "id"),
	)
	names := func(sql string) []string {
		sp, err := BindSelect(context.Background(), mustSelect(t, sql), cat, "fluss", nil)
		require.NoError(t, err, sql)
		var out []string
		for _, o := range sp.Output {
			out = append(out, o.Name+":"+o.Expr.Type().String())
		}
		return out
	}
	require.Equal(t, []string{"a:BIGINT", "b:INT"}, names("WITH c (a, b) AS (SELECT id, i FROM t) SELECT * FROM c"))
	require.Equal(t, []string{"k:BIGINT", "w:INT"}, names("SELECT * FROM v"))
	require.Equal(t, []string{"w:INT"}, names("SELECT x.w FROM v AS x WHERE x.k > 1"))
	require.Equal(t, []string{"k:BIGINT", "a:BIGINT"}, names("WITH c (a) AS (SELECT k FROM v) SELECT v.k, c.a FROM v JOIN c ON v.k = c.a"))

	_, err := BindSelect(context.Background(), mustSelect(t, "SELECT id FROM gone"), cat, "fluss", nil)
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.ErrorContains(t, err, "view fluss.gone: ")
	var ne *NameError
	require.False(t, errors.As(err, &ne), "a name in a view's text has no place in the caller's")

	_, err = BindSelect(context.Background(), mustSelect(t, "WITH c (a, b) AS (SELECT id FROM t) SELECT * FROM c"), cat, "fluss", nil)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "c names 2 columns but its query returns 1")
}

// The inner queries of subqueries are expanded in the scope of the
// enclosing WITH; a subquery prints as written, so its inner Select is
// what changes.
func TestExpandNamesInSubqueries(t *testing.T) {
	cat := newViewCatalog(fv("fluss", "v", "shop", "SELECT id FROM t WHERE id > 1", "id"))
	inner := func(sql string) []string {
		got, err := expandNames(context.Background(), mustSelect(t, sql), cat, "fluss")
		require.NoError(t, err, sql)
		var out []string
		for _, e := range got.exprs() {
			Walk(e, func(x Expr) bool {
				if sq, ok := x.(*Subquery); ok {
					out = append(out, sq.Select.String())
				}
				return true
			})
		}
		return out
	}
	require.Equal(t, []string{"SELECT id FROM (SELECT 1 AS id) AS t"},
		inner("WITH t AS (SELECT 1 AS id) SELECT id FROM v WHERE id IN (SELECT id FROM t)"))
	require.Equal(t, []string{
		"SELECT MAX(id) FROM (SELECT id FROM shop.t WHERE id > 1) AS v (id)",
		"SELECT 1 FROM (SELECT id FROM shop.t WHERE id > 1) AS v (id) WHERE v.id = t.id",
	}, inner("SELECT id, (SELECT MAX(id) FROM v) FROM t WHERE EXISTS (SELECT 1 FROM v WHERE v.id = t.id)"))
	require.Equal(t, []string{"SELECT id FROM (SELECT 2 AS id) AS c"},
		inner("WITH c AS (SELECT 2 AS id) SELECT a.id FROM t AS a JOIN t AS b ON a.id = b.id AND a.id IN (SELECT id FROM c)"))
}
