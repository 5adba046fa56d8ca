package query

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// sessionCatalog is the catalog a statement's queries bind against: the
// engine's tables and views, plus the information_schema tables.
type sessionCatalog struct {
	eng *storage.Engine
	// view, when set, is the transaction's read view: tables bind in the
	// shape they had at its cut (storage.ReadView.Shape).
	view *storage.ReadView
	// vars answers @@name; nil where no variable may be read (a view's
	// query, which must not depend on the connection).
	vars *Variables
}

var (
	_ sqlplan.ViewCatalog     = sessionCatalog{}
	_ sqlplan.VariableCatalog = sessionCatalog{}
)

// SystemVariable makes the catalog a sqlplan.VariableCatalog.
func (c sessionCatalog) SystemVariable(name string) (any, error) {
	if c.vars == nil {
		return nil, fmt.Errorf("system variable @@%s cannot be read here (a view's query does not depend on the connection): %w", name, metadata.ErrUnsupported)
	}
	return c.vars.Lookup(name)
}

func (c sessionCatalog) TableInfo(ctx context.Context, path metadata.TablePath) (metadata.TableInfo, error) {
	if strings.EqualFold(path.Database, InfoSchemaDB) {
		if info, ok := infoSchemaInfo(path); ok {
			return info, nil
		}
		return metadata.TableInfo{}, fmt.Errorf("information_schema has no table %s (known: %s): %w",
			path.Table, strings.Join(slices.Sorted(maps.Keys(infoSchemaTables)), ", "), metadata.ErrNotFound)
	}
	info, err := c.eng.TableInfo(ctx, path)
	if err != nil {
		return info, err
	}
	return c.view.Shape(info), nil
}

// View makes the catalog a sqlplan.ViewCatalog, so binding expands
// views. information_schema has none; a table's name is no view.
func (c sessionCatalog) View(ctx context.Context, path metadata.TablePath) (metadata.ViewInfo, bool, error) {
	if strings.EqualFold(path.Database, InfoSchemaDB) {
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

// writeCatalog is the catalog UPDATE and DELETE bind against: the
// engine's tables, the target among them (a view or information_schema
// is no target), and the views their subqueries may read.
type writeCatalog struct {
	eng  *storage.Engine
	view *storage.ReadView // as sessionCatalog's
}

var _ sqlplan.ViewCatalog = writeCatalog{}

func (c writeCatalog) TableInfo(ctx context.Context, path metadata.TablePath) (metadata.TableInfo, error) {
	info, err := c.eng.TableInfo(ctx, path)
	if err != nil {
		return info, err
	}
	return c.view.Shape(info), nil
}

func (c writeCatalog) View(ctx context.Context, path metadata.TablePath) (metadata.ViewInfo, bool, error) {
	return sessionCatalog{eng: c.eng}.View(ctx, path)
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
