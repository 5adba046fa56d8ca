package query

import (
	"context"
	"fmt"
	"time"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/sqlplan"
)

// insertSelectRows binds an INSERT ... SELECT and runs its query through
// the read path of any SELECT, returning the rows to write, each converted
// to its target columns as a row of VALUES is. The query is read to its
// end before the statement writes anything, so a SELECT of the target
// table never reads the statement's own rows, and the write that follows
// is one commit, as for VALUES. Until then the rows are held in memory,
// charged to memory.limit (Session.MemoryLimit): the commit path takes a
// statement's rows whole.
func (s *Session) insertSelectRows(ctx context.Context, ins *sqlplan.Insert, args []sqlplan.Arg) (*sqlplan.InsertPlan, [][]any, error) {
	sels := []*sqlplan.Select{ins.Select}
	if ins.Compound != nil {
		sels = ins.Compound.Selects()
	}
	for _, sel := range sels {
		if err := planner.CheckOptions(sel.Hints); err != nil {
			return nil, nil, fmt.Errorf("OPTIONS hint: %w", err)
		}
	}
	// The session's catalog, so that the query may read
	// information_schema as a SELECT may.
	plan, err := sqlplan.BindInsert(ctx, ins, s.catalog(), s.Database, args)
	if err != nil {
		return nil, nil, err
	}
	if plan.Table.Path.Database == InfoSchemaDB {
		return nil, nil, fmt.Errorf("cannot INSERT INTO %s: information_schema is read-only: %w", plan.Table.Path, metadata.ErrReadOnly)
	}
	if err := s.checkTxWrite("INSERT", plan.Table.Path); err != nil {
		return nil, nil, err
	}
	op, cols, err := s.openInsertQuery(ctx, plan)
	if err != nil {
		return nil, nil, err
	}
	types := make([]metadata.DataType, len(cols))
	for i, c := range cols {
		types[i] = c.Type
	}
	rows, err := collectRows(ctx, op, types, &rowBudget{limit: s.MemoryLimit, op: "INSERT ... SELECT"})
	if err != nil {
		return nil, nil, err
	}
	for r, vals := range rows {
		if rows[r], err = plan.SelectRow(r, vals); err != nil {
			return nil, nil, fmt.Errorf("INSERT ... SELECT: %w", err)
		}
	}
	plan.Rows = rows
	return plan, rows, nil
}

// insertSelect runs INSERT ... SELECT: its query read to its end, then
// its rows written as InsertValues writes them.
func (s *Session) insertSelect(ctx context.Context, ins *sqlplan.Insert, args []sqlplan.Arg) (ExecResult, error) {
	plan, rows, err := s.insertSelectRows(ctx, ins, args)
	if err != nil {
		return ExecResult{}, err
	}
	return s.InsertValues(ctx, plan, rows)
}

// openInsertQuery opens the query of INSERT ... SELECT, with or without
// set operations. In a transaction it reads the transaction's earlier
// writes too, as any read there does.
func (s *Session) openInsertQuery(ctx context.Context, plan *sqlplan.InsertPlan) (exec.Operator, []Column, error) {
	if plan.Compound == nil {
		op, err := s.Open(ctx, plan.Select)
		return op, ResultColumns(plan.Select), err
	}
	op, err := OpenCompound(ctx, s, plan.Compound, s.Exec)
	return op, compoundColumns(plan.Compound), err
}

// rowBudget charges the rows a statement holds to memory.limit: an
// approximation of the bytes of their Go values. A nil budget charges
// nothing.
type rowBudget struct {
	limit int64 // <= 0: unlimited
	op    string
	used  int64
	rows  int64
}

func (b *rowBudget) charge(row []any) error {
	if b == nil {
		return nil
	}
	b.rows++
	b.used += 24 // the slice header
	for _, v := range row {
		b.used += valueBytes(v)
	}
	if b.limit > 0 && b.used > b.limit {
		return &exec.MemoryLimitError{Limit: b.limit, Op: b.op, Detail: fmt.Sprintf("%d rows read", b.rows)}
	}
	return nil
}

// valueBytes approximates the memory a canonical value holds: its
// interface word pair and what it points to.
func valueBytes(v any) int64 {
	const word = 16
	switch x := v.(type) {
	case nil:
		return word
	case string:
		return word + int64(len(x))
	case []byte:
		return word + 24 + int64(len(x))
	case []any:
		n := int64(word + 24)
		for _, e := range x {
			n += valueBytes(e)
		}
		return n
	case metadata.MapValue:
		n := int64(word + 48)
		for i := range x.Keys {
			n += valueBytes(x.Keys[i])
		}
		for i := range x.Values {
			n += valueBytes(x.Values[i])
		}
		return n
	case time.Time:
		return word + 24
	case metadata.DecimalValue:
		return word + 24
	}
	return word + 8
}
