package storage

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// redoEngine opens a durable engine on fsys with segments small enough
// that redo commits roll them.
func redoEngine(t *testing.T, fsys FS, tweak func(*Options)) *Engine {
	t.Helper()
	opts := DefaultOptions()
	opts.FS, opts.Dir = fsys, "db"
	opts.SegmentBytes = 600
	if tweak != nil {
		tweak(&opts)
	}
	e, err := Open(opts)
	require.NoError(t, err)
	return e
}

// smallCommit writes a few rows to both tables, several buckets each.
func smallCommit(i int) []Write {
	return []Write{
		{Path: path("ev"), Kind: WriteAppend, Rows: evRows([]string{"a", "b"}[i%2], 1000+3*i, 1001+3*i, 1002+3*i)},
		{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{fmt.Sprintf("r%d", i), i % 7, i}, {fmt.Sprintf("s%d", i), 7 + i%5, i}}},
	}
}

// afterPowerLossState reopens on what a power loss would leave of fsys
// and returns the state.
func afterPowerLossState(t *testing.T, fsys FS, tweak func(*Options)) []string {
	t.Helper()
	crashed, err := MemFSAfterCrash(fsys)
	require.NoError(t, err)
	e := redoEngine(t, crashed, tweak)
	defer func() { require.NoError(t, e.Close()) }()
	return commitState(t, e)
}

// TestRedoCommitsNeedNoSegmentFsync: small commits are durable through
// the journal alone. A power loss that keeps nothing of the segments
// written since the tables were created still keeps every acknowledged
// commit, replayed from the journal, and the reopened engine works on.
func TestRedoCommitsNeedNoSegmentFsync(t *testing.T) {
	fsys := NewCrashMemFS()
	e := redoEngine(t, fsys, nil)
	createCommitTables(t, e)
	for i := range 40 {
		_, err := e.Commit(ctx, smallCommit(i))
		require.NoError(t, err)
	}
	want := commitState(t, e)

	crashed, err := MemFSAfterCrash(fsys)
	require.NoError(t, err)
	var segBytes int64
	for _, dir := range []string{"db/data"} {
		walkFiles(t, crashed, dir, func(name string, size int64) {
			if strings.HasSuffix(name, ".log") {
				segBytes += size
			}
		})
	}
	require.Zero(t, segBytes, "no segment was fsynced: the journal alone holds the commits")
	require.Equal(t, want, afterPowerLossState(t, fsys, nil))
	require.NoError(t, e.Close())
}

// walkFiles calls f for every file under dir.
func walkFiles(t *testing.T, fsys FS, dir string, f func(name string, size int64)) {
	t.Helper()
	ents, err := fsys.ReadDir(dir)
	require.NoError(t, err)
	for _, de := range ents {
		name := filepath.Join(dir, de.Name())
		if de.IsDir() {
			walkFiles(t, fsys, name, f)
			continue
		}
		st, err := fsys.Stat(name)
		require.NoError(t, err)
		f(name, st.Size())
	}
}

// TestRedoJournalEmptiedAndCheckpointed: the journal is emptied when it
// grows, and the checkpoint written every few commits, each after the
// segments the removed records wrote are fsynced: a power loss at any
// point afterwards keeps every commit, and Open finds no damage.
func TestRedoJournalEmptiedAndCheckpointed(t *testing.T) {
	defer func(c, k int64) { journalCompactBytes, checkpointEveryCommits = c, k }(journalCompactBytes, checkpointEveryCommits)
	journalCompactBytes, checkpointEveryCommits = 1500, 3
	fsys := NewCrashMemFS()
	e := redoEngine(t, fsys, nil)
	defer e.Close()
	createCommitTables(t, e)
	emptied := false
	for i := range 60 {
		before := e.journal.size
		_, err := e.Commit(ctx, smallCommit(i))
		require.NoError(t, err)
		if e.journal.size < before {
			emptied = true
		}
		require.Equal(t, commitState(t, e), afterPowerLossState(t, fsys, nil), "power loss after commit %d", i)
	}
	require.True(t, emptied, "the journal was emptied along the way")
}

