package fluss

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// insert runs INSERT ... VALUES and INSERT ... SELECT: an append to a log
// table, an upsert into a primary-key table. Generated auto-increment
// values are filled in before the rows are written or, in a transaction,
// buffered.
func (s *Stmt) insert(ctx context.Context, ins *sqlplan.Insert, args []sqlplan.Arg) (result, error) {
	var (
		plan *sqlplan.InsertPlan
		rows [][]any
		err  error
	)
	if ins.Select != nil || ins.Compound != nil {
		plan, rows, err = s.insertSelectRows(ctx, ins, args)
	} else {
		plan, rows, err = s.bindInsert(ctx, ins, args)
	}
	if err != nil {
		return result{}, err
	}
	if err := s.conn.checkTxWrite("INSERT", plan.Table.Path, false); err != nil {
		return result{}, err
	}
	if plan.AutoIncrement >= 0 && plan.Rows == nil {
		// A kept binding has no rows of its own; auto-increment values
		// are filled into this execution's.
		p := *plan
		p.Rows = rows
		plan = &p
	}
	lastID, hasID, err := s.fillAutoIncrement(ctx, plan)
	if err != nil {
		return result{}, err
	}
	w := storage.Write{Path: plan.Table.Path, Kind: storage.WriteAppend, Rows: rows}
	if plan.Table.HasPrimaryKey() {
		w.Kind = storage.WriteUpsert
		if plan.Partial {
			w.Upsert.TargetColumns = plan.Columns
		}
	}
	// Binding coerced every value to its column and refused NULL in NOT
	// NULL columns; generated values are coerced too.
	checked := &storage.CheckedRows{TableID: plan.Table.TableID, SchemaID: plan.Table.SchemaID}
	n, err := s.applyChecked(ctx, w, checked)
	if err != nil {
		return result{}, err
	}
	return result{rowsAffected: n, lastInsertID: lastID, hasLastInsertID: hasID}, nil
}

// apply writes w now, or buffers it in the connection's transaction, and
// returns the rows it affects.
func (s *Stmt) apply(ctx context.Context, w storage.Write) (int64, error) {
	return s.applyChecked(ctx, w, nil)
}

// applyChecked is apply for rows checked against the table (nil: not
// checked).
func (s *Stmt) applyChecked(ctx context.Context, w storage.Write, checked *storage.CheckedRows) (int64, error) {
	if n, ok, err := s.conn.txWriteChecked(ctx, w, checked); ok {
		return n, err
	}
	w.Checked = checked
	res, err := s.engine().Commit(ctx, []storage.Write{w})
	if err != nil {
		return 0, err
	}
	return res[0].RowsAffected, nil
}

