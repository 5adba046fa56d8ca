package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// KV snapshot files (see the package documentation for their lifecycle).
//
//	header, 64 bytes, little-endian:
//	   0  8  magic "FLKVSNP1"
//	   8  8  snapshot id
//	  16  8  log offset (the first offset the snapshot does not hold)
//	  24  8  table id
//	  32  8  partition id
//	  40  4  bucket
//	  44  4  schema id
//	  48  8  row count
//	  56  4  chunk count
//	  60  4  CRC-32C (Castagnoli) of bytes [0, 60)
//	chunks, back to back, rows in ascending key order:
//	   4  key block length
//	   4  CRC-32C of the key block
//	      key block: per row, uvarint length then the row's
//	      metadata.EncodeOrderedKey of its physical primary key
//	      a record batch (internal/logformat, append only, no
//	      statistics) with the chunk's rows, checked by its own CRC
//
// The file ends right after its last chunk; the header is written last.
const (
	kvSnapDirName    = "kv-snapshots"
	kvSnapMagic      = "FLKVSNP1"
	kvSnapHeaderSize = 64
	kvSnapExt        = ".snap"
	kvSnapTmpExt     = ".snap.tmp"
	kvSnapChunkRows  = 4096
	kvSnapChunkBytes = 4 << 20
	kvSnapChunkHdr   = 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type kvSnapHeader struct {
	id, logOffset int64
	tb            metadata.TableBucket
	schemaID      int32
	rows          int64
	chunks        int32
}

func (h kvSnapHeader) encode() []byte {
	b := make([]byte, kvSnapHeaderSize)
	copy(b, kvSnapMagic)
	binary.LittleEndian.PutUint64(b[8:], uint64(h.id))
	binary.LittleEndian.PutUint64(b[16:], uint64(h.logOffset))
	binary.LittleEndian.PutUint64(b[24:], uint64(h.tb.TableID))
	binary.LittleEndian.PutUint64(b[32:], uint64(h.tb.PartitionID))
	binary.LittleEndian.PutUint32(b[40:], uint32(h.tb.Bucket))
	binary.LittleEndian.PutUint32(b[44:], uint32(h.schemaID))
	binary.LittleEndian.PutUint64(b[48:], uint64(h.rows))
	binary.LittleEndian.PutUint32(b[56:], uint32(h.chunks))
	binary.LittleEndian.PutUint32(b[60:], crc32.Checksum(b[:60], castagnoli))
	return b
}

func parseKvSnapHeader(b []byte) (kvSnapHeader, error) {
	if len(b) < kvSnapHeaderSize {
		return kvSnapHeader{}, fmt.Errorf("%w: header cut short (%d bytes)", metadata.ErrCorrupt, len(b))
	}
	if string(b[:8]) != kvSnapMagic {
		return kvSnapHeader{}, fmt.Errorf("%w: bad magic %q", metadata.ErrCorrupt, b[:8])
	}
	if got, want := crc32.Checksum(b[:60], castagnoli), binary.LittleEndian.Uint32(b[60:]); got != want {
		return kvSnapHeader{}, fmt.Errorf("%w: header CRC %08x, want %08x", metadata.ErrCorrupt, got, want)
	}
	h := kvSnapHeader{
		id:        int64(binary.LittleEndian.Uint64(b[8:])),
		logOffset: int64(binary.LittleEndian.Uint64(b[16:])),
		tb: metadata.TableBucket{
			TableID:     int64(binary.LittleEndian.Uint64(b[24:])),
			PartitionID: int64(binary.LittleEndian.Uint64(b[32:])),
			Bucket:      int32(binary.LittleEndian.Uint32(b[40:])),
		},
		schemaID: int32(binary.LittleEndian.Uint32(b[44:])),
		rows:     int64(binary.LittleEndian.Uint64(b[48:])),
		chunks:   int32(binary.LittleEndian.Uint32(b[56:])),
	}
	if h.id < 0 || h.logOffset < 0 || h.rows < 0 || h.chunks < 0 {
		return kvSnapHeader{}, fmt.Errorf("%w: negative header field", metadata.ErrCorrupt)
	}
	return h, nil
}

// kvSnapDir is a bucket's snapshot directory relative to the engine root:
// kv-snapshots/<table id>/[p<partition id>/]b<bucket>.
func kvSnapDir(tb metadata.TableBucket) string {
	parts := []string{kvSnapDirName, strconv.FormatInt(tb.TableID, 10)}
	if tb.PartitionID != metadata.NonPartitioned {
		parts = append(parts, "p"+strconv.FormatInt(tb.PartitionID, 10))
	}
	return filepath.Join(append(parts, "b"+strconv.Itoa(int(tb.Bucket)))...)
}

func kvSnapFile(id int64) string { return fmt.Sprintf("%020d%s", id, kvSnapExt) }

// TakeKvSnapshots snapshots every bucket of a primary-key table (of every
// partition) now and returns them ordered by partition and bucket. A
// bucket whose state has not changed since its latest snapshot (the same
// flushed offset) reuses that snapshot rather than writing a copy.
func (e *Engine) TakeKvSnapshots(ctx context.Context, path metadata.TablePath) ([]KvSnapshotResult, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	entry, err := cat.table(path)
	if err != nil {
		return nil, err
	}
	if !entry.Info.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: table %s has no primary key: KV snapshots need a primary-key table", metadata.ErrUnsupported, path)
	}
	type part struct {
		id   int64
		name string
	}
	parts := []part{{id: metadata.NonPartitioned}}
	if entry.Info.IsPartitioned() {
		parts = parts[:0]
		for _, p := range entry.Partitions {
			parts = append(parts, part{p.ID, p.Name})
		}
		slices.SortFunc(parts, func(a, b part) int { return strings.Compare(a.name, b.name) })
	}
	var out []KvSnapshotResult
	for _, p := range parts {
		for b := range entry.Info.NumBuckets {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			tb := metadata.TableBucket{TableID: entry.Info.TableID, PartitionID: p.id, Bucket: int32(b)}
			s, err := e.snapshotBucket(entry, tb)
			if err != nil {
				return nil, err
			}
			out = append(out, KvSnapshotResult{PartitionName: p.name, Bucket: tb.Bucket, SnapshotID: s.id, LogOffset: s.logOffset})
		}
	}
	return out, nil
}

