package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// UpsertPlanner plans a batch scan of a primary-key table. It is created
// with NewUpsertPlanner, which probes the lake once; Plan may then be
// called any number of times, each reading the current KV snapshots and
// high watermarks. It holds no resources, but should be closed by its
// creator; Close is idempotent. Not safe for concurrent use.
type UpsertPlanner struct {
	planBase
	// readOptimized reads KV snapshots only, without their log tails.
	readOptimized bool
}

var _ SplitPlanner = (*UpsertPlanner)(nil)

// NewUpsertPlanner returns the planner of a scan of the primary-key table
// table. When the table has the lake enabled it asks admin for the
// readable lake snapshot, once; finding none is not an error. The option
// read.optimized ("true" or "false") reads snapshots only; any other value
// is ErrInvalidOption. scan.max-records-per-split is checked but has no
// effect: a kv+log or lake+log split merges a whole bucket by key and is
// not cut. Its lake-union branch needs the lake source given by WithLake.
func NewUpsertPlanner(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, opts ...Option) (*UpsertPlanner, error) {
	if !table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: upsert planner for log table %s", metadata.ErrUnsupported, table.Path)
	}
	if err := checkNotIncremental(spec.Options); err != nil {
		return nil, err
	}
	if err := checkNoStartup(spec.Options, "a batch read of "+table.Path.String()+" reads the whole table"); err != nil {
		return nil, err
	}
	if _, err := maxRecordsPerSplit(spec.Options); err != nil {
		return nil, err
	}
	ro, err := readOptimized(spec.Options)
	if err != nil {
		return nil, err
	}
	base, err := newPlanBase(ctx, admin, table, spec, opts)
	if err != nil {
		return nil, err
	}
	return &UpsertPlanner{planBase: base, readOptimized: ro}, nil
}

// readOptimized reads the read.optimized option: true or false, in any
// case; absent is false.
func readOptimized(opts map[string]string) (bool, error) {
	v, ok := opts[OptReadOptimized]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s = %q: want true or false", metadata.ErrInvalidOption, OptReadOptimized, v)
}

// ScanType is LakeUpsert when the probe found a readable lake snapshot,
// else Upsert.
func (p *UpsertPlanner) ScanType() ScanType {
	if p.hasLake {
		return TypeLakeUpsert
	}
	return TypeUpsert
}

// ReadOptimized reports whether the scan reads KV snapshots only.
func (p *UpsertPlanner) ReadOptimized() bool { return p.readOptimized }

// Plan returns the splits of the scan. With WithLakeOnly (t$lake): the
// lake splits of the probed snapshot alone, or none.
//
// Log-only: per matching partition and bucket, one kv+log split of the
// bucket's latest KV snapshot (or none) and its log tail [snapshot log
// offset | log start, high watermark). A bucket with neither a snapshot
// nor rows in its tail gives no split; with read.optimized the tail is
// always empty, so only buckets with a snapshot give one.
//
// Lake-union: per bucket of a live partition that has a tiered offset (or
// lake files), one lake+log split: its lake files merged by key with the
// tail [tiered offset, high watermark), even when pushdown pruned every
// file (the tail still starts at the tiered offset, never at the log
// start: the lake holds the rows below it). A bucket with neither files
// nor a tail gives none. A bucket that has no lake data yet (no tiered
// offset: a partition created after the snapshot, or a bucket never
// tiered) reads as a kv+log split, its KV snapshot and tail, as log-only
// does, which replays less log than reading it from the log start.
// Partitions only in the lake (dropped in the engine) that match the
// partition filter are read as lake splits, one per bucket with files:
// the files hold merged state. With read.optimized every tail is empty:
// lake+log splits read their files alone (log=T..T at the tiered offset),
// and never-tiered buckets read their KV snapshot alone, as log-only.
func (p *UpsertPlanner) Plan(ctx context.Context) ([]Split, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if p.lakeOnly {
		return p.planLakeOnly(ctx)
	}
	if p.hasLake {
		return p.dropSplitsOfDropped(p.planLakeUnion(ctx))
	}
	return p.dropSplitsOfDropped(p.planLogOnly(ctx))
}

// kvSnapshots lists the latest KV snapshots of the given partitions, keyed
// by bucket; buckets the table does not have are left out.
func (p *UpsertPlanner) kvSnapshots(ctx context.Context, parts []partitionRef) (map[metadata.TableBucket]metadata.KvSnapshot, error) {
	snaps := make(map[metadata.TableBucket]metadata.KvSnapshot)
	for _, part := range parts {
		if p.dropped[part.id] {
			continue
		}
		ks, err := p.admin.LatestKvSnapshots(ctx, p.table.Path, part.info)
		if err != nil && part.info != nil && p.noteDropped(ctx, err, []int64{part.id}) {
			continue
		}
		if err != nil {
			if part.info != nil {
				return nil, fmt.Errorf("latest kv snapshots of %s partition %q: %w", p.table.Path, part.name, err)
			}
			return nil, fmt.Errorf("latest kv snapshots of %s: %w", p.table.Path, err)
		}
		for b, s := range ks.Buckets {
			if b < 0 || int(b) >= p.table.NumBuckets {
				continue // a bucket the table does not have (yet): nothing to read
			}
			snaps[metadata.TableBucket{TableID: p.table.TableID, PartitionID: part.id, Bucket: b}] = s
		}
	}
	return snaps, nil
}

