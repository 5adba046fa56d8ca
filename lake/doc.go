// Package lake is the lake tier: tables tiered into plain Parquet files,
// grouped into lake snapshots by manifests, and read back with projection,
// statistics pruning and, for primary-key tables, a sorted merge. It is
// the only package that imports parquet/pqarrow.
//
// # Layout
//
// Under the lake root (the engine's <dir>/lake):
//
//	<table id>/data/<partition name or "-">/b<bucket>/<snapshot id>-<n>.parquet
//	<table id>/data/<partition name or "-">/b<bucket>/<snapshot id>-undo-<n>.parquet
//	<table id>/snapshots/<snapshot id, %020d>.json
//
// A data file holds rows of one bucket of one partition: the table's
// columns in schema order, then __bucket INT, __offset BIGINT and
// __timestamp TIMESTAMP_LTZ(3). Files are zstd-compressed, carry min, max
// and null-count statistics per row group (about 128k rows each) and the
// Arrow schema, and use Parquet's own logical types (DATE, TIME,
// TIMESTAMP with isAdjustedToUTC for TIMESTAMP_LTZ only, DECIMAL, LIST,
// MAP, nested groups), so any Parquet reader reads them. Parquet has no
// second unit: TIME(0) and TIMESTAMP(0) are stored in milliseconds and
// converted back on read. The first key column of a primary-key table
// (when it is an integer) and __offset are delta-encoded
// (DELTA_BINARY_PACKED): both ascend within a file.
//
// # Undo layout
//
// A primary-key table's snapshots are of the undo layout (Manifest.Layout,
// manifest format 4): only the newest snapshot's data files hold its rows
// whole. Each round also writes, per bucket it rewrote that the previous
// snapshot held, undo files (Manifest.Undo) that take the bucket back to
// the previous snapshot: the old row of each key changed or removed (of a
// changed key only the columns the round changed; UndoSameColumn marks
// the others, written NULL), and a marker (__offset UndoAbsent) for each
// key added. An older snapshot is read as the newest snapshot's files of
// the buckets it held, overlaid by the undo files of every snapshot after
// it (SnapshotFiles, merged by OpenSorted). docs/lake-retention.md gives
// the reasons and the sizes.
//
// # Invariants
//
//   - A manifest lists each bucket's tiered offset (keyed by partition
//     name and bucket, with the partition's id) and so the partition
//     names. A log table's manifest, and the newest one of a key table,
//     lists every file of its snapshot; an older key-table snapshot is
//     read through the manifests after it, which Expire keeps with it.
//   - Snapshot ids of a table increase from 1; Commit refuses an id not
//     greater than the latest.
//   - A manifest is written to a temporary file, synced, renamed into
//     place and its directory synced: readers see whole snapshots only. A
//     temporary file left by a crash is ignored, and removed by the next
//     commit of that table.
//   - A data file is written once and never changed. Files no manifest
//     lists (an aborted or crashed round) are garbage and are never read.
//   - A primary-key table's file is sorted by the encoded physical key
//     (metadata.EncodeOrderedKey), each key once; the writer refuses rows
//     out of order and records the file's key range in its key-value
//     metadata. Several files of a bucket are merged k-way, never
//     concatenated; for a key present in several data files, the newer
//     snapshot's file wins, and an undo file's row beats a data file's
//     (the older snapshot's undo file first). Undo files are read only
//     that way: OpenFiles refuses them.
//   - Expire removes manifests first, then the files no kept snapshot
//     needs: a crash between leaves only such files, never a kept
//     snapshot without its files.
//   - Statistics only ever skip data that cannot match: a missing,
//     unreadable or NaN-tainted statistic answers "maybe".
//   - Bytes that do not form a lake file or manifest are ErrCorrupt
//     naming the file, never a panic.
//   - A manifest (format 3) lists with each file the CRC-32C of its
//     Parquet footer; a reader reads only the footer and checks it before
//     decoding any of it, since the decoders allocate what a damaged
//     length says. The footer of a file the lake cannot vouch for (listed
//     by a format 2 manifest, or being imported) is walked first instead:
//     no thrift container or string may declare more than its bytes hold.
//     The stored Arrow schema of every file is bounded the same way (its
//     message, tables, vectors and strings lie within its bytes) before
//     arrow-go decodes it.
//   - DropTable removes only what the lake wrote: manifests, their
//     temporary files and data files named as above. Anything else in a
//     table's directory stays, with the directories holding it.
package lake
