// Package storage is the embedded Fluss: the catalog (databases, tables,
// partitions and their ids), a log tablet per bucket, the writer that
// routes rows to partitions and buckets, log readers, and the admin calls
// the planner consumes (ListOffsets, LatestKvSnapshots,
// ReadableLakeSnapshot). *Engine is safe for concurrent use; a *LogReader
// is not, and must be closed.
//
// # Invariants
//
//   - Offsets: each bucket's log has dense int64 offsets from 0. The log
//     start offset is 0 until TTL exists. A batch of n records takes the
//     offsets [base, base+n).
//   - High watermark (HW): the exclusive end of committed records. Readers
//     never see at or past it; ReadLog caps its stop offset at the HW of
//     the moment it opens, so rows written later are never read by it.
//     OffsetLatest is the HW.
//   - Statements: every row is checked and coerced before anything is
//     written (wrong arity, NULL in a NOT NULL column or partition key, a
//     value that does not fit: an error naming the row, column and value).
//     Each touched bucket gets one record batch (several when a statement
//     is very large). All batches are written, fsynced when Options.Sync,
//     and only then does every touched bucket's HW advance: a statement
//     becomes visible everywhere at once. Writers of one bucket are
//     serialised; a statement locks its buckets in one global order.
//   - A failed write is rolled back in every bucket it touched (files
//     truncated to where they were). When the roll back or an fsync fails,
//     the engine refuses further writes (ErrReadOnly): a failed fsync may
//     have lost pages it had reported written.
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
// With Sync (the default) a statement is durable when Append returns.
// Without it a crash may lose the most recent statements but never
// corrupts earlier data. Across buckets, atomicity holds for live readers;
// after a crash a statement whose fsync never completed may survive in
// some buckets and not others (each bucket keeps it whole or not at all).
//
// Open recovers every tablet by scanning every batch of every segment
// (header, length and CRC-32C):
//   - a torn tail of the last segment (a header cut short, a length that
//     runs past the end of the file, or a bad last batch) is a write that
//     never completed: it is truncated back to the last whole batch, and
//     nothing before it is lost;
//   - a bad batch with whole batches after it is damage, not a torn write:
//     it is logged and kept. Reads of its offsets fail with an error
//     wrapping metadata.ErrCorrupt that names the segment file (relative
//     to the data directory) and the byte position; the batches around it
//     stay readable. Reads check every batch's CRC, so damage that appears
//     after Open is reported the same way.
//
// Everything that survives recovery was written by a completed statement,
// so the HW after Open is the log end offset.
//
// # Files
//
//	<dir>/LOCK                       flock held while an Engine is open
//	<dir>/catalog.json               the catalog
//	<dir>/data/<table id>/b<bucket>/                       a bucket's log
//	<dir>/data/<table id>/p<partition id>/b<bucket>/       of a partition
//	    <base offset %020d>.log      segment: record batches back to back
//	    <base offset %020d>.index    sparse offset index of the segment
//
// A segment rolls when the next batch would take it past
// Options.SegmentBytes. The index holds one entry (uint32 offset relative
// to the segment's base, uint32 byte position) per IndexIntervalBytes of
// batches; it is an optimisation, rebuilt on Open when missing or stale.
// The batch format is documented in internal/logformat. A table's data is
// removed when it is dropped; data left by a drop interrupted by a crash
// is removed by the next Open.
//
// InMemory runs the same code over NewMemFS; Options.FS replaces the file
// system altogether (tests inject faults there).
//
// The lock is an OS flock on <dir>/LOCK: held by another process (or by
// another Engine of this process: flock locks belong to the open file) it
// fails with metadata.ErrLocked naming the directory. Sharing one engine
// between connections of a process is the driver's job.
package storage
