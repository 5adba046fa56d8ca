package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// ReadView is one consistent cut of the whole engine, as a transaction
// reads it: every bucket's log start offset and high watermark, each
// primary-key bucket's KV snapshot (pinned, its log offset at or below the
// bucket's high watermark in the view), every table's readable lake
// snapshot, and the KV state itself (a Pebble snapshot, for point
// lookups and for counting the rows a buffered write will affect).
//
// The cut is atomic with respect to Commit: a commit that touched several
// buckets, partitions or tables is in the view everywhere or nowhere.
// A commit holds the engine's cutMu shared while it publishes (its KV
// write, then its high watermarks), after its batches are written and
// durable, and a view is cut holding cutMu exclusively, so it falls
// between publications, never inside one, at a cost that grows with the
// number of buckets by a counter read each and not by a lock taken each;
// a commit waiting for its fsync does not hold a cut up.
//
// What is not isolated: the catalog. A table or partition created after
// the view reads as empty (its buckets had no log in the view); one
// dropped after it is gone from the view too. Log segments dropped by
// retention (table.log.ttl) after the view make a read below the new log
// start fail with ErrNotFound rather than return fewer rows. Lake
// snapshots need no pin: the lake keeps every snapshot's files.
//
// A ReadView is safe for concurrent use and must be closed; Close
// releases the KV snapshots and the Pebble snapshot and is idempotent.
// Close it before closing the engine.
type ReadView struct {
	e *Engine
	// tabs lists the tablets at the cut; logs[i] is the range of
	// tabs.list[i].
	tabs *tabletIndex
	// cat is the catalog at the cut: the tables' schemas then (Shape).
	cat  *catalog
	logs []viewLog
	kv   map[metadata.TableBucket]viewKv
	lake map[int64]*lakeRecord
	// broken holds the buckets Open could not rebuild (their rows are not
	// trustworthy), taken with the view: only Open marks a bucket so.
	broken map[metadata.TableBucket]error
	// write marks a view from WriteView, whose buffers commit with a
	// conflict check; seq is its place in the engine's commit sequence
	// (conflictSet): a key recorded with a higher number was written
	// after the cut.
	write bool
	seq   int64

	// mu guards the Pebble snapshot against Close.
	mu struct {
		sync.Mutex
		ps     *pebble.Snapshot
		closed bool
		// rows keeps, in a write view, the stored values (nil: no row)
		// of up to viewRowsMax keys read by key. A transaction reads a
		// row it then changes three times (its SELECT, its UPDATE's
		// read, and the buffer's merge) and the snapshot cannot change
		// in between, so the later reads are map lookups, not Gets.
		rows map[string][]byte
	}
}

// viewRowsMax bounds a write view's kept rows: a transaction reading
// more keys than this reads the rest from the snapshot each time.
const viewRowsMax = 1024

// viewLog is a bucket's log range in a view.
type viewLog struct{ start, stop int64 }

// viewKv is a bucket's pinned KV snapshot in a view.
type viewKv struct {
	snap metadata.KvSnapshot
	kb   *kvBucket
	s    *kvSnap
}

// ReadView captures a consistent read view of the whole engine now. It
// waits for the commits publishing now (see cutMu), and holds up those
// about to publish for as long as the cut takes: the time to read a few
// counters per bucket.
func (e *Engine) ReadView(ctx context.Context) (*ReadView, error) {
	return e.readView(ctx, false)
}

// WriteView is ReadView for a transaction that writes: its WriteBuffer's
// Commit fails with ErrConflict when another commit wrote one of its keys
// after the cut (first committer wins). While a write view is open every
// commit records the keys it writes; close it as soon as the transaction
// ends.
func (e *Engine) WriteView(ctx context.Context) (*ReadView, error) {
	return e.readView(ctx, true)
}

