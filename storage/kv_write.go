package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// Upsert writes full rows (schema order, canonical values) to a
// primary-key table: a new key is inserted, an existing one merged by the
// table's merge engine (see mergeRow). Every row is checked and coerced
// before anything is written; NULL in a key column is ErrConstraint. Each
// touched bucket gets one changelog batch with the full images (+I; -U
// old, +U new; nothing when nothing changes; only +U for an update when
// table.changelog.image is WAL), written like an Append: visible in every
// bucket at once, or not at all. Rows of one key in one statement apply
// in order.
func (e *Engine) Upsert(ctx context.Context, path metadata.TablePath, rows [][]any, opts UpsertOptions) (WriteResult, error) {
	return e.writeKv(ctx, path, rows, false, opts.TargetColumns)
}

// Delete removes the keys of the given full-schema rows (only the
// primary-key columns, partition keys included, are read), emitting -D
// with the removed row. A key that does not exist, or whose partition
// does not, is no change. The first_row and versioned merge engines
// ignore deletes, as Fluss does.
func (e *Engine) Delete(ctx context.Context, path metadata.TablePath, rows [][]any) (WriteResult, error) {
	return e.writeKv(ctx, path, rows, true, nil)
}

func (e *Engine) writeKv(ctx context.Context, path metadata.TablePath, rows [][]any, del bool, target []int) (WriteResult, error) {
	if f := e.failed.Load(); f != nil {
		return WriteResult{}, fmt.Errorf("%w: an earlier write failed: %w", metadata.ErrReadOnly, *f)
	}
	for attempt := 0; ; attempt++ {
		cat, err := e.readLock()
		if err != nil {
			return WriteResult{}, err
		}
		entry, err := cat.table(path)
		e.mu.RUnlock()
		if err != nil {
			return WriteResult{}, err
		}
		info := &entry.Info
		if !info.HasPrimaryKey() {
			what := "upserts"
			if del {
				what = "deletes"
			}
			return WriteResult{}, fmt.Errorf("%w: table %s has no primary key: %s need a primary-key table", metadata.ErrUnsupported, path, what)
		}
		only := info.PrimaryKeyIndexes()
		if !del {
			if only, err = partialColumns(info, target); err != nil {
				return WriteResult{}, err
			}
		}
		routed, err := routeRows(info, rows, only)
		if err != nil {
			return WriteResult{}, err
		}
		var res WriteResult
		retry, err := e.withPartitions(ctx, path, info.TableID, info.SchemaID, routed.partValues, !del, func(entry *tableEntry) error {
			var err error
			res, err = e.writeKvLocked(entry, routed, del, only)
			return err
		})
		if !retry || attempt >= 5 {
			return res, err
		}
	}
}

