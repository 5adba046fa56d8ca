package query

import (
	"context"
	"fmt"
	"time"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/sqlplan"
)

// Analysis counts what each node of a running query yielded and the time
// spent in it (its inputs included), for EXPLAIN ANALYZE.
type Analysis struct {
	nodes map[sqlplan.Relation]*nodeStats
	top   nodeStats
}

type nodeStats struct {
	rows int64
	took time.Duration
}

// Note renders a node's figures for sqlplan.FormatTreeNotes: rel nil is
// the query's result.
func (a *Analysis) Note(rel sqlplan.Relation) string {
	st := &a.top
	if rel != nil {
		var ok bool
		if st, ok = a.nodes[rel]; !ok {
			return ""
		}
	}
	return fmt.Sprintf(" (rows=%d time=%s)", st.rows, st.took.Round(time.Microsecond))
}

// counted wraps a node's operator to count its rows and time.
type counted struct {
	in exec.Operator
	st *nodeStats
}

func (c *counted) Next(ctx context.Context) (exec.Batch, error) {
	start := time.Now()
	b, err := c.in.Next(ctx)
	c.st.took += time.Since(start)
	if err == nil {
		c.st.rows += int64(b.NumRows())
	}
	return b, err
}

func (c *counted) Close() error { return c.in.Close() }

// track wraps op as rel's when the query is analyzed.
func (a *Analysis) track(rel sqlplan.Relation, op exec.Operator) exec.Operator {
	if a == nil {
		return op
	}
	st := &nodeStats{}
	a.nodes[rel] = st
	return &counted{in: op, st: st}
}

// OpenAnalyzed opens sp as Open does, counting rows and time at every
// node of its FROM tree and at its result.
func OpenAnalyzed(ctx context.Context, r Reader, sp *sqlplan.SelectPlan, opts exec.Options) (exec.Operator, *Analysis, error) {
	a := &Analysis{nodes: map[sqlplan.Relation]*nodeStats{}}
	op, err := open(ctx, r, sp, opts, a)
	if err != nil {
		return nil, nil, err
	}
	return &counted{in: op, st: &a.top}, a, nil
}
