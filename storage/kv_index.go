package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// Secondary indexes. Each index of a primary-key table owns one key range
// of the Pebble store under the table, not under a bucket: a row's bucket
// is chosen by its bucket key, so rows holding one index value may sit in
// any bucket, and a table-level range lets one prefix read find them all
// (which is what a UNIQUE check and an index lookup need):
//
//	'x' <table id> <index id> <index values> <row key>   value: <row key>
//
// The index values are, per column, 0x00 for NULL or 0x01 and the column's
// metadata.EncodeOrderedKey field; every field is self-delimiting, so the
// entries of one value (or of values of the leading columns) are exactly
// those under its prefix. The row key is the row's full Pebble key ('d',
// bucket id, physical key); putting it in the key keeps two rows holding
// one value apart, and in the value lets a prefix read find it without
// parsing the rest.
//
// A UNIQUE index also keeps a slot for each value with no NULL: the key
// 'x' <table id> <index id> <index values> alone. Its value is the row
// holding the value: 'r', the length of the row key as a uvarint, the row
// key and the row's stored value, as under the row key (a row of more
// than maxSlotRow bytes leaves out its value: the slot is then the row key
// alone, which begins with kvDataTag, and a reader reads the row with a
// second Get, as slots written before slots carried rows did). A lookup of
// a whole value is then one Get, which the bloom filters serve. No entry's
// key is a slot's: the index values are self-delimiting, so the key of a
// value's slot is no other value's prefix.
//
// A slot that carries its row must be exact: when it exists, the row it
// names holds the value and the slot's copy is that row's value. Every
// write of a row therefore knows the row it replaces and rewrites the
// slots of its values, whether they changed or not:
//   - a commit reads every key it writes (commitBucket.orig); it removes
//     the slots of the values its rows give up before it sets those of
//     the values they hold, so a value moving from one row to another in
//     one commit keeps its slot;
//   - Open's replay of the changelog reads each row's stored value before
//     it applies a change (an indexed batch), so it needs no -U image; it
//     replays one bucket after another, which may remove a slot another
//     bucket's row then needs (a value that moved between buckets), never
//     leave one naming a row without the value;
//   - a bucket whose state is reset (restored from a KV snapshot, or
//     rebuilt because the log lost what it held) first removes the
//     entries and slots of its rows;
//   - a dropped partition's rows go by range, their entries and slots
//     not: a reader does not use a slot naming a bucket of a partition the
//     catalog no longer has.
//
// A missing slot only sends its readers to the entries. The catalog of a
// store with a UNIQUE index says catalogSlotRowsVersion, so that a release
// whose slots were hints (it did not rewrite a slot when only the row's
// other columns changed) refuses the store instead of leaving slots that
// carry stale rows.
//
// An entry is written and removed in the same Pebble batch as its row, by
// commits and by Open's replay of the changelog. A reader still checks the
// row an entry names holds the entry's value before using it: state an
// interrupted rebuild or a dropped partition leaves behind (rows deleted
// by range, their entries not) then never answers a read nor fails a
// UNIQUE check.
const kvIndexTag = 'x'

// kvSlotRowTag begins the value of a slot that carries its row, and
// maxSlotRow bounds the stored values slots carry: every UNIQUE index
// keeps a copy of each row up to that size.
const (
	kvSlotRowTag = 'r'
	maxSlotRow   = 1 << 10
)

// kvIndexPrefix is the prefix of one index's entries.
func kvIndexPrefix(tableID int64, indexID int32) []byte {
	b := binary.BigEndian.AppendUint64(append(make([]byte, 0, 32), kvIndexTag), uint64(tableID))
	return binary.BigEndian.AppendUint32(b, uint32(indexID))
}

// tableIndex is one secondary index of a table, ready to encode entries.
// It is immutable (a table entry's copies share it).
type tableIndex struct {
	def    metadata.DeclaredIndex
	cols   []int
	types  []metadata.DataType
	prefix []byte
}

