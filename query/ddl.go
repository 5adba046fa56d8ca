package query

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// ddl runs a statement of the catalog: CREATE, DROP, ALTER and USE.
func (s *Session) ddl(ctx context.Context, st sqlplan.Statement) error {
	eng := s.Engine
	if _, use := st.(*sqlplan.Use); !use {
		if err := s.checkTxStatement("DDL"); err != nil {
			return err
		}
	}
	switch st := st.(type) {
	case *sqlplan.CreateDatabase:
		return eng.CreateDatabase(ctx, st.Name, st.IfNotExists)
	case *sqlplan.DropDatabase:
		if err := eng.DropDatabase(ctx, st.Name, st.IfExists, st.Cascade); err != nil {
			return err
		}
		if strings.EqualFold(st.Name, s.Database) {
			s.Database = metadata.DefaultDatabase
		}
		// The engine forgot the tables; their lake files go with them.
		return s.Tiering.RemoveDroppedLakes(context.WithoutCancel(ctx))
	case *sqlplan.CreateTable:
		desc := st.Table
		desc.Path = s.path(desc.Path)
		if err := s.foreignKeys(ctx, &desc, st.IfNotExists); err != nil {
			return err
		}
		if _, err := eng.CreateTable(ctx, desc, st.IfNotExists); err != nil {
			return err
		}
		// Clauses of the MySQL dialect that have no effect here (secondary
		// indexes, ENGINE, ...) are said once, to the connector's logger.
		if l := s.Logger; l != nil {
			for _, n := range st.Notes {
				l.InfoContext(ctx, "CREATE TABLE: "+n, "table", desc.Path.String())
			}
		}
		return nil
	case *sqlplan.CreateView:
		return s.createView(ctx, st)
	case *sqlplan.DropView:
		return s.dropView(ctx, st)
	case *sqlplan.DropTable:
		if err := s.checkDropReferenced(ctx, s.path(st.Table)); err != nil {
			return err
		}
		if err := eng.DropTable(ctx, s.path(st.Table), st.IfExists); err != nil {
			return err
		}
		// The engine forgot the table; its lake files go with it.
		return s.Tiering.RemoveDroppedLakes(context.WithoutCancel(ctx))
	case *sqlplan.AddPartition:
		_, err := eng.CreatePartition(ctx, s.path(st.Table), specMap(st.Spec), st.IfNotExists)
		return err
	case *sqlplan.DropPartition:
		return eng.DropPartition(ctx, s.path(st.Table), specMap(st.Spec), st.IfExists)
	case *sqlplan.SetOptions:
		_, err := eng.AlterTable(ctx, s.path(st.Table), st.Options)
		return err
	case *sqlplan.CreateIndex:
		_, err := eng.CreateIndex(ctx, s.path(st.Table), st.Index, st.IfNotExists)
		return err
	case *sqlplan.DropIndex:
		_, err := eng.DropIndex(ctx, s.path(st.Table), st.Name, st.IfExists)
		return err
	case *sqlplan.AddForeignKey:
		return s.addForeignKey(ctx, st)
	case *sqlplan.DropConstraint:
		return s.dropConstraint(ctx, st)
	case *sqlplan.AddColumn:
		_, err := eng.AddColumns(ctx, s.path(st.Table), st.Columns)
		return err
	case *sqlplan.Use:
		dbs, err := eng.ListDatabases(ctx)
		if err != nil {
			return err
		}
		for _, d := range dbs {
			if strings.EqualFold(d, st.Database) {
				s.Database = d
				return nil
			}
		}
		return fmt.Errorf("database %s does not exist: %w", st.Database, metadata.ErrNotFound)
	}
	return fmt.Errorf("statement %T: %w", st, metadata.ErrUnsupported)
}

func specMap(spec []sqlplan.PartitionValue) map[string]string {
	m := make(map[string]string, len(spec))
	for _, kv := range spec {
		m[kv.Key] = kv.Value
	}
	return m
}

// call runs a procedure and returns its result rows.
func (s *Session) call(ctx context.Context, c *sqlplan.Call, args []sqlplan.Arg) (*Result, error) {
	if err := s.checkTxStatement("CALL " + c.Procedure); err != nil {
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
		snaps, err := s.Engine.TakeKvSnapshots(ctx, path)
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
		return staticResult([]Column{
			{Name: "partition", Type: metadata.StringType(), Nullable: true},
			{Name: "bucket", Type: metadata.IntType()},
			{Name: "snapshot_id", Type: metadata.BigIntType()},
			{Name: "log_offset", Type: metadata.BigIntType()},
		}, rows)
	case "sys.tier":
		path, err := s.tableArg(c, vals)
		if err != nil {
			return nil, err
		}
		id, err := s.Tiering.Tier(ctx, path)
		if err != nil {
			return nil, err
		}
		return staticResult([]Column{{Name: "snapshot_id", Type: metadata.BigIntType()}}, [][]any{{id}})
	case "sys.auto_partition":
		path, err := s.tableArg(c, vals)
		if err != nil {
			return nil, err
		}
		res, err := s.Engine.AutoPartition(ctx, path)
		if err != nil {
			return nil, err
		}
		var rows [][]any
		for _, name := range res.Created {
			rows = append(rows, []any{"created", name})
		}
		for _, name := range res.Dropped {
			rows = append(rows, []any{"dropped", name})
		}
		return staticResult([]Column{{Name: "action", Type: metadata.StringType()}, {Name: "partition", Type: metadata.StringType()}}, rows)
	case "sys.drop_expired":
		if len(vals) != 0 {
			return nil, fmt.Errorf("%s takes no arguments; got %d: %w", c.Procedure, len(vals), metadata.ErrInvalidValue)
		}
		n, err := s.Engine.DropExpired(ctx, time.Now())
		if err != nil {
			return nil, err
		}
		return staticResult([]Column{{Name: "segments_removed", Type: metadata.BigIntType()}}, [][]any{{int64(n)}})
	}
	return nil, fmt.Errorf("unknown procedure %s (known: sys.kv_snapshot, sys.tier, sys.drop_expired, sys.auto_partition): %w", c.Procedure, metadata.ErrNotFound)
}

// tableArg reads the single table-name argument of a procedure.
func (s *Session) tableArg(c *sqlplan.Call, vals []any) (metadata.TablePath, error) {
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
