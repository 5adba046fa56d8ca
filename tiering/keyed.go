package tiering

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// outputBatchRows is the row count of the record batches a primary-key
// bucket's merge hands to the file writer.
const outputBatchRows = 4096

// keyedRow is one row of a primary-key bucket's state with its lake system
// values.
type keyedRow struct {
	key    []byte // metadata.EncodeOrderedKey of the physical key
	vals   []any  // the table's columns
	offset int64  // __offset
	ts     int64  // __timestamp, ms
}

// rowSource yields a bucket's previous state in ascending key order.
type rowSource interface {
	next() (keyedRow, bool)
	err() error
	close()
}

// change is the net effect of a key's changelog rows in a round.
type change struct {
	row     keyedRow
	deleted bool
}

// tierKeyBucket tiers one bucket of a primary-key table. Its new lake
// state is its previous state (the previous lake files, also those a
// dropped partition of the same name left, or else the latest KV
// snapshot for a bucket never tiered) merged with the changelog of
// [start, stop) folded per key, written as new sorted files that replace
// the bucket's previous files.
//
// When the previous snapshot held the bucket (files or a tiered offset
// under its partition's name), the round also writes the bucket's undo
// files (lake.Manifest.Undo): the previous row of every key it changed
// or removed, and an absent marker for every key it added, so that the
// previous snapshot stays readable once its files are superseded.
func (r *round) tierKeyBucket(p part, tb metadata.TableBucket, files []metadata.LakeFile, tiered bool, start, stop int64) (bucketResult, error) {
	_, held := r.prevOffsets[bucketKey{p.info.Name, tb.Bucket}]
	held = held || len(files) > 0
	fromLake := true // base is the previous snapshot's rows
	var base rowSource
	defer func() {
		if base != nil {
			base.close()
		}
	}()
	if tiered {
		if len(files) > 0 {
			src, err := r.lakeRows(files)
			if err != nil {
				return bucketResult{}, err
			}
			base = src
		}
	} else if len(files) > 0 {
		// Files of an older partition of the same name, dropped and
		// re-created since: the live partition's whole changelog merges
		// into them, as a lake-union read merges it.
		src, err := r.lakeRows(files)
		if err != nil {
			return bucketResult{}, err
		}
		base = src
	} else {
		src, off, ok, err := r.kvSnapshotRows(p, tb)
		if err != nil {
			return bucketResult{}, err
		}
		if ok {
			base = src
			fromLake = false
			start = off
			// A snapshot taken after the round read the high watermarks
			// holds changes past it: the bucket is tiered up to the
			// snapshot then.
			stop = max(stop, off)
		}
	}
	changes, err := r.foldChangelog(tb, start, stop)
	if err != nil {
		return bucketResult{}, err
	}
	if tiered && len(changes) == 0 {
		// Offsets without row changes (writes that changed nothing): the
		// files stay, the tiered offset moves.
		return bucketResult{files: files, offset: stop, changed: true}, nil
	}
	var undo *sink
	if held {
		undo = r.newSink(p, tb.Bucket)
		undo.undo = true
	}
	sink := r.newSink(p, tb.Bucket)
	if err := r.mergeState(sink, undo, fromLake, tb.Bucket, base, changes); err != nil {
		sink.abort()
		undo.abort()
		return bucketResult{}, err
	}
	added, err := sink.finish()
	if err != nil {
		undo.abort()
		return bucketResult{}, err
	}
	undone, err := undo.finish()
	if err != nil {
		return bucketResult{}, err
	}
	return bucketResult{files: added, undo: undone, offset: stop, changed: true}, nil
}

