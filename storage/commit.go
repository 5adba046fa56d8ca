package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// WriteKind is the kind of one write of a commit.
type WriteKind int

const (
	// WriteAppend appends full rows (schema order) to a log table.
	WriteAppend WriteKind = iota
	// WriteUpsert upserts rows into a primary-key table, as Upsert.
	WriteUpsert
	// WriteDelete deletes the keys of rows from a primary-key table, as
	// Delete.
	WriteDelete
)

func (k WriteKind) String() string {
	switch k {
	case WriteAppend:
		return "append"
	case WriteUpsert:
		return "upsert"
	case WriteDelete:
		return "delete"
	}
	return fmt.Sprintf("WriteKind(%d)", int(k))
}

// Write is one write of a commit.
type Write struct {
	Path metadata.TablePath
	Kind WriteKind
	// Rows are full-schema rows; a delete reads only their primary-key
	// columns, a partial update only its target columns.
	Rows [][]any
	// Upsert shapes a WriteUpsert (a partial update); ignored otherwise.
	Upsert UpsertOptions
	// Checked, when set on an append, promises that Rows were checked
	// against that table version (see CheckedRows): while the table is
	// still that version, Commit routes them without coercing them again.
	Checked *CheckedRows
}

// Commit applies every write atomically: either all of them become
// visible (and, with Sync, durable when Commit returns) or none, also
// across a crash at any point. Writes apply in order: a later write sees
// the state the earlier ones produced (an upsert and then a delete of one
// key in one commit leave no row). Every row of every write is checked and
// coerced before anything is written; missing partitions of appends and
// upserts are created first (a partition stays even when the commit then
// fails). The results are per write: rows appended, or RowsAffected as
// Upsert and Delete count them.
//
// Per touched bucket a commit writes one record batch (several when very
// large) holding its rows from every write in order. A commit that writes
// more than one batch goes through the commit journal (commit_journal.go);
// a failure rolls everything back, and the engine keeps working unless the
// failure leaves the state on disk unknown (a failed fsync or roll back),
// when it refuses further writes with ErrReadOnly until reopened.
//
// Commit checks no conflict: it is an autocommit write, which does not
// lose to anything (WriteBuffer.Commit is a transaction's commit, checked).
// While a write view is open, it records the keys it writes, so that the
// transactions open then lose to it.
func (e *Engine) Commit(ctx context.Context, writes []Write) ([]WriteResult, error) {
	return e.commit(ctx, writes, nil, nil)
}

// commit is Commit with the conflict check of a transaction whose view
// (nil: none) was cut by WriteView: a key one of the writes upserts or
// deletes, or one of the locks names (delete-shaped rows of the keys read
// FOR UPDATE, applied as nothing), that a commit after the cut wrote fails
// it with ErrConflict before anything is applied.
func (e *Engine) commit(ctx context.Context, writes, locks []Write, view *ReadView) ([]WriteResult, error) {
	if err := e.readOnlyErr(); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		preps, err := e.prepareWrites(writes)
		if err != nil {
			return nil, err
		}
		if len(locks) > 0 {
			lp, err := e.prepareWrites(locks)
			if err != nil {
				return nil, err
			}
			for _, p := range lp {
				p.lock = true
			}
			preps = append(preps, lp...)
		}
		res, retry, err := e.commitPrepared(ctx, preps, view)
		if !retry {
			if err == nil {
				e.noteCommit()
			}
			return res[:min(len(res), len(writes))], err
		}
		if attempt >= 5 {
			return nil, fmt.Errorf("commit to %s: the tables keep changing under the write", commitLabel(preps))
		}
	}
}

func (e *Engine) readOnlyErr() error {
	if f := e.failed.Load(); f != nil {
		return fmt.Errorf("%w: an earlier write failed: %w", metadata.ErrReadOnly, *f)
	}
	return nil
}

// preparedWrite is a write checked against its table, its rows routed.
type preparedWrite struct {
	w        *Write
	pos      int // index in the commit, for messages
	of       int // writes in the commit
	tableID  int64
	schemaID int32
	pk       bool
	// lock marks the keys of rows read FOR UPDATE (shaped as a delete):
	// checked for conflicts, applied as nothing.
	lock     bool
	target   []int // columns of a partial update; nil: whole rows
	defaults []any // the row a new key of a partial update starts from
	routed   routedRows
}

// wrap names the write in a commit of several; a single write's errors
// read as the statement's own.
func (p *preparedWrite) wrap(err error) error {
	if p.of <= 1 || err == nil {
		return err
	}
	return fmt.Errorf("write %d of %d (%s %s): %w", p.pos+1, p.of, p.w.Kind, p.w.Path, err)
}

