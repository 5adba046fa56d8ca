package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// Upsert writes full rows (schema order, canonical values) to a
// primary-key table: a new key is inserted, an existing one merged by the
// table's merge engine (see merger.upsert). Every row is checked and coerced
// before anything is written; NULL in a key column is ErrConstraint. Each
// touched bucket gets one changelog batch with the full images (+I; -U
// old, +U new; nothing when nothing changes; only +U for an update when
// table.changelog.image is WAL), written like an Append: visible in every
// bucket at once, or not at all, also across a crash. Rows of one key in
// one statement apply in order. It is a Commit of one write.
func (e *Engine) Upsert(ctx context.Context, path metadata.TablePath, rows [][]any, opts UpsertOptions) (WriteResult, error) {
	return e.commitOne(ctx, Write{Path: path, Kind: WriteUpsert, Rows: rows, Upsert: opts})
}

// Delete removes the keys of the given full-schema rows (only the
// primary-key columns, partition keys included, are read), emitting -D
// with the removed row. A key that does not exist, or whose partition
// does not, is no change. The first_row and versioned merge engines
// ignore deletes, as Fluss does.
func (e *Engine) Delete(ctx context.Context, path metadata.TablePath, rows [][]any) (WriteResult, error) {
	return e.commitOne(ctx, Write{Path: path, Kind: WriteDelete, Rows: rows})
}

func (e *Engine) commitOne(ctx context.Context, w Write) (WriteResult, error) {
	res, err := e.Commit(ctx, []Write{w})
	if err != nil {
		return WriteResult{}, err
	}
	return res[0], nil
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
	if me := info.Config.MergeEngine; me != metadata.MergeLastRow && me != metadata.MergeAggregation {
		return nil, fmt.Errorf("%w: partial updates are not supported by the %s merge engine (table %s)", metadata.ErrUnsupported, me, info.Path)
	}
	return slices.Clone(target), nil
}

// newKeyDefaults returns the row a new key of a partial update with
// target columns starts from: the write's defaults (UpsertOptions), each
// checked against its column, or the schema's as of now; nil when every
// column outside target is NULL for a new key.
func newKeyDefaults(info *metadata.TableInfo, target []int, defaults []any) ([]any, error) {
	if target == nil {
		return nil, nil
	}
	cols := info.Schema.Columns
	if defaults == nil {
		if !info.Schema.HasDefaults() {
			return nil, nil
		}
		return info.Schema.DefaultRow(time.Now(), time.UTC)
	}
	if len(defaults) != len(cols) {
		return nil, fmt.Errorf("%w: partial update of %s: %d defaults for %d columns", metadata.ErrInvalidValue, info.Path, len(defaults), len(cols))
	}
	row := make([]any, len(cols))
	for i, c := range cols {
		if slices.Contains(target, i) {
			continue
		}
		v, err := metadata.CoerceValue(c.Type, defaults[i])
		if err != nil {
			return nil, fmt.Errorf("partial update of %s: default of column %s: %w", info.Path, c.Name, err)
		}
		row[i] = v
	}
	return row, nil
}

// merger applies a table's merge engine.
type merger struct {
	engine  metadata.MergeEngine
	version int   // column of the versioned engine
	target  []int // columns of a partial update; nil: whole rows
	// defaults is the row a new key of a partial update starts from
	// (nil: NULLs); required are the columns outside target that are
	// NOT NULL and have no value there, which a new key cannot have.
	defaults []any
	required []int
	info     *metadata.TableInfo
	wal      bool // changelog image WAL: updates emit only +U
	// aggs and delims are the aggregation engine's function and listagg
	// delimiter of each column; aggs[c] is "" for a key column.
	aggs   []metadata.AggFunc
	delims []string
}

// newMerger returns the merger of a write of whole rows (target nil) or
// a partial update of target, whose new keys start from defaults
// (newKeyDefaults).
func newMerger(info *metadata.TableInfo, target []int, defaults []any) *merger {
	m := &merger{engine: info.Config.MergeEngine, version: -1, target: target, defaults: defaults, info: info,
		wal: strings.EqualFold(info.Config.ChangelogImage, "WAL")}
	if m.engine == metadata.MergeVersioned {
		m.version = info.Schema.ColumnIndex(info.Config.VersionColumn)
	}
	if m.engine == metadata.MergeAggregation {
		cols := info.Schema.Columns
		m.aggs, m.delims = make([]metadata.AggFunc, len(cols)), make([]string, len(cols))
		for _, c := range info.PrimaryKeyIndexes() {
			m.aggs[c] = "-"
		}
		for i, c := range cols {
			if m.aggs[i] == "-" {
				m.aggs[i] = ""
				continue
			}
			m.aggs[i], m.delims[i] = info.Config.AggOf(c.Name), info.Config.DelimiterOf(c.Name)
		}
	}
	if target != nil {
		for i, c := range info.Schema.Columns {
			if c.NotNull && !slices.Contains(target, i) && (defaults == nil || defaults[i] == nil) {
				m.required = append(m.required, i)
			}
		}
	}
	return m
}

