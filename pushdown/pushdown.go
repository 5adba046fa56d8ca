package pushdown

import (
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/sqlplan"
)

// Result is how a WHERE clause splits over a scan.
type Result struct {
	// PartitionFilter is the AND of the conjuncts that read only partition
	// keys and convert; it prunes partitions exactly and is never
	// evaluated again, except on a key whose partitions may be named
	// coarser than their values (TIME(p > 3) named to the millisecond by
	// earlier versions), whose conjuncts stay in PostFilter too. Nil:
	// every partition.
	PartitionFilter predicate.P
	// Pushed is the data predicate handed to the scan, which may skip
	// batches, files or row groups by statistics with it. Nil: none.
	Pushed predicate.P
	// PostFilter holds every other conjunct, pushed or not, in WHERE
	// order; the caller evaluates all of them above the scan.
	PostFilter []sqlplan.Expr
}

// LakeFilter is a lake source's WithFilters: it splits predicates into
// those it can test on its files' statistics and the rest.
type LakeFilter func(ps []predicate.P) (accepted, remaining []predicate.P)

// Split divides a bound WHERE clause (nil: none) over a scan of table. It
// never fails: a conjunct that does not convert stays in PostFilter.
func Split(table *metadata.TableInfo, where sqlplan.Expr) Result {
	return SplitWithLake(table, where, nil)
}

// SplitWithLake is Split for a scan whose table may push data predicates
// to its lake (DESIGN §5.2 (b)): when the log takes no pushed predicate (a
// primary-key table, or an INDEXED log) but the table is lake-enabled,
// the pushed predicate is the AND of the convertible non-partition
// conjuncts that lake accepts. With a log that pushes, lake is not asked:
// the same predicate reaches the lake too.
func SplitWithLake(table *metadata.TableInfo, where sqlplan.Expr, lake LakeFilter) Result {
	var res Result
	partKeys := table.PartitionKeyIndexes()
	push := pushesData(table)
	toLake := !push && lake != nil && table.Config.DatalakeEnabled
	var partition, pushed []predicate.P
	for _, c := range sqlplan.Conjuncts(where) {
		if onlyColumns(c, partKeys) {
			if p, ok := Convert(table, c); ok {
				partition = append(partition, p)
				if readsCoarseKey(table, c) {
					res.PostFilter = append(res.PostFilter, c)
				}
				continue
			}
		}
		res.PostFilter = append(res.PostFilter, c)
		if push || toLake {
			if p, ok := Convert(table, c); ok {
				pushed = append(pushed, p)
			}
		}
	}
	if toLake && len(pushed) > 0 {
		pushed, _ = lake(pushed)
	}
	res.PartitionFilter = predicate.AndOf(partition...)
	res.Pushed = predicate.AndOf(pushed...)
	return res
}

// pushesData reports whether the scan takes a pushed data predicate: a log
// table in ARROW format tests it against each record batch's statistics.
// An INDEXED log carries no statistics, and a primary-key table's changelog
// must be read whole for the merge by key; the lake source's share of
// those cases comes with the lake.
func pushesData(table *metadata.TableInfo) bool {
	return !table.HasPrimaryKey() && table.Config.LogFormat != metadata.LogFormatIndexed
}

// PrunePartitions returns the partitions of table that filter keeps,
// comparing typed values: each partition's rendered values are parsed as
// their key's type, so an INT partition 10 is greater than 2.
func PrunePartitions(table *metadata.TableInfo, parts []metadata.PartitionInfo, filter predicate.P) ([]metadata.PartitionInfo, error) {
	return predicate.FilterPartitions(table, parts, filter)
}

// readsCoarseKey reports whether e reads a partition key whose partitions
// may be named coarser than their values: pruning keeps such a partition
// when any of its values may match, so the rows must be tested too.
func readsCoarseKey(table *metadata.TableInfo, e sqlplan.Expr) bool {
	coarse := false
	walk(e, func(x sqlplan.Expr) {
		if c, ok := x.(*sqlplan.ColumnRef); ok && c.Index >= 0 && c.Index < len(table.Schema.Columns) {
			coarse = coarse || metadata.PartitionNamesMayBeCoarse(table.Schema.Columns[c.Index].Type)
		}
	})
	return coarse
}

// onlyColumns reports whether e reads at least one column and only columns
// of set.
func onlyColumns(e sqlplan.Expr, set []int) bool {
	if len(set) == 0 {
		return false
	}
	seen, only := false, true
	walk(e, func(x sqlplan.Expr) {
		switch x := x.(type) {
		case *sqlplan.ColumnRef:
			seen = true
			found := false
			for _, k := range set {
				found = found || k == x.Index
			}
			only = only && found
		case *sqlplan.Param:
			// Unbound: it cannot convert, so leave the conjunct residual.
			only = false
		}
	})
	return seen && only
}

// walk calls f on e and every expression below it.
func walk(e sqlplan.Expr, f func(sqlplan.Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch e := e.(type) {
	case *sqlplan.Compare:
		walk(e.L, f)
		walk(e.R, f)
	case *sqlplan.And:
		walk(e.L, f)
		walk(e.R, f)
	case *sqlplan.Or:
		walk(e.L, f)
		walk(e.R, f)
	case *sqlplan.Not:
		walk(e.E, f)
	case *sqlplan.IsNull:
		walk(e.E, f)
	case *sqlplan.In:
		walk(e.E, f)
		for _, x := range e.List {
			walk(x, f)
		}
	case *sqlplan.Between:
		walk(e.E, f)
		walk(e.Lo, f)
		walk(e.Hi, f)
	case *sqlplan.Like:
		walk(e.E, f)
		walk(e.Pattern, f)
	case *sqlplan.Arith:
		walk(e.L, f)
		walk(e.R, f)
	case *sqlplan.Neg:
		walk(e.E, f)
	case *sqlplan.Func:
		for _, x := range e.Args {
			walk(x, f)
		}
	case *sqlplan.Case:
		walk(e.Operand, f)
		for _, w := range e.Whens {
			walk(w.Cond, f)
			walk(w.Result, f)
		}
		walk(e.Else, f)
	case *sqlplan.Cast:
		walk(e.E, f)
	}
}
