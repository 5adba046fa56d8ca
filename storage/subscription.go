package storage

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// ErrLogRemoved is wrapped by a subscription's error when offsets it had
// still to read were removed by retention (table.log.ttl) first: reading
// on would skip changes silently.
var ErrLogRemoved = errors.New("log removed by retention before it was read")

// SubscribeOptions shape a subscription.
type SubscribeOptions struct {
	// ReadOptions are the projection and the pushed data filter, applied
	// as by ReadLog.
	ReadOptions
	// PartitionFilter keeps the partitions whose values it may match (as
	// predicate.FilterPartitions decides), also those created while
	// subscribed; nil reads every partition. Column indexes are the
	// table's.
	PartitionFilter predicate.P
	// Start is the first offset to read of each bucket. A bucket of the
	// table it does not name is read from its log start offset: the
	// buckets of partitions created after the caller planned its start,
	// in particular, are read from their beginning.
	Start map[metadata.TableBucket]int64
	// Bounded makes the subscription stop: each bucket is read up to its
	// offset in Stop (exclusive); a bucket Stop does not name (of a
	// partition created after the caller planned its stops, in
	// particular) is not read. Once every bucket reached its stop, Next
	// reports false with no error.
	Bounded bool
	Stop    map[metadata.TableBucket]int64
}

// Subscription reads the committed log of a table's buckets as it grows:
// every batch after its start offsets, in offset order per bucket, and
// then the batches later commits write, which wake it (it never polls).
// A partition created while subscribed is read from its log start as soon
// as the commit that creates it is visible; a dropped partition's buckets
// end without an error; a dropped table ends the subscription with an
// error wrapping metadata.ErrNotFound.
//
// It is a log reader without a stop offset: each bucket with committed
// offsets past its position is read by a LogReader up to the high
// watermark of its opening, then by the next one. The readers of
// several buckets run at once, each in a goroutine of its own that reads
// ahead of Next (a few batches at most; see fetch), so that catching up
// on a table of many buckets uses more than one core; a bucket's batches
// still come in offset order, and the buckets' in the order they are
// read. No goroutine runs while every bucket is read to its end. It is
// not safe for concurrent use and must be closed.
type Subscription struct {
	e     *Engine
	table metadata.TableInfo
	opts  SubscribeOptions
	cat   *catalog // the catalog the bucket list was made from

	buckets []*subBucket
	pos     int // the bucket to look at next, round-robin
	batch   SubscriptionBatch

	// The readers running: each sends its batches, then its end, to out.
	ctx     context.Context // cancelled by Close: the readers stop
	cancel  context.CancelFunc
	out     chan fetched
	running int
	wg      sync.WaitGroup

	wakeups atomic.Int64
	err     error
	closed  bool
}

// subBucket is the read position of one bucket.
type subBucket struct {
	tb        metadata.TableBucket
	partition string
	next      int64 // the offset after the last batch delivered
	stop      int64 // exclusive; -1 for none
	reading   bool  // a reader of it runs
}

// fetched is what a bucket's reader sends: a batch (its Record retained
// for the receiver) and the position after it, or, with end set, the
// reader's end: where it stopped (batches its filter skipped move the
// position too) or its error.
type fetched struct {
	b     *subBucket
	batch LogBatch
	next  int64
	end   bool
	err   error
}

// maxFetchers bounds the readers running at once (more than the cores:
// a reader waits for its batch to be taken, and the others read on
// meanwhile); fetchAhead is how many batches they may hold ready,
// together, beyond the one Next delivered and the one each is sending.
var maxFetchers = max(4, 2*runtime.GOMAXPROCS(0))

const fetchAhead = 4

// done reports whether a bounded bucket has nothing left to read.
func (b *subBucket) done() bool { return b.stop >= 0 && b.next >= b.stop }

// SubscriptionBatch is one batch a subscription delivers.
type SubscriptionBatch struct {
	LogBatch
	TableBucket metadata.TableBucket
	// Partition is the partition's name; "" for a table without
	// partitions.
	Partition string
}

