package query

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// createTableAs runs CREATE TABLE t AS query. The query is bound and read
// to its end first, through the read path of any SELECT and charged to
// memory.limit as INSERT ... SELECT is, so a query that fails leaves no
// table behind; then the table is created with the query's output columns
// (nullable, except the primary key's) and the rows are written in one
// commit. A write that fails drops the new table again, so the statement
// leaves a table filled with every row or no table.
func (s *Session) createTableAs(ctx context.Context, st *sqlplan.CreateTableAs, args []sqlplan.Arg) (ExecResult, error) {
	if err := s.checkTxStatement("DDL"); err != nil {
		return ExecResult{}, err
	}
	eng := s.Engine
	desc := st.Table
	desc.Path = s.path(desc.Path)
	if desc.Path.Database == InfoSchemaDB {
		return ExecResult{}, fmt.Errorf("cannot create table %s: information_schema is read-only: %w", desc.Path, metadata.ErrReadOnly)
	}
	if st.IfNotExists {
		_, err := eng.TableInfo(ctx, desc.Path)
		if err == nil {
			return ExecResult{}, nil
		}
		if !errors.Is(err, metadata.ErrNotFound) {
			return ExecResult{}, err
		}
	}
	sp, err := s.bindSelect(ctx, st.Select, args)
	if err != nil {
		return ExecResult{}, err
	}
	cols := ResultColumns(sp)
	types := make([]metadata.DataType, len(cols))
	desc.Schema.Columns = make([]metadata.Column, len(cols))
	for i, c := range cols {
		types[i] = c.Type
		desc.Schema.Columns[i] = metadata.Column{Name: c.Name, Type: c.Type}
	}
	// The table's definition is checked before the query runs, so that a
	// bad key or option is reported without reading anything.
	if _, err := metadata.NewTableInfo(desc, 1, 1, time.Now()); err != nil {
		return ExecResult{}, fmt.Errorf("CREATE TABLE ... AS: %w", err)
	}
	op, err := s.Open(ctx, sp)
	if err != nil {
		return ExecResult{}, err
	}
	rows, err := collectRows(ctx, op, types, &rowBudget{limit: s.MemoryLimit, op: "CREATE TABLE ... AS"})
	if err != nil {
		return ExecResult{}, err
	}
	info, err := eng.CreateTable(ctx, desc, false)
	if err != nil {
		return ExecResult{}, err
	}
	if len(rows) == 0 {
		return ExecResult{}, nil
	}
	w := storage.Write{Path: info.Path, Kind: storage.WriteAppend, Rows: rows}
	if info.HasPrimaryKey() {
		w.Kind = storage.WriteUpsert
	}
	n, err := s.apply(ctx, w)
	if err != nil {
		// The table is this statement's; dropping it undoes the statement.
		if derr := eng.DropTable(context.WithoutCancel(ctx), info.Path, false); derr != nil {
			return ExecResult{}, errors.Join(fmt.Errorf("CREATE TABLE ... AS: %w", err),
				fmt.Errorf("dropping the new table %s again: %w", info.Path, derr))
		}
		return ExecResult{}, fmt.Errorf("CREATE TABLE ... AS: %w", err)
	}
	return ExecResult{RowsAffected: n}, nil
}