// partialColumns checks the target columns of a partial update as Fluss
// does and returns them; nil for a write of whole rows.
func partialColumns(info *metadata.TableInfo, target []int) ([]int, error) {
	if target == nil {
		return nil, nil
	}
	cols := info.Schema.Columns
	seen := make([]bool, len(cols))
	for _, c := range target {
		if c < 0 || c >= len(cols) {
			return nil, fmt.Errorf("%w: partial update of %s: column index %d out of range [0, %d)", metadata.ErrInvalidValue, info.Path, c, len(cols))
		}
		if seen[c] {
			return nil, fmt.Errorf("%w: partial update of %s lists column %s twice", metadata.ErrInvalidValue, info.Path, cols[c].Name)
		}
		seen[c] = true
	}
	var missing []string
	for _, c := range info.PrimaryKeyIndexes() {
		if !seen[c] {
			missing = append(missing, cols[c].Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: a partial update of %s must write every primary-key column (%s); missing %s", metadata.ErrInvalidValue, info.Path, strings.Join(info.Schema.PrimaryKey, ", "), strings.Join(missing, ", "))
	}
	if !slices.Contains(seen, false) {
		return nil, nil
	}
	if me := info.Config.MergeEngine; me != metadata.MergeLastRow {
		return nil, fmt.Errorf("%w: partial updates are not supported by the %s merge engine (table %s)", metadata.ErrUnsupported, me, info.Path)
	}
	pk := info.PrimaryKeyIndexes()
	for i, c := range cols {
		if c.NotNull && !slices.Contains(pk, i) {
			return nil, fmt.Errorf("%w: a partial update of %s needs every column outside the primary key to be nullable, but %s is NOT NULL", metadata.ErrConstraint, info.Path, c.Name)
		}
	}
	return slices.Clone(target), nil
}

// kvWrite is one bucket's share of a primary-key statement.
type kvWrite struct {
	*bucketWrite
	kb *kvBucket
	// state holds each touched key's row after the statement (nil:
	// deleted), keyed by the Pebble key.
	state map[string][]any
}

// merger applies a table's merge engine.
type merger struct {
	engine  metadata.MergeEngine
	version int   // column of the versioned engine
	target  []int // columns of a partial update; nil: whole rows
	wal     bool  // changelog image WAL: updates emit only +U
}

func newMerger(info *metadata.TableInfo, target []int) *merger {
	m := &merger{engine: info.Config.MergeEngine, version: -1, target: target, wal: strings.EqualFold(info.Config.ChangelogImage, "WAL")}
	if m.engine == metadata.MergeVersioned {
		m.version = info.Schema.ColumnIndex(info.Config.VersionColumn)
	}
	return m
}

// upsert merges the incoming row into old (nil: no row) and returns the
// row to keep and whether it differs from old.
//   - last row (default): the incoming row replaces the old one; a
//     partial update replaces only the target columns (the others keep
//     their values, NULL for a new key).
//   - first_row: an existing key keeps its row.
//   - versioned: the incoming row wins when its version is at least the
//     stored one (a tie goes to the incoming row, and NULL is the lowest
//     version), as Fluss's VersionedRowMerger.
func (m *merger) upsert(old, in []any) ([]any, bool) {
	next := in
	switch m.engine {
	case metadata.MergeFirstRow:
		if old != nil {
			return old, false
		}
	case metadata.MergeVersioned:
		if old != nil && metadata.Compare(old[m.version], in[m.version]) > 0 {
			return old, false
		}
	default:
		if m.target != nil {
			next = make([]any, len(in))
			if old != nil {
				copy(next, old)
			}
			for _, c := range m.target {
				next[c] = in[c]
			}
		}
	}
	if old != nil && rowsEqual(old, next) {
		return old, false
	}
	return next, true
}

// deletes reports whether the merge engine applies deletes; first_row and
// versioned ignore them.
func (m *merger) deletes() bool { return m.engine == metadata.MergeLastRow }

func rowsEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || metadata.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// writeKvLocked applies a statement to a primary-key table; the caller
// holds mu shared. Per bucket, under the bucket's lock: read each key's
// current row (this statement's earlier rows first, then Pebble), merge,
// and collect the changelog; then append every bucket's changelog (fsync
// when Sync), apply all buckets' final rows and flushed offsets to Pebble
// in one batch, and only then advance the high watermarks.
func (e *Engine) writeKvLocked(entry *tableEntry, routed routedRows, del bool, target []int) (WriteResult, error) {
	info := &entry.Info
	groups := map[metadata.TableBucket][]int{}
	for r := range routed.values {
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: int32(routed.buckets[r])}
		if routed.partitions != nil {
			p, ok := entry.partitionByName(routed.partitions[r])
			if !ok {
				continue // a delete in a partition that does not exist
			}
			tb.PartitionID = p.ID
		}
		groups[tb] = append(groups[tb], r)
	}
	writes := make([]*kvWrite, 0, len(groups))
	for tb, rows := range groups {
		w := &kvWrite{bucketWrite: &bucketWrite{tb: tb, rows: rows}, state: map[string][]any{}}
		if del {
			if w.t = e.tablet(tb); w.t == nil {
				continue // never written: nothing to delete
			}
		} else {
			var err error
			if w.t, err = e.tabletForWrite(tb); err != nil {
				return WriteResult{}, err
			}
		}
		w.kb = e.kvBucketState(tb)
		if w.kb.broken != nil {
			return WriteResult{}, w.kb.broken
		}
		writes = append(writes, w)
	}
	slices.SortFunc(writes, func(a, b *kvWrite) int {
		return cmp.Or(cmp.Compare(a.tb.PartitionID, b.tb.PartitionID), cmp.Compare(a.tb.Bucket, b.tb.Bucket))
	})
	for _, w := range writes {
		w.t.mu.Lock()
	}
	defer func() {
		for _, w := range writes {
			w.t.mu.Unlock()
		}
	}()
	if f := e.failed.Load(); f != nil {
		return WriteResult{}, fmt.Errorf("%w: an earlier write failed: %w", metadata.ErrReadOnly, *f)
	}

	m := newMerger(info, target)
	kc := newKeyCodec(info)
	var affected int64
	bws := make([]*bucketWrite, len(writes))
	for i, w := range writes {
		bws[i] = w.bucketWrite
		var (
			out     [][]any
			changes []byte
		)
		for _, r := range w.rows {
			in := routed.values[r]
			key, err := kc.key(w.tb, in)
			if err != nil {
				return WriteResult{}, fmt.Errorf("row %d: key: %w", r+1, err)
			}
			old, ok := w.state[string(key)]
			if !ok {
				if old, err = e.kvGet(entry, key); err != nil {
					return WriteResult{}, err
				}
			}
			if del {
				if old == nil || !m.deletes() {
					continue
				}
				out = append(out, old)
				changes = append(changes, logformat.ChangeDelete)
				w.state[string(key)] = nil
				affected++
				continue
			}
			next, changed := m.upsert(old, in)
			if !changed {
				continue
			}
			switch {
			case old == nil:
				out = append(out, next)
				changes = append(changes, logformat.ChangeInsert)
			case m.wal:
				out = append(out, next)
				changes = append(changes, logformat.ChangeUpdateAfter)
			default:
				out = append(out, old, next)
				changes = append(changes, logformat.ChangeUpdateBefore, logformat.ChangeUpdateAfter)
			}
			w.state[string(key)] = next
			affected++
		}
		for start := 0; start < len(out); start += maxBatchRows {
			end := min(start+maxBatchRows, len(out))
			b, err := e.encodeRows(entry, out[start:end], changes[start:end])
			if err != nil {
				return WriteResult{}, err
			}
			w.batches = append(w.batches, b)
		}
	}
	if affected == 0 {
		return WriteResult{}, nil
	}
	if err := e.appendAndSyncLocked(info, bws); err != nil {
		return WriteResult{}, err
	}

	batch := e.kv.NewBatch()
	defer batch.Close()
	var buf []byte
	for _, w := range writes {
		if len(w.batches) == 0 {
			continue
		}
		for key, row := range w.state {
			var err error
			if row == nil {
				err = batch.Delete([]byte(key), nil)
			} else if buf, err = encodeRowValue(buf[:0], info.SchemaID, entry.types, row); err == nil {
				err = batch.Set([]byte(key), buf, nil)
			}
			if err != nil {
				e.rollbackLocked(info, bws, err, true)
				return WriteResult{}, fmt.Errorf("write %s: %w", info.Path, err)
			}
		}
		if err := batch.Set(kvMetaKey(w.tb), offsetValue(w.t.mu.leo), nil); err != nil {
			e.rollbackLocked(info, bws, err, true)
			return WriteResult{}, fmt.Errorf("write %s: %w", info.Path, err)
		}
	}
	if e.opts.TestingSkipKvApply {
		// A simulated crash between the log write and the KV write: the
		// statement is durable in the log, and only a reopen brings the
		// KV state up to date.
		failure := errors.New("testing: the KV write of a statement was skipped (TestingSkipKvApply); reopen the engine")
		e.failed.CompareAndSwap(nil, &failure)
	} else if err := batch.Commit(pebble.NoSync); err != nil {
		// The log already holds the statement durably; rolled back, it
		// could still come back after a crash, so no more writes.
		e.rollbackLocked(info, bws, err, true)
		return WriteResult{}, fmt.Errorf("write %s: KV store: %w", info.Path, err)
	}
	for _, w := range writes {
		w.t.hw.Store(w.t.mu.leo)
		if len(w.batches) > 0 && !e.opts.TestingSkipKvApply {
			w.kb.applied.Store(w.t.mu.leo)
		}
	}
	return WriteResult{RowsAffected: affected}, nil
}

// kvGet reads a key's committed row from Pebble; nil when absent.
func (e *Engine) kvGet(entry *tableEntry, key []byte) ([]any, error) {
	v, closer, err := e.kv.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
	}
	defer closer.Close()
	row, err := decodeRowValue(v, entry.Info.SchemaID, entry.types)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", entry.Info.Path, err)
	}
	return row, nil
}

