package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/flusslite/fluss/metadata"
)

const kvDirName = "kv"

// kvBucket is the in-memory state of one primary-key bucket's KV side:
// how far its rows reflect the log, and its snapshots.
type kvBucket struct {
	tb metadata.TableBucket
	// applied is the bucket's flushed offset: the log offset its Pebble
	// rows reflect.
	applied atomic.Int64
	// broken is set when the log could not be replayed into the KV store
	// on Open; every KV operation of the bucket then fails with it.
	broken error

	// snapMu serialises the snapshots of the bucket.
	snapMu sync.Mutex
	mu     struct {
		sync.Mutex
		snaps   []*kvSnap // ascending ids; the last is the latest
		nextID  int64
		dropped bool
	}
}

// kvSnap is one snapshot file of a bucket.
type kvSnap struct {
	id        int64
	logOffset int64
	path      string // full path
	rel       string // relative to the data directory, for messages
	rows      int64
	pins      int
}

// openKv opens the engine's Pebble store. On disk it lives in <dir>/kv;
// in memory, or when Options.FS replaces the file system, it runs on
// Pebble's in-memory vfs (so it starts empty, and every bucket is rebuilt
// from its log on Open).
func (e *Engine) openKv() error {
	fsys, dir := vfs.FS(vfs.Default), filepath.Join(e.root, kvDirName)
	if _, onDisk := e.fs.(diskFS); !onDisk {
		fsys, dir = vfs.NewMem(), kvDirName
	}
	if e.opts.testingKvFS != nil {
		fsys = e.opts.testingKvFS(fsys)
	}
	e.kvMon = newKvMonitor(e.opts.Logger, func(err error) { e.fail("KV store", err) })
	logger := pebbleLogger{l: e.opts.Logger, mon: e.kvMon}
	// Every upsert reads the key's old value first, and most keys of a
	// growing table are new: bloom filters make those misses cheap, and a
	// block cache keeps index and data blocks of hot keys decoded.
	// Pebble charges its memtables (the active one, one being flushed or
	// kept for reuse) to the block cache: the cache is sized for them on
	// top of the blocks, or a full memtable would leave no room for any
	// block and every read would go to the files.
	cache := pebble.NewCache(kvCacheBytes + kvMemTableReserve*kvMemTableBytes)
	defer cache.Unref()
	popts := &pebble.Options{
		FS:              kvFS{FS: fsys, mon: e.kvMon},
		Logger:          logger,
		LoggerAndTracer: logger,
		EventListener:   e.kvMon.listener(),
		Cache:           cache,
		MemTableSize:    kvMemTableBytes,
		// Writes stall once this many memtables wait for a flush, and a
		// flush that cannot complete (a full disk) would hold them
		// forever: the engine stops writing to the store when a flush
		// fails, and this leaves room for the writes already under way
		// (replayCommit keeps Open's replay below it).
		MemTableStopWritesThreshold: kvMemTableStopWrites,
		// The bucket logs are the write-ahead log: Pebble's state records
		// the log offset it reflects, and Open replays the logs from
		// there, so Pebble's own WAL would only write everything twice.
		DisableWAL: true,
	}
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		// One index block per table up to tens of megabytes of rows: a
		// point read then searches one index block instead of two (a
		// partitioned index costs a second block-cache lookup and seek
		// per read).
		popts.Levels[i].IndexBlockSize = kvIndexBlockBytes
		// Uncompressed blocks: a lookup that misses the block cache
		// reads its block from the OS page cache and uses it as it is.
		// With Snappy, decompressing it was a third of such a lookup
		// (BenchmarkPointLookup at 10M keys: 27 µs, 19 µs without), for
		// files about twice as large.
		popts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	var db *pebble.DB
	err := guardKv("open", func() error {
		var err error
		db, err = pebble.Open(dir, popts)
		return err
	})
	if err == nil {
		err = e.kvMon.fault()
		if err != nil {
			e.closeKvStore(db)
		}
	}
	if err != nil {
		return fmt.Errorf("open KV store %s: %w", kvDirName, err)
	}
	e.kv = db
	return nil
}