// Subscribe opens a subscription of the table path names.
func (e *Engine) Subscribe(ctx context.Context, path metadata.TablePath, opts SubscribeOptions) (*Subscription, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	entry, err := cat.table(path)
	if err != nil {
		e.mu.RUnlock()
		return nil, err
	}
	s := &Subscription{e: e, table: entry.Info, opts: opts, out: make(chan fetched, fetchAhead)}
	err = s.refreshLocked(cat)
	e.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// refreshLocked brings the bucket list in line with cat: buckets of new
// matching partitions join at their start offset, those of dropped
// partitions leave. The caller holds e.mu shared.
func (s *Subscription) refreshLocked(cat *catalog) error {
	if cat == s.cat {
		return nil
	}
	entry := cat.byID[s.table.TableID]
	if entry == nil {
		return fmt.Errorf("subscription of %s: table %d was dropped: %w", s.table.Path, s.table.TableID, metadata.ErrNotFound)
	}
	type part struct {
		id   int64
		name string
	}
	parts := []part{{id: metadata.NonPartitioned}}
	if entry.Info.IsPartitioned() {
		kept, err := predicate.FilterPartitions(&entry.Info, slices.Clone(entry.Partitions), s.opts.PartitionFilter)
		if err != nil {
			return fmt.Errorf("subscription of %s: %w", s.table.Path, err)
		}
		parts = parts[:0]
		for _, p := range kept {
			parts = append(parts, part{id: p.ID, name: p.Name})
		}
	}
	known := make(map[metadata.TableBucket]*subBucket, len(s.buckets))
	for _, b := range s.buckets {
		known[b.tb] = b
	}
	next := make([]*subBucket, 0, len(parts)*entry.Info.NumBuckets)
	for _, p := range parts {
		for i := range entry.Info.NumBuckets {
			tb := metadata.TableBucket{TableID: s.table.TableID, PartitionID: p.id, Bucket: int32(i)}
			if b := known[tb]; b != nil {
				next = append(next, b)
				continue
			}
			b := &subBucket{tb: tb, partition: p.name, stop: -1}
			if s.opts.Bounded {
				b.stop = s.opts.Stop[tb] // 0 when absent: nothing to read
			}
			if off, ok := s.opts.Start[tb]; ok {
				b.next = off
			} else if t := s.e.tablet(tb); t != nil {
				b.next = t.logStart.Load()
			}
			next = append(next, b)
		}
	}
	s.buckets, s.cat = next, cat
	if s.pos >= len(s.buckets) {
		s.pos = 0
	}
	return nil
}

// refresh takes the catalog and refreshes the bucket list from it.
func (s *Subscription) refresh() error {
	cat, err := s.e.readLock()
	if err != nil {
		return err
	}
	defer s.e.mu.RUnlock()
	return s.refreshLocked(cat)
}

// Next advances to the next batch, waiting for a commit when every bucket
// has been read to its high watermark. It reports false when ctx ends
// (Err is then ctx.Err()), on an error, or after Close.
func (s *Subscription) Next(ctx context.Context) bool {
	s.releaseBatch()
	for !s.closed && s.err == nil {
		if s.running > 0 {
			var f fetched
			select {
			case f = <-s.out:
			case <-ctx.Done():
				s.err = ctx.Err()
				return false
			}
			if !f.end {
				f.b.next = f.next
				s.batch = SubscriptionBatch{LogBatch: f.batch, TableBucket: f.b.tb, Partition: f.b.partition}
				return true
			}
			s.running--
			f.b.reading = false
			if f.err != nil {
				s.err = s.readError(f.b, f.err)
				continue
			}
			f.b.next = f.next
			if s.running > 0 {
				// Another bucket behind takes the reader's place, from
				// the bucket list of the catalog now: a partition
				// dropped meanwhile leaves before a later commit is read.
				if err := s.refresh(); err != nil {
					s.err = err
					continue
				}
				if _, err := s.openNext(ctx); err != nil {
					s.err = err
				}
				continue
			}
		}
		if err := ctx.Err(); err != nil {
			s.err = err
			break
		}
		if s.opts.Bounded && s.allDone() {
			break
		}
		// Taken before looking: a commit after the look closes it.
		wake := s.e.watch.wait(s.table.TableID)
		if err := s.refresh(); err != nil {
			s.err = err
			break
		}
		found, err := s.openNext(ctx)
		if err != nil {
			s.err = err
			break
		}
		if found || s.opts.Bounded && s.allDone() {
			continue
		}
		select {
		case <-wake:
			s.wakeups.Add(1)
		case <-ctx.Done():
			s.err = ctx.Err()
		}
	}
	return false
}

// releaseBatch lets go of the batch Next delivered last.
func (s *Subscription) releaseBatch() {
	if s.batch.Record != nil {
		s.batch.Record.Release()
	}
	s.batch = SubscriptionBatch{}
}

// allDone reports whether every bucket reached its stop (a bounded
// subscription has then ended).
func (s *Subscription) allDone() bool {
	for _, b := range s.buckets {
		if !b.done() {
			return false
		}
	}
	return true
}

// Done reports whether a bounded subscription read every bucket to its
// stop: Next then reports false with no error.
func (s *Subscription) Done() bool { return s.opts.Bounded && s.err == nil && !s.closed && s.allDone() }

// openNext starts readers, round-robin, over the buckets not being read
// that have committed offsets past their position, up to maxFetchers
// running; found reports whether one started (or a bucket left).
func (s *Subscription) openNext(ctx context.Context) (found bool, err error) {
	for range len(s.buckets) {
		if s.running >= maxFetchers {
			break
		}
		b := s.buckets[s.pos]
		s.pos = (s.pos + 1) % len(s.buckets)
		if b.done() || b.reading {
			continue
		}
		t := s.e.tablet(b.tb)
		if t == nil || t.hw.Load() <= b.next {
			continue
		}
		if start := t.logStart.Load(); b.next < start {
			return found, fmt.Errorf("%w: %s of %s: offsets %d to %d are gone", ErrLogRemoved, b.tb, s.table.Path, b.next, start-1)
		}
		r, err := s.e.ReadLog(ctx, b.tb, b.next, b.stop, s.opts.ReadOptions)
		if err != nil {
			// A dropped partition's bucket leaves: look again.
			return true, s.readError(b, err)
		}
		b.reading, found = true, true
		s.running++
		s.wg.Add(1)
		go s.fetch(b, r)
	}
	return found, nil
}

// fetch reads r, the reader of b, to its end, sending each batch and
// then the end to out; it stops early once Close cancels s.ctx.
func (s *Subscription) fetch(b *subBucket, r *LogReader) {
	defer s.wg.Done()
	defer r.Close()
	for r.Next() {
		batch := r.Batch()
		batch.Record.Retain()
		select {
		case s.out <- fetched{b: b, batch: batch, next: r.next}:
		case <-s.ctx.Done():
			batch.Record.Release()
			return
		}
	}
	select {
	case s.out <- fetched{b: b, next: r.next, end: true, err: r.Err()}:
	case <-s.ctx.Done():
	}
}

// readError is nil when err comes from reading b, a bucket whose
// partition was dropped (the bucket leaves the subscription); else err,
// named.
func (s *Subscription) readError(b *subBucket, err error) error {
	if rerr := s.refresh(); rerr != nil {
		return rerr
	}
	if b != nil && !slices.Contains(s.buckets, b) {
		return nil
	}
	return fmt.Errorf("subscription of %s: %w", s.table.Path, err)
}

// Batch returns the current batch; valid until the next Next or Close.
func (s *Subscription) Batch() SubscriptionBatch { return s.batch }

// Offsets returns, for every bucket the subscription reads, the next
// offset it would deliver: a subscription started at them delivers
// exactly the changes this one has not delivered yet.
func (s *Subscription) Offsets() map[metadata.TableBucket]int64 {
	out := make(map[metadata.TableBucket]int64, len(s.buckets))
	for _, b := range s.buckets {
		out[b.tb] = b.next
	}
	return out
}

// Partition returns the name of the partition of a bucket the
// subscription reads.
func (s *Subscription) Partition(tb metadata.TableBucket) (string, bool) {
	for _, b := range s.buckets {
		if b.tb == tb {
			return b.partition, true
		}
	}
	return "", false
}

// Table returns the table subscribed to.
func (s *Subscription) Table() metadata.TableInfo { return s.table }

// Wakeups counts the commits and partition changes that woke the
// subscription while it waited. Safe for concurrent use.
func (s *Subscription) Wakeups() int64 { return s.wakeups.Load() }

// Err returns the error that ended the subscription, if any.
func (s *Subscription) Err() error { return s.err }

// Close stops the readers and releases what they read. Idempotent.
func (s *Subscription) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.releaseBatch()
	s.cancel()
	go func() {
		s.wg.Wait()
		close(s.out)
	}()
	for f := range s.out {
		if f.batch.Record != nil {
			f.batch.Record.Release()
		}
	}
	return nil
}