// Lookup returns the live row (full schema, canonical values) of the key
// held in the primary-key columns of keyRow, or found=false. It reads the
// KV store, which holds only committed statements. A NULL key value, or a
// partition that does not exist, finds nothing.
func (e *Engine) Lookup(ctx context.Context, path metadata.TablePath, keyRow []any) (row []any, found bool, err error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, false, err
	}
	defer e.mu.RUnlock()
	entry, err := cat.table(path)
	if err != nil {
		return nil, false, err
	}
	info := &entry.Info
	if !info.HasPrimaryKey() {
		return nil, false, fmt.Errorf("%w: table %s has no primary key: lookups need a primary-key table", metadata.ErrUnsupported, path)
	}
	cols := info.Schema.Columns
	if len(keyRow) != len(cols) {
		return nil, false, fmt.Errorf("%w: lookup key row has %d values, table %s has %d columns", metadata.ErrInvalidValue, len(keyRow), path, len(cols))
	}
	vals := make([]any, len(cols))
	for _, c := range info.PrimaryKeyIndexes() {
		v, err := metadata.CoerceValue(cols[c].Type, keyRow[c])
		if err != nil {
			return nil, false, fmt.Errorf("lookup in %s: key column %s, value %s: %w", path, cols[c].Name, showValue(keyRow[c]), err)
		}
		if v == nil {
			return nil, false, nil
		}
		vals[c] = v
	}
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
	if info.IsPartitioned() {
		idx := info.PartitionKeyIndexes()
		pv := make([]string, len(idx))
		for k, c := range idx {
			if pv[k], err = metadata.PartitionValueString(cols[c].Type, vals[c]); err != nil {
				return nil, false, fmt.Errorf("lookup in %s: partition key %s: %w", path, cols[c].Name, err)
			}
		}
		p, ok := entry.partitionByName(metadata.PartitionName(pv))
		if !ok {
			return nil, false, nil
		}
		tb.PartitionID = p.ID
	}
	bidx := info.BucketKeyIndexes()
	btypes, bvals := make([]metadata.DataType, len(bidx)), make([]any, len(bidx))
	for k, c := range bidx {
		btypes[k], bvals[k] = cols[c].Type, vals[c]
	}
	bkey, err := metadata.EncodeKey(btypes, bvals)
	if err != nil {
		return nil, false, fmt.Errorf("lookup in %s: bucket key: %w", path, err)
	}
	tb.Bucket = int32(metadata.BucketOf(bkey, info.NumBuckets))
	e.kvMu.Lock()
	kb := e.kvBuckets[tb]
	e.kvMu.Unlock()
	if kb != nil && kb.broken != nil {
		return nil, false, kb.broken
	}
	key, err := newKeyCodec(info).key(tb, vals)
	if err != nil {
		return nil, false, fmt.Errorf("lookup in %s: %w", path, err)
	}
	row, err = e.kvGet(entry, key)
	if err != nil || row == nil {
		return nil, false, err
	}
	return row, true, nil
}
