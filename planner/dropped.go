package planner

import (
	"context"
	"errors"
	"slices"

	"github.com/flusslite/fluss/metadata"
)

// A plan lists a table's partitions once and then asks for their offsets
// and KV snapshots in later calls; a partition dropped in between is gone
// by then. The plan reads it as absent, as if it had listed the
// partitions after the drop, rather than failing the whole query for a
// partition it would have found empty or missing a moment later. Only
// the partitions the catalog no longer lists are treated so: any other
// ErrNotFound still fails the plan.

// noteDropped re-lists the table's partitions after err, an ErrNotFound
// from a call about the partitions ids, and records which of them are
// gone. It reports whether it found one, that is whether the call is
// worth making again without them.
func (b *planBase) noteDropped(ctx context.Context, err error, ids []int64) bool {
	if !errors.Is(err, metadata.ErrNotFound) || !b.table.IsPartitioned() {
		return false
	}
	all, lerr := b.admin.ListPartitions(ctx, b.table.Path)
	if lerr != nil {
		return false
	}
	listed := make(map[int64]bool, len(all))
	for _, p := range all {
		listed[p.ID] = true
	}
	found := false
	for _, id := range ids {
		if !listed[id] && !b.dropped[id] {
			if b.dropped == nil {
				b.dropped = map[int64]bool{}
			}
			b.dropped[id] = true
			found = true
		}
	}
	return found
}

// withoutDropped returns the buckets whose partition has not been found
// dropped, reusing buckets' array only when nothing was.
func (b *planBase) withoutDropped(buckets []metadata.TableBucket) []metadata.TableBucket {
	if len(b.dropped) == 0 {
		return buckets
	}
	return slices.DeleteFunc(slices.Clone(buckets), func(tb metadata.TableBucket) bool { return b.dropped[tb.PartitionID] })
}

func partitionIDs(buckets []metadata.TableBucket) []int64 {
	ids := make([]int64, 0, len(buckets))
	for _, tb := range buckets {
		ids = append(ids, tb.PartitionID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// dropSplitsOfDropped removes the splits that read the log or KV state of
// a partition found dropped while planning: there is nothing left of it
// to read. Lake splits stay, as the lake keeps a dropped partition's
// files.
func (b *planBase) dropSplitsOfDropped(splits []Split, err error) ([]Split, error) {
	if err != nil || len(b.dropped) == 0 {
		return splits, err
	}
	return slices.DeleteFunc(splits, func(s Split) bool {
		switch sp := s.(type) {
		case *LogSplit:
			return b.dropped[sp.TableBucket.PartitionID]
		case *KvLogSplit:
			return b.dropped[sp.TableBucket.PartitionID]
		}
		return false
	}), nil
}
