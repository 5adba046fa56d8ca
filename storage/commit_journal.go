package storage

import (
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

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// The commit journal makes a commit atomic and durable across a crash.
// It holds two kinds of commit records.
//
// A redo record carries a small commit whole: every bucket it writes,
// the log offsets its batches take there, [start, end), and the batches
// themselves, byte for byte as they go into the logs. With Sync it is
// the commit point: once the journal is fsynced the commit stands, and
// its batches are written to the logs without an fsync of their own.
// So a small commit costs one fsync, whatever number of buckets it
// writes, and commits running at the same time share it (group commit:
// one fsync covers every record written before it started). The log
// segments written so are fsynced later, in one go: before the journal
// is emptied, before the acknowledged-offsets checkpoint records their
// offsets, and at Close. On Open each redo record is replayed where the
// logs lack it: a bucket whose log ends at the record's start gets its
// batches appended; one whose log holds something else there (a torn or
// garbled tail of pages never fsynced) is cut back to the first batch
// that differs and gets the rest appended. A log that holds, past the
// difference, offsets no redo record covers (data a later fsync made
// durable) is not cut: that is damage, left for the acknowledged-offsets
// check to report.
//
// An intent record is for a large commit (more than journalRedoBytes
// of batches, or any commit without Sync): it lists the buckets and
// offsets only, and is fsynced (with Sync) before the first batch is
// written. The commit point is the last of its batches being written
// (and fsynced): from then on every listed log reaches its end offset.
// On Open each intent not resolved by a done or abort record is settled
// by looking at the logs: when every listed bucket's log reaches the
// intent's end offset, all the batches are there, whole, and the commit
// stands; otherwise the crash came before its commit point and every
// listed bucket's log is cut back to the intent's start offset. A done
// record, written without fsync once the commit is also in the KV
// store, only spares a later Open the look at the logs; Open takes its
// end offsets for acknowledged. A large commit of one batch needs no
// journal: a batch is whole or, as a torn tail, truncated on Open.
//
// Offsets [start, end) of a bucket can hold nothing but the commit's
// batches: the commit holds the bucket's lock from its record to its
// end, and a commit that fails and rolls back releases the offsets only
// after a durable abort record says so (or turns the engine read-only,
// so that nothing writes them again before a reopen settles the
// record). Records of one bucket follow its offsets: ids are given out
// under the bucket's lock. A commit whose KV write fails rolls its
// batches back and leaves its record open (the engine turns read-only),
// for the next Open to settle.
//
// The file, <dir>/commits.log, holds records back to back:
//
//	uint32 LE  length of the payload
//	uint32 LE  CRC-32C (Castagnoli) of the payload
//	payload    kind (1 intent, 2 done, 3 abort, 4 redo), uvarint commit
//	           id, and for an intent or a redo record: uvarint count,
//	           then per bucket varint table id, varint partition id,
//	           uvarint bucket, uvarint start offset, uvarint end offset,
//	           and for a redo record uvarint batch count and per batch
//	           uvarint length and its bytes
//
// The file is kept at a fixed size (journalPreallocBytes), zeroed past
// its last record, so that records overwrite blocks it has: a zero
// length field ends the records. A record cut short, or a bad last
// record (one followed by the zeroes or the end of the file), is an
// append that never completed and is ignored (a torn record was never
// fsynced, so its commit never returned). A bad record with records
// after it is damage: Open fails with ErrCorrupt naming the file and
// position rather than guess which logs to cut. The file is emptied
// (zeroed back) whenever no commit is in flight and it has grown past
// journalCompactBytes (after the segments of its redo records are
// fsynced), and on every Open after recovery.

// journalCompactBytes is the size past which the journal is emptied as
// soon as no commit is in flight; a variable for tests.
var journalCompactBytes int64 = 1 << 20

// journalRedoBytes is the largest commit, in bytes of batches, that goes
// into the journal whole (a redo record); a variable for tests, which set
// it to 0 to take every commit the way of an intent.
var journalRedoBytes = 64 << 10

const (
	journalFile = "commits.log"

	journalIntent byte = 1
	journalDone   byte = 2
	journalAbort  byte = 3
	journalRedo   byte = 4

	journalHeaderSize = 8
	// maxJournalRecord bounds a record's length field: an intent lists at
	// most every bucket of a commit, far below this.
	maxJournalRecord = 64 << 20
)

// journalEntry is one bucket of a commit record: the log offsets the
// commit's batches take there, [start, end), and in a redo record the
// batches.
type journalEntry struct {
	tb         metadata.TableBucket
	start, end int64
	batches    [][]byte
}

// journalRecord is a commit record Open found open.
type journalRecord struct {
	redo    bool
	entries []journalEntry
}

// commitJournal is the engine's open journal file.
type commitJournal struct {
	fs   FS
	dir  string
	path string
	sync bool

	mu       sync.Mutex
	drained  *sync.Cond // signalled when inflight drops to zero
	f        File       // nil until the first intent
	size     int64
	nextID   uint64
	inflight int // records written and not yet finished
	// high bounds the bytes written since the file was last zeroed.
	high int64
	// appended counts every byte ever appended and syncedTo the count an
	// fsync covered: group commit compares them (file positions restart
	// when the file is emptied).
	appended int64
	// deferred holds the segments, and the tablets whose directory
	// gained one, that redo commits wrote without an fsync; each segment
	// holds a reference, so its file stays open until it is synced.
	deferred     map[*segment]struct{}
	deferredDirs map[*logTablet]struct{}
	// broken is set when an intent was left open in the file (a failed
	// fsync or roll back, or a simulated crash): the engine is read-only
	// from then on and the journal takes no more intents.
	broken error

	// syncMu serialises the fsyncs of group commit; syncedTo is guarded
	// by it.
	syncMu   sync.Mutex
	syncedTo int64
	// syncedSize is the file's size that fsync covered; guarded by mu
	// (and only set under syncMu).
	syncedSize int64
}

// journalError is a journal failure; hard when the journal's state on
// disk is unknown (a failed fsync, or a failed undo of a partial append).
type journalError struct {
	err  error
	hard bool
}

func (e *journalError) Error() string { return e.err.Error() }
func (e *journalError) Unwrap() error { return e.err }

// openJournal reads the journal of root (absent: empty) and returns it
// with the records that have neither a done nor an abort record.
func openJournal(fsys FS, root string, doSync bool) (*commitJournal, map[uint64]journalRecord, error) {
	j := &commitJournal{fs: fsys, dir: root, path: filepath.Join(root, journalFile), sync: doSync,
		deferred: map[*segment]struct{}{}, deferredDirs: map[*logTablet]struct{}{}}
	j.drained = sync.NewCond(&j.mu)
	f, err := fsys.OpenFile(j.path, os.O_RDWR, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		return j, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open commit journal %s: %w", journalFile, err)
	}
	j.f = f
	open, size, maxID, err := readJournal(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	j.size, j.syncedSize, j.nextID = size, size, maxID+1
	if st, err := f.Stat(); err == nil {
		j.high = st.Size()
	} else {
		j.high = math.MaxInt64
	}
	return j, open, nil
}

// readJournal parses every record; it returns the open records, the size
// of the whole records and the largest commit id seen.
func readJournal(f File) (map[uint64]journalRecord, int64, uint64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("stat commit journal %s: %w", journalFile, err)
	}
	fileSize := st.Size()
	data := make([]byte, fileSize)
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, 0, fmt.Errorf("read commit journal %s: %w", journalFile, err)
	}
	open := map[uint64]journalRecord{}
	var (
		pos   int64
		maxID uint64
	)
	for pos < fileSize {
		rest := data[pos:]
		if len(rest) < journalHeaderSize {
			break // torn tail
		}
		n := int64(binary.LittleEndian.Uint32(rest))
		if n == 0 {
			break // the zeroes after the last record
		}
		if n > maxJournalRecord || journalHeaderSize+n > int64(len(rest)) {
			break // torn tail: the length runs past the end of the file
		}
		payload := rest[journalHeaderSize : journalHeaderSize+n]
		end := pos + journalHeaderSize + n
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
			if endsRecords(data[end:]) {
				break // a bad last record: torn
			}
			return nil, 0, 0, fmt.Errorf("%w: commit journal %s: byte %d: record CRC mismatch", metadata.ErrCorrupt, journalFile, pos)
		}
		kind, id, entries, err := decodeJournalRecord(payload)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%w: commit journal %s: byte %d: %v", metadata.ErrCorrupt, journalFile, pos, err)
		}
		maxID = max(maxID, id)
		switch kind {
		case journalIntent, journalRedo:
			open[id] = journalRecord{redo: kind == journalRedo, entries: entries}
		case journalDone, journalAbort:
			delete(open, id)
		}
		pos = end
	}
	return open, pos, maxID, nil
}

