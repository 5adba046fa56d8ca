// Package storage is the embedded Fluss: the catalog (databases, tables,
// partitions and their ids), a log tablet per bucket, the writer that
// routes rows to partitions and buckets, the KV state and snapshots of
// primary-key tables, log and snapshot readers, and the admin calls the
// planner consumes (ListOffsets, LatestKvSnapshots, ReadableLakeSnapshot),
// the engine's record of the lake snapshot and TTL retention of the log.
// *Engine is safe for concurrent use; a *LogReader or *KvSnapshotReader
// is not, and must be closed.
//
// # Invariants
//
//   - Offsets: each bucket's log has dense int64 offsets from 0. The log
//     start offset is the base offset of the oldest segment: 0 until
//     DropExpired removes segments. A batch of n records takes the
//     offsets [base, base+n).
//   - High watermark (HW): the exclusive end of committed records. Readers
//     never see at or past it; ReadLog caps its stop offset at the HW of
//     the moment it opens, so rows written later are never read by it.
//     OffsetLatest is the HW.
//   - Commits: every write goes through Commit, a list of appends,
//     upserts and deletes over any tables and partitions applied
//     atomically and in order (Append, Upsert and Delete are commits of
//     one write). Every row is checked and coerced before anything is
//     written (wrong arity, NULL in a NOT NULL column or partition key, a
//     value that does not fit: an error naming the write, row, column and
//     value). Each touched bucket gets one record batch holding its rows
//     of every write in order (several when very large). All batches are
//     written, fsynced when Options.Sync, and only then does every touched
//     bucket's HW advance: a commit becomes visible everywhere at once.
//     Writers of one bucket are serialised; a commit locks its buckets in
//     one global order (table, partition, bucket), so commits of disjoint
//     buckets run in parallel.
//   - Conflicts: a transaction's commit (WriteBuffer.Commit, over a
//     WriteView) fails with ErrConflict, applying nothing, when a key it
//     upserts or deletes, or one it named with WriteBuffer.Lock, was
//     written by a commit after its view's cut (conflict.go): first
//     committer wins. The check and the recording of a commit's keys run
//     once it holds its bucket locks, before anything is applied. Keys
//     are KV-store keys; whatever else two transactions must not both
//     write (a unique index entry) joins by adding its KV key to the
//     commit's commitConflicts. Appends never conflict.
//   - A failed commit is rolled back in every bucket it touched (files
//     truncated to where they were). When the roll back or an fsync fails,
//     the engine refuses further writes (ErrReadOnly, wrapping the cause):
//     a failed fsync may have lost pages it had reported written. A reopen
//     recovers.
//   - Routing: partitions come from the partition-key values (rendered as
//     Fluss names them); a missing partition is created, and persisted in
//     the catalog, before the write. With a bucket key the bucket is
//     Fluss's (metadata.BucketOf of the compacted key encoding); without,
//     rows go round-robin, continuing per table where the previous
//     statement stopped.
//   - Catalog: catalog.json, replaced atomically (temporary file, fsync,
//     rename, fsync of the directory). Table and partition ids come from
//     counters in it and are never reused.
//
// # Durability and recovery
//
// With Sync (the default) a commit is durable when Commit returns.
// Without it a crash of the machine may lose the most recent commits but
// never corrupts earlier data; a crash of the process alone loses nothing
// written. A commit is atomic across a crash at any point: after Open it
// is in every bucket it wrote or in none (with Sync; without it, as far
// as the operating system kept the order of the writes).
//
// With Sync, a small commit (at most 64 KiB of batches, which covers
// every statement and transaction short of bulk loads) goes into the
// commit journal, <dir>/commits.log (its format is in
// commit_journal.go), whole: a redo record lists every bucket it writes,
// the offsets its batches take there, [start, end), and the batches
// themselves. The journal's fsync is the commit point; the batches are
// then written to the logs without an fsync of their own, so such a
// commit costs one fsync however many buckets it writes, and commits of
// different buckets running at the same time share it. The segments so
// written are fsynced later, together: before the journal is emptied
// (when it has grown past 1 MiB and no commit is in flight), before the
// acknowledged-offsets checkpoint records their offsets, and at Close,
// which empties the journal. Open replays each redo record into the logs
// that lack its batches (a log ending at its start gets them; one holding
// a torn or garbled tail there is cut back to the first batch that
// differs, when the journal covers everything after it).
//
// A larger commit of one batch is atomic by itself (below: a batch is
// whole or a torn tail). A larger commit of several batches, or any
// commit of several without Sync, takes the journal's other way: before
// its first batch, an intent record lists every bucket it writes and the
// offsets its batches will take there, and is fsynced; then the batches
// are written and fsynced (in parallel). That is the commit point: from
// then on every listed log reaches its end offset. A done record follows
// (not fsynced: it only spares Open some work); a commit that fails and
// rolls back writes a durable abort record instead before it lets go of
// its buckets (a redo commit first fsyncs its rolled-back logs), or, when
// it cannot, turns the engine read-only. Open settles every intent
// without a done or abort record: when every listed log reaches the end
// offset the commit stands, otherwise each listed log is cut back to the
// start offset (those offsets can hold nothing else: the commit held the
// buckets' locks), before the KV state is replayed. It then empties the
// journal. So a large commit of several batches costs two rounds of
// fsync: the intent, then the batches.
//
// Open recovers every tablet by scanning every batch of every segment
// (header, length and CRC-32C):
//   - a torn tail of the last segment (a header cut short, a length that
//     runs past the end of the file, or a bad last batch) past every
//     acknowledged offset is a write that never completed: it is
//     truncated back to the last whole batch, and nothing before it is
//     lost; below the acknowledged end it is damage (next section);
//   - a bad batch with whole batches after it is damage, not a torn write:
//     it is logged and kept. Reads of its offsets fail with an error
//     wrapping metadata.ErrCorrupt that names the segment file (relative
//     to the data directory) and the byte position; the batches around it
//     stay readable. Reads check every batch's CRC, so damage that appears
//     after Open is reported the same way.
//
// Everything that survives recovery was written by a commit that reached
// its commit point, so the HW after Open is the log end offset.
//
// # Acknowledged offsets
//
// <dir>/acked-offsets records per bucket bounds that stay true across a
// crash: the log start, the end of acknowledged durable data and a
// fingerprint of the batch ending there (checkpoint.go has the rules
// and format). Open reads it with the journal's completed commits before
// recovering the tablets, and after settling the journal checks each
// bucket against it and against the lake's tiered offsets; after the KV
// state is recovered, against the KV applied offsets. A bucket that
// contradicts them is damaged, never silently shorter: Open succeeds,
// every read of the bucket fails with ErrCorrupt naming its directory and
// what is missing, every write to it is refused (no new row takes a lost
// offset), its KV operations fail, and its record is kept so a reopen
// reports it again. With Sync a KV state ahead of its log is such a
// contradiction too.
//
// # Primary-key tables
//
// A primary-key bucket has a log, as a log table's, holding its changelog:
// batches with a change type per row (+I, -U, +U, -D) and full row images.
// Its live state (one row per key) is kept in a single Pebble store for
// the whole engine, in <dir>/kv. A row's Pebble key is 'd', the bucket's
// id (table id, partition id, bucket; big-endian) and then
// metadata.EncodeOrderedKey of its physical primary key, so a bucket's rows
// are contiguous and in key order. Its value is the row in a compact
// encoding that starts with the schema id (kv_codec.go). Beside the rows,
// key 'm'+bucket id holds the bucket's flushed offset: the log offset its
// rows reflect.
//
// Upserts and deletes route rows like appends (creating partitions for
// upserts; a delete in a missing partition is nothing), then, holding the
// locks of every bucket of the commit (one global order): read each key's
// row (this commit's earlier rows first, then Pebble), merge by the
// table's merge engine (last row, partial update, first_row, versioned),
// and collect the changelog (+I new; -U old, +U new, or only +U with
// table.changelog.image WAL; -D old; nothing when nothing changes). Each
// bucket's changelog is one batch (several when very large); they are
// appended and fsynced with the commit's other batches, then every
// bucket's final rows and new flushed offset, of every table of the
// commit, go to Pebble in one batch, and only then do the high watermarks
// move: a commit is visible in every bucket, to log readers and to
// Lookup, at once. A failure before the Pebble write rolls the commit
// back; a failed Pebble write rolls it back and makes the engine
// read-only (the log already held it durably).
//
// The log is the source of truth. Pebble runs without its own WAL: its
// state after a crash is some earlier consistent cut, rows and flushed
// offset together. Open replays each primary-key bucket's log from its
// flushed offset to the log end (+I/+U put the row, -D deletes it, -U does
// nothing); a KV state ahead of the log (a crash without Sync) is rebuilt
// from the log start; with Sync it means the log lost acknowledged data.
// A bucket whose log cannot be replayed (damage) is logged, its KV
// operations and log reads fail with ErrCorrupt; other buckets work.
// Close flushes Pebble so a clean reopen replays nothing.
//
// Pebble never ends the process: its logger's Fatalf (a MANIFEST it could
// not write, say) and the errors of its background flushes are recorded
// as a fault (kv_monitor.go), after which the engine refuses writes with
// ErrReadOnly wrapping it and Pebble is neither written nor flushed
// again. Open's replay waits for a flush every half memtable, so on a
// full disk Open fails with the error instead of stalling; Close waits at
// most Options.CloseTimeout for the flush and again for Pebble to close,
// and returns the error. Neither loses a write: the log has it, and the
// next Open replays it into the last state Pebble made durable. A flush
// that keeps failing retries a few times a second, not in a busy loop.
//
// When the engine
// runs in memory, or on a replaced Options.FS, Pebble uses its in-memory
// file system: over a reused FS every Open rebuilds the state from the
// logs. Options.TestingSkipKvApply simulates a crash between the log and
// the Pebble write; Options.TestingCrashCommit stops a commit before any
// of its batches or after its commit point.
//
// # KV snapshots
//
// A KV snapshot is an immutable image of one bucket's rows with the log
// offset to read after it (the flushed offset of its cut). It is cut from a
// Pebble snapshot taken under the bucket's lock, written in key order to
// kv-snapshots/.../<id>.snap.tmp (record batches in the logformat codec
// plus each row's ordered key, every part under a CRC; the format is in
// kv_snapshot.go), fsynced and renamed; the file is the record, found
// again by listing the directories on Open. Ids count up from 0 per
// bucket. TakeKvSnapshots snapshots every bucket of a table; a bucket
// whose flushed offset has not moved since its latest snapshot reuses it.
// With Options.KvSnapshotInterval a background goroutine snapshots the
// buckets that changed; Close stops it before anything else, and a panic
// in it is logged, never propagated.
//
// Retention: each bucket keeps its latest snapshot. ReadKvSnapshot pins
// the one it reads; an older snapshot is deleted as soon as no reader pins
// it. Open keeps the newest snapshot with a sound header and deletes older
// ones and temporary files. A damaged file reads as ErrCorrupt naming it.
// Dropping a table or partition deletes its Pebble rows and snapshots
// (left-overs of a crash are removed by the next Open).
//
// # Lake snapshots and log retention
//
// The engine keeps a record of each lake-enabled table's latest lake
// snapshot: its id, every tiered bucket's tiered offset (every record
// below it is in the lake) and the names of the partitions they belong
// to. CommitLakeSnapshot stores it in the table's catalog entry (phase 2
// of a tiering commit, after the lake's own manifest); the catalog write
// makes it atomic and durable. ReadableLakeSnapshot answers it. Dropping
// a partition leaves its entries, for the lake still holds its data and
// the planner reads such lake-only partitions by name; dropping the table
// drops the record.
//
// DropExpired removes whole segments, oldest first, whose newest commit
// timestamp is older than table.log.ttl (kept in memory per segment,
// rebuilt by the recovery scan). It never removes the active segment, log
// at or past a lake-enabled table's tiered offset (a bucket never tiered
// keeps everything), or log at or past a primary-key bucket's latest KV
// snapshot (a bucket without one keeps everything). Before it removes
// primary-key log it flushes Pebble, so the KV state on disk never falls
// below the new log start. Should it anyway (Pebble in memory over a
// reused FS, or a KV state ahead of a log that lost its tail), Open
// rebuilds the bucket from its latest KV snapshot and the log after it.
// The log start offset is the oldest segment's base offset; expiry
// records the new start in acked-offsets before it removes a file, so
// Open can tell expiry from a lost segment. Files go oldest first, so a
// crash part way leaves a log starting at a segment boundary. Segments
// are reference counted: a reader keeps the segments of its snapshot, so
// expiry under an open reader does not disturb it (expiry keeps the
// descriptor of a segment it removes open until the last reader lets go).
//
// A segment's file descriptor is not held for the life of the segment:
// the files go through one cache per engine (filecache.go) that holds at
// most Options.MaxOpenSegments open, opening the others when they are
// read or written and closing the least recently used ones (fsynced
// first with Options.Sync). The default, 1024 or a quarter of the
// process's open-file limit when that is lower, keeps any number of
// buckets and partitions under the limit.
//
// # Files
//
//	<dir>/LOCK                       flock held while an Engine is open
//	<dir>/catalog.json               the catalog
//	<dir>/commits.log                the commit journal
//	<dir>/acked-offsets              the acknowledged-offsets checkpoint
//	<dir>/data/<table id>/b<bucket>/                       a bucket's log
//	<dir>/data/<table id>/p<partition id>/b<bucket>/       of a partition
//	    <base offset %020d>.log      segment: record batches back to back
//	    <base offset %020d>.index    sparse offset index of the segment
//	<dir>/kv/                        the Pebble store of every primary-key bucket
//	<dir>/kv-snapshots/<table id>/[p<partition id>/]b<bucket>/
//	    <snapshot id %020d>.snap     a KV snapshot
//	<dir>/lake/<table id>/           the lake tier, kept by the driver
//
// A segment rolls when the next batch would take it past
// Options.SegmentBytes. The index holds one entry (uint32 offset relative
// to the segment's base, uint32 byte position) per IndexIntervalBytes of
// batches; it is an optimisation, rebuilt on Open when missing or stale.
// The batch format is documented in internal/logformat. A table's data is
// removed when it is dropped; data left by a drop interrupted by a crash
// is removed by the next Open. Only what the engine wrote goes: entries
// named as above, of table and partition ids the catalog allocated and
// dropped (layout.go); anything else is logged and left. catalog.json is
// written before any other file of a new database, so a directory with
// engine files but no catalog is one whose catalog was lost: Open refuses
// it with ErrCorrupt rather than take every table for dropped.
//
// InMemory runs the same code over NewMemFS; Options.FS replaces the file
// system altogether. Tests inject faults there: FaultFS fails the nth
// write, fsync, rename or creation with the error of their choice, and
// NewCrashMemFS remembers what was fsynced so that MemFSAfterCrash gives
// what a power loss would leave.
//
// The lock is an OS flock on <dir>/LOCK: held by another process (or by
// another Engine of this process: flock locks belong to the open file) it
// fails with metadata.ErrLocked naming the directory. Sharing one engine
// between connections of a process is the driver's job.
package storage
