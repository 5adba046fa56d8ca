package planner

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/metadata"
)

// ReadView is a consistent cut of the engine a transaction reads at: every
// bucket's log range, the KV snapshot of each primary-key bucket and the
// readable lake snapshot of each table, all captured at one instant.
// *storage.ReadView satisfies it.
type ReadView interface {
	// LogOffsets returns a bucket's log start offset and high watermark
	// in the view; both 0 for a bucket that had no log then.
	LogOffsets(tb metadata.TableBucket) (start, stop int64)
	// KvSnapshot returns the KV snapshot of a primary-key bucket in the
	// view, whose log offset is at or below the bucket's high watermark
	// there; ok is false when the bucket had none.
	KvSnapshot(tb metadata.TableBucket) (metadata.KvSnapshot, bool)
	// LakeSnapshot returns a table's readable lake snapshot in the view;
	// ok is false when it had none.
	LakeSnapshot(tableID int64) (metadata.LakeSnapshot, bool)
}

// WithReadView makes the planner plan at a read view instead of the live
// engine: the lake probe answers the view's lake snapshot, stop offsets
// are the view's high watermarks, log-only starts its log start offsets,
// and an upsert scan reads the view's KV snapshots. Partitions and the
// table's schema are still listed live. A nil view is no option.
func WithReadView(v ReadView) Option {
	return func(o *plannerOptions) { o.view = v }
}

// atView returns admin answering offsets, KV snapshots and the readable
// lake snapshot from the view, or admin itself without one.
func atView(admin Admin, v ReadView) Admin {
	if v == nil {
		return admin
	}
	return viewAdmin{Admin: admin, view: v}
}

// viewAdmin is an Admin whose offsets and snapshots are a read view's.
type viewAdmin struct {
	Admin
	view ReadView
}

func (a viewAdmin) ListOffsets(ctx context.Context, buckets []metadata.TableBucket, spec metadata.OffsetSpec) (map[metadata.TableBucket]int64, error) {
	out := make(map[metadata.TableBucket]int64, len(buckets))
	for _, tb := range buckets {
		start, stop := a.view.LogOffsets(tb)
		switch spec {
		case metadata.OffsetEarliest:
			out[tb] = start
		case metadata.OffsetLatest:
			out[tb] = stop
		default:
			return nil, fmt.Errorf("%w: offset spec %d", metadata.ErrUnsupported, spec)
		}
	}
	return out, nil
}

// OffsetsForTimestamp answers from the live log, which below the view's
// high watermarks is the log the view saw, then holds each answer to the
// view's high watermark.
func (a viewAdmin) OffsetsForTimestamp(ctx context.Context, buckets []metadata.TableBucket, ts int64) (map[metadata.TableBucket]int64, error) {
	out, err := a.Admin.OffsetsForTimestamp(ctx, buckets, ts)
	if err != nil {
		return nil, err
	}
	for tb, off := range out {
		_, stop := a.view.LogOffsets(tb)
		out[tb] = min(off, stop)
	}
	return out, nil
}

func (a viewAdmin) LatestKvSnapshots(ctx context.Context, t metadata.TablePath, partition *metadata.PartitionInfo) (metadata.KvSnapshots, error) {
	info, err := a.TableInfo(ctx, t)
	if err != nil {
		return metadata.KvSnapshots{}, err
	}
	out := metadata.KvSnapshots{TableID: info.TableID, PartitionID: metadata.NonPartitioned,
		Buckets: map[int32]metadata.KvSnapshot{}, NumBuckets: info.NumBuckets}
	if partition != nil {
		out.PartitionID = partition.ID
	} else if info.IsPartitioned() {
		return out, nil
	}
	for b := range info.NumBuckets {
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: out.PartitionID, Bucket: int32(b)}
		if s, ok := a.view.KvSnapshot(tb); ok {
			out.Buckets[int32(b)] = s
		}
	}
	return out, nil
}

func (a viewAdmin) ReadableLakeSnapshot(ctx context.Context, t metadata.TablePath) (metadata.LakeSnapshot, bool, error) {
	info, err := a.TableInfo(ctx, t)
	if err != nil {
		return metadata.LakeSnapshot{}, false, err
	}
	s, ok := a.view.LakeSnapshot(info.TableID)
	return s, ok, nil
}
