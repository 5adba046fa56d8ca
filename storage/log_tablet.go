package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// indexEntrySize is one sparse index entry: the batch's base offset
// relative to the segment's base (uint32 LE), then its byte position in
// the segment (uint32 LE).
const indexEntrySize = 8

type indexEntry struct {
	offset int64 // absolute base offset of a batch
	pos    int64 // its position in the segment
}

// segment is one .log file of a tablet and its sparse offset index.
type segment struct {
	base    int64  // offset of its first batch; its file name
	logPath string // full path
	rel     string // path relative to the data directory, for messages
	f       File

	// Guarded by the tablet's mu; readers work from a snapshot.
	size     int64 // bytes of whole batches
	next     int64 // offset after its last batch
	index    []indexEntry
	sinceIdx int64 // bytes written since the last index entry
	// damage, set during recovery, describes the first damaged place of
	// the segment; reads of offsets below next that its whole batches do
	// not hold fail with it.
	damage string
	// damagePos is the byte position damage names: a cut below it (the
	// journal replaying a commit over a tail never fsynced) removes it.
	damagePos int64
	// maxTimestamp is the newest commit timestamp (ms) of its batches;
	// TTL expiry compares it. A roll back may leave it too new, which
	// only delays expiry.
	maxTimestamp int64

	// refs counts the holders of the open files: the tablet's segment
	// list (one reference while the segment is in it) and every reader
	// snapshot that includes it. The files close when it reaches zero,
	// so a segment removed by expiry stays readable by the readers that
	// pinned it before.
	refs atomic.Int32

	// verified holds the positions of the large batches whose CRC a
	// reader has checked: their bytes are committed and never change, so
	// a later read that needs only some columns reads only those
	// (LogReader.readProjected).
	verifiedMu sync.Mutex
	verified   map[int64]struct{}
	closeOnce  sync.Once
	closeErr   error
}

func segmentName(base int64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

// logTablet is the log of one bucket: a directory of segments holding
// record batches with dense offsets from logStart. One writer at a time
// holds mu; readers take a snapshot of the segments and the high
// watermark and read without locks (bytes below the high watermark never
// change).
type logTablet struct {
	tb     metadata.TableBucket
	dir    string // full path
	rel    string // relative to the data directory
	fs     FS
	opts   *Options
	logger *slog.Logger

	mu struct {
		sync.Mutex
		segments []*segment
		leo      int64 // log end offset: the next offset to write
		closed   bool
	}
	// hw is the high watermark: the exclusive end of committed records.
	// Readers never read at or past it.
	hw atomic.Int64
	// logStart is the first offset still in the log: the base offset of
	// the oldest segment (expiry removes whole segments from the front).
	// Written under mu.
	logStart atomic.Int64
	// acked is the end of the acknowledged data Open knew of when it
	// recovered the tablet (checkpoint.go): a bad batch below it is
	// damage, never a torn tail.
	acked int64
	// damaged is set by Open, before the tablet is used, when the log
	// lost acknowledged data: reads fail with it and writes are refused.
	damaged error
}

// tabletSnapshot is what a reader reads: the segments with their sizes
// at snapshot time, and the pinned high watermark.
type tabletSnapshot struct {
	segs     []segmentView
	hw       int64
	logStart int64
}

// release drops the snapshot's references to its segments and forgets
// them, so a second call does nothing.
func (s *tabletSnapshot) release() {
	for _, sv := range s.segs {
		sv.seg.unref()
	}
	s.segs = nil
}

type segmentView struct {
	seg   *segment
	size  int64
	next  int64
	index []indexEntry
}

func (t *logTablet) snapshot() (tabletSnapshot, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return tabletSnapshot{}, fmt.Errorf("log of %s: %w", t.tb, metadata.ErrClosed)
	}
	if t.damaged != nil {
		return tabletSnapshot{}, t.damaged
	}
	s := tabletSnapshot{hw: t.hw.Load(), logStart: t.logStart.Load()}
	for _, seg := range t.mu.segments {
		// The list holds a reference, so refs is above zero here.
		seg.refs.Add(1)
		s.segs = append(s.segs, segmentView{seg: seg, size: seg.size, next: seg.next, index: seg.index[:len(seg.index):len(seg.index)]})
	}
	return s, nil
}