// endsRecords reports whether rest, what follows a record, holds no
// further record: the end of the file, or a zero length field.
func endsRecords(rest []byte) bool {
	return len(rest) < journalHeaderSize || binary.LittleEndian.Uint32(rest) == 0
}

func encodeJournalRecord(kind byte, id uint64, entries []journalEntry) []byte {
	p := []byte{kind}
	p = binary.AppendUvarint(p, id)
	if kind == journalIntent || kind == journalRedo {
		p = binary.AppendUvarint(p, uint64(len(entries)))
		for _, e := range entries {
			p = binary.AppendVarint(p, e.tb.TableID)
			p = binary.AppendVarint(p, e.tb.PartitionID)
			p = binary.AppendUvarint(p, uint64(e.tb.Bucket))
			p = binary.AppendUvarint(p, uint64(e.start))
			p = binary.AppendUvarint(p, uint64(e.end))
			if kind == journalRedo {
				p = binary.AppendUvarint(p, uint64(len(e.batches)))
				for _, b := range e.batches {
					p = binary.AppendUvarint(p, uint64(len(b)))
					p = append(p, b...)
				}
			}
		}
	}
	out := make([]byte, journalHeaderSize, journalHeaderSize+len(p))
	binary.LittleEndian.PutUint32(out, uint32(len(p)))
	binary.LittleEndian.PutUint32(out[4:], crc32.Checksum(p, castagnoli))
	return append(out, p...)
}