// reading runs f with the catalog and the view's Pebble snapshot, under
// the engine's read lock and the view's own: what a read of the view's
// key-value state needs (ErrClosed once the view is).
func (v *ReadView) reading(ctx context.Context, path metadata.TablePath, f func(cat *catalog, src pebble.Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cat, err := v.e.readLock()
	if err != nil {
		return err
	}
	defer v.e.mu.RUnlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.closed || v.mu.ps == nil {
		return fmt.Errorf("read view of %s: %w", path, metadata.ErrClosed)
	}
	return f(cat, v.mu.ps)
}

func (e *Engine) readView(ctx context.Context, write bool) (*ReadView, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	// cutMu held exclusively is the cut: no commit is between its KV
	// write and its high watermarks, so the Pebble state is the state at
	// the watermarks read here (and the conflict keys recorded are those
	// of the commits the view sees).
	e.cutMu.Lock()
	defer e.cutMu.Unlock()
	// tabletsMu is held while the tablets are listed: a commit creates
	// its tablets before it takes cutMu, so a tablet missing from the
	// list has no commit in the view.
	e.tabletsMu.Lock()
	v := &ReadView{e: e, tabs: e.tabletIndexLocked(), write: write, cat: cat}
	e.tabletsMu.Unlock()
	v.logs = make([]viewLog, len(v.tabs.list))
	for i, t := range v.tabs.list {
		v.logs[i] = viewLog{start: t.logStart.Load(), stop: t.hw.Load()}
	}
	// The lake records are immutable: the view keeps them and builds a
	// snapshot only when asked for one.
	for id, entry := range cat.byID {
		if entry.Lake != nil {
			if v.lake == nil {
				v.lake = map[int64]*lakeRecord{}
			}
			v.lake[id] = entry.Lake
		}
	}
	if write {
		e.conflicts.registerLocked(v)
	}
	v.mu.ps = e.kv.NewSnapshot()
	e.kvMu.Lock()
	for tb, kb := range e.kvBuckets {
		if kb.broken != nil {
			if v.broken == nil {
				v.broken = map[metadata.TableBucket]error{}
			}
			v.broken[tb] = kb.broken
			continue
		}
		_, stop := v.LogOffsets(tb)
		kb.mu.Lock()
		for i := len(kb.mu.snaps) - 1; i >= 0; i-- {
			if s := kb.mu.snaps[i]; s.logOffset <= stop {
				e.pinLocked(s)
				if v.kv == nil {
					v.kv = map[metadata.TableBucket]viewKv{}
				}
				v.kv[tb] = viewKv{snap: metadata.KvSnapshot{SnapshotID: s.id, LogOffset: s.logOffset}, kb: kb, s: s}
				break
			}
		}
		kb.mu.Unlock()
	}
	e.kvMu.Unlock()
	e.views.add(v)
	return v, nil
}

// viewSet is the engine's open read views: Engine.Close releases their
// Pebble snapshots, which must not outlive the store, when a view's owner
// has not closed it first (a database closed with a transaction open).
type viewSet struct {
	mu   sync.Mutex
	open map[*ReadView]struct{}
}

func (s *viewSet) add(v *ReadView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[*ReadView]struct{}{}
	}
	s.open[v] = struct{}{}
}

func (s *viewSet) remove(v *ReadView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, v)
}

// releaseAll closes the Pebble snapshot of every open view; the views stay
// open and read nothing more (the engine is closing).
func (s *viewSet) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for v := range s.open {
		v.mu.Lock()
		if v.mu.ps != nil {
			_ = v.mu.ps.Close() // the store closes next: nothing is lost
			v.mu.ps = nil
		}
		v.mu.Unlock()
	}
	clear(s.open)
}

// Pins is what readers hold now: the read views still open (each keeps
// a Pebble snapshot and its KV snapshots) and the pins on KV snapshots
// (a snapshot pinned keeps its file after a newer one is taken). A
// reader that is done has let go of both; a count that only grows is a
// leak.
type Pins struct {
	ReadViews   int
	KvSnapshots int64
}

// Pins counts what readers hold now. Safe for concurrent use.
func (e *Engine) Pins() Pins {
	e.views.mu.Lock()
	n := len(e.views.open)
	e.views.mu.Unlock()
	return Pins{ReadViews: n, KvSnapshots: e.kvPins.Load()}
}

// LogOffsets returns a bucket's log start offset and high watermark in
// the view; both 0 for a bucket that had no log then.
func (v *ReadView) LogOffsets(tb metadata.TableBucket) (start, stop int64) {
	i, ok := v.tabs.pos[tb]
	if !ok {
		return 0, 0
	}
	return v.logs[i].start, v.logs[i].stop
}

// KvSnapshot returns the KV snapshot of a primary-key bucket the view
// pinned: the latest one whose log offset is at or below the bucket's
// high watermark in the view. ok is false when the bucket had none.
func (v *ReadView) KvSnapshot(tb metadata.TableBucket) (metadata.KvSnapshot, bool) {
	s, ok := v.kv[tb]
	return s.snap, ok
}

// LakeSnapshot returns the readable lake snapshot of a table in the view;
// ok is false when it had none. The maps are the caller's.
func (v *ReadView) LakeSnapshot(tableID int64) (metadata.LakeSnapshot, bool) {
	r, ok := v.lake[tableID]
	if !ok {
		return metadata.LakeSnapshot{}, false
	}
	return r.snapshot(tableID), true
}

