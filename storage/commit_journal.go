package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/flusslite/fluss/metadata"
)

// The commit journal makes a commit that writes more than one batch
// atomic across a crash. Before the first batch is written, an intent
// record lists every bucket the commit writes with the log offsets its
// batches will take there, [start, end), and is fsynced (with Sync). The
// commit point is the last of its batches being written (and fsynced):
// from then on every listed log reaches its end offset. On Open each
// intent not resolved by a done or abort record is settled by looking at
// the logs: when every listed bucket's log reaches the intent's end
// offset, all the batches are there, whole, and the commit stands;
// otherwise the crash came before its commit point and every listed
// bucket's log is cut back to the intent's start offset. Offsets [start,
// end) of a bucket can hold nothing but the commit's batches: the commit
// holds the bucket's lock from its intent to its end, and a commit that
// fails and rolls back releases the offsets only after a durable abort
// record says so (or turns the engine read-only, so that nothing writes
// them again before a reopen settles the intent).
//
// So a commit costs the intent's fsync plus the batches' fsyncs (done in
// parallel). A done record, written without fsync once the commit is
// also in the KV store, only spares a later Open the look at the logs;
// Open takes its end offsets for acknowledged. A commit whose KV write
// fails rolls its batches back and leaves its intent open (the engine
// turns read-only), for the next Open to settle by the logs. A commit of one
// batch needs no journal: a batch is whole or, as a torn tail, truncated
// on Open.
//
// The file, <dir>/commits.log, holds records back to back:
//
//	uint32 LE  length of the payload
//	uint32 LE  CRC-32C (Castagnoli) of the payload
//	payload    kind (1 intent, 2 done, 3 abort), uvarint commit id, and
//	           for an intent: uvarint count, then per bucket varint table
//	           id, varint partition id, uvarint bucket, uvarint start
//	           offset, uvarint end offset
//
// A record cut short, or a bad last record, is an append that never
// completed and is ignored (a torn intent was never followed by data). A
// bad record with records after it is damage: Open fails with ErrCorrupt
// naming the file and position rather than guess which logs to cut. The
// file is emptied whenever no commit is in flight and it has grown past
// journalCompactBytes, and on every Open after recovery.

// journalCompactBytes is the size past which the journal is emptied as
// soon as no commit is in flight; a variable for tests.
var journalCompactBytes int64 = 1 << 20

const (
	journalFile = "commits.log"

	journalIntent byte = 1
	journalDone   byte = 2
	journalAbort  byte = 3

	journalHeaderSize = 8
	// maxJournalRecord bounds a record's length field: an intent lists at
	// most every bucket of a commit, far below this.
	maxJournalRecord = 64 << 20
)

// journalEntry is one bucket of an intent: the log offsets the commit's
// batches take there, [start, end).
type journalEntry struct {
	tb         metadata.TableBucket
	start, end int64
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
	inflight int // intents written and not yet finished
	// broken is set when an intent was left open in the file (a failed
	// fsync or roll back, or a simulated crash): the engine is read-only
	// from then on and the journal takes no more intents.
	broken error
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
// with the intents that have neither a done nor an abort record.
func openJournal(fsys FS, root string, doSync bool) (*commitJournal, map[uint64][]journalEntry, error) {
	j := &commitJournal{fs: fsys, dir: root, path: filepath.Join(root, journalFile), sync: doSync}
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
	j.size, j.nextID = size, maxID+1
	return j, open, nil
}

// readJournal parses every record; it returns the open intents, the size
// of the whole records and the largest commit id seen.
func readJournal(f File) (map[uint64][]journalEntry, int64, uint64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("stat commit journal %s: %w", journalFile, err)
	}
	fileSize := st.Size()
	data := make([]byte, fileSize)
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, 0, fmt.Errorf("read commit journal %s: %w", journalFile, err)
	}
	open := map[uint64][]journalEntry{}
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
		if n > maxJournalRecord || journalHeaderSize+n > int64(len(rest)) {
			break // torn tail: the length runs past the end of the file
		}
		payload := rest[journalHeaderSize : journalHeaderSize+n]
		end := pos + journalHeaderSize + n
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
			if end == fileSize {
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
		case journalIntent:
			open[id] = entries
		case journalDone, journalAbort:
			delete(open, id)
		}
		pos = end
	}
	return open, pos, maxID, nil
}

func encodeJournalRecord(kind byte, id uint64, entries []journalEntry) []byte {
	p := []byte{kind}
	p = binary.AppendUvarint(p, id)
	if kind == journalIntent {
		p = binary.AppendUvarint(p, uint64(len(entries)))
		for _, e := range entries {
			p = binary.AppendVarint(p, e.tb.TableID)
			p = binary.AppendVarint(p, e.tb.PartitionID)
			p = binary.AppendUvarint(p, uint64(e.tb.Bucket))
			p = binary.AppendUvarint(p, uint64(e.start))
			p = binary.AppendUvarint(p, uint64(e.end))
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
	case journalIntent:
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

// reset empties the journal after recovery rolled back its open intents
// (and made the roll back durable).
func (j *commitJournal) reset() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	// Records cut short at the tail, if any, go too.
	return j.truncateLocked(0, j.sync)
}

func (j *commitJournal) truncateLocked(size int64, doSync bool) error {
	if err := j.f.Truncate(size); err != nil {
		return fmt.Errorf("truncate commit journal %s: %w", journalFile, err)
	}
	if doSync {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("sync commit journal %s: %w", journalFile, err)
		}
	}
	j.size = size
	return nil
}

// begin writes (and with Sync fsyncs) the intent of a commit and returns
// its id. A failed write is undone and soft; a failed fsync is hard.
func (j *commitJournal) begin(entries []journalEntry) (uint64, *journalError) {
	j.mu.Lock()
	defer j.mu.Unlock()
	// Keep the file small: once it is past the threshold, new intents
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
	}
	if j.inflight == 0 && j.size > journalCompactBytes {
		// Every record is resolved: none is needed any more. Not synced:
		// the next intent's fsync makes the new size durable with it.
		if err := j.truncateLocked(0, false); err != nil {
			return 0, &journalError{err: err}
		}
	}
	j.nextID++
	id := j.nextID
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
	if doSync {
		if err := j.f.Sync(); err != nil {
			return &journalError{err: fmt.Errorf("sync commit journal %s: %w", journalFile, err), hard: true}
		}
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
			// Best effort; begin tries again.
			_ = j.truncateLocked(0, false)
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
