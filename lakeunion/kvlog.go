package lakeunion

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/storage"
)

// tailEntry is one distinct key of the folded tail.
type tailEntry struct {
	key string // metadata.EncodeOrderedKey of the physical primary key
	// slot indexes the key's row in the column stores.
	slot int
	// tombstone: the key's last change was -D, or a -U without its +U.
	tombstone bool
}

// mergeReader reads a kv+log or a lake+log split: the key-sorted rows of
// a KV snapshot or of a bucket's lake files (the base) merged by key with
// the folded changelog tail. Both split kinds share it whole; only the
// base's opening differs. See the package comment for its invariants.
type mergeReader struct {
	refCount
	// readerState.schema is the requested projection.
	readerState
	ctx   context.Context
	src   Source
	table *metadata.TableInfo
	// tb and [logStart, logStop) are the tail to fold.
	tb                metadata.TableBucket
	logStart, logStop int64
	what              string // names the split in errors
	baseWhat          string // names the base's batches in errors

	proj      []int
	types     []metadata.DataType // of the projected columns
	mem       memory.Allocator
	batchSize int

	// base side; snap is nil without a base or once exhausted
	snap        KvBatchReader
	snapRec     arrow.RecordBatch // owned by snap
	snapKeys    [][]byte
	snapPos     int
	lastSnapKey []byte // the previous batch's largest key, to check order

	// baseStats and tailStats count what the closed base reader and the
	// tail's log read read, for Stats.
	baseStats, tailStats ReadStats

	// tail side, after the fold: distinct keys in ascending order
	folded  bool
	tail    []tailEntry
	tailPos int
	stores  []colStore // one per projected column

	bld     *array.RecordBuilder
	pending int // rows in bld (bld cannot count rows without columns)
	done    bool
}

// openKvLog opens the reader of a kv+log split; the snapshot is opened
// (and so kept from removal) now, the tail is folded on the first Next.
func openKvLog(ctx context.Context, src Source, table *metadata.TableInfo, sp *planner.KvLogSplit, opts Options) (*mergeReader, error) {
	if !table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: %s of log table %s", metadata.ErrUnsupported, sp, table.Path)
	}
	what := fmt.Sprintf("%s of %s", sp, table.Path)
	var base KvBatchReader
	if sp.HasSnapshot() {
		snap, err := src.ReadKvSnapshot(ctx, sp.TableBucket, sp.SnapshotID,
			storage.ReadOptions{Projection: opts.Projection, Filter: opts.Filter})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		base = snap
	}
	return newMergeReader(ctx, src, table, sp.TableBucket, sp.LogStart, sp.LogStop, base, "kv snapshot", what, opts), nil
}