func decodeJournalRecord(p []byte) (kind byte, id uint64, entries []journalEntry, err error) {
	if len(p) == 0 {
		return 0, 0, nil, errors.New("empty record")
	}
	kind, p = p[0], p[1:]
	uv, sv := varintReaders(&p, &err)
	id = uv()
	switch kind {
	case journalDone, journalAbort:
	case journalIntent, journalRedo:
		count := uv()
		if err == nil && count > uint64(len(p)) {
			return 0, 0, nil, fmt.Errorf("intent lists %d buckets in %d bytes", count, len(p))
		}
		for i := uint64(0); i < count && err == nil; i++ {
			var e journalEntry
			e.tb.TableID = sv()
			e.tb.PartitionID = sv()
			b := uv()
			start, end := uv(), uv()
			if err == nil && (b > uint64(metadata.MaxBuckets) || start > end || end > 1<<62) {
				err = fmt.Errorf("bucket %d, offsets [%d, %d) out of range", b, start, end)
			}
			e.tb.Bucket, e.start, e.end = int32(b), int64(start), int64(end)
			if kind == journalRedo && err == nil {
				e.batches, err = decodeRedoBatches(&p, e.start, e.end)
			}
			entries = append(entries, e)
		}
	default:
		return 0, 0, nil, fmt.Errorf("unknown record kind %d", kind)
	}
	if err == nil && len(p) != 0 {
		err = fmt.Errorf("%d trailing bytes", len(p))
	}
	return kind, id, entries, err
}

// decodeRedoBatches reads the batches of one bucket of a redo record,
// which must hold offsets [start, end) back to back.
func decodeRedoBatches(p *[]byte, start, end int64) ([][]byte, error) {
	var err error
	uv, _ := varintReaders(p, &err)
	count := uv()
	if err == nil && count > uint64(len(*p)) {
		return nil, fmt.Errorf("redo lists %d batches in %d bytes", count, len(*p))
	}
	batches := make([][]byte, 0, count)
	next := start
	for i := uint64(0); i < count && err == nil; i++ {
		n := uv()
		if err != nil {
			break
		}
		if n > uint64(len(*p)) {
			return nil, fmt.Errorf("redo batch of %d bytes in %d", n, len(*p))
		}
		b := (*p)[:n:n]
		*p = (*p)[n:]
		h, herr := logformat.ParseHeader(b)
		if herr != nil {
			return nil, fmt.Errorf("redo batch: %w", herr)
		}
		if h.BaseOffset != next || h.Size() != int64(len(b)) {
			return nil, fmt.Errorf("redo batch at offset %d of %d bytes, want offset %d", h.BaseOffset, len(b), next)
		}
		next = h.NextOffset()
		batches = append(batches, b)
	}
	if err == nil && next != end {
		err = fmt.Errorf("redo batches end at offset %d, want %d", next, end)
	}
	return batches, err
}