// Close releases the view's KV snapshots and its Pebble snapshot.
// Idempotent.
func (v *ReadView) Close() error {
	v.mu.Lock()
	if v.mu.closed {
		v.mu.Unlock()
		return nil
	}
	v.mu.closed = true
	ps := v.mu.ps
	v.mu.ps = nil
	v.mu.Unlock()
	v.e.views.remove(v)
	if v.write {
		v.e.conflicts.unregister(v)
	}
	for _, k := range v.kv {
		v.e.unpinSnapshot(k.kb, k.s)
	}
	// mu shared keeps Engine.Close (which closes Pebble) away; a closed
	// engine has dropped the snapshot with its store.
	if _, err := v.e.readLock(); err != nil {
		return nil
	}
	defer v.e.mu.RUnlock()
	if ps == nil {
		return nil
	}
	return ps.Close()
}

// get reads a key's row in the view's KV state; nil when absent. The
// caller holds e.mu shared.
func (v *ReadView) get(entry *tableEntry, key []byte) ([]any, error) {
	return v.getColumns(entry, key, nil)
}

// readRow is the row of key as the view read it before (ok false when it
// did not, or is closed), decoded.
func (v *ReadView) readRow(entry *tableEntry, key []byte) (row []any, ok bool, err error) {
	v.mu.Lock()
	val, ok := v.mu.rows[string(key)]
	ok = ok && !v.mu.closed
	v.mu.Unlock()
	if !ok || val == nil {
		return nil, ok, nil
	}
	if row, err = decodeRowValue(val, &entry.Info, entry.types); err != nil {
		return nil, false, fmt.Errorf("read %s: %w", entry.Info.Path, err)
	}
	return row, true, nil
}

// getColumns is get decoding only the columns need marks (nil: all).
func (v *ReadView) getColumns(entry *tableEntry, key []byte, need []bool) ([]any, error) {
	if len(v.broken) > 0 && len(key) > bucketIDSize {
		tb, _ := parseBucketID(key[1 : 1+bucketIDSize])
		if err := v.broken[tb]; err != nil {
			return nil, err
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.closed || v.mu.ps == nil {
		return nil, fmt.Errorf("read view of %s: %w", entry.Info.Path, metadata.ErrClosed)
	}
	val, kept := v.mu.rows[string(key)]
	if !kept {
		got, closer, err := v.mu.ps.Get(key)
		if err != nil && !errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
		}
		if err == nil {
			val = bytes.Clone(got)
			closer.Close()
		}
		if v.write && len(v.mu.rows) < viewRowsMax {
			if v.mu.rows == nil {
				v.mu.rows = make(map[string][]byte)
			}
			v.mu.rows[string(key)] = val
		}
	}
	if val == nil {
		return nil, nil
	}
	row, err := decodeRowColumns(val, &entry.Info, entry.types, need)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", entry.Info.Path, err)
	}
	return row, nil
}

// Lookup is Engine.Lookup in the view: the row of the key held in the
// primary-key columns of keyRow as it was when the view was taken. A NULL
// key value, or a partition that does not exist, finds nothing.
func (v *ReadView) Lookup(ctx context.Context, path metadata.TablePath, keyRow []any) (row []any, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	cat, err := v.e.readLock()
	if err != nil {
		return nil, false, err
	}
	defer v.e.mu.RUnlock()
	entry, err := cat.table(path)
	if err != nil {
		return nil, false, err
	}
	info := &entry.Info
	if !info.HasPrimaryKey() {
		return nil, false, fmt.Errorf("%w: table %s has no primary key: lookups need a primary-key table", metadata.ErrUnsupported, path)
	}
	if len(keyRow) != len(info.Schema.Columns) && !info.HadWidth(len(keyRow)) {
		// A key row of an earlier schema (a statement bound in the shape
		// of a view's cut) holds the key columns all the same.
		return nil, false, fmt.Errorf("%w: lookup key row has %d values, table %s has %d columns", metadata.ErrInvalidValue, len(keyRow), path, len(info.Schema.Columns))
	}
	pk := info.PrimaryKeyIndexes()
	for _, c := range pk {
		if keyRow[c] == nil {
			return nil, false, nil
		}
	}
	routed, err := routeRows(entry, [][]any{keyRow}, pk, false)
	if err != nil {
		return nil, false, fmt.Errorf("lookup in %s: %w", path, err)
	}
	tb, ok := routedBucket(entry, &routed, 0)
	if !ok {
		if routed.partitions != nil && lakeMayHold(entry, routed.partitions[0]) {
			return nil, false, fmt.Errorf("lookup in %s: %w", path, ErrLookupInLake)
		}
		return nil, false, nil
	}
	key, err := entry.keyCodec().key(tb, routed.values[0])
	if err != nil {
		return nil, false, fmt.Errorf("lookup in %s: %w", path, err)
	}
	row, err = v.get(entry, key)
	if err == nil && row == nil && lakeShadows(entry, tb) {
		return nil, false, fmt.Errorf("lookup in %s: %w", path, ErrLookupInLake)
	}
	if err != nil || row == nil {
		return nil, false, err
	}
	return row, true, nil
}