// prepareWrites checks each write against its table and routes its rows.
func (e *Engine) prepareWrites(writes []Write) ([]*preparedWrite, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	entries := make([]*tableEntry, len(writes))
	for i := range writes {
		entries[i], err = cat.table(writes[i].Path)
		if err != nil {
			e.mu.RUnlock()
			p := preparedWrite{w: &writes[i], pos: i, of: len(writes)}
			return nil, p.wrap(err)
		}
	}
	e.mu.RUnlock()
	preps := make([]*preparedWrite, len(writes))
	for i := range writes {
		w := &writes[i]
		info := &entries[i].Info
		p := &preparedWrite{w: w, pos: i, of: len(writes), tableID: info.TableID, schemaID: info.SchemaID, pk: info.HasPrimaryKey()}
		var only []int
		switch w.Kind {
		case WriteAppend:
			if p.pk {
				return nil, p.wrap(fmt.Errorf("%w: table %s has a primary key: appends are for log tables", metadata.ErrUnsupported, w.Path))
			}
		case WriteUpsert, WriteDelete:
			if !p.pk {
				what := "upserts"
				if w.Kind == WriteDelete {
					what = "deletes"
				}
				return nil, p.wrap(fmt.Errorf("%w: table %s has no primary key: %s need a primary-key table", metadata.ErrUnsupported, w.Path, what))
			}
			if w.Kind == WriteDelete {
				only = info.PrimaryKeyIndexes()
			} else if p.target, err = partialColumns(info, w.Upsert.TargetColumns); err != nil {
				return nil, p.wrap(err)
			} else if p.defaults, err = newKeyDefaults(info, p.target, w.Upsert.Defaults); err != nil {
				return nil, p.wrap(err)
			} else {
				only = p.target
			}
		default:
			return nil, p.wrap(fmt.Errorf("%w: write kind %d", metadata.ErrInvalidValue, int(w.Kind)))
		}
		trusted := w.Kind == WriteAppend && w.Checked != nil && w.Checked.TableID == info.TableID &&
			w.Checked.SchemaID == info.SchemaID && fullRows(w.Rows, len(info.Schema.Columns))
		if p.routed, err = routeRows(entries[i], w.Rows, only, trusted); err != nil {
			return nil, p.wrap(err)
		}
		preps[i] = p
	}
	return preps, nil
}