// foldChangelog reads [start, stop) of a bucket's changelog and returns
// each changed key's net change in ascending key order: the last change
// wins; +I, +U (and +A) set the row, -D deletes it, and a -U not followed
// by its +U deletes it too.
func (r *round) foldChangelog(tb metadata.TableBucket, start, stop int64) ([]change, error) {
	if start >= stop {
		return nil, nil
	}
	lr, err := r.s.eng.ReadLog(r.ctx, tb, start, stop, storage.ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	cols := r.info.Schema.Columns
	keyIdx := r.info.PhysicalKeyIndexes()
	keyTypes := make([]metadata.DataType, len(keyIdx))
	for i, c := range keyIdx {
		keyTypes[i] = cols[c].Type
	}
	keyVals := make([]any, len(keyIdx))
	byKey := map[string]*change{}
	for lr.Next() {
		b := lr.Batch()
		for i := range int(b.Record.NumRows()) {
			vals := make([]any, len(cols))
			for c := range cols {
				vals[c] = metadata.ValueAt(b.Record.Column(c), cols[c].Type, i)
			}
			for j, c := range keyIdx {
				keyVals[j] = vals[c]
			}
			key, err := metadata.EncodeOrderedKey(keyTypes, keyVals)
			if err != nil {
				return nil, fmt.Errorf("log offset %d: key: %w", b.BaseOffset+int64(i), err)
			}
			ct := metadata.ChangeInsert
			if b.ChangeTypes != nil {
				ct = b.ChangeTypes[i]
			}
			ch := &change{row: keyedRow{key: key, vals: vals, offset: b.BaseOffset + int64(i), ts: b.CommitTimestamp}}
			switch ct {
			case metadata.ChangeAppendOnly, metadata.ChangeInsert, metadata.ChangeUpdateAfter:
			case metadata.ChangeUpdateBefore, metadata.ChangeDelete:
				ch.deleted = true
				ch.row.vals = nil
			default:
				return nil, fmt.Errorf("%w: log offset %d has change type %d", metadata.ErrCorrupt, b.BaseOffset+int64(i), ct)
			}
			byKey[string(key)] = ch
		}
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	out := make([]change, 0, len(byKey))
	for _, ch := range byKey {
		out = append(out, *ch)
	}
	slices.SortFunc(out, func(a, b change) int { return bytes.Compare(a.row.key, b.row.key) })
	return out, nil
}

// mergeState writes base merged with changes (both ascending by key) to
// the sink: a key's change replaces its base row, a deletion drops it.
// With an undo sink it writes there what takes the new state back to the
// previous snapshot's: when base is that snapshot's rows (fromLake), the
// base row of every key changed or deleted and an absent marker for
// every key added; otherwise (the snapshot held the bucket empty) an
// absent marker for every row written.
func (r *round) mergeState(sink, undo *sink, fromLake bool, bucket int32, base rowSource, changes []change) error {
	out := newRowWriter(r, sink, bucket)
	defer out.release()
	var back *rowWriter
	if undo != nil {
		back = newRowWriter(r, undo, bucket)
		defer back.release()
	}
	key := r.info.PhysicalKeyIndexes()
	// write adds a row of the new state; added says the previous snapshot
	// did not hold its key.
	write := func(row keyedRow, added bool) error {
		if err := out.add(row, nil); err != nil {
			return err
		}
		if back != nil && (added || !fromLake) {
			return back.add(absentMarker(key, row), nil)
		}
		return nil
	}
	// apply applies the change of a key base does not hold.
	apply := func(ch change) error {
		if ch.deleted {
			return nil
		}
		return write(ch.row, true)
	}
	i := 0
	if base != nil {
		for {
			row, ok := base.next()
			if !ok {
				break
			}
			for i < len(changes) && bytes.Compare(changes[i].row.key, row.key) < 0 {
				if err := apply(changes[i]); err != nil {
					return err
				}
				i++
			}
			if i < len(changes) && bytes.Equal(changes[i].row.key, row.key) {
				ch := changes[i]
				i++
				if back != nil && fromLake {
					var same []byte
					if !ch.deleted {
						same = unchanged(key, row, ch.row)
					}
					if err := back.add(row, same); err != nil {
						return err
					}
				}
				if ch.deleted {
					continue
				}
				if err := write(ch.row, false); err != nil {
					return err
				}
				continue
			}
			if err := write(row, false); err != nil {
				return err
			}
		}
		if err := base.err(); err != nil {
			return err
		}
	}
	for ; i < len(changes); i++ {
		if err := apply(changes[i]); err != nil {
			return err
		}
	}
	if err := out.flush(); err != nil {
		return err
	}
	if back != nil {
		return back.flush()
	}
	return nil
}

// absentMarker is the undo row marking row's key absent: the key columns
// (table column indexes key), NULL elsewhere, __offset lake.UndoAbsent.
func absentMarker(key []int, row keyedRow) keyedRow {
	m := keyedRow{key: row.key, vals: make([]any, len(row.vals)), offset: lake.UndoAbsent, ts: row.ts}
	for _, c := range key {
		m.vals[c] = row.vals[c]
	}
	return m
}

// unchanged returns the lake.UndoSameColumn bitmap of the columns other
// than the key that old and new hold the same value in (none, nil).
func unchanged(key []int, old, new keyedRow) []byte {
	var same []byte
	for c, v := range old.vals {
		if c < len(new.vals) && !slices.Contains(key, c) && sameValue(v, new.vals[c]) {
			for len(same) <= c/8 {
				same = append(same, 0)
			}
			same[c/8] |= 1 << (c % 8)
		}
	}
	return same
}

// sameValue reports whether a and b are the same non-NULL canonical value
// (metadata's), bit for bit: a float's -0 and 0 differ, as do decimals of
// another scale. Nested values are never the same: an undo row keeps
// them.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return false
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case string, bool, int64, metadata.DecimalValue, metadata.DateValue, metadata.TimeValue:
		return a == b
	}
	return false
}