// routedBucket is the bucket of routed row r of a primary-key table; ok
// is false when its partition does not exist.
func routedBucket(entry *tableEntry, routed *routedRows, r int) (metadata.TableBucket, bool) {
	tb := metadata.TableBucket{TableID: entry.Info.TableID, PartitionID: metadata.NonPartitioned, Bucket: int32(routed.buckets[r])}
	if routed.partitions != nil {
		p, ok := entry.partitionByName(routed.partitions[r])
		if !ok {
			return tb, false
		}
		tb.PartitionID = p.ID
	}
	return tb, true
}

// WriteBuffer holds a transaction's writes until they are committed
// together with one Engine.Commit, and counts, as each is added, the rows
// it affects: appended rows, or, for upserts and deletes, what Commit
// would count if it ran against the view's state with the buffered writes
// before it applied (the buffer keeps each touched key's row after them).
// An append costs no read of the view. Consecutive appends to one table
// are buffered as one write (their rows in order), which Commit routes
// exactly as it would route them one by one: a transaction of many
// single-row INSERTs commits as one write per table, not one per row.
// Not safe for concurrent use.
//
// The count is the count at the time of Add: Commit applies the writes to
// the state as it is then, which may differ from the view if other
// writers committed since, and its own counts may then differ.
type WriteBuffer struct {
	v      *ReadView
	writes []Write
	// rows is each key touched by a buffered upsert or delete, after the
	// buffered writes: the row, or nil when deleted. Keyed by table id,
	// then by the key's primary-key values (TableDelta.Keys): the reads of
	// the transaction lay them over the view as they are.
	rows map[int64]map[string][]any
	// tables are the tables written, by path.
	tables map[metadata.TablePath]bool
	// unique maps the value of a UNIQUE index a buffered row took (its
	// entry prefix) to that row's key in rows; the row may have moved on
	// since, so a hit is checked against rows.
	unique map[string]string
	// ownRows is set when the rows of the last write are the buffer's own
	// slice (merged appends), which later appends may grow; the slice of
	// a write as added is its caller's.
	ownRows bool
	// locks are the keys read FOR UPDATE, as delete-shaped writes (one
	// per Lock call, keys already locked left out); locked maps each
	// key (as rows keys it) to the index of its lock write.
	locks  []Write
	locked map[string]int
	// undo, once a mark was taken, records each change to rows: the key
	// and what it held before, so Restore can put it back.
	undo   []rowUndo
	undoOn bool
	// uniqueUndo, once a mark was taken, records each change to unique:
	// the value's prefix and the row key it named before (had false:
	// none), so Restore puts the memo back with the rows.
	uniqueUndo []uniqueUndo
}

// uniqueUndo is one entry of WriteBuffer.uniqueUndo.
type uniqueUndo struct {
	prefix, key string
	had         bool
}

// rowUndo is one entry of WriteBuffer.undo: key of table held row (had
// false: the key was not in rows).
type rowUndo struct {
	table int64
	key   string
	row   []any
	had   bool
}

// NewWriteBuffer returns an empty buffer counting against the view. Its
// Commit checks conflicts when the view is a WriteView.
func (v *ReadView) NewWriteBuffer() *WriteBuffer {
	return &WriteBuffer{v: v, rows: map[int64]map[string][]any{}, tables: map[metadata.TablePath]bool{}, locked: map[string]int{}, unique: map[string]string{}}
}

// Commit commits the buffered writes as one Engine.Commit, with a
// transaction's conflict check: when a key the writes upsert or delete, or
// one Lock named, was written by another commit (a transaction's or an
// autocommit write) after the view's cut, it fails with ErrConflict and
// nothing is applied — first committer wins. Appends to log tables never
// conflict. The view must come from WriteView and stay open until Commit
// returns. A buffer without writes or locks commits nothing.
func (b *WriteBuffer) Commit(ctx context.Context) ([]WriteResult, error) {
	if !b.v.write {
		return nil, fmt.Errorf("%w: a write buffer's commit needs a view taken with WriteView", metadata.ErrUnsupported)
	}
	if len(b.writes) == 0 && len(b.locks) == 0 {
		return nil, nil
	}
	return b.v.e.commit(ctx, b.writes, b.locks, b.v)
}

