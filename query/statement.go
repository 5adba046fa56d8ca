package query

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// Query runs a parsed statement and returns its result. A statement that
// returns no rows (DDL, a write) runs and returns an empty result.
func (s *Session) Query(ctx context.Context, st sqlplan.Statement, args []sqlplan.Arg) (*Result, error) {
	switch st := st.(type) {
	case *sqlplan.Select:
		return s.Select(ctx, st, args, nil)
	case *sqlplan.Compound:
		return s.compound(ctx, st, args)
	case *sqlplan.Explain:
		lines, err := s.explainLines(ctx, st, args)
		if err != nil {
			return nil, err
		}
		rows := make([][]any, len(lines))
		for i, l := range lines {
			rows[i] = []any{l}
		}
		return staticResult([]Column{{Name: "plan", Type: metadata.StringType()}}, rows)
	case *sqlplan.ShowDatabases:
		dbs, err := s.Engine.ListDatabases(ctx)
		if err != nil {
			return nil, err
		}
		return staticResult([]Column{{Name: "database_name", Type: metadata.StringType()}}, column(dbs))
	case *sqlplan.ShowTables:
		db := st.Database
		if db == "" {
			db = s.Database
		}
		tables, err := s.showTables(ctx, db)
		if err != nil {
			return nil, err
		}
		return staticResult([]Column{{Name: "table_name", Type: metadata.StringType()}}, column(tables))
	case *sqlplan.ShowPartitions:
		return s.showPartitions(ctx, s.path(st.Table))
	case *sqlplan.ShowIndex:
		return s.showIndex(ctx, s.path(st.Table))
	case *sqlplan.Describe:
		rows, err := s.describe(ctx, s.path(st.Table))
		if isViewErr(err) {
			return s.describeView(ctx, s.path(st.Table))
		}
		return rows, err
	case *sqlplan.ShowCreateTable:
		if st.View {
			return s.showCreateView(ctx, s.path(st.Table))
		}
		rows, err := s.showCreateTable(ctx, s.path(st.Table))
		if isViewErr(err) {
			return s.showCreateView(ctx, s.path(st.Table))
		}
		return rows, err
	case *sqlplan.Call:
		return s.call(ctx, st, args)
	}
	if _, err := s.Run(ctx, st, args); err != nil {
		return nil, err
	}
	return emptyResult(), nil
}

// Run runs a parsed statement that returns no rows: a write, CREATE
// TABLE ... AS or DDL. A query is refused: its caller reads it through
// Query.
func (s *Session) Run(ctx context.Context, st sqlplan.Statement, args []sqlplan.Arg) (ExecResult, error) {
	var (
		n   int64
		err error
	)
	switch st := st.(type) {
	case *sqlplan.Insert:
		if st.Select != nil || st.Compound != nil {
			return s.insertSelect(ctx, st, args)
		}
		plan, err := sqlplan.BindInsert(ctx, st, s.Engine, s.Database, args)
		if err != nil {
			return ExecResult{}, err
		}
		return s.InsertValues(ctx, plan, plan.Rows)
	case *sqlplan.Update:
		n, err = s.update(ctx, st, args)
	case *sqlplan.Delete:
		n, err = s.delete(ctx, st, args)
	case *sqlplan.CreateTableAs:
		return s.createTableAs(ctx, st, args)
	case *sqlplan.Set:
		if s.Vars == nil {
			return ExecResult{}, fmt.Errorf("SET needs a connection's variables: %w", metadata.ErrUnsupported)
		}
		err = s.Vars.Apply(st)
	case *sqlplan.Select, *sqlplan.Compound, *sqlplan.Explain, *sqlplan.ShowDatabases, *sqlplan.ShowTables,
		*sqlplan.ShowPartitions, *sqlplan.ShowIndex, *sqlplan.Describe, *sqlplan.ShowCreateTable, *sqlplan.Call:
		err = fmt.Errorf("statement %T returns rows; run it as a query: %w", st, metadata.ErrUnsupported)
	default:
		err = s.ddl(ctx, st)
	}
	return ExecResult{RowsAffected: n}, err
}

// path fills in the current database of an unqualified table name.
func (s *Session) path(p metadata.TablePath) metadata.TablePath {
	if p.Database == "" {
		p.Database = s.Database
	}
	return p
}

// bindSelect binds a SELECT in the session's database, after checking
// its OPTIONS hint.
func (s *Session) bindSelect(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) (*sqlplan.SelectPlan, error) {
	if err := planner.CheckOptions(sel.Hints); err != nil {
		return nil, fmt.Errorf("OPTIONS hint: %w", err)
	}
	return sqlplan.BindSelect(ctx, sel, s.catalog(), s.Database, args)
}

