package query

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// lockRows runs the key read of a locking SELECT (FOR UPDATE, LOCK IN
// SHARE MODE) in the session's transaction and adds the keys it finds to
// the transaction's conflict check (storage.WriteBuffer.Lock): the
// primary key of every row of every primary-key table in FROM that the
// FROM and WHERE clauses select. LIMIT, OFFSET, grouping and DISTINCT are
// left out, so the keys are a superset of the rows returned, as MySQL
// locks the rows it reads rather than the ones it returns. Log tables have
// no keys and add nothing; derived tables, views and common table
// expressions in FROM are refused, since which stored rows they return is
// not a key read. Outside a transaction, and in a read-only one, which
// commits nothing, the clause reads like a plain SELECT.
func (s *Session) lockRows(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) error {
	if sel.Lock == sqlplan.LockNone || !s.inTx() || s.Writes == nil || !sel.From {
		return nil
	}
	var refs []sqlplan.FromTable
	if sel.FromTree != nil {
		var err error
		if refs, err = lockTables(sel.FromTree, sel.Lock); err != nil {
			return err
		}
	} else {
		refs = []sqlplan.FromTable{{Table: sel.Table, Alias: sel.Alias}}
	}
	type keyed struct {
		info metadata.TableInfo
		pk   []int
		at   int // first output column of its key
	}
	var tables []keyed
	var items []sqlplan.SelectItem
	for _, ref := range refs {
		for _, cte := range sel.With {
			if ref.Table.Database == "" && cte.Name == ref.Table.Table {
				return fmt.Errorf("%s over the common table expression %s: %w", sel.Lock, cte.Name, metadata.ErrUnsupported)
			}
		}
		path := s.path(ref.Table)
		info, err := s.Engine.TableInfo(ctx, path)
		if err != nil {
			if _, verr := s.Engine.View(ctx, path); verr == nil {
				return fmt.Errorf("%s over the view %s: lock the rows of its tables: %w", sel.Lock, path, metadata.ErrUnsupported)
			}
			return err
		}
		if !info.HasPrimaryKey() {
			continue
		}
		q := ref.Alias
		if q == "" {
			q = ref.Table.Table
		}
		k := keyed{info: info, pk: info.PrimaryKeyIndexes(), at: len(items)}
		for _, c := range k.pk {
			name := info.Schema.Columns[c].Name
			items = append(items, sqlplan.SelectItem{Expr: &sqlplan.ColumnRef{Name: name, Qualifier: q, Index: -1}, Text: q + "." + name})
		}
		tables = append(tables, k)
	}
	if len(tables) == 0 {
		return nil
	}
	keys := &sqlplan.Select{Table: sel.Table, Alias: sel.Alias, From: true, FromTree: sel.FromTree,
		Items: items, Where: sel.Where, Hints: sel.Hints, With: sel.With}
	sp, err := s.bindSelect(ctx, keys, args)
	if err != nil {
		return err
	}
	op, err := s.OpenSelect(ctx, sp, nil)
	if err != nil {
		return err
	}
	types := make([]metadata.DataType, len(sp.Output))
	for i, o := range sp.Output {
		types[i] = o.Expr.Type()
	}
	rows, err := collectRows(ctx, op, types, nil)
	if err != nil {
		return err
	}
	for _, k := range tables {
		var keyRows [][]any
	rows:
		for _, r := range rows {
			row := make([]any, len(k.info.Schema.Columns))
			for j, c := range k.pk {
				if row[c] = r[k.at+j]; row[c] == nil {
					continue rows // the NULL side of an outer join
				}
			}
			keyRows = append(keyRows, row)
		}
		if err := s.Writes.Lock(ctx, k.info.Path, keyRows); err != nil {
			return err
		}
	}
	return nil
}

// lockTables lists the tables of a locking SELECT's FROM tree; a derived
// table (or a view's expansion) is refused.
func lockTables(it sqlplan.FromItem, mode sqlplan.LockMode) ([]sqlplan.FromTable, error) {
	switch x := it.(type) {
	case *sqlplan.FromTable:
		return []sqlplan.FromTable{*x}, nil
	case *sqlplan.FromJoin:
		l, err := lockTables(x.L, mode)
		if err != nil {
			return nil, err
		}
		r, err := lockTables(x.R, mode)
		return append(l, r...), err
	case *sqlplan.FromSelect:
		return nil, fmt.Errorf("%s over the derived table %s: %w", mode, x.Alias, metadata.ErrUnsupported)
	}
	return nil, fmt.Errorf("%s over %s: %w", mode, it, metadata.ErrUnsupported)
}
