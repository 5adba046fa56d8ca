package storage

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestReadViewIsACommitCut: while commits that each append one row to two
// log tables and upsert one key of a primary-key table run, every view
// sees the same number of commits in all three (never half a commit):
// the two high watermarks agree and the KV state holds exactly the keys
// of the commits the logs show.
func TestReadViewIsACommitCut(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	a := createTable(t, e, "a", []metadata.Column{col("i", metadata.BigIntType())}, nil, nil)
	b := createTable(t, e, "b", []metadata.Column{col("i", metadata.BigIntType())}, nil, nil)
	createPK(t, e, "kv", map[string]string{metadata.OptBucketNum: "3"})
	const commits = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range commits {
			_, err := e.Commit(ctx, []Write{
				{Path: path("a"), Kind: WriteAppend, Rows: [][]any{{int64(i)}}},
				{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"v", i, int64(i)}}},
				{Path: path("b"), Kind: WriteAppend, Rows: [][]any{{int64(i)}}},
			})
			if err != nil {
				panic(err)
			}
		}
	})
	seen := 0
	for seen < commits {
		v, err := e.ReadView(ctx)
		require.NoError(t, err)
		_, sa := v.LogOffsets(bucket(a, 0))
		_, sb := v.LogOffsets(bucket(b, 0))
		require.Equal(t, sa, sb, "both tables of a commit, or neither")
		// The key of the last commit in the view is there; the next is not.
		for _, k := range []int64{sa - 1, sa} {
			if k < 0 {
				continue
			}
			_, found, err := v.Lookup(ctx, path("kv"), []any{nil, k, nil})
			require.NoError(t, err)
			require.Equal(t, k < sa, found, "key %d in a view of %d commits", k, sa)
		}
		seen = int(sa)
		require.NoError(t, v.Close())
		require.NoError(t, v.Close(), "idempotent")
	}
	wg.Wait()
}

// TestReadViewPinsKvSnapshot: a view pins the KV snapshot it planned
// with, so later snapshots do not remove it; Close releases it.
func TestReadViewPinsKvSnapshot(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "kv", nil)
	tb := bucket(info, 0)
	upsert(t, e, "kv", []any{"a", 1, int64(1)})
	_, err := e.TakeKvSnapshots(ctx, path("kv"))
	require.NoError(t, err)
	upsert(t, e, "kv", []any{"b", 2, int64(2)})
	require.Equal(t, Pins{}, e.Pins())

	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	require.Equal(t, Pins{ReadViews: 1, KvSnapshots: 1}, e.Pins())
	snap, ok := v.KvSnapshot(tb)
	require.True(t, ok)
	_, stop := v.LogOffsets(tb)
	require.LessOrEqual(t, snap.LogOffset, stop)
	require.EqualValues(t, 1, snap.LogOffset)
	require.EqualValues(t, 2, stop)

	for i := range 2 {
		upsert(t, e, "kv", []any{"c", 3 + i, int64(3)})
		_, err = e.TakeKvSnapshots(ctx, path("kv"))
		require.NoError(t, err)
	}
	r, err := e.ReadKvSnapshot(ctx, tb, snap.SnapshotID, ReadOptions{})
	require.NoError(t, err, "pinned by the view")
	require.Equal(t, Pins{ReadViews: 1, KvSnapshots: 2}, e.Pins(), "the view's pin and the reader's")
	release, err := e.PinKvSnapshot(tb, snap.SnapshotID)
	require.NoError(t, err)
	require.EqualValues(t, 3, e.Pins().KvSnapshots)
	release()
	release()
	require.NoError(t, r.Close())
	require.NoError(t, v.Close())
	require.Equal(t, Pins{}, e.Pins(), "released by Close")
	_, err = e.ReadKvSnapshot(ctx, tb, snap.SnapshotID, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrNotFound, "released by Close")
}

// TestWriteBufferCounts: Add counts what Commit would against the view
// plus the writes before it, rejects bad writes without buffering them,
// and the buffered writes then commit with the same counts.
func TestWriteBufferCounts(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createCommitTables(t, e)
	_, err := e.Commit(ctx, baselineCommit())
	require.NoError(t, err)
	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	defer v.Close()
	// Another writer after the view: invisible to the counts.
	upsert(t, e, "kv", []any{"late", 20, int64(20)})

	buf := v.NewWriteBuffer()
	var counts []int64
	for _, w := range targetCommit() {
		res, err := buf.Add(ctx, w)
		require.NoError(t, err, "%s %s", w.Kind, w.Path)
		counts = append(counts, res.RowsAffected)
	}
	want := make([]int64, len(targetResults))
	for i, r := range targetResults {
		want[i] = r.RowsAffected
	}
	require.Equal(t, want, counts)
	res, err := buf.Add(ctx, Write{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"late", 20, int64(20)}}})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.RowsAffected, "key 20 is new in the view")

	// Rejected: NULL key, a log table upsert, a missing table. None is
	// buffered, and the rows of a rejected write are not remembered.
	n := len(buf.Writes())
	_, err = buf.Add(ctx, Write{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"ok", 30, int64(1)}, {"bad", nil, int64(1)}}})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	_, err = buf.Add(ctx, Write{Path: path("ev"), Kind: WriteUpsert, Rows: evRows("a", 1)})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = buf.Add(ctx, Write{Path: path("nope"), Kind: WriteAppend})
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.Len(t, buf.Writes(), n)
	res, err = buf.Add(ctx, Write{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"ok", 30, int64(1)}}})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.RowsAffected)
	require.True(t, buf.Wrote(path("ev")))
	require.False(t, buf.Wrote(path("nope")))

	got, err := e.Commit(ctx, buf.Writes())
	require.NoError(t, err)
	// The counts are Add's, at the view: Commit counts against the state
	// at Commit, where the late writer had already written key 20's row.
	require.Equal(t, fmt.Sprint(append(targetResults, WriteResult{0}, WriteResult{1})), fmt.Sprint(got))
}