// snapshotBucket writes a snapshot of tb's current state, or returns the
// latest one when the state has not moved since. The caller holds mu
// shared.
func (e *Engine) snapshotBucket(entry *tableEntry, tb metadata.TableBucket) (kvSnap, error) {
	kb := e.kvBucketState(tb)
	if kb.broken != nil {
		return kvSnap{}, kb.broken
	}
	kb.snapMu.Lock()
	defer kb.snapMu.Unlock()
	t, err := e.tabletForWrite(tb)
	if err != nil {
		return kvSnap{}, err
	}
	// Under the bucket's write lock no statement is between its Pebble
	// write and its high watermark: the cut's flushed offset is
	// committed.
	t.mu.Lock()
	ps := e.kv.NewSnapshot()
	t.mu.Unlock()
	defer ps.Close()
	off, err := readFlushedOffset(ps, tb)
	if err != nil {
		return kvSnap{}, err
	}
	// The latest snapshot is copied under the lock: readers pin it
	// (its pins field) concurrently.
	kb.mu.Lock()
	var (
		latest    kvSnap
		hasLatest bool
	)
	if n := len(kb.mu.snaps); n > 0 {
		latest, hasLatest = *kb.mu.snaps[n-1], true
	}
	id := kb.mu.nextID
	kb.mu.Unlock()
	if hasLatest && latest.logOffset == off {
		return latest, nil
	}
	s, err := e.writeKvSnapshot(entry, tb, ps, id, off)
	if err != nil {
		return kvSnap{}, err
	}
	kb.mu.Lock()
	defer kb.mu.Unlock()
	if kb.mu.dropped {
		return *s, nil
	}
	kb.mu.snaps = append(kb.mu.snaps, s)
	kb.mu.nextID = id + 1
	e.gcSnapshotsLocked(kb)
	return *s, nil
}

// gcSnapshotsLocked removes every snapshot but the latest that no reader
// pins. The caller holds kb.mu.
func (e *Engine) gcSnapshotsLocked(kb *kvBucket) {
	n := len(kb.mu.snaps)
	kept := kb.mu.snaps[:0]
	for i, s := range kb.mu.snaps {
		if i == n-1 || s.pins > 0 {
			kept = append(kept, s)
			continue
		}
		if err := e.fs.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			e.opts.Logger.Warn("could not remove an old KV snapshot", "file", s.rel, "err", err)
		}
	}
	clear(kb.mu.snaps[len(kept):])
	kb.mu.snaps = kept
}