// TestRedoRepairsGarbledTail: pages of a segment never fsynced may reach
// the disk in any order, so a power loss can leave a bad batch with good
// ones after it. When the journal holds everything from there on, Open
// cuts the log back to the bad batch and replays the rest: no damage is
// reported and nothing is lost.
func TestRedoRepairsGarbledTail(t *testing.T) {
	fsys := NewMemFS()
	e := redoEngine(t, fsys, func(o *Options) { o.SegmentBytes = 1 << 20 })
	createCommitTables(t, e)
	for i := range 6 {
		_, err := e.Commit(ctx, smallCommit(2*i)) // partition a only
		require.NoError(t, err)
	}
	want := commitState(t, e)
	info, err := e.TableInfo(ctx, path("ev"))
	require.NoError(t, err)
	parts, err := e.ListPartitions(ctx, path("ev"))
	require.NoError(t, err)
	// A failed engine's Close leaves the journal as a crash would: it
	// still holds every commit.
	e.fail("test", errTestingCrash)
	require.NoError(t, e.Close())
	tb := bucket(info, 0)
	tb.PartitionID = parts[0].ID
	seg := filepath.Join("db", tabletDir(tb), segmentName(0, ".log"))
	f, err := fsys.OpenFile(seg, os.O_RDWR, 0)
	require.NoError(t, err)
	st, err := f.Stat()
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(200))
	// Garble a byte in the second batch's payload.
	b := make([]byte, 1)
	starts := memBatchStarts(t, f, st.Size())
	require.Greater(t, len(starts), 3)
	_, err = f.ReadAt(b, starts[1]+40)
	require.NoError(t, err)
	b[0] ^= 0x40
	_, err = f.WriteAt(b, starts[1]+40)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	e2 := redoEngine(t, fsys, func(o *Options) { o.SegmentBytes = 1 << 20 })
	defer e2.Close()
	require.Equal(t, want, commitState(t, e2))
}

// TestRedoGroupCommit: commits running at the same time share journal
// fsyncs, and every acknowledged one survives a power loss.
func TestRedoGroupCommit(t *testing.T) {
	inner := NewCrashMemFS()
	syncs := &syncCounter{FS: inner, match: journalFile}
	e := redoEngine(t, syncs, nil)
	defer e.Close()
	createCommitTables(t, e)
	// The first commit creates the journal (and fsyncs its zeroes).
	_, err := e.Commit(ctx, smallCommit(0))
	require.NoError(t, err)
	before := syncs.n.Load()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Distinct kv keys per writer: no commit waits for
				// another's bucket more than the lock order makes it.
				_, err := e.Commit(ctx, []Write{
					{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", 10000+w*each+i)},
					{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{fmt.Sprintf("w%d-%d", w, i), 100 + w*each + i, i}}},
				})
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	fsyncs := syncs.n.Load() - before
	t.Logf("%d commits, %d journal fsyncs", writers*each, fsyncs)
	require.LessOrEqual(t, fsyncs, int64(writers*each))
	want := commitState(t, e)
	require.Equal(t, want, afterPowerLossState(t, inner, nil))
}

// syncCounter counts the fsyncs of the files whose name contains match.
type syncCounter struct {
	FS
	match string
	n     atomic.Int64
}

func (c *syncCounter) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.Contains(name, c.match) {
		return f, err
	}
	return &countedFile{File: f, n: &c.n}, nil
}

type countedFile struct {
	File
	n *atomic.Int64
}

func (f *countedFile) Sync() error {
	f.n.Add(1)
	return f.File.Sync()
}

// memBatchStarts returns the byte positions of the batches of a segment.
func memBatchStarts(t *testing.T, f File, size int64) []int64 {
	t.Helper()
	var out []int64
	hdr := make([]byte, 12)
	for pos := int64(0); pos < size; {
		out = append(out, pos)
		_, err := f.ReadAt(hdr, pos)
		require.NoError(t, err)
		pos += 12 + int64(binary.LittleEndian.Uint32(hdr[8:]))
	}
	return out
}

// journalRecordBytes returns the bytes of whole records the commit
// journal at name holds (0: it holds none).
func journalRecordBytes(t *testing.T, fsys FS, name string) int64 {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	_, n, _, err := readJournal(f)
	require.NoError(t, err)
	return n
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	st, err := os.Stat(name)
	require.NoError(t, err)
	return st.Size()
}
