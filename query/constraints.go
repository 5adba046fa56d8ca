package query

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// foreignKeys completes the foreign keys a CREATE TABLE declares: the
// parent's database is the session's when unqualified, a key without a
// name is named as MySQL names it (<table>_ibfk_<n>), and with
// foreign_key_checks on each parent must exist with the referenced
// columns (the table itself, for a key that references its own table).
// A CREATE TABLE IF NOT EXISTS of a table that exists checks nothing: it
// creates nothing.
func (s *Session) foreignKeys(ctx context.Context, desc *metadata.TableDescriptor, ifNotExists bool) error {
	if len(desc.ForeignKeys) == 0 {
		return nil
	}
	checks := s.variables().ForeignKeyChecks
	if ifNotExists {
		if _, err := s.Engine.TableInfo(ctx, desc.Path); err == nil {
			checks = false
		}
	}
	fks := make([]metadata.ForeignKey, len(desc.ForeignKeys))
	self := metadata.TableInfo{Path: desc.Path, Schema: desc.Schema}
	for i, fk := range desc.ForeignKeys {
		fk.RefTable = s.path(fk.RefTable)
		if fk.Name == "" {
			fk.Name = fmt.Sprintf("%s_ibfk_%d", desc.Path.Table, i+1)
		}
		if checks {
			var parent metadata.TableInfo
			if samePath(fk.RefTable, desc.Path) {
				parent = self
			} else {
				var err error
				if parent, err = s.Engine.TableInfo(ctx, fk.RefTable); err != nil {
					return fmt.Errorf("foreign key %q references %s (SET FOREIGN_KEY_CHECKS = 0 declares it before its parent): %w", fk.Name, fk.RefTable, err)
				}
			}
			var err error
			if fk, err = metadata.CheckReference(&self, fk, &parent); err != nil {
				return err
			}
		}
		fks[i] = fk
	}
	desc.ForeignKeys = fks
	return nil
}

// addForeignKey runs ALTER TABLE ... ADD ... FOREIGN KEY.
func (s *Session) addForeignKey(ctx context.Context, st *sqlplan.AddForeignKey) error {
	path := s.path(st.Table)
	fk := st.Key
	fk.RefTable = s.path(fk.RefTable)
	if fk.Name == "" {
		info, err := s.Engine.TableInfo(ctx, path)
		if err != nil {
			return err
		}
		fk.Name = fmt.Sprintf("%s_ibfk_%d", info.Path.Table, len(info.ForeignKeys)+1)
	}
	if _, err := s.Engine.AddForeignKey(ctx, path, fk, s.variables().ForeignKeyChecks); err != nil {
		return err
	}
	if l := s.Logger; l != nil {
		l.InfoContext(ctx, "ALTER TABLE: "+st.Note(), "table", path.String())
	}
	return nil
}

// dropConstraint runs ALTER TABLE ... DROP CONSTRAINT | DROP FOREIGN KEY:
// only foreign keys are dropped this way; a name that is an index of
// the table says so.
func (s *Session) dropConstraint(ctx context.Context, st *sqlplan.DropConstraint) error {
	path := s.path(st.Table)
	_, err := s.Engine.DropForeignKey(ctx, path, st.Name)
	if errors.Is(err, metadata.ErrNotFound) && !st.ForeignKey {
		if info, ierr := s.Engine.TableInfo(ctx, path); ierr == nil {
			for _, ix := range info.Indexes {
				if strings.EqualFold(ix.Name, st.Name) {
					return fmt.Errorf("%s of table %s is an index, not a foreign key (DROP INDEX drops it): %w", st.Name, path, metadata.ErrUnsupported)
				}
			}
		}
	}
	return err
}

// checkDropReferenced refuses, with foreign_key_checks on, to drop a
// table another table's foreign key references, as MySQL does (GORM's
// DropTable turns the checks off first).
func (s *Session) checkDropReferenced(ctx context.Context, path metadata.TablePath) error {
	if !s.variables().ForeignKeyChecks {
		return nil
	}
	if _, err := s.Engine.TableInfo(ctx, path); err != nil {
		return nil // DROP TABLE says whether a missing table is an error
	}
	dbs, err := s.Engine.ListDatabases(ctx)
	if err != nil {
		return err
	}
	for _, db := range dbs {
		tables, err := s.Engine.ListTables(ctx, db)
		if err != nil {
			continue // dropped meanwhile
		}
		for _, name := range tables {
			child := metadata.TablePath{Database: db, Table: name}
			if samePath(child, path) {
				continue
			}
			info, err := s.Engine.TableInfo(ctx, child)
			if err != nil {
				continue
			}
			for _, fk := range info.ForeignKeys {
				if samePath(fk.RefTable, path) {
					return fmt.Errorf("Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s' (SET FOREIGN_KEY_CHECKS = 0 allows it): %w",
						path.Table, fk.Name, child.Table, metadata.ErrConstraint)
				}
			}
		}
	}
	return nil
}

func samePath(a, b metadata.TablePath) bool {
	return strings.EqualFold(a.Database, b.Database) && strings.EqualFold(a.Table, b.Table)
}