// reset empties the journal after recovery rolled back its open intents
// (and made the roll back durable).
func (j *commitJournal) reset() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	// Records cut short at the tail, if any, go too.
	return j.clearLocked()
}

// journalPreallocBytes is the size the file is kept at: past the point
// where it is emptied, with room for the record that crosses it.
func journalPreallocBytes() int64 { return journalCompactBytes + 128<<10 }

// clearLocked makes the file hold no record, the next one going at its
// start. The file is zeroed over what was written and kept at
// journalPreallocBytes rather than shortened: records then overwrite
// blocks the file already has, and their fsync need not make a new
// file size durable, which costs a commit of the file system's own
// journal. A zero length field ends the records when the file is read.
// The zeroes are fsynced (with Sync): a record written over the old
// ones and cut short by a crash must not leave them readable after it.
func (j *commitJournal) clearLocked() error {
	st, err := j.f.Stat()
	if err != nil {
		return fmt.Errorf("empty commit journal %s: %w", journalFile, err)
	}
	want := journalPreallocBytes()
	if st.Size() > want {
		if err := j.f.Truncate(want); err != nil {
			return fmt.Errorf("empty commit journal %s: %w", journalFile, err)
		}
	}
	// What was written may be non-zero; past the old end of the file
	// the zeroes extend it to its size.
	size := min(st.Size(), want)
	zeros := make([]byte, 64<<10)
	for _, r := range [][2]int64{{0, min(j.high, size)}, {size, want}} {
		for off := r[0]; off < r[1]; off += int64(len(zeros)) {
			if _, err := j.f.WriteAt(zeros[:min(int64(len(zeros)), r[1]-off)], off); err != nil {
				return fmt.Errorf("empty commit journal %s: %w", journalFile, err)
			}
		}
	}
	if j.sync {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("sync commit journal %s: %w", journalFile, err)
		}
	}
	j.size, j.high, j.syncedSize = 0, 0, 0
	return nil
}

// begin writes (and with Sync fsyncs) the intent of a commit and returns
// its id. A failed write is undone and soft; a failed fsync is hard.
func (j *commitJournal) begin(entries []journalEntry) (uint64, *journalError) {
	j.mu.Lock()
	defer j.mu.Unlock()
	id, jerr := j.prepareLocked()
	if jerr != nil {
		return 0, jerr
	}
	if jerr := j.appendLocked(encodeJournalRecord(journalIntent, id, entries), j.sync); jerr != nil {
		if jerr.hard {
			// The intent may be in the file: nothing may follow it.
			j.broken = jerr
		}
		return 0, jerr
	}
	j.inflight++
	return id, nil
}

// beginRedo writes the redo record of a commit, its entries carrying
// their batches, and with Sync waits for an fsync that covers it: on
// return the commit stands. A failed write is undone and soft; a failed
// fsync is hard, and so is every later record's (the journal takes no
// more).
func (j *commitJournal) beginRedo(entries []journalEntry) (uint64, *journalError) {
	j.mu.Lock()
	id, jerr := j.prepareLocked()
	if jerr == nil {
		jerr = j.appendLocked(encodeJournalRecord(journalRedo, id, entries), false)
	}
	if jerr != nil {
		if jerr.hard {
			j.broken = jerr
		}
		j.mu.Unlock()
		return 0, jerr
	}
	j.inflight++
	upTo := j.appended
	j.mu.Unlock()
	if j.sync {
		if jerr := j.syncTo(upTo); jerr != nil {
			return 0, jerr
		}
	}
	return id, nil
}

