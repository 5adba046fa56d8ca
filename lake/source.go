package lake

import (
	"bytes"
	"context"
	"fmt"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// Source is the lake seen by the planner for one table: it takes the data
// predicates Parquet statistics can test and lists a snapshot's files
// pruned by them. It satisfies planner.LakeSource (without importing the
// planner) and is safe for concurrent use.
type Source struct {
	lake  *Lake
	table *metadata.TableInfo
}

// Source returns the lake source of table.
func (l *Lake) Source(table *metadata.TableInfo) *Source {
	return &Source{lake: l, table: table}
}

// WithFilters accepts the predicates whose every column has a type with
// Parquet statistics (metadata.DataType.StatsSupported) and returns the
// others as remaining. Accepted predicates only prune; they are never
// trusted to be exact.
func (s *Source) WithFilters(ps []predicate.P) (accepted, remaining []predicate.P) {
	for _, p := range ps {
		if s.testable(p) {
			accepted = append(accepted, p)
		} else {
			remaining = append(remaining, p)
		}
	}
	return accepted, remaining
}

func (s *Source) testable(p predicate.P) bool {
	if p == nil {
		return false
	}
	cols := predicate.Columns(p)
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		if c < 0 || c >= len(s.table.Schema.Columns) || !s.table.Schema.Columns[c].Type.StatsSupported() {
			return false
		}
	}
	return true
}

// Plan lists the files of lake snapshot snapshotID (Lake.SnapshotFiles)
// that may hold rows
// matching partitionFilter (exact, on the files' partition values, as
// predicate.FilterPartitions decides) and every filter (by the files'
// Parquet statistics), in manifest order.
//
// For a primary-key table a bucket's files are pruned by statistics only
// when their key ranges are disjoint, for the reason OpenSorted gives.
func (s *Source) Plan(ctx context.Context, snapshotID int64, partitionFilter predicate.P, filters []predicate.P) ([]metadata.LakeFile, error) {
	files, err := s.lake.SnapshotFiles(ctx, s.table.TableID, snapshotID)
	if err != nil {
		return nil, err
	}
	if partitionFilter != nil {
		if files, err = s.prunePartitions(files, partitionFilter); err != nil {
			return nil, err
		}
	}
	filter := predicate.AndOf(filters...)
	if filter == nil || len(files) == 0 {
		return append([]metadata.LakeFile(nil), files...), nil
	}
	for _, c := range predicate.Columns(filter) {
		if c < 0 || c >= len(s.table.Schema.Columns) {
			return nil, fmt.Errorf("%w: lake: filter %s reads column %d, out of range for %s", metadata.ErrInvalidValue, filter, c, s.table.Path)
		}
	}
	return s.pruneByStats(ctx, files, filter)
}

func (s *Source) prunePartitions(files []metadata.LakeFile, filter predicate.P) ([]metadata.LakeFile, error) {
	var parts []metadata.PartitionInfo
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f.PartitionName] {
			seen[f.PartitionName] = true
			parts = append(parts, metadata.PartitionInfo{Name: f.PartitionName, Values: f.PartitionValues})
		}
	}
	kept, err := predicate.FilterPartitions(s.table, parts, filter)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	keep := map[string]bool{}
	for _, p := range kept {
		keep[p.Name] = true
	}
	var out []metadata.LakeFile
	for _, f := range files {
		if keep[f.PartitionName] {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *Source) pruneByStats(ctx context.Context, files []metadata.LakeFile, filter predicate.P) ([]metadata.LakeFile, error) {
	cols := predicate.Columns(filter)
	type bucketKey struct {
		part   string
		bucket int32
	}
	type verdict struct {
		keep           bool
		minKey, maxKey []byte
		bucket         bucketKey
	}
	verdicts := make([]verdict, len(files))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pf, err := s.lake.openParquet(s.table, f)
		if err != nil {
			return nil, err
		}
		st := pf.fileStats(s.table, cols)
		verdicts[i] = verdict{keep: predicate.MaybeTest(filter, st), minKey: pf.minKey, maxKey: pf.maxKey, bucket: bucketKey{f.PartitionName, f.Bucket}}
		pf.Close()
	}
	if s.table.HasPrimaryKey() {
		// A bucket whose files overlap in key keeps all of them.
		byBucket := map[bucketKey][]int{}
		for i, v := range verdicts {
			byBucket[v.bucket] = append(byBucket[v.bucket], i)
		}
		for _, idx := range byBucket {
			if !disjointRanges(idx, func(i int) ([]byte, []byte) { return verdicts[i].minKey, verdicts[i].maxKey }) {
				for _, i := range idx {
					verdicts[i].keep = true
				}
			}
		}
	}
	var out []metadata.LakeFile
	for i, f := range files {
		if verdicts[i].keep {
			out = append(out, f)
		}
	}
	return out, nil
}

// disjointRanges reports whether the key ranges of the given items are all
// known and pairwise disjoint.
func disjointRanges(items []int, rangeOf func(int) ([]byte, []byte)) bool {
	for a := range items {
		loA, hiA := rangeOf(items[a])
		if len(items) > 1 && (loA == nil || hiA == nil) {
			return false
		}
		for b := a + 1; b < len(items); b++ {
			loB, hiB := rangeOf(items[b])
			if loB == nil || hiB == nil {
				return false
			}
			if bytes.Compare(loA, hiB) <= 0 && bytes.Compare(loB, hiA) <= 0 {
				return false
			}
		}
	}
	return true
}