// Lock adds the keys of rows read FOR UPDATE to the buffer's conflict
// check: Commit then fails with ErrConflict when another commit wrote one
// of them after the view's cut, as if the transaction had written them,
// though it writes nothing there. No lock is taken. rows are full-schema
// rows of which only the primary-key columns (partition keys included) are
// read. A log table has no keys: Lock of one does nothing.
func (b *WriteBuffer) Lock(ctx context.Context, path metadata.TablePath, rows [][]any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cat, err := b.v.e.readLock()
	if err != nil {
		return err
	}
	defer b.v.e.mu.RUnlock()
	entry, err := cat.table(path)
	if err != nil {
		return err
	}
	info := &entry.Info
	if !info.HasPrimaryKey() || len(rows) == 0 {
		return nil
	}
	routed, err := routeRows(entry, rows, entry.pk, false)
	if err != nil {
		return fmt.Errorf("FOR UPDATE keys of %s: %w", path, err)
	}
	dk := entry.deltaKeyer()
	var keep [][]any
	for r, in := range routed.values {
		k, err := lockKey(info, dk, in)
		if err != nil {
			return fmt.Errorf("FOR UPDATE keys of %s: row %d: key: %w", path, r+1, err)
		}
		if _, ok := b.locked[k]; ok {
			continue
		}
		b.locked[k] = len(b.locks)
		keep = append(keep, rows[r])
	}
	if len(keep) > 0 {
		b.locks = append(b.locks, Write{Path: path, Kind: WriteDelete, Rows: keep})
	}
	return nil
}

// lockKey is the key Lock dedupes a row on: its table id and primary-key
// values (partition keys included), as the buffer keys rows.
func lockKey(info *metadata.TableInfo, dk *DeltaKeyer, in []any) (string, error) {
	k, err := dk.key(in)
	if err != nil {
		return "", err
	}
	return string(binary.BigEndian.AppendUint64(nil, uint64(info.TableID))) + string(k), nil
}

// BufferMark is a point in a WriteBuffer's history that Restore goes back
// to (a savepoint).
type BufferMark struct {
	writes   int  // buffered writes
	lastRows int  // rows of the last write (appends merge into it)
	ownRows  bool // WriteBuffer.ownRows then
	locks    int
	undo     int
	// uniqueUndo is len(WriteBuffer.uniqueUndo) then.
	uniqueUndo int
}

// Mark returns the buffer's current point, for Restore. From the first
// mark on, the buffer keeps an undo record of every key row it changes.
func (b *WriteBuffer) Mark() BufferMark {
	b.undoOn = true
	m := BufferMark{writes: len(b.writes), ownRows: b.ownRows, locks: len(b.locks), undo: len(b.undo), uniqueUndo: len(b.uniqueUndo)}
	if m.writes > 0 {
		m.lastRows = len(b.writes[m.writes-1].Rows)
	}
	return m
}

// Restore drops everything buffered after mark m: the writes (and the
// rows appended to a merged append), the keys locked, and the key rows the
// later writes changed, which count the RowsAffected of writes to come. A
// mark older than one already restored to stays valid; a mark taken after
// it does not.
func (b *WriteBuffer) Restore(m BufferMark) {
	for i := len(b.undo) - 1; i >= m.undo; i-- {
		u := b.undo[i]
		if u.had {
			b.rows[u.table][u.key] = u.row
		} else {
			delete(b.rows[u.table], u.key)
		}
	}
	b.undo = b.undo[:m.undo]
	for i := len(b.uniqueUndo) - 1; i >= m.uniqueUndo; i-- {
		u := b.uniqueUndo[i]
		if u.had {
			b.unique[u.prefix] = u.key
		} else {
			delete(b.unique, u.prefix)
		}
	}
	b.uniqueUndo = b.uniqueUndo[:m.uniqueUndo]
	clear(b.writes[m.writes:])
	b.writes = b.writes[:m.writes]
	if m.writes > 0 {
		last := &b.writes[m.writes-1]
		last.Rows = last.Rows[:m.lastRows]
	}
	b.ownRows = m.ownRows
	clear(b.tables)
	for _, w := range b.writes {
		b.tables[w.Path] = true
	}
	for k, i := range b.locked {
		if i >= m.locks {
			delete(b.locked, k)
		}
	}
	clear(b.locks[m.locks:])
	b.locks = b.locks[:m.locks]
}

// Writes returns the buffered writes in order, consecutive appends to one
// table merged: the argument of Commit.
func (b *WriteBuffer) Writes() []Write { return b.writes }

// Wrote reports whether a buffered write touches the table.
func (b *WriteBuffer) Wrote(path metadata.TablePath) bool { return b.tables[path] }

// Add checks a write as Commit will (the table exists and takes the
// kind of write, every row fits its table), counts the rows it affects and
// buffers it. A write that fails the check is not buffered.
func (b *WriteBuffer) Add(ctx context.Context, w Write) (WriteResult, error) {
	return b.add(ctx, w, nil)
}

