package query

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/sqlplan"
)

// Analysis counts what each node of a running query yielded and the time
// spent in it (its inputs included), for EXPLAIN ANALYZE. Its nodes are
// those sqlplan.FormatTreeNotes notes: the relations of a FROM tree, a
// query's *SelectPlan (its result) and each *CompoundPlan of a set
// operation.
type Analysis struct {
	nodes map[any]*nodeStats
	// ran is false when the query was only opened (EXPLAIN): then the
	// notes give the joins' strategies, not figures.
	ran      bool
	strategy map[*sqlplan.JoinRel]string
	// parallel says, per query over a FROM tree, how its filter and
	// aggregation over the joins run.
	parallel map[*sqlplan.SelectPlan]string
}

type nodeStats struct {
	// mu guards the counts when the parts of a split node run on
	// several workers; their times add up.
	mu   sync.Mutex
	rows int64
	took time.Duration
}

// Note renders a node's figures for sqlplan.FormatTreeNotes.
func (a *Analysis) Note(node any) string {
	var note string
	if j, ok := node.(*sqlplan.JoinRel); ok {
		note = a.strategy[j]
	}
	if sp, ok := node.(*sqlplan.SelectPlan); ok {
		note = a.parallel[sp]
	}
	if !a.ran {
		return note
	}
	st, ok := a.nodes[node]
	if !ok {
		return note
	}
	return note + fmt.Sprintf(" (rows=%d time=%s)", st.rows, st.took.Round(time.Microsecond))
}

// Ran marks the query as read to its end, so notes give its figures.
func (a *Analysis) Ran() { a.ran = true }

// decided records how a join runs, for EXPLAIN.
func (a *Analysis) decided(j *sqlplan.JoinRel, st strategy, lrows, rrows int64) {
	if a == nil {
		return
	}
	held, probe, heldRows := "right", lrows, rrows
	if st.buildLeft {
		held, probe, heldRows = "left", rrows, lrows
	}
	est := func(n int64) string {
		if n < 0 {
			return "?"
		}
		return fmt.Sprint(n)
	}
	if st.lookup {
		a.strategy[j] = fmt.Sprintf(" [Lookup: %s, probe ~%s rows]", held, est(probe))
		return
	}
	a.strategy[j] = fmt.Sprintf(" [Build: %s, ~%s rows]", held, est(heldRows))
}

// counted wraps a node's operator to count its rows and time.
type counted struct {
	in exec.Operator
	st *nodeStats
}

func (c *counted) Next(ctx context.Context) (exec.Batch, error) {
	start := time.Now()
	b, err := c.in.Next(ctx)
	took := time.Since(start)
	c.st.mu.Lock()
	c.st.took += took
	if err == nil {
		c.st.rows += int64(b.NumRows())
	}
	c.st.mu.Unlock()
	return b, err
}

func (c *counted) Close() error { return c.in.Close() }

// splitCounted is counted over an operator that can be split: each part
// counts into the same figures.
type splitCounted struct {
	counted
	split exec.Splitter
}

func (c *splitCounted) Split(ctx context.Context, n int) ([]exec.Operator, error) {
	parts, err := c.split.Split(ctx, n)
	if err != nil {
		return nil, err
	}
	for i, p := range parts {
		parts[i] = &counted{in: p, st: c.st}
	}
	return parts, nil
}

// track wraps op as node's when the query is analyzed.
func (a *Analysis) track(node any, op exec.Operator) exec.Operator {
	if a == nil {
		return op
	}
	st := &nodeStats{}
	a.nodes[node] = st
	if s, ok := op.(exec.Splitter); ok {
		return &splitCounted{counted: counted{in: op, st: st}, split: s}
	}
	return &counted{in: op, st: st}
}

func newAnalysis() *Analysis {
	return &Analysis{nodes: map[any]*nodeStats{}, strategy: map[*sqlplan.JoinRel]string{},
		parallel: map[*sqlplan.SelectPlan]string{}}
}

// OpenAnalyzed opens sp as Open does, recording how each join runs and
// counting rows and time at every node of its FROM tree and at its
// result. EXPLAIN opens and closes it; EXPLAIN ANALYZE reads it to its
// end first (then Ran).
func OpenAnalyzed(ctx context.Context, r Reader, sp *sqlplan.SelectPlan, opts exec.Options) (exec.Operator, *Analysis, error) {
	a := newAnalysis()
	op, err := open(ctx, r, sp, opts, a)
	if err != nil {
		return nil, nil, err
	}
	return a.track(sp, op), a, nil
}

// OpenCompoundAnalyzed opens a set operation as OpenCompound does,
// counting rows and time at each set operation, at each SELECT below it
// and at every node of their FROM trees.
func OpenCompoundAnalyzed(ctx context.Context, r Reader, cp *sqlplan.CompoundPlan, opts exec.Options) (exec.Operator, *Analysis, error) {
	a := newAnalysis()
	op, err := openCompound(ctx, r, cp, opts, a)
	if err != nil {
		return nil, nil, err
	}
	return op, a, nil
}

// aggregation records whether the query's filter and aggregation over
// its FROM tree run on several workers (why empty) or on one, for
// EXPLAIN.
func (a *Analysis) aggregation(sp *sqlplan.SelectPlan, threads int, why string) {
	if a == nil {
		return
	}
	if why == "" {
		a.parallel[sp] = fmt.Sprintf(" [Parallel: %d workers]", threads)
		return
	}
	a.parallel[sp] = " [Serial: " + why + "]"
}