// rowWriter builds record batches of keyed rows for a sink: data rows,
// or undo rows with their lake.UndoSameColumn.
type rowWriter struct {
	r      *round
	sink   *sink
	bucket int32
	rb     *array.RecordBuilder
	n      int
}

func newRowWriter(r *round, s *sink, bucket int32) *rowWriter {
	schema := sysSchema(r.info)
	if s.undo {
		schema = lake.UndoSchema(r.info)
	}
	return &rowWriter{r: r, sink: s, bucket: bucket, rb: array.NewRecordBuilder(r.s.opts.Allocator, schema)}
}

// add adds a row; an undo row's columns that same marks are written NULL.
func (w *rowWriter) add(row keyedRow, same []byte) error {
	cols := w.r.info.Schema.Columns
	for c, v := range row.vals {
		if lake.UndoSame(same, c) {
			v = nil
		}
		if err := metadata.AppendValue(w.rb.Field(c), cols[c].Type, v); err != nil {
			return fmt.Errorf("column %s: %w", cols[c].Name, err)
		}
	}
	n := len(cols)
	w.rb.Field(n).(*array.Int32Builder).Append(w.bucket)
	w.rb.Field(n + 1).(*array.Int64Builder).Append(row.offset)
	w.rb.Field(n + 2).(*array.TimestampBuilder).Append(arrow.Timestamp(row.ts))
	if w.sink.undo {
		w.rb.Field(n + 3).(*array.BinaryBuilder).Append(same)
	}
	w.n++
	if w.n >= outputBatchRows {
		return w.flush()
	}
	return nil
}

func (w *rowWriter) flush() error {
	if w.n == 0 {
		return nil
	}
	rec := w.rb.NewRecordBatch()
	defer rec.Release()
	w.n = 0
	return w.sink.write(rec)
}

func (w *rowWriter) release() { w.rb.Release() }

