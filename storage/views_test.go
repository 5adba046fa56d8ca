package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func viewAt(name, query string, cols ...string) metadata.ViewInfo {
	return metadata.ViewInfo{Path: metadata.TablePath{Database: "fluss", Table: name}, QueryDatabase: "fluss", Query: query, Columns: cols}
}

func TestViewsShareTheTablesNamespace(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createTable(t, e, "orders", ordersColumns(), nil, nil)
	ordersPath := metadata.TablePath{Database: "fluss", Table: "orders"}
	vPath := metadata.TablePath{Database: "fluss", Table: "v"}

	require.NoError(t, e.CreateView(ctx, viewAt("v", "SELECT id FROM orders", "id"), false, false))
	got, err := e.View(ctx, vPath)
	require.NoError(t, err)
	require.Equal(t, "SELECT id FROM orders", got.Query)
	require.Equal(t, []string{"id"}, got.Columns)
	require.False(t, got.CreatedAt.IsZero())

	// A second CREATE VIEW: refused, kept with IF NOT EXISTS, replaced with OR REPLACE.
	err = e.CreateView(ctx, viewAt("v", "SELECT 1", "x"), false, false)
	require.ErrorIs(t, err, metadata.ErrExists)
	require.NoError(t, e.CreateView(ctx, viewAt("v", "SELECT 1", "x"), false, true))
	got, _ = e.View(ctx, vPath)
	require.Equal(t, "SELECT id FROM orders", got.Query)
	require.NoError(t, e.CreateView(ctx, viewAt("v", "SELECT 1", "x"), true, false))
	got, _ = e.View(ctx, vPath)
	require.Equal(t, "SELECT 1", got.Query)

	// A table's name is no view's, whatever the flags, and the reverse.
	for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}} {
		err = e.CreateView(ctx, viewAt("orders", "SELECT 1", "x"), flags[0], flags[1])
		require.ErrorIs(t, err, metadata.ErrExists)
		require.Contains(t, err.Error(), "a table of that name exists")
	}
	for _, ine := range []bool{false, true} {
		_, err = e.CreateTable(ctx, metadata.TableDescriptor{Path: vPath, Schema: metadata.Schema{Columns: ordersColumns()}}, ine)
		require.ErrorIs(t, err, metadata.ErrExists)
		require.Contains(t, err.Error(), "a view of that name exists")
	}

	// Statements that need a table say the name is a view, and the reverse.
	var ve *metadata.ViewError
	_, err = e.TableInfo(ctx, vPath)
	require.ErrorAs(t, err, &ve)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	for _, ie := range []bool{false, true} {
		err = e.DropTable(ctx, vPath, ie)
		require.ErrorAs(t, err, &ve, "DROP TABLE of a view, if exists=%v", ie)
		err = e.DropViews(ctx, []metadata.TablePath{ordersPath}, ie)
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		require.Contains(t, err.Error(), "is a table, not a view")
	}
	_, err = e.TableInfo(ctx, ordersPath)
	require.NoError(t, err, "DROP VIEW of a table leaves it")

	tables, err := e.ListTables(ctx, "fluss")
	require.NoError(t, err)
	require.Equal(t, []string{"orders"}, tables)
	views, err := e.ListViews(ctx, "fluss")
	require.NoError(t, err)
	require.Equal(t, []string{"v"}, views)

	// A database holding a view is not empty.
	require.NoError(t, e.CreateDatabase(ctx, "shop", false))
	require.NoError(t, e.CreateView(ctx, metadata.ViewInfo{Path: metadata.TablePath{Database: "shop", Table: "w"}, QueryDatabase: "fluss", Query: "SELECT 1", Columns: []string{"x"}}, false, false))
	err = e.DropDatabase(ctx, "shop", false, false)
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.Contains(t, err.Error(), "1 views")
	require.NoError(t, e.DropDatabase(ctx, "shop", false, true))

	require.NoError(t, e.DropViews(ctx, []metadata.TablePath{vPath}, false))
	require.ErrorIs(t, e.DropViews(ctx, []metadata.TablePath{vPath}, false), metadata.ErrNotFound)
	require.NoError(t, e.DropViews(ctx, []metadata.TablePath{vPath}, true))
	_, err = e.TableInfo(ctx, vPath)
	require.ErrorIs(t, err, metadata.ErrNotFound)
}

func TestViewInfoIsValidated(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	for _, v := range []metadata.ViewInfo{
		viewAt("v", " ", "x"),
		viewAt("v", "SELECT 1"),
		viewAt("v", "SELECT 1, 2", "x", "X"),
		viewAt("v", "SELECT 1", ""),
		viewAt("", "SELECT 1", "x"),
	} {
		require.ErrorIs(t, e.CreateView(ctx, v, false, false), metadata.ErrInvalidTable, "%+v", v)
	}
	err := e.CreateView(ctx, metadata.ViewInfo{Path: metadata.TablePath{Database: "nope", Table: "v"}, QueryDatabase: "fluss", Query: "SELECT 1", Columns: []string{"x"}}, false, false)
	require.ErrorIs(t, err, metadata.ErrNotFound)
}

func TestViewsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	catalogVersionOnDisk := func() string {
		data, err := os.ReadFile(filepath.Join(dir, catalogFile))
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"version"`) {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createTable(t, e, "orders", ordersColumns(), nil, nil)
	}()
	require.Equal(t, `"version": 1,`, catalogVersionOnDisk(), "a catalog without views keeps the version every release reads")
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		require.NoError(t, e.CreateView(ctx, viewAt("big", "SELECT id FROM orders WHERE id > 10", "id"), false, false))
	}()
	require.Equal(t, `"version": 2,`, catalogVersionOnDisk())

	e, _ := testEngine(t, dir, nil)
	v, err := e.View(ctx, metadata.TablePath{Database: "fluss", Table: "big"})
	require.NoError(t, err)
	require.Equal(t, "SELECT id FROM orders WHERE id > 10", v.Query)
	require.Equal(t, []string{"id"}, v.Columns)
	require.NoError(t, e.DropViews(ctx, []metadata.TablePath{v.Path}, false))
	require.NoError(t, e.Close())
	require.Equal(t, `"version": 1,`, catalogVersionOnDisk(), "the last view gone, the catalog is version 1 again")
}

// A catalog that says a name is both a table and a view, or stores a view
// under another name, is corrupt: loading it must not pick one.
func TestCorruptViewEntriesAreRefused(t *testing.T) {
	dir := t.TempDir()
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createTable(t, e, "orders", ordersColumns(), nil, nil)
		require.NoError(t, e.CreateView(ctx, viewAt("v", "SELECT 1", "x"), false, false))
	}()
	name := filepath.Join(dir, catalogFile)
	good, err := os.ReadFile(name)
	require.NoError(t, err)
	for what, edit := range map[string]func(string) string{
		"both a table and a view": func(s string) string { return strings.Replace(s, `"v": {`, `"orders": {`, 1) },
		"is stored as":            func(s string) string { return strings.Replace(s, `"table": "v"`, `"table": "w"`, 1) },
		"has no columns":          func(s string) string { return strings.Replace(s, `"x"`, ``, 1) },
	} {
		bad := edit(string(good))
		require.NotEqual(t, string(good), bad, what)
		require.NoError(t, os.WriteFile(name, []byte(bad), 0o644))
		opts := DefaultOptions()
		opts.Dir = dir
		_, err := Open(opts)
		require.ErrorIs(t, err, metadata.ErrCorrupt, what)
		require.Contains(t, err.Error(), what)
	}
	require.NoError(t, os.WriteFile(name, good, 0o644))
}

// A CREATE VIEW whose catalog write fails changes nothing, in memory or
// on disk: the live catalog is swapped only after the new one is durable.
func TestFailedCreateViewLeavesTheCatalog(t *testing.T) {
	ffs := &faultFS{FS: NewMemFS(), match: catalogTmpFile}
	e, _ := testEngine(t, "", func(o *Options) { o.FS = ffs })
	ffs.failSync.Store(true)
	err := e.CreateView(ctx, viewAt("v", "SELECT 1", "x"), false, false)
	require.ErrorIs(t, err, errInjected)
	ffs.failSync.Store(false)
	_, err = e.View(ctx, metadata.TablePath{Database: "fluss", Table: "v"})
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.NoError(t, e.CreateView(ctx, viewAt("v", "SELECT 1", "x"), false, false))
}

// DropViews drops all it names or none: a missing view (without
// ifExists) or a table among them leaves every view in place.
func TestDropViewsAllOrNone(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createTable(t, e, "orders", ordersColumns(), nil, nil)
	a, b := viewAt("a", "SELECT 1", "x"), viewAt("b", "SELECT 2", "x")
	require.NoError(t, e.CreateView(ctx, a, false, false))
	require.NoError(t, e.CreateView(ctx, b, false, false))
	missing := metadata.TablePath{Database: "fluss", Table: "gone"}
	orders := metadata.TablePath{Database: "fluss", Table: "orders"}
	listed := func() []string {
		views, err := e.ListViews(ctx, "fluss")
		require.NoError(t, err)
		return views
	}

	err := e.DropViews(ctx, []metadata.TablePath{a.Path, missing, b.Path}, false)
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.Contains(t, err.Error(), "unknown table 'fluss.gone'")
	require.Equal(t, []string{"a", "b"}, listed())

	err = e.DropViews(ctx, []metadata.TablePath{a.Path, orders}, true)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.Equal(t, []string{"a", "b"}, listed())

	require.NoError(t, e.DropViews(ctx, []metadata.TablePath{a.Path, missing, b.Path}, true))
	require.Empty(t, listed())
	_, err = e.TableInfo(ctx, orders)
	require.NoError(t, err, "the table stays")
}
