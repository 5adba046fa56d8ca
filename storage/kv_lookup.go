package storage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// ErrTableChanged is returned by a lookup prepared for a table that has
// since been dropped, created again or given another schema: the caller
// prepares it again from the current catalog.
var ErrTableChanged = errors.New("the table changed since the lookup was prepared")

// ErrLookupInLake is returned by a lookup whose key names a partition the
// engine does not hold while the table's lake may: a partition dropped
// (or expired) after it was tiered stays readable through the lake, so
// "no row" would contradict a scan of it. The caller answers the query
// with a scan, which reads the lake.
var ErrLookupInLake = errors.New("the key's partition is only in the lake")

// lakeMayHold reports whether the lake may hold rows of the partition
// named name that the engine does not (it was dropped after it was
// tiered): a lookup of a key there that finds no live row, or no live
// partition, must be answered from the lake (ErrLookupInLake). Only a
// scan can tell such a row from one a partition created again deleted.
func lakeMayHold(entry *tableEntry, name string) bool {
	return entry.Info.Config.DatalakeEnabled && slices.Contains(entry.LakePartitions, name)
}

// lakeShadows is lakeMayHold for the live partition of tb.
func lakeShadows(entry *tableEntry, tb metadata.TableBucket) bool {
	if tb.PartitionID == metadata.NonPartitioned || len(entry.LakePartitions) == 0 {
		return false
	}
	p, ok := entry.partitionByID(tb.PartitionID)
	return ok && lakeMayHold(entry, p.Name)
}

// KeyLookup is a point lookup into one primary-key table, prepared once
// from the table's description: where each key column sits, which of them
// route to the partition and bucket, and their types. A prepared statement
// that looks keys up keeps one, so that each execution does only the work
// that depends on the key. It is immutable and safe for concurrent use.
type KeyLookup struct {
	path       metadata.TablePath
	tableID    int64
	schemaID   int32
	numBuckets int
	columns    int
	pk         []int // every primary-key column
	part       []int // partition keys
	bucket     []int // bucket keys
	bucketT    []metadata.DataType
	phys       []int // physical primary key: the Pebble key's columns
	physTypes  []metadata.DataType
	need       []bool // the columns the caller reads; nil: all
}

// NewKeyLookup prepares lookups into the table info describes; it must be
// a primary-key table (ErrUnsupported otherwise). columns, when not nil,
// are the only columns the caller reads of the rows found: the others are
// left NULL, which saves decoding them.
func NewKeyLookup(info *metadata.TableInfo, columns []int) (*KeyLookup, error) {
	if !info.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: table %s has no primary key: lookups need a primary-key table", metadata.ErrUnsupported, info.Path)
	}
	cols := info.Schema.Columns
	types := func(idx []int) []metadata.DataType {
		out := make([]metadata.DataType, len(idx))
		for i, c := range idx {
			out[i] = cols[c].Type
		}
		return out
	}
	l := &KeyLookup{
		path: info.Path, tableID: info.TableID, schemaID: info.SchemaID,
		numBuckets: info.NumBuckets, columns: len(cols),
		pk: info.PrimaryKeyIndexes(), part: info.PartitionKeyIndexes(),
		bucket: info.BucketKeyIndexes(), phys: info.PhysicalKeyIndexes(),
	}
	l.bucketT, l.physTypes = types(l.bucket), types(l.phys)
	if columns != nil {
		l.need = make([]bool, len(cols))
		for _, c := range columns {
			if c < 0 || c >= len(cols) {
				return nil, fmt.Errorf("%w: lookup in %s: column index %d out of range [0, %d)", metadata.ErrInvalidValue, info.Path, c, len(cols))
			}
			l.need[c] = true
		}
	}
	return l, nil
}

// Path is the table the lookup reads.
func (l *KeyLookup) Path() metadata.TablePath { return l.path }

// LookupKey is Lookup through a prepared lookup: the live row of the key
// held in the primary-key columns of keyRow (values of the columns'
// types), or found=false. A NULL key value, or a partition that does not
// exist, finds nothing. When the table is no longer the one l was
// prepared for it fails with ErrTableChanged.
func (e *Engine) LookupKey(ctx context.Context, l *KeyLookup, keyRow []any) (row []any, found bool, err error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, false, err
	}
	defer e.mu.RUnlock()
	entry, err := l.entry(cat)
	if err != nil {
		return nil, false, err
	}
	tb, key, ok, err := l.key(entry, keyRow)
	if err != nil || !ok {
		return nil, false, err
	}
	if err := e.brokenBucket(tb); err != nil {
		return nil, false, err
	}
	row, err = e.kvGetColumns(entry, key, l.need)
	if err == nil && row == nil && lakeShadows(entry, tb) {
		return nil, false, fmt.Errorf("lookup in %s: %w", l.path, ErrLookupInLake)
	}
	if err != nil || row == nil {
		return nil, false, err
	}
	return row, true, nil
}