// commitLabel names the tables of a commit, for messages.
func commitLabel(preps []*preparedWrite) string {
	var names []string
	for _, p := range preps {
		if s := p.w.Path.String(); !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	return strings.Join(names, ", ")
}

// commitPrepared runs the commit with the shared lock held, once every
// table still is the one the rows were routed for and every partition the
// appends and upserts need exists (missing ones are created and persisted
// first). retry is true when a table changed under it.
func (e *Engine) commitPrepared(ctx context.Context, preps []*preparedWrite, view *ReadView) (res []WriteResult, retry bool, err error) {
	for range 3 {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		cat, err := e.readLock()
		if err != nil {
			return nil, false, err
		}
		entries := make([]*tableEntry, len(preps))
		missing := map[int64]map[string][]string{}
		for i, p := range preps {
			entry, err := cat.table(p.w.Path)
			if err != nil || entry.Info.TableID != p.tableID || entry.Info.SchemaID != p.schemaID {
				e.mu.RUnlock()
				return nil, err == nil, p.wrap(err)
			}
			entries[i] = entry
			if p.w.Kind == WriteDelete {
				continue // a delete in a missing partition deletes nothing
			}
			for name, vals := range p.routed.partValues {
				if _, ok := entry.partitionByName(name); !ok {
					if missing[p.tableID] == nil {
						missing[p.tableID] = map[string][]string{}
					}
					missing[p.tableID][name] = vals
				}
			}
		}
		if len(missing) == 0 {
			res, err := e.commitLocked(preps, entries, view)
			e.mu.RUnlock()
			return res, false, err
		}
		e.mu.RUnlock()
		// Dynamic partitions: created (and persisted) before the write.
		if err := e.writeLock(); err != nil {
			return nil, false, err
		}
		for _, id := range slices.Sorted(maps.Keys(missing)) {
			if e.mu.cat.byID[id] == nil {
				e.mu.Unlock()
				return nil, true, nil
			}
			var vals [][]string
			for _, v := range missing[id] {
				if err := e.autoPartitionRefuses(&e.mu.cat.byID[id].Info, v); err != nil {
					e.mu.Unlock()
					return nil, false, err
				}
				vals = append(vals, v)
			}
			slices.SortFunc(vals, func(a, b []string) int { return slices.Compare(a, b) })
			if _, err := e.addPartitionsLocked(id, vals); err != nil {
				e.mu.Unlock()
				return nil, false, err
			}
		}
		e.mu.Unlock()
	}
	return nil, true, nil
}

// commitBucket is one bucket's share of a commit.
type commitBucket struct {
	bucketWrite
	entry *tableEntry
	// rows are the bucket's new records in order: a log table's rows, or
	// a primary-key table's changelog images with their change types.
	rows    [][]any
	changes []metadata.ChangeType
	// Primary-key buckets: the KV state, and each touched key's row after
	// the commit (nil: deleted) keyed by the Pebble key.
	kb    *kvBucket
	state map[string][]any
	// orig is each touched key's row before the commit (nil: none), kept
	// for a table with secondary indexes, whose entries of the old values
	// the commit removes.
	orig map[string][]any
	ixs  []*tableIndex
}

// bucketWrite is what the log side of a commit needs of one bucket.
type bucketWrite struct {
	tb      metadata.TableBucket
	t       *logTablet
	batches [][]byte
	mark    tabletMark
	marked  bool // mark taken: something may have been written
}

// commitLocked applies the prepared writes; the caller holds mu shared
// and has made sure every partition exists. With a view, the commit is a
// transaction's and is checked for conflicts (conflictSet) once it holds
// its bucket locks, before anything is applied. A small durable commit
// may be applied together with others (commitGroup).
func (e *Engine) commitLocked(preps []*preparedWrite, entries []*tableEntry, view *ReadView) ([]WriteResult, error) {
	buckets, dest, err := e.routeCommit(preps, entries)
	if err != nil {
		return nil, err
	}
	if e.combines(preps, entries) {
		return e.combine(&commitMember{preps: preps, entries: entries, view: view, buckets: buckets, dest: dest})
	}
	locked := make([]*commitBucket, 0, len(buckets))
	var unique []*tableEntry // tables with a UNIQUE index, by id
	for _, cb := range buckets {
		locked = append(locked, cb)
		if hasUnique(cb.ixs) && !slices.Contains(unique, cb.entry) {
			unique = append(unique, cb.entry)
		}
	}
	// A UNIQUE value may land in any bucket: a table-wide lock, taken
	// before the buckets' in table id order, keeps two commits from both
	// storing it.
	slices.SortFunc(unique, func(a, b *tableEntry) int { return cmp.Compare(a.Info.TableID, b.Info.TableID) })
	for _, t := range unique {
		t.uniqueMu.Lock()
	}
	defer func() {
		for _, t := range unique {
			t.uniqueMu.Unlock()
		}
	}()
	unlock := lockBuckets(locked)
	defer unlock()
	if err := e.readOnlyErr(); err != nil {
		return nil, err
	}
	results, ck, err := e.mergeCommit(preps, entries, dest, view, false)
	if err != nil {
		return nil, err
	}
	for _, t := range unique {
		if err := e.checkCommitUnique(t, locked); err != nil {
			return nil, err
		}
	}
	if ck != nil {
		if err := e.conflicts.check(view, ck, nil); err != nil {
			return nil, err
		}
	}
	record := func() {
		if e.conflicts.tracking() {
			if ck == nil {
				ck = writtenKeys(preps, entries, dest)
			}
			e.conflicts.record(ck)
		}
	}
	if err := e.applyBuckets(commitLabel(preps), locked, record); err != nil {
		return nil, err
	}
	return results, nil
}

// writtenKeys collects the keys the upserts and deletes of a commit name,
// for a commit that found no write view open as it merged and finds one
// open as it publishes.
func writtenKeys(preps []*preparedWrite, entries []*tableEntry, dest [][]*commitBucket) *commitConflicts {
	ck := &commitConflicts{}
	for i, p := range preps {
		if !p.pk || p.lock {
			continue
		}
		kc := entries[i].keyCodec()
		for r, cb := range dest[i] {
			if cb == nil {
				continue
			}
			if key, err := kc.key(cb.tb, p.routed.values[r]); err == nil {
				ck.write(entries[i].Info.Path, key)
			}
		}
	}
	return ck
}

// routeCommit finds the bucket of every row of the prepared writes: per
// write and row its bucket's share of the commit (nil: nothing to do),
// each bucket's share created empty.
func (e *Engine) routeCommit(preps []*preparedWrite, entries []*tableEntry) (map[metadata.TableBucket]*commitBucket, [][]*commitBucket, error) {
	buckets := map[metadata.TableBucket]*commitBucket{}
	dest := make([][]*commitBucket, len(preps))
	for i, p := range preps {
		entry := entries[i]
		info := &entry.Info
		n := len(p.routed.values)
		dest[i] = make([]*commitBucket, n)
		// Keyless rows go round-robin, continuing where the table's
		// previous write stopped.
		var rr uint64
		if p.w.Kind == WriteAppend && len(info.BucketKeys) == 0 && n > 0 {
			rr = entry.roundRobin.Add(uint64(n)) - uint64(n)
		}
		for r := range n {
			tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
			if p.routed.partitions != nil {
				part, ok := entry.partitionByName(p.routed.partitions[r])
				if !ok {
					continue // a delete in a partition that does not exist
				}
				tb.PartitionID = part.ID
			}
			b := p.routed.buckets[r]
			if b < 0 {
				b = int((rr + uint64(r)) % uint64(info.NumBuckets))
			}
			tb.Bucket = int32(b)
			cb := buckets[tb]
			if cb == nil {
				var t *logTablet
				if p.w.Kind == WriteDelete {
					if t = e.tablet(tb); t == nil {
						continue // never written: nothing to delete
					}
				} else {
					var err error
					if t, err = e.tabletForWrite(tb); err != nil {
						return nil, nil, p.wrap(err)
					}
				}
				cb = &commitBucket{bucketWrite: bucketWrite{tb: tb, t: t}, entry: entry}
				if p.pk {
					cb.kb = e.kvBucketState(tb)
					if cb.kb.broken != nil {
						return nil, nil, p.wrap(cb.kb.broken)
					}
					cb.state = map[string][]any{}
					if cb.ixs = entry.indexes; cb.ixs != nil {
						cb.orig = map[string][]any{}
					}
				}
				buckets[tb] = cb
			}
			dest[i][r] = cb
		}
	}
	return buckets, dest, nil
}

// lockBuckets takes the locks of the buckets, in the one order every
// writer takes them in (table, partition, bucket), so that commits
// touching the same buckets never deadlock; it returns their release.
// cutMu is taken after them, for the publication only (applyLocked).
func lockBuckets(locked []*commitBucket) (unlock func()) {
	slices.SortFunc(locked, func(a, b *commitBucket) int {
		return lockOrder(a.tb, b.tb)
	})
	for _, cb := range locked {
		cb.t.mu.Lock()
	}
	return func() {
		for _, cb := range locked {
			cb.t.mu.Unlock()
		}
	}
}

// mergeCommit merges the prepared writes into their buckets' shares, in
// order, and returns each write's result and the conflict keys of the
// commit (nil when it is no transaction's, no write view is open and
// always is false): the keys it writes and those it read FOR UPDATE. The
// caller holds the buckets' locks.
func (e *Engine) mergeCommit(preps []*preparedWrite, entries []*tableEntry, dest [][]*commitBucket, view *ReadView, always bool) ([]WriteResult, *commitConflicts, error) {
	var ck *commitConflicts
	if always || view != nil || e.conflicts.tracking() {
		ck = &commitConflicts{}
	}
	results := make([]WriteResult, len(preps))
	for i, p := range preps {
		switch {
		case p.lock:
			if err := lockKeys(entries[i], p, dest[i], ck); err != nil {
				return nil, nil, p.wrap(err)
			}
			continue
		case !p.pk:
			for r, cb := range dest[i] {
				if cb != nil {
					cb.rows = append(cb.rows, p.routed.values[r])
					results[i].RowsAffected++
				}
			}
			continue
		}
		n, err := e.mergeWrite(entries[i], p, dest[i], ck, view)
		if err != nil {
			return nil, nil, p.wrap(err)
		}
		results[i].RowsAffected = n
	}
	return results, ck, nil
}

// applyBuckets encodes the buckets' new records and makes them durable
// and visible (applyLocked); a commit that changes nothing writes nothing.
func (e *Engine) applyBuckets(label string, locked []*commitBucket, record func()) error {
	var (
		writes []*commitBucket
		total  int
	)
	for _, cb := range locked {
		if len(cb.rows) == 0 {
			continue
		}
		var err error
		if cb.batches, err = e.encodeBatches(cb.entry, cb.rows, cb.changes); err != nil {
			return err
		}
		total += len(cb.batches)
		writes = append(writes, cb)
	}
	if total == 0 {
		// Nothing changed, yet the keys were written as far as the
		// transactions open are concerned (a no-op upsert conflicts as
		// a change does): they are recorded as a publication would.
		if record != nil {
			e.cutMu.RLock()
			record()
			e.cutMu.RUnlock()
		}
		return nil
	}
	return e.applyLocked(label, writes, total, record)
}

// mergeWrite merges one upsert or delete into the commit's buckets and
// returns the rows it affected. Per row: read the key's current row (this
// commit's earlier rows first, then the KV store), merge by the table's
// merge engine, and collect the changelog: +I new; -U old, +U new (only
// +U with changelog image WAL); -D old; nothing when nothing changes.
// Every key the write names, changed or not, joins ck (when not nil).
//
// A row the transaction's write view read (view: nil for none) is taken
// from the view rather than read again: the conflict check that follows
// the merge fails the commit unless no commit wrote the key after the
// view was cut, and then the view's row is the stored one. Not for a
// table with indexes: their check, which runs before the conflict check,
// must not see a row older than the stored one.
func (e *Engine) mergeWrite(entry *tableEntry, p *preparedWrite, dest []*commitBucket, ck *commitConflicts, view *ReadView) (int64, error) {
	del := p.w.Kind == WriteDelete
	m := newMerger(&entry.Info, p.target, p.defaults)
	kc := entry.keyCodec()
	var affected int64
	for r, cb := range dest {
		if cb == nil {
			continue
		}
		in := p.routed.values[r]
		key, err := kc.key(cb.tb, in)
		if err != nil {
			return 0, fmt.Errorf("row %d: key: %w", r+1, err)
		}
		ck.write(entry.Info.Path, key)
		old, ok := cb.state[string(key)]
		if !ok && cb.orig == nil && view != nil {
			if old, ok, err = view.readRow(entry, key); err != nil {
				return 0, err
			}
		}
		if !ok {
			if old, err = e.kvGet(entry, key); err != nil {
				return 0, err
			}
			if cb.orig != nil {
				cb.orig[string(key)] = old
			}
		}
		if del {
			if err := m.refusesDeletes(); err != nil {
				return 0, err
			}
			if old == nil || !m.deletes() {
				continue
			}
			cb.rows = append(cb.rows, old)
			cb.changes = append(cb.changes, metadata.ChangeDelete)
			cb.state[string(key)] = nil
			affected++
			continue
		}
		next, changed, err := m.upsert(old, in)
		if err != nil {
			return 0, fmt.Errorf("row %d: %w", r+1, err)
		}
		if !changed {
			continue
		}
		switch {
		case old == nil:
			cb.rows = append(cb.rows, next)
			cb.changes = append(cb.changes, metadata.ChangeInsert)
		case m.wal:
			cb.rows = append(cb.rows, next)
			cb.changes = append(cb.changes, metadata.ChangeUpdateAfter)
		default:
			cb.rows = append(cb.rows, old, next)
			cb.changes = append(cb.changes, metadata.ChangeUpdateBefore, metadata.ChangeUpdateAfter)
		}
		cb.state[string(key)] = next
		affected++
	}
	return affected, nil
}

// lockKeys adds the keys of a lock write (rows read FOR UPDATE) to ck.
func lockKeys(entry *tableEntry, p *preparedWrite, dest []*commitBucket, ck *commitConflicts) error {
	if ck == nil {
		return nil
	}
	kc := entry.keyCodec()
	for r, cb := range dest {
		if cb == nil {
			continue // a bucket never written, or a partition gone: no conflict
		}
		key, err := kc.key(cb.tb, p.routed.values[r])
		if err != nil {
			return fmt.Errorf("row %d: key: %w", r+1, err)
		}
		ck.readForUpdate(entry.Info.Path, key)
	}
	return nil
}

// checkCommitUnique checks the UNIQUE indexes of one table against the
// rows the commit leaves in its buckets (see checkUnique).
func (e *Engine) checkCommitUnique(t *tableEntry, buckets []*commitBucket) error {
	state, orig := map[string][]any{}, map[string][]any{}
	var ixs []*tableIndex
	for _, cb := range buckets {
		if cb.entry != t {
			continue
		}
		ixs = cb.ixs
		maps.Copy(state, cb.state)
		maps.Copy(orig, cb.orig)
	}
	if err := checkUnique(e.kv, t, ixs, state, orig); err != nil {
		return fmt.Errorf("write to %s: %w", t.Info.Path, err)
	}
	return nil
}

// errTestingCrash is returned by a commit stopped by
// Options.TestingCrashCommit.
var errTestingCrash = errors.New("testing: the commit was stopped as if the process had died (Options.TestingCrashCommit); reopen the engine")

// applyLocked makes the commit's batches durable and visible. A small
// commit with Sync: its redo record and the journal's fsync (the commit
// point), every batch, the KV store, and only then the high watermarks.
// Otherwise: the intent (when more than one batch), every batch and
// their fsync (the commit point), the KV store, the done record, and the
// high watermarks; record (nil: nothing) records the commit's conflict
// keys just before they move. The caller holds every bucket's lock, and
// not cutMu: applyLocked takes it for the publication.
func (e *Engine) applyLocked(label string, writes []*commitBucket, total int, record func()) error {
	bws := make([]*bucketWrite, len(writes))
	size := 0
	for i, w := range writes {
		bws[i] = &w.bucketWrite
		if w.t.damaged != nil {
			// The log lost acknowledged data: a write would take its
			// offsets.
			return fmt.Errorf("commit to %s: %w", label, w.t.damaged)
		}
		if w.t.mu.closed {
			return fmt.Errorf("log of %s: %w", w.tb, metadata.ErrClosed)
		}
		for _, b := range w.batches {
			size += len(b)
		}
	}
	now := e.opts.Clock().UnixMilli()
	redo := e.opts.Sync && e.journal != nil && size <= journalRedoBytes
	var id uint64
	journaled := redo || total > 1
	if journaled {
		entries := make([]journalEntry, len(writes))
		for i, w := range writes {
			entries[i] = journalEntry{tb: w.tb, start: w.t.mu.leo, end: w.t.mu.leo}
			for _, b := range w.batches {
				h, err := logformat.ParseHeader(b)
				if err != nil {
					return err
				}
				if redo {
					// The record holds the batches as the log will.
					logformat.SetBaseOffset(b, entries[i].end)
					logformat.SetCommitTimestamp(b, now)
				}
				entries[i].end += int64(h.LastOffsetDelta) + 1
			}
			if redo {
				entries[i].batches = w.batches
			}
		}
		var jerr *journalError
		if redo {
			if e.opts.TestingCrashCommit != nil && e.opts.TestingCrashCommit(0, false) {
				e.fail(label, errTestingCrash)
				return errTestingCrash
			}
			id, jerr = e.journal.beginRedo(entries)
		} else {
			id, jerr = e.journal.begin(entries)
		}
		if jerr != nil {
			if jerr.hard {
				// The record may be on disk, naming offsets later
				// commits would reuse: no more writes until a reopen
				// settles it.
				e.fail(label, jerr)
			}
			return fmt.Errorf("commit to %s: %w", label, jerr)
		}
	}
	// crash asks Options.TestingCrashCommit before batch k (after the
	// last, k is the batch count); past the commit point (recorded) once
	// the redo record or every batch is durable.
	crash := func(k int, recorded bool) bool {
		if e.opts.TestingCrashCommit == nil || !e.opts.TestingCrashCommit(k, recorded) {
			return false
		}
		if journaled {
			e.journal.abandon(errTestingCrash)
		}
		e.fail(label, errTestingCrash)
		return true
	}

	written := map[*segment]bool{}
	rolled := map[*logTablet]bool{}
	// abort undoes the commit; the engine turns read-only when the state
	// on disk is unknown (hard) or the undo fails.
	abort := func(cause error, hard bool) error {
		var errs []error
		for _, w := range bws {
			if w.marked && !w.t.mu.closed {
				errs = append(errs, w.t.rollbackLocked(w.mark))
			}
		}
		if redo && !hard && len(errs) == 0 {
			// The abort record keeps a reopen from replaying the
			// commit: the logs must not keep any of it either.
			errs = append(errs, e.syncRolledBack(bws, rolled))
		}
		rerr := errors.Join(errs...)
		if journaled {
			if hard || rerr != nil {
				e.journal.abandon(cause)
			} else if jerr := e.journal.abort(id); jerr != nil {
				// The record stays open: a reopen settles it by the
				// logs (or replays it), which later writes must not
				// pass.
				e.journal.abandon(jerr)
				rerr = jerr
			}
		}
		if rerr != nil || hard {
			e.fail(label, errors.Join(cause, rerr))
		}
		return fmt.Errorf("commit to %s: %w", label, cause)
	}

	k := 0
	for _, w := range bws {
		if w.t.mu.closed {
			return abort(fmt.Errorf("log of %s: %w", w.tb, metadata.ErrClosed), false)
		}
		w.mark, w.marked = w.t.markLocked(), true
		for _, b := range w.batches {
			if crash(k, redo) {
				return errTestingCrash
			}
			if !redo {
				logformat.SetCommitTimestamp(b, now)
			}
			seg, err := w.t.appendLocked(b)
			if err != nil {
				return abort(err, false)
			}
			k++
			written[seg] = true
			if seg.base >= w.mark.leo && seg.base > 0 {
				rolled[w.t] = true
			}
		}
	}
	if e.opts.Sync && !redo {
		if err := e.syncAll(written, rolled); err != nil {
			// A failed fsync may have dropped pages it had reported
			// written: durability is unknown.
			return abort(err, true)
		}
	}
	// The commit point is behind: from here a crash keeps the commit.
	if crash(k, true) {
		return errTestingCrash
	}
	// The publication: the KV state, the recorded conflict keys and the
	// high watermarks change together under cutMu, so that a read view is
	// cut before all of them or after (see ReadView). Until here nothing
	// of the commit was visible, and views were cut meanwhile: a commit
	// does not hold them up while it writes and fsyncs.
	e.cutMu.RLock()
	if err := e.applyKvLocked(writes); err != nil {
		e.cutMu.RUnlock()
		if redo {
			// Rolled back durably with an abort record, the commit is
			// gone for good; failing that, a reopen replays it. The KV
			// store failed: no more writes either way.
			_ = abort(err, false)
			e.fail(label, err)
			return fmt.Errorf("commit to %s: KV store: %w", label, err)
		}
		// The logs hold the commit durably; rolled back, it could still
		// come back after a crash, so no more writes. Its intent stays
		// open, without a done record: Open would take a done record's
		// end offsets for acknowledged and report the rolled-back logs
		// as damaged, while an open intent is settled by what the logs
		// hold.
		var errs []error
		for _, w := range bws {
			if !w.t.mu.closed {
				errs = append(errs, w.t.rollbackLocked(w.mark))
			}
		}
		cause := errors.Join(append(errs, err)...)
		if journaled {
			e.journal.abandon(cause)
		}
		e.fail(label, cause)
		return fmt.Errorf("commit to %s: KV store: %w", label, err)
	}
	switch {
	case redo:
		// Before the high watermarks move: a checkpoint that reads
		// them fsyncs these segments first.
		e.journal.finish(written, rolled)
	case journaled:
		if jerr := e.journal.done(id); jerr != nil && jerr.hard {
			// The commit stands, but the journal's tail is unknown.
			e.fail(label, jerr)
		}
	}
	if record != nil {
		record()
	}
	for _, w := range writes {
		w.t.hw.Store(w.t.mu.leo)
		if w.kb != nil && !e.opts.TestingSkipKvApply {
			w.kb.applied.Store(w.t.mu.leo)
		}
	}
	e.cutMu.RUnlock()
	e.notifyCommitted(bws)
	return nil
}

// syncRolledBack fsyncs the logs a commit rolled back: the segment each
// now ends in, and the directories it had added a segment to.
func (e *Engine) syncRolledBack(bws []*bucketWrite, rolled map[*logTablet]bool) error {
	var errs []error
	for _, w := range bws {
		if !w.marked || w.t.mu.closed {
			continue
		}
		seg := w.t.mu.segments[len(w.t.mu.segments)-1]
		if err := seg.f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", seg.rel, err))
		}
		if rolled[w.t] {
			if err := e.fs.SyncDir(w.t.dir); err != nil {
				errs = append(errs, fmt.Errorf("sync %s: %w", w.t.rel, err))
			}
		}
	}
	return errors.Join(errs...)
}

