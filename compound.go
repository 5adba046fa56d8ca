package fluss

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/query"
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
	op, err := query.OpenCompound(ctx, s.reader(), cp, s.execOptions())
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
		cols[i] = resultColumn{name: o.Name, typ: exec.ResultType(o.Expr.Type())}
	}
	for _, sp := range cp.Selects() {
		for i, c := range resultColumns(sp) {
			cols[i].nullable = cols[i].nullable || c.nullable
		}
	}
	return cols
}

// explainCompound prints the plan of a set operation, each SELECT as
// EXPLAIN prints it alone.
func (s *Stmt) explainCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	return s.reader().ExplainCompound(ctx, cp, nil)
}

// analyzeCompound runs a set operation to its end and prints its plan
// with the rows and time of each node (query.Session.AnalyzeCompound).
func (s *Stmt) analyzeCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	return s.reader().AnalyzeCompound(ctx, cp)
}

// openInsertQuery opens the query of INSERT ... SELECT, with or without
// set operations, after checking that a transaction does not read what
// it wrote.
func (s *Stmt) openInsertQuery(ctx context.Context, plan *sqlplan.InsertPlan) (exec.Operator, []resultColumn, error) {
	if plan.Compound == nil {
		if err := s.checkTxRead(plan.Select); err != nil {
			return nil, nil, err
		}
		op, err := s.reader().Open(ctx, plan.Select)
		return op, resultColumns(plan.Select), err
	}
	for _, sp := range plan.Compound.Selects() {
		if err := s.checkTxRead(sp); err != nil {
			return nil, nil, err
		}
	}
	op, err := query.OpenCompound(ctx, s.reader(), plan.Compound, s.execOptions())
	return op, compoundColumns(plan.Compound), err
}
