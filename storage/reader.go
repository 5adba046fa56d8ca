package storage

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// ReadOptions shape a log read.
type ReadOptions struct {
	// Projection lists the table column indexes to decode, in output
	// order; nil means all. An empty non-nil projection decodes no
	// column: batches then carry only their row counts.
	Projection []int
	// Filter, when set, lets the reader skip batches whose statistics
	// prove that no row matches. It is never applied to single rows: the
	// caller still filters what it gets.
	Filter predicate.P
}

// LogBatch is one decoded record batch of a log read.
type LogBatch struct {
	// Record holds the projected columns of the rows in [start, stop).
	// It is valid until the next call to Next or Close; Retain it to keep
	// it longer.
	Record arrow.RecordBatch
	// BaseOffset is the log offset of Record's first row; row i has
	// offset BaseOffset+i.
	BaseOffset int64
	// ChangeTypes has the change type of each row; nil for append-only
	// batches (every row +A).
	ChangeTypes []metadata.ChangeType
	// CommitTimestamp is when the batch was committed, in milliseconds.
	CommitTimestamp int64
}

// LogReader reads a range of one bucket's log, batch by batch. It is not
// safe for concurrent use and must be closed. It reads a snapshot taken
// when it was opened: the stop offset is pinned to the high watermark of
// that moment, so later writes are never seen. Dropping the table (or the
// partition) under an open reader makes its next read fail.
type LogReader struct {
	tb    metadata.TableBucket
	snap  tabletSnapshot
	next  int64 // the next offset to return
	stop  int64 // exclusive
	opts  ReadOptions
	types []metadata.DataType
	info  *metadata.TableInfo
	mem   memory.Allocator
	dec   *batchDecoders
	empty *arrow.Schema // the schema of a zero-column projection

	seg int   // index into snap.segs
	pos int64 // position of the next batch in the segment

	batch LogBatch
	buf   *memory.Buffer
	// partialReads counts the batches read only in part (readProjected).
	partialReads int64
	scratch      []byte // raw batch bytes when no column is decoded
	head         []byte // the start of the batch being read: header, statistics
	stats        ReadStats
	err          error
	closed       bool
}

// ReadStats count what a reader read and what its filter let it skip. A
// log or KV snapshot reader counts record batches; a lake reader counts
// Parquet row groups. Rows are the rows returned.
type ReadStats struct {
	Batches, BatchesSkipped     int64
	RowGroups, RowGroupsSkipped int64
	Rows                        int64
}

// Add returns the sum of s and o.
func (s ReadStats) Add(o ReadStats) ReadStats {
	return ReadStats{
		Batches:          s.Batches + o.Batches,
		BatchesSkipped:   s.BatchesSkipped + o.BatchesSkipped,
		RowGroups:        s.RowGroups + o.RowGroups,
		RowGroupsSkipped: s.RowGroupsSkipped + o.RowGroupsSkipped,
		Rows:             s.Rows + o.Rows,
	}
}

// headRead is how many bytes of a batch the reader reads first: the
// header and, unless there are many statistics columns, the statistics.
const headRead = 512

// ReadLog opens a reader over [start, stop) of a bucket's log. stop is
// capped at the high watermark (stop < 0 means the high watermark); a
// start below the log start offset is an error.
func (e *Engine) ReadLog(ctx context.Context, tb metadata.TableBucket, start, stop int64, opts ReadOptions) (*LogReader, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	if err := checkBucket(cat, tb); err != nil {
		return nil, err
	}
	entry := cat.byID[tb.TableID]
	var snap tabletSnapshot
	if t := e.tablet(tb); t != nil {
		if snap, err = t.snapshot(); err != nil {
			return nil, err
		}
	}
	return newLogReader(entry, tb, snap, start, stop, opts, e.opts.Allocator)
}

// newLogReader opens a reader of [start, stop) over a snapshot of a
// tablet (the zero snapshot for a bucket never written). The reader owns
// the snapshot's segment references from then on, also when it fails.
func newLogReader(entry *tableEntry, tb metadata.TableBucket, snap tabletSnapshot, start, stop int64, opts ReadOptions, mem memory.Allocator) (*LogReader, error) {
	r := &LogReader{tb: tb, snap: snap, next: start, opts: opts, types: entry.types, info: &entry.Info, mem: mem,
		head: make([]byte, headRead)}
	if stop < 0 || stop > r.snap.hw {
		stop = r.snap.hw
	}
	r.stop = stop
	if start < r.snap.logStart {
		r.snap.release()
		return nil, fmt.Errorf("%w: %s: offset %d is below the log start offset %d", metadata.ErrNotFound, tb, start, r.snap.logStart)
	}
	r.seek()
	if opts.Projection != nil && len(opts.Projection) == 0 {
		r.empty = arrow.NewSchema(nil, nil)
		return r, nil
	}
	var err error
	if r.dec, err = newBatchDecoders(entry, opts.Projection, r.mem); err != nil {
		r.snap.release()
		return nil, fmt.Errorf("read %s: %w", tb, err)
	}
	return r, nil
}

