package storage

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// txBuffer begins a transaction: a write view and its buffer. The view is
// closed at the end of the test.
func txBuffer(t *testing.T, e *Engine) *WriteBuffer {
	t.Helper()
	v, err := e.WriteView(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v.NewWriteBuffer()
}

func bufUpsert(t *testing.T, b *WriteBuffer, table string, rows ...[]any) {
	t.Helper()
	_, err := b.Add(ctx, Write{Path: path(table), Kind: WriteUpsert, Rows: rows})
	require.NoError(t, err)
}

func lookupN(t *testing.T, e *Engine, table string, id int) (int64, bool) {
	t.Helper()
	row, found, err := e.Lookup(ctx, path(table), []any{nil, id, nil})
	require.NoError(t, err)
	if !found {
		return 0, false
	}
	return row[2].(int64), true
}

// TestConflictFirstCommitterWins: two transactions write one key; the
// second to commit fails with ErrConflict and none of its writes (also
// those to other keys) are applied.
func TestConflictFirstCommitterWins(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", map[string]string{metadata.OptBucketNum: "2"})
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	t1, t2 := txBuffer(t, e), txBuffer(t, e)
	bufUpsert(t, t1, "kv", []any{"a", 1, int64(11)})
	bufUpsert(t, t2, "kv", []any{"a", 1, int64(12)}, []any{"b", 2, int64(20)})
	_, err := t1.Commit(ctx)
	require.NoError(t, err)
	_, err = t2.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
	require.Contains(t, err.Error(), "kv")
	n, _ := lookupN(t, e, "kv", 1)
	require.EqualValues(t, 11, n, "the first committer's value")
	_, found := lookupN(t, e, "kv", 2)
	require.False(t, found, "nothing of the losing commit is applied")
}

// TestConflictDisjointKeys: transactions writing different keys (also of
// one bucket) both commit, and so does a transaction whose key was last
// written before it began.
func TestConflictDisjointKeys(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	t1, t2 := txBuffer(t, e), txBuffer(t, e)
	bufUpsert(t, t1, "kv", []any{"a", 1, int64(11)})
	bufUpsert(t, t2, "kv", []any{"b", 2, int64(20)})
	_, err := t1.Commit(ctx)
	require.NoError(t, err)
	_, err = t2.Commit(ctx)
	require.NoError(t, err)
	t3 := txBuffer(t, e)
	bufUpsert(t, t3, "kv", []any{"a", 1, int64(12)})
	_, err = t3.Commit(ctx)
	require.NoError(t, err, "key 1 was written before t3 began")
	n, _ := lookupN(t, e, "kv", 1)
	require.EqualValues(t, 12, n)
}

// TestConflictAutocommitAfterBegin: an autocommit write of the key after
// Begin beats the transaction; one before Begin does not.
func TestConflictAutocommitAfterBegin(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	tx := txBuffer(t, e)
	upsert(t, e, "kv", []any{"a", 1, int64(99)})
	bufUpsert(t, tx, "kv", []any{"a", 1, int64(11)})
	_, err := tx.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
	n, _ := lookupN(t, e, "kv", 1)
	require.EqualValues(t, 99, n)
}

// TestConflictDeleteVsUpdate: a delete and an update of one key conflict
// either way round, even when the losing delete would change nothing by
// then.
func TestConflictDeleteVsUpdate(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	upsert(t, e, "kv", []any{"a", 1, int64(10)}, []any{"b", 2, int64(20)})

	del1, upd1 := txBuffer(t, e), txBuffer(t, e)
	_, err := del1.Add(ctx, Write{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 1, nil}}})
	require.NoError(t, err)
	bufUpsert(t, upd1, "kv", []any{"a", 1, int64(11)})
	_, err = del1.Commit(ctx)
	require.NoError(t, err)
	_, err = upd1.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
	_, found := lookupN(t, e, "kv", 1)
	require.False(t, found)

	upd2, del2 := txBuffer(t, e), txBuffer(t, e)
	bufUpsert(t, upd2, "kv", []any{"b", 2, int64(21)})
	_, err = del2.Add(ctx, Write{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 2, nil}}})
	require.NoError(t, err)
	_, err = upd2.Commit(ctx)
	require.NoError(t, err)
	_, err = del2.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
	n, _ := lookupN(t, e, "kv", 2)
	require.EqualValues(t, 21, n)

	// Two deletes of one key: the second deletes nothing by then, and
	// still loses, as it wrote the key.
	upsert(t, e, "kv", []any{"c", 3, int64(30)})
	d1, d2 := txBuffer(t, e), txBuffer(t, e)
	for _, d := range []*WriteBuffer{d1, d2} {
		_, err = d.Add(ctx, Write{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 3, nil}}})
		require.NoError(t, err)
	}
	_, err = d1.Commit(ctx)
	require.NoError(t, err)
	_, err = d2.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
}