// openTablet opens (creating when asked) the tablet in dir and recovers
// it: every segment is scanned, a torn tail is truncated, and corruption
// inside a segment is logged (reads of it fail with ErrCorrupt).
func openTablet(fsys FS, opts *Options, root string, tb metadata.TableBucket, rel string) (*logTablet, error) {
	return recoverTablet(fsys, opts, root, tb, rel, 0)
}

// recoverTablet is openTablet for a bucket whose offsets below acked
// were acknowledged: a bad last batch there is kept as damage.
func recoverTablet(fsys FS, opts *Options, root string, tb metadata.TableBucket, rel string, acked int64) (*logTablet, error) {
	t := &logTablet{tb: tb, dir: filepath.Join(root, rel), rel: rel, fs: fsys, opts: opts, logger: opts.Logger, acked: acked}
	if err := fsys.MkdirAll(t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log directory %s: %w", rel, err)
	}
	entries, err := fsys.ReadDir(t.dir)
	if err != nil {
		return nil, fmt.Errorf("list log directory %s: %w", rel, err)
	}
	var (
		bases   []int64
		indexes []string
		logs    = map[string]bool{}
	)
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".index") {
			indexes = append(indexes, name)
			continue
		}
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		base, ok := parseOwnedFile(name, ".log")
		if !ok {
			t.logger.Warn("ignoring a stray file in a log directory", "file", filepath.Join(rel, name))
			continue
		}
		logs[strings.TrimSuffix(name, ".log")] = true
		bases = append(bases, base)
	}
	slices.Sort(bases)
	for _, name := range indexes {
		// An index without its segment: expiry removed the segment and
		// stopped (crashed) before the index.
		if _, own := parseOwnedFile(name, ".index"); own && !logs[strings.TrimSuffix(name, ".index")] {
			_ = fsys.Remove(filepath.Join(t.dir, name))
		}
	}
	for i, base := range bases {
		seg, err := t.openSegment(base, false)
		if err != nil {
			t.closeFiles()
			return nil, err
		}
		if i > 0 {
			prev := t.mu.segments[len(t.mu.segments)-1]
			switch {
			case prev.next > base:
				t.closeFiles()
				seg.close()
				return nil, fmt.Errorf("%w: %s starts at offset %d inside the segment before it, which ends at %d", metadata.ErrCorrupt, seg.rel, base, prev.next)
			case prev.next < base:
				// Offsets [prev.next, base) are lost to damage (or a
				// missing file); reads of them report it.
				if prev.damage == "" {
					prev.damage, prev.damagePos = fmt.Sprintf("offsets %d to %d are missing", prev.next, base-1), prev.size
				}
				t.logger.Error("log offsets unreadable", "segment", prev.rel, "from", prev.next, "to", base)
				prev.next = base
			}
		}
		t.mu.segments = append(t.mu.segments, seg)
		if err := t.recoverSegment(seg, i == len(bases)-1); err != nil {
			t.closeFiles()
			return nil, err
		}
	}
	if len(t.mu.segments) == 0 {
		seg, err := t.openSegment(0, true)
		if err != nil {
			return nil, err
		}
		t.mu.segments = append(t.mu.segments, seg)
		if opts.Sync {
			if err := fsys.SyncDir(t.dir); err != nil {
				t.closeFiles()
				return nil, fmt.Errorf("create segment in %s: %w", rel, err)
			}
		}
	}
	last := t.mu.segments[len(t.mu.segments)-1]
	t.mu.leo = last.next
	// Expiry removes whole segments oldest first, so the oldest segment
	// left is where the log starts: the log start offset needs no other
	// record.
	t.logStart.Store(t.mu.segments[0].base)
	// Everything that survived recovery was written by a statement that
	// completed (or was lost whole in the torn tail): committed.
	t.hw.Store(t.mu.leo)
	return t, nil
}

func (t *logTablet) openSegment(base int64, create bool) (*segment, error) {
	seg := &segment{
		base:    base,
		logPath: filepath.Join(t.dir, segmentName(base, ".log")),
		rel:     filepath.Join(t.rel, segmentName(base, ".log")),
		next:    base,
	}
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := t.openSegmentFile(seg.logPath, flag)
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", seg.rel, err)
	}
	seg.f = f
	seg.refs.Store(1)
	return seg, nil
}