// LookupKey is Engine.LookupKey in the view: the row as it was when the
// view was taken.
func (v *ReadView) LookupKey(ctx context.Context, l *KeyLookup, keyRow []any) (row []any, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	cat, err := v.e.readLock()
	if err != nil {
		return nil, false, err
	}
	defer v.e.mu.RUnlock()
	entry, err := l.entry(cat)
	if err != nil {
		return nil, false, err
	}
	tb, key, ok, err := l.key(entry, keyRow)
	if err != nil || !ok {
		return nil, false, err
	}
	row, err = v.getColumns(entry, key, l.need)
	if err == nil && row == nil && lakeShadows(entry, tb) {
		return nil, false, fmt.Errorf("lookup in %s: %w", l.path, ErrLookupInLake)
	}
	if err != nil || row == nil {
		return nil, false, err
	}
	return row, true, nil
}

// entry finds the table of l in cat, as long as it is the one l was
// prepared for.
func (l *KeyLookup) entry(cat *catalog) (*tableEntry, error) {
	entry, err := cat.table(l.path)
	if errors.Is(err, metadata.ErrNotFound) || err == nil && (entry.Info.TableID != l.tableID || entry.Info.SchemaID != l.schemaID) {
		return nil, fmt.Errorf("lookup in %s: %w", l.path, ErrTableChanged)
	}
	return entry, err
}

// key returns the bucket and the Pebble key of keyRow's key; ok is false
// when it cannot exist (a NULL key value, a missing partition).
func (l *KeyLookup) key(entry *tableEntry, keyRow []any) (tb metadata.TableBucket, key []byte, ok bool, err error) {
	if len(keyRow) != l.columns {
		return tb, nil, false, fmt.Errorf("%w: lookup key row has %d values, table %s has %d columns", metadata.ErrInvalidValue, len(keyRow), l.path, l.columns)
	}
	for _, c := range l.pk {
		if keyRow[c] == nil {
			return tb, nil, false, nil
		}
	}
	tb = metadata.TableBucket{TableID: l.tableID, PartitionID: metadata.NonPartitioned}
	var buf [4]any // the key values of one kind, without an allocation for short keys
	if len(l.part) > 0 {
		id, found, err := partitionOf(entry, l.part, keyRow)
		if err != nil || !found {
			if err != nil {
				err = fmt.Errorf("lookup in %s: %w", l.path, err)
			}
			return tb, nil, false, err
		}
		tb.PartitionID = id
	}
	bvals := pick(buf[:0], l.bucket, keyRow)
	bkey, err := metadata.EncodeKey(l.bucketT, bvals)
	if err != nil {
		return tb, nil, false, fmt.Errorf("lookup in %s: bucket key: %w", l.path, err)
	}
	tb.Bucket = int32(metadata.BucketOf(bkey, l.numBuckets))
	key, err = metadata.AppendOrderedKey(kvDataPrefix(tb), l.physTypes, pick(buf[:0], l.phys, keyRow))
	if err != nil {
		return tb, nil, false, fmt.Errorf("lookup in %s: %w", l.path, err)
	}
	return tb, key, true, nil
}

// partitionOf finds the live partition whose keys (the columns part of
// the table's) row holds; found is false when there is none, or a value
// is NULL or cannot name a partition ('a b': writes refuse it, so no row
// holds it). ErrLookupInLake when the lake still holds rows of a dropped
// partition of that name.
func partitionOf(entry *tableEntry, part []int, row []any) (id int64, found bool, err error) {
	cols := entry.Info.Schema.Columns
	pv := make([]string, len(part))
	for k, c := range part {
		if row[c] == nil {
			return 0, false, nil
		}
		if pv[k], err = metadata.PartitionValueString(cols[c].Type, row[c]); err != nil {
			if _, cerr := metadata.CoerceValue(cols[c].Type, row[c]); cerr == nil && errors.Is(err, metadata.ErrInvalidValue) {
				return 0, false, nil
			}
			return 0, false, fmt.Errorf("partition key: %w", err)
		}
	}
	name := metadata.PartitionName(pv)
	p, ok := entry.partitionByName(name)
	if !ok {
		if lakeMayHold(entry, name) {
			return 0, false, ErrLookupInLake
		}
		return 0, false, nil
	}
	return p.ID, true, nil
}

