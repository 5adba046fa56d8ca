package storage

import (
	"context"
	"fmt"
	"sort"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// The sparse time index finds the first batch of a log committed at or
// after a timestamp without scanning the log, as Kafka's time index does.
// Commit timestamps come from the clock and never decrease while it does
// not step back; when it does, the log is not sorted by time, so an entry
// records the newest timestamp up to its place in the log rather than the
// timestamp of the batch there:
//
//   - an entry (ts, offset, pos) says that no batch at or before offset
//     was committed after ts, and that the batch at offset (at byte pos of
//     the segment) was committed at ts;
//   - a segment gains an entry where its offset index does, and only when
//     its newest timestamp grew since the last entry, so the entries'
//     timestamps strictly increase within a segment.
//
// A lookup of T takes the last entry with ts < T: every batch up to its
// offset is older than T, so the first batch at or after T lies after it,
// and no later than the next entry's offset. With a clock that does not
// step back that is at most one index interval of batch headers to read.

// timeIndexEntry is one entry of a segment's time index.
type timeIndexEntry struct {
	ts     int64 // ms: the newest commit timestamp up to offset
	offset int64 // the batch that first reached ts
	pos    int64 // its byte position in the segment
}

// segmentTimes is the newest commit timestamp of a segment's batches and
// the batch that first reached it; seen is false before the first batch.
type segmentTimes struct {
	max, offset, pos int64
	seen             bool
}

// maxOr returns the newest timestamp, or none when no batch was seen.
func (t segmentTimes) maxOr(none int64) int64 {
	if !t.seen {
		return none
	}
	return t.max
}

// noteBatch records a whole batch at byte pos, base offset off, committed
// at ts; indexed says whether the offset index gained an entry for it. The
// caller holds the tablet's mu (or recovers the segment alone).
func (s *segment) noteBatch(ts, off, pos int64, indexed bool) {
	if !s.times.seen || ts > s.times.max {
		s.times = segmentTimes{max: ts, offset: off, pos: pos, seen: true}
	}
	if n := len(s.timeIndex); indexed && (n == 0 || s.times.max > s.timeIndex[n-1].ts) {
		s.timeIndex = append(s.timeIndex, timeIndexEntry{ts: s.times.max, offset: s.times.offset, pos: s.times.pos})
	}
}

// retimeLocked makes seg's time index and newest timestamp right again
// after truncateTo cut the segment back to seg.next: entries at or after
// the cut go, and the batches after the last entry left are read again
// for the newest timestamp. The caller holds mu.
func (t *logTablet) retimeLocked(seg *segment) error {
	keep := sort.Search(len(seg.timeIndex), func(i int) bool { return seg.timeIndex[i].offset >= seg.next })
	seg.timeIndex = seg.timeIndex[:keep]
	seg.times = segmentTimes{}
	var pos int64
	if keep > 0 {
		last := seg.timeIndex[keep-1]
		seg.times = segmentTimes{max: last.ts, offset: last.offset, pos: last.pos, seen: true}
		pos = last.pos
	}
	hdr := make([]byte, logformat.HeaderSize)
	for pos < seg.size {
		if _, err := seg.f.ReadAt(hdr, pos); err != nil {
			return fmt.Errorf("read segment %s at byte %d: %w", seg.rel, pos, err)
		}
		h, err := logformat.ParseHeader(hdr)
		if err != nil {
			return fmt.Errorf("segment %s at byte %d: %w", seg.rel, pos, err)
		}
		seg.noteBatch(h.CommitTimestamp, h.BaseOffset, pos, false)
		pos += h.Size()
	}
	return nil
}

// offsetForTimestamp returns the first offset below the high watermark
// whose batch was committed at or after ts (ms), or the high watermark
// when there is none. Segments are found by binary search on their
// newest timestamps, then the batch through the segment's time index.
func (t *logTablet) offsetForTimestamp(ts int64) (int64, error) {
	snap, err := t.snapshot()
	if err != nil {
		return 0, err
	}
	defer snap.release()
	segs := snap.segs
	i := sort.Search(len(segs), func(i int) bool { return segs[i].upTo >= ts })
	for ; i < len(segs); i++ {
		sv := segs[i]
		if sv.seg.base >= snap.hw {
			break
		}
		if sv.maxTimestamp < ts {
			// Newer batches before it in the snapshot raised upTo; none
			// of its own is late enough.
			continue
		}
		off, found, err := sv.offsetForTimestamp(ts, snap.hw)
		if err != nil {
			return 0, err
		}
		if found {
			return off, nil
		}
	}
	return snap.hw, nil
}

// offsetForTimestamp finds the first batch of the segment below hw
// committed at or after ts: from the last time index entry older than ts,
// it reads batch headers until one is late enough.
func (sv segmentView) offsetForTimestamp(ts, hw int64) (int64, bool, error) {
	te := sv.timeIndex
	j := sort.Search(len(te), func(j int) bool { return te[j].ts >= ts })
	var pos int64
	if j > 0 {
		pos = te[j-1].pos
	}
	hdr := make([]byte, logformat.HeaderSize)
	for pos < sv.size {
		if _, err := sv.seg.f.ReadAt(hdr, pos); err != nil {
			return 0, false, fmt.Errorf("read segment %s at byte %d: %w", sv.seg.rel, pos, err)
		}
		h, err := logformat.ParseHeader(hdr)
		if err != nil {
			return 0, false, fmt.Errorf("segment %s at byte %d: %w", sv.seg.rel, pos, err)
		}
		if h.BaseOffset >= hw {
			return hw, true, nil
		}
		if h.CommitTimestamp >= ts {
			return h.BaseOffset, true, nil
		}
		pos += h.Size()
	}
	return 0, false, nil
}

// OffsetsForTimestamp returns, for each bucket, the first offset whose
// batch was committed at or after ts (milliseconds since the epoch):
// Fluss's ListOffsets by timestamp. A bucket with no such batch below its
// high watermark gets the high watermark; a bucket never written to, 0.
// The answer is never below the log start offset: a batch TTL removed is
// not found. Finding the offset reads no more than one index interval of
// batch headers per bucket while the clock has not stepped back.
func (e *Engine) OffsetsForTimestamp(ctx context.Context, buckets []metadata.TableBucket, ts int64) (map[metadata.TableBucket]int64, error) {
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	out := make(map[metadata.TableBucket]int64, len(buckets))
	for _, tb := range buckets {
		if err := checkBucket(cat, tb); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := e.tablet(tb)
		if t == nil {
			out[tb] = 0
			continue
		}
		off, err := t.offsetForTimestamp(ts)
		if err != nil {
			return nil, fmt.Errorf("offset for timestamp %d of %s: %w", ts, tb, err)
		}
		out[tb] = off
	}
	return out, nil
}