// CheckedRows names the table a write's rows were checked against: full
// rows in schema order, every value coerced to its column's type
// (metadata.CoerceValue) and no NULL in a NOT NULL column, as binding an
// INSERT leaves them.
type CheckedRows struct {
	TableID  int64
	SchemaID int32
}

// AddChecked is Add for rows the caller has checked against the table
// (see CheckedRows). When the table is still that one, an append to a
// table without partition and bucket keys, whose rows then cannot fail
// the check, is buffered without checking them again, and Commit routes
// the rows of any checked append without coercing them again while the
// table is that version (a changed table checks them all).
func (b *WriteBuffer) AddChecked(ctx context.Context, w Write, checked CheckedRows) (WriteResult, error) {
	return b.add(ctx, w, &checked)
}

func (b *WriteBuffer) add(ctx context.Context, w Write, checked *CheckedRows) (WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return WriteResult{}, err
	}
	cat, err := b.v.e.readLock()
	if err != nil {
		return WriteResult{}, err
	}
	defer b.v.e.mu.RUnlock()
	entry, err := cat.table(w.Path)
	if err != nil {
		return WriteResult{}, err
	}
	info := &entry.Info
	var (
		only, target []int
		defaults     []any
	)
	switch w.Kind {
	case WriteAppend:
		if info.HasPrimaryKey() {
			return WriteResult{}, fmt.Errorf("%w: table %s has a primary key: appends are for log tables", metadata.ErrUnsupported, w.Path)
		}
		if checked != nil {
			c := *checked
			w.Checked = &c
		}
		if checked != nil && checked.TableID == info.TableID && checked.SchemaID == info.SchemaID &&
			len(info.PartitionKeys) == 0 && len(info.BucketKeys) == 0 && fullRows(w.Rows, len(info.Schema.Columns)) {
			res := WriteResult{RowsAffected: int64(len(w.Rows))}
			if !b.mergeAppend(w) {
				b.push(w)
			}
			return res, nil
		}
	case WriteUpsert, WriteDelete:
		if !info.HasPrimaryKey() {
			return WriteResult{}, fmt.Errorf("%w: table %s has no primary key: %s needs a primary-key table", metadata.ErrUnsupported, w.Path, w.Kind)
		}
		if w.Kind == WriteDelete {
			only = info.PrimaryKeyIndexes()
		} else if target, err = partialColumns(info, w.Upsert.TargetColumns); err != nil {
			return WriteResult{}, err
		} else if defaults, err = newKeyDefaults(info, target, w.Upsert.Defaults); err != nil {
			return WriteResult{}, err
		} else {
			// The commit starts new keys from the defaults this Exec
			// took, not from a later clock.
			only, w.Upsert.Defaults = target, defaults
		}
	default:
		return WriteResult{}, fmt.Errorf("%w: write kind %d", metadata.ErrInvalidValue, int(w.Kind))
	}
	routed, err := routeRows(entry, w.Rows, only, false)
	if err != nil {
		return WriteResult{}, err
	}
	var res WriteResult
	if w.Kind == WriteAppend {
		res.RowsAffected = int64(len(routed.values))
		if b.mergeAppend(w) {
			return res, nil
		}
	} else if res.RowsAffected, err = b.merge(entry, w.Kind == WriteDelete, newMerger(info, target, defaults), &routed); err != nil {
		return WriteResult{}, err
	}
	b.push(w)
	return res, nil
}

// push buffers w as a write of its own.
func (b *WriteBuffer) push(w Write) {
	b.writes = append(b.writes, w)
	b.ownRows = false
	b.tables[w.Path] = true
}

// fullRows reports whether every row has n values.
func fullRows(rows [][]any, n int) bool {
	for _, r := range rows {
		if len(r) != n {
			return false
		}
	}
	return true
}

// mergeAppend adds the rows of append w to the last buffered write when
// that is an append to the same table, and reports whether it did. Commit
// routes the merged rows as it routes separate appends: in order, keyless
// rows round-robin from where the previous ones stopped.
func (b *WriteBuffer) mergeAppend(w Write) bool {
	n := len(b.writes)
	if n == 0 {
		return false
	}
	last := &b.writes[n-1]
	if last.Kind != WriteAppend || last.Path != w.Path || !sameChecked(last.Checked, w.Checked) {
		return false
	}
	if !b.ownRows {
		last.Rows = append(make([][]any, 0, 2*(len(last.Rows)+len(w.Rows))), last.Rows...)
		b.ownRows = true
	}
	last.Rows = append(last.Rows, w.Rows...)
	return true
}