// brokenBucket is the error a bucket's KV state failed with on Open, if
// any.
func (e *Engine) brokenBucket(tb metadata.TableBucket) error {
	e.kvMu.Lock()
	kb := e.kvBuckets[tb]
	e.kvMu.Unlock()
	if kb != nil {
		return kb.broken
	}
	return nil
}

// pick appends the values of the columns idx of row to dst.
func pick(dst []any, idx []int, row []any) []any {
	for _, c := range idx {
		dst = append(dst, row[c])
	}
	return dst
}

// LookupKeys is LookupKey of many keys at once: the live rows of the keys
// held in keyRows, as record batches of the table's columns (those the
// lookup does not read are NULL), each row once however often its key is
// given; a NULL key value or a missing partition finds nothing. The rows
// are read from one consistent state of the KV store in the order of
// their Pebble keys, by up to GOMAXPROCS goroutines for a large batch,
// each seeking one iterator forward through its share and building one
// of the batches. The caller releases the batches.
func (e *Engine) LookupKeys(ctx context.Context, l *KeyLookup, keyRows [][]any) ([]arrow.RecordBatch, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	entry, err := l.entry(cat)
	if err != nil {
		return nil, err
	}
	b, err := l.batch(entry, keyRows)
	if err != nil || len(b.keys) == 0 {
		return nil, err
	}
	e.kvMu.Lock()
	for _, tb := range b.buckets {
		if kb := e.kvBuckets[tb]; kb != nil && kb.broken != nil {
			e.kvMu.Unlock()
			return nil, kb.broken
		}
	}
	e.kvMu.Unlock()
	return b.read(ctx, e.kv, entry, l, e.opts.Allocator)
}