// kvLogSplit is the kv+log split of a bucket from its latest KV snapshot
// (hasSnap) and the pinned offsets; ok is false when it has nothing to
// read. With read.optimized, starts and stops are not consulted.
func (p *UpsertPlanner) kvLogSplit(tb metadata.TableBucket, name string, snap metadata.KvSnapshot, hasSnap bool,
	starts, stops map[metadata.TableBucket]int64) (*KvLogSplit, bool) {
	if p.readOptimized {
		if !hasSnap {
			return nil, false
		}
		return &KvLogSplit{TableBucket: tb, Partition: name, SnapshotID: snap.SnapshotID,
			LogStart: snap.LogOffset, LogStop: snap.LogOffset}, true
	}
	sp := &KvLogSplit{TableBucket: tb, Partition: name, SnapshotID: NoKvSnapshot,
		LogStart: starts[tb], LogStop: stops[tb]}
	if hasSnap {
		sp.SnapshotID, sp.LogStart = snap.SnapshotID, snap.LogOffset
	}
	if sp.LogStop < sp.LogStart {
		// A watermark below the start (a snapshot of rows not yet
		// acknowledged, or a log start that passed the watermark):
		// there is no tail to read, never a negative one.
		sp.LogStop = sp.LogStart
	}
	if !hasSnap && sp.LogStart == sp.LogStop {
		return nil, false
	}
	return sp, true
}

func (p *UpsertPlanner) planLogOnly(ctx context.Context) ([]Split, error) {
	parts, err := p.matchingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	// The snapshots are listed before the high watermarks are read: a
	// snapshot reflects committed rows only, so its log offset is then at
	// or below the pinned watermark, and the snapshot holds nothing the
	// pinned tail would exclude.
	snaps, err := p.kvSnapshots(ctx, parts)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(parts))
	for _, part := range parts {
		names[part.id] = part.name
	}
	buckets := p.buckets(parts)
	var starts, stops map[metadata.TableBucket]int64
	if !p.readOptimized {
		if stops, err = p.offsets(ctx, buckets, metadata.OffsetLatest); err != nil {
			return nil, err
		}
		// Only buckets without a snapshot read their log from its start.
		var fromStart []metadata.TableBucket
		for _, tb := range buckets {
			if _, ok := snaps[tb]; !ok {
				fromStart = append(fromStart, tb)
			}
		}
		if starts, err = p.offsets(ctx, fromStart, metadata.OffsetEarliest); err != nil {
			return nil, err
		}
	}
	var splits []Split
	for _, tb := range buckets {
		s, hasSnap := snaps[tb]
		if sp, ok := p.kvLogSplit(tb, names[tb.PartitionID], s, hasSnap, starts, stops); ok {
			splits = append(splits, sp)
		}
	}
	return splits, nil
}

func (p *UpsertPlanner) planLakeUnion(ctx context.Context) ([]Split, error) {
	lp, err := p.planLake(ctx)
	if err != nil {
		return nil, err
	}
	// A bucket has lake data when it has a tiered offset or lake files;
	// the others read their KV snapshot. Only partitions with such a
	// bucket list their snapshots, and they do so before the watermarks
	// are read (see planLogOnly).
	live := p.liveBuckets(&lp)
	hasLake := func(tb metadata.TableBucket, name string) bool {
		_, tiered := p.tiered(tb)
		return tiered || len(lp.files[lakeKey{name, tb.Bucket}]) > 0
	}
	var kvParts []partitionRef
	for _, part := range lp.parts {
		if part.lakeOnly {
			continue
		}
		for _, tb := range p.buckets([]partitionRef{part.partitionRef}) {
			if !hasLake(tb, part.name) {
				kvParts = append(kvParts, part.partitionRef)
				break
			}
		}
	}
	snaps, err := p.kvSnapshots(ctx, kvParts)
	if err != nil {
		return nil, err
	}
	var starts, stops map[metadata.TableBucket]int64
	if !p.readOptimized {
		if stops, err = p.offsets(ctx, live, metadata.OffsetLatest); err != nil {
			return nil, err
		}
		// From the log start: buckets with neither a tiered offset nor a
		// KV snapshot.
		var fromStart []metadata.TableBucket
		for _, tb := range live {
			_, tiered := p.tiered(tb)
			_, snap := snaps[tb]
			if !tiered && !snap {
				fromStart = append(fromStart, tb)
			}
		}
		if starts, err = p.offsets(ctx, fromStart, metadata.OffsetEarliest); err != nil {
			return nil, err
		}
	}
	var splits []Split
	for _, part := range lp.parts {
		for _, bk := range lp.bucketIDs(part, p.table.NumBuckets, p.readsBucket) {
			tb := metadata.TableBucket{TableID: p.table.TableID, PartitionID: part.id, Bucket: bk}
			files := lp.files[lakeKey{part.name, bk}]
			if part.lakeOnly {
				splits = append(splits, &LakeSplit{TableBucket: tb, Partition: part.name, Files: files})
				continue
			}
			if !hasLake(tb, part.name) {
				s, hasSnap := snaps[tb]
				if sp, ok := p.kvLogSplit(tb, part.name, s, hasSnap, starts, stops); ok {
					splits = append(splits, sp)
				}
				continue
			}
			// Lake data. Files without a tiered offset (the lake's
			// partition of that name predates a drop and re-create in the
			// engine) merge with the whole log of the live partition.
			start, tiered := p.tiered(tb)
			if !tiered && !p.readOptimized {
				start = starts[tb]
			}
			stop := start
			if !p.readOptimized {
				stop = max(stops[tb], start)
			}
			if len(files) == 0 && start == stop {
				continue
			}
			splits = append(splits, &LakeLogSplit{TableBucket: tb, Partition: part.name, Files: files, LogStart: start, LogStop: stop})
		}
	}
	return splits, nil
}