// TestConflictPartitions: one key value in two partitions is two keys.
func TestConflictPartitions(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	_, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("p"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("id", metadata.IntType()), col("dt", metadata.StringType()), col("n", metadata.BigIntType()),
		}, PrimaryKey: []string{"id", "dt"}},
		PartitionKeys: []string{"dt"},
	}, false)
	require.NoError(t, err)
	_, err = e.Upsert(ctx, path("p"), [][]any{{1, "x", int64(1)}, {1, "y", int64(1)}}, UpsertOptions{})
	require.NoError(t, err)
	t1, t2, t3 := txBuffer(t, e), txBuffer(t, e), txBuffer(t, e)
	bufUpsert(t, t1, "p", []any{1, "x", int64(2)})
	bufUpsert(t, t2, "p", []any{1, "y", int64(3)})
	bufUpsert(t, t3, "p", []any{1, "x", int64(4)})
	_, err = t1.Commit(ctx)
	require.NoError(t, err)
	_, err = t2.Commit(ctx)
	require.NoError(t, err, "same id, other partition")
	_, err = t3.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict, "same id, same partition")

	// A partition created after Begin by another commit: its keys were
	// written after the cut.
	t4 := txBuffer(t, e)
	_, err = e.Upsert(ctx, path("p"), [][]any{{1, "z", int64(5)}}, UpsertOptions{})
	require.NoError(t, err)
	bufUpsert(t, t4, "p", []any{1, "z", int64(6)})
	_, err = t4.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
}

// TestConflictLogAppendsNever: appends to one log table from several
// transactions and autocommits all commit.
func TestConflictLogAppendsNever(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "log", []metadata.Column{col("i", metadata.BigIntType())}, nil, nil)
	t1, t2 := txBuffer(t, e), txBuffer(t, e)
	for _, b := range []*WriteBuffer{t1, t2} {
		_, err := b.Add(ctx, Write{Path: path("log"), Kind: WriteAppend, Rows: [][]any{{int64(1)}}})
		require.NoError(t, err)
	}
	_, err := e.Append(ctx, path("log"), [][]any{{int64(2)}})
	require.NoError(t, err)
	_, err = t1.Commit(ctx)
	require.NoError(t, err)
	_, err = t2.Commit(ctx)
	require.NoError(t, err)
	tb := bucket(info, 0)
	off, err := e.ListOffsets(ctx, []metadata.TableBucket{tb}, metadata.OffsetLatest)
	require.NoError(t, err)
	require.EqualValues(t, 3, off[tb])
}

