package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// IndexKeyLookup is a lookup by the whole value of one UNIQUE secondary
// index of a primary-key table, prepared once, as KeyLookup is by the
// primary key: a prepared statement keeps one, and each execution reads
// the value's slot and its row (two Gets, see kvIndexTag) with no other
// work than the key's. It is immutable and safe for concurrent use.
type IndexKeyLookup struct {
	path     metadata.TablePath
	tableID  int64
	schemaID int32
	indexID  int32
	name     string
	columns  []string // the index's columns, in index order
	need     []bool   // the columns the caller reads; nil: all
}

// NewIndexKeyLookup prepares lookups by the UNIQUE index named index of
// the table info describes (ErrNotFound when it has none of that name,
// ErrUnsupported when the index is not UNIQUE). columns, when not nil, are
// the only columns the caller reads of the rows found (the index's own
// columns are always read: the lookup checks them).
func NewIndexKeyLookup(info *metadata.TableInfo, index string, columns []int) (*IndexKeyLookup, error) {
	for _, def := range info.Indexes {
		if !strings.EqualFold(def.Name, index) {
			continue
		}
		if !def.Unique || !info.HasPrimaryKey() {
			return nil, fmt.Errorf("%w: index %s of %s is not a UNIQUE index of a primary-key table", metadata.ErrUnsupported, def.Name, info.Path)
		}
		l := &IndexKeyLookup{path: info.Path, tableID: info.TableID, schemaID: info.SchemaID, indexID: def.ID, name: def.Name, columns: slices.Clone(def.Columns)}
		if columns != nil {
			cols := info.Schema.Columns
			l.need = make([]bool, len(cols))
			for _, c := range columns {
				if c < 0 || c >= len(cols) {
					return nil, fmt.Errorf("%w: lookup in %s: column index %d out of range [0, %d)", metadata.ErrInvalidValue, info.Path, c, len(cols))
				}
				l.need[c] = true
			}
			for _, c := range info.IndexColumns(def) {
				l.need[c] = true
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w: index %s of %s", metadata.ErrNotFound, index, info.Path)
}

// Path is the table the lookup reads.
func (l *IndexKeyLookup) Path() metadata.TablePath { return l.path }

// LookupIndexKey returns the live row (full schema, canonical values; the
// columns the lookup does not read may be NULL) holding vals, the values of the
// index's columns in index order, or found=false; a NULL value finds
// nothing. It reads the KV store, which holds only committed statements.
// ErrTableChanged when the table or the index is not the one l was
// prepared for; ErrLookupInLake when dropped partitions the lake still
// holds may hold the row (a scan answers then).
func (e *Engine) LookupIndexKey(ctx context.Context, l *IndexKeyLookup, vals []any) (row []any, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	cat, err := e.readLock()
	if err != nil {
		return nil, false, err
	}
	defer e.mu.RUnlock()
	return e.lookupIndexKey(cat, e.kv, nil, l, vals, e.brokenBucket)
}

// LookupIndexKey is Engine.LookupIndexKey in the view: the row as it was
// when the view was taken.
func (v *ReadView) LookupIndexKey(ctx context.Context, l *IndexKeyLookup, vals []any) (row []any, found bool, err error) {
	err = v.reading(ctx, l.path, func(cat *catalog, src pebble.Reader) error {
		row, found, err = v.e.lookupIndexKey(cat, src, v.broken, l, vals, func(tb metadata.TableBucket) error { return v.broken[tb] })
		return err
	})
	return row, found, err
}

// lookupIndexKey reads vals through their slot, and when the slot does
// not answer, through the index's entries as indexLookup does. broken is
// the failed buckets' errors for indexLookup (nil: the engine's);
// brokenOf that of the bucket of the row the slot names.
func (e *Engine) lookupIndexKey(cat *catalog, src pebble.Reader, broken map[metadata.TableBucket]error, l *IndexKeyLookup, vals []any, brokenOf func(metadata.TableBucket) error) (row []any, found bool, err error) {
	entry, err := cat.table(l.path)
	if err != nil && !errors.Is(err, metadata.ErrNotFound) {
		return nil, false, err
	}
	var ix *tableIndex
	if err == nil && entry.Info.TableID == l.tableID && entry.Info.SchemaID == l.schemaID {
		for _, x := range entry.indexes {
			if x.def.ID == l.indexID && x.def.Unique && slices.Equal(x.def.Columns, l.columns) {
				ix = x
			}
		}
	}
	if ix == nil || len(vals) != len(ix.cols) {
		return nil, false, fmt.Errorf("lookup in %s: %w", l.path, ErrTableChanged)
	}
	if entry.Info.Config.DatalakeEnabled && len(entry.LakePartitions) > 0 {
		return nil, false, fmt.Errorf("lookup in %s: %w", l.path, ErrLookupInLake)
	}
	key := make([]any, len(vals))
	for j, v := range vals {
		if v == nil {
			return nil, false, nil
		}
		if key[j], err = metadata.CoerceValue(ix.types[j], v); err != nil {
			return nil, false, fmt.Errorf("lookup in %s: index %s, column %s, value %s: %w", l.path, ix.def.Name, ix.def.Columns[j], showValue(v), err)
		}
	}
	row, rowKey, ok, err := slotLookup(src, entry, ix, key, l.need)
	if err != nil {
		return nil, false, err
	}
	if ok {
		if len(rowKey) > bucketIDSize {
			tb, _ := parseBucketID(rowKey[1 : 1+bucketIDSize])
			if err := brokenOf(tb); err != nil {
				return nil, false, err
			}
		}
		return row, true, nil
	}
	rows, err := e.indexLookup(cat, src, broken, l.path, ix.def.Name, [][]any{key})
	if err != nil || len(rows) == 0 {
		return nil, false, err
	}
	if len(rows) > 1 {
		return nil, false, fmt.Errorf("%w: lookup in %s: %d rows hold one value of UNIQUE index %s", metadata.ErrCorrupt, l.path, len(rows), ix.def.Name)
	}
	return rows[0], true, nil
}
