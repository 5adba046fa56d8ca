package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// keepAcked saves the acknowledged-offsets checkpoint of the open engine
// in dir as it is now; the returned func, run after the engine is
// closed, puts it back. The engine in between then looks, to the next
// Open, like a process killed after its last write: the writes since
// were not covered by any checkpoint.
func keepAcked(t *testing.T, dir string) func() {
	t.Helper()
	name := filepath.Join(dir, ackedFile)
	saved, err := os.ReadFile(name)
	require.NoError(t, err)
	return func() { require.NoError(t, os.WriteFile(name, saved, 0o644)) }
}

// TestAcknowledgedTailIsDamage harms the last batch of a cleanly closed
// engine (every commit acknowledged) the ways a torn write would leave
// it: it is damage, not a torn tail. Reads of the bucket fail with
// ErrCorrupt naming the segment, writes are refused, nothing is
// truncated, and a reopen still reports it. Without Sync the same holds
// after a clean Close, which fsyncs what the commits did not.
func TestAcknowledgedTailIsDamage(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) { testAcknowledgedTailIsDamage(t, sync) })
	}
}

func testAcknowledgedTailIsDamage(t *testing.T, sync bool) {
	withSync := func(o *Options) { o.Sync = sync }
	for _, tc := range []struct {
		name string
		harm func(t *testing.T, path string, lastStart int64)
	}{
		{"header cut short", func(t *testing.T, path string, lastStart int64) {
			require.NoError(t, os.Truncate(path, lastStart+10))
		}},
		{"batch cut short", func(t *testing.T, path string, lastStart int64) {
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, st.Size()-7))
		}},
		{"bad CRC on the last batch", func(t *testing.T, path string, lastStart int64) {
			flipByte(t, path, lastStart+60)
		}},
		{"length past the end", func(t *testing.T, path string, lastStart int64) {
			flipByte(t, path, lastStart+10)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var info metadata.TableInfo
			func() {
				e, _ := testEngine(t, dir, withSync)
				defer e.Close()
				info = createTable(t, e, "orders", ordersColumns(), nil, nil)
				appendRows(t, e, "orders", [][]any{orderRow(0), orderRow(1)})
				appendRows(t, e, "orders", [][]any{orderRow(2)})
			}()
			tb := bucket(info, 0)
			seg := filepath.Join(dir, tabletDir(tb), segmentName(0, ".log"))
			tc.harm(t, seg, batchStarts(t, seg)[1])
			st, err := os.Stat(seg)
			require.NoError(t, err)
			for range 2 {
				func() {
					e, _ := testEngine(t, dir, withSync)
					defer e.Close()
					_, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
					require.ErrorIs(t, err, metadata.ErrCorrupt)
					require.ErrorContains(t, err, segmentName(0, ".log"))
					require.ErrorContains(t, err, "offsets up to 3 were acknowledged")
					_, err = e.Append(ctx, path("orders"), [][]any{orderRow(9)})
					require.ErrorIs(t, err, metadata.ErrCorrupt, "no write takes the offsets of the damaged batch")
				}()
				after, err := os.Stat(seg)
				require.NoError(t, err)
				require.Equal(t, st.Size(), after.Size(), "nothing is truncated")
			}
		})
	}
}

// TestExpiryKeepsTheCheckpointTrue: TTL expiry records the new log start
// before it removes segments, so a reopen takes the shorter log for
// expiry, not for segments gone missing; a checkpoint that still says
// the old start (the segments went while the engine was closed) does
// not.
func TestExpiryKeepsTheCheckpointTrue(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	var before, afterExpiry func()
	func() {
		e, _ := testEngine(t, dir, oneSegmentPerStatement)
		defer e.Close()
		info = createTable(t, e, "orders", ordersColumns(), nil, map[string]string{metadata.OptLogTTL: "1 h"})
		appendStatements(t, e, "orders", 0, 20)
		require.NoError(t, e.writeAcked())
		before = keepAcked(t, dir)
		n, err := e.DropExpired(ctx, time.Now().Add(2*time.Hour))
		require.NoError(t, err)
		require.NotZero(t, n)
		// As if the process died right after the expiry.
		afterExpiry = keepAcked(t, dir)
	}()
	afterExpiry()
	tb := bucket(info, 0)
	var start int64
	func() {
		e, _ := testEngine(t, dir, oneSegmentPerStatement)
		defer e.Close()
		offs, err := e.ListOffsets(ctx, []metadata.TableBucket{tb}, metadata.OffsetEarliest)
		require.NoError(t, err)
		start = offs[tb]
		require.NotZero(t, start)
		offsets, _ := readAll(t, e, tb, start, -1, ReadOptions{})
		require.Len(t, offsets, int(40-start))
	}()

	before()
	e, _ := testEngine(t, dir, nil)
	_, err := e.ReadLog(ctx, tb, start, -1, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, segmentName(0, ".log"))
}

// TestDamagedCheckpointFailsOpen: a checkpoint that does not parse is
// ErrCorrupt naming it; Open fails rather than forget what it records.
func TestDamagedCheckpointFailsOpen(t *testing.T) {
	dir := t.TempDir()
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createTable(t, e, "orders", ordersColumns(), nil, nil)
		appendRows(t, e, "orders", [][]any{orderRow(0)})
	}()
	name := filepath.Join(dir, ackedFile)
	flipByte(t, name, 12)
	opts := DefaultOptions()
	opts.Dir = dir
	_, err := Open(opts)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, ackedFile)

	require.NoError(t, os.Remove(name))
	e, err := Open(opts)
	require.NoError(t, err, "without a checkpoint nothing is known to be missing")
	require.NoError(t, e.Close())
	_, err = os.Stat(name)
	require.False(t, errors.Is(err, fs.ErrNotExist), "Open and Close write it again")
}