// update runs UPDATE as a read of the matching rows, with the SET
// expressions evaluated in place of their columns, followed by one upsert
// of the new rows: atomic like any write. In a transaction the read is at
// the transaction's view and the upsert is buffered.
func (s *Stmt) update(ctx context.Context, u *sqlplan.Update, args []sqlplan.Arg) (int64, error) {
	plan, err := sqlplan.BindUpdate(ctx, u, writeCatalog{s.engine()}, s.conn.database, args)
	if err != nil {
		return 0, err
	}
	if err := s.conn.checkTxWrite("UPDATE", plan.Table.Path, true); err != nil {
		return 0, err
	}
	cols := plan.Table.Schema.Columns
	exprs := make([]sqlplan.Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &sqlplan.ColumnRef{Name: c.Name, Index: i, T: c.Type}
	}
	for _, a := range plan.Set {
		exprs[a.Column] = a.Expr
	}
	rows, err := s.readRows(ctx, plan.Read, exprs)
	if err != nil {
		return 0, err
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
func (s *Stmt) delete(ctx context.Context, d *sqlplan.Delete, args []sqlplan.Arg) (int64, error) {
	plan, err := sqlplan.BindDelete(ctx, d, writeCatalog{s.engine()}, s.conn.database, args)
	if err != nil {
		return 0, err
	}
	if err := s.conn.checkTxWrite("DELETE", plan.Table.Path, true); err != nil {
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

// call runs a procedure and returns its result rows.
func (s *Stmt) call(ctx context.Context, c *sqlplan.Call, args []sqlplan.Arg) (*Rows, error) {
	if err := s.conn.checkTxStatement("CALL " + c.Procedure); err != nil {
		return nil, err
	}
	vals, err := c.Values(args)
	if err != nil {
		return nil, err
	}
	switch c.Procedure {
	case "sys.kv_snapshot":
		path, err := s.tableArg(c, vals)
		if err != nil {
			return nil, err
		}
		snaps, err := s.engine().TakeKvSnapshots(ctx, path)
		if err != nil {
			return nil, err
		}
		rows := make([][]any, len(snaps))
		for i, sn := range snaps {
			var part any
			if sn.PartitionName != "" {
				part = sn.PartitionName
			}
			rows[i] = []any{part, int64(sn.Bucket), sn.SnapshotID, sn.LogOffset}
		}
		return s.static(ctx, []resultColumn{
			{name: "partition", typ: metadata.StringType(), nullable: true},
			{name: "bucket", typ: metadata.IntType()},
			{name: "snapshot_id", typ: metadata.BigIntType()},
			{name: "log_offset", typ: metadata.BigIntType()},
		}, rows)
	case "sys.tier":
		path, err := s.tableArg(c, vals)
		if err != nil {
			return nil, err
		}
		id, err := s.conn.connector.shared.tiering.Tier(ctx, path)
		if err != nil {
			return nil, err
		}
		return s.static(ctx, []resultColumn{{name: "snapshot_id", typ: metadata.BigIntType()}}, [][]any{{id}})
	case "sys.drop_expired":
		if len(vals) != 0 {
			return nil, fmt.Errorf("%s takes no arguments; got %d: %w", c.Procedure, len(vals), metadata.ErrInvalidValue)
		}
		n, err := s.engine().DropExpired(ctx, time.Now())
		if err != nil {
			return nil, err
		}
		return s.static(ctx, []resultColumn{{name: "segments_removed", typ: metadata.BigIntType()}}, [][]any{{int64(n)}})
	}
	return nil, fmt.Errorf("unknown procedure %s (known: sys.kv_snapshot, sys.tier, sys.drop_expired): %w", c.Procedure, metadata.ErrNotFound)
}

// tableArg reads the single table-name argument of a procedure.
func (s *Stmt) tableArg(c *sqlplan.Call, vals []any) (metadata.TablePath, error) {
	if len(vals) != 1 {
		return metadata.TablePath{}, fmt.Errorf("%s takes one argument, the table name; got %d: %w", c.Procedure, len(vals), metadata.ErrInvalidValue)
	}
	name, ok := vals[0].(string)
	if !ok || name == "" {
		return metadata.TablePath{}, fmt.Errorf("%s: the table name must be a string, not %v: %w", c.Procedure, vals[0], metadata.ErrInvalidValue)
	}
	if db, t, ok := strings.Cut(name, "."); ok {
		return metadata.TablePath{Database: db, Table: t}, nil
	}
	return s.path(metadata.TablePath{Table: name}), nil
}

// result is the driver.Result of Exec.
type result struct {
	rowsAffected int64
	// lastInsertID is the last auto-increment value the statement
	// generated; valid when hasLastInsertID.
	lastInsertID    int64
	hasLastInsertID bool
}

// LastInsertId returns what MySQL's server reports for an INSERT into a
// table with an auto-increment column: the first value the statement
// generated, else the last value it gave the column, else 0. On other
// tables and statements it is an error.
func (r result) LastInsertId() (int64, error) {
	if r.hasLastInsertID {
		return r.lastInsertID, nil
	}
	return 0, wrapErr(fmt.Errorf("LastInsertId needs a table with an auto-increment column: %w", metadata.ErrUnsupported))
}

// RowsAffected counts appended rows, or rows inserted plus rows whose
// stored value changed (a no-op upsert or a delete of a missing key
// counts 0), as the write counted them when Exec ran.
func (r result) RowsAffected() (int64, error) { return r.rowsAffected, nil }