// seek positions the reader at the batch holding r.next: the segment by
// base offset, then the sparse index entry at or before it.
func (r *LogReader) seek() {
	segs := r.snap.segs
	i := sort.Search(len(segs), func(i int) bool { return segs[i].seg.base > r.next }) - 1
	if i < 0 {
		i = 0
	}
	r.seg, r.pos = i, 0
	if i >= len(segs) {
		return
	}
	idx := segs[i].index
	j := sort.Search(len(idx), func(j int) bool { return idx[j].offset > r.next }) - 1
	if j >= 0 {
		r.pos = idx[j].pos
	}
}

// Next advances to the next batch with rows in range, reporting false at
// the end or on error (see Err).
func (r *LogReader) Next() bool {
	r.release()
	if r.closed || r.err != nil {
		return false
	}
	for r.next < r.stop {
		ok, err := r.step()
		if err != nil {
			r.err = err
			return false
		}
		if ok {
			return true
		}
	}
	return false
}

// step reads the batch at the current position; ok reports whether it
// produced rows (it may be skipped: before the range, or filtered).
func (r *LogReader) step() (ok bool, err error) {
	if r.seg >= len(r.snap.segs) {
		return false, fmt.Errorf("%w: %s: log ends before offset %d", metadata.ErrCorrupt, r.tb, r.next)
	}
	sv := r.snap.segs[r.seg]
	if r.pos >= sv.size {
		if r.next < sv.next {
			// Offsets the segment should hold are not in whole batches:
			// damage recovery found and kept.
			why := sv.seg.damage
			if why == "" {
				why = "batches missing"
			}
			return false, fmt.Errorf("%w: %s: offsets %d to %d are unreadable: %s", metadata.ErrCorrupt, sv.seg.rel, r.next, sv.next-1, why)
		}
		r.seg++
		r.pos = 0
		return false, nil
	}
	if sv.size-r.pos < logformat.HeaderSize {
		return false, r.corrupt(sv, "batch header cut short")
	}
	// One read takes the header and, usually, the statistics after it,
	// which is all a batch the filter skips costs.
	head := r.head[:min(int64(len(r.head)), sv.size-r.pos)]
	if _, err := sv.seg.f.ReadAt(head, r.pos); err != nil {
		return false, fmt.Errorf("read %s at byte %d: %w", sv.seg.rel, r.pos, err)
	}
	h, err := logformat.ParseHeader(head)
	if err != nil {
		return false, r.corrupt(sv, err.Error())
	}
	if r.pos+h.Size() > sv.size {
		return false, r.corrupt(sv, "batch runs past the end of the segment")
	}
	if h.NextOffset() <= r.next {
		r.pos += h.Size()
		return false, nil
	}
	if h.BaseOffset > r.next {
		return false, r.corrupt(sv, fmt.Sprintf("batch starts at offset %d, want %d", h.BaseOffset, r.next))
	}
	from := r.next - h.BaseOffset
	to := min(h.NextOffset(), r.stop) - h.BaseOffset
	if skip, err := r.skipByStats(sv, h, head); err != nil || skip {
		if err == nil {
			r.pos += h.Size()
			r.next = h.BaseOffset + to
			r.stats.BatchesSkipped++
		}
		return false, err
	}
	// The whole batch is read and its CRC checked before any of it is
	// used. Without columns to decode it goes to a reused scratch slice:
	// a row count needs no Arrow buffer at all.
	//
	// The exception: a large batch whose CRC an earlier read checked, of
	// which the projection needs only some columns, is read only where
	// they are (readProjected).
	var raw []byte
	var buf *memory.Buffer
	partial := false
	if r.empty != nil {
		if int64(cap(r.scratch)) < h.Size() {
			r.scratch = make([]byte, h.Size())
		}
		raw = r.scratch[:h.Size()]
	} else {
		buf = batchPool.newBuffer(int(h.Size()))
		raw = buf.Bytes()
		partial = h.Size() >= partialReadMin && r.dec.Projects(h.SchemaID) && sv.seg.isVerified(r.pos)
	}
	fail := func(err error) (bool, error) {
		if buf != nil {
			buf.Release()
		}
		return false, err
	}
	var d logformat.Decoded
	if partial {
		if err := r.readProjected(sv, h, head, raw); err != nil {
			return fail(err)
		}
		if d, err = logformat.DecodeVerifiedBatch(raw); err != nil {
			return fail(r.corrupt(sv, err.Error()))
		}
		r.partialReads++
	} else {
		if _, err := sv.seg.f.ReadAt(raw, r.pos); err != nil {
			return fail(fmt.Errorf("read %s at byte %d: %w", sv.seg.rel, r.pos, err))
		}
		if d, err = logformat.DecodeBatch(raw); err != nil {
			return fail(r.corrupt(sv, err.Error()))
		}
		if h.Size() >= partialReadMin {
			sv.seg.markVerified(r.pos)
		}
	}
	if int64(h.RecordCount) != int64(h.LastOffsetDelta)+1 {
		// Batches with offsets but no rows (a primary-key write that
		// changed nothing) hold nothing to read.
		if h.RecordCount == 0 {
			r.pos += h.Size()
			r.next = h.BaseOffset + to
			return fail(nil)
		}
		return fail(r.corrupt(sv, fmt.Sprintf("%d records for %d offsets", h.RecordCount, h.LastOffsetDelta+1)))
	}
	var rec arrow.RecordBatch
	if r.empty != nil {
		rec = array.NewRecordBatch(r.empty, nil, int64(h.RecordCount))
	} else {
		msg := memory.SliceBuffer(buf, d.RecordsOffset, len(d.Records))
		rec, err = r.dec.Decode(h.SchemaID, msg, int(h.RecordCount))
		msg.Release()
		if err != nil {
			return fail(fmt.Errorf("%s at byte %d: %w", sv.seg.rel, r.pos, err))
		}
		if rec.NumRows() != int64(h.RecordCount) {
			rec.Release()
			return fail(r.corrupt(sv, fmt.Sprintf("%d rows for %d records", rec.NumRows(), h.RecordCount)))
		}
	}
	if from > 0 || to < int64(h.RecordCount) {
		sliced := rec.NewSlice(from, to)
		rec.Release()
		rec = sliced
	}
	r.batch = LogBatch{Record: rec, BaseOffset: h.BaseOffset + from, CommitTimestamp: h.CommitTimestamp}
	if d.ChangeTypes != nil {
		r.batch.ChangeTypes = make([]metadata.ChangeType, to-from)
		for i, c := range d.ChangeTypes[from:to] {
			r.batch.ChangeTypes[i] = metadata.ChangeType(c)
		}
	}
	r.buf = buf
	r.pos += h.Size()
	r.next = h.BaseOffset + to
	r.stats.Batches++
	r.stats.Rows += to - from
	return true, nil
}

