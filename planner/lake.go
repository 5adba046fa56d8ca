package planner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// LakeSource is the lake's side of planning a lake-union read: which data
// predicates it can test on Parquet statistics, and which files of a lake
// snapshot a scan must read. The lake package's per-table source
// satisfies it; the planner never opens a file.
type LakeSource interface {
	// WithFilters splits predicates into those the source can test on
	// Parquet statistics and the rest.
	WithFilters(ps []predicate.P) (accepted, remaining []predicate.P)
	// Plan lists the files of a snapshot, pruned by the accepted filters
	// and the partition filter. Pruning is an optimisation: a file may be
	// listed that holds no matching row, never left out when it holds one.
	Plan(ctx context.Context, snapshotID int64, partitionFilter predicate.P, filters []predicate.P) ([]metadata.LakeFile, error)
}

// Option configures a planner.
type Option func(*plannerOptions)

type plannerOptions struct {
	lake     LakeSource
	lakeOnly bool
	view     ReadView       // WithReadView
	loc      *time.Location // WithLocation
	wholeLog bool           // WithWholeBucketSplits
}

// WithLake gives the planner the lake source its lake-union branch plans
// the lake files with. A planner whose probe finds a readable lake
// snapshot cannot plan without one.
func WithLake(src LakeSource) Option {
	return func(o *plannerOptions) { o.lake = src }
}

// WithLakeOnly makes the planner plan the virtual table t$lake: the files
// of the readable lake snapshot alone, as lake splits (one per partition
// and bucket with files), without any log tail or KV snapshot. Without a
// readable snapshot (or with the lake disabled) it plans no split at all.
func WithLakeOnly() Option {
	return func(o *plannerOptions) { o.lakeOnly = true }
}

// FirstLakeOnlyPartitionID is the synthetic partition id of the first
// lake-only partition of a plan: a partition that exists in the lake
// snapshot but no longer in the engine (dropped, or removed by retention).
// The next ones count down from it (-3, -4, ...), in partition value
// order, so every lake-only partition of a plan has its own id. The ids
// only tell splits apart; they name nothing in the engine. They stay
// clear of metadata.NonPartitioned (-1).
const FirstLakeOnlyPartitionID int64 = -2

// IsLakeOnlyPartition reports whether a partition id is a synthetic id of a
// lake-only partition.
func IsLakeOnlyPartition(id int64) bool { return id <= FirstLakeOnlyPartitionID }

// LakeSplit reads lake files of one bucket of one partition, without a
// log tail. For a log table they are the bucket's rows up to its tiered
// offset; for a primary-key table (a lake-only partition) they hold the
// bucket's merged state, one row per key, and nothing is merged with
// them. Files are in path order.
type LakeSplit struct {
	TableBucket metadata.TableBucket
	Partition   string
	Files       []metadata.LakeFile
}

func (s *LakeSplit) Kind() string                 { return "lake" }
func (s *LakeSplit) Bucket() metadata.TableBucket { return s.TableBucket }
func (s *LakeSplit) PartitionName() string        { return s.Partition }

// String renders the split as EXPLAIN's Split lines do, without the
// prefix: "lake partition=- bucket=0 lake_files=2".
func (s *LakeSplit) String() string {
	return fmt.Sprintf("%s lake_files=%d", splitHead(s), len(s.Files))
}

// LakeLogSplit reads one bucket of a primary-key table: its lake files
// (possibly none, when pushdown pruned them all) merged by primary key,
// k-way, with the changelog tail [LogStart, LogStop) that the lake does
// not hold. LogStart is the bucket's tiered offset; LogStart == LogStop:
// no tail.
type LakeLogSplit struct {
	TableBucket       metadata.TableBucket
	Partition         string
	Files             []metadata.LakeFile
	LogStart, LogStop int64
}

func (s *LakeLogSplit) Kind() string                 { return "lake+log" }
func (s *LakeLogSplit) Bucket() metadata.TableBucket { return s.TableBucket }
func (s *LakeLogSplit) PartitionName() string        { return s.Partition }

// String renders the split as EXPLAIN's Split lines do, without the
// prefix: "lake+log partition=- bucket=0 log=7..9 lake_files=1".
func (s *LakeLogSplit) String() string {
	return fmt.Sprintf("%s log=%d..%d lake_files=%d", splitHead(s), s.LogStart, s.LogStop, len(s.Files))
}