// recoverSegment scans every batch of seg (header and CRC), rebuilding
// its sparse index. In the last segment a torn tail (a batch cut short, a
// length past the end of the file, or a bad last batch) is truncated away:
// it is a write that never completed. Anything else that fails its checks
// is damage: it is logged, kept on disk, and recorded in seg.damage so
// that reads of the offsets it holds fail with ErrCorrupt naming the file
// and position. Batches after a damaged one stay readable when its length
// field still leads to them.
func (t *logTablet) recoverSegment(seg *segment, last bool) error {
	st, err := seg.f.Stat()
	if err != nil {
		return fmt.Errorf("stat segment %s: %w", seg.rel, err)
	}
	fileSize := st.Size()
	var (
		pos      int64
		expected = seg.base // -1 after a damaged batch: unknown
		hdr      = make([]byte, logformat.HeaderSize)
		buf      []byte
		sinceIdx int64
		index    []indexEntry
	)
	damage := func(at int64, why string) {
		t.logger.Error("corrupt log batch", "segment", seg.rel, "position", at, "err", why)
		if seg.damage == "" {
			seg.damage, seg.damagePos = fmt.Sprintf("byte %d: %s", at, why), at
		}
	}
	for pos < fileSize {
		// torn handles a batch whose end cannot be found, or a bad last
		// batch. Only a batch past every acknowledged offset can be a
		// write that never completed (after damage, the offsets after
		// the last whole batch are the bound).
		torn := func(why string) error {
			from := expected
			if from < 0 {
				from = seg.next
			}
			if !last || from < t.acked {
				damage(pos, why)
				return nil
			}
			t.logger.Warn("truncating a torn log tail", "segment", seg.rel, "position", pos, "bytes", fileSize-pos, "reason", why)
			if err := seg.f.Truncate(pos); err != nil {
				return fmt.Errorf("truncate torn tail of %s: %w", seg.rel, err)
			}
			if t.opts.Sync {
				if err := seg.f.Sync(); err != nil {
					return fmt.Errorf("truncate torn tail of %s: %w", seg.rel, err)
				}
			}
			fileSize = pos
			return nil
		}
		if fileSize-pos < logformat.HeaderSize {
			if err := torn("batch header cut short"); err != nil {
				return err
			}
			break
		}
		if _, err := seg.f.ReadAt(hdr, pos); err != nil {
			return fmt.Errorf("read segment %s at byte %d: %w", seg.rel, pos, err)
		}
		h, err := logformat.ParseHeader(hdr)
		if err != nil || pos+h.Size() > fileSize {
			why := "batch runs past the end of the file"
			if err != nil {
				why = err.Error()
			}
			// A torn write is the last thing in the log: when a whole
			// batch follows, the header was damaged instead, and
			// truncating would throw away every good batch after it.
			if last {
				next, ok, err := findBatch(seg, pos, fileSize, expected)
				if err != nil {
					return err
				}
				if ok {
					damage(pos, why)
					expected = -1
					pos = next
					// An index entry at the next batch keeps the
					// batches after the damage readable: a read cannot
					// step over a header it does not trust.
					sinceIdx = int64(t.opts.IndexIntervalBytes)
					continue
				}
			}
			if err := torn(why); err != nil {
				return err
			}
			break
		}
		size := h.Size()
		if int64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		b := buf[:size]
		if _, err := seg.f.ReadAt(b, pos); err != nil {
			return fmt.Errorf("read segment %s at byte %d: %w", seg.rel, pos, err)
		}
		err = logformat.CheckCRC(h, b)
		if err == nil && expected >= 0 && h.BaseOffset != expected {
			err = fmt.Errorf("%w: base offset %d, want %d", metadata.ErrCorrupt, h.BaseOffset, expected)
		}
		if err != nil && last && pos+size == fileSize {
			if err := torn(err.Error()); err != nil {
				return err
			}
			break
		}
		if err != nil {
			// Whole batches follow: damage inside the log, not an
			// interrupted write. Its header is untrusted, so it gets no
			// index entry and the next batch's base offset is believed.
			damage(pos, err.Error())
			expected = -1
		} else {
			if pos == 0 || sinceIdx >= int64(t.opts.IndexIntervalBytes) {
				index = append(index, indexEntry{offset: h.BaseOffset, pos: pos})
				sinceIdx = 0
			}
			expected = h.NextOffset()
			seg.next = expected
			seg.maxTimestamp = max(seg.maxTimestamp, h.CommitTimestamp)
		}
		sinceIdx += size
		pos += size
	}
	if expected < 0 && seg.damage == "" {
		seg.damage, seg.damagePos = "damaged last batch", pos
	}
	seg.size = pos
	seg.index = index
	seg.sinceIdx = sinceIdx
	t.writeIndex(seg)
	return nil
}