// Select binds and opens a SELECT. onLookup, when not nil, is given the
// bound plan when it is a point lookup (a prepared statement keeps its
// shape).
func (s *Session) Select(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg, onLookup func(*sqlplan.SelectPlan)) (*Result, error) {
	streaming, start, bounded, err := planner.StreamOptions(sel.Hints, s.Location)
	if err != nil {
		return nil, fmt.Errorf("OPTIONS hint: %w", err)
	}
	if streaming {
		return s.selectStream(ctx, sel, args, start, bounded)
	}
	if err := s.lockRows(ctx, sel, args); err != nil {
		return nil, err
	}
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	var found func()
	if onLookup != nil {
		found = func() { onLookup(sp) }
	}
	op, err := s.OpenSelect(ctx, sp, found)
	if err != nil {
		return nil, err
	}
	return newResult(ResultColumns(sp), op), nil
}

// bindCompound binds a query with set operations; every SELECT's OPTIONS
// hint is checked as a lone SELECT's is.
func (s *Session) bindCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) (*sqlplan.CompoundPlan, error) {
	for _, sel := range c.Selects() {
		if err := planner.CheckOptions(sel.Hints); err != nil {
			return nil, fmt.Errorf("OPTIONS hint: %w", err)
		}
	}
	return sqlplan.BindCompound(ctx, c, s.catalog(), s.Database, args)
}

func (s *Session) compound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) (*Result, error) {
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	op, err := OpenCompound(ctx, s, cp, s.Exec)
	if err != nil {
		return nil, err
	}
	return newResult(compoundColumns(cp), op), nil
}

// readRows runs a bound SELECT and returns the values of exprs for every
// row it yields, in canonical form: the read half of UPDATE and DELETE.
func (s *Session) readRows(ctx context.Context, sp *sqlplan.SelectPlan, exprs []sqlplan.Expr) ([][]any, error) {
	rows, _, err := s.readRowsByKey(ctx, sp, exprs)
	return rows, err
}

// readRowsByKey is readRows that also reports whether the rows were read
// by the whole primary key (readKeyRow).
func (s *Session) readRowsByKey(ctx context.Context, sp *sqlplan.SelectPlan, exprs []sqlplan.Expr) (rows [][]any, byKey bool, err error) {
	if rows, ok, err := s.readKeyRow(ctx, sp, exprs); ok || err != nil {
		return rows, ok, err
	}
	op, err := s.OpenExprs(ctx, sp, exprs)
	if err != nil {
		return nil, false, err
	}
	types := make([]metadata.DataType, len(exprs))
	for i, e := range exprs {
		types[i] = e.Type()
	}
	rows, err = collectRows(ctx, op, types, nil)
	return rows, false, err
}

// readKeyRow is readRows of a read that fixes the whole primary key and
// nothing else, with columns and literals for exprs (what UPDATE ... SET
// c = ? WHERE id = ? and DELETE ... WHERE id = ? read): the row as the
// session sees it, with no plan, record or operator. ok is false when the
// read has another shape (or the lake holds the key's partition), and the
// caller reads through the operators.
func (s *Session) readKeyRow(ctx context.Context, sp *sqlplan.SelectPlan, exprs []sqlplan.Expr) (rows [][]any, ok bool, err error) {
	if sp.Virtual != "" || !sp.From || sp.Source != nil || !sp.Table.HasPrimaryKey() || plannedOnly(sp) ||
		sp.Limit == 0 || sp.Offset > 0 || IsInfoSchema(sp) {
		return nil, false, nil
	}
	for _, e := range exprs {
		switch x := e.(type) {
		case *sqlplan.ColumnRef:
			if x.Index < 0 || x.Index >= len(sp.Table.Schema.Columns) {
				return nil, false, nil
			}
		case *sqlplan.Literal:
		default:
			return nil, false, nil
		}
	}
	key, residual, ok := sqlplan.PointLookup(sp)
	if !ok || len(residual) > 0 {
		return nil, false, nil
	}
	delta, err := s.delta(sp)
	if err != nil {
		return nil, true, err
	}
	row, found, err := s.lookupKey(ctx, &sp.Table, delta, key)
	if errors.Is(err, storage.ErrLookupInLake) {
		return nil, false, nil
	}
	if err != nil || !found {
		return nil, true, err
	}
	out := make([]any, len(exprs))
	for i, e := range exprs {
		switch x := e.(type) {
		case *sqlplan.ColumnRef:
			out[i] = row[x.Index]
		case *sqlplan.Literal:
			if out[i], err = metadata.CoerceValue(x.T, x.Value); err != nil {
				return nil, true, err
			}
		}
	}
	return [][]any{out}, true, nil
}

// collectRows reads every row op yields, in canonical form (types are
// its columns'), and closes op. A non-nil budget is charged for the rows
// held.
func collectRows(ctx context.Context, op exec.Operator, types []metadata.DataType, budget *rowBudget) ([][]any, error) {
	defer op.Close()
	var out [][]any
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for r := 0; r < b.NumRows(); r++ {
			row := make([]any, len(types))
			for c := range types {
				row[c] = metadata.ValueAt(b.Rec.Column(c), types[c], b.Row(r))
			}
			out = append(out, row)
			if err := budget.charge(row); err != nil {
				return nil, err
			}
		}
	}
}

func column(values []string) [][]any {
	rows := make([][]any, len(values))
	for i, v := range values {
		rows[i] = []any{v}
	}
	return rows
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