// applyKvLocked writes the final rows and flushed offsets of every
// primary-key bucket of a commit to the KV store in one batch.
func (e *Engine) applyKvLocked(writes []*commitBucket) error {
	batch := e.kv.NewBatch()
	defer batch.Close()
	// Every index entry the commit removes goes before any it sets: a
	// value moving between two rows keeps its slot (see kvIndexTag).
	for _, w := range writes {
		if w.kb == nil || w.ixs == nil {
			continue
		}
		for key, row := range w.state {
			if err := removeIndexEntries(batch, w.ixs, []byte(key), w.orig[key], row); err != nil {
				return err
			}
		}
	}
	var buf []byte
	for _, w := range writes {
		if w.kb == nil {
			continue
		}
		info := &w.entry.Info
		for key, row := range w.state {
			var err error
			if row == nil {
				err = batch.Delete([]byte(key), nil)
			} else if buf, err = encodeRowValue(buf[:0], info.SchemaID, w.entry.types, row); err == nil {
				err = batch.Set([]byte(key), buf, nil)
			}
			if err != nil {
				return err
			}
			if w.ixs != nil {
				if err := addIndexEntries(batch, w.ixs, []byte(key), w.orig[key], row, buf); err != nil {
					return err
				}
			}
		}
		if err := batch.Set(kvMetaKey(w.tb), offsetValue(w.t.mu.leo), nil); err != nil {
			return err
		}
	}
	if batch.Empty() {
		return nil
	}
	if e.opts.TestingSkipKvApply {
		// A simulated crash between the log write and the KV write: the
		// commit is durable in the log, and only a reopen brings the KV
		// state up to date.
		failure := errors.New("testing: the KV write of a statement was skipped (TestingSkipKvApply); reopen the engine")
		e.failed.CompareAndSwap(nil, &failure)
		return nil
	}
	return e.commitKv(batch)
}

