package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// DropExpired removes the log that table.log.ttl has expired and returns
// how many segments it removed. It works in whole segments, oldest first:
// a segment expires when its newest commit timestamp is older than
// now - ttl (a ttl of 0 never expires). It stops at the first segment
// that must stay, and never removes
//   - a bucket's active (last) segment;
//   - log at or past a lake-enabled table's tiered offset for the bucket
//     (a bucket it has never tiered keeps all its log): a lake table
//     never loses a row that is not in the lake;
//   - log at or past a primary-key bucket's latest KV snapshot offset (a
//     bucket without a snapshot keeps all its log): the KV state is
//     rebuilt from that snapshot and the log after it.
//
// The bucket's log start offset becomes the base offset of its oldest
// remaining segment (so a reopen finds it again); ListOffsets with
// OffsetEarliest answers it and ReadLog refuses offsets below it. Readers
// opened before keep reading the segments they started with.
func (e *Engine) DropExpired(ctx context.Context, now time.Time) (int, error) {
	cat, err := e.readLock()
	if err != nil {
		return 0, err
	}
	defer e.mu.RUnlock()
	type candidate struct {
		tb metadata.TableBucket
		t  *logTablet
	}
	var list []candidate
	e.tabletsMu.Lock()
	for tb, t := range e.tablets {
		list = append(list, candidate{tb, t})
	}
	e.tabletsMu.Unlock()
	slices.SortFunc(list, func(a, b candidate) int {
		return lockOrder(a.tb, b.tb)
	})
	type plan struct {
		c      candidate
		entry  *tableEntry
		cutoff int64
		start  int64
	}
	var (
		removed int
		errs    []error
		flushed bool
		plans   []plan
	)
	for _, c := range list {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		entry := cat.byID[c.tb.TableID]
		if entry == nil || checkBucket(cat, c.tb) != nil {
			continue
		}
		cfg := entry.Info.Config
		if cfg.LogTTL <= 0 {
			continue
		}
		cutoff := now.Add(-cfg.LogTTL).UnixMilli()
		limit := int64(math.MaxInt64)
		if cfg.DatalakeEnabled {
			off, ok := entry.Lake.offset(c.tb)
			if !ok {
				continue
			}
			limit = off
		}
		if entry.Info.HasPrimaryKey() {
			off, ok := e.latestKvSnapshotOffset(c.tb)
			if !ok {
				continue
			}
			limit = min(limit, off)
			if !flushed && c.t.expirable(cutoff, limit) > 0 {
				// Make the KV state durable first: Pebble runs without a
				// WAL, and after a crash it must not fall back below the
				// new log start.
				if err := e.flushKv(); err != nil {
					errs = append(errs, fmt.Errorf("flush KV store before expiring log: %w", err))
					continue
				}
				flushed = true
			}
		}
		if start, ok := c.t.expiredStart(cutoff, limit); ok {
			plans = append(plans, plan{c: c, entry: entry, cutoff: cutoff, start: start})
		}
	}
	if len(plans) == 0 {
		return removed, errors.Join(errs...)
	}
	// The new log starts are recorded before any segment goes, so that
	// Open can tell expiry from segments gone missing.
	starts := make(map[metadata.TableBucket]int64, len(plans))
	for _, p := range plans {
		starts[p.c.tb] = p.start
	}
	if err := e.raiseStarts(starts); err != nil {
		return removed, errors.Join(append(errs, fmt.Errorf("expire log: %w", err))...)
	}
	for _, p := range plans {
		// The start as the limit: no more goes than was recorded.
		n, err := p.c.t.expire(p.cutoff, p.start)
		removed += n
		if err != nil {
			errs = append(errs, fmt.Errorf("expire log of %s (%s): %w", p.entry.Info.Path, p.c.tb, err))
		} else if n > 0 {
			e.opts.Logger.Info("expired log segments", "table", p.entry.Info.Path.String(), "bucket", p.c.tb.String(), "segments", n, "log_start", p.c.t.logStart.Load())
		}
	}
	return removed, errors.Join(errs...)
}

// expiredStart is the log start expire would leave: the base offset of
// the first segment that stays; ok is false when nothing expires.
func (t *logTablet) expiredStart(cutoff, limit int64) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return 0, false
	}
	n := t.expirableLocked(cutoff, limit)
	if n == 0 {
		return 0, false
	}
	return t.mu.segments[n].base, true
}

// latestKvSnapshotOffset returns the log offset of tb's latest KV
// snapshot.
func (e *Engine) latestKvSnapshotOffset(tb metadata.TableBucket) (int64, bool) {
	e.kvMu.Lock()
	kb := e.kvBuckets[tb]
	e.kvMu.Unlock()
	if kb == nil {
		return 0, false
	}
	kb.mu.Lock()
	defer kb.mu.Unlock()
	n := len(kb.mu.snaps)
	if n == 0 {
		return 0, false
	}
	return kb.mu.snaps[n-1].logOffset, true
}

// expirableLocked counts the leading segments that may go: each older
// than cutoff (ms), ending at or below limit and the high watermark, and
// never the last one. The caller holds mu.
func (t *logTablet) expirableLocked(cutoff, limit int64) int {
	hw := t.hw.Load()
	n := 0
	for n < len(t.mu.segments)-1 {
		seg := t.mu.segments[n]
		if seg.times.max >= cutoff || seg.next > limit || seg.next > hw {
			break
		}
		n++
	}
	return n
}

func (t *logTablet) expirable(cutoff, limit int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return 0
	}
	return t.expirableLocked(cutoff, limit)
}

// expire removes the segments expirableLocked allows and advances the log
// start offset. The files are removed oldest first, so a crash part way
// leaves a log that starts at a segment boundary.
func (t *logTablet) expire(cutoff, limit int64) (int, error) {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return 0, nil
	}
	n := t.expirableLocked(cutoff, limit)
	if n == 0 {
		t.mu.Unlock()
		return 0, nil
	}
	gone := slices.Clone(t.mu.segments[:n])
	t.mu.segments = slices.Clone(t.mu.segments[n:])
	t.logStart.Store(t.mu.segments[0].base)
	t.mu.Unlock()

	var errs []error
	for _, seg := range gone {
		// Readers may still hold the segment: its descriptor must
		// outlive its name.
		if err := seg.keepOpen(); err != nil {
			t.logger.Warn("a reader of an expired segment may fail", "segment", seg.rel, "err", err)
		}
		for _, name := range []string{seg.logPath, filepath.Join(t.dir, segmentName(seg.base, ".index"))} {
			if err := t.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s: %w", seg.rel, err))
			}
		}
		// The list's reference; readers holding the segment keep its
		// files open until they close.
		seg.unref()
	}
	if t.opts.Sync {
		if err := t.fs.SyncDir(t.dir); err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", t.rel, err))
		}
	}
	return n, errors.Join(errs...)
}
