package query

import (
	"context"
	"fmt"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// InsertValues writes the rows of a bound INSERT: an append to a log
// table, an upsert into a primary-key table. plan may be a prepared
// statement's template, shared by its executions: it is read, never
// changed; rows are this execution's. Generated auto-increment values are
// filled in before the rows are written or, in a transaction, buffered.
func (s *Session) InsertValues(ctx context.Context, plan *sqlplan.InsertPlan, rows [][]any) (ExecResult, error) {
	if err := s.checkTxWrite("INSERT", plan.Table.Path); err != nil {
		return ExecResult{}, err
	}
	if plan.AutoIncrement >= 0 && plan.Rows == nil {
		// A kept binding has no rows of its own; auto-increment values
		// are filled into this execution's.
		p := *plan
		p.Rows = rows
		plan = &p
	}
	defaults, err := s.fillDefaults(plan, rows)
	if err != nil {
		return ExecResult{}, err
	}
	lastID, hasID, err := s.fillAutoIncrement(ctx, plan)
	if err != nil {
		return ExecResult{}, err
	}
	w := storage.Write{Path: plan.Table.Path, Kind: storage.WriteAppend, Rows: rows}
	if plan.Table.HasPrimaryKey() {
		w.Kind = storage.WriteUpsert
		if plan.Partial {
			w.Upsert.TargetColumns = plan.Columns
			w.Upsert.Defaults = defaults
		}
	}
	// Binding coerced every value to its column and refused NULL in NOT
	// NULL columns; generated values are coerced too.
	checked := &storage.CheckedRows{TableID: plan.Table.TableID, SchemaID: plan.Table.SchemaID}
	n, err := s.applyChecked(ctx, w, checked)
	if err != nil {
		return ExecResult{}, err
	}
	return ExecResult{RowsAffected: n, LastInsertID: lastID, HasLastInsertID: hasID}, nil
}

// fillDefaults puts the columns' defaults in the cells of rows that take
// them (InsertPlan.DefaultColumns and DefaultCells) and returns the
// statement's default row, which a partial update's new keys take; nil
// when the table has no defaults. Every CURRENT_TIMESTAMP of the
// statement is one time, read now, in the session's zone.
func (s *Session) fillDefaults(plan *sqlplan.InsertPlan, rows [][]any) ([]any, error) {
	schema := plan.Table.Schema
	if !schema.HasDefaults() || len(plan.DefaultColumns) == 0 && len(plan.DefaultCells) == 0 && !plan.Partial {
		return nil, nil
	}
	defaults, err := schema.DefaultRow(time.Now(), s.Location)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", plan.Table.Path, err)
	}
	for _, row := range rows {
		for _, c := range plan.DefaultColumns {
			row[c] = defaults[c]
		}
	}
	for _, cell := range plan.DefaultCells {
		if cell.Row < len(rows) {
			rows[cell.Row][cell.Column] = defaults[cell.Column]
		}
	}
	return defaults, nil
}

// apply writes w now, or buffers it in the session's transaction, and
// returns the rows it affects.
func (s *Session) apply(ctx context.Context, w storage.Write) (int64, error) {
	return s.applyChecked(ctx, w, nil)
}

// applyChecked is apply for rows checked against the table (nil: not
// checked).
func (s *Session) applyChecked(ctx context.Context, w storage.Write, checked *storage.CheckedRows) (int64, error) {
	if n, ok, err := s.txWrite(ctx, w, checked); ok {
		return n, err
	}
	w.Checked = checked
	res, err := s.Engine.Commit(ctx, []storage.Write{w})
	if err != nil {
		return 0, err
	}
	return res[0].RowsAffected, nil
}

// update runs UPDATE as a read of the matching rows, with the SET
// expressions evaluated in place of their columns, followed by one upsert
// of the new rows: atomic like any write. In a transaction the read is at
// the transaction's view and the upsert is buffered.
func (s *Session) update(ctx context.Context, u *sqlplan.Update, args []sqlplan.Arg) (int64, error) {
	if n, ok, err := s.updateKept(ctx, u, args); ok {
		return n, err
	}
	plan, err := sqlplan.BindUpdate(ctx, u, writeCatalog{eng: s.Engine, view: s.View}, s.Database, args)
	if err != nil {
		return 0, err
	}
	if err := s.checkTxWrite("UPDATE", plan.Table.Path); err != nil {
		return 0, err
	}
	cols := plan.Table.Schema.Columns
	exprs := make([]sqlplan.Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &sqlplan.ColumnRef{Name: c.Name, Index: i, T: c.Type}
	}
	var defaults []any
	for _, a := range plan.Set {
		exprs[a.Column] = a.Expr
		if !a.Default {
			continue
		}
		if defaults == nil {
			// One CURRENT_TIMESTAMP for the statement, as an INSERT's.
			if defaults, err = plan.Table.Schema.DefaultRow(time.Now(), s.Location); err != nil {
				return 0, fmt.Errorf("table %s: %w", plan.Table.Path, err)
			}
		}
		exprs[a.Column] = &sqlplan.Literal{Value: defaults[a.Column], T: cols[a.Column].Type}
	}
	rows, byKey, err := s.readRowsByKey(ctx, plan.Read, exprs)
	if err != nil {
		return 0, err
	}
	if byKey {
		s.Kept.keepUpdate(u, s.Database, plan)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	for r, row := range rows {
		for _, a := range plan.Set {
			c := cols[a.Column]
			v, err := metadata.CoerceValue(c.Type, row[a.Column])
			if err != nil {
				return 0, fmt.Errorf("UPDATE row %d, column %s: %w", r+1, c.Name, err)
			}
			if v == nil && c.NotNull {
				return 0, fmt.Errorf("UPDATE sets NOT NULL column %s to NULL: %w", c.Name, metadata.ErrConstraint)
			}
			row[a.Column] = v
		}
	}
	return s.apply(ctx, storage.Write{Path: plan.Table.Path, Kind: storage.WriteUpsert, Rows: rows})
}

// delete runs DELETE as a read of the matching rows followed by one delete
// of their keys; in a transaction, a read at its view and a buffered
// delete.
func (s *Session) delete(ctx context.Context, d *sqlplan.Delete, args []sqlplan.Arg) (int64, error) {
	plan, err := sqlplan.BindDelete(ctx, d, writeCatalog{eng: s.Engine, view: s.View}, s.Database, args)
	if err != nil {
		return 0, err
	}
	if err := s.checkTxWrite("DELETE", plan.Table.Path); err != nil {
		return 0, err
	}
	cols := plan.Table.Schema.Columns
	exprs := make([]sqlplan.Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &sqlplan.ColumnRef{Name: c.Name, Index: i, T: c.Type}
	}
	rows, err := s.readRows(ctx, plan.Read, exprs)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return s.apply(ctx, storage.Write{Path: plan.Table.Path, Kind: storage.WriteDelete, Rows: rows})
}