// openLakeLog opens the reader of a lake+log split: the bucket's lake
// files, k-way merged by key by the source, in place of a KV snapshot.
// The lake rows may be filtered by the pushed predicate before the merge:
// a key's final value is then either its tail value (never filtered) or
// its lake value, which is dropped only when it does not match, and the
// post-scan filter would drop it then anyway.
func openLakeLog(ctx context.Context, src Source, table *metadata.TableInfo, sp *planner.LakeLogSplit, opts Options) (*mergeReader, error) {
	if !table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: %s of log table %s", metadata.ErrUnsupported, sp, table.Path)
	}
	what := fmt.Sprintf("%s of %s", sp, table.Path)
	var base KvBatchReader
	if len(sp.Files) > 0 {
		lr, err := src.ReadLakeSorted(ctx, table, sp.Files, LakeReadOptions{
			Projection: opts.Projection, Filter: opts.Filter, FilterRows: opts.Filter != nil, Allocator: opts.Allocator,
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		base = lr
	}
	return newMergeReader(ctx, src, table, sp.TableBucket, sp.LogStart, sp.LogStop, base, "lake", what, opts), nil
}

// newMergeReader returns the merge of base (nil: none), whose batches hold
// the projected columns in key order, with the tail [logStart, logStop)
// of tb. The reader owns base.
func newMergeReader(ctx context.Context, src Source, table *metadata.TableInfo, tb metadata.TableBucket,
	logStart, logStop int64, base KvBatchReader, baseWhat, what string, opts Options) *mergeReader {
	cols := projectedColumns(table.Schema.Columns, opts.Projection)
	r := &mergeReader{
		readerState: readerState{schema: metadata.ArrowSchema(cols)},
		ctx:         ctx, src: src, table: table,
		tb: tb, logStart: logStart, logStop: logStop,
		what:      what,
		baseWhat:  baseWhat,
		proj:      opts.Projection,
		mem:       opts.Allocator,
		batchSize: opts.BatchSize,
		snap:      base,
	}
	r.stores = make([]colStore, len(cols))
	r.types = make([]metadata.DataType, len(cols))
	for i, c := range cols {
		r.stores[i] = newColStore(c.Type)
		r.types[i] = c.Type
	}
	r.bld = array.NewRecordBuilder(r.mem, r.schema)
	r.init(r.close)
	return r
}

func (r *mergeReader) close() {
	r.releaseCur()
	if r.snap != nil {
		r.baseStats = r.baseStats.Add(statsOf(r.snap))
		if err := r.snap.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.snap, r.snapRec, r.snapKeys = nil, nil, nil
	}
	if r.bld != nil {
		r.bld.Release()
		r.bld = nil
	}
	r.tail, r.stores = nil, nil
	r.done = true
}

func (r *mergeReader) Next() bool {
	r.releaseCur()
	if r.err != nil || r.done {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return false
	}
	if !r.folded {
		if err := r.fold(); err != nil {
			r.err = fmt.Errorf("read %s: %w", r.what, err)
			return false
		}
		r.folded = true
	}
	rec, err := r.nextBatch()
	if err != nil {
		r.err = fmt.Errorf("read %s: %w", r.what, err)
		return false
	}
	if rec == nil {
		r.done = true
		return false
	}
	r.cur = rec
	return true
}

// foldPresize caps the distinct keys fold makes room for before it reads
// the tail: a long tail of updates to few keys must not reserve a slot per
// record.
const foldPresize = 1 << 18

// fold reads the tail [LogStart, LogStop) and keeps, per distinct key, its
// last change: the row of a +I, +U (or +A), or a tombstone for -D and -U.
// A -U followed by its +U ends as the +U; a -U left last (its +U beyond
// the stop offset) removes the key, so the read never shows a value the
// table did not hold at the stop offset. The entries come out sorted by
// key.
func (r *mergeReader) fold() error {
	if r.logStart >= r.logStop {
		return nil
	}
	keyIdx := r.table.PhysicalKeyIndexes()
	if len(keyIdx) == 0 {
		return fmt.Errorf("%w: %s has no physical primary key", metadata.ErrUnsupported, r.table.Path)
	}
	// Read the requested columns, then the key columns not among them.
	readProj := slices.Clone(r.proj)
	keyPos := make([]int, len(keyIdx))
	keyTypes := make([]metadata.DataType, len(keyIdx))
	for j, c := range keyIdx {
		keyTypes[j] = r.table.Schema.Columns[c].Type
		p := slices.Index(readProj, c)
		if p < 0 {
			p = len(readProj)
			readProj = append(readProj, c)
		}
		keyPos[j] = p
	}
	readSchema := projectedSchema(r.table, readProj)
	lr, err := r.src.ReadLog(r.ctx, r.tb, r.logStart, r.logStop, storage.ReadOptions{Projection: readProj})
	if err != nil {
		return err
	}
	defer func() {
		r.tailStats = r.tailStats.Add(statsOf(lr))
		lr.Close()
	}()

	// A tail of n records has at most n distinct keys: room for them up
	// front (up to foldPresize) saves the map's and the stores' regrowth.
	hint := int(min(r.logStop-r.logStart, foldPresize))
	index := make(map[string]int, hint)
	r.tail = slices.Grow(r.tail, hint)
	for _, s := range r.stores {
		s.grow(hint)
	}
	enc := newKeyEncoder(keyTypes)
	keyCols := make([]arrow.Array, len(keyIdx))
	var key []byte
	for lr.Next() {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		b := lr.Batch()
		rec := b.Record
		if err := checkColumns(rec, readSchema, "log batch"); err != nil {
			return err
		}
		rows := int(rec.NumRows())
		if b.ChangeTypes != nil && len(b.ChangeTypes) != rows {
			return fmt.Errorf("%w: log batch at offset %d has %d change types for %d rows",
				metadata.ErrCorrupt, b.BaseOffset, len(b.ChangeTypes), rows)
		}
		for j, p := range keyPos {
			keyCols[j] = rec.Column(p)
		}
		for i := range rows {
			ct := metadata.ChangeAppendOnly
			if b.ChangeTypes != nil {
				ct = b.ChangeTypes[i]
			}
			if key, err = enc.appendKey(key[:0], keyCols, i); err != nil {
				return fmt.Errorf("log offset %d: %w", b.BaseOffset+int64(i), err)
			}
			idx, ok := index[string(key)]
			if !ok {
				idx = len(r.tail)
				r.tail = append(r.tail, tailEntry{key: string(key), slot: idx})
				index[r.tail[idx].key] = idx
				for _, s := range r.stores {
					s.add()
				}
			}
			e := &r.tail[idx]
			switch ct {
			case metadata.ChangeAppendOnly, metadata.ChangeInsert, metadata.ChangeUpdateAfter:
				e.tombstone = false
				for c, s := range r.stores {
					if err := s.set(e.slot, rec.Column(c), i); err != nil {
						return fmt.Errorf("log offset %d: %w", b.BaseOffset+int64(i), err)
					}
				}
			case metadata.ChangeUpdateBefore, metadata.ChangeDelete:
				// The slot's old values stay until the key is written
				// again; they are never emitted.
				e.tombstone = true
			default:
				return fmt.Errorf("%w: log offset %d has change type %d", metadata.ErrCorrupt, b.BaseOffset+int64(i), ct)
			}
		}
	}
	if err := lr.Err(); err != nil {
		return err
	}
	slices.SortFunc(r.tail, func(a, b tailEntry) int { return strings.Compare(a.key, b.key) })
	return nil
}

// compareKey is bytes.Compare of a and s, without copying either.
func compareKey(a []byte, s string) int {
	switch {
	case string(a) < s:
		return -1
	case string(a) > s:
		return 1
	}
	return 0
}

// loadSnapshotBatch moves to the base's (KV snapshot's or lake's) next
// batch, checking that its
// keys ascend strictly, within the batch and after the previous one. Once
// the snapshot is exhausted it closes it (releasing its pin) and sets
// snap to nil.
func (r *mergeReader) loadSnapshotBatch() error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	r.snapRec, r.snapKeys, r.snapPos = nil, nil, 0
	if !r.snap.Next() {
		err := r.snap.Err()
		r.baseStats = r.baseStats.Add(statsOf(r.snap))
		if cerr := r.snap.Close(); err == nil {
			err = cerr
		}
		r.snap = nil
		return err
	}
	b := r.snap.Batch()
	if err := checkColumns(b.Record, r.schema, r.baseWhat+" batch"); err != nil {
		return err
	}
	if int64(len(b.Keys)) != b.Record.NumRows() {
		return fmt.Errorf("%w: %s batch has %d keys for %d rows", metadata.ErrCorrupt, r.baseWhat, len(b.Keys), b.Record.NumRows())
	}
	prev := r.lastSnapKey
	for i, k := range b.Keys {
		if (i > 0 || prev != nil) && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("%w: %s keys out of order at row %d of a batch", metadata.ErrCorrupt, r.baseWhat, i)
		}
		prev = k
	}
	if len(b.Keys) > 0 {
		r.lastSnapKey = append(r.lastSnapKey[:0], b.Keys[len(b.Keys)-1]...)
	}
	r.snapRec, r.snapKeys = b.Record, b.Keys
	return nil
}