// writeKvSnapshot writes the rows of tb in ps to a new snapshot file:
// a temporary file, fsync, rename, fsync of the directory.
func (e *Engine) writeKvSnapshot(entry *tableEntry, tb metadata.TableBucket, ps *pebble.Snapshot, id, off int64) (*kvSnap, error) {
	rel := filepath.Join(kvSnapDir(tb), kvSnapFile(id))
	dir := filepath.Join(e.root, kvSnapDir(tb))
	s := &kvSnap{id: id, logOffset: off, path: filepath.Join(e.root, rel), rel: rel}
	if err := e.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", kvSnapDir(tb), err)
	}
	tmp := filepath.Join(dir, fmt.Sprintf("%020d%s", id, kvSnapTmpExt))
	f, err := e.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("write KV snapshot %s: %w", rel, err)
	}
	err = e.fillKvSnapshot(f, entry, tb, ps, s)
	if err == nil && e.opts.Sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = e.fs.Rename(tmp, s.path)
	}
	if err == nil && e.opts.Sync {
		for d := dir; ; d = filepath.Dir(d) {
			if err = e.fs.SyncDir(d); err != nil || d == e.root || d == filepath.Dir(d) {
				break
			}
		}
	}
	if err != nil {
		_ = e.fs.Remove(tmp)
		return nil, fmt.Errorf("write KV snapshot %s: %w", rel, err)
	}
	return s, nil
}

func (e *Engine) fillKvSnapshot(f File, entry *tableEntry, tb metadata.TableBucket, ps *pebble.Snapshot, s *kvSnap) error {
	prefix := kvDataPrefix(tb)
	it, err := ps.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	h := kvSnapHeader{id: s.id, logOffset: s.logOffset, tb: tb, schemaID: entry.Info.SchemaID}
	pos := int64(kvSnapHeaderSize)
	var (
		keys  []byte
		rows  [][]any
		bytes int
	)
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		batch, err := e.encodeSnapshotRows(entry, rows)
		if err != nil {
			return err
		}
		chunk := make([]byte, kvSnapChunkHdr, kvSnapChunkHdr+len(keys)+len(batch))
		binary.LittleEndian.PutUint32(chunk, uint32(len(keys)))
		binary.LittleEndian.PutUint32(chunk[4:], crc32.Checksum(keys, castagnoli))
		chunk = append(append(chunk, keys...), batch...)
		if _, err := f.WriteAt(chunk, pos); err != nil {
			return err
		}
		pos += int64(len(chunk))
		h.rows += int64(len(rows))
		h.chunks++
		keys, rows, bytes = keys[:0], rows[:0], 0
		return nil
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()[kvPrefixSize:]
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		row, err := decodeRowValue(v, &entry.Info, entry.types)
		if err != nil {
			return fmt.Errorf("%s: %w", tb, err)
		}
		keys = binary.AppendUvarint(keys, uint64(len(k)))
		keys = append(keys, k...)
		rows = append(rows, row)
		bytes += len(k) + len(v)
		if len(rows) >= kvSnapChunkRows || bytes >= kvSnapChunkBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	s.rows = h.rows
	_, err = f.WriteAt(h.encode(), 0)
	return err
}

