package storage

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/flusslite/fluss/metadata"
)

// lakeRecord is the catalog's form of a metadata.LakeSnapshot (JSON maps
// cannot be keyed by a TableBucket).
type lakeRecord struct {
	SnapshotID     int64              `json:"snapshot_id"`
	TieredOffsets  []lakeTieredOffset `json:"tiered_offsets"`
	PartitionNames map[int64]string   `json:"partition_names,omitempty"`
}

type lakeTieredOffset struct {
	PartitionID int64 `json:"partition_id"`
	Bucket      int32 `json:"bucket"`
	Offset      int64 `json:"offset"`
}

// offset returns the tiered offset of tb, if the record has one.
func (r *lakeRecord) offset(tb metadata.TableBucket) (int64, bool) {
	if r == nil {
		return 0, false
	}
	for _, o := range r.TieredOffsets {
		if o.PartitionID == tb.PartitionID && o.Bucket == tb.Bucket {
			return o.Offset, true
		}
	}
	return 0, false
}

func (r *lakeRecord) snapshot(tableID int64) metadata.LakeSnapshot {
	out := metadata.LakeSnapshot{
		SnapshotID:     r.SnapshotID,
		TieredOffsets:  make(map[metadata.TableBucket]int64, len(r.TieredOffsets)),
		PartitionNames: maps.Clone(r.PartitionNames),
	}
	if out.PartitionNames == nil {
		out.PartitionNames = map[int64]string{}
	}
	for _, o := range r.TieredOffsets {
		out.TieredOffsets[metadata.TableBucket{TableID: tableID, PartitionID: o.PartitionID, Bucket: o.Bucket}] = o.Offset
	}
	return out
}

// CommitLakeSnapshot records snap as the table's latest lake snapshot:
// phase 2 of a tiering commit, after the lake's manifest (phase 1). It is
// persisted with the catalog, atomically; ReadableLakeSnapshot answers it
// from then on, also after a reopen.
//
// The table must have table.datalake.enabled. The snapshot id must be
// above the recorded one. Every tiered bucket must belong to the table;
// a partitioned table's buckets need a partition id with a name in
// PartitionNames, and the partition may already have been dropped in the
// engine: its entry stays, for the planner reads such lake-only
// partitions by name.
func (e *Engine) CommitLakeSnapshot(ctx context.Context, path metadata.TablePath, snap metadata.LakeSnapshot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.writeLock(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		return err
	}
	info := &t.Info
	if !info.Config.DatalakeEnabled {
		return fmt.Errorf("%w: table %s does not have %s: it has no lake", metadata.ErrUnsupported, path, metadata.OptDatalakeEnabled)
	}
	if snap.SnapshotID <= 0 {
		return fmt.Errorf("%w: lake snapshot id %d of %s must be positive", metadata.ErrInvalidValue, snap.SnapshotID, path)
	}
	if t.Lake != nil && snap.SnapshotID <= t.Lake.SnapshotID {
		return fmt.Errorf("%w: lake snapshot %d of %s is not newer than the recorded snapshot %d", metadata.ErrInvalidValue, snap.SnapshotID, path, t.Lake.SnapshotID)
	}
	rec := &lakeRecord{SnapshotID: snap.SnapshotID}
	names := map[int64]string{}
	for tb, off := range snap.TieredOffsets {
		switch {
		case tb.TableID != info.TableID:
			return fmt.Errorf("%w: lake snapshot %d of %s (table id %d) tiers %s of another table", metadata.ErrInvalidValue, snap.SnapshotID, path, info.TableID, tb)
		case tb.Bucket < 0 || int(tb.Bucket) >= info.NumBuckets:
			return fmt.Errorf("%w: lake snapshot %d of %s tiers bucket %d of %d", metadata.ErrInvalidValue, snap.SnapshotID, path, tb.Bucket, info.NumBuckets)
		case off < 0:
			return fmt.Errorf("%w: lake snapshot %d of %s: negative tiered offset %d for %s", metadata.ErrInvalidValue, snap.SnapshotID, path, off, tb)
		}
		if info.IsPartitioned() {
			name, ok := snap.PartitionNames[tb.PartitionID]
			if tb.PartitionID == metadata.NonPartitioned || !ok || name == "" {
				return fmt.Errorf("%w: lake snapshot %d of %s: %s has no partition name", metadata.ErrInvalidValue, snap.SnapshotID, path, tb)
			}
			names[tb.PartitionID] = name
		} else if tb.PartitionID != metadata.NonPartitioned {
			return fmt.Errorf("%w: lake snapshot %d of %s: %s names a partition of a table without partitions", metadata.ErrInvalidValue, snap.SnapshotID, path, tb)
		}
		rec.TieredOffsets = append(rec.TieredOffsets, lakeTieredOffset{PartitionID: tb.PartitionID, Bucket: tb.Bucket, Offset: off})
	}
	slices.SortFunc(rec.TieredOffsets, func(a, b lakeTieredOffset) int {
		return cmp.Or(cmp.Compare(a.PartitionID, b.PartitionID), cmp.Compare(a.Bucket, b.Bucket))
	})
	if len(names) > 0 {
		rec.PartitionNames = names
	}
	next := e.mu.cat.clone()
	next.byID[info.TableID].Lake = rec
	return e.commitCatalogLocked(next)
}

// ReadableLakeSnapshot returns the table's readable lake snapshot: the
// one CommitLakeSnapshot recorded last. A table never tiered (or without
// a lake) has none, which is not an error. The maps are the caller's.
func (e *Engine) ReadableLakeSnapshot(ctx context.Context, path metadata.TablePath) (metadata.LakeSnapshot, bool, error) {
	cat, err := e.readLock()
	if err != nil {
		return metadata.LakeSnapshot{}, false, err
	}
	defer e.mu.RUnlock()
	t, err := cat.table(path)
	if err != nil {
		return metadata.LakeSnapshot{}, false, err
	}
	if t.Lake == nil {
		return metadata.LakeSnapshot{}, false, nil
	}
	return t.Lake.snapshot(t.Info.TableID), true, nil
}

// PinnedLakeSnapshots returns the ids of the table's lake snapshots that
// open read views hold (each view keeps the readable snapshot of its cut),
// ascending and without repeats: a query reading through such a view may
// still open the files they list, so the lake keeps them (lake.Expire).
// It takes the engine's lock shared, as a cut does, so a view being cut
// is either listed or holds the snapshot readable now.
func (e *Engine) PinnedLakeSnapshots(tableID int64) []int64 {
	if _, err := e.readLock(); err != nil {
		return nil
	}
	defer e.mu.RUnlock()
	e.views.mu.Lock()
	defer e.views.mu.Unlock()
	var ids []int64
	for v := range e.views.open {
		if r := v.lake[tableID]; r != nil {
			ids = append(ids, r.SnapshotID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
