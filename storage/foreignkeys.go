package storage

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/metadata"
)

// AddForeignKey records fk on the table at path, in one catalog commit
// (ALTER TABLE ... ADD CONSTRAINT ... FOREIGN KEY). Foreign keys are
// recorded, never enforced. With checkParent (FOREIGN_KEY_CHECKS on),
// the parent table must exist, under the same lock, with the columns fk
// references (metadata.CheckReference).
func (e *Engine) AddForeignKey(ctx context.Context, path metadata.TablePath, fk metadata.ForeignKey, checkParent bool) (metadata.TableInfo, error) {
	return e.alterInfo(path, func(cat *catalog, info metadata.TableInfo) (metadata.TableInfo, error) {
		if checkParent {
			parent, err := cat.table(fk.RefTable)
			if err != nil {
				return metadata.TableInfo{}, fmt.Errorf("foreign key %q references %s: %w", fk.Name, fk.RefTable, err)
			}
			if fk, err = metadata.CheckReference(&info, fk, &parent.Info); err != nil {
				return metadata.TableInfo{}, err
			}
		}
		return metadata.AddForeignKey(info, fk)
	})
}

// DropForeignKey forgets the foreign key called name of the table at
// path (ALTER TABLE ... DROP CONSTRAINT | DROP FOREIGN KEY); an unknown
// name is ErrNotFound naming it.
func (e *Engine) DropForeignKey(ctx context.Context, path metadata.TablePath, name string) (metadata.TableInfo, error) {
	return e.alterInfo(path, func(_ *catalog, info metadata.TableInfo) (metadata.TableInfo, error) {
		return metadata.DropForeignKey(info, name)
	})
}

// alterInfo replaces the definition of the table at path by what change
// makes of it, in one catalog commit under the engine's write lock;
// change sees the catalog as it is then.
func (e *Engine) alterInfo(path metadata.TablePath, change func(cat *catalog, info metadata.TableInfo) (metadata.TableInfo, error)) (metadata.TableInfo, error) {
	if err := e.writeLock(); err != nil {
		return metadata.TableInfo{}, err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		return metadata.TableInfo{}, err
	}
	info, err := change(e.mu.cat, t.Info)
	if err != nil {
		return metadata.TableInfo{}, err
	}
	if err := e.replaceInfoLocked(info); err != nil {
		return metadata.TableInfo{}, err
	}
	return info, nil
}

// replaceInfoLocked commits a catalog in which the table of info.TableID
// has info.
func (e *Engine) replaceInfoLocked(info metadata.TableInfo) error {
	next := e.mu.cat.clone()
	entry := next.byID[info.TableID]
	entry.Info = info
	if err := entry.prepare(); err != nil {
		return err
	}
	return e.commitCatalogLocked(next)
}
