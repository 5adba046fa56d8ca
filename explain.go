package fluss

import (
	"context"

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

// explainAnalyze binds a SELECT and answers EXPLAIN ANALYZE of it
// (query.Session.Analyze): the plan, then what running it read.
func (s *Stmt) explainAnalyze(ctx context.Context, sel *sqlplan.Select, args []sqlplan.Arg) ([]string, error) {
	sp, err := s.bindSelect(ctx, sel, args)
	if err != nil {
		return nil, err
	}
	return s.reader().Analyze(ctx, sp)
}
