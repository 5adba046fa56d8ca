package query

import (
	"context"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Column describes one column of a statement's result.
type Column struct {
	Name     string
	Type     metadata.DataType
	Nullable bool
}

// Batch is what a Result yields: a record whose first columns are the
// result's, and the rows of it that are visible (exec's batch, with its
// selection vector).
type Batch = exec.Batch

// Result is the open result of a statement: its columns and the
// operators that yield its batches. It is used by one goroutine at a
// time; the caller must Close it, which stops the scan under it and
// releases what it holds.
type Result struct {
	Columns []Column
	op      exec.Operator
}

func newResult(cols []Column, op exec.Operator) *Result {
	return &Result{Columns: cols, op: op}
}

// Next returns the next batch, io.EOF after the last. A batch is valid
// until the following Next or Close.
func (r *Result) Next(ctx context.Context) (Batch, error) { return r.op.Next(ctx) }

// Close releases the result.
func (r *Result) Close() error { return r.op.Close() }

// staticResult is a result of rows built in memory (SHOW, DESCRIBE,
// EXPLAIN, CALL).
func staticResult(cols []Column, rows [][]any) (*Result, error) {
	rec, err := BuildRecord(columnsOf(cols), rows)
	if err != nil {
		return nil, err
	}
	return newResult(cols, NewStatic(rec)), nil
}

// emptyResult is the result of a statement that returns no rows.
func emptyResult() *Result {
	r, _ := staticResult(nil, nil) // no column, no row: nothing to fail
	return r
}

// columnsOf turns result columns into the schema columns of a record.
func columnsOf(cols []Column) []metadata.Column {
	mcols := make([]metadata.Column, len(cols))
	for i, c := range cols {
		mcols[i] = metadata.Column{Name: c.Name, Type: c.Type, NotNull: !c.Nullable}
	}
	return mcols
}

// ResultColumns describes the outputs of a plan: their names, types and
// nullability.
func ResultColumns(sp *sqlplan.SelectPlan) []Column {
	cols := make([]Column, len(sp.Output))
	for i, o := range sp.Output {
		t := o.Expr.Type()
		if t.Root == 0 {
			t = metadata.StringType() // a bare NULL
		}
		cols[i] = Column{Name: o.Name, Type: t, Nullable: nullable(sp, o.Expr)}
	}
	return cols
}

// nullable reports whether an output may be NULL: a NOT NULL column, a
// COUNT, or a constant other than NULL cannot (a column stays NOT NULL
// through GROUP BY); anything else may.
func nullable(sp *sqlplan.SelectPlan, e sqlplan.Expr) bool {
	switch x := e.(type) {
	case *sqlplan.ColumnRef:
		if !sp.From || x.Index < 0 || x.Index >= len(sp.Table.Schema.Columns) {
			return true
		}
		return !sp.Table.Schema.Columns[x.Index].NotNull
	case *sqlplan.Literal:
		return x.Value == nil
	case *sqlplan.Func:
		return x.Name != "count"
	}
	return true
}

// compoundColumns describes the result of a set operation: the first
// SELECT's names, the common types, nullable when any SELECT's column is.
func compoundColumns(cp *sqlplan.CompoundPlan) []Column {
	cols := make([]Column, len(cp.Output))
	for i, o := range cp.Output {
		cols[i] = Column{Name: o.Name, Type: exec.ResultType(o.Expr.Type())}
	}
	for _, sp := range cp.Selects() {
		for i, c := range ResultColumns(sp) {
			cols[i].Nullable = cols[i].Nullable || c.Nullable
		}
	}
	return cols
}

// ExecResult is what a statement that returns no rows reports.
type ExecResult struct {
	RowsAffected int64
	// LastInsertID is the last auto-increment value the statement
	// generated (see Session.InsertValues); valid when HasLastInsertID.
	LastInsertID    int64
	HasLastInsertID bool
}
