package fluss

import (
	"context"

	"github.com/flusslite/fluss/sqlplan"
)

// fillAutoIncrement assigns generated values to the auto-increment column
// of plan's rows, where the statement left it out, before the rows are
// written. It reports the value LastInsertId returns; ok is false when the
// table has no auto-increment column or the statement assigned none.
func (s *Stmt) fillAutoIncrement(ctx context.Context, plan *sqlplan.InsertPlan) (lastID int64, ok bool, err error) {
	return 0, false, nil
}