// partialReadMin is the smallest batch readProjected reads in parts:
// below it one read of the whole batch costs about as much, and the
// verified positions are not worth keeping.
const partialReadMin = 64 << 10

// readProjected reads into raw (the batch's size) only the parts of the
// batch at the reader's position that a projected decode touches: the
// header, statistics and change types, the Arrow metadata, and the buffers
// of the projected columns. The rest of raw is left as it was (Decode
// never reads it). Only for a batch whose CRC was checked before.
func (r *LogReader) readProjected(sv segmentView, h logformat.Header, head, raw []byte) error {
	read := func(lo, hi int) error {
		if hi > len(raw) || lo > hi {
			return r.corrupt(sv, "batch sections run past its end")
		}
		if lo < len(head) {
			n := copy(raw[lo:hi], head[lo:min(hi, len(head))])
			lo += n
		}
		if lo < hi {
			if _, err := sv.seg.f.ReadAt(raw[lo:hi], r.pos+int64(lo)); err != nil {
				return fmt.Errorf("read %s at byte %d: %w", sv.seg.rel, r.pos+int64(lo), err)
			}
		}
		return nil
	}
	records := logformat.HeaderSize + int(h.StatisticsLength)
	if !h.AppendOnly() {
		records += int(h.RecordCount)
	}
	if err := read(0, records+8); err != nil {
		return err
	}
	prefix, err := logformat.MessagePrefix(raw[records:])
	if err != nil {
		return r.corrupt(sv, err.Error())
	}
	if err := read(records+8, records+prefix); err != nil {
		return err
	}
	ranges, err := r.dec.BodyRanges(h.SchemaID, raw[records:records+prefix])
	if err != nil {
		return r.corrupt(sv, err.Error())
	}
	for _, rg := range ranges {
		if err := read(records+int(rg[0]), records+int(rg[1])); err != nil {
			return err
		}
	}
	return nil
}