// encodeSnapshotRows encodes rows as one append-only record batch with
// the table's column statistics, so that a filtered read skips chunks.
func (e *Engine) encodeSnapshotRows(entry *tableEntry, rows [][]any) ([]byte, error) {
	rb := array.NewRecordBuilder(e.opts.Allocator, entry.arrow)
	defer rb.Release()
	for _, row := range rows {
		for c, v := range row {
			if err := metadata.AppendValue(rb.Field(c), entry.types[c], v); err != nil {
				return nil, fmt.Errorf("column %s: %w", entry.Info.Schema.Columns[c].Name, err)
			}
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	return logformat.EncodeBatch(nil, logformat.Batch{SchemaID: int16(entry.Info.SchemaID), Record: rec, Stats: columnStats(entry, rows)},
		logformat.EncodeOptions{Types: entry.types, Compression: entry.Info.Config.Compression, Allocator: e.opts.Allocator})
}

// LatestKvSnapshots returns the latest KV snapshot of each bucket of a
// table without partitions, or of one partition's buckets. Log tables,
// buckets never snapshotted, and a partitioned table asked without a
// partition, have none.
func (e *Engine) LatestKvSnapshots(ctx context.Context, path metadata.TablePath, partition *metadata.PartitionInfo) (metadata.KvSnapshots, error) {
	cat, err := e.readLock()
	if err != nil {
		return metadata.KvSnapshots{}, err
	}
	defer e.mu.RUnlock()
	t, err := cat.table(path)
	if err != nil {
		return metadata.KvSnapshots{}, err
	}
	out := metadata.KvSnapshots{TableID: t.Info.TableID, PartitionID: metadata.NonPartitioned, Buckets: map[int32]metadata.KvSnapshot{}, NumBuckets: t.Info.NumBuckets}
	if partition != nil {
		if _, ok := t.partitionByID(partition.ID); !ok {
			return metadata.KvSnapshots{}, fmt.Errorf("partition %s of %s: %w", partition.Name, path, metadata.ErrNotFound)
		}
		out.PartitionID = partition.ID
	} else if t.Info.IsPartitioned() {
		return out, nil
	}
	if !t.Info.HasPrimaryKey() {
		return out, nil
	}
	e.kvMu.Lock()
	defer e.kvMu.Unlock()
	for b := range t.Info.NumBuckets {
		kb := e.kvBuckets[metadata.TableBucket{TableID: t.Info.TableID, PartitionID: out.PartitionID, Bucket: int32(b)}]
		if kb == nil {
			continue
		}
		kb.mu.Lock()
		if n := len(kb.mu.snaps); n > 0 {
			s := kb.mu.snaps[n-1]
			out.Buckets[int32(b)] = metadata.KvSnapshot{SnapshotID: s.id, LogOffset: s.logOffset}
		}
		kb.mu.Unlock()
	}
	return out, nil
}

// KvSnapshotReader reads one KV snapshot in ascending key order, chunk by
// chunk. It is not safe for concurrent use and must be closed; until then
// the snapshot file is kept.
type KvSnapshotReader struct {
	e      *Engine
	kb     *kvBucket
	snap   *kvSnap
	f      File
	size   int64
	pos    int64
	header kvSnapHeader
	chunks int32
	dec    *batchDecoders
	empty  *arrow.Schema
	mem    memory.Allocator
	filter predicate.P
	types  []metadata.DataType
	info   *metadata.TableInfo
	stats  ReadStats

	batch  KvBatch
	buf    *memory.Buffer
	err    error
	closed bool
}

// ReadKvSnapshot opens a reader of one snapshot of a bucket; the snapshot
// is kept (not garbage-collected) until the reader is closed. A snapshot
// that does not exist (never taken, or already replaced and removed) is
// ErrNotFound; a damaged file is ErrCorrupt naming it.
func (e *Engine) ReadKvSnapshot(ctx context.Context, tb metadata.TableBucket, snapshotID int64, opts ReadOptions) (*KvSnapshotReader, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	if err := checkBucket(cat, tb); err != nil {
		return nil, err
	}
	entry := cat.byID[tb.TableID]
	kb, snap, err := e.pinSnapshotLocked(tb, snapshotID)
	if err != nil {
		return nil, err
	}
	r := &KvSnapshotReader{e: e, kb: kb, snap: snap, mem: e.opts.Allocator}
	if err := r.open(entry, tb, opts); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *KvSnapshotReader) open(entry *tableEntry, tb metadata.TableBucket, opts ReadOptions) error {
	f, err := r.e.fs.OpenFile(r.snap.path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open KV snapshot %s: %w", r.snap.rel, err)
	}
	r.f = f
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat KV snapshot %s: %w", r.snap.rel, err)
	}
	r.size = st.Size()
	hdr := make([]byte, kvSnapHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
	}
	if r.header, err = parseKvSnapHeader(hdr); err != nil {
		return fmt.Errorf("KV snapshot %s: %w", r.snap.rel, err)
	}
	if r.header.tb != tb || r.header.id != r.snap.id || !entry.Info.HasSchema(r.header.schemaID) {
		return fmt.Errorf("%w: KV snapshot %s belongs to %s snapshot %d schema %d", metadata.ErrCorrupt, r.snap.rel, r.header.tb, r.header.id, r.header.schemaID)
	}
	r.pos = kvSnapHeaderSize
	r.filter, r.types, r.info = opts.Filter, entry.types, &entry.Info
	if opts.Projection != nil && len(opts.Projection) == 0 {
		r.empty = arrow.NewSchema(nil, nil)
		return nil
	}
	if r.dec, err = newBatchDecoders(entry, opts.Projection, r.mem); err != nil {
		return fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
	}
	return nil
}

func (r *KvSnapshotReader) corrupt(why string) error {
	return fmt.Errorf("%w: KV snapshot %s at byte %d: %s", metadata.ErrCorrupt, r.snap.rel, r.pos, why)
}

// Next advances to the next batch, reporting false at the end or on
// error (see Err).
func (r *KvSnapshotReader) Next() bool {
	r.release()
	if r.closed || r.err != nil {
		return false
	}
	for {
		skipped, err := r.step()
		if err != nil {
			if err != io.EOF {
				r.err = err
			}
			return false
		}
		if !skipped {
			return true
		}
	}
}

// step reads the next chunk; skipped reports a chunk whose statistics
// prove that no row of it matches the filter. Skipping snapshot rows is
// safe under the merge with the log tail: a skipped row could only reach
// the result unchanged, and it does not match; a change in the tail that
// supersedes it carries its own full row.
func (r *KvSnapshotReader) step() (skipped bool, err error) {
	if r.pos == r.size {
		if r.chunks != r.header.chunks {
			return false, r.corrupt(fmt.Sprintf("file ends after %d of %d chunks", r.chunks, r.header.chunks))
		}
		return false, io.EOF
	}
	if r.chunks >= r.header.chunks {
		return false, r.corrupt("bytes after the last chunk")
	}
	if r.size-r.pos < kvSnapChunkHdr {
		return false, r.corrupt("chunk header cut short")
	}
	var ch [kvSnapChunkHdr]byte
	if _, err := r.f.ReadAt(ch[:], r.pos); err != nil {
		return false, fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
	}
	keyLen := int64(binary.LittleEndian.Uint32(ch[:]))
	if keyLen > r.size-r.pos-kvSnapChunkHdr-logformat.HeaderSize {
		return false, r.corrupt("key block runs past the end of the file")
	}
	keyBlock := make([]byte, keyLen)
	if _, err := r.f.ReadAt(keyBlock, r.pos+kvSnapChunkHdr); err != nil {
		return false, fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
	}
	if crc32.Checksum(keyBlock, castagnoli) != binary.LittleEndian.Uint32(ch[4:]) {
		return false, r.corrupt("key block CRC mismatch")
	}
	var keys [][]byte
	for rest := keyBlock; len(rest) > 0; {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return false, r.corrupt("bad key in the key block")
		}
		keys = append(keys, rest[w:w+int(n)])
		rest = rest[w+int(n):]
	}
	bpos := r.pos + kvSnapChunkHdr + keyLen
	var hdr [logformat.HeaderSize]byte
	if _, err := r.f.ReadAt(hdr[:], bpos); err != nil {
		return false, fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
	}
	h, err := logformat.ParseHeader(hdr[:])
	if err != nil {
		return false, r.corrupt(err.Error())
	}
	if bpos+h.Size() > r.size {
		return false, r.corrupt("record batch runs past the end of the file")
	}
	if r.filter != nil && h.StatisticsLength > 0 {
		blob := make([]byte, h.StatisticsLength)
		if _, err := r.f.ReadAt(blob, bpos+logformat.HeaderSize); err != nil {
			return false, fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
		}
		cols, err := logformat.DecodeStats(blob, r.types)
		if err != nil {
			return false, fmt.Errorf("KV snapshot %s at byte %d: %w", r.snap.rel, bpos, err)
		}
		cols = pastStats(r.info, r.types, h, cols)
		if !predicate.MaybeTest(r.filter, batchStats{rows: int64(h.RecordCount), cols: cols}) {
			r.pos = bpos + h.Size()
			r.chunks++
			r.stats.BatchesSkipped++
			return true, nil
		}
	}
	buf := memory.NewResizableBuffer(r.mem)
	buf.Resize(int(h.Size()))
	if _, err := r.f.ReadAt(buf.Bytes(), bpos); err != nil {
		buf.Release()
		return false, fmt.Errorf("read KV snapshot %s: %w", r.snap.rel, err)
	}
	d, err := logformat.DecodeBatch(buf.Bytes())
	if err != nil {
		buf.Release()
		return false, r.corrupt(err.Error())
	}
	if int(h.RecordCount) != len(keys) {
		buf.Release()
		return false, r.corrupt(fmt.Sprintf("%d rows for %d keys", h.RecordCount, len(keys)))
	}
	var rec arrow.RecordBatch
	if r.empty != nil {
		rec = array.NewRecordBatch(r.empty, nil, int64(len(keys)))
	} else {
		msg := memory.SliceBuffer(buf, d.RecordsOffset, len(d.Records))
		rec, err = r.dec.Decode(h.SchemaID, msg, len(keys))
		msg.Release()
		if err != nil {
			buf.Release()
			return false, fmt.Errorf("KV snapshot %s at byte %d: %w", r.snap.rel, bpos, err)
		}
		if rec.NumRows() != int64(len(keys)) {
			rec.Release()
			buf.Release()
			return false, r.corrupt(fmt.Sprintf("%d decoded rows for %d keys", rec.NumRows(), len(keys)))
		}
	}
	r.batch = KvBatch{Record: rec, Keys: keys}
	r.buf = buf
	r.pos = bpos + h.Size()
	r.chunks++
	r.stats.Batches++
	r.stats.Rows += int64(len(keys))
	return false, nil
}

