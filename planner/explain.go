package planner

import (
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// scanTyper is implemented by planners that know their scan type.
type scanTyper interface {
	ScanType() ScanType
}

// TypeOf is the scan type of a planner over table: the planner's own
// ScanType when it has one (so a ChangelogPlanner reads as Append whatever
// table it is given); otherwise Upsert for a primary-key table, else
// Append, prefixed by Lake exactly when the planner's probe found a
// readable lake snapshot.
func TypeOf(table metadata.TableInfo, p SplitPlanner) ScanType {
	if st, ok := p.(scanTyper); ok {
		return st.ScanType()
	}
	lake := p != nil && p.HasLakeSnapshot()
	switch {
	case table.HasPrimaryKey() && lake:
		return TypeLakeUpsert
	case table.HasPrimaryKey():
		return TypeUpsert
	case lake:
		return TypeLakeAppend
	}
	return TypeAppend
}

// Explain renders a planned scan as EXPLAIN's lines (DESIGN §6):
//
//	FlussScan: [db.t], Type: [Append] [PushedPredicates: ...] [PartitionFilter: ...] [Buckets: b, ... of n] [Limit: n] [TimeRange: [s, e)]
//	Branch: log-only | Branch: lake-union (snapshot N) | Branch: incremental
//	PostFilter: c1 AND c2
//	Split: log partition=<name|-> bucket=<n> log=<start>..<stop>
//
// Bracketed parts appear only when present; predicates print as SQL with
// their conjuncts separated by ", ". postFilter holds the residual
// conjuncts already rendered as SQL; the line is left out when it is
// empty. splits are printed in the order given.
func Explain(table metadata.TableInfo, spec ScanSpec, p SplitPlanner, splits []Split, postFilter []string) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "FlussScan: [%s], Type: [%s]", table.Path, TypeOf(table, p))
	if s := conjuncts(spec.PushedPredicate); s != "" {
		fmt.Fprintf(&b, " [PushedPredicates: %s]", s)
	}
	if s := conjuncts(spec.PartitionFilter); s != "" {
		fmt.Fprintf(&b, " [PartitionFilter: %s]", s)
	}
	if spec.Buckets != nil {
		ids := make([]string, len(spec.Buckets))
		for i, id := range spec.Buckets {
			ids[i] = fmt.Sprint(id)
		}
		fmt.Fprintf(&b, " [Buckets: %s of %d]", strings.Join(ids, ", "), table.NumBuckets)
	}
	if spec.Limit >= 0 {
		fmt.Fprintf(&b, " [Limit: %d]", spec.Limit)
	}
	if tr, ok := p.(timeRanger); ok {
		fmt.Fprintf(&b, " [TimeRange: %s]", tr.TimeRange())
	}
	lines := []string{b.String(), branchLine(p)}
	if len(postFilter) > 0 {
		lines = append(lines, "PostFilter: "+strings.Join(postFilter, " AND "))
	}
	for _, s := range splits {
		lines = append(lines, splitLine(s))
	}
	return lines
}

func conjuncts(p predicate.P) string {
	cs := predicate.Conjuncts(p)
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// lakeSnapshotIDer is implemented by planners that report which lake
// snapshot their probe found.
type lakeSnapshotIDer interface {
	LakeSnapshotID() (int64, bool)
}

// timeRanger is implemented by the planner of an incremental read.
type timeRanger interface {
	TimeRange() TimeRange
}

func branchLine(p SplitPlanner) string {
	if _, ok := p.(timeRanger); ok {
		return "Branch: incremental"
	}
	if p == nil || !p.HasLakeSnapshot() {
		return "Branch: log-only"
	}
	if l, ok := p.(lakeSnapshotIDer); ok {
		if id, ok := l.LakeSnapshotID(); ok {
			return fmt.Sprintf("Branch: lake-union (snapshot %d)", id)
		}
	}
	return "Branch: lake-union"
}

// splitLine prints one split; fields that do not apply to its kind are
// left out.
func splitLine(s Split) string {
	if str, ok := s.(fmt.Stringer); ok {
		return "Split: " + str.String()
	}
	return "Split: " + splitHead(s)
}

// splitHead is the part every split kind prints: kind, partition, bucket.
func splitHead(s Split) string {
	part := s.PartitionName()
	if part == "" {
		part = "-"
	}
	return fmt.Sprintf("%s partition=%s bucket=%d", s.Kind(), part, s.Bucket().Bucket)
}
