package planner

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// ScanSpec is what a scan asks for, after sqlplan and pushdown.
type ScanSpec struct {
	Table metadata.TablePath
	// Projection lists the columns to read, in output order.
	Projection []int
	// PartitionFilter prunes partitions exactly; nil keeps all.
	PartitionFilter predicate.P
	// PushedPredicate may skip batches, files or row groups by statistics;
	// it is never trusted for exactness. Nil: none.
	PushedPredicate predicate.P
	// Buckets, when not nil, are the only buckets of each partition to
	// read (bucket pruning: the WHERE pins the bucket key to values that
	// hash to them; see sqlplan.BucketFilter); nil reads every bucket.
	Buckets []int32
	// Limit is the most rows the scan needs; -1: no limit.
	Limit int64
	// Options are read hints: read.optimized, scan.max-records-per-split,
	// scan.incremental.start.timestamp and scan.incremental.end.timestamp.
	Options map[string]string
}

// Option keys of ScanSpec.Options.
const (
	OptReadOptimized        = "read.optimized"
	OptMaxRecordsPerSplit   = "scan.max-records-per-split"
	OptScanStartupMode      = "scan.startup.mode"
	OptScanStartupTimestamp = "scan.startup.timestamp"
)

// Admin is the catalog and offset service the planner reads. It is
// satisfied by *storage.Engine.
type Admin interface {
	TableInfo(ctx context.Context, t metadata.TablePath) (metadata.TableInfo, error)
	ListPartitions(ctx context.Context, t metadata.TablePath) ([]metadata.PartitionInfo, error)
	// ListOffsets returns, for each bucket, its log start offset
	// (OffsetEarliest) or high watermark (OffsetLatest).
	ListOffsets(ctx context.Context, buckets []metadata.TableBucket, spec metadata.OffsetSpec) (map[metadata.TableBucket]int64, error)
	// OffsetsForTimestamp returns, for each bucket, the first offset
	// whose batch was committed at or after ts (ms), or the high
	// watermark when none was: Fluss's ListOffsets by timestamp.
	OffsetsForTimestamp(ctx context.Context, buckets []metadata.TableBucket, ts int64) (map[metadata.TableBucket]int64, error)
	// LatestKvSnapshots returns the latest KV snapshot of each bucket of a
	// primary-key table, or of one partition of it (partition non-nil).
	LatestKvSnapshots(ctx context.Context, t metadata.TablePath, partition *metadata.PartitionInfo) (metadata.KvSnapshots, error)
	// ReadableLakeSnapshot returns the newest lake snapshot readers can see;
	// ok is false when there is none, which is not an error.
	ReadableLakeSnapshot(ctx context.Context, t metadata.TablePath) (snap metadata.LakeSnapshot, ok bool, err error)
}

// SplitPlanner plans a batch scan into splits. *AppendPlanner and
// *UpsertPlanner implement it. Not safe for concurrent use.
type SplitPlanner interface {
	// HasLakeSnapshot reports what the lake probe found; decided once, at
	// construction.
	HasLakeSnapshot() bool
	// Plan picks the branch and returns the splits.
	Plan(ctx context.Context) ([]Split, error)
	// Close releases what the planner holds. Idempotent.
	Close() error
}

// ScanType is the type of a scan as EXPLAIN prints it.
type ScanType string

const (
	TypeAppend     ScanType = "Append"
	TypeLakeAppend ScanType = "LakeAppend"
	TypeUpsert     ScanType = "Upsert"
	TypeLakeUpsert ScanType = "LakeUpsert"
)

// Split is one unit of reading: *LogSplit, *KvLogSplit, *LakeSplit or
// *LakeLogSplit.
type Split interface {
	// Kind is "log", "kv+log", "lake" or "lake+log".
	Kind() string
	// Bucket is the bucket the split reads.
	Bucket() metadata.TableBucket
	// PartitionName is the partition's name, or "" for a table without
	// partitions.
	PartitionName() string
}

// LogSplit reads a bucket's log over [StartOffset, StopOffset).
type LogSplit struct {
	TableBucket metadata.TableBucket
	Partition   string
	StartOffset int64
	StopOffset  int64
}

func (s *LogSplit) Kind() string                 { return "log" }
func (s *LogSplit) Bucket() metadata.TableBucket { return s.TableBucket }
func (s *LogSplit) PartitionName() string        { return s.Partition }

// String renders the split as EXPLAIN's Split lines do, without the
// prefix: "log partition=2026-01-01 bucket=0 log=0..5".
func (s *LogSplit) String() string {
	return fmt.Sprintf("%s log=%d..%d", splitHead(s), s.StartOffset, s.StopOffset)
}

// NoKvSnapshot is KvLogSplit.SnapshotID of a bucket that has no KV
// snapshot: its state is the log tail alone.
const NoKvSnapshot int64 = -1

// KvLogSplit reads one bucket of a primary-key table: its KV snapshot
// (none when SnapshotID is NoKvSnapshot) merged by key with the changelog
// tail [LogStart, LogStop) that the snapshot does not contain.
type KvLogSplit struct {
	TableBucket metadata.TableBucket
	Partition   string
	// SnapshotID is the KV snapshot to read, or NoKvSnapshot.
	SnapshotID int64
	// LogStart is the snapshot's log offset (or the log start offset
	// without a snapshot); LogStop is the high watermark pinned at
	// planning. LogStart == LogStop: no tail (read.optimized, or nothing
	// written since the snapshot).
	LogStart, LogStop int64
}

func (s *KvLogSplit) Kind() string                 { return "kv+log" }
func (s *KvLogSplit) Bucket() metadata.TableBucket { return s.TableBucket }
func (s *KvLogSplit) PartitionName() string        { return s.Partition }

// HasSnapshot reports whether the split reads a KV snapshot.
func (s *KvLogSplit) HasSnapshot() bool { return s.SnapshotID != NoKvSnapshot }

// String renders the split as EXPLAIN's Split lines do, without the
// prefix: "kv+log partition=- bucket=0 log=7..9 kv_snapshot=3".
func (s *KvLogSplit) String() string {
	snap := "none"
	if s.HasSnapshot() {
		snap = strconv.FormatInt(s.SnapshotID, 10)
	}
	return fmt.Sprintf("%s log=%d..%d kv_snapshot=%s", splitHead(s), s.LogStart, s.LogStop, snap)
}
