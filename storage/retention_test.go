package storage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// oneSegmentPerStatement makes every statement's batch roll a segment.
func oneSegmentPerStatement(o *Options) { o.SegmentBytes = 1 }

func logStart(t *testing.T, e *Engine, tb metadata.TableBucket) int64 {
	t.Helper()
	m, err := e.ListOffsets(ctx, []metadata.TableBucket{tb}, metadata.OffsetEarliest)
	require.NoError(t, err)
	return m[tb]
}

// appendStatements appends n statements of two rows each.
func appendStatements(t *testing.T, e *Engine, table string, from, n int) {
	t.Helper()
	for i := range n {
		appendRows(t, e, table, [][]any{orderRow(from + 2*i), orderRow(from + 2*i + 1)})
	}
}

func TestDropExpiredRemovesOldSegments(t *testing.T) {
	dir := t.TempDir()
	var tb metadata.TableBucket
	func() {
		e, _ := testEngine(t, dir, oneSegmentPerStatement)
		defer e.Close()
		info := createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptLogTTL: "1 h"})
		tb = bucket(info, 0)
		forever := createTable(t, e, "forever", ordersColumns(), nil, map[string]string{metadata.OptLogTTL: "0"})
		appendStatements(t, e, "forever", 0, 3)

		appendStatements(t, e, "t", 0, 3) // offsets 0..5, three segments
		mid := time.Now()
		time.Sleep(10 * time.Millisecond)
		appendStatements(t, e, "t", 6, 2) // offsets 6..9, two segments
		require.Len(t, segmentFiles(t, dir, tb), 5)

		n, err := e.DropExpired(ctx, time.Now())
		require.NoError(t, err)
		require.Zero(t, n, "nothing is an hour old")

		// One hour after mid, only the first three segments are older
		// than the TTL.
		n, err = e.DropExpired(ctx, mid.Add(time.Hour+time.Millisecond))
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, int64(6), logStart(t, e, tb))
		require.Equal(t, int64(10), hw(t, e, tb))
		require.Len(t, segmentFiles(t, dir, tb), 2)
		_, err = e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
		require.ErrorIs(t, err, metadata.ErrNotFound)
		offsets, rows := readAll(t, e, tb, 6, -1, ReadOptions{})
		require.Equal(t, []int64{6, 7, 8, 9}, offsets)
		require.Equal(t, orderRow(6)[0], rows[0][0])

		// Far in the future everything is expired but the active segment.
		n, err = e.DropExpired(ctx, time.Now().Add(48*time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n, "the active (last) segment stays")
		require.Equal(t, int64(8), logStart(t, e, tb))
		require.Len(t, segmentFiles(t, dir, tb), 1)
		require.Equal(t, int64(0), logStart(t, e, bucket(forever, 0)), "a TTL of 0 keeps the log forever")
	}()

	// The log start survives a reopen, and writing continues after it.
	e, _ := testEngine(t, dir, oneSegmentPerStatement)
	require.Equal(t, int64(8), logStart(t, e, tb))
	appendStatements(t, e, "t", 10, 1)
	offsets, _ := readAll(t, e, tb, 8, -1, ReadOptions{})
	require.Equal(t, []int64{8, 9, 10, 11}, offsets)
	_, err := e.ReadLog(ctx, tb, 7, -1, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrNotFound)
}

func TestDropExpiredKeepsSegmentsOfOpenReaders(t *testing.T) {
	e, _ := testEngine(t, "", oneSegmentPerStatement)
	info := createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptLogTTL: "1 s"})
	tb := bucket(info, 0)
	appendStatements(t, e, "t", 0, 4)
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
	require.NoError(t, err)
	defer r.Close()
	n, err := e.DropExpired(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 3, n)
	var offsets []int64
	for r.Next() {
		b := r.Batch()
		for i := range b.Record.NumRows() {
			offsets = append(offsets, b.BaseOffset+i)
		}
	}
	require.NoError(t, r.Err())
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7}, offsets, "a reader opened before expiry reads what it pinned")
}

func TestDropExpiredNeverPassesTheTieredOffset(t *testing.T) {
	e, _ := testEngine(t, "", oneSegmentPerStatement)
	info := createTable(t, e, "t", ordersColumns(), nil, lakeOpts(map[string]string{metadata.OptLogTTL: "1 s"}))
	tb := bucket(info, 0)
	appendStatements(t, e, "t", 0, 5) // segments [0,2) [2,4) [4,6) [6,8) [8,10)
	later := time.Now().Add(time.Hour)

	n, err := e.DropExpired(ctx, later)
	require.NoError(t, err)
	require.Zero(t, n, "a lake table keeps the log of a bucket it never tiered")

	require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), metadata.LakeSnapshot{SnapshotID: 1, TieredOffsets: map[metadata.TableBucket]int64{tb: 5}}))
	n, err = e.DropExpired(ctx, later)
	require.NoError(t, err)
	require.Equal(t, 2, n, "[4,6) holds offset 5, which is not in the lake")
	require.Equal(t, int64(4), logStart(t, e, tb))

	require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), metadata.LakeSnapshot{SnapshotID: 2, TieredOffsets: map[metadata.TableBucket]int64{tb: 10}}))
	n, err = e.DropExpired(ctx, later)
	require.NoError(t, err)
	require.Equal(t, 2, n, "everything is tiered; the active segment stays")
	require.Equal(t, int64(8), logStart(t, e, tb))
}