// The KV store's memory: kvCacheBytes of decoded blocks (index, bloom
// filter and data blocks of the live rows), and memtables of
// kvMemTableBytes, of which Pebble holds up to kvMemTableReserve at once.
// Every point read (a lookup, and the read of the old row of each upsert)
// searches the memtable first, a skiplist whose search misses the CPU
// caches at each level: a small memtable keeps that short (64MB ones
// made lookups a fifth slower than 4MB ones), and a bulk write still
// goes through Pebble as large batches, not memtable by memtable.
const (
	kvCacheBytes      = 256 << 20
	kvMemTableBytes   = 4 << 20
	kvMemTableReserve = 3
	// kvMemTableStopWrites memtables of kvMemTableBytes may wait for a
	// flush before writes stall.
	kvMemTableStopWrites = 4
	kvIndexBlockBytes    = 256 << 10
)

// closeKv flushes and closes the Pebble store. Flushing keeps the next
// Open from replaying what is already applied, but a flush that cannot
// complete (a full disk) loses nothing: the log holds every write and the
// next Open replays it. So Close waits for the flush, and then for Pebble
// to close, at most Options.CloseTimeout each, and returns the error.
func (e *Engine) closeKv() error {
	if e.kv == nil {
		return nil
	}
	err := e.flushKv()
	if err != nil {
		err = fmt.Errorf("flush: %w (the log holds every write; the next open replays it)", err)
	}
	if cerr := e.closeKvStore(e.kv); err == nil {
		err = cerr
	}
	e.kv = nil
	if err != nil {
		return fmt.Errorf("close KV store: %w", err)
	}
	return nil
}

// flushKv flushes the KV store's memtables, waiting at most
// Options.CloseTimeout. A store with a recorded fault is not flushed: its
// memory may not be what it should, and the log rebuilds it.
func (e *Engine) flushKv() error {
	if err := e.kvMon.fault(); err != nil {
		return err
	}
	timeout := e.opts.CloseTimeout
	deadline := time.Now().Add(timeout)
	type started struct {
		flushed <-chan struct{}
		err     error
	}
	// Starting the flush may itself wait for earlier flushes.
	got := make(chan started, 1)
	go func() {
		var s started
		s.err = guardKv("flush", func() error {
			var err error
			s.flushed, err = e.kv.AsyncFlush()
			return err
		})
		got <- s
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case s := <-got:
		if s.err != nil {
			return s.err
		}
		return e.kvMon.waitFlush(s.flushed, time.Until(deadline))
	case <-e.kvMon.faultedCh():
		return e.kvMon.fault()
	case <-timer.C:
		return fmt.Errorf("KV store: a flush did not start within %s", timeout)
	}
}

// closeKvStore closes db, waiting at most Options.CloseTimeout; a panic in
// Pebble's Close is returned as an error. When Close does not return in
// time it is left to finish in the background, still holding the store's
// lock, so the directory cannot be opened again in this process before it
// has.
func (e *Engine) closeKvStore(db *pebble.DB) error {
	done := make(chan error, 1)
	go func() { done <- guardKv("close", db.Close) }()
	timer := time.NewTimer(e.opts.CloseTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("KV store did not close within %s", e.opts.CloseTimeout)
	}
}

// kvBucketState returns the KV state of tb, creating it.
func (e *Engine) kvBucketState(tb metadata.TableBucket) *kvBucket {
	e.kvMu.Lock()
	defer e.kvMu.Unlock()
	b := e.kvBuckets[tb]
	if b == nil {
		b = &kvBucket{tb: tb}
		e.kvBuckets[tb] = b
	}
	return b
}

// readFlushedOffset reads the flushed offset of tb from r; 0 when the
// bucket has no KV state yet.
func readFlushedOffset(r pebble.Reader, tb metadata.TableBucket) (int64, error) {
	v, closer, err := r.Get(kvMetaKey(tb))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read flushed offset of %s: %w", tb, err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: flushed offset of %s has %d bytes", metadata.ErrCorrupt, tb, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func offsetValue(off int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(off)) }

