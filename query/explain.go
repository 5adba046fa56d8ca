package query

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/sqlplan"
)

// explainLines answers EXPLAIN (the plan) and EXPLAIN ANALYZE (the plan,
// then what running it read).
func (s *Session) explainLines(ctx context.Context, st *sqlplan.Explain, args []sqlplan.Arg) ([]string, error) {
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

// explainAnalyze binds a SELECT and answers EXPLAIN ANALYZE of it
// (Session.Analyze): the plan, then what running it read.
func (s *Session) explainAnalyze(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) ([]string, error) {
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	return s.Analyze(ctx, sp)
}

func (s *Session) explain(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) ([]string, error) {
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	if sp.Source != nil {
		// Opening plans every table and decides how each join runs,
		// which the tree then shows; nothing is read.
		lines, err := s.explainTreeOf(ctx, sp)
		if err != nil {
			return nil, err
		}
		return s.explainSubqueries(ctx, sp, lines)
	}
	lines, err := s.Explain(ctx, sp)
	if err != nil {
		return nil, err
	}
	return s.explainSubqueries(ctx, sp, lines)
}

// explainCompound prints the plan of a set operation, each SELECT as
// EXPLAIN prints it alone.
func (s *Session) explainCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
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
func (s *Session) explainSelectPlan(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	if sp.Source != nil {
		return s.ExplainTree(ctx, sp, nil)
	}
	return s.Explain(ctx, sp)
}

// analyzeCompound runs a set operation to its end and prints its plan
// with the rows it yielded.
func (s *Session) analyzeCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
	lines, err := s.explainCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	op, err := OpenCompound(ctx, s, cp, s.Exec)
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