// An engine closed while a view is still open releases the view's Pebble
// snapshot itself (Pebble refuses to close with snapshots open), and the
// view's own Close afterwards is harmless.
func TestEngineCloseReleasesOpenViews(t *testing.T) {
	e, err := Open(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	require.NoError(t, e.Close())
	require.NoError(t, v.Close())
}

// TestWriteBufferDelta: the delta of a table is what its reads lay over
// the view: a key table's touched keys by primary key, each with its row
// after the buffered writes or nil when deleted (a write that changes
// nothing, or a delete of an absent key, touches nothing); a log table's
// appended rows in order, coerced; nothing for a table not written.
func TestWriteBufferDelta(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createCommitTables(t, e)
	createPK(t, e, "untouched", nil)
	_, err := e.Commit(ctx, baselineCommit())
	require.NoError(t, err)
	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	defer v.Close()
	buf := v.NewWriteBuffer()
	for _, w := range targetCommit() {
		_, err := buf.Add(ctx, w)
		require.NoError(t, err)
	}
	info := func(name string) *metadata.TableInfo {
		i, err := e.TableInfo(ctx, path(name))
		require.NoError(t, err)
		return &i
	}

	kv := info("kv")
	d, ok, err := buf.Delta(kv)
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, d.Appended)
	keyer := NewDeltaKeyer(kv)
	byID := map[int32][]any{}
	for _, id := range []int32{1, 2, 4, 10, 11, 99} {
		k, err := keyer.Key(func(c int) any { return []any{nil, id, nil}[c] })
		require.NoError(t, err)
		if row, hit := d.Keys[string(k)]; hit {
			byID[id] = row
		}
	}
	require.Equal(t, map[int32][]any{
		1:  {"x1", int64(1), int64(111)}, // upserted, then partially updated
		4:  nil,                          // deleted
		10: {"x10", int64(10), int64(10)},
		11: nil, // upserted, then deleted
	}, byID)
	require.Len(t, d.Keys, 4)
	require.Equal(t, 4, d.Len())

	d, ok, err = buf.Delta(info("ev"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Nil(t, d.Keys)
	require.Equal(t, append(evRows("a", 100, 101, 102), evRows("b", 103, 104, 105)...), d.Appended)

	_, ok, err = buf.Delta(info("untouched"))
	require.NoError(t, err)
	require.False(t, ok)
	_, err = keyer.Key(func(int) any { return nil })
	require.ErrorIs(t, err, metadata.ErrConstraint, "a NULL key")
}

// TestWriteViewKeepsRowsItRead: a write view keeps the rows it read by
// key, and what it keeps is its cut: rows changed, inserted or deleted
// after the cut read as they were, a later view reads them as they are,
// and a row handed out is the caller's to change.
func TestWriteViewKeepsRowsItRead(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	defer e.Close()
	createPK(t, e, "t", nil)
	upsert(t, e, "t", []any{"a", 1, 10}, []any{"c", 3, 30})
	lookup := func(v *ReadView, id int) []any {
		t.Helper()
		row, found, err := v.Lookup(ctx, path("t"), []any{nil, id, nil})
		require.NoError(t, err)
		if !found {
			return nil
		}
		return row
	}
	old, err := e.WriteView(ctx)
	require.NoError(t, err)
	defer old.Close()
	first := lookup(old, 1)
	require.Equal(t, []any{"a", int64(1), int64(10)}, first)
	require.Nil(t, lookup(old, 2))
	require.NotNil(t, lookup(old, 3))
	first[2] = int64(999)

	upsert(t, e, "t", []any{"a", 1, 11}, []any{"b", 2, 20})
	del(t, e, "t", []any{nil, 3, nil})

	require.Equal(t, []any{"a", int64(1), int64(10)}, lookup(old, 1), "the cut's row, unchanged by the caller's edit")
	require.Nil(t, lookup(old, 2), "inserted after the cut")
	require.Equal(t, []any{"c", int64(3), int64(30)}, lookup(old, 3), "deleted after the cut")

	young, err := e.WriteView(ctx)
	require.NoError(t, err)
	defer young.Close()
	require.Equal(t, []any{"a", int64(1), int64(11)}, lookup(young, 1))
	require.Equal(t, []any{"b", int64(2), int64(20)}, lookup(young, 2))
	require.Nil(t, lookup(young, 3))
}