// merge counts an upsert or delete as Engine.mergeWrite does, each key's
// old row read from the buffer first, then from the view, and records the
// new rows in the buffer only once every row is counted (a failing write
// leaves the buffer as it was).
func (b *WriteBuffer) merge(entry *tableEntry, del bool, m *merger, routed *routedRows) (int64, error) {
	info := &entry.Info
	kc := entry.keyCodec()
	dk := entry.deltaKeyer()
	next := map[string][]any{}
	buffered := b.rows[info.TableID]
	var affected int64
	for r, in := range routed.values {
		// The buffer keys a row by its whole primary key, partition keys
		// included: a partition an earlier buffered write creates has no
		// id yet.
		bufKey, err := dk.key(in)
		if err != nil {
			return 0, err
		}
		k := string(bufKey)
		old, seen := next[k]
		if !seen {
			old, seen = buffered[k]
		}
		if !seen {
			if tb, ok := routedBucket(entry, routed, r); ok {
				key, err := kc.key(tb, in)
				if err != nil {
					return 0, fmt.Errorf("row %d: key: %w", r+1, err)
				}
				if old, err = b.v.get(entry, key); err != nil {
					return 0, err
				}
			}
		}
		if del {
			if err := m.refusesDeletes(); err != nil {
				return 0, err
			}
			if old == nil || !m.deletes() {
				continue
			}
			next[k] = nil
			affected++
			continue
		}
		row, changed, err := m.upsert(old, in)
		if err != nil {
			return 0, fmt.Errorf("row %d: %w", r+1, err)
		}
		if !changed {
			continue
		}
		next[k] = row
		affected++
	}
	if ixs := entry.indexes; hasUnique(ixs) && len(next) > 0 {
		if err := b.checkUnique(entry, ixs, dk, next); err != nil {
			return 0, err
		}
	}
	if len(next) > 0 {
		if buffered == nil {
			buffered = map[string][]any{}
			b.rows[info.TableID] = buffered
		}
		if b.undoOn {
			for k := range next {
				old, had := buffered[k]
				b.undo = append(b.undo, rowUndo{table: info.TableID, key: k, row: old, had: had})
			}
		}
		maps.Copy(buffered, next)
	}
	return affected, nil
}

// checkUnique refuses (ErrConstraint) the rows next (keyed as rows) when
// one of them holds a UNIQUE value that another of them holds, or a row
// the buffer holds, or a row of the view the buffer does not replace; it
// records their values otherwise. Commit checks again against what is
// committed by then.
func (b *WriteBuffer) checkUnique(entry *tableEntry, ixs []*tableIndex, dk *DeltaKeyer, next map[string][]any) error {
	buffered := b.rows[entry.Info.TableID]
	rowOf := func(k string) ([]any, bool) {
		if r, ok := next[k]; ok {
			return r, true
		}
		r, ok := buffered[k]
		return r, ok
	}
	taken := map[string]string{}
	for _, ix := range ixs {
		if !ix.def.Unique {
			continue
		}
		for k, row := range next {
			if row == nil {
				continue
			}
			p, null, err := ix.entryPrefix(row)
			if err != nil {
				return err
			}
			if null {
				continue
			}
			if other, ok := taken[string(p)]; ok && other != k {
				return ix.duplicateErr(row)
			}
			taken[string(p)] = k
			if other, ok := b.unique[string(p)]; ok && other != k {
				if r, _ := rowOf(other); r != nil && ix.sameValues(r, row) {
					return ix.duplicateErr(row)
				}
			}
			dup, err := b.viewHolds(entry, ix, dk, p, row, rowOf)
			if err != nil {
				return err
			}
			if dup {
				return ix.duplicateErr(row)
			}
		}
	}
	for p, k := range taken {
		if b.undoOn {
			prev, had := b.unique[p]
			b.uniqueUndo = append(b.uniqueUndo, uniqueUndo{prefix: p, key: prev, had: had})
		}
		b.unique[p] = k
	}
	return nil
}

// viewHolds reports whether a row of the view that the buffer does not
// replace holds row's values of ix (prefix: their entry prefix).
func (b *WriteBuffer) viewHolds(entry *tableEntry, ix *tableIndex, dk *DeltaKeyer, prefix []byte, row []any, rowOf func(string) ([]any, bool)) (bool, error) {
	v := b.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.closed || v.mu.ps == nil {
		return false, fmt.Errorf("read view of %s: %w", entry.Info.Path, metadata.ErrClosed)
	}
	var dup bool
	err := indexRowKeys(v.mu.ps, prefix, func(rowKey []byte) (bool, error) {
		stored, err := kvReadRow(v.mu.ps, entry, rowKey)
		if err != nil || stored == nil || !ix.sameValues(stored, row) {
			return err == nil, err
		}
		k, err := dk.key(stored)
		if err != nil {
			return false, err
		}
		if _, replaced := rowOf(string(k)); replaced {
			return true, nil // the buffer's row for that key decides
		}
		dup = true
		return false, nil
	})
	return dup, err
}

