package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// ErrClosed is returned by Plan on a planner that has been closed.
var ErrClosed = errors.New("split planner is closed")

// planBase is what the append and upsert planners share: the one lake
// probe, the listing and typed pruning of partitions, and the batched
// offset lookups. It is not safe for concurrent use.
type planBase struct {
	admin Admin
	table metadata.TableInfo
	spec  ScanSpec
	// lake is the readable lake snapshot the probe found; valid when
	// hasLake.
	lake    metadata.LakeSnapshot
	hasLake bool
	// lakeSrc plans the lake files of the lake-union branch (WithLake).
	lakeSrc LakeSource
	// lakeOnly plans t$lake (WithLakeOnly).
	lakeOnly bool
	// dropped holds the partitions found dropped after they were listed
	// (dropped.go); ids are never reused, so it only grows.
	dropped map[int64]bool
	closed  bool
}

// newPlanBase probes the readable lake snapshot, once, if the table has
// the lake enabled.
func newPlanBase(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, opts []Option) (planBase, error) {
	var o plannerOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	// A read view answers the offsets, KV snapshots and lake probe.
	admin = atView(admin, o.view)
	b := planBase{admin: admin, table: table, spec: spec, lakeSrc: o.lake, lakeOnly: o.lakeOnly}
	if !table.Config.DatalakeEnabled {
		return b, nil
	}
	snap, ok, err := admin.ReadableLakeSnapshot(ctx, table.Path)
	if err != nil {
		return planBase{}, fmt.Errorf("probe the readable lake snapshot of %s: %w", table.Path, err)
	}
	b.lake, b.hasLake = snap, ok
	return b, nil
}

// HasLakeSnapshot reports whether the construction-time probe found a
// readable lake snapshot.
func (b *planBase) HasLakeSnapshot() bool { return b.hasLake }

// LakeSnapshotID returns the id of the readable lake snapshot the probe
// found, if any.
func (b *planBase) LakeSnapshotID() (int64, bool) { return b.lake.SnapshotID, b.hasLake }

// Close marks the planner closed. It holds no resources, so it never fails;
// it is idempotent.
func (b *planBase) Close() error {
	b.closed = true
	return nil
}

func (b *planBase) checkOpen() error {
	if b.closed {
		return fmt.Errorf("plan %s: %w", b.table.Path, ErrClosed)
	}
	return nil
}

// partitionRef is a partition the scan reads; for a table without
// partitions, the single pseudo partition with id NonPartitioned.
type partitionRef struct {
	id   int64
	name string
	// info is the partition as listed; nil for the pseudo partition.
	info *metadata.PartitionInfo
}

// matchingPartitions lists the table's partitions that the spec's partition
// filter keeps, in typed value order (a table without partitions has one
// pseudo partition).
func (b *planBase) matchingPartitions(ctx context.Context) ([]partitionRef, error) {
	_, kept, err := b.partitions(ctx)
	return kept, err
}

// partitions lists, with one ListPartitions call, every partition of the
// table and those the spec's partition filter keeps, in typed value
// order. A table without partitions has no partition and one pseudo
// partition kept.
func (b *planBase) partitions(ctx context.Context) ([]metadata.PartitionInfo, []partitionRef, error) {
	if !b.table.IsPartitioned() {
		return nil, []partitionRef{{id: metadata.NonPartitioned}}, nil
	}
	all, err := b.admin.ListPartitions(ctx, b.table.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("list partitions of %s: %w", b.table.Path, err)
	}
	kept, err := FilterPartitions(&b.table, all, b.spec.PartitionFilter)
	if err != nil {
		return nil, nil, err
	}
	if err := sortPartitions(&b.table, kept); err != nil {
		return nil, nil, err
	}
	out := make([]partitionRef, len(kept))
	for i := range kept {
		out[i] = partitionRef{id: kept[i].ID, name: kept[i].Name, info: &kept[i]}
	}
	return all, out, nil
}

// FilterPartitions returns the partitions of table that filter keeps,
// comparing typed values (an INT partition 10 is greater than 2). The
// filter's column indexes are table column indexes, all of partition keys.
// It is predicate.FilterPartitions, named here for the planner's readers.
func FilterPartitions(table *metadata.TableInfo, parts []metadata.PartitionInfo, filter predicate.P) ([]metadata.PartitionInfo, error) {
	return predicate.FilterPartitions(table, parts, filter)
}

// sortPartitions orders partitions by their typed values, key by key, then
// by id, so that plans and EXPLAIN are deterministic and read naturally
// (partition 2 before 10).
func sortPartitions(table *metadata.TableInfo, parts []metadata.PartitionInfo) error {
	keys := table.PartitionKeyIndexes()
	rows := make(map[int64]predicate.Row, len(parts))
	for _, p := range parts {
		row, err := predicate.PartitionRow(table, p.Values)
		if err != nil {
			return fmt.Errorf("partition %q: %w", p.Name, err)
		}
		rows[p.ID] = row
	}
	slices.SortStableFunc(parts, func(x, y metadata.PartitionInfo) int {
		for _, k := range keys {
			if c := metadata.Compare(rows[x.ID].Value(k), rows[y.ID].Value(k)); c != 0 {
				return c
			}
		}
		return compareInt64(x.ID, y.ID)
	})
	return nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// buckets lists every bucket of the given partitions that the spec reads
// (all, or its Buckets), in order.
func (b *planBase) buckets(parts []partitionRef) []metadata.TableBucket {
	out := make([]metadata.TableBucket, 0, len(parts)*b.table.NumBuckets)
	for _, p := range parts {
		for i := range b.table.NumBuckets {
			if b.readsBucket(int32(i)) {
				out = append(out, metadata.TableBucket{TableID: b.table.TableID, PartitionID: p.id, Bucket: int32(i)})
			}
		}
	}
	return out
}

// readsBucket reports whether the spec reads bucket id (of any
// partition): every bucket, unless bucket pruning left it out.
func (b *planBase) readsBucket(id int32) bool {
	return b.spec.Buckets == nil || slices.Contains(b.spec.Buckets, id)
}

// offsets asks for one offset of every bucket in a single call and
// checks that each bucket has one.
func (b *planBase) offsets(ctx context.Context, buckets []metadata.TableBucket, spec metadata.OffsetSpec) (map[metadata.TableBucket]int64, error) {
	what := "log start offsets"
	if spec == metadata.OffsetLatest {
		what = "high watermarks"
	}
	if len(buckets) == 0 {
		return nil, nil
	}
	buckets = b.withoutDropped(buckets)
	got, err := b.admin.ListOffsets(ctx, buckets, spec)
	for err != nil && b.noteDropped(ctx, err, partitionIDs(buckets)) {
		buckets = b.withoutDropped(buckets)
		got, err = b.admin.ListOffsets(ctx, buckets, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("list %s of %s: %w", what, b.table.Path, err)
	}
	for _, tb := range buckets {
		if _, ok := got[tb]; !ok {
			return nil, fmt.Errorf("list %s of %s: %w: no offset for %s", what, b.table.Path, metadata.ErrNotFound, tb)
		}
	}
	return got, nil
}
