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
// converted back on read.
//
// # Invariants
//
//   - A manifest lists every live file of its snapshot, each bucket's
//     tiered offset (keyed by partition name and bucket, with the
//     partition's id) and so the partition names; a reader needs no other
//     manifest.
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
//     concatenated; for a key present in several, the newer snapshot's
//     file wins.
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