func (r *KvSnapshotReader) release() {
	if r.batch.Record != nil {
		r.batch.Record.Release()
	}
	r.batch = KvBatch{}
	if r.buf != nil {
		r.buf.Release()
		r.buf = nil
	}
}

// Batch returns the current batch; valid until the next Next or Close.
func (r *KvSnapshotReader) Batch() KvBatch { return r.batch }

// Err returns the error that ended the iteration, if any.
func (r *KvSnapshotReader) Err() error { return r.err }

// Stats returns what the reader has read so far: the chunks (record
// batches) it returned and those its filter skipped, and the rows
// returned.
func (r *KvSnapshotReader) Stats() ReadStats { return r.stats }

// Close releases the reader and unpins its snapshot, which is removed
// when it is no longer the latest. Idempotent.
func (r *KvSnapshotReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.release()
	if r.dec != nil {
		r.dec.Release()
		r.dec = nil
	}
	var err error
	if r.f != nil {
		err = r.f.Close()
	}
	r.e.unpinSnapshot(r.kb, r.snap)
	return err
}

// recoverKvSnapshots finds the snapshots on disk: per bucket the newest
// one with a sound header is the latest, older ones and leftovers of
// interrupted writes are removed, and the snapshots of dropped tables
// and partitions are removed.
func (e *Engine) recoverKvSnapshots() error {
	root := filepath.Join(e.root, kvSnapDirName)
	tables, err := e.fs.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", kvSnapDirName, err)
	}
	removeAll := func(rel, why string) error {
		e.opts.Logger.Info(why, "dir", rel)
		return e.removeOwned(rel)
	}
	cat := e.mu.cat
	for _, td := range tables {
		trel := filepath.Join(kvSnapDirName, td.Name())
		id, ok := parseID(td.Name())
		ok = ok && td.IsDir()
		entry := cat.byID[id]
		switch {
		case ok && entry != nil && entry.Info.HasPrimaryKey():
		case ok && cat.droppedTable(id):
			if err := removeAll(trel, "removing the KV snapshots of a dropped table"); err != nil {
				return err
			}
			continue
		default:
			e.opts.Logger.Warn("keeping an entry of kv-snapshots/ that is no primary-key table of the catalog", "entry", trel)
			continue
		}
		subs, err := e.fs.ReadDir(filepath.Join(e.root, trel))
		if err != nil {
			return fmt.Errorf("list %s: %w", trel, err)
		}
		for _, sd := range subs {
			name := sd.Name()
			switch {
			case strings.HasPrefix(name, "b") && !entry.Info.IsPartitioned():
				e.recoverSnapshotBucket(entry, metadata.NonPartitioned, filepath.Join(trel, name))
			case isPartitionDir(sd) && entry.Info.IsPartitioned():
				pid, _ := parsePartitionDir(name)
				if _, ok := entry.partitionByID(pid); !ok {
					if !cat.droppedPartition(entry, pid) {
						e.opts.Logger.Warn("keeping a KV snapshot directory of a partition the catalog never allocated", "dir", filepath.Join(trel, name))
						continue
					}
					if err := removeAll(filepath.Join(trel, name), "removing the KV snapshots of a dropped partition"); err != nil {
						return err
					}
					continue
				}
				buckets, err := e.fs.ReadDir(filepath.Join(e.root, trel, name))
				if err != nil {
					return fmt.Errorf("list %s: %w", filepath.Join(trel, name), err)
				}
				for _, bd := range buckets {
					e.recoverSnapshotBucket(entry, pid, filepath.Join(trel, name, bd.Name()))
				}
			default:
				e.opts.Logger.Warn("ignoring a stray entry in a KV snapshot directory", "entry", filepath.Join(trel, name))
			}
		}
	}
	return nil
}