// findBatch looks for a whole batch with a good CRC that starts after the
// bad header at from and, when expected (the bad batch's base offset) is
// known, holds later offsets. It reads the rest of the segment, which is
// short after a torn write, the only common reason to get here.
func findBatch(seg *segment, from, fileSize, expected int64) (int64, bool, error) {
	rest := make([]byte, fileSize-from-1)
	if _, err := seg.f.ReadAt(rest, from+1); err != nil && !errors.Is(err, io.EOF) {
		return 0, false, fmt.Errorf("read segment %s at byte %d: %w", seg.rel, from+1, err)
	}
	for i := 0; i+logformat.HeaderSize <= len(rest); i++ {
		if int8(rest[i+logformat.LengthFieldEnd]) != logformat.Magic {
			continue
		}
		h, err := logformat.ParseHeader(rest[i:])
		if err != nil || int64(i)+h.Size() > int64(len(rest)) || (expected >= 0 && h.BaseOffset <= expected) {
			continue
		}
		if logformat.CheckCRC(h, rest[i:int64(i)+h.Size()]) == nil {
			return from + 1 + int64(i), true, nil
		}
	}
	return 0, false, nil
}

// writeIndex rewrites seg's .index file when it differs from the index
// in memory (missing, stale or torn). The file is written when a segment
// is recovered, rolled, cut back or closed, and is not held open between:
// an engine with many buckets would otherwise hold two files per bucket.
// It is an optimisation only (recovery rebuilds the index from the
// segment), so failing to write it is logged, not returned.
func (t *logTablet) writeIndex(seg *segment) {
	want := encodeIndex(seg.base, seg.index)
	name := filepath.Join(t.dir, segmentName(seg.base, ".index"))
	f, err := t.fs.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.logger.Warn("could not write log index", "segment", seg.rel, "err", err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.Size() == int64(len(want)) {
		have := make([]byte, len(want))
		if _, err := f.ReadAt(have, 0); (err == nil || errors.Is(err, io.EOF)) && bytes.Equal(have, want) {
			return
		}
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(want, 0)
	}
	if err != nil {
		t.logger.Warn("could not write log index", "segment", seg.rel, "err", err)
	}
}

func encodeIndex(base int64, index []indexEntry) []byte {
	out := make([]byte, 0, len(index)*indexEntrySize)
	for _, e := range index {
		out = binary.LittleEndian.AppendUint32(out, uint32(e.offset-base))
		out = binary.LittleEndian.AppendUint32(out, uint32(e.pos))
	}
	return out
}

// tabletMark is where a tablet stood before a statement wrote to it, to
// roll the statement back.
type tabletMark struct {
	segments int
	size     int64
	next     int64
	index    int
	sinceIdx int64
	leo      int64
}

func (t *logTablet) markLocked() tabletMark {
	seg := t.mu.segments[len(t.mu.segments)-1]
	return tabletMark{segments: len(t.mu.segments), size: seg.size, next: seg.next, index: len(seg.index), sinceIdx: seg.sinceIdx, leo: t.mu.leo}
}

// appendLocked writes one encoded batch at the log end, rolling the
// segment first when it is full. It returns the segment written. The
// batch is not visible until the caller advances the high watermark.
func (t *logTablet) appendLocked(batch []byte) (*segment, error) {
	if t.mu.closed {
		return nil, fmt.Errorf("log of %s: %w", t.tb, metadata.ErrClosed)
	}
	if t.damaged != nil {
		return nil, t.damaged
	}
	h, err := logformat.ParseHeader(batch)
	if err != nil {
		return nil, err
	}
	seg := t.mu.segments[len(t.mu.segments)-1]
	if seg.size > 0 && seg.size+int64(len(batch)) > t.opts.SegmentBytes {
		if seg, err = t.rollLocked(); err != nil {
			return nil, err
		}
	}
	logformat.SetBaseOffset(batch, t.mu.leo)
	if _, err := seg.f.WriteAt(batch, seg.size); err != nil {
		return nil, fmt.Errorf("append to %s: %w", seg.rel, err)
	}
	if seg.size == 0 || seg.sinceIdx >= int64(t.opts.IndexIntervalBytes) {
		e := indexEntry{offset: t.mu.leo, pos: seg.size}
		seg.index = append(seg.index, e)
		seg.sinceIdx = 0
	}
	seg.sinceIdx += int64(len(batch))
	seg.size += int64(len(batch))
	seg.maxTimestamp = max(seg.maxTimestamp, h.CommitTimestamp)
	t.mu.leo += int64(h.LastOffsetDelta) + 1
	seg.next = t.mu.leo
	return seg, nil
}

func (t *logTablet) rollLocked() (*segment, error) {
	// The segment being sealed gets its index file now; a roll back that
	// removes the new segment leaves it right.
	t.writeIndex(t.mu.segments[len(t.mu.segments)-1])
	seg, err := t.openSegment(t.mu.leo, true)
	if err != nil {
		return nil, err
	}
	t.mu.segments = append(t.mu.segments, seg)
	return seg, nil
}

// rollbackLocked undoes everything written since m: segments created
// after it are removed, the active one truncated back.
func (t *logTablet) rollbackLocked(m tabletMark) error {
	var errs []error
	for _, seg := range t.mu.segments[m.segments:] {
		// No reader snapshot includes these: they were created under mu,
		// which the statement holds until now.
		seg.unref()
		errs = append(errs, t.fs.Remove(seg.logPath))
		if err := t.fs.Remove(filepath.Join(t.dir, segmentName(seg.base, ".index"))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	t.mu.segments = t.mu.segments[:m.segments]
	seg := t.mu.segments[len(t.mu.segments)-1]
	if err := seg.f.Truncate(m.size); err != nil {
		errs = append(errs, fmt.Errorf("roll back %s: %w", seg.rel, err))
	}
	seg.size, seg.next, seg.sinceIdx = m.size, m.next, m.sinceIdx
	seg.index = seg.index[:m.index]
	t.mu.leo = m.leo
	return errors.Join(errs...)
}

// close closes the segment's files once, whoever asks first.
func (s *segment) close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.f.Close()
	})
	return s.closeErr
}