// LookupKeys is Engine.LookupKeys in the view: the rows as they were when
// the view was taken.
func (v *ReadView) LookupKeys(ctx context.Context, l *KeyLookup, keyRows [][]any) ([]arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cat, err := v.e.readLock()
	if err != nil {
		return nil, err
	}
	defer v.e.mu.RUnlock()
	entry, err := l.entry(cat)
	if err != nil {
		return nil, err
	}
	b, err := l.batch(entry, keyRows)
	if err != nil || len(b.keys) == 0 {
		return nil, err
	}
	for _, tb := range b.buckets {
		if err := v.broken[tb]; err != nil {
			return nil, err
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.closed || v.mu.ps == nil {
		return nil, fmt.Errorf("read view of %s: %w", entry.Info.Path, metadata.ErrClosed)
	}
	return b.read(ctx, v.mu.ps, entry, l, v.e.opts.Allocator)
}

// keyBatch is the distinct keys of one LookupKeys call that can exist,
// sorted by their Pebble keys (and so grouped by bucket).
type keyBatch struct {
	keys    []batchKey
	buckets []metadata.TableBucket // the distinct buckets of keys, in order
}

// batchKey is one key of a keyBatch: its Pebble key and its bucket, and
// for sorting, the key's bytes after the table id as three big-endian
// words (zero-padded), which order most keys without comparing bytes.
type batchKey struct {
	key        []byte
	tb         metadata.TableBucket
	w0, w1, w2 uint64
}

func compareBatchKeys(x, y batchKey) int {
	if c := cmp.Compare(x.w0, y.w0); c != 0 {
		return c
	}
	if c := cmp.Compare(x.w1, y.w1); c != 0 {
		return c
	}
	if c := cmp.Compare(x.w2, y.w2); c != 0 {
		return c
	}
	return bytes.Compare(x.key, y.key)
}

// word is the big-endian word of b at off, zero-padded past its end.
func word(b []byte, off int) uint64 {
	if off+8 <= len(b) {
		return binary.BigEndian.Uint64(b[off:])
	}
	var w [8]byte
	if off < len(b) {
		copy(w[:], b[off:])
	}
	return binary.BigEndian.Uint64(w[:])
}

// batch encodes the keys of keyRows that can exist, sorts them and drops
// the repeated ones.
func (l *KeyLookup) batch(entry *tableEntry, keyRows [][]any) (keyBatch, error) {
	var b keyBatch
	b.keys = make([]batchKey, 0, len(keyRows))
	const off = 1 + 8 // the tag and the table id, the same in every key
	for _, kr := range keyRows {
		tb, key, ok, err := l.key(entry, kr)
		if err != nil {
			return keyBatch{}, err
		}
		if ok {
			b.keys = append(b.keys, batchKey{key: key, tb: tb, w0: word(key, off), w1: word(key, off+8), w2: word(key, off+16)})
		}
	}
	slices.SortFunc(b.keys, compareBatchKeys)
	b.keys = slices.CompactFunc(b.keys, func(x, y batchKey) bool { return bytes.Equal(x.key, y.key) })
	for i, k := range b.keys {
		if i == 0 || k.tb != b.keys[i-1].tb {
			b.buckets = append(b.buckets, k.tb)
		}
	}
	return b, nil
}

// lookupKeysPerWorker is the fewest keys LookupKeys gives a goroutine of
// its own: below it, starting one costs more than its share of the seeks.
const lookupKeysPerWorker = 1024

// read looks the keys of b up in src and builds a record batch of the
// rows found per share of the keys. The shares of the goroutines are
// contiguous runs of the sorted keys, each read by a clone of one
// iterator, so that all of them see the same state of src.
func (b keyBatch) read(ctx context.Context, src pebble.Reader, entry *tableEntry, l *KeyLookup, mem memory.Allocator) ([]arrow.RecordBatch, error) {
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: b.keys[0].key, UpperBound: keyAfter(b.keys[len(b.keys)-1].key)})
	if err != nil {
		return nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(b.keys)/lookupKeysPerWorker))
	iters := []*pebble.Iterator{it}
	shares := make([][]batchKey, workers)
	for w := range workers {
		shares[w] = b.keys[w*len(b.keys)/workers : (w+1)*len(b.keys)/workers]
		if w == 0 {
			continue
		}
		share := shares[w]
		c, err := it.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{
			LowerBound: share[0].key, UpperBound: keyAfter(share[len(share)-1].key)}})
		if err != nil {
			for _, it := range iters {
				it.Close()
			}
			return nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
		}
		iters = append(iters, c)
	}
	recs := make([]arrow.RecordBatch, workers)
	missing := make([][]metadata.TableBucket, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { recs[w], missing[w], errs[w] = seekKeys(ctx, iters[w], shares[w], entry, l.need, mem) })
	}
	recs[0], missing[0], errs[0] = seekKeys(ctx, iters[0], shares[0], entry, l.need, mem)
	wg.Wait()
	err = errors.Join(errs...)
	if err == nil {
		for _, m := range missing {
			for _, tb := range m {
				if lakeShadows(entry, tb) {
					err = fmt.Errorf("lookup in %s: %w", l.path, ErrLookupInLake)
				}
			}
		}
	}
	if err != nil {
		for _, r := range recs {
			if r != nil {
				r.Release()
			}
		}
		return nil, err
	}
	return recs, nil
}

// seekKeys reads the rows of keys, in ascending order, through it, which
// it closes, into a record batch; it returns the buckets of the keys it
// found no row of too (each once). A prefix seek skips the files whose
// bloom filters rule the key out, and each seek starts from where the
// last one ended.
func seekKeys(ctx context.Context, it *pebble.Iterator, keys []batchKey, entry *tableEntry, need []bool, mem memory.Allocator) (
	rec arrow.RecordBatch, missing []metadata.TableBucket, err error) {
	rb := array.NewRecordBuilder(mem, entry.arrow)
	defer rb.Release()
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("read %s: KV store: %w", entry.Info.Path, cerr)
		}
		if err != nil && rec != nil {
			rec.Release()
			rec = nil
		}
	}()
	for i, k := range keys {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if !it.SeekPrefixGE(k.key) || !bytes.Equal(it.Key(), k.key) {
			if len(missing) == 0 || missing[len(missing)-1] != k.tb {
				missing = append(missing, k.tb)
			}
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
		}
		if err := appendRowColumns(rb, v, &entry.Info, entry.types, need); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", entry.Info.Path, err)
		}
	}
	if err := it.Error(); err != nil {
		return nil, nil, fmt.Errorf("read %s: KV store: %w", entry.Info.Path, err)
	}
	return rb.NewRecordBatch(), missing, nil
}

// keyAfter is the smallest key greater than k: an upper bound that takes
// k in.
func keyAfter(k []byte) []byte { return append(slices.Clip(k), 0) }
