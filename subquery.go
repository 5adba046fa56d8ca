package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// subqueryRunner runs the subqueries of a statement's query for exec: the
// inner query of each, bound with the outer row's values for a correlated
// one, is read through the read path of any SELECT (openSelect), so it is
// planned as a SELECT written with those values would be (point lookups,
// pushdown, partition pruning) and, inside a transaction, reads its view.
// exec caches the results; the rows a run holds count against
// memory.limit while it reads them.
type subqueryRunner struct{ s *Stmt }

var _ exec.SubqueryRunner = subqueryRunner{}

func (r subqueryRunner) RunSubquery(ctx context.Context, sub *sqlplan.Subquery, outer []any, max int) ([][]any, error) {
	s := r.s
	sp, err := sub.BindValues(ctx, sessionCatalog{eng: s.engine()}, outer)
	if err != nil {
		return nil, err
	}
	op, err := s.openSelect(ctx, sp, nil)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	cols := resultColumns(sp)
	width := sub.Width()
	budget := &rowBudget{limit: s.conn.connector.cfg.MemoryLimit, op: "a subquery"}
	var out [][]any
	for max < 0 || len(out) < max {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := 0; i < b.NumRows() && (max < 0 || len(out) < max); i++ {
			row := make([]any, width)
			for c := range row {
				row[c] = metadata.ValueAt(b.Rec.Column(c), cols[c].typ, b.Row(i))
			}
			if err := budget.charge(row); err != nil {
				return nil, fmt.Errorf("subquery %s: %w", sub, err)
			}
			out = append(out, row)
		}
	}
	return out, nil
}