// unref drops one reference; the last closes the files.
func (s *segment) unref() {
	if s.refs.Add(-1) == 0 {
		s.close()
	}
}

func (t *logTablet) closeFiles() error {
	var errs []error
	if n := len(t.mu.segments); n > 0 {
		t.writeIndex(t.mu.segments[n-1])
	}
	for _, seg := range t.mu.segments {
		errs = append(errs, seg.close())
	}
	t.mu.segments = nil
	return errors.Join(errs...)
}

// dropped closes the tablet for good when its table or partition is
// dropped: no more writes or snapshots, and the segment list gives up
// its references instead of closing the files, so a reader that pinned a
// snapshot before the drop reads on until it releases it. Nothing is
// flushed: the files are about to be removed.
func (t *logTablet) dropped() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return
	}
	t.mu.closed = true
	for _, seg := range t.mu.segments {
		// A reader holds the segment besides the list (snapshots take
		// their references under mu, so none is taken meanwhile): the
		// descriptor must outlive the name the drop removes next, or the
		// file cache, having closed it, could not open it again.
		if seg.refs.Load() > 1 {
			if err := seg.keepOpen(); err != nil {
				t.logger.Warn("a reader of a dropped segment may fail", "segment", seg.rel, "err", err)
			}
		}
		seg.unref()
	}
	t.mu.segments = nil
}

// close closes the tablet's files. Idempotent.
func (t *logTablet) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return nil
	}
	t.mu.closed = true
	return t.closeFiles()
}