func (e *Engine) recoverSnapshotBucket(entry *tableEntry, partition int64, rel string) {
	name := filepath.Base(rel)
	b, ok := parseBucketDir(name)
	if !ok || int(b) >= entry.Info.NumBuckets {
		e.opts.Logger.Warn("ignoring a stray KV snapshot directory", "dir", rel)
		return
	}
	tb := metadata.TableBucket{TableID: entry.Info.TableID, PartitionID: partition, Bucket: b}
	files, err := e.fs.ReadDir(filepath.Join(e.root, rel))
	if err != nil {
		e.opts.Logger.Warn("cannot list a KV snapshot directory", "dir", rel, "err", err)
		return
	}
	var ids []int64
	for _, f := range files {
		fn := f.Name()
		if _, ok := parseOwnedFile(fn, kvSnapTmpExt); ok {
			_ = e.fs.Remove(filepath.Join(e.root, rel, fn))
			continue
		}
		id, ok := parseOwnedFile(fn, kvSnapExt)
		if !ok {
			e.opts.Logger.Warn("ignoring a stray file in a KV snapshot directory", "file", filepath.Join(rel, fn))
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	kb := e.kvBucketState(tb)
	kb.mu.nextID = ids[len(ids)-1] + 1
	for i := len(ids) - 1; i >= 0; i-- {
		frel := filepath.Join(rel, kvSnapFile(ids[i]))
		h, err := e.readKvSnapHeader(frel)
		if err == nil && (h.tb != tb || h.id != ids[i]) {
			err = fmt.Errorf("%w: header names %s snapshot %d", metadata.ErrCorrupt, h.tb, h.id)
		}
		if err != nil {
			e.opts.Logger.Error("ignoring a damaged KV snapshot", "file", frel, "err", err)
			continue
		}
		kb.mu.snaps = []*kvSnap{{id: h.id, logOffset: h.logOffset, rows: h.rows, path: filepath.Join(e.root, frel), rel: frel}}
		for _, old := range ids[:i] {
			_ = e.fs.Remove(filepath.Join(e.root, rel, kvSnapFile(old)))
		}
		return
	}
}

func (e *Engine) readKvSnapHeader(rel string) (kvSnapHeader, error) {
	f, err := e.fs.OpenFile(filepath.Join(e.root, rel), os.O_RDONLY, 0)
	if err != nil {
		return kvSnapHeader{}, err
	}
	defer f.Close()
	b := make([]byte, kvSnapHeaderSize)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return kvSnapHeader{}, err
	}
	return parseKvSnapHeader(b)
}

// dropKvState removes the KV rows, flushed offsets and snapshots of a
// dropped table (partition == nil) or partition. The catalog no longer
// knows them; a crash before this finishes is cleaned up by the next Open.
func (e *Engine) dropKvState(tableID int64, partition *int64) error {
	e.kvMu.Lock()
	for tb, kb := range e.kvBuckets {
		if tb.TableID == tableID && (partition == nil || tb.PartitionID == *partition) {
			kb.mu.Lock()
			kb.mu.dropped = true
			kb.mu.Unlock()
			delete(e.kvBuckets, tb)
		}
	}
	e.kvMu.Unlock()
	var errs []error
	if e.kv != nil {
		errs = append(errs, e.deleteKvRange(tableID, partition))
	}
	dir := filepath.Join(kvSnapDirName, strconv.FormatInt(tableID, 10))
	if partition != nil {
		dir = filepath.Join(dir, "p"+strconv.FormatInt(*partition, 10))
	}
	if err := e.removeOwned(dir); err != nil {
		errs = append(errs, fmt.Errorf("remove KV snapshots: %w", err))
	}
	return errors.Join(errs...)
}

// runEvery runs f every interval until stop closes: the engine's
// background work (KV snapshots, auto-partitioning), one of e.bg.wg.
func (e *Engine) runEvery(interval time.Duration, stop <-chan struct{}, f func()) {
	defer e.bg.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			f()
		}
	}
}