// sameChecked reports whether two writes make the same promise about
// their rows (Write.Checked): only then are they buffered as one.
func sameChecked(a, b *CheckedRows) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TableDelta is what a transaction's buffered writes change in one table:
// what its reads lay over the view. It shares the buffer's rows, which the
// caller must not change, and is valid until the next write is added.
type TableDelta struct {
	// Keys holds, for a primary-key table, every key a buffered upsert or
	// delete touched, by its primary-key values as DeltaKeyer encodes
	// them, with its full row after the buffered writes (partial updates
	// and ON DUPLICATE KEY UPDATE applied), or nil when they delete it. A
	// row keeps the width of the table when it was buffered.
	Keys map[string][]any
	// Appended holds a log table's buffered rows in the order they were
	// appended, each checked and coerced to its column as Commit will.
	Appended [][]any
}

// Len is the number of buffered rows: keys touched, or rows appended.
func (d TableDelta) Len() int { return len(d.Keys) + len(d.Appended) }

// Delta returns what the buffered writes change in the table info
// describes (as bound now). ok is false when nothing buffered touches it,
// which costs one map lookup: a read of a table the transaction did not
// write lays nothing over the view.
func (b *WriteBuffer) Delta(info *metadata.TableInfo) (d TableDelta, ok bool, err error) {
	if !b.tables[info.Path] {
		return TableDelta{}, false, nil
	}
	if info.HasPrimaryKey() {
		d.Keys = b.rows[info.TableID]
		return d, len(d.Keys) > 0, nil
	}
	keys := &tableEntry{Info: *info}
	keys.prepareKeys()
	for _, w := range b.writes {
		if w.Kind != WriteAppend || w.Path != info.Path {
			continue
		}
		trusted := w.Checked != nil && w.Checked.TableID == info.TableID && w.Checked.SchemaID == info.SchemaID
		routed, err := routeRows(keys, w.Rows, nil, trusted)
		if err != nil {
			return TableDelta{}, false, fmt.Errorf("buffered rows of %s: %w", info.Path, err)
		}
		d.Appended = append(d.Appended, routed.values...)
	}
	return d, len(d.Appended) > 0, nil
}

// DeltaKeyer encodes the keys of TableDelta.Keys: a row's primary-key
// values (partition keys included), ordered-key encoded. Not safe for
// concurrent use: it reuses its buffers.
type DeltaKeyer struct {
	idx   []int
	types []metadata.DataType
	vals  []any
	buf   []byte
}

// NewDeltaKeyer returns the keyer of a primary-key table.
func NewDeltaKeyer(info *metadata.TableInfo) *DeltaKeyer { return newDeltaKeyer(info) }

// deltaKeyer is newDeltaKeyer of the entry's table, from its prepared
// layout.
func (t *tableEntry) deltaKeyer() *DeltaKeyer {
	return &DeltaKeyer{idx: t.pk, types: t.pkTypes, vals: make([]any, len(t.pk))}
}

func newDeltaKeyer(info *metadata.TableInfo) *DeltaKeyer {
	k := &DeltaKeyer{idx: info.PrimaryKeyIndexes()}
	for _, i := range k.idx {
		k.types = append(k.types, info.Schema.Columns[i].Type)
	}
	k.vals = make([]any, len(k.idx))
	return k
}

// Key returns the key of the row whose column c holds value(c); the bytes
// are valid until the next call. A NULL key value is an error.
func (k *DeltaKeyer) Key(value func(c int) any) ([]byte, error) {
	for j, i := range k.idx {
		k.vals[j] = value(i)
	}
	var err error
	k.buf, err = metadata.AppendOrderedKey(k.buf[:0], k.types, k.vals)
	return k.buf, err
}

// key is Key of a full-schema row.
func (k *DeltaKeyer) key(row []any) ([]byte, error) {
	return k.Key(func(c int) any { return row[c] })
}

// Shape returns info, a table's current info, with the schema the table
// had at the view's cut when a column was added since (ALTER TABLE ...
// ADD COLUMN): a transaction binds its statements against it and so
// reads the table in the shape it had when it began. Every reader reads
// the current schema, of which that one is a prefix, so a read bound to
// it sees the same rows. info is returned as it is for a table the view
// does not know (created since) or whose schema has not changed.
func (v *ReadView) Shape(info metadata.TableInfo) metadata.TableInfo {
	if v == nil || v.cat == nil {
		return info
	}
	then := v.cat.byID[info.TableID]
	if then == nil || then.Info.SchemaID == info.SchemaID {
		return info
	}
	info.Schema, info.SchemaID, info.PastSchemas = then.Info.Schema, then.Info.SchemaID, then.Info.PastSchemas
	return info
}