// syncTo returns once an fsync that started after the first upTo bytes
// were appended has completed. Whoever finds no such fsync runs one for
// everything appended so far, so the records written while an fsync
// runs share the next.
func (j *commitJournal) syncTo(upTo int64) *journalError {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	if j.syncedTo >= upTo {
		return nil
	}
	j.mu.Lock()
	f, target, size, broken := j.f, j.appended, j.size, j.broken
	j.mu.Unlock()
	if broken != nil {
		return &journalError{err: fmt.Errorf("%w: commit journal: %w", metadata.ErrReadOnly, broken), hard: true}
	}
	if err := f.Sync(); err != nil {
		jerr := &journalError{err: fmt.Errorf("sync commit journal %s: %w", journalFile, err), hard: true}
		j.mu.Lock()
		if j.broken == nil {
			j.broken = jerr
		}
		// Every record past the last good fsync belongs to a commit
		// that fails now: none of them may be replayed by a reopen.
		// Best effort: a disk that failed the fsync may fail this too.
		if j.f.Truncate(j.syncedSize) == nil && j.f.Sync() == nil {
			j.size = j.syncedSize
		}
		j.mu.Unlock()
		return jerr
	}
	j.syncedTo = target
	j.mu.Lock()
	j.syncedSize = max(j.syncedSize, size)
	j.mu.Unlock()
	return nil
}

// prepareLocked readies the file for a new record and returns its id.
func (j *commitJournal) prepareLocked() (uint64, *journalError) {
	// Keep the file small: once it is past the threshold, new records
	// wait for the commits in flight to finish, then the file is emptied.
	for j.broken == nil && j.size > journalCompactBytes && j.inflight > 0 {
		j.drained.Wait()
	}
	if j.broken != nil {
		return 0, &journalError{err: fmt.Errorf("%w: commit journal: %w", metadata.ErrReadOnly, j.broken)}
	}
	if j.f == nil {
		f, err := j.fs.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return 0, &journalError{err: fmt.Errorf("create commit journal %s: %w", journalFile, err)}
		}
		if j.sync {
			// The file's directory entry must outlive a crash too.
			if err := j.fs.SyncDir(j.dir); err != nil {
				f.Close()
				return 0, &journalError{err: fmt.Errorf("create commit journal %s: %w", journalFile, err)}
			}
		}
		j.f = f
		if err := j.clearLocked(); err != nil {
			j.f = nil
			f.Close()
			return 0, &journalError{err: fmt.Errorf("create commit journal %s: %w", journalFile, err)}
		}
	}
	if j.inflight == 0 && j.size > journalCompactBytes {
		if err := j.emptyLocked(); err != nil {
			j.broken = err
			return 0, &journalError{err: err, hard: true}
		}
	}
	j.nextID++
	return j.nextID, nil
}

// emptyLocked empties the file once no commit is in flight: the
// segments its redo records wrote are fsynced first, for the records go
// with it.
func (j *commitJournal) emptyLocked() error {
	if err := j.flushDeferredLocked(); err != nil {
		return err
	}
	return j.clearLocked()
}

// empty empties the file when no commit is in flight, as Close does.
func (j *commitJournal) empty() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inflight > 0 || j.broken != nil || j.f == nil {
		return nil
	}
	return j.emptyLocked()
}

// deferLocked notes segments a redo commit wrote without an fsync, and
// tablets whose directory gained a segment; the caller holds the
// tablets' locks, so each segment is in its tablet's list and referenced.
func (j *commitJournal) deferLocked(segs map[*segment]bool, dirs map[*logTablet]bool) {
	for seg := range segs {
		if _, ok := j.deferred[seg]; !ok {
			seg.refs.Add(1)
			j.deferred[seg] = struct{}{}
		}
	}
	for t := range dirs {
		j.deferredDirs[t] = struct{}{}
	}
}

// flushDeferred fsyncs what redo commits wrote so far without an fsync.
func (j *commitJournal) flushDeferred() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.flushDeferredLocked()
}

// flushDeferredLocked fsyncs the deferred segments and directories in
// parallel. A segment stays listed until its fsync succeeds; a tablet
// dropped since is skipped (its directory is gone, and a record naming
// it replays to nothing).
func (j *commitJournal) flushDeferredLocked() error {
	if len(j.deferred) == 0 && len(j.deferredDirs) == 0 {
		return nil
	}
	segs := slices.Collect(maps.Keys(j.deferred))
	dirs := slices.Collect(maps.Keys(j.deferredDirs))
	errs := make([]error, len(segs)+len(dirs))
	var wg sync.WaitGroup
	for i, seg := range segs {
		wg.Go(func() {
			if err := seg.f.Sync(); err != nil {
				errs[i] = fmt.Errorf("sync %s: %w", seg.rel, err)
			}
		})
	}
	for i, t := range dirs {
		wg.Go(func() {
			if err := j.fs.SyncDir(t.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs[len(segs)+i] = fmt.Errorf("sync %s: %w", t.rel, err)
			}
		})
	}
	wg.Wait()
	for i, seg := range segs {
		if errs[i] == nil {
			delete(j.deferred, seg)
			seg.unref()
		}
	}
	for i, t := range dirs {
		if errs[len(segs)+i] == nil {
			delete(j.deferredDirs, t)
		}
	}
	return errors.Join(errs...)
}

