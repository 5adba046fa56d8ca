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
// effect: a kv+log split merges a whole bucket by key and is not cut.
func NewUpsertPlanner(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec) (*UpsertPlanner, error) {
	if !table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: upsert planner for log table %s", metadata.ErrUnsupported, table.Path)
	}
	if _, err := maxRecordsPerSplit(spec.Options); err != nil {
		return nil, err
	}
	ro, err := readOptimized(spec.Options)
	if err != nil {
		return nil, err
	}
	base, err := newPlanBase(ctx, admin, table, spec)
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

// Plan returns the splits of the scan. Log-only: per matching partition
// and bucket, one kv+log split of the bucket's latest KV snapshot (or
// none) and its log tail [snapshot log offset | log start, high
// watermark). A bucket with neither a snapshot nor rows in its tail gives
// no split; with read.optimized the tail is always empty, so only buckets
// with a snapshot give one. The lake-union branch is not implemented yet
// and is ErrUnsupported.
func (p *UpsertPlanner) Plan(ctx context.Context) ([]Split, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if p.hasLake {
		return nil, fmt.Errorf("plan %s: %w: lake-union read is not implemented yet (lake snapshot %d)",
			p.table.Path, metadata.ErrUnsupported, p.lake.SnapshotID)
	}
	return p.planLogOnly(ctx)
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
	snaps := make(map[metadata.TableBucket]metadata.KvSnapshot)
	names := make(map[int64]string, len(parts))
	for _, part := range parts {
		names[part.id] = part.name
		ks, err := p.admin.LatestKvSnapshots(ctx, p.table.Path, part.info)
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
	buckets := p.buckets(parts)
	if p.readOptimized {
		var splits []Split
		for _, tb := range buckets {
			if s, ok := snaps[tb]; ok {
				splits = append(splits, &KvLogSplit{TableBucket: tb, Partition: names[tb.PartitionID],
					SnapshotID: s.SnapshotID, LogStart: s.LogOffset, LogStop: s.LogOffset})
			}
		}
		return splits, nil
	}
	stops, err := p.offsets(ctx, buckets, metadata.OffsetLatest)
	if err != nil {
		return nil, err
	}
	// Only buckets without a snapshot read their log from its start.
	var fromStart []metadata.TableBucket
	for _, tb := range buckets {
		if _, ok := snaps[tb]; !ok {
			fromStart = append(fromStart, tb)
		}
	}
	starts, err := p.offsets(ctx, fromStart, metadata.OffsetEarliest)
	if err != nil {
		return nil, err
	}
	var splits []Split
	for _, tb := range buckets {
		s, hasSnap := snaps[tb]
		sp := &KvLogSplit{TableBucket: tb, Partition: names[tb.PartitionID], SnapshotID: NoKvSnapshot,
			LogStart: starts[tb], LogStop: stops[tb]}
		if hasSnap {
			sp.SnapshotID, sp.LogStart = s.SnapshotID, s.LogOffset
		}
		if sp.LogStop < sp.LogStart {
			// A watermark below the start (a snapshot of rows not yet
			// acknowledged, or a log start that passed the watermark):
			// there is no tail to read, never a negative one.
			sp.LogStop = sp.LogStart
		}
		if !hasSnap && sp.LogStart == sp.LogStop {
			continue
		}
		splits = append(splits, sp)
	}
	return splits, nil
}
