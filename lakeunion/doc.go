// Package lakeunion reads planned splits into Arrow record batches: log
// splits from a bucket's log, kv+log splits (a KV snapshot merged by
// primary key with its changelog tail), lake splits (lake files as they
// are), lake+log splits (a bucket's lake files merged by primary key with
// its changelog tail), and the changelog of a table (t$changelog).
//
// It reads through Source, a small interface over the engine's log and KV
// snapshot readers and the lake's file readers (EngineSource adapts
// *storage.Engine and *lake.Lake), so readers are tested against
// in-memory fakes.
//
// Rules every reader keeps:
//   - Columns are projected early: a log read decodes only the requested
//     columns plus, for a primary-key merge, the physical key columns it
//     needs and drops again before output.
//   - A split never yields a row outside its [start, stop) offsets.
//   - A record batch is valid until the next call to Next or Close (or
//     Release of the reader); Retain it to keep it longer.
//   - Readers are not safe for concurrent use; the Scan that owns them
//     closes them.
//
// A Scan reads its splits with a bounded pool of workers (Options.Threads),
// one reader per worker at a time, each reader used by its worker's
// goroutine only; the batches reach the consumer through a channel of one
// batch per worker, each retained for it, so memory does not grow with the
// table. Rows keep their order within a split, not across splits. One
// worker (Threads = 1) reads in the caller's goroutine, in split order, as
// a sequential scan. Options.Limit stops the workers, and the opening of
// further splits, once that many rows are produced. Scan.Stats reports
// per split what its readers read and skipped (SplitStats).
//
// A kv+log and a lake+log split share one merge (mergeReader): the base —
// the KV snapshot, or the bucket's lake files k-way merged by key by the
// lake (several files are never concatenated) — in key order, merged with
// the folded tail. The lake side may be filtered by the pushed predicate
// before the merge (the lake drops rows that fail it): a key's final
// value is its tail value, which is never filtered, or its lake value,
// dropped only when it fails the predicate, which the post-scan filter
// re-applies anyway. A KV snapshot is never row-filtered. The merge keeps
// these invariants:
//   - Output order: rows come out in ascending order of their physical
//     primary key, as metadata.EncodeOrderedKey orders it (bytes.Compare
//     of the encodings).
//   - One row per key: the tail is folded per key before the merge, and a
//     key in both the snapshot and the tail is emitted once, with the
//     tail's value. The last change in log order wins.
//   - Tombstones win: a key whose last change in the tail is -D, or a -U
//     not followed by its +U, is absent from the output, whether the
//     snapshot has it or not. (Fluss's batch reader once resurrected keys
//     updated and then deleted in the tail.)
//   - No data hole: keys only in the tail are emitted wherever they sort,
//     including past the snapshot's largest key (Fluss issue #3626).
//   - Memory grows with the number of distinct keys in the tail, not with
//     the number of changes: the fold keeps one copied-out row per key.
//     Snapshot rows stream through; runs of them untouched by the tail
//     are passed on without a copy.
//
// A changelog scan (Options.Changelog) reads log splits as the virtual
// table t$changelog: one row per change, in log order, each with its
// _change_type (metadata.ChangeType.ChangelogName, Fluss's long names:
// insert for a log table's appends and a key's +I, update_before,
// update_after, delete), _log_offset and
// _commit_timestamp before the table's columns. Its projection indexes
// that virtual schema (ChangelogColumns); it never folds or merges.
package lakeunion