// TestConflictLockedKeys: a key named by Lock (read FOR UPDATE) counts as
// written for the check, and is not recorded as a write: a transaction
// that only locked commits nothing and makes no other one lose.
func TestConflictLockedKeys(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	createTable(t, e, "log", []metadata.Column{col("i", metadata.BigIntType())}, nil, nil)
	upsert(t, e, "kv", []any{"a", 1, int64(10)}, []any{"b", 2, int64(20)})

	locker := txBuffer(t, e)
	require.NoError(t, locker.Lock(ctx, path("kv"), [][]any{{nil, 1, nil}}))
	require.NoError(t, locker.Lock(ctx, path("log"), [][]any{{int64(1)}}), "a log table has no keys")
	bufUpsert(t, locker, "kv", []any{"b", 2, int64(21)})
	other := txBuffer(t, e)
	bufUpsert(t, other, "kv", []any{"a", 1, int64(11)})
	_, err := other.Commit(ctx)
	require.NoError(t, err)
	_, err = locker.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict)
	require.Contains(t, err.Error(), "FOR UPDATE")
	n, _ := lookupN(t, e, "kv", 2)
	require.EqualValues(t, 20, n, "the locker's write is not applied")

	// Locks alone: no conflict when nobody wrote the key, and the lock
	// itself is no write another transaction loses to.
	l2, w2 := txBuffer(t, e), txBuffer(t, e)
	require.NoError(t, l2.Lock(ctx, path("kv"), [][]any{{nil, 2, nil}}))
	bufUpsert(t, w2, "kv", []any{"b", 2, int64(22)})
	_, err = l2.Commit(ctx)
	require.NoError(t, err)
	_, err = w2.Commit(ctx)
	require.NoError(t, err)
}

// TestConflictReadOnlyNever: a transaction that wrote nothing commits
// whatever others did.
func TestConflictReadOnlyNever(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	tx := txBuffer(t, e)
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	res, err := tx.Commit(ctx)
	require.NoError(t, err)
	require.Empty(t, res)
}

// TestConflictBookkeeping: nothing is recorded while no write view is
// open; the last view to close drops what was; a plain ReadView's buffer
// refuses a checked commit.
func TestConflictBookkeeping(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	count := func() int {
		e.conflicts.mu.Lock()
		defer e.conflicts.mu.Unlock()
		return len(e.conflicts.mu.last)
	}
	upsert(t, e, "kv", []any{"a", 1, int64(10)})
	require.Zero(t, count())
	v, err := e.WriteView(ctx)
	require.NoError(t, err)
	upsert(t, e, "kv", []any{"a", 1, int64(11)}, []any{"b", 2, int64(20)})
	require.Equal(t, 2, count())
	require.NoError(t, v.Close())
	require.Zero(t, count())

	rv, err := e.ReadView(ctx)
	require.NoError(t, err)
	defer rv.Close()
	upsert(t, e, "kv", []any{"a", 1, int64(12)})
	require.Zero(t, count(), "read views record nothing")
	b := rv.NewWriteBuffer()
	bufUpsert(t, b, "kv", []any{"a", 1, int64(13)})
	_, err = b.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}

// TestConflictPrune: keys recorded before the oldest open view's cut are
// pruned as the set grows.
func TestConflictPrune(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	old, err := e.WriteView(ctx)
	require.NoError(t, err)
	rows := make([][]any, minPrune)
	for i := range rows {
		rows[i] = []any{"v", i, int64(i)}
	}
	_, err = e.Upsert(ctx, path("kv"), rows, UpsertOptions{})
	require.NoError(t, err)
	young, err := e.WriteView(ctx)
	require.NoError(t, err)
	defer young.Close()
	require.NoError(t, old.Close())
	// Growing the set to twice its last size prunes what only the old
	// view could conflict on, and keeps what the young one can.
	more := make([][]any, 2*minPrune)
	for i := range more {
		more[i] = []any{"w", minPrune + i, int64(i)}
	}
	_, err = e.Upsert(ctx, path("kv"), more, UpsertOptions{})
	require.NoError(t, err)
	e.conflicts.mu.Lock()
	n := len(e.conflicts.mu.last)
	e.conflicts.mu.Unlock()
	require.Equal(t, 2*minPrune, n)
	b := young.NewWriteBuffer()
	bufUpsert(t, b, "kv", []any{"y", minPrune, int64(-2)})
	_, err = b.Commit(ctx)
	require.ErrorIs(t, err, metadata.ErrConflict, "the key written after the young view's cut is kept")
}