// finish ends a redo commit that passed its commit point; it writes no
// record (its logs may not be durable yet, so Open replays it whatever
// happens). segs and dirs are what it wrote, fsynced later.
func (j *commitJournal) finish(segs map[*segment]bool, dirs map[*logTablet]bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.deferLocked(segs, dirs)
	j.finishedLocked()
}

// appendLocked appends one record, fsyncing it when doSync.
func (j *commitJournal) appendLocked(rec []byte, doSync bool) *journalError {
	if _, err := j.f.WriteAt(rec, j.size); err != nil {
		jerr := &journalError{err: fmt.Errorf("write commit journal %s: %w", journalFile, err)}
		// Undo a partial record, so that the next record follows whole
		// ones; failing that, the file's tail is unknown.
		if terr := j.f.Truncate(j.size); terr != nil {
			jerr.err, jerr.hard = errors.Join(jerr.err, terr), true
		}
		return jerr
	}
	j.size += int64(len(rec))
	j.high = max(j.high, j.size)
	j.appended += int64(len(rec))
	if doSync {
		if err := j.f.Sync(); err != nil {
			return &journalError{err: fmt.Errorf("sync commit journal %s: %w", journalFile, err), hard: true}
		}
		j.syncedSize = j.size
	}
	return nil
}

// done records that a commit passed its commit point; not fsynced, for
// the logs already say so. The commit is no longer in flight whatever
// happens: a failure to write the record only costs a later Open a look
// at the logs, unless it leaves the file's tail unknown (hard: the
// journal takes no more intents).
func (j *commitJournal) done(id uint64) *journalError {
	j.mu.Lock()
	defer j.mu.Unlock()
	jerr := j.appendLocked(encodeJournalRecord(journalDone, id, nil), false)
	if jerr != nil && jerr.hard && j.broken == nil {
		j.broken = jerr
	}
	j.finishedLocked()
	return jerr
}

// abort records, durably, that a commit rolled its batches back: the
// offsets it held are free again. On failure the intent stays in flight
// and the caller abandons it.
func (j *commitJournal) abort(id uint64) *journalError {
	j.mu.Lock()
	defer j.mu.Unlock()
	if jerr := j.appendLocked(encodeJournalRecord(journalAbort, id, nil), j.sync); jerr != nil {
		return jerr
	}
	j.finishedLocked()
	return nil
}

func (j *commitJournal) finishedLocked() {
	j.inflight--
	if j.inflight == 0 {
		j.drained.Broadcast()
		if j.size > journalCompactBytes && j.broken == nil {
			if err := j.emptyLocked(); err != nil {
				// A failed fsync leaves the segments' durability
				// unknown: the records must stay, and no more follow.
				j.broken = err
			}
		}
	}
}

// abandon leaves an intent open in the file, for the next Open to roll
// back; the journal takes no more intents.
func (j *commitJournal) abandon(cause error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken == nil {
		j.broken = cause
	}
	j.inflight--
	j.drained.Broadcast()
}

func (j *commitJournal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken == nil {
		j.broken = metadata.ErrClosed
	}
	j.drained.Broadcast()
	for seg := range j.deferred {
		// Close fsynced them (or the engine failed, and a reopen
		// replays their records).
		seg.unref()
	}
	clear(j.deferred)
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// varintReaders return readers of the unsigned and signed varints at the
// front of *p, each consuming what it reads. A bad varint sets *err and
// reads as 0, so a decoder reads a whole record and checks *err once.
func varintReaders(p *[]byte, err *error) (uv func() uint64, sv func() int64) {
	uv = func() uint64 {
		v, n := binary.Uvarint(*p)
		if n <= 0 {
			*err = errors.New("bad varint")
			return 0
		}
		*p = (*p)[n:]
		return v
	}
	sv = func() int64 {
		v, n := binary.Varint(*p)
		if n <= 0 {
			*err = errors.New("bad varint")
			return 0
		}
		*p = (*p)[n:]
		return v
	}
	return uv, sv
}
