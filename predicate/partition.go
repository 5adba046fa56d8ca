package predicate

import (
	"fmt"
	"slices"

	"github.com/flusslite/fluss/metadata"
)

// Columns returns the column indexes p reads, ascending, without repeats.
func Columns(p P) []int {
	var out []int
	var walk func(P)
	walk = func(p P) {
		switch p := p.(type) {
		case *Leaf:
			out = append(out, p.Column)
		case *And:
			for _, c := range p.Children {
				walk(c)
			}
		case *Or:
			for _, c := range p.Children {
				walk(c)
			}
		case *Not:
			walk(p.Child)
		}
	}
	walk(p)
	slices.Sort(out)
	return slices.Compact(out)
}

// rowValues is a Row over a slice indexed by table column; columns it does
// not hold read as NULL.
type rowValues []any

func (r rowValues) Value(column int) any {
	if column < 0 || column >= len(r) {
		return nil
	}
	return r[column]
}

// PartitionRow returns a Row, indexed by table column, that holds the typed
// values of one partition in its partition-key columns. values are the
// partition's rendered values in partition-key order (PartitionInfo.Values);
// each is parsed as its key's type, so predicates compare them typed: an
// INT partition 10 is greater than 2.
func PartitionRow(table *metadata.TableInfo, values []string) (Row, error) {
	keys, err := table.Schema.Indexes(table.PartitionKeys)
	if err != nil {
		return nil, fmt.Errorf("partition keys of %s: %w", table.Path, err)
	}
	if len(values) != len(keys) {
		return nil, fmt.Errorf("%w: partition of %s has %d values for %d partition keys",
			metadata.ErrInvalidValue, table.Path, len(values), len(keys))
	}
	row := make(rowValues, len(table.Schema.Columns))
	for i, col := range keys {
		c := table.Schema.Columns[col]
		v, err := metadata.ParsePartitionValue(c.Type, values[i])
		if err != nil {
			return nil, fmt.Errorf("partition key %s of %s: %w", c.Name, table.Path, err)
		}
		row[col] = v
	}
	return row, nil
}

// FilterPartitions returns, in their given order, the partitions of table
// whose typed values make filter TRUE. Column indexes in filter are table
// column indexes and must all be partition keys; a filter reading any other
// column is refused rather than evaluated against a row that would read it
// as NULL and prune partitions holding matching rows. A nil filter keeps
// every partition.
func FilterPartitions(table *metadata.TableInfo, parts []metadata.PartitionInfo, filter P) ([]metadata.PartitionInfo, error) {
	if filter == nil {
		return slices.Clone(parts), nil
	}
	keys := table.PartitionKeyIndexes()
	for _, col := range Columns(filter) {
		if !slices.Contains(keys, col) {
			name := fmt.Sprintf("#%d", col)
			if col >= 0 && col < len(table.Schema.Columns) {
				name = table.Schema.Columns[col].Name
			}
			return nil, fmt.Errorf("%w: partition filter %s reads column %s, which is not a partition key of %s",
				metadata.ErrUnsupported, filter, name, table.Path)
		}
	}
	var out []metadata.PartitionInfo
	for _, part := range parts {
		keep, err := partitionMayMatch(table, part, filter)
		if err != nil {
			return nil, fmt.Errorf("partition %q: %w", part.Name, err)
		}
		if keep {
			out = append(out, part)
		}
	}
	return out, nil
}

// partitionMayMatch tests filter on a partition's values. A partition
// whose name is coarser than its values (metadata.ParsePartitionRange)
// holds a range of them: it is kept unless the range rules every row out,
// and its rows are filtered again (pushdown keeps such keys' conjuncts in
// the post filter).
func partitionMayMatch(table *metadata.TableInfo, part metadata.PartitionInfo, filter P) (bool, error) {
	keys, err := table.Schema.Indexes(table.PartitionKeys)
	if err != nil {
		return false, fmt.Errorf("partition keys of %s: %w", table.Path, err)
	}
	if len(part.Values) != len(keys) {
		return false, fmt.Errorf("%w: partition of %s has %d values for %d partition keys",
			metadata.ErrInvalidValue, table.Path, len(part.Values), len(keys))
	}
	st := partitionStats{lo: map[int]any{}, hi: map[int]any{}}
	coarse := false
	for i, col := range keys {
		c := table.Schema.Columns[col]
		lo, hi, err := metadata.ParsePartitionRange(c.Type, part.Values[i])
		if err != nil {
			return false, fmt.Errorf("partition key %s of %s: %w", c.Name, table.Path, err)
		}
		st.lo[col], st.hi[col] = lo, hi
		coarse = coarse || metadata.Compare(lo, hi) != 0
	}
	if coarse {
		return MaybeTest(filter, st), nil
	}
	row := make(rowValues, len(table.Schema.Columns))
	for col, v := range st.lo {
		row[col] = v
	}
	return Test(filter, row), nil
}

// partitionStats describes the rows of one partition: every key column
// lies within [lo, hi] and is never NULL. Its row count is one, as good as
// any other: MaybeTest compares it only with the null count, zero.
type partitionStats struct{ lo, hi map[int]any }

func (s partitionStats) RowCount() int64 { return 1 }

func (s partitionStats) Min(column int) (any, bool) {
	v, ok := s.lo[column]
	return v, ok
}

func (s partitionStats) Max(column int) (any, bool) {
	v, ok := s.hi[column]
	return v, ok
}

func (s partitionStats) NullCount(column int) (int64, bool) {
	_, ok := s.lo[column]
	return 0, ok
}