// TestLogBelowItsLakeOrKvIsReported: without a checkpoint (a database
// from before it, or one lost), a log cut back at a batch boundary, so
// that nothing looks torn, still contradicts what the lake tiered and
// what the KV state applied: the bucket is damaged, not shorter.
func TestLogBelowItsLakeOrKvIsReported(t *testing.T) {
	cut := func(t *testing.T, dir string, tb metadata.TableBucket) {
		t.Helper()
		require.NoError(t, os.Remove(filepath.Join(dir, ackedFile)))
		seg := filepath.Join(dir, tabletDir(tb), segmentName(0, ".log"))
		require.NoError(t, os.Truncate(seg, batchStarts(t, seg)[1]))
	}
	t.Run("lake", func(t *testing.T) {
		dir := t.TempDir()
		var info metadata.TableInfo
		func() {
			e, _ := testEngine(t, dir, nil)
			defer e.Close()
			info = createTable(t, e, "orders", ordersColumns(), nil, map[string]string{metadata.OptDatalakeEnabled: "true"})
			appendRows(t, e, "orders", [][]any{orderRow(0), orderRow(1)})
			appendRows(t, e, "orders", [][]any{orderRow(2)})
			require.NoError(t, e.CommitLakeSnapshot(ctx, path("orders"), metadata.LakeSnapshot{
				SnapshotID: 1, TieredOffsets: map[metadata.TableBucket]int64{bucket(info, 0): 3},
			}))
		}()
		cut(t, dir, bucket(info, 0))
		e, _ := testEngine(t, dir, nil)
		_, err := e.ReadLog(ctx, bucket(info, 0), 0, -1, ReadOptions{})
		require.ErrorIs(t, err, metadata.ErrCorrupt)
		require.ErrorContains(t, err, "offsets up to 3 were acknowledged")
		_, err = e.Append(ctx, path("orders"), [][]any{orderRow(9)})
		require.ErrorIs(t, err, metadata.ErrCorrupt)
	})
	t.Run("kv", func(t *testing.T) {
		dir := t.TempDir()
		var info metadata.TableInfo
		func() {
			e, _ := testEngine(t, dir, nil)
			defer e.Close()
			info = createPK(t, e, "kv", nil)
			upsert(t, e, "kv", []any{"a", 1, int64(1)})
			upsert(t, e, "kv", []any{"b", 2, int64(2)})
		}()
		cut(t, dir, bucket(info, 0))
		e, _ := testEngine(t, dir, nil)
		_, _, err := e.Lookup(ctx, path("kv"), []any{nil, 2, nil})
		require.ErrorIs(t, err, metadata.ErrCorrupt)
		require.ErrorContains(t, err, "the KV state reflects offsets up to 2")
		_, err = e.ReadLog(ctx, bucket(info, 0), 0, -1, ReadOptions{})
		require.ErrorIs(t, err, metadata.ErrCorrupt, "the log it has left is not the bucket's rows")
	})
}

// TestCommitsWriteTheCheckpoint: a process killed long after its Open
// leaves a recent bound, written by the commits themselves.
func TestCommitsWriteTheCheckpoint(t *testing.T) {
	defer func(n int64) { checkpointEveryCommits = n }(checkpointEveryCommits)
	checkpointEveryCommits = 4
	dir := t.TempDir()
	var (
		info    metadata.TableInfo
		restore func()
	)
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "orders", ordersColumns(), nil, nil)
		for i := range 4 {
			appendRows(t, e, "orders", [][]any{orderRow(i)})
		}
		// As if the process died once the checkpoint the fourth commit
		// asked for is written: Close does not get to write one.
		e.waitCheckpoint()
		restore = keepAcked(t, dir)
	}()
	restore()
	requireFourthBatchAcknowledged(t, dir, info)
}

// AppendRecord's commits count towards the checkpoint as Commit's do, so
// a process that dies after loading records through it still has them
// claimed as acknowledged.
func TestAppendRecordWritesTheCheckpoint(t *testing.T) {
	defer func(n int64) { checkpointEveryCommits = n }(checkpointEveryCommits)
	checkpointEveryCommits = 4
	dir := t.TempDir()
	cols := []metadata.Column{col("id", metadata.BigIntType())}
	var (
		info    metadata.TableInfo
		restore func()
	)
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "ids", cols, nil, nil)
		for i := range 4 {
			b := array.NewInt64Builder(memory.DefaultAllocator)
			b.AppendValues([]int64{int64(i)}, nil)
			arr := b.NewArray()
			rec := array.NewRecordBatch(metadata.ArrowSchema(cols), []arrow.Array{arr}, 1)
			_, err := e.AppendRecord(ctx, info.Path, rec)
			require.NoError(t, err)
			rec.Release()
			arr.Release()
			b.Release()
		}
		e.waitCheckpoint()
		restore = keepAcked(t, dir)
	}()
	restore()
	requireFourthBatchAcknowledged(t, dir, info)
}

// requireFourthBatchAcknowledged damages the fourth (last) batch of the
// table's only bucket and checks that reopening reports it as damage
// below the checkpoint, not a torn tail to cut off.
func requireFourthBatchAcknowledged(t *testing.T, dir string, info metadata.TableInfo) {
	t.Helper()
	seg := filepath.Join(dir, tabletDir(bucket(info, 0)), segmentName(0, ".log"))
	flipByte(t, seg, batchStarts(t, seg)[3]+60)
	e, _ := testEngine(t, dir, nil)
	_, err := e.ReadLog(ctx, bucket(info, 0), 0, -1, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, "offsets up to 4 were acknowledged")
}
