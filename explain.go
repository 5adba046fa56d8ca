package fluss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/sqlplan"
)

// explainLines answers EXPLAIN (the plan) and EXPLAIN ANALYZE (the plan,
// then what running it read).
func (s *Stmt) explainLines(ctx context.Context, st *sqlplan.Explain, args []sqlplan.Arg) ([]string, error) {
	switch {
	case st.Compound != nil && st.Analyze:
		return s.analyzeCompound(ctx, st.Compound, args)
	case st.Compound != nil:
		return s.explainCompound(ctx, st.Compound, args)
	case st.Analyze:
		return s.explainAnalyze(ctx, st.Select, args)
	}
	return s.explain(ctx, st.Select, args)
}

// explainAnalyze plans a SELECT, reads it to its end as the query would,
// and prints the plan with, under each split, what reading it took:
//
//	Split: log partition=- bucket=0 log=0..5000
//	  read: batches=3 skipped=47 row_groups=0/0 rows=300
//	Read: splits=1/1 batches=3 skipped=47 row_groups=0/0 rows=300 result_rows=12
//
// batches counts the record batches decoded (log batches, KV snapshot
// chunks) and skipped those the pushed predicate's statistics ruled out
// without reading their rows; row_groups are the lake's Parquet row groups
// decoded over those considered; rows are the rows the split yielded to
// the scan. The last line sums the splits (splits opened of planned) and
// counts the rows left after the post-scan filter, offset and limit.
//
// The query runs as SELECT runs it (the same scan options and operators
// above the scan), but its result rows are counted, not returned.
func (s *Stmt) explainAnalyze(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) ([]string, error) {
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	if sp.Source != nil {
		return s.analyzeTree(ctx, sp)
	}
	p, err := s.planScan(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer p.close()
	defer p.unpin()
	if p.lookup != nil {
		// A point lookup reads one key from the live KV state: no split,
		// nothing to count.
		return append(explainLookup(p), "Read: point lookup"), nil
	}
	post := make([]string, len(p.pd.PostFilter))
	for i, e := range p.pd.PostFilter {
		post[i] = e.String()
	}
	lines := planner.Explain(p.sel.Table, p.spec, p.planner, p.splits, post)
	scan, out, err := s.analyzeScan(ctx, p)
	if err != nil {
		return nil, err
	}
	return analyzeLines(lines, scan.Stats(), out), nil
}

// analyzeTree runs a query over a FROM tree to its end and prints its
// plan tree with the rows each node yielded and the time spent in it
// (its inputs included). Each table's lines are its plan as EXPLAIN
// prints it.
func (s *Stmt) analyzeTree(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	op, a, err := query.OpenAnalyzed(ctx, tableReader{s}, sp, s.execOptions())
	if err != nil {
		return nil, err
	}
	_, err = exec.Drain(ctx, op)
	if cerr := op.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	a.Ran()
	return s.explainTree(ctx, sp, a.Note)
}

// explainTree prints a query over a FROM tree as a tree, each table's
// read as EXPLAIN prints a query of that table; note adds figures.
func (s *Stmt) explainTree(ctx context.Context, sp *sqlplan.SelectPlan, note func(sqlplan.Relation) string) ([]string, error) {
	var lerr error
	lines := sqlplan.FormatTreeNotes(sp, func(leaf *sqlplan.SelectPlan) []string {
		ls, err := s.explainPlan(ctx, leaf)
		if err != nil && lerr == nil {
			lerr = err
		}
		return ls
	}, note)
	return lines, lerr
}

// analyzeScan runs a planned scan to its end, built as the query's own
// operator chain is (Stmt.open): the same scan options, then exec.Build's
// post-scan filter, aggregation, ordering, offset and limit. It returns
// the scan, for its statistics, and the number of result rows.
func (s *Stmt) analyzeScan(ctx context.Context, p *scanPlan) (*lakeunion.Scan, int64, error) {
	sp := p.sel
	table := &sp.Table
	scan := s.newScan(p)
	q := exec.QueryOf(sp)
	q.Filter = p.pd.PostFilter
	op, err := exec.Build(exec.Scan(scan), q, exec.NewLayout(len(table.Schema.Columns), sp.Columns), s.execOptions())
	if err != nil {
		scan.Close()
		return nil, 0, err
	}
	var rows int64
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			op.Close()
			return nil, 0, err
		}
		rows += int64(b.NumRows())
	}
	if err := op.Close(); err != nil {
		return nil, 0, err
	}
	return scan, rows, nil
}

// analyzeLines puts a read line under each split line of an EXPLAIN (the
// splits are printed in the order the scan read them) and a total at the
// end.
func analyzeLines(plan []string, stats []lakeunion.SplitStats, resultRows int64) []string {
	out := make([]string, 0, len(plan)+len(stats)+1)
	var total lakeunion.SplitStats
	opened, next := 0, 0
	for _, l := range plan {
		out = append(out, l)
		if !strings.HasPrefix(l, "Split: ") || next >= len(stats) {
			continue
		}
		st := stats[next]
		next++
		if !st.Opened {
			out = append(out, "  read: not opened")
			continue
		}
		opened++
		total.Batches += st.Batches
		total.BatchesSkipped += st.BatchesSkipped
		total.RowGroups += st.RowGroups
		total.RowGroupsSkipped += st.RowGroupsSkipped
		total.Rows += st.Rows
		out = append(out, "  read: "+readCounts(st))
	}
	return append(out, fmt.Sprintf("Read: splits=%d/%d %s result_rows=%d", opened, len(stats), readCounts(total), resultRows))
}

func readCounts(st lakeunion.SplitStats) string {
	return fmt.Sprintf("batches=%d skipped=%d row_groups=%d/%d rows=%d",
		st.Batches, st.BatchesSkipped, st.RowGroups, st.RowGroups+st.RowGroupsSkipped, st.Rows)
}