func (e *Engine) snapshotChanged(stop <-chan struct{}) {
	defer func() {
		if p := recover(); p != nil {
			e.opts.Logger.Error("background KV snapshot panicked", "panic", fmt.Sprint(p))
		}
	}()
	cat, err := e.readLock()
	if err != nil {
		return
	}
	defer e.mu.RUnlock()
	e.kvMu.Lock()
	var due []*kvBucket
	for _, kb := range e.kvBuckets {
		if kb.broken != nil {
			continue
		}
		kb.mu.Lock()
		last := int64(0)
		if n := len(kb.mu.snaps); n > 0 {
			last = kb.mu.snaps[n-1].logOffset
		}
		kb.mu.Unlock()
		if kb.applied.Load() > last {
			due = append(due, kb)
		}
	}
	e.kvMu.Unlock()
	slices.SortFunc(due, func(a, b *kvBucket) int {
		return strings.Compare(a.tb.String(), b.tb.String())
	})
	for _, kb := range due {
		select {
		case <-stop:
			return
		default:
		}
		entry := cat.byID[kb.tb.TableID]
		if entry == nil || checkBucket(cat, kb.tb) != nil {
			continue
		}
		if _, err := e.snapshotBucket(entry, kb.tb); err != nil {
			e.opts.Logger.Error("background KV snapshot failed", "table", entry.Info.Path.String(), "bucket", kb.tb.String(), "err", err)
		}
	}
}

