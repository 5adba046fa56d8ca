package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// Views live in the catalog beside the tables, in the same namespace of
// their database, and are persisted with it (catalog.json, replaced
// atomically), so a crash leaves a view either stored whole or absent.
// The engine stores a view's text and column names and never reads its
// query: binding expands it.

func (c *catalog) hasViews() bool {
	for _, db := range c.Databases {
		if len(db.Views) > 0 {
			return true
		}
	}
	return false
}

// checkViews verifies the views of one database as loaded: each valid,
// stored under its own name, and no name both a table and a view.
func checkViews(dbName string, db *dbEntry) error {
	for name, v := range db.Views {
		if v == nil {
			return fmt.Errorf("%w: %s: view %s.%s has no entry", metadata.ErrCorrupt, catalogFile, dbName, name)
		}
		if _, ok := db.Tables[name]; ok {
			return fmt.Errorf("%w: %s: %s.%s is both a table and a view", metadata.ErrCorrupt, catalogFile, dbName, name)
		}
		if v.Path != (metadata.TablePath{Database: dbName, Table: name}) {
			return fmt.Errorf("%w: %s: view %s.%s is stored as %s", metadata.ErrCorrupt, catalogFile, dbName, name, v.Path)
		}
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %v", metadata.ErrCorrupt, catalogFile, err)
		}
	}
	return nil
}

// view finds a view by its path. A table of that name is reported as
// what it is, so that DROP VIEW of a table says so.
func (c *catalog) view(path metadata.TablePath) (*metadata.ViewInfo, error) {
	db, ok := c.Databases[path.Database]
	if !ok {
		return nil, fmt.Errorf("database %s: %w", path.Database, metadata.ErrNotFound)
	}
	if v, ok := db.Views[path.Table]; ok {
		return v, nil
	}
	if _, ok := db.Tables[path.Table]; ok {
		return nil, fmt.Errorf("%s is a table, not a view (drop it with DROP TABLE): %w", path, metadata.ErrUnsupported)
	}
	return nil, fmt.Errorf("view %s: %w", path, metadata.ErrNotFound)
}

// isView reports whether path names a view.
func (c *catalog) isView(path metadata.TablePath) bool {
	db, ok := c.Databases[path.Database]
	if !ok {
		return false
	}
	_, ok = db.Views[path.Table]
	return ok
}

// CreateView stores a view. A name taken by a table is refused whatever
// the flags say; one taken by a view is replaced with orReplace, left as
// it is with ifNotExists, and refused otherwise.
func (e *Engine) CreateView(ctx context.Context, view metadata.ViewInfo, orReplace, ifNotExists bool) error {
	if view.CreatedAt.IsZero() {
		view.CreatedAt = time.Now().UTC()
	}
	if err := view.Validate(); err != nil {
		return err
	}
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	path := view.Path
	db, ok := e.mu.cat.Databases[path.Database]
	if !ok {
		return fmt.Errorf("database %s: %w", path.Database, metadata.ErrNotFound)
	}
	if _, ok := db.Tables[path.Table]; ok {
		return fmt.Errorf("cannot create view %s: a table of that name exists: %w", path, metadata.ErrExists)
	}
	if _, ok := db.Views[path.Table]; ok && !orReplace {
		if ifNotExists {
			return nil
		}
		return fmt.Errorf("view %s: %w", path, metadata.ErrExists)
	}
	next := e.mu.cat.clone()
	ndb := next.Databases[path.Database]
	if ndb.Views == nil {
		ndb.Views = map[string]*metadata.ViewInfo{}
	}
	ndb.Views[path.Table] = &view
	return e.commitCatalogLocked(next)
}

// DropViews removes views, all or none, in one catalog commit. A name
// that is no view is refused before anything is dropped: a table's (DROP
// VIEW never drops data), and, unless ifExists, a missing one; the error
// names every missing view, as MySQL's "Unknown table 'db.v1,db.v2'".
func (e *Engine) DropViews(ctx context.Context, paths []metadata.TablePath, ifExists bool) error {
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	var drop []metadata.TablePath
	var missing []string
	for _, path := range paths {
		if _, err := e.mu.cat.view(path); err != nil {
			if !errors.Is(err, metadata.ErrNotFound) || e.mu.cat.isTable(path) {
				return err
			}
			if !ifExists {
				missing = append(missing, path.Database+"."+path.Table)
			}
			continue
		}
		drop = append(drop, path)
	}
	if len(missing) > 0 {
		return fmt.Errorf("unknown table '%s' (no view dropped): %w", strings.Join(missing, ","), metadata.ErrNotFound)
	}
	if len(drop) == 0 {
		return nil
	}
	next := e.mu.cat.clone()
	for _, path := range drop {
		delete(next.Databases[path.Database].Views, path.Table)
	}
	return e.commitCatalogLocked(next)
}

// View returns a view's info.
func (e *Engine) View(ctx context.Context, path metadata.TablePath) (metadata.ViewInfo, error) {
	cat, err := e.readLock()
	if err != nil {
		return metadata.ViewInfo{}, err
	}
	defer e.mu.RUnlock()
	v, err := cat.view(path)
	if err != nil {
		return metadata.ViewInfo{}, err
	}
	return *v, nil
}

// ListViews returns the view names of a database, sorted.
func (e *Engine) ListViews(ctx context.Context, database string) ([]string, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	db, ok := cat.Databases[database]
	if !ok {
		return nil, fmt.Errorf("database %s: %w", database, metadata.ErrNotFound)
	}
	return sortedKeys(db.Views), nil
}

func (c *catalog) isTable(path metadata.TablePath) bool {
	db, ok := c.Databases[path.Database]
	if !ok {
		return false
	}
	_, ok = db.Tables[path.Table]
	return ok
}
