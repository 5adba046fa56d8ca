package fluss

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/sqlplan"
)

// openNoFrom builds the operators of a SELECT without FROM (SELECT 1,
// SELECT VERSION()): the query above a single row that has no columns.
func (s *Stmt) openNoFrom(sp *sqlplan.SelectPlan) (exec.Operator, error) {
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	q := exec.QueryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	op, err := exec.Build(&staticOp{rec: one}, q, nil, s.execOptions())
	if err != nil {
		one.Release()
		return nil, err
	}
	return op, nil
}