func TestDropExpiredNeverPassesTheKvSnapshot(t *testing.T) {
	for _, lake := range []bool{false, true} {
		name := "pk"
		if lake {
			name = "pk-lake"
		}
		t.Run(name, func(t *testing.T) {
			// A replaced file system runs Pebble in memory: the reopen
			// must rebuild the state from the KV snapshot and the log
			// after it, for the log before it is gone.
			fsys := NewMemFS()
			tweak := func(o *Options) { o.FS = fsys; o.InMemory = false; o.Dir = "db"; o.SegmentBytes = 1 }
			opts := map[string]string{metadata.OptLogTTL: "1 s", metadata.OptBucketNum: "1"}
			if lake {
				opts[metadata.OptDatalakeEnabled] = "true"
			}
			var tb metadata.TableBucket
			func() {
				e, _ := testEngine(t, "", tweak)
				defer e.Close()
				info := createPK(t, e, "t", opts)
				tb = bucket(info, 0)
				for i := range 5 {
					upsert(t, e, "t", []any{"a", i, int64(i)}) // offsets 0..4, a segment each
				}
				later := time.Now().Add(time.Hour)
				n, err := e.DropExpired(ctx, later)
				require.NoError(t, err)
				require.Zero(t, n, "no KV snapshot: the whole log rebuilds the state")

				snaps, err := e.TakeKvSnapshots(ctx, path("t"))
				require.NoError(t, err)
				require.Equal(t, int64(5), snaps[0].LogOffset)
				upsert(t, e, "t", []any{"b", 1, int64(10)}) // -U +U at 5, 6
				del(t, e, "t", []any{nil, 2, nil})          // -D at 7
				upsert(t, e, "t", []any{"c", 9, int64(9)})  // +I at 8

				if lake {
					require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), metadata.LakeSnapshot{SnapshotID: 1, TieredOffsets: map[metadata.TableBucket]int64{tb: 3}}))
					n, err = e.DropExpired(ctx, later)
					require.NoError(t, err)
					require.Equal(t, 3, n, "the tiered offset is the tighter guard")
				}
				n, err = e.DropExpired(ctx, later)
				require.NoError(t, err)
				if lake {
					require.Zero(t, n, "the tiered offset holds")
					require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), metadata.LakeSnapshot{SnapshotID: 2, TieredOffsets: map[metadata.TableBucket]int64{tb: 9}}))
					n, err = e.DropExpired(ctx, later)
					require.NoError(t, err)
					require.Equal(t, 2, n)
				} else {
					require.Equal(t, 5, n)
				}
				require.Equal(t, int64(5), logStart(t, e, tb), "the log after the KV snapshot stays")
			}()

			e, _ := testEngine(t, "", tweak)
			require.Equal(t, int64(5), logStart(t, e, tb))
			require.Equal(t, []any{"a", int64(0), int64(0)}, lookup(t, e, "t", 0))
			require.Equal(t, []any{"b", int64(1), int64(10)}, lookup(t, e, "t", 1))
			require.Nil(t, lookup(t, e, "t", 2))
			require.Equal(t, []any{"a", int64(4), int64(4)}, lookup(t, e, "t", 4))
			require.Equal(t, []any{"c", int64(9), int64(9)}, lookup(t, e, "t", 9))
			// The restored state keeps taking writes.
			upsert(t, e, "t", []any{"d", 0, int64(100)})
			require.Equal(t, []any{"d", int64(0), int64(100)}, lookup(t, e, "t", 0))
		})
	}
}

func TestDropExpiredKvOnDiskSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	func() {
		e, _ := testEngine(t, dir, oneSegmentPerStatement)
		defer e.Close()
		createPK(t, e, "t", map[string]string{metadata.OptLogTTL: "1 s", metadata.OptBucketNum: "1"})
		for i := range 4 {
			upsert(t, e, "t", []any{"a", i, int64(i)})
		}
		_, err := e.TakeKvSnapshots(ctx, path("t"))
		require.NoError(t, err)
		upsert(t, e, "t", []any{"z", 3, int64(33)})
		n, err := e.DropExpired(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 4, n)
	}()
	e, _ := testEngine(t, dir, oneSegmentPerStatement)
	require.Equal(t, []any{"a", int64(0), int64(0)}, lookup(t, e, "t", 0))
	require.Equal(t, []any{"z", int64(3), int64(33)}, lookup(t, e, "t", 3))
}