// nextBatch merges until a batch is full or both sides are exhausted; nil
// at the end.
func (r *mergeReader) nextBatch() (arrow.RecordBatch, error) {
	for r.pending < r.batchSize {
		if r.snap != nil && (r.snapRec == nil || r.snapPos >= len(r.snapKeys)) {
			if err := r.loadSnapshotBatch(); err != nil {
				return nil, err
			}
			continue
		}
		haveSnap := r.snapRec != nil && r.snapPos < len(r.snapKeys)
		haveTail := r.tailPos < len(r.tail)
		if !haveSnap && !haveTail {
			break
		}
		if !haveSnap {
			if err := r.emitTail(); err != nil {
				return nil, err
			}
			continue
		}
		// The run of snapshot rows below the tail's next key (all of the
		// batch's rest once the tail is exhausted) is untouched by the
		// tail.
		end := len(r.snapKeys)
		if haveTail {
			next := r.tail[r.tailPos].key
			end = r.snapPos + sort.Search(len(r.snapKeys)-r.snapPos, func(j int) bool {
				return compareKey(r.snapKeys[r.snapPos+j], next) >= 0
			})
		}
		if run := end - r.snapPos; run > 0 {
			// A run long enough to be a batch of its own (or the rest of
			// a small snapshot batch) passes on without a copy.
			if r.pending == 0 && run >= min(r.batchSize/8, len(r.snapKeys)-r.snapPos) {
				return r.passThrough(end), nil
			}
			if err := r.copySnapshotRows(min(end, r.snapPos+r.batchSize-r.pending)); err != nil {
				return nil, err
			}
			continue
		}
		// The snapshot's key is the tail's next key, or above it: the
		// tail's change is emitted, and replaces the snapshot's row when
		// the keys are equal.
		if compareKey(r.snapKeys[r.snapPos], r.tail[r.tailPos].key) == 0 {
			r.snapPos++
		}
		if err := r.emitTail(); err != nil {
			return nil, err
		}
	}
	return r.flush(), nil
}