// fail makes the engine refuse further writes.
func (e *Engine) fail(label string, cause error) {
	e.failed.CompareAndSwap(nil, &cause)
	e.opts.Logger.Error("write failed; refusing further writes", "tables", label, "err", cause)
}

// syncAll fsyncs the written segments and the directories of tablets that
// rolled a segment, in parallel: a commit waits for its slowest disk
// write, not their sum.
func (e *Engine) syncAll(segs map[*segment]bool, dirs map[*logTablet]bool) error {
	var jobs []func() error
	for seg := range segs {
		jobs = append(jobs, func() error {
			if err := seg.f.Sync(); err != nil {
				return fmt.Errorf("sync %s: %w", seg.rel, err)
			}
			return nil
		})
	}
	for t := range dirs {
		jobs = append(jobs, func() error {
			if err := e.fs.SyncDir(t.dir); err != nil {
				return fmt.Errorf("sync %s: %w", t.rel, err)
			}
			return nil
		})
	}
	if len(jobs) == 1 {
		return jobs[0]()
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() { errs[i] = job() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// recoverCommits settles the commits the journal holds a record of
// without a done or abort record, in the order they were written. An
// intent: when every listed bucket's log reaches its end offset the
// commit passed its commit point and stands; otherwise each listed
// bucket's log is cut back to where the commit started. A redo record
// stands: each bucket's log is given whatever of its batches it lacks.
// Runs on Open, after the tablets are recovered (torn tails cut) and
// before the KV state is replayed from them; what it changes is fsynced
// before the journal is emptied.
func (e *Engine) recoverCommits() error {
	j, open, err := openJournal(e.fs, e.root, e.opts.Sync)
	if err != nil {
		return err
	}
	e.journal = j
	ids := slices.Sorted(maps.Keys(open))
	// reach[tb] is, per redo record of tb in offset order, the end of the
	// run of redo records that follow on from it without a gap: the
	// offsets the journal can give back from there.
	reach := map[metadata.TableBucket][]journalEntry{}
	for _, id := range ids {
		if rec := open[id]; rec.redo {
			for _, en := range rec.entries {
				reach[en.tb] = append(reach[en.tb], en)
			}
		}
	}
	runEnd := func(tb metadata.TableBucket, start int64) int64 {
		end := start
		for _, en := range reach[tb] {
			if en.start == end {
				end = en.end
			}
		}
		return end
	}
	replayed := map[*logTablet]int64{}
	for _, id := range ids {
		rec := open[id]
		if rec.redo {
			if err := e.replayRedo(id, rec.entries, runEnd, replayed); err != nil {
				return err
			}
			continue
		}
		complete := true
		for _, en := range rec.entries {
			// A bucket without a tablet was dropped since.
			if t := e.tablets[en.tb]; t != nil && t.hw.Load() < en.end {
				complete = false
			}
		}
		if complete {
			continue
		}
		for _, en := range rec.entries {
			t := e.tablets[en.tb]
			if t == nil || t.hw.Load() <= en.start {
				continue
			}
			e.opts.Logger.Warn("rolling back a commit that did not complete", "bucket", en.tb.String(), "from", en.start, "log_end", t.hw.Load(), "commit", id)
			if err := t.truncateTo(en.start); err != nil {
				return fmt.Errorf("roll back unfinished commit %d in %s: %w", id, en.tb, err)
			}
		}
	}
	for t, from := range replayed {
		if err := t.syncFrom(from); err != nil {
			return fmt.Errorf("replay commits into %s: %w", t.tb, err)
		}
		if err := e.fs.SyncDir(t.dir); err != nil {
			return fmt.Errorf("replay commits into %s: %w", t.tb, err)
		}
	}
	return j.reset()
}

// replayRedo gives each bucket of redo record id the batches its log
// lacks. A log that ends at the record's start gets them appended; one
// that holds other bytes there (pages never fsynced, torn or garbled) is
// cut back to the first batch that differs, when the journal can give
// back everything the log holds past it (runEnd), and gets the rest. A
// bucket whose log ends before the record's start lost data the journal
// does not hold, and one whose differing tail the journal cannot give
// back holds damage: both are left for the acknowledged-offsets check to
// report, and the record is not replayed into them.
func (e *Engine) replayRedo(id uint64, entries []journalEntry, runEnd func(metadata.TableBucket, int64) int64, replayed map[*logTablet]int64) error {
	for _, en := range entries {
		t := e.tablets[en.tb]
		if t == nil {
			continue // dropped since
		}
		leo := t.hw.Load()
		if leo < en.start {
			e.opts.Logger.Error("cannot replay a commit: the log ends before it", "bucket", en.tb.String(), "log_end", leo, "commit_start", en.start, "commit", id)
			continue
		}
		off, i := en.start, 0
		// Batches expiry removed since were fsynced first (expiry
		// writes the checkpoint): nothing to give back.
		for start := t.logStart.Load(); i < len(en.batches) && off < start; i++ {
			h, _ := logformat.ParseHeader(en.batches[i])
			off = h.NextOffset()
		}
		for ; i < len(en.batches) && off < leo; i++ {
			same, err := t.holdsBatch(off, en.batches[i])
			if err != nil {
				return fmt.Errorf("replay commit %d into %s: %w", id, en.tb, err)
			}
			if !same {
				break
			}
			h, _ := logformat.ParseHeader(en.batches[i])
			off = h.NextOffset()
		}
		if i == len(en.batches) {
			continue // all there
		}
		if off < leo {
			if end := runEnd(en.tb, en.start); leo > end {
				e.opts.Logger.Error("cannot replay a commit: the log holds other data at its offsets", "bucket", en.tb.String(), "offset", off, "log_end", leo, "commit", id)
				continue
			}
			if err := t.truncateTo(off); err != nil {
				return fmt.Errorf("replay commit %d into %s: %w", id, en.tb, err)
			}
		}
		e.opts.Logger.Info("replaying a commit from the journal", "bucket", en.tb.String(), "from", off, "to", en.end, "commit", id)
		if err := t.replay(en.batches[i:]); err != nil {
			return fmt.Errorf("replay commit %d into %s: %w", id, en.tb, err)
		}
		if from, ok := replayed[t]; !ok || off < from {
			replayed[t] = off
		}
	}
	return nil
}