// TestWriteBufferRestore: Restore drops the writes, the appended rows of
// a merged append, the locks and the key rows buffered after the mark;
// marks nest.
func TestWriteBufferRestore(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "kv", nil)
	createTable(t, e, "log", []metadata.Column{col("i", metadata.BigIntType())}, nil, nil)
	upsert(t, e, "kv", []any{"a", 1, int64(10)}, []any{"c", 3, int64(30)})
	b := txBuffer(t, e)
	appendLog := func(i int64) {
		_, err := b.Add(ctx, Write{Path: path("log"), Kind: WriteAppend, Rows: [][]any{{i}}})
		require.NoError(t, err)
	}
	bufUpsert(t, b, "kv", []any{"a", 1, int64(11)})
	appendLog(1)
	outer := b.Mark()
	appendLog(2) // merges into the append before the mark
	bufUpsert(t, b, "kv", []any{"a", 1, int64(12)}, []any{"b", 2, int64(20)})
	inner := b.Mark()
	require.NoError(t, b.Lock(ctx, path("kv"), [][]any{{nil, 3, nil}}))
	_, err := b.Add(ctx, Write{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 1, nil}}})
	require.NoError(t, err)
	b.Restore(inner)
	require.Len(t, b.Writes(), 3)
	res, err := b.Add(ctx, Write{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"a", 1, int64(12)}}})
	require.NoError(t, err)
	require.Zero(t, res.RowsAffected, "key 1 holds 12 again after the restore: no change")
	b.Restore(outer)
	require.Len(t, b.Writes(), 2)
	require.Len(t, b.Writes()[1].Rows, 1, "the row merged after the mark is gone")
	require.True(t, b.Wrote(path("log")))
	res, err = b.Add(ctx, Write{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"b", 2, int64(20)}}})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.RowsAffected, "key 2 is new again")
	// The dropped lock of key 3 no longer makes the commit lose.
	upsert(t, e, "kv", []any{"c", 3, int64(31)})
	_, err = b.Commit(ctx)
	require.NoError(t, err)
	n, _ := lookupN(t, e, "kv", 1)
	require.EqualValues(t, 11, n)
	n, _ = lookupN(t, e, "kv", 2)
	require.EqualValues(t, 20, n)
	off, err := e.ListOffsets(ctx, []metadata.TableBucket{bucket(mustTable(t, e, "log"), 0)}, metadata.OffsetLatest)
	require.NoError(t, err)
	require.Len(t, off, 1)
	for _, o := range off {
		require.EqualValues(t, 1, o, "one log row committed")
	}
}

func mustTable(t *testing.T, e *Engine, name string) metadata.TableInfo {
	t.Helper()
	info, err := e.TableInfo(ctx, path(name))
	require.NoError(t, err)
	return info
}

// TestConflictWithNoOpCommit: a commit whose upsert leaves its row as it
// was still wrote the key: a transaction begun before it that writes the
// key loses. Both for a small commit (applied in a group) and for one too
// large to join one.
func TestConflictWithNoOpCommit(t *testing.T) {
	for _, extra := range []int{0, maxCombinedRows} {
		e, _ := testEngine(t, "", nil)
		createPK(t, e, "kv", nil)
		rows := [][]any{{"a", 1, int64(10)}}
		for i := range extra {
			rows = append(rows, []any{"x", 100 + i, int64(i)})
		}
		upsert(t, e, "kv", rows...)
		tx := txBuffer(t, e)
		require.EqualValues(t, 0, upsert(t, e, "kv", rows...), "the same rows again change nothing")
		bufUpsert(t, tx, "kv", []any{"a", 1, int64(12)})
		_, err := tx.Commit(ctx)
		require.ErrorIs(t, err, metadata.ErrConflict, "with %d more rows", extra)
	}
}