// tableIndexes returns the secondary indexes of a table; nil when it has
// none.
func tableIndexes(info *metadata.TableInfo) []*tableIndex {
	if len(info.Indexes) == 0 || !info.HasPrimaryKey() {
		return nil
	}
	out := make([]*tableIndex, len(info.Indexes))
	for i, def := range info.Indexes {
		ix := &tableIndex{def: def, cols: info.IndexColumns(def), prefix: kvIndexPrefix(info.TableID, def.ID)}
		for _, c := range ix.cols {
			ix.types = append(ix.types, info.Schema.Columns[c].Type)
		}
		out[i] = ix
	}
	return out
}

// hasUnique reports whether one of the indexes is UNIQUE.
func hasUnique(ixs []*tableIndex) bool {
	for _, ix := range ixs {
		if ix.def.Unique {
			return true
		}
	}
	return false
}

// appendValues appends the index's encoding of vals (one value per index
// column, or fewer: the leading columns) to dst. null reports whether a
// value is NULL.
func (ix *tableIndex) appendValues(dst []byte, vals []any) (out []byte, null bool, err error) {
	for j, v := range vals {
		if v == nil {
			dst, null = append(dst, 0), true
			continue
		}
		dst = append(dst, 1)
		if dst, err = metadata.AppendOrderedKey(dst, ix.types[j:j+1], vals[j:j+1]); err != nil {
			return nil, false, fmt.Errorf("index %s: column %s: %w", ix.def.Name, ix.def.Columns[j], err)
		}
	}
	return dst, null, nil
}

// valuesOf returns the index's columns of a full-schema row.
func (ix *tableIndex) valuesOf(row []any) []any {
	vals := make([]any, len(ix.cols))
	for j, c := range ix.cols {
		vals[j] = row[c]
	}
	return vals
}

// entryPrefix returns the prefix of the row's entries: the index's prefix
// and the row's index values.
func (ix *tableIndex) entryPrefix(row []any) (key []byte, null bool, err error) {
	return ix.appendValues(bytes.Clone(ix.prefix), ix.valuesOf(row))
}

// slot returns the key of the slot of vals (all of the index's values);
// ok is false when the index is not UNIQUE or a value is NULL, which have
// no slot.
func (ix *tableIndex) slot(vals []any) (key []byte, ok bool, err error) {
	if !ix.def.Unique || len(vals) != len(ix.cols) {
		return nil, false, nil
	}
	// Room for the values of a typical index: one allocation, not three.
	k := append(make([]byte, 0, len(ix.prefix)+64), ix.prefix...)
	k, null, err := ix.appendValues(k, vals)
	if err != nil || null {
		return nil, false, err
	}
	return k, true, nil
}

// entry returns the index entry's key of a row stored under rowKey.
func (ix *tableIndex) entry(rowKey []byte, row []any) ([]byte, error) {
	k, _, err := ix.entryPrefix(row)
	if err != nil {
		return nil, err
	}
	return append(k, rowKey...), nil
}

// sameValues reports whether two full-schema rows hold the same index
// values (NULL equal to NULL: the same entry).
func (ix *tableIndex) sameValues(a, b []any) bool {
	for _, c := range ix.cols {
		if (a[c] == nil) != (b[c] == nil) || (a[c] != nil && metadata.Compare(a[c], b[c]) != 0) {
			return false
		}
	}
	return true
}

// duplicateErr is MySQL's message for a UNIQUE index refusing a value:
// Duplicate entry 'v1-v2' for key 'name'.
func (ix *tableIndex) duplicateErr(row []any) error {
	parts := make([]string, len(ix.cols))
	for j, c := range ix.cols {
		parts[j] = metadata.FormatValue(ix.types[j], row[c])
	}
	return fmt.Errorf("%w: Duplicate entry '%s' for key '%s'", metadata.ErrConstraint, strings.Join(parts, "-"), ix.def.Name)
}

// writeIndexEntries adds to b the index changes of one row key going from
// old to next (nil: no row), next stored as value: the entries and slots
// of old's values are removed and those of next's set, for each index
// whose values differ, and the slots of next's values are set again
// whatever changed (they carry the row). A commit that moves values
// between rows calls removeIndexEntries for all of its rows before
// addIndexEntries, which keeps the slots.
func writeIndexEntries(b *pebble.Batch, ixs []*tableIndex, rowKey []byte, old, next []any, value []byte) error {
	if err := removeIndexEntries(b, ixs, rowKey, old, next); err != nil {
		return err
	}
	return addIndexEntries(b, ixs, rowKey, old, next, value)
}