// lakeKey groups lake files by partition name and bucket.
type lakeKey struct {
	partition string
	bucket    int32
}

// lakePart is a partition a lake-union plan reads: live (in the engine,
// matching the partition filter) or lake-only (synthetic id).
type lakePart struct {
	partitionRef
	lakeOnly bool
}

// lakePlan is the lake side of a lake-union plan.
type lakePlan struct {
	// parts are the partitions to read, live and lake-only together, in
	// typed value order.
	parts []lakePart
	// files are the planned lake files by partition name and bucket, each
	// group in path order.
	files map[lakeKey][]metadata.LakeFile
}

// tiered returns the tiered offset of a bucket in the probed snapshot.
func (b *planBase) tiered(tb metadata.TableBucket) (int64, bool) {
	off, ok := b.lake.TieredOffsets[tb]
	return off, ok
}

// planLake lists the lake files of the probed snapshot through the lake
// source (the pushed predicate's conjuncts it accepts prune files and row
// groups; the partition filter prunes partitions) and the live partitions
// the filter keeps, and works out the lake-only partitions: those with
// lake files, no longer in the engine, whose values the filter keeps.
// A lake partition is matched to a live one by name.
func (b *planBase) planLake(ctx context.Context) (lakePlan, error) {
	if b.lakeSrc == nil {
		return lakePlan{}, fmt.Errorf("plan %s: %w: lake snapshot %d found but the planner has no lake source (WithLake)",
			b.table.Path, metadata.ErrUnsupported, b.lake.SnapshotID)
	}
	var accepted []predicate.P
	if cs := predicate.Conjuncts(b.spec.PushedPredicate); len(cs) > 0 {
		accepted, _ = b.lakeSrc.WithFilters(cs)
	}
	files, err := b.lakeSrc.Plan(ctx, b.lake.SnapshotID, b.spec.PartitionFilter, accepted)
	if err != nil {
		return lakePlan{}, fmt.Errorf("plan lake snapshot %d of %s: %w", b.lake.SnapshotID, b.table.Path, err)
	}
	all, live, err := b.partitions(ctx)
	if err != nil {
		return lakePlan{}, err
	}
	liveNames := make(map[string]bool, len(live))
	for _, p := range live {
		liveNames[p.name] = true
	}
	// Every partition in the engine, matching or not: a lake file of a
	// live partition the filter pruned must not pass for a lake-only one.
	allLive := make(map[string]bool, len(all))
	for _, p := range all {
		allLive[p.Name] = true
	}

	plan := lakePlan{files: make(map[lakeKey][]metadata.LakeFile)}
	candidates := map[string]metadata.PartitionInfo{}
	nkeys := len(b.table.PartitionKeys)
	for _, f := range files {
		if !b.table.IsPartitioned() {
			if f.PartitionName != "" {
				return lakePlan{}, fmt.Errorf("%w: lake file %s of %s names partition %q of a table without partitions",
					metadata.ErrCorrupt, f.Path, b.table.Path, f.PartitionName)
			}
		} else if len(f.PartitionValues) != nkeys {
			// Never admit a file whose partition cannot be tested against
			// the filter (Fluss PR #3836).
			return lakePlan{}, fmt.Errorf("%w: lake file %s of %s has %d partition values for %d partition keys",
				metadata.ErrCorrupt, f.Path, b.table.Path, len(f.PartitionValues), nkeys)
		}
		if f.Bucket < 0 || int(f.Bucket) >= b.table.NumBuckets {
			return lakePlan{}, fmt.Errorf("%w: lake file %s of %s is in bucket %d of %d",
				metadata.ErrCorrupt, f.Path, b.table.Path, f.Bucket, b.table.NumBuckets)
		}
		k := lakeKey{f.PartitionName, f.Bucket}
		plan.files[k] = append(plan.files[k], f)
		if b.table.IsPartitioned() && !allLive[f.PartitionName] {
			if _, ok := candidates[f.PartitionName]; !ok {
				candidates[f.PartitionName] = metadata.PartitionInfo{Name: f.PartitionName, Values: f.PartitionValues}
			}
		}
	}
	for k, fs := range plan.files {
		if !liveNames[k.partition] && allLive[k.partition] {
			// A live partition the filter pruned: not read at all.
			delete(plan.files, k)
			continue
		}
		slices.SortFunc(fs, func(x, y metadata.LakeFile) int { return cmp.Compare(x.Path, y.Path) })
	}

	// Lake-only partitions the filter keeps get synthetic ids in value
	// order; provisional distinct ids (by name) make the typed sort total.
	names := slices.Sorted(maps.Keys(candidates))
	lakeOnly := make([]metadata.PartitionInfo, 0, len(names))
	for i, n := range names {
		p := candidates[n]
		p.ID = FirstLakeOnlyPartitionID - int64(i)
		lakeOnly = append(lakeOnly, p)
	}
	kept, err := FilterPartitions(&b.table, lakeOnly, b.spec.PartitionFilter)
	if err != nil {
		return lakePlan{}, err
	}
	if err := sortPartitions(&b.table, kept); err != nil {
		return lakePlan{}, err
	}
	keptNames := make(map[string]bool, len(kept))
	for i := range kept {
		kept[i].ID = FirstLakeOnlyPartitionID - int64(i)
		keptNames[kept[i].Name] = true
	}
	for n := range candidates {
		if !keptNames[n] {
			for k := range plan.files {
				if k.partition == n {
					delete(plan.files, k)
				}
			}
		}
	}

	// Live and lake-only partitions in one typed order.
	combined := make([]metadata.PartitionInfo, 0, len(live)+len(kept))
	isLakeOnly := map[int64]bool{}
	for _, p := range live {
		if p.info == nil {
			// The pseudo partition of a table without partitions: the
			// only one there is.
			plan.parts = []lakePart{{partitionRef: p}}
			return plan, nil
		}
		combined = append(combined, *p.info)
	}
	for _, p := range kept {
		combined = append(combined, p)
		isLakeOnly[p.ID] = true
	}
	if err := sortPartitions(&b.table, combined); err != nil {
		return lakePlan{}, err
	}
	for i := range combined {
		p := &combined[i]
		plan.parts = append(plan.parts, lakePart{
			partitionRef: partitionRef{id: p.ID, name: p.Name, info: p},
			lakeOnly:     isLakeOnly[p.ID],
		})
	}
	return plan, nil
}

