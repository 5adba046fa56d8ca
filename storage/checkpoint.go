package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// The acknowledged-offsets checkpoint, <dir>/acked-offsets, is what lets
// Open tell a write that never completed from damage to data a commit
// acknowledged, as Kafka's recovery-point and log-start checkpoints do.
// Per bucket it records the log start offset, the end offset of
// acknowledged data that is durable, and the fingerprint (CRC and commit
// timestamp) of the batch that ends there. Every recorded value is a
// bound that stays true across a crash: the log may have grown since, and
// its start may have moved up to, never past, the recorded start:
//
//   - the recorded end only covers fsynced log data: with Sync the high
//     watermark read before the segments that redo commits wrote without
//     an fsync are fsynced (every other commit fsyncs its segments before
//     it is visible); without, what a Close fsynced;
//   - DropExpired records the new log start before it removes a segment;
//   - the file is replaced atomically (temporary file, fsync, rename,
//     fsync of the directory) at Open, at Close, every
//     checkpointEveryCommits commits and before expiry.
//
// Open reads it, with the intents of the commit journal that have a done
// record (their end offsets were acknowledged too), before recovering the
// tablets: a bad last batch below the acknowledged end is damage, kept
// and reported, not a torn tail to truncate. After the journal is settled
// it checks every bucket: a bucket whose directory is missing, whose log
// ends before the acknowledged end, starts after the recorded start, or
// whose batch at the acknowledged end is not the one recorded (a
// directory or segment swapped in from elsewhere), and a bucket whose log
// ends below the tiered offset of its table's lake, is damaged: Open
// succeeds, but every read of the bucket fails with ErrCorrupt naming its
// directory and what is missing, and every write to it is refused, so
// no new write takes the offsets of lost data. The damaged bucket keeps its
// recorded entry until the table or partition is dropped.
//
// The format: the magic "FLUSSACK", a format byte (1), uvarint count,
// then per bucket varint table id, varint partition id, uvarint bucket,
// uvarint start, uvarint end, uint32 LE CRC and varint commit timestamp
// of the batch ending at end; a uint32 LE CRC-32C (Castagnoli) of
// everything before it ends the file. A file that does not parse is
// ErrCorrupt naming it: Open fails rather than lose what it records.

const (
	ackedFile    = "acked-offsets"
	ackedTmpFile = "acked-offsets.tmp"
	ackedMagic   = "FLUSSACK"
	ackedFormat  = 1
)

// checkpointEveryCommits is how many commits pass between checkpoints
// written by the commits themselves, so that a process killed long after
// its last Open still leaves a recent bound; a variable for tests.
var checkpointEveryCommits int64 = 256

// ackedRange is one bucket's record in the checkpoint.
type ackedRange struct {
	start, end int64
	// crc and ts fingerprint the batch ending at end; unused when end is
	// 0.
	crc uint32
	ts  int64
}

// checkpointState is the engine's side of the checkpoint.
type checkpointState struct {
	// mu serialises writing the file and guards the fields below.
	mu sync.Mutex
	// loaded is what Open found: the file and the journal's completed
	// commits. Read only after Open.
	loaded map[metadata.TableBucket]ackedRange
	// damaged holds the records of damaged buckets, written unchanged
	// until their table or partition is dropped.
	damaged map[metadata.TableBucket]ackedRange
	// durable is, without Sync, the end each bucket's log was last
	// fsynced to (by Open or Close).
	durable map[metadata.TableBucket]int64
	// floors are log starts DropExpired is about to make true.
	floors map[metadata.TableBucket]int64
	// written is the last record written per bucket, so an unchanged
	// bucket costs no read.
	written map[metadata.TableBucket]ackedRange
	// commits counts commits since the last checkpoint.
	commits atomic.Int64
	// kick asks the checkpointer (checkpointLoop) for a checkpoint.
	// asked counts the checkpoints asked for, and written is the count
	// the last one written covered (waitCheckpoint), guarded by
	// writtenMu.
	kick      chan struct{}
	asked     atomic.Int64
	writtenMu sync.Mutex
	writtenC  sync.Cond
	writtenN  int64
}