// removeIndexEntries is the first half of writeIndexEntries: the entries
// and slots of old's values go (none when old is nil).
func removeIndexEntries(b *pebble.Batch, ixs []*tableIndex, rowKey []byte, old, next []any) error {
	if old == nil {
		return nil
	}
	for _, ix := range ixs {
		if next != nil && ix.sameValues(old, next) {
			continue
		}
		k, err := ix.entry(rowKey, old)
		if err != nil {
			return err
		}
		if err := b.Delete(k, nil); err != nil {
			return err
		}
		if sk, ok, err := ix.slot(ix.valuesOf(old)); err != nil {
			return err
		} else if ok {
			if err := b.Delete(sk, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// addIndexEntries is the second half of writeIndexEntries: the entries
// of next's values are set where they changed, and the slots of next's
// values always, to next's stored value (none when next is nil).
func addIndexEntries(b *pebble.Batch, ixs []*tableIndex, rowKey []byte, old, next []any, value []byte) error {
	if next == nil {
		return nil
	}
	var sv []byte
	for _, ix := range ixs {
		same := old != nil && ix.sameValues(old, next)
		if !same {
			k, err := ix.entry(rowKey, next)
			if err != nil {
				return err
			}
			if err := b.Set(k, rowKey, nil); err != nil {
				return err
			}
		}
		if sk, ok, err := ix.slot(ix.valuesOf(next)); err != nil {
			return err
		} else if ok {
			if sv == nil {
				sv = slotValue(rowKey, value)
			}
			if err := b.Set(sk, sv, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// slotValue is the value of a slot of the row stored as value under
// rowKey: the row itself ('r', the row key's length as a uvarint, the
// row key, the value) when it is at most maxSlotRow bytes, else the row
// key alone (which begins with kvDataTag).
func slotValue(rowKey, value []byte) []byte {
	if value == nil || len(value) > maxSlotRow {
		return rowKey
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen32+len(rowKey)+len(value))
	out = binary.AppendUvarint(append(out, kvSlotRowTag), uint64(len(rowKey)))
	return append(append(out, rowKey...), value...)
}

// parseSlotValue splits a slot's value into the row key it names and,
// when the slot carries it, the row's stored value (nil otherwise).
func parseSlotValue(v []byte) (rowKey, value []byte, err error) {
	if len(v) == 0 || v[0] != kvSlotRowTag {
		return v, nil, nil
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || n > uint64(len(v)-1-w) {
		return nil, nil, fmt.Errorf("%w: an index slot of %d bytes names a row key of %d", metadata.ErrCorrupt, len(v), n)
	}
	rest := v[1+w:]
	return rest[:n], rest[n:], nil
}

// indexRowKeys calls visit with the row key of each entry under prefix
// (an entryPrefix, or the index prefix and the values of its leading
// columns) as src holds them, until visit returns false. The row may be
// gone or hold other values (see kvIndexTag): visit checks.
func indexRowKeys(src pebble.Reader, prefix []byte, visit func(rowKey []byte) (bool, error)) error {
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		more, err := visit(bytes.Clone(it.Value()))
		if err != nil {
			it.Close()
			return err
		}
		if !more {
			break
		}
	}
	return it.Close()
}

// kvReadRow reads and decodes the row under key from src; nil when absent.
func kvReadRow(src pebble.Reader, entry *tableEntry, key []byte) ([]any, error) {
	v, closer, err := src.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
	}
	defer closer.Close()
	row, err := decodeRowValue(v, &entry.Info, entry.types)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", entry.Info.Path, err)
	}
	return row, nil
}

// checkUnique refuses (ErrConstraint) the rows a commit leaves under the
// keys it touched when two of them, or one of them and a stored row the
// commit does not touch, hold one non-NULL value of a UNIQUE index. state
// maps each touched row key of the table to its row after the commit
// (nil: deleted); orig to its row before it, where read. The caller holds
// the table's unique lock, so no other commit stores a value between this
// check and the write.
func checkUnique(src pebble.Reader, entry *tableEntry, ixs []*tableIndex, state, orig map[string][]any) error {
	for _, ix := range ixs {
		if !ix.def.Unique {
			continue
		}
		seen := map[string]string{}
		for key, row := range state {
			if row == nil {
				continue
			}
			p, null, err := ix.entryPrefix(row)
			if err != nil {
				return err
			}
			if null {
				continue // NULLs never collide, as in MySQL
			}
			if other, ok := seen[string(p)]; ok && other != key {
				return ix.duplicateErr(row)
			}
			seen[string(p)] = key
			if o := orig[key]; o != nil && ix.sameValues(o, row) {
				// Held before the commit: no stored row but this one has it.
				continue
			}
			var dup bool
			err = indexRowKeys(src, p, func(rowKey []byte) (bool, error) {
				if _, touched := state[string(rowKey)]; touched {
					return true, nil // its row after the commit is in state
				}
				stored, err := kvReadRow(src, entry, rowKey)
				if err != nil {
					return false, err
				}
				dup = stored != nil && ix.sameValues(stored, row)
				return !dup, nil
			})
			if err != nil {
				return err
			}
			if dup {
				return ix.duplicateErr(row)
			}
		}
	}
	return nil
}

// CreateIndex adds a secondary index to a primary-key table (see
// metadata.TableInfo.CheckIndex) and builds it from the table's rows,
// which no commit changes meanwhile. A UNIQUE index two stored rows
// violate is refused with ErrConstraint, and nothing changes. With
// ifNotExists an index of that name already there is no error.
func (e *Engine) CreateIndex(ctx context.Context, path metadata.TablePath, ix metadata.DeclaredIndex, ifNotExists bool) (metadata.TableInfo, error) {
	if err := e.writeLock(); err != nil {
		return metadata.TableInfo{}, err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		return metadata.TableInfo{}, err
	}
	info, err := t.Info.WithIndex(ix)
	if err != nil {
		if ifNotExists && errors.Is(err, metadata.ErrExists) {
			return t.Info, nil
		}
		return metadata.TableInfo{}, err
	}
	if err := e.buildIndex(ctx, t, &info, info.Indexes[len(info.Indexes)-1]); err != nil {
		return metadata.TableInfo{}, err
	}
	next := e.mu.cat.clone()
	entry := next.byID[info.TableID]
	entry.Info = info
	if err := entry.prepare(); err != nil {
		return metadata.TableInfo{}, err
	}
	if err := e.commitCatalogLocked(next); err != nil {
		return metadata.TableInfo{}, err
	}
	return info, nil
}

// DropIndex removes a secondary index and its entries. With ifExists a
// missing index is no error.
func (e *Engine) DropIndex(ctx context.Context, path metadata.TablePath, name string, ifExists bool) (metadata.TableInfo, error) {
	if err := e.writeLock(); err != nil {
		return metadata.TableInfo{}, err
	}
	defer e.mu.Unlock()
	t, err := e.mu.cat.table(path)
	if err != nil {
		return metadata.TableInfo{}, err
	}
	info, dropped, err := t.Info.WithoutIndex(name)
	if err != nil {
		if ifExists && errors.Is(err, metadata.ErrNotFound) {
			return t.Info, nil
		}
		return metadata.TableInfo{}, err
	}
	next := e.mu.cat.clone()
	entry := next.byID[info.TableID]
	entry.Info = info
	if err := entry.prepare(); err != nil {
		return metadata.TableInfo{}, err
	}
	if err := e.commitCatalogLocked(next); err != nil {
		return metadata.TableInfo{}, err
	}
	// Entries left by a failure here are removed when the index's id is
	// next given out (buildIndex).
	return info, e.clearIndex(info.TableID, dropped.ID)
}

// clearIndex removes every entry of one index.
func (e *Engine) clearIndex(tableID int64, indexID int32) error {
	b := e.kv.NewBatch()
	defer b.Close()
	p := kvIndexPrefix(tableID, indexID)
	if err := b.DeleteRange(p, prefixEnd(p), nil); err != nil {
		return fmt.Errorf("remove index entries: %w", err)
	}
	if err := e.commitKv(b); err != nil {
		return fmt.Errorf("remove index entries: %w", err)
	}
	return nil
}

// buildIndex writes the entries of index def (of info, t's next version)
// for every row of t's KV state. The caller holds mu exclusively, so no
// commit runs meanwhile.
func (e *Engine) buildIndex(ctx context.Context, t *tableEntry, info *metadata.TableInfo, def metadata.DeclaredIndex) error {
	tid := info.TableID
	e.kvMu.Lock()
	for tb, kb := range e.kvBuckets {
		if tb.TableID == tid && kb.broken != nil {
			e.kvMu.Unlock()
			return fmt.Errorf("create index %s on %s: %w", def.Name, info.Path, kb.broken)
		}
	}
	e.kvMu.Unlock()
	if err := e.clearIndex(tid, def.ID); err != nil {
		return err
	}
	var ix *tableIndex
	for _, x := range tableIndexes(info) {
		if x.def.ID == def.ID {
			ix = x
		}
	}
	start, end := tableRange(kvDataTag, tid, nil)
	it, err := e.kv.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return fmt.Errorf("create index %s: %w", def.Name, err)
	}
	defer it.Close()
	batch := e.kv.NewBatch()
	defer func() { batch.Close() }()
	seen := map[string]bool{}
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := decodeRowValue(it.Value(), &t.Info, t.types)
		if err != nil {
			return fmt.Errorf("create index %s on %s: %w", def.Name, info.Path, err)
		}
		p, null, err := ix.entryPrefix(row)
		if err != nil {
			return err
		}
		if def.Unique && !null {
			if seen[string(p)] {
				return fmt.Errorf("create index %s on %s: %w", def.Name, info.Path, ix.duplicateErr(row))
			}
			seen[string(p)] = true
		}
		rowKey := bytes.Clone(it.Key())
		if err := addIndexEntries(batch, []*tableIndex{ix}, rowKey, nil, row, it.Value()); err != nil {
			return err
		}
		if batch.Len() > 4<<20 {
			if err := e.commitKv(batch); err != nil {
				return fmt.Errorf("create index %s: %w", def.Name, err)
			}
			batch.Close()
			batch = e.kv.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("create index %s: %w", def.Name, err)
	}
	if batch.Empty() {
		return nil
	}
	if err := e.commitKv(batch); err != nil {
		return fmt.Errorf("create index %s: %w", def.Name, err)
	}
	return nil
}

// IndexLookup returns the live rows (full schema, canonical values) of a
// primary-key table whose leading columns of the named secondary index
// hold one of keys (each the values of the first len(key) index columns,
// in index order; a key with a NULL, or more values than the index has
// columns, finds nothing), each row once. It reads the KV store, which
// holds only committed statements. ErrLookupInLake when dropped
// partitions the lake still holds may hold rows (a scan answers then).
func (e *Engine) IndexLookup(ctx context.Context, path metadata.TablePath, index string, keys [][]any) ([][]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	return e.indexLookup(cat, e.kv, nil, path, index, keys)
}

// IndexLookup is Engine.IndexLookup in the view: the rows as they were
// when the view was taken.
func (v *ReadView) IndexLookup(ctx context.Context, path metadata.TablePath, index string, keys [][]any) (rows [][]any, err error) {
	err = v.reading(ctx, path, func(cat *catalog, src pebble.Reader) error {
		rows, err = v.e.indexLookup(cat, src, v.broken, path, index, keys)
		return err
	})
	return rows, err
}

func (e *Engine) indexLookup(cat *catalog, src pebble.Reader, broken map[metadata.TableBucket]error, path metadata.TablePath, index string, keys [][]any) ([][]any, error) {
	entry, err := cat.table(path)
	if err != nil {
		return nil, err
	}
	info := &entry.Info
	var ix *tableIndex
	for _, x := range entry.indexes {
		if strings.EqualFold(x.def.Name, index) {
			ix = x
		}
	}
	if ix == nil {
		return nil, fmt.Errorf("%w: index %s of %s", metadata.ErrNotFound, index, path)
	}
	if info.Config.DatalakeEnabled && len(entry.LakePartitions) > 0 {
		return nil, fmt.Errorf("lookup in %s: %w", path, ErrLookupInLake)
	}
	if broken == nil {
		e.kvMu.Lock()
		for tb, kb := range e.kvBuckets {
			if tb.TableID == info.TableID && kb.broken != nil {
				broken = map[metadata.TableBucket]error{tb: kb.broken}
			}
		}
		e.kvMu.Unlock()
	}
	var (
		out  [][]any
		seen = map[string]bool{}
	)
keys:
	for _, key := range keys {
		if len(key) == 0 || len(key) > len(ix.cols) {
			continue
		}
		vals := make([]any, len(key))
		for j, v := range key {
			if v == nil {
				continue keys
			}
			if vals[j], err = metadata.CoerceValue(ix.types[j], v); err != nil {
				return nil, fmt.Errorf("lookup in %s: index %s, column %s, value %s: %w", path, ix.def.Name, ix.def.Columns[j], showValue(v), err)
			}
		}
		if row, rowKey, ok, err := slotLookup(src, entry, ix, vals, nil); err != nil {
			return nil, err
		} else if ok {
			if len(broken) > 0 {
				tb, _ := parseBucketID(rowKey[1:kvPrefixSize])
				if err := broken[tb]; err != nil {
					return nil, err
				}
			}
			if !seen[string(rowKey)] {
				seen[string(rowKey)] = true
				out = append(out, row)
			}
			continue
		}
		p, _, err := ix.appendValues(bytes.Clone(ix.prefix), vals)
		if err != nil {
			return nil, err
		}
		err = indexRowKeys(src, p, func(rowKey []byte) (bool, error) {
			if seen[string(rowKey)] {
				return true, nil
			}
			if len(broken) > 0 && len(rowKey) > bucketIDSize {
				tb, _ := parseBucketID(rowKey[1 : 1+bucketIDSize])
				if err := broken[tb]; err != nil {
					return false, err
				}
			}
			row, err := kvReadRow(src, entry, rowKey)
			if err != nil || row == nil {
				return err == nil, err
			}
			for j, c := range ix.cols[:len(vals)] {
				if row[c] == nil || metadata.Compare(row[c], vals[j]) != 0 {
					return true, nil // an entry its row no longer backs
				}
			}
			seen[string(rowKey)] = true
			out = append(out, row)
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// slotLookup reads the row holding vals (all of a UNIQUE index's values,
// none NULL) through the value's slot: from the slot itself when it
// carries the row, else from the row key it names. ok is false when the
// slot is missing, names a row of a dropped partition, or names a row
// that does not hold vals, and the caller reads the entries (see
// kvIndexTag). need, when not nil, are the columns to decode (the index's
// among them).
func slotLookup(src pebble.Reader, entry *tableEntry, ix *tableIndex, vals []any, need []bool) (row []any, rowKey []byte, ok bool, err error) {
	sk, ok, err := ix.slot(vals)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	v, closer, err := src.Get(sk)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("read index %s of %s: KV store: %w", ix.def.Name, entry.Info.Path, err)
	}
	rowKey, value, err := parseSlotValue(v)
	if err != nil {
		closer.Close()
		return nil, nil, false, fmt.Errorf("read index %s of %s: %w", ix.def.Name, entry.Info.Path, err)
	}
	rowKey = bytes.Clone(rowKey)
	var tb metadata.TableBucket
	if len(rowKey) >= kvPrefixSize && rowKey[0] == kvDataTag {
		tb, _ = parseBucketID(rowKey[1:kvPrefixSize])
	}
	if tb.TableID != entry.Info.TableID {
		closer.Close()
		return nil, nil, false, fmt.Errorf("%w: index %s of %s: a slot names row key %x", metadata.ErrCorrupt, ix.def.Name, entry.Info.Path, rowKey)
	}
	if tb.PartitionID != metadata.NonPartitioned {
		if _, live := entry.partitionByID(tb.PartitionID); !live {
			closer.Close()
			return nil, nil, false, nil
		}
	}
	if value == nil {
		closer.Close()
		if v, closer, err = src.Get(rowKey); errors.Is(err, pebble.ErrNotFound) {
			return nil, nil, false, nil
		} else if err != nil {
			return nil, nil, false, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
		}
		value = v
	}
	row, err = decodeRowColumns(value, &entry.Info, entry.types, need)
	closer.Close()
	if err != nil {
		return nil, nil, false, fmt.Errorf("read %s: %w", entry.Info.Path, err)
	}
	for j, c := range ix.cols {
		if row[c] == nil || metadata.Compare(row[c], vals[j]) != 0 {
			return nil, nil, false, nil
		}
	}
	return row, rowKey, true, nil
}
