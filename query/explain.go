package query

import (
	"context"

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
	return s.ExplainCompound(ctx, cp, nil)
}

// analyzeCompound runs a set operation to its end and prints its plan
// with the rows and time of each node (AnalyzeCompound).
func (s *Session) analyzeCompound(ctx context.Context, c *sqlplan.Compound, args []sqlplan.Arg) ([]string, error) {
	cp, err := s.bindCompound(ctx, c, args)
	if err != nil {
		return nil, err
	}
	return s.AnalyzeCompound(ctx, cp)
}
