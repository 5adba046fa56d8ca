package fluss

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/sqlplan"
)

// bindCompound binds a query with set operations; every SELECT's OPTIONS
// hint is checked as a lone SELECT's is.
func (s *Stmt) bindCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) (*sqlplan.CompoundPlan, error) {
	for _, sel := range c.Selects() {
		if err := planner.CheckOptions(sel.Hints); err != nil {
			return nil, fmt.Errorf("OPTIONS hint: %w", err)
		}
	}
	return sqlplan.BindCompound(ctx, c, sessionCatalog{eng: s.engine()}, s.conn.database, args)
}

func (s *Stmt) compoundRows(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) (*Rows, error) {
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	op, err := s.openCompound(ctx, cp)
	if err != nil {
		return nil, err
	}
	return newRows(ctx, compoundColumns(cp), op, s.converter()), nil
}

// compoundColumns describes the result of a set operation: the first
// SELECT's names, the common types, nullable when any SELECT's column is.
func compoundColumns(cp *sqlplan.CompoundPlan) []resultColumn {
	cols := make([]resultColumn, len(cp.Output))
	for i, o := range cp.Output {
		cols[i] = resultColumn{name: o.Name, typ: compoundType(o.Expr.Type())}
	}
	for _, sp := range cp.Selects() {
		for i, c := range resultColumns(sp) {
			cols[i].nullable = cols[i].nullable || c.nullable
		}
	}
	return cols
}

// compoundType is the type of a column of a set operation's records: a
// column of NULLs only is a STRING one, as a lone SELECT NULL's is.
func compoundType(t metadata.DataType) metadata.DataType {
	if t.Root == 0 {
		return metadata.StringType()
	}
	return t
}

// openCompound builds the operators of a set operation: each SELECT
// through openSelect, as a lone SELECT is read, its outputs converted to
// the common types, then the operation, then its ORDER BY and LIMIT.
func (s *Stmt) openCompound(ctx context.Context, cp *sqlplan.CompoundPlan) (exec.Operator, error) {
	types := make([]metadata.DataType, len(cp.Output))
	for i, o := range cp.Output {
		types[i] = compoundType(o.Expr.Type())
	}
	left, err := s.openBranch(ctx, cp.Left, cp.Output)
	if err != nil {
		return nil, err
	}
	right, err := s.openBranch(ctx, cp.Right, cp.Output)
	if err != nil {
		left.Close()
		return nil, err
	}
	opts := s.execOptions()
	kind := map[sqlplan.SetOpKind]exec.SetOpKind{sqlplan.SetUnion: exec.SetUnion, sqlplan.SetIntersect: exec.SetIntersect, sqlplan.SetExcept: exec.SetExcept}[cp.Kind]
	op := exec.SetOp(left, right, kind, cp.All, types, opts)
	keys := make([]exec.SortKey, len(cp.OrderBy))
	for i, o := range cp.OrderBy {
		keys[i] = exec.SortKey{Col: o.Expr.(*sqlplan.ColumnRef).Index, Desc: o.Desc}
	}
	switch {
	case len(keys) > 0 && cp.Limit >= 0:
		op = exec.TopN(op, keys, types, cp.Offset+cp.Limit, opts)
		if cp.Offset > 0 {
			op = exec.Limit(op, cp.Offset, cp.Limit)
		}
	case len(keys) > 0:
		op = exec.Sort(op, keys, types, opts)
		if cp.Offset > 0 {
			op = exec.Limit(op, cp.Offset, -1)
		}
	case cp.Limit >= 0 || cp.Offset > 0:
		op = exec.Limit(op, cp.Offset, cp.Limit)
	}
	return op, nil
}

// openBranch opens one side of a set operation. A SELECT's record may
// carry hidden ORDER BY columns after its outputs; the conversion keeps
// the outputs only.
func (s *Stmt) openBranch(ctx context.Context, b sqlplan.CompoundBranch, out []sqlplan.OutputColumn) (exec.Operator, error) {
	if b.Compound != nil {
		return s.openCompound(ctx, b.Compound)
	}
	op, err := s.openSelect(ctx, b.Select, nil)
	if err != nil {
		return nil, err
	}
	n := len(b.Select.Output)
	cols := make([]int, n)
	names := make([]string, n)
	for i := range cols {
		cols[i], names[i] = i, out[i].Name
	}
	proj, err := exec.Project(op, b.Convert, names, exec.NewLayout(n, cols), memory.DefaultAllocator)
	if err != nil {
		op.Close()
		return nil, err
	}
	return proj, nil
}

// explainCompound prints the plan of a set operation, each SELECT as
// EXPLAIN prints it alone.
func (s *Stmt) explainCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	var lerr error
	lines := sqlplan.FormatCompound(cp, func(sp *sqlplan.SelectPlan) []string {
		ls, err := s.explainSelectPlan(ctx, sp)
		if err != nil && lerr == nil {
			lerr = err
		}
		return ls
	})
	return lines, lerr
}

// explainSelectPlan prints the plan of one bound SELECT of a set
// operation as EXPLAIN prints that SELECT alone.
func (s *Stmt) explainSelectPlan(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	if sp.Source != nil {
		return s.explainTree(ctx, sp, nil)
	}
	return s.explainPlan(ctx, sp)
}

// analyzeCompound runs a set operation to its end and prints its plan
// with the rows it yielded.
func (s *Stmt) analyzeCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
	lines, err := s.explainCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	op, err := s.openCompound(ctx, cp)
	if err != nil {
		return nil, err
	}
	n, err := exec.Drain(ctx, op)
	if cerr := op.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return append(lines, fmt.Sprintf("Read: result_rows=%d", n)), nil
}

// openInsertQuery opens the query of INSERT ... SELECT, with or without
// set operations, after checking that a transaction does not read what
// it wrote.
func (s *Stmt) openInsertQuery(ctx context.Context, plan *sqlplan.InsertPlan) (exec.Operator, []resultColumn, error) {
	if plan.Compound == nil {
		if err := s.checkTxRead(plan.Select); err != nil {
			return nil, nil, err
		}
		op, err := s.openSelect(ctx, plan.Select, nil)
		return op, resultColumns(plan.Select), err
	}
	for _, sp := range plan.Compound.Selects() {
		if err := s.checkTxRead(sp); err != nil {
			return nil, nil, err
		}
	}
	op, err := s.openCompound(ctx, plan.Compound)
	return op, compoundColumns(plan.Compound), err
}