// copySnapshotRows appends the snapshot rows [snapPos, end) to the
// builder.
func (r *mergeReader) copySnapshotRows(end int) error {
	for c, t := range r.types {
		if err := appendRange(r.bld.Field(c), r.snapRec.Column(c), t, r.snapPos, end); err != nil {
			return err
		}
	}
	r.pending += end - r.snapPos
	r.snapPos = end
	return nil
}

// emitTail appends the tail's current entry to the builder, unless it is
// a tombstone, and moves past it.
func (r *mergeReader) emitTail() error {
	e := r.tail[r.tailPos]
	r.tailPos++
	if e.tombstone {
		return nil
	}
	for c, s := range r.stores {
		if err := s.emit(r.bld.Field(c), e.slot); err != nil {
			return err
		}
	}
	r.pending++
	return nil
}

// flush returns the builder's rows as a batch, or nil when it has none.
func (r *mergeReader) flush() arrow.RecordBatch {
	if r.pending == 0 {
		return nil
	}
	n := r.pending
	r.pending = 0
	if r.schema.NumFields() == 0 {
		return array.NewRecordBatch(r.schema, nil, int64(n))
	}
	return r.bld.NewRecordBatch()
}

// passThrough returns the snapshot rows [snapPos, end) as a batch sharing
// the snapshot's buffers (retained, so it outlives the snapshot reader's
// next batch), and moves past them.
func (r *mergeReader) passThrough(end int) arrow.RecordBatch {
	from := r.snapPos
	r.snapPos = end
	cols := make([]arrow.Array, r.snapRec.NumCols())
	for i := range cols {
		cols[i] = array.NewSlice(r.snapRec.Column(i), int64(from), int64(end))
	}
	rec := array.NewRecordBatch(r.schema, cols, int64(end-from))
	for _, c := range cols {
		c.Release()
	}
	return rec
}
