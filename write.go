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

func (s *Stmt) insert(ctx context.Context, ins *sqlplan.Insert, args []sqlplan.Arg) (int64, error) {
	eng := s.engine()
	if ins.Select != nil {
		return 0, fmt.Errorf("INSERT ... SELECT is not supported yet: %w", metadata.ErrUnsupported)
	}
	plan, err := sqlplan.BindInsert(ctx, ins, eng, s.conn.database, args)
	if err != nil {
		return 0, err
	}
	if !plan.Table.HasPrimaryKey() {
		return eng.Append(ctx, plan.Table.Path, plan.Rows)
	}
	var opts storage.UpsertOptions
	if plan.Partial {
		opts.TargetColumns = plan.Columns
	}
	res, err := eng.Upsert(ctx, plan.Table.Path, plan.Rows, opts)
	return res.RowsAffected, err
}

// update runs UPDATE as a read of the matching rows, with the SET
// expressions evaluated in place of their columns, followed by one upsert
// of the new rows: atomic per bucket like any write.
func (s *Stmt) update(ctx context.Context, u *sqlplan.Update, args []sqlplan.Arg) (int64, error) {
	plan, err := sqlplan.BindUpdate(ctx, u, s.engine(), s.conn.database, args)
	if err != nil {
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
	res, err := s.engine().Upsert(ctx, plan.Table.Path, rows, storage.UpsertOptions{})
	return res.RowsAffected, err
}

// delete runs DELETE as a read of the matching rows followed by one delete
// of their keys.
func (s *Stmt) delete(ctx context.Context, d *sqlplan.Delete, args []sqlplan.Arg) (int64, error) {
	plan, err := sqlplan.BindDelete(ctx, d, s.engine(), s.conn.database, args)
	if err != nil {
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
	res, err := s.engine().Delete(ctx, plan.Table.Path, rows)
	return res.RowsAffected, err
}

// call runs a procedure and returns its result rows.
func (s *Stmt) call(ctx context.Context, c *sqlplan.Call, args []sqlplan.Arg) (*Rows, error) {
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
}

func (r result) LastInsertId() (int64, error) {
	return 0, wrapErr(fmt.Errorf("LastInsertId needs a table with an auto-increment column: %w", metadata.ErrUnsupported))
}

func (r result) RowsAffected() (int64, error) { return r.rowsAffected, nil }