// lakeRows reads the bucket's previous lake files, merged by key, with
// their system columns.
func (r *round) lakeRows(files []metadata.LakeFile) (rowSource, error) {
	all := make([]int, len(r.info.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	sr, err := r.s.lk.OpenSorted(r.ctx, r.info, files, lake.ReadOptions{Projection: all, WithSystemColumns: true, Allocator: r.s.opts.Allocator})
	if err != nil {
		return nil, err
	}
	return &batchRows{info: r.info, lake: sr}, nil
}

// kvSnapshotRows opens the latest KV snapshot of a bucket never tiered.
// Its rows get __offset = the snapshot's log offset - 1 (the last offset
// whose change it holds; the row's own last change may be older) and
// __timestamp = the commit time of that offset's batch, or the round's
// start when that log is gone. ok is false without a snapshot.
func (r *round) kvSnapshotRows(p part, tb metadata.TableBucket) (src rowSource, logOffset int64, ok bool, err error) {
	var partition *metadata.PartitionInfo
	if r.info.IsPartitioned() {
		partition = &p.info
	}
	for attempt := 0; ; attempt++ {
		snaps, err := r.s.eng.LatestKvSnapshots(r.ctx, r.info.Path, partition)
		if err != nil {
			return nil, 0, false, err
		}
		s, ok := snaps.Buckets[tb.Bucket]
		if !ok {
			return nil, 0, false, nil
		}
		kr, err := r.s.eng.ReadKvSnapshot(r.ctx, tb, s.SnapshotID, storage.ReadOptions{})
		if errors.Is(err, metadata.ErrNotFound) && attempt < 3 {
			continue // replaced by a newer snapshot and removed meanwhile
		}
		if err != nil {
			return nil, 0, false, err
		}
		return &batchRows{info: r.info, kv: kr, offset: s.LogOffset - 1, ts: r.commitTimeBefore(tb, s.LogOffset)}, s.LogOffset, true, nil
	}
}

// commitTimeBefore returns the commit time (ms) of the batch holding
// offset off-1, or the round's start when it is not in the log.
func (r *round) commitTimeBefore(tb metadata.TableBucket, off int64) int64 {
	if off > 0 {
		lr, err := r.s.eng.ReadLog(r.ctx, tb, off-1, off, storage.ReadOptions{Projection: []int{}})
		if err == nil {
			defer lr.Close()
			if lr.Next() {
				return lr.Batch().CommitTimestamp
			}
		}
	}
	return r.started.UnixMilli()
}

// batchRows turns a sorted reader (the lake's, or a KV snapshot's) into
// keyed rows.
type batchRows struct {
	info *metadata.TableInfo
	lake lake.SortedReader
	kv   *storage.KvSnapshotReader
	// For KV snapshot rows, which carry no system columns.
	offset, ts int64

	rec  arrow.RecordBatch
	keys [][]byte
	i    int
	e    error
}

func (b *batchRows) next() (keyedRow, bool) {
	for b.rec == nil || b.i >= int(b.rec.NumRows()) {
		if !b.advance() {
			return keyedRow{}, false
		}
	}
	cols := b.info.Schema.Columns
	row := keyedRow{key: bytes.Clone(b.keys[b.i]), vals: make([]any, len(cols)), offset: b.offset, ts: b.ts}
	for c := range cols {
		row.vals[c] = metadata.ValueAt(b.rec.Column(c), cols[c].Type, b.i)
	}
	if b.lake != nil {
		n := len(cols)
		off, ok1 := b.rec.Column(n + 1).(*array.Int64)
		ts, ok2 := b.rec.Column(n + 2).(*array.Timestamp)
		if !ok1 || !ok2 {
			b.e = fmt.Errorf("%w: lake rows lack the %s and %s system columns", metadata.ErrCorrupt, metadata.LakeOffsetColumn, metadata.LakeTimestampColumn)
			return keyedRow{}, false
		}
		row.offset = off.Value(b.i)
		row.ts = int64(ts.Value(b.i))
	}
	b.i++
	return row, true
}

func (b *batchRows) advance() bool {
	b.i = 0
	if b.lake != nil {
		if !b.lake.Next() {
			b.rec = nil
			return false
		}
		b.rec, b.keys = b.lake.Batch()
		if want := int64(len(b.info.Schema.Columns) + len(systemColumns)); b.rec.NumCols() != want {
			b.e = fmt.Errorf("%w: lake rows have %d columns, want %d with the system columns", metadata.ErrCorrupt, b.rec.NumCols(), want)
			return false
		}
		return true
	}
	if !b.kv.Next() {
		b.rec = nil
		return false
	}
	kb := b.kv.Batch()
	b.rec, b.keys = kb.Record, kb.Keys
	return true
}

func (b *batchRows) err() error {
	if b.e != nil {
		return b.e
	}
	if b.lake != nil {
		return b.lake.Err()
	}
	return b.kv.Err()
}

func (b *batchRows) close() {
	if b.lake != nil {
		b.lake.Close()
	}
	if b.kv != nil {
		b.kv.Close()
	}
}