// skipByStats reports whether the batch at the reader's position can be
// skipped: its statistics prove that no row matches the filter. Only the
// statistics are read (they follow the header), so a skipped batch costs
// one small read and its rows are never touched; its CRC is then not
// checked, but the statistics are parsed strictly, and a malformed blob is
// an error, never a reason to skip.
func (r *LogReader) skipByStats(sv segmentView, h logformat.Header, head []byte) (bool, error) {
	if r.opts.Filter == nil || h.StatisticsLength == 0 {
		return false, nil
	}
	end := logformat.HeaderSize + int(h.StatisticsLength)
	var blob []byte
	if end <= len(head) {
		blob = head[logformat.HeaderSize:end]
	} else {
		blob = make([]byte, h.StatisticsLength)
		if _, err := sv.seg.f.ReadAt(blob, r.pos+logformat.HeaderSize); err != nil {
			return false, fmt.Errorf("read %s at byte %d: %w", sv.seg.rel, r.pos, err)
		}
	}
	stats, err := logformat.DecodeStats(blob, r.types)
	if err != nil {
		return false, fmt.Errorf("%s at byte %d: %w", sv.seg.rel, r.pos, err)
	}
	stats = pastStats(r.info, r.types, h, stats)
	return !predicate.MaybeTest(r.opts.Filter, batchStats{rows: int64(h.RecordCount), cols: stats}), nil
}

// pastStats completes the statistics of a batch of an earlier schema
// than info's: every column the schema lacked holds its pad value
// (metadata.Column.PadValue) in all its rows, NULL or a default.
func pastStats(info *metadata.TableInfo, types []metadata.DataType, h logformat.Header, stats []logformat.ColumnStats) []logformat.ColumnStats {
	if int32(h.SchemaID) == info.SchemaID {
		return stats
	}
	k, ok := info.SchemaColumns(int32(h.SchemaID))
	if !ok {
		return stats // the decode reports it
	}
	for c := k; c < len(types); c++ {
		if !logformat.SupportsStats(types[c]) {
			continue
		}
		if v := padValue(info, c); v != nil {
			stats = append(stats, logformat.ColumnStats{Column: c, Min: v, Max: v})
		} else {
			stats = append(stats, logformat.ColumnStats{Column: c, NullCount: int64(h.RecordCount)})
		}
	}
	return stats
}

func (r *LogReader) corrupt(sv segmentView, why string) error {
	return fmt.Errorf("%w: %s at byte %d: %s", metadata.ErrCorrupt, sv.seg.rel, r.pos, why)
}

// release drops the current batch.
func (r *LogReader) release() {
	if r.batch.Record != nil {
		r.batch.Record.Release()
	}
	r.batch = LogBatch{}
	if r.buf != nil {
		r.buf.Release()
		r.buf = nil
	}
}

// Batch returns the current batch; valid until the next Next or Close.
func (r *LogReader) Batch() LogBatch { return r.batch }

// PartialReads returns how many batches the reader read only in part:
// the projected columns of batches whose CRC an earlier read checked.
func (r *LogReader) PartialReads() int64 { return r.partialReads }

// Err returns the error that ended the iteration, if any.
func (r *LogReader) Err() error { return r.err }

// Stats returns what the reader has read so far: the batches it returned
// and the batches its filter skipped by their statistics, and the rows
// returned.
func (r *LogReader) Stats() ReadStats { return r.stats }

// Close releases the reader's memory. Idempotent.
func (r *LogReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.release()
	if r.dec != nil {
		r.dec.Release()
		r.dec = nil
	}
	r.snap.release()
	return nil
}

// batchStats adapts a batch's statistics to predicate.Stats.
type batchStats struct {
	rows int64
	cols []logformat.ColumnStats
}

func (s batchStats) find(c int) *logformat.ColumnStats {
	for i := range s.cols {
		if s.cols[i].Column == c {
			return &s.cols[i]
		}
	}
	return nil
}

func (s batchStats) RowCount() int64 { return s.rows }

func (s batchStats) Min(c int) (any, bool) {
	if cs := s.find(c); cs != nil && cs.Min != nil {
		return cs.Min, true
	}
	return nil, false
}

func (s batchStats) Max(c int) (any, bool) {
	if cs := s.find(c); cs != nil && cs.Max != nil {
		return cs.Max, true
	}
	return nil, false
}

func (s batchStats) NullCount(c int) (int64, bool) {
	if cs := s.find(c); cs != nil {
		return cs.NullCount, true
	}
	return 0, false
}