// removeDroppedKv deletes the Pebble state of tables and partitions the
// catalog no longer knows (a drop interrupted before its KV cleanup).
func (e *Engine) removeDroppedKv() error {
	it, err := e.kv.NewIter(&pebble.IterOptions{LowerBound: []byte{kvMetaTag}, UpperBound: []byte{kvMetaTag + 1}})
	if err != nil {
		return fmt.Errorf("scan KV store: %w", err)
	}
	type drop struct {
		table     int64
		partition *int64
	}
	var drops []drop
	for ok := it.First(); ok; ok = it.Next() {
		tb, ok := parseBucketID(it.Key()[1:])
		if !ok {
			continue
		}
		// Only state of what the catalog dropped goes; state it cannot
		// place (a catalog older than the store) stays, unread.
		cat := e.mu.cat
		entry := cat.byID[tb.TableID]
		switch {
		case entry == nil && cat.droppedTable(tb.TableID):
			drops = append(drops, drop{table: tb.TableID})
		case entry == nil || !entry.Info.HasPrimaryKey():
		case tb.PartitionID != metadata.NonPartitioned && cat.droppedPartition(entry, tb.PartitionID):
			p := tb.PartitionID
			drops = append(drops, drop{table: tb.TableID, partition: &p})
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("scan KV store: %w", err)
	}
	for _, d := range drops {
		if err := e.deleteKvRange(d.table, d.partition); err != nil {
			return err
		}
	}
	return nil
}

// deleteKvRange removes the rows and flushed offsets of a table, or of
// one of its partitions; a whole table's index entries too (a partition's
// stay, and are skipped by readers as naming no row).
func (e *Engine) deleteKvRange(tableID int64, partition *int64) error {
	b := e.kv.NewBatch()
	defer b.Close()
	tags := []byte{kvDataTag, kvMetaTag}
	if partition == nil {
		tags = append(tags, kvIndexTag)
	}
	for _, tag := range tags {
		start, end := tableRange(tag, tableID, partition)
		if err := b.DeleteRange(start, end, nil); err != nil {
			return fmt.Errorf("remove KV state of table %d: %w", tableID, err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("remove KV state of table %d: %w", tableID, err)
	}
	return nil
}

// replayKv brings the KV state of every primary-key bucket up to its log
// end: the log is the source of truth, and a crash (or a cut-off write)
// may have left Pebble behind it. A bucket whose log cannot be replayed is
// marked broken (logged) rather than failing Open.
func (e *Engine) replayKv() error {
	for tb, t := range e.tablets {
		entry := e.mu.cat.byID[tb.TableID]
		if entry == nil || !entry.Info.HasPrimaryKey() {
			continue
		}
		kb := e.kvBucketState(tb)
		if err := e.replayBucket(entry, t, kb); err != nil {
			if errors.Is(err, metadata.ErrCorrupt) {
				e.opts.Logger.Error("cannot rebuild the KV state of a bucket", "table", entry.Info.Path.String(), "bucket", tb.String(), "err", err)
				kb.broken = fmt.Errorf("KV state of %s: %w", tb, err)
				continue
			}
			return err
		}
	}
	// The last flush tells whether the store can write what it replayed;
	// a full disk fails Open here, with the error, rather than later.
	if r := &e.kvMon.replay; r.flushed != nil {
		if err := e.kvMon.waitFlush(r.flushed, kvReplayFlushTimeout); err != nil {
			return fmt.Errorf("replay the logs into the KV store: %w", err)
		}
		r.flushed = nil
	}
	return nil
}

func (e *Engine) replayBucket(entry *tableEntry, t *logTablet, kb *kvBucket) error {
	tb := t.tb
	from, err := readFlushedOffset(e.kv, tb)
	if err != nil {
		return err
	}
	snap, err := t.snapshot()
	if err != nil {
		return err
	}
	owned := true // until the reader takes the snapshot over
	defer func() {
		if owned {
			snap.release()
		}
	}()
	if from > snap.hw && e.opts.Sync {
		// With Sync the log is durable before the KV state is written:
		// a log behind it lost acknowledged data.
		return fmt.Errorf("%w: log of %s in %s: the KV state reflects offsets up to %d, but the log ends at %d", metadata.ErrCorrupt, tb, tabletDir(tb), from, snap.hw)
	}
	if from > snap.hw {
		// The KV state holds changes the log lost (a crash without Sync
		// after Pebble flushed them): rebuild the bucket from the log.
		e.opts.Logger.Warn("KV state is ahead of the log; rebuilding it", "bucket", tb.String(), "flushed", from, "log_end", snap.hw)
		if err := e.resetKvBucket(entry, tb); err != nil {
			return err
		}
		from = 0
	}
	if from < snap.logStart {
		// The log before the log start expired (TTL), which DropExpired
		// allows only up to the latest KV snapshot: the state is rebuilt
		// from that snapshot and the log after it.
		if from, err = e.restoreKvSnapshot(entry, kb, snap.logStart, snap.hw); err != nil {
			return err
		}
	}
	if from == snap.hw {
		kb.applied.Store(from)
		return nil
	}
	if from > 0 || snap.hw > 0 {
		e.opts.Logger.Info("replaying a bucket's log into its KV state", "bucket", tb.String(), "from", from, "to", snap.hw)
	}
	owned = false
	r, err := newLogReader(entry, tb, snap, from, snap.hw, ReadOptions{}, e.opts.Allocator)
	if err != nil {
		return err
	}
	defer r.Close()
	kc := entry.keyCodec()
	ixs := entry.indexes
	// The slots of a UNIQUE index carry their rows and must stay exact
	// (see kvIndexTag): each change then replaces the row it reads from
	// the store, through a batch that reads its own writes, rather than
	// the -U image a WAL changelog does not have.
	exact := hasUnique(ixs)
	newBatch := func() *pebble.Batch { return e.kv.NewBatch() }
	if exact {
		newBatch = e.kv.NewIndexedBatch
	}
	batch := newBatch()
	defer func() { batch.Close() }()
	stored := func(key []byte) ([]any, error) {
		row, err := kvReadRow(batch, entry, key)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", metadata.ErrCorrupt, tb, err)
		}
		return row, nil
	}
	var buf []byte
	for r.Next() {
		lb := r.Batch()
		rec := lb.Record
		n := int(rec.NumRows())
		for i := range n {
			row := make([]any, len(entry.types))
			for c := range row {
				row[c] = metadata.ValueAt(rec.Column(c), entry.types[c], i)
			}
			key, err := kc.key(tb, row)
			if err != nil {
				return fmt.Errorf("%w: %s: log offset %d: key: %v", metadata.ErrCorrupt, tb, lb.BaseOffset+int64(i), err)
			}
			ct := metadata.ChangeInsert
			if lb.ChangeTypes != nil {
				ct = lb.ChangeTypes[i]
			}
			var old []any
			if exact && ct != metadata.ChangeUpdateBefore {
				if old, err = stored(key); err != nil {
					return err
				}
			}
			switch ct {
			case metadata.ChangeInsert, metadata.ChangeUpdateAfter, metadata.ChangeAppendOnly:
				if buf, err = encodeRowValue(buf[:0], entry.Info.SchemaID, entry.types, row); err != nil {
					return fmt.Errorf("%w: %s: log offset %d: %v", metadata.ErrCorrupt, tb, lb.BaseOffset+int64(i), err)
				}
				if err = batch.Set(key, buf, nil); err == nil {
					err = writeIndexEntries(batch, ixs, key, old, row, buf)
				}
			case metadata.ChangeDelete:
				if !exact {
					old = row
				}
				if err = batch.Delete(key, nil); err == nil {
					err = writeIndexEntries(batch, ixs, key, old, nil, nil)
				}
			case metadata.ChangeUpdateBefore:
				// The old image: its index entries go (the +U after it
				// sets the new ones, also when they are the same). An
				// exact replay reads the old row at the +U instead.
				if !exact {
					err = writeIndexEntries(batch, ixs, key, row, nil, nil)
				}
			}
			if err != nil {
				return fmt.Errorf("replay %s: %w", tb, err)
			}
		}
		next := lb.BaseOffset + int64(n)
		if batch.Len() > 4<<20 {
			if err := e.commitReplay(batch, tb, next); err != nil {
				return err
			}
			batch.Close()
			batch = newBatch()
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if err := e.commitReplay(batch, tb, snap.hw); err != nil {
		return err
	}
	kb.applied.Store(snap.hw)
	return nil
}

// resetKvBucket deletes the rows of tb, a bucket of entry's table, from
// the KV store, and first the index entries and slots of those rows,
// which live under the table and would otherwise outlive them (a slot
// carrying a row that is gone; see kvIndexTag). An interrupted reset is
// done again by the next Open, which finds the bucket as this one did.
func (e *Engine) resetKvBucket(entry *tableEntry, tb metadata.TableBucket) error {
	b := e.kv.NewBatch()
	defer func() { b.Close() }()
	prefix := kvDataPrefix(tb)
	if ixs := entry.indexes; ixs != nil {
		it, err := e.kv.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		if err != nil {
			return fmt.Errorf("reset KV state of %s: %w", tb, err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			row, err := decodeRowValue(it.Value(), &entry.Info, entry.types)
			if err == nil {
				err = removeIndexEntries(b, ixs, it.Key(), row, nil)
			}
			if err == nil && b.Len() > 4<<20 {
				if err = e.commitKv(b); err == nil {
					b.Close()
					b = e.kv.NewBatch()
				}
			}
			if err != nil {
				it.Close()
				return fmt.Errorf("reset KV state of %s: %w", tb, err)
			}
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("reset KV state of %s: %w", tb, err)
		}
	}
	err := b.DeleteRange(prefix, prefixEnd(prefix), nil)
	if err == nil {
		err = e.commitKv(b)
	}
	if err != nil {
		return fmt.Errorf("reset KV state of %s: %w", tb, err)
	}
	return nil
}

// restoreKvSnapshot replaces the KV state of a bucket with its latest KV
// snapshot and returns the snapshot's log offset, from where the log
// replays. The snapshot must lie within the log [logStart, hw]; otherwise
// the state cannot be rebuilt (ErrCorrupt).
func (e *Engine) restoreKvSnapshot(entry *tableEntry, kb *kvBucket, logStart, hw int64) (int64, error) {
	tb := kb.tb
	kb.mu.Lock()
	var s *kvSnap
	if n := len(kb.mu.snaps); n > 0 {
		s = kb.mu.snaps[n-1]
	}
	if s == nil || s.logOffset < logStart || s.logOffset > hw {
		kb.mu.Unlock()
		return 0, fmt.Errorf("%w: %s: the log starts at %d and no KV snapshot covers the offsets before it", metadata.ErrCorrupt, tb, logStart)
	}
	e.pinLocked(s)
	kb.mu.Unlock()
	e.opts.Logger.Info("restoring a bucket's KV state from its KV snapshot", "bucket", tb.String(), "snapshot", s.rel, "log_offset", s.logOffset)
	r := &KvSnapshotReader{e: e, kb: kb, snap: s, mem: e.opts.Allocator}
	defer r.Close()
	if err := r.open(entry, tb, ReadOptions{}); err != nil {
		return 0, err
	}
	if err := e.resetKvBucket(entry, tb); err != nil {
		return 0, err
	}
	batch := e.kv.NewBatch()
	defer func() { batch.Close() }()
	var buf []byte
	ixs := entry.indexes
	for r.Next() {
		kvb := r.Batch()
		for i, k := range kvb.Keys {
			row := make([]any, len(entry.types))
			for c := range row {
				row[c] = metadata.ValueAt(kvb.Record.Column(c), entry.types[c], i)
			}
			var err error
			if buf, err = encodeRowValue(buf[:0], entry.Info.SchemaID, entry.types, row); err != nil {
				return 0, fmt.Errorf("%w: KV snapshot %s: %v", metadata.ErrCorrupt, s.rel, err)
			}
			key := append(kvDataPrefix(tb), k...)
			if err := batch.Set(key, buf, nil); err != nil {
				return 0, fmt.Errorf("restore %s: %w", tb, err)
			}
			if err := writeIndexEntries(batch, ixs, key, nil, row, buf); err != nil {
				return 0, fmt.Errorf("restore %s: %w", tb, err)
			}
		}
		if batch.Len() > 4<<20 {
			// The flushed offset is written only with the last part: a
			// crash in between leaves it where it was, below the log
			// start, and the next Open restores again.
			if err := e.replayCommit(batch); err != nil {
				return 0, fmt.Errorf("restore %s: %w", tb, err)
			}
			batch.Close()
			batch = e.kv.NewBatch()
		}
	}
	if err := r.Err(); err != nil {
		return 0, err
	}
	if err := e.commitReplay(batch, tb, s.logOffset); err != nil {
		return 0, err
	}
	return s.logOffset, nil
}

func (e *Engine) commitReplay(b *pebble.Batch, tb metadata.TableBucket, offset int64) error {
	if err := b.Set(kvMetaKey(tb), offsetValue(offset), nil); err != nil {
		return fmt.Errorf("replay %s: %w", tb, err)
	}
	if err := e.replayCommit(b); err != nil {
		return fmt.Errorf("replay %s: %w", tb, err)
	}
	return nil
}

// replayCommit commits a batch of Open's replay into the KV store. A
// replay writes much more than the memtables hold, and a write that finds
// too many of them waiting for a flush stalls until one completes, which
// on a full disk is never: so after every half memtable it starts a flush
// and, before the next batch, waits for it, and it stops at the first
// fault. Open then fails with the error instead of hanging.
func (e *Engine) replayCommit(b *pebble.Batch) error {
	r := &e.kvMon.replay
	if r.flushed != nil {
		if err := e.kvMon.waitFlush(r.flushed, kvReplayFlushTimeout); err != nil {
			return err
		}
		r.flushed = nil
	}
	// Read before the commit: Pebble empties a large batch it commits.
	size := b.Len()
	if err := e.commitKv(b); err != nil {
		return err
	}
	if r.bytes += size; r.bytes < kvMemTableBytes/2 {
		return nil
	}
	r.bytes = 0
	return guardKv("flush", func() error {
		var err error
		r.flushed, err = e.kv.AsyncFlush()
		return err
	})
}

// kvReplayFlushTimeout bounds the wait of Open's replay for one flush of a
// memtable; a flush that fails ends the wait at once.
const kvReplayFlushTimeout = time.Minute

// commitKv commits b to the KV store unless the store has a fault, which
// it returns, also when Pebble reports it during the commit (Pebble's
// commit returns nil after its logger's Fatalf).
func (e *Engine) commitKv(b *pebble.Batch) error {
	if err := e.kvMon.fault(); err != nil {
		return err
	}
	if err := guardKv("commit", func() error { return b.Commit(pebble.NoSync) }); err != nil {
		return err
	}
	return e.kvMon.fault()
}

// keyCodec builds the Pebble key of a row of one table.
type keyCodec struct {
	idx   []int
	types []metadata.DataType
	vals  []any
}

// keyCodec is the key codec of the entry's table, from its prepared
// layout.
func (t *tableEntry) keyCodec() *keyCodec {
	return &keyCodec{idx: t.physKey, types: t.physTypes, vals: make([]any, len(t.physKey))}
}

// key returns the Pebble key of row (a full-schema row) in bucket tb.
func (k *keyCodec) key(tb metadata.TableBucket, row []any) ([]byte, error) {
	for j, i := range k.idx {
		k.vals[j] = row[i]
	}
	return metadata.AppendOrderedKey(kvDataPrefix(tb), k.types, k.vals)
}