// PinKvSnapshot keeps one snapshot of a bucket from being removed until
// the returned release is called (release is idempotent). A query pins the
// snapshots it planned, so that snapshots taken while it runs do not remove
// them before their splits are opened. A snapshot already removed is
// ErrNotFound.
func (e *Engine) PinKvSnapshot(tb metadata.TableBucket, snapshotID int64) (release func(), err error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	if err := checkBucket(cat, tb); err != nil {
		return nil, err
	}
	kb, snap, err := e.pinSnapshotLocked(tb, snapshotID)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { e.unpinSnapshot(kb, snap) }) }, nil
}

// pinSnapshotLocked finds a bucket's snapshot and pins it. The caller
// holds e.mu for reading.
func (e *Engine) pinSnapshotLocked(tb metadata.TableBucket, snapshotID int64) (*kvBucket, *kvSnap, error) {
	e.kvMu.Lock()
	kb := e.kvBuckets[tb]
	e.kvMu.Unlock()
	if kb != nil {
		kb.mu.Lock()
		defer kb.mu.Unlock()
		for _, s := range kb.mu.snaps {
			if s.id == snapshotID {
				e.pinLocked(s)
				return kb, s, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("KV snapshot %d of %s: %w", snapshotID, tb, metadata.ErrNotFound)
}

// pinLocked pins a snapshot of a bucket. The caller holds the bucket's
// mu.
func (e *Engine) pinLocked(s *kvSnap) {
	s.pins++
	e.kvPins.Add(1)
}

// unpinSnapshot releases one pin; a snapshot that is no longer the latest
// and has no pins left is removed.
func (e *Engine) unpinSnapshot(kb *kvBucket, snap *kvSnap) {
	kb.mu.Lock()
	defer kb.mu.Unlock()
	snap.pins--
	e.kvPins.Add(-1)
	if !kb.mu.dropped && !e.closedFlag.Load() {
		e.gcSnapshotsLocked(kb)
	}
}