func encodeAcked(entries map[metadata.TableBucket]ackedRange) []byte {
	out := append([]byte(ackedMagic), ackedFormat)
	out = binary.AppendUvarint(out, uint64(len(entries)))
	for _, tb := range slices.SortedFunc(maps.Keys(entries), lockOrder) {
		r := entries[tb]
		out = binary.AppendVarint(out, tb.TableID)
		out = binary.AppendVarint(out, tb.PartitionID)
		out = binary.AppendUvarint(out, uint64(tb.Bucket))
		out = binary.AppendUvarint(out, uint64(r.start))
		out = binary.AppendUvarint(out, uint64(r.end))
		out = binary.LittleEndian.AppendUint32(out, r.crc)
		out = binary.AppendVarint(out, r.ts)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

func decodeAcked(b []byte) (map[metadata.TableBucket]ackedRange, error) {
	head := len(ackedMagic) + 1
	if len(b) < head+4 || !bytes.Equal(b[:len(ackedMagic)], []byte(ackedMagic)) {
		return nil, fmt.Errorf("%w: %s: not a checkpoint (%d bytes)", metadata.ErrCorrupt, ackedFile, len(b))
	}
	body := b[:len(b)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return nil, fmt.Errorf("%w: %s: CRC %08x, computed %08x", metadata.ErrCorrupt, ackedFile, want, got)
	}
	if body[len(ackedMagic)] != ackedFormat {
		return nil, fmt.Errorf("%w: %s: unknown format %d", metadata.ErrCorrupt, ackedFile, body[len(ackedMagic)])
	}
	p := body[head:]
	var err error
	uv, sv := varintReaders(&p, &err)
	count := uv()
	if err == nil && count > uint64(len(p)) {
		err = fmt.Errorf("%d buckets in %d bytes", count, len(p))
	}
	out := make(map[metadata.TableBucket]ackedRange, count)
	for i := uint64(0); i < count && err == nil; i++ {
		var tb metadata.TableBucket
		tb.TableID, tb.PartitionID = sv(), sv()
		bucket, start, end := uv(), uv(), uv()
		var r ackedRange
		if err == nil && len(p) < 4 {
			err = errors.New("entry cut short")
		}
		if err == nil {
			r.crc, p = binary.LittleEndian.Uint32(p), p[4:]
		}
		r.ts = sv()
		if err == nil && (bucket > uint64(metadata.MaxBuckets) || start > math.MaxInt64/2 || end > math.MaxInt64/2) {
			err = fmt.Errorf("bucket %d, offsets %d and %d out of range", bucket, start, end)
		}
		tb.Bucket, r.start, r.end = int32(bucket), int64(start), int64(end)
		out[tb] = r
	}
	if err == nil && len(p) != 0 {
		err = fmt.Errorf("%d trailing bytes", len(p))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", metadata.ErrCorrupt, ackedFile, err)
	}
	return out, nil
}

// loadAcked reads the checkpoint and the commits the journal records as
// complete; it runs before the tablets are recovered.
func (e *Engine) loadAcked() error {
	e.ckpt.damaged = map[metadata.TableBucket]ackedRange{}
	e.ckpt.durable = map[metadata.TableBucket]int64{}
	e.ckpt.floors = map[metadata.TableBucket]int64{}
	e.ckpt.written = map[metadata.TableBucket]ackedRange{}
	_ = e.fs.Remove(filepath.Join(e.root, ackedTmpFile))
	loaded := map[metadata.TableBucket]ackedRange{}
	data, err := readWhole(e.fs, filepath.Join(e.root, ackedFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", ackedFile, err)
	default:
		if loaded, err = decodeAcked(data); err != nil {
			return err
		}
	}
	for tb, end := range journalCompleted(e.fs, e.root) {
		if r, ok := loaded[tb]; !ok || r.end < end {
			// The fingerprint belongs to the checkpoint's end; the
			// journal's end only bounds the log's length.
			loaded[tb] = ackedRange{start: loadedStart(loaded, tb), end: end}
		}
	}
	e.ckpt.loaded = loaded
	return nil
}

func loadedStart(m map[metadata.TableBucket]ackedRange, tb metadata.TableBucket) int64 {
	if r, ok := m[tb]; ok {
		return r.start
	}
	return math.MaxInt64
}

// ackedEnd is the end of tb's acknowledged data as Open found it.
func (e *Engine) ackedEnd(tb metadata.TableBucket) int64 {
	return e.ckpt.loaded[tb].end
}

func readWhole(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

// journalCompleted returns, per bucket, the largest end offset of the
// commits the journal holds with an intent and a done record. The
// journal is only read: recoverCommits settles it. A journal that does
// not parse yields what its whole records say (recoverCommits reports
// the damage).
func journalCompleted(fsys FS, root string) map[metadata.TableBucket]int64 {
	data, err := readWhole(fsys, filepath.Join(root, journalFile))
	if err != nil {
		return nil
	}
	intents := map[uint64][]journalEntry{}
	out := map[metadata.TableBucket]int64{}
	for pos := 0; len(data)-pos >= journalHeaderSize; {
		n := int(binary.LittleEndian.Uint32(data[pos:]))
		if n > maxJournalRecord || journalHeaderSize+n > len(data)-pos {
			break
		}
		payload := data[pos+journalHeaderSize : pos+journalHeaderSize+n]
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(data[pos+4:]) {
			break
		}
		kind, id, entries, err := decodeJournalRecord(payload)
		if err != nil {
			break
		}
		switch kind {
		case journalIntent:
			intents[id] = entries
		case journalDone:
			for _, en := range intents[id] {
				out[en.tb] = max(out[en.tb], en.end)
			}
			delete(intents, id)
		case journalAbort:
			delete(intents, id)
		}
		pos += journalHeaderSize + n
	}
	return out
}

// checkAcked checks every bucket against what was acknowledged, after
// the journal is settled and before the KV state is replayed (so that a
// damaged key bucket is not rebuilt from what is left), and writes a new
// checkpoint.
func (e *Engine) checkAcked() error {
	cat := e.mu.cat
	bounds := maps.Clone(e.ckpt.loaded)
	// A lake's tiered offset was in the log when it was tiered, and
	// expiry never passes it: the log reaches it and starts at or below
	// it.
	for id, entry := range cat.byID {
		if entry.Lake == nil {
			continue
		}
		for _, o := range entry.Lake.TieredOffsets {
			tb := metadata.TableBucket{TableID: id, PartitionID: o.PartitionID, Bucket: o.Bucket}
			r, ok := bounds[tb]
			if !ok {
				r = ackedRange{start: math.MaxInt64, end: 0}
			}
			r.start = min(r.start, o.Offset)
			if o.Offset > r.end {
				// The fingerprint is of the batch at the old end.
				r.end, r.crc, r.ts = o.Offset, 0, 0
			}
			bounds[tb] = r
		}
	}
	for _, tb := range slices.SortedFunc(maps.Keys(bounds), lockOrder) {
		if checkBucket(cat, tb) != nil {
			continue // dropped since
		}
		r := bounds[tb]
		t := e.tablets[tb]
		why, err := e.ackedMismatch(t, tb, r)
		if err != nil {
			return err
		}
		if why == "" {
			continue
		}
		derr := fmt.Errorf("%w: log of %s in %s: %s", metadata.ErrCorrupt, tb, tabletDir(tb), why)
		e.opts.Logger.Error("acknowledged log data is missing or damaged", "bucket", tb.String(), "dir", tabletDir(tb), "err", why)
		if t == nil {
			t = damagedTablet(e.fs, &e.opts, e.root, tb, r)
			e.tablets[tb] = t
			e.tabIndex = nil
		}
		t.damaged = derr
		// Planners read up to the acknowledged end, and fail, rather
		// than take the lost offsets for an empty range.
		t.hw.Store(max(t.hw.Load(), r.end))
		keep := e.ckpt.loaded[tb]
		if _, ok := e.ckpt.loaded[tb]; !ok {
			keep = ackedRange{start: min(r.start, r.end), end: r.end}
		}
		e.ckpt.damaged[tb] = keep
	}
	// Buckets that passed keep their fingerprints: an unchanged bucket
	// costs the next checkpoint no read.
	e.ckpt.written = maps.Clone(e.ckpt.loaded)
	// Without Sync only what an earlier Close (or checkpoint) found
	// durable is claimed; this Close fsyncs the rest. With Sync every
	// commit below the high watermark is in a log fsynced since (Open
	// replayed the journal and fsynced what it wrote).
	for tb, t := range e.tablets {
		if t.damaged == nil {
			e.ckpt.durable[tb] = min(t.hw.Load(), e.ckpt.loaded[tb].end)
		}
	}
	if err := e.writeAcked(); err != nil {
		// The previous checkpoint still holds: every bound in it is true.
		e.opts.Logger.Warn("could not write the acknowledged-offsets checkpoint", "err", err)
	}
	return nil
}

// ackedMismatch says how tb's recovered log contradicts r; "" when it
// does not.
func (e *Engine) ackedMismatch(t *logTablet, tb metadata.TableBucket, r ackedRange) (string, error) {
	if t == nil {
		if r.end == 0 {
			return "", nil
		}
		return fmt.Sprintf("the directory is missing, but offsets up to %d were acknowledged", r.end), nil
	}
	t.mu.Lock()
	leo, start := t.mu.leo, t.logStart.Load()
	var damage string
	if n := len(t.mu.segments); n > 0 && t.mu.segments[n-1].damage != "" {
		last := t.mu.segments[n-1]
		damage = fmt.Sprintf(" (%s: %s)", last.rel, last.damage)
	}
	t.mu.Unlock()
	switch {
	case leo < r.end:
		return fmt.Sprintf("the log ends at offset %d, but offsets up to %d were acknowledged%s", leo, r.end, damage), nil
	case start > r.start:
		missing := fmt.Sprintf("segment %s", segmentName(r.start, ".log"))
		return fmt.Sprintf("the log starts at offset %d, but it started at %d: %s and any after it up to %d are missing", start, r.start, missing, start), nil
	}
	if r.end == 0 || (r.crc == 0 && r.ts == 0) {
		return "", nil
	}
	crc, ts, ok, where, err := t.batchEndingAt(r.end)
	if err != nil {
		if errors.Is(err, metadata.ErrCorrupt) {
			return err.Error(), nil
		}
		return "", fmt.Errorf("check log of %s: %w", tb, err)
	}
	switch {
	case !ok:
		return fmt.Sprintf("no batch ends at the acknowledged offset %d (%s)", r.end, where), nil
	case crc != r.crc || ts != r.ts:
		return fmt.Sprintf("the batch ending at offset %d is not the one acknowledged (CRC %08x, commit time %d; recorded %08x, %d): the files are not this bucket's", r.end, crc, ts, r.crc, r.ts), nil
	}
	return "", nil
}

// damagedTablet stands for a bucket whose directory is missing: it has
// no segments, every read fails and every write is refused, and its high
// watermark is the acknowledged end, so that planners read it (and fail)
// rather than take it for empty.
func damagedTablet(fsys FS, opts *Options, root string, tb metadata.TableBucket, r ackedRange) *logTablet {
	rel := tabletDir(tb)
	t := &logTablet{tb: tb, dir: filepath.Join(root, rel), rel: rel, fs: fsys, opts: opts, logger: opts.Logger}
	t.mu.leo = r.end
	t.hw.Store(r.end)
	t.logStart.Store(min(r.start, r.end))
	return t
}

// syncFrom fsyncs the segments holding offsets at or past from.
func (t *logTablet) syncFrom(from int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, seg := range t.mu.segments {
		if seg.next > from {
			if err := seg.f.Sync(); err != nil {
				return fmt.Errorf("sync %s: %w", seg.rel, err)
			}
		}
	}
	return nil
}

// batchEndingAt finds the batch of the log that ends at offset end and
// returns its CRC and commit timestamp; ok is false when no batch ends
// there.
func (t *logTablet) batchEndingAt(end int64) (crc uint32, ts int64, ok bool, where string, err error) {
	snap, err := t.snapshot()
	if err != nil {
		return 0, 0, false, "", err
	}
	defer snap.release()
	for _, sv := range snap.segs {
		if sv.seg.base >= end || sv.next < end {
			continue
		}
		var pos int64
		for _, ie := range sv.index {
			if ie.offset >= end {
				break
			}
			pos = ie.pos
		}
		hdr := make([]byte, logformat.HeaderSize)
		for pos < sv.size {
			if _, err := sv.seg.f.ReadAt(hdr, pos); err != nil {
				return 0, 0, false, "", fmt.Errorf("read segment %s at byte %d: %w", sv.seg.rel, pos, err)
			}
			h, err := logformat.ParseHeader(hdr)
			if err != nil {
				return 0, 0, false, "", fmt.Errorf("segment %s at byte %d: %w", sv.seg.rel, pos, err)
			}
			if h.NextOffset() == end {
				return h.CRC, h.CommitTimestamp, true, "", nil
			}
			// Stepping by length alone walks past a batch whose
			// offsets were damaged (recovery reported it).
			pos += h.Size()
		}
		where = sv.seg.rel
		if sv.seg.damage != "" {
			where += ": " + sv.seg.damage
		}
	}
	return 0, 0, false, where, nil
}

// writeAcked writes the checkpoint: every bucket's start and durable end
// with its fingerprint, and the records of damaged buckets unchanged.
func (e *Engine) writeAcked() error {
	e.ckpt.mu.Lock()
	defer e.ckpt.mu.Unlock()
	e.ckpt.commits.Store(0)
	e.tabletsMu.Lock()
	tablets := slices.Collect(maps.Values(e.tablets))
	e.tabletsMu.Unlock()
	// The high watermarks first, then the fsync of what redo commits
	// wrote without one: every commit below a watermark read here
	// handed its segments to the journal before it moved the watermark.
	hws := make([]int64, len(tablets))
	for i, t := range tablets {
		hws[i] = t.hw.Load()
	}
	if e.journal != nil {
		if err := e.journal.flushDeferred(); err != nil {
			return err
		}
	}
	entries := make(map[metadata.TableBucket]ackedRange, len(tablets))
	for i, t := range tablets {
		tb := t.tb
		if t.damaged != nil {
			if r, ok := e.ckpt.damaged[tb]; ok {
				entries[tb] = r
			}
			continue
		}
		r := ackedRange{start: t.logStart.Load(), end: hws[i]}
		if f, ok := e.ckpt.floors[tb]; ok {
			r.start = max(r.start, f)
		}
		if !e.opts.Sync {
			// Commits are not fsynced: only what Open or Close made
			// durable is claimed.
			r.end = min(r.end, e.ckpt.durable[tb])
		}
		if old, ok := e.ckpt.written[tb]; ok && old.end == r.end && r.end > 0 && (old.crc != 0 || old.ts != 0) {
			r.crc, r.ts = old.crc, old.ts
		} else if r.end > 0 {
			crc, ts, ok, _, err := t.batchEndingAt(r.end)
			if err != nil || !ok {
				// A log closed under the writer, or dropped: no record
				// rather than a wrong one.
				continue
			}
			r.crc, r.ts = crc, ts
		}
		if r.end == 0 && r.start == 0 {
			continue
		}
		entries[tb] = r
	}
	if err := writeFileAtomic(e.fs, e.root, ackedFile, ackedTmpFile, encodeAcked(entries), true); err != nil {
		return err
	}
	e.ckpt.written = entries
	return nil
}

// writeFileAtomic replaces name in dir with data: a temporary file,
// fsync, rename, and with syncDir an fsync of the directory. The bytes
// are fsynced whatever the caller's durability: a power loss may keep a
// rename and drop the bytes of a file never synced, and an empty
// catalog or checkpoint would read as damage.
func writeFileAtomic(fsys FS, dir, name, tmpName string, data []byte, syncDir bool) error {
	tmp := filepath.Join(dir, tmpName)
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil && syncDir {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// closeAcked writes the checkpoint at Close, with every log made durable
// first (when commits were not fsynced, or redo commits deferred their
// fsyncs), and empties the commit journal. An engine that failed a write
// keeps the previous checkpoint: its logs' state on disk is unknown,
// and every bound the old file holds is still true.
func (e *Engine) closeAcked() error {
	if e.failed.Load() != nil || e.ckpt.durable == nil {
		return nil
	}
	if !e.opts.Sync {
		e.tabletsMu.Lock()
		tablets := slices.Collect(maps.Values(e.tablets))
		e.tabletsMu.Unlock()
		for _, t := range tablets {
			if t.damaged != nil {
				continue
			}
			e.ckpt.mu.Lock()
			from := e.ckpt.durable[t.tb]
			e.ckpt.mu.Unlock()
			if err := t.syncFrom(from); err != nil {
				return fmt.Errorf("close log of %s: %w", t.tb, err)
			}
			e.ckpt.mu.Lock()
			e.ckpt.durable[t.tb] = t.hw.Load()
			e.ckpt.mu.Unlock()
		}
	}
	if err := e.writeAcked(); err != nil {
		return err
	}
	if e.journal == nil {
		return nil
	}
	// Every log is durable now: the next Open has nothing to settle or
	// replay.
	return e.journal.empty()
}

// noteCommit counts a commit and, every checkpointEveryCommits of them,
// asks the checkpointer for a checkpoint. Without Sync there is nothing
// new to claim before Close.
func (e *Engine) noteCommit() {
	if !e.opts.Sync || e.ckpt.commits.Add(1) < checkpointEveryCommits || e.ckpt.kick == nil {
		return
	}
	e.ckpt.asked.Add(1)
	select {
	case e.ckpt.kick <- struct{}{}:
	default: // one is asked for already, not yet begun
	}
}

// checkpointLoop writes the checkpoint when noteCommit asks, until stop:
// in the background, for its fsyncs (the data the redo commits deferred,
// the file, its directory) would otherwise hold up the commit that
// happened to be the one to ask. Its bounds are read when it writes, so
// they cover at least every commit that asked. A failure is logged: the
// previous checkpoint still holds.
func (e *Engine) checkpointLoop(stop <-chan struct{}) {
	defer e.bg.wg.Done()
	for {
		select {
		case <-stop:
			return
		case <-e.ckpt.kick:
		}
		asked := e.ckpt.asked.Load()
		if _, err := e.readLock(); err == nil {
			if err := e.writeAcked(); err != nil {
				e.opts.Logger.Warn("could not write the acknowledged-offsets checkpoint", "err", err)
			}
			e.mu.RUnlock()
		}
		e.ckpt.writtenMu.Lock()
		e.ckpt.writtenN = asked
		e.ckpt.writtenC.Broadcast()
		e.ckpt.writtenMu.Unlock()
	}
}

// waitCheckpoint returns once every checkpoint asked for before the call
// is written, or tried (for tests).
func (e *Engine) waitCheckpoint() {
	asked := e.ckpt.asked.Load()
	e.ckpt.writtenMu.Lock()
	defer e.ckpt.writtenMu.Unlock()
	for e.ckpt.writtenN < asked {
		e.ckpt.writtenC.Wait()
	}
}

// raiseStarts records the log starts expiry is about to make true and
// writes them before any segment goes.
func (e *Engine) raiseStarts(starts map[metadata.TableBucket]int64) error {
	e.ckpt.mu.Lock()
	for tb, s := range starts {
		e.ckpt.floors[tb] = max(e.ckpt.floors[tb], s)
	}
	e.ckpt.mu.Unlock()
	return e.writeAcked()
}

// checkKvLogs finds primary-key buckets whose KV state reflects log
// offsets while the bucket has no log at all (its directory went missing
// after the last checkpoint): the bucket is damaged, its lookups and
// reads fail and writes are refused, rather than serve rows no scan can
// see. It runs after the KV state is recovered.
func (e *Engine) checkKvLogs() error {
	it, err := e.kv.NewIter(&pebble.IterOptions{LowerBound: []byte{kvMetaTag}, UpperBound: []byte{kvMetaTag + 1}})
	if err != nil {
		return fmt.Errorf("scan KV store: %w", err)
	}
	type lost struct {
		tb  metadata.TableBucket
		off int64
	}
	var found []lost
	for ok := it.First(); ok; ok = it.Next() {
		tb, ok := parseBucketID(it.Key()[1:])
		v := it.Value()
		if !ok || len(v) != 8 || e.tablets[tb] != nil || checkBucket(e.mu.cat, tb) != nil {
			continue
		}
		if off := int64(binary.BigEndian.Uint64(v)); off > 0 {
			found = append(found, lost{tb, off})
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("scan KV store: %w", err)
	}
	// A key bucket whose state could not be rebuilt serves no reads:
	// what its log still holds is not its acknowledged rows.
	for tb, kb := range e.kvBuckets {
		t := e.tablets[tb]
		if kb.broken == nil || t == nil || t.damaged != nil || !errors.Is(kb.broken, metadata.ErrCorrupt) {
			continue
		}
		t.damaged = kb.broken
		r, ok := e.ckpt.loaded[tb]
		if !ok {
			r = ackedRange{start: t.logStart.Load(), end: t.hw.Load()}
		}
		e.ckpt.damaged[tb] = r
	}
	for _, l := range found {
		why := fmt.Sprintf("the directory is missing, but the KV state reflects offsets up to %d", l.off)
		derr := fmt.Errorf("%w: log of %s in %s: %s", metadata.ErrCorrupt, l.tb, tabletDir(l.tb), why)
		e.opts.Logger.Error("acknowledged log data is missing or damaged", "bucket", l.tb.String(), "dir", tabletDir(l.tb), "err", why)
		r := ackedRange{start: 0, end: l.off}
		t := damagedTablet(e.fs, &e.opts, e.root, l.tb, r)
		t.damaged = derr
		e.tablets[l.tb] = t
		e.tabIndex = nil
		e.kvBucketState(l.tb).broken = derr
		e.ckpt.damaged[l.tb] = r
	}
	return nil
}
