// Package tiering moves the data of lake-enabled tables from the engine's
// logs (package storage) into the lake (package lake), in rounds, and
// keeps the engine's record of each table's lake snapshot in step with
// the lake.
//
// # Rounds
//
// A round tiers one table; at most one runs per table at a time (Tier
// waits for a running one). It reads each bucket's high watermark (HW)
// once, at its start: stop = HW. For every bucket of every live partition
// (the whole table without partitions) it starts at the bucket's tiered
// offset in the table's latest lake snapshot, or, for a bucket never
// tiered, at the log start offset (a log table) or at the latest KV
// snapshot (a primary-key table that has one; else the log start).
//
//   - Log tables: the rows of [start, stop) go into new Parquet files; the
//     bucket's files are its previous files plus the new ones.
//   - Primary-key tables: the bucket's new state is its previous state
//     (the previous files read through the lake's sorted reader, or the
//     KV snapshot) merged with the changelog [start, stop) folded per key:
//     the last change wins; +I and +U set the row, -D removes it, and a -U
//     not followed by its +U removes it too. The state is written sorted
//     by metadata.EncodeOrderedKey of the physical key into new files that
//     replace the bucket's previous ones (a bucket whose state became
//     empty has no files). When the previous snapshot held the bucket (files
//     or a tiered offset under the partition's name), the same merge writes
//     the bucket's undo files (lake's undo layout): the previous row of each
//     key changed (its changed columns) or removed, and an absent marker for
//     each key added, so that the previous snapshot stays readable once
//     its files are superseded and removed.
//
// A bucket with nothing new keeps its files and tiered offset; every other
// bucket's tiered offset becomes stop. A bucket never tiered gets its
// first tiered offset even when it has no rows (0 for an empty bucket).
// Partitions the lake has but the engine no longer has (dropped) keep
// their files and tiered offsets: readers find such lake-only partitions
// by name. A partition re-created under a dropped one's name adds to it
// in the lake, as a lake-union read already sees it: the old partition's
// files stay, the new partition is tiered from its log start (a key
// table merging its changelog into the old state) and its tiered offsets
// replace the old ones. A round with nothing new commits nothing and Tier returns
// the current snapshot id (0 when there is none).
//
// A dropped table's lake goes with it: RemoveDroppedLakes (after DROP, and
// in Recover for a drop a crash interrupted) removes the lake of every id
// the engine knows as dropped, waiting for a round of that table; a round
// that finds its table dropped removes the lake itself and fails with
// ErrNotFound saying so.
//
// # System columns
//
// Every lake row carries __bucket (its bucket), __timestamp and __offset:
//
//   - log tables: __offset is the row's log offset and __timestamp the
//     commit time of its batch;
//   - primary-key tables: __offset is the offset of the key's last change
//     tiered and __timestamp that change's commit time; rows carried over
//     from the previous lake state keep theirs; rows taken from a KV
//     snapshot get the snapshot's log offset - 1 (the last offset the
//     snapshot reflects; the row's own last change may be older, and the
//     snapshot does not say) and the commit time of that offset's batch
//     (the round's start when that log is gone).
//
// # Two-phase commit and recovery
//
// A round commits in two phases. Phase 1 writes the files and commits the
// lake's manifest (lake.Commit: atomic, it lists the snapshot's files, a
// key table's undo files, and every bucket's tiered offset). Phase 2 records the snapshot in the engine
// (storage.Engine.CommitLakeSnapshot), which is what readers plan from. A
// process that stops between the two leaves a manifest newer than the
// engine's record: Recover (on open) and the table's next round first
// record that manifest, exactly as phase 2 would have. The manifest holds
// the tiered offsets, so the tail readers start from is exactly where the
// lake ends: no row is missing and none is read twice. A round that fails
// before phase 1 leaves files no manifest lists; the lake never reads
// them. The engine's log is protected meanwhile: DropExpired never
// removes log at or past a lake-enabled bucket's recorded tiered offset.
//
// # Background
//
// Start (with Options.Enabled, the DSN's tiering=auto) runs one goroutine
// that checks every CheckInterval which lake-enabled tables are due: a
// table is due table.datalake.freshness after its latest snapshot's
// commit (or after the loop first saw it). The same goroutine calls
// DropExpired every ExpireInterval. Panics are recovered and logged;
// errors are logged and the table is retried after its freshness. Close
// cancels a round in progress and waits for the goroutine.
package tiering