// truncateTo cuts the log back so that it ends at offset off, a batch
// boundary: recovery removes with it the batches of a commit that never
// reached its commit point. Segments starting after off are removed and
// the one holding off is truncated at that batch. Nothing changes when
// the log already ends at or before off.
func (t *logTablet) truncateTo(off int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return fmt.Errorf("log of %s: %w", t.tb, metadata.ErrClosed)
	}
	if t.mu.leo <= off {
		return nil
	}
	if off < t.logStart.Load() {
		return fmt.Errorf("%w: %s: cannot cut the log at offset %d before its start %d", metadata.ErrCorrupt, t.tb, off, t.logStart.Load())
	}
	keep := len(t.mu.segments)
	for keep > 1 && t.mu.segments[keep-1].base > off {
		keep--
	}
	seg := t.mu.segments[keep-1]
	pos, idx, err := t.batchPosition(seg, off)
	if err != nil {
		return err
	}
	var errs []error
	for _, gone := range t.mu.segments[keep:] {
		gone.unref()
		for _, name := range []string{gone.logPath, filepath.Join(t.dir, segmentName(gone.base, ".index"))} {
			if err := t.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s: %w", gone.rel, err))
			}
		}
	}
	removed := len(t.mu.segments) > keep
	t.mu.segments = t.mu.segments[:keep]
	if err := seg.f.Truncate(pos); err != nil {
		errs = append(errs, fmt.Errorf("truncate %s: %w", seg.rel, err))
	} else if t.opts.Sync {
		if err := seg.f.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", seg.rel, err))
		}
	}
	if removed && t.opts.Sync {
		if err := t.fs.SyncDir(t.dir); err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", t.rel, err))
		}
	}
	seg.size, seg.next = pos, off
	if seg.damage != "" && seg.damagePos >= pos {
		seg.damage = ""
	}
	seg.index = seg.index[:idx]
	seg.sinceIdx = pos
	if idx > 0 {
		seg.sinceIdx = pos - seg.index[idx-1].pos
	}
	t.writeIndex(seg)
	t.mu.leo = off
	t.hw.Store(off)
	return errors.Join(errs...)
}

// holdsBatch reports whether the log holds batch b, byte for byte, at
// offset off. Bytes that are not a batch there (damage, or a tail never
// fsynced) are not b.
func (t *logTablet) holdsBatch(off int64, b []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var seg *segment
	for _, s := range t.mu.segments {
		if s.base <= off && off < s.next {
			seg = s
		}
	}
	if seg == nil {
		return false, nil
	}
	pos, _, err := t.batchPosition(seg, off)
	if errors.Is(err, metadata.ErrCorrupt) {
		return false, nil
	}
	if err != nil || pos+int64(len(b)) > seg.size {
		return false, err
	}
	got := make([]byte, len(b))
	if _, err := seg.f.ReadAt(got, pos); err != nil {
		return false, fmt.Errorf("read segment %s at byte %d: %w", seg.rel, pos, err)
	}
	return bytes.Equal(got, b), nil
}

// replay appends batches the commit journal gave back at the log end
// and makes them visible: recovery, before the log is read.
func (t *logTablet) replay(batches [][]byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range batches {
		if _, err := t.appendLocked(b); err != nil {
			return err
		}
	}
	t.hw.Store(t.mu.leo)
	return nil
}

// batchPosition finds the byte position in seg of the batch at offset off
// (or the segment's end, when off is where it ends) by walking the batch
// headers from the closest index entry, and how many index entries lie
// before it.
func (t *logTablet) batchPosition(seg *segment, off int64) (pos int64, idx int, err error) {
	cur := seg.base
	for idx < len(seg.index) && seg.index[idx].offset <= off {
		cur, pos = seg.index[idx].offset, seg.index[idx].pos
		idx++
	}
	if idx > 0 && cur == off {
		// The entry itself points at the batch: it goes with it.
		return pos, idx - 1, nil
	}
	hdr := make([]byte, logformat.HeaderSize)
	for cur < off && pos < seg.size {
		if _, err := seg.f.ReadAt(hdr, pos); err != nil {
			return 0, 0, fmt.Errorf("read segment %s at byte %d: %w", seg.rel, pos, err)
		}
		h, err := logformat.ParseHeader(hdr)
		if err != nil {
			return 0, 0, fmt.Errorf("segment %s at byte %d: %w", seg.rel, pos, err)
		}
		cur = h.NextOffset()
		pos += h.Size()
	}
	if cur != off {
		return 0, 0, fmt.Errorf("%w: segment %s has no batch boundary at offset %d", metadata.ErrCorrupt, seg.rel, off)
	}
	return pos, idx, nil
}

// isVerified reports whether the batch at pos was read whole and its CRC
// found good.
func (s *segment) isVerified(pos int64) bool {
	s.verifiedMu.Lock()
	defer s.verifiedMu.Unlock()
	_, ok := s.verified[pos]
	return ok
}

// markVerified records that the batch at pos passed its CRC check.
func (s *segment) markVerified(pos int64) {
	s.verifiedMu.Lock()
	defer s.verifiedMu.Unlock()
	if s.verified == nil {
		s.verified = map[int64]struct{}{}
	}
	s.verified[pos] = struct{}{}
}
