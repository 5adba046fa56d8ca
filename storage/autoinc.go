package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/flusslite/fluss/metadata"
)

// Auto-increment values are handed out from ranges, as Fluss's tablet
// servers cache them: the engine persists the end of a range (the
// limit) before it hands out any value below it, and a restarted engine
// starts at the persisted limit. A value is therefore never handed out
// twice, also across a crash, and a crash leaves a gap of at most one
// range. fluss keeps one range per table, not per bucket, so values
// grow in the order statements allocate them.

const (
	autoIncDir = "autoinc"
	// autoIncRange is how many values one persisted limit covers beyond
	// what the allocation asked for: one fsync per range, a gap of at
	// most this many values after a crash.
	autoIncRange = 1024
	// autoIncFileSize is the limit (8 bytes, little endian) and the
	// CRC-32C of those bytes (4 bytes).
	autoIncFileSize = 12
)

// autoIncrements holds the allocators of the tables that have an
// auto-increment column, loaded on first use.
type autoIncrements struct {
	// mu guards tables and serializes the writes of limit files.
	mu     sync.Mutex
	tables map[int64]*autoIncState
}

// autoIncState is one table's allocator: next is the next value to hand
// out; every value below limit may have been handed out before, by this
// engine or one before it.
type autoIncState struct {
	next, limit int64
}

var autoIncCRC = crc32.MakeTable(crc32.Castagnoli)

// AllocateAutoIncrement reserves n consecutive values of the
// auto-increment column of the table at path and returns the first. The
// values are never handed out again, also not after a crash or reopen;
// values may be skipped (a crash loses the rest of the current range).
// The table must have an auto-increment column (auto-increment.fields).
func (e *Engine) AllocateAutoIncrement(ctx context.Context, path metadata.TablePath, n int) (first int64, err error) {
	if n < 1 {
		return 0, fmt.Errorf("%w: allocate %d auto-increment values", metadata.ErrInvalidValue, n)
	}
	err = e.withAutoInc(ctx, path, func(st *autoIncState, persist func(int64) error) error {
		if st.next > math.MaxInt64-int64(n) {
			return fmt.Errorf("%w: the auto-increment values of table %s are exhausted", metadata.ErrInvalidValue, path)
		}
		end := st.next + int64(n)
		if end > st.limit {
			limit := end
			if limit <= math.MaxInt64-autoIncRange {
				limit += autoIncRange
			}
			if err := persist(limit); err != nil {
				return err
			}
		}
		first = st.next
		st.next = end
		return nil
	})
	return first, err
}

// AdvanceAutoIncrement makes sure the auto-increment column of the table
// at path never generates v or a smaller value: a row that gives an
// auto-increment key explicitly must not be overwritten by a later
// generated one (MySQL moves its counter past explicit values the same
// way). Values at or below those already handed out change nothing.
func (e *Engine) AdvanceAutoIncrement(ctx context.Context, path metadata.TablePath, v int64) error {
	return e.withAutoInc(ctx, path, func(st *autoIncState, persist func(int64) error) error {
		if v < st.next {
			return nil
		}
		if v == math.MaxInt64 {
			return fmt.Errorf("%w: the auto-increment values of table %s are exhausted by %d", metadata.ErrInvalidValue, path, v)
		}
		if v+1 > st.limit {
			if err := persist(v + 1); err != nil {
				return err
			}
		}
		st.next = v + 1
		return nil
	})
}

// withAutoInc runs fn on the allocator of the table at path, with the
// catalog held shared (the table is not dropped meanwhile) and the
// allocators locked. persist writes a new limit durably and records it.
func (e *Engine) withAutoInc(ctx context.Context, path metadata.TablePath, fn func(st *autoIncState, persist func(int64) error) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cat, err := e.readLock()
	if err != nil {
		return err
	}
	defer e.mu.RUnlock()
	t, err := cat.table(path)
	if err != nil {
		return err
	}
	if len(t.Info.Config.AutoIncrement) == 0 {
		return fmt.Errorf("%w: table %s has no auto-increment column (%s)", metadata.ErrInvalidValue, path, metadata.OptAutoIncrementFields)
	}
	if err := e.readOnlyErr(); err != nil {
		return err
	}
	id := t.Info.TableID
	a := &e.autoInc
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.tables[id]
	if st == nil {
		limit, err := e.readAutoIncLimit(id)
		if err != nil {
			return err
		}
		st = &autoIncState{next: limit, limit: limit}
		if a.tables == nil {
			a.tables = map[int64]*autoIncState{}
		}
		a.tables[id] = st
	}
	return fn(st, func(limit int64) error {
		if err := e.writeAutoIncLimit(id, limit); err != nil {
			return err
		}
		st.limit = limit
		return nil
	})
}

func autoIncFile(tableID int64) string {
	return filepath.Join(autoIncDir, strconv.FormatInt(tableID, 10))
}

// readAutoIncLimit reads a table's persisted limit: 1, the first value,
// when the table has never allocated one. A damaged file is an error,
// never a restart from 1, which could hand out a value twice.
func (e *Engine) readAutoIncLimit(tableID int64) (int64, error) {
	name := filepath.Join(e.root, autoIncFile(tableID))
	f, err := e.fs.OpenFile(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read auto-increment limit: %w", err)
	}
	defer f.Close()
	var buf [autoIncFileSize]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("%w: %s is shorter than %d bytes", metadata.ErrCorrupt, autoIncFile(tableID), autoIncFileSize)
		}
		return 0, fmt.Errorf("read auto-increment limit: %w", err)
	}
	limit := int64(binary.LittleEndian.Uint64(buf[:8]))
	if crc32.Checksum(buf[:8], autoIncCRC) != binary.LittleEndian.Uint32(buf[8:]) || limit < 1 {
		return 0, fmt.Errorf("%w: %s: bad checksum or limit", metadata.ErrCorrupt, autoIncFile(tableID))
	}
	return limit, nil
}

// writeAutoIncLimit replaces a table's limit atomically and durably: a
// temporary file, fsync, rename over the old one, fsync of the directory.
// It syncs even when the engine does not sync its writes: a limit that
// is lost could hand out a value a surviving row already has.
func (e *Engine) writeAutoIncLimit(tableID int64, limit int64) error {
	dir := filepath.Join(e.root, autoIncDir)
	if err := e.fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write auto-increment limit: %w", err)
	}
	var buf [autoIncFileSize]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(limit))
	binary.LittleEndian.PutUint32(buf[8:], crc32.Checksum(buf[:8], autoIncCRC))
	name := filepath.Join(e.root, autoIncFile(tableID))
	tmp := name + ".tmp"
	f, err := e.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write auto-increment limit: %w", err)
	}
	_, err = f.WriteAt(buf[:], 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = e.fs.Rename(tmp, name)
	}
	if err == nil {
		err = e.fs.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write auto-increment limit: %w", err)
	}
	return nil
}
