// Package planner is the consolidated split planner: one AppendPlanner for
// log tables and one UpsertPlanner for primary-key tables, each with a
// log-only and a lake-union branch, after the Fluss
// Spark connector's SplitPlanner (DESIGN §5.3), plus the ChangelogPlanner
// of the virtual table t$changelog, which reads logs only, and the
// IncrementalPlanner of a time-range incremental read (Fluss #3883), the
// third branch: the changes committed in a window, from the log alone.
//
// Invariants:
//
//   - One probe. A planner asks for the table's readable lake snapshot
//     exactly once, at construction, and only when the table has the lake
//     enabled. "No snapshot" is a normal answer, not an error.
//     HasLakeSnapshot, the scan type and EXPLAIN all read that one answer.
//   - One branch. Plan picks lake-union when the probe found a snapshot and
//     log-only otherwise, deterministically; there is no fallback at read
//     time.
//   - Stop offsets are pinned at planning. Every split's stop offset is the
//     high watermark read once, in one batched ListOffsets call, during
//     Plan; rows committed afterwards are never read by that plan. The
//     UpsertPlanner lists the KV snapshots before it reads the high
//     watermarks, so a snapshot never holds rows past the pinned stop.
//   - One split per primary-key bucket. A kv+log split (KV snapshot plus
//     log tail) is merged by key and is never cut by
//     scan.max-records-per-split; a bucket with neither a snapshot nor a
//     tail gives none, a bucket with a snapshot gives one even when its
//     tail is empty. read.optimized empties every tail.
//   - Lake-union reads each bucket as one consistent cut: its lake files up
//     to the tiered offset of the probed snapshot, then its log from that
//     offset to the pinned watermark. A tail starts at the tiered offset
//     whenever there is one, even when pushdown pruned every lake file of
//     the bucket (Fluss issue #4325); only a bucket without one (never
//     tiered, or in a partition created after the snapshot) reads its log
//     from the log start, or, in a primary-key table, its KV snapshot and
//     tail. Lake partitions are matched to the engine's by name; one no
//     longer in the engine is read from the lake alone, under a synthetic
//     partition id (FirstLakeOnlyPartitionID down), when the partition
//     filter keeps it. The pushed predicate's conjuncts the lake source
//     accepts (LakeSource.WithFilters) prune lake files; the rest stay
//     with the scan.
//   - An incremental read never probes the lake and never reads a KV
//     snapshot. Its start offsets are the time index's answers
//     (Admin.OffsetsForTimestamp) for the window's start; its stops the
//     pinned high watermarks, or, when the window has an end, the first
//     offset committed at or after the end if that comes first. The full
//     read planners refuse its options rather than ignore the window.
//   - Splits are inert. A split holds ids and offsets, never a file, a
//     context or a goroutine; readers are built from it elsewhere
//     (lakeunion). Splits come out in a deterministic order: partitions in
//     typed value order, then bucket, then start offset.
//
// The planner declares the admin calls it consumes (Admin); storage
// satisfies them without importing this package. It never sees SQL: its
// input is a ScanSpec of neutral predicates.
package planner