// bucketIDs lists the buckets of a partition a lake-union plan visits, in
// order: every bucket of the table for a live partition, the buckets with
// lake files for a lake-only one; of those, the ones keep keeps (bucket
// pruning).
func (lp *lakePlan) bucketIDs(part lakePart, numBuckets int, keep func(int32) bool) []int32 {
	var out []int32
	if !part.lakeOnly {
		for i := range numBuckets {
			if keep(int32(i)) {
				out = append(out, int32(i))
			}
		}
		return out
	}
	for k := range lp.files {
		if k.partition == part.name && keep(k.bucket) {
			out = append(out, k.bucket)
		}
	}
	slices.Sort(out)
	return out
}

// liveBuckets lists every bucket of the plan's live partitions, in order.
func (b *planBase) liveBuckets(lp *lakePlan) []metadata.TableBucket {
	var out []metadata.TableBucket
	for _, part := range lp.parts {
		if !part.lakeOnly {
			out = append(out, b.buckets([]partitionRef{part.partitionRef})...)
		}
	}
	return out
}

// planLakeOnly is the plan of t$lake: one lake split per partition and
// bucket with lake files, nothing when the probe found no snapshot.
func (b *planBase) planLakeOnly(ctx context.Context) ([]Split, error) {
	if !b.hasLake {
		return nil, nil
	}
	lp, err := b.planLake(ctx)
	if err != nil {
		return nil, err
	}
	var splits []Split
	for _, part := range lp.parts {
		for _, bk := range lp.bucketIDs(part, b.table.NumBuckets, b.readsBucket) {
			if files := lp.files[lakeKey{part.name, bk}]; len(files) > 0 {
				tb := metadata.TableBucket{TableID: b.table.TableID, PartitionID: part.id, Bucket: bk}
				splits = append(splits, &LakeSplit{TableBucket: tb, Partition: part.name, Files: files})
			}
		}
	}
	return splits, nil
}