// upsert merges the incoming row into old (nil: no row) and returns the
// row to keep and whether it differs from old.
//   - last row (default): the incoming row replaces the old one; a
//     partial update replaces only the target columns (the others keep
//     their values; a new key takes the defaults, and is ErrConstraint
//     when a NOT NULL column outside the target has none).
//   - first_row: an existing key keeps its row.
//   - versioned: the incoming row wins when its version is at least the
//     stored one (a tie goes to the incoming row, and NULL is the lowest
//     version), as Fluss's VersionedRowMerger.
//   - aggregation: each column other than the key's (of a partial update,
//     each target column) combines with the stored row's by its aggregate
//     function (metadata.AggFunc.Merge); a new key takes the row as given.
func (m *merger) upsert(old, in []any) ([]any, bool, error) {
	next := in
	switch m.engine {
	case metadata.MergeFirstRow:
		if old != nil {
			return old, false, nil
		}
	case metadata.MergeVersioned:
		if old != nil && metadata.Compare(old[m.version], in[m.version]) > 0 {
			return old, false, nil
		}
	case metadata.MergeAggregation:
		if old == nil {
			return m.upsertFresh(old, in)
		}
		// Each column (of a partial update, each target column) combines
		// with the stored one; the key columns are the same.
		next = slices.Clone(old)
		cols := m.info.Schema.Columns
		for c := range cols {
			if m.aggs[c] == "" || m.target != nil && !slices.Contains(m.target, c) {
				continue
			}
			v, err := m.aggs[c].Merge(cols[c].Type, old[c], in[c], m.delims[c])
			if err != nil {
				return nil, false, fmt.Errorf("column %s (%s): %w", cols[c].Name, m.aggs[c], err)
			}
			next[c] = v
		}
	default:
		return m.upsertFresh(old, in)
	}
	if old != nil && rowsEqual(old, next) {
		return old, false, nil
	}
	return next, true, nil
}

// upsertFresh is the default engine's upsert, and any engine's of a new
// key: the incoming row, or for a partial update the stored row (a new
// key: the defaults) with the target columns replaced.
func (m *merger) upsertFresh(old, in []any) ([]any, bool, error) {
	next := in
	if m.target != nil {
		next = make([]any, len(in))
		switch {
		case old != nil:
			copy(next, old)
		case len(m.required) > 0:
			c := m.info.Schema.Columns[m.required[0]]
			return nil, false, fmt.Errorf("%w: column %s of table %s is NOT NULL and has no default, and the INSERT leaves it out of a new key: list it, or give the column a DEFAULT", metadata.ErrConstraint, c.Name, m.info.Path)
		case m.defaults != nil:
			copy(next, m.defaults)
		}
		for _, c := range m.target {
			next[c] = in[c]
		}
	}
	if old != nil && rowsEqual(old, next) {
		return old, false, nil
	}
	return next, true, nil
}

// deletes reports whether deletes apply (table.delete.behavior allow, the
// default engine's default); first_row and versioned ignore them, as the
// others do with 'ignore'.
func (m *merger) deletes() bool {
	b := m.info.Config.DeleteBehavior
	return b == metadata.DeleteAllow || b == "" && m.engine == metadata.MergeLastRow
}

// refusesDeletes is the error of a delete of a table whose
// table.delete.behavior is disable; nil otherwise.
func (m *merger) refusesDeletes() error {
	if m.info.Config.DeleteBehavior == metadata.DeleteDisable {
		return fmt.Errorf("%w: Delete operations are disabled for this table. The table.delete.behavior is set to 'disable'.", metadata.ErrUnsupported)
	}
	return nil
}

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

// kvGet reads a key's committed row from Pebble; nil when absent.
func (e *Engine) kvGet(entry *tableEntry, key []byte) ([]any, error) {
	return e.kvGetColumns(entry, key, nil)
}

// kvGetColumns is kvGet decoding only the columns need marks (nil: all).
func (e *Engine) kvGetColumns(entry *tableEntry, key []byte, need []bool) ([]any, error) {
	v, closer, err := e.kv.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
	}
	defer closer.Close()
	row, err := decodeRowColumns(v, &entry.Info, entry.types, need)
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
	if len(keyRow) != len(cols) && !info.HadWidth(len(keyRow)) {
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
				if errors.Is(err, metadata.ErrInvalidValue) {
					// A value that cannot name a partition ('a b'):
					// writes refuse it, so no row holds it.
					return nil, false, nil
				}
				return nil, false, fmt.Errorf("lookup in %s: partition key %s: %w", path, cols[c].Name, err)
			}
		}
		name := metadata.PartitionName(pv)
		p, ok := entry.partitionByName(name)
		if !ok {
			if lakeMayHold(entry, name) {
				return nil, false, fmt.Errorf("lookup in %s: %w", path, ErrLookupInLake)
			}
			return nil, false, nil
		}
		tb.PartitionID = p.ID
	}
	bvals := make([]any, len(entry.bucketKey))
	for k, c := range entry.bucketKey {
		bvals[k] = vals[c]
	}
	bkey, err := metadata.EncodeKey(entry.bucketTypes, bvals)
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
	key, err := entry.keyCodec().key(tb, vals)
	if err != nil {
		return nil, false, fmt.Errorf("lookup in %s: %w", path, err)
	}
	row, err = e.kvGet(entry, key)
	if err == nil && row == nil && lakeShadows(entry, tb) {
		return nil, false, fmt.Errorf("lookup in %s: %w", path, ErrLookupInLake)
	}
	if err != nil || row == nil {
		return nil, false, err
	}
	return row, true, nil
}
