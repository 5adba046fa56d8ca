package storage

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func pkColumns() []metadata.Column {
	return []metadata.Column{
		col("v", metadata.StringType()),
		col("id", metadata.IntType()),
		col("n", metadata.BigIntType()),
	}
}

// createPK creates a table keyed by id (not the first column).
func createPK(t *testing.T, e *Engine, name string, opts map[string]string) metadata.TableInfo {
	t.Helper()
	info, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path:    metadata.TablePath{Database: metadata.DefaultDatabase, Table: name},
		Schema:  metadata.Schema{Columns: pkColumns(), PrimaryKey: []string{"id"}},
		Options: opts,
	}, false)
	require.NoError(t, err)
	return info
}

func path(name string) metadata.TablePath {
	return metadata.TablePath{Database: metadata.DefaultDatabase, Table: name}
}

func upsert(t *testing.T, e *Engine, table string, rows ...[]any) int64 {
	t.Helper()
	res, err := e.Upsert(ctx, path(table), rows, UpsertOptions{})
	require.NoError(t, err)
	return res.RowsAffected
}

func del(t *testing.T, e *Engine, table string, rows ...[]any) int64 {
	t.Helper()
	res, err := e.Delete(ctx, path(table), rows)
	require.NoError(t, err)
	return res.RowsAffected
}

// changelog reads a bucket's log from start and renders one line per row:
// "<offset> <change> <values>"; batches are separated by "|".
func changelog(t *testing.T, e *Engine, tb metadata.TableBucket, start int64) []string {
	t.Helper()
	info := tableByID(t, e, tb.TableID)
	r, err := e.ReadLog(ctx, tb, start, -1, ReadOptions{})
	require.NoError(t, err)
	defer r.Close()
	var out []string
	for r.Next() {
		b := r.Batch()
		require.Len(t, b.ChangeTypes, int(b.Record.NumRows()))
		if len(out) > 0 {
			out = append(out, "|")
		}
		for i := range int(b.Record.NumRows()) {
			vals := make([]string, len(info.Schema.Columns))
			for c, col := range info.Schema.Columns {
				vals[c] = fmt.Sprint(metadata.ValueAt(b.Record.Column(c), col.Type, i))
			}
			out = append(out, fmt.Sprintf("%d %s %s", b.BaseOffset+int64(i), b.ChangeTypes[i], strings.Join(vals, ",")))
		}
	}
	require.NoError(t, r.Err())
	return out
}

func lookup(t *testing.T, e *Engine, table string, id any) []any {
	t.Helper()
	row, found, err := e.Lookup(ctx, path(table), []any{nil, id, nil})
	require.NoError(t, err)
	if !found {
		return nil
	}
	return row
}

// lookupFirst is lookup for a table keyed by its first column.
func lookupFirst(t *testing.T, e *Engine, table string, id any) []any {
	t.Helper()
	row, found, err := e.Lookup(ctx, path(table), []any{id, nil, nil})
	require.NoError(t, err)
	require.True(t, found)
	return row
}

func TestUpsertDeleteChangelog(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", nil)
	tb := bucket(info, 0)

	require.Equal(t, int64(2), upsert(t, e, "t", []any{"a", 1, 10}, []any{"b", 2, 20}))
	require.Equal(t, int64(0), upsert(t, e, "t", []any{"a", 1, 10}), "an upsert that changes nothing")
	require.Equal(t, int64(2), hw(t, e, tb), "nothing is logged when nothing changes")
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"x", 1, 11}))
	// Two upserts of one key in one statement apply in order, in one batch.
	require.Equal(t, int64(2), upsert(t, e, "t", []any{"c", 2, 1}, []any{"d", 2, 2}))
	require.Equal(t, int64(1), del(t, e, "t", []any{nil, 1, nil}))
	require.Equal(t, int64(0), del(t, e, "t", []any{nil, 1, nil}, []any{"ignored", 5, nil}), "deletes of missing keys")
	// Insert, update and delete of one key in one statement.
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"z", 3, 3}))
	res, err := e.Delete(ctx, path("t"), [][]any{{nil, 3, nil}, {nil, 2, nil}})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.RowsAffected)

	require.Equal(t, []string{
		"0 +I a,1,10", "1 +I b,2,20", "|",
		"2 -U a,1,10", "3 +U x,1,11", "|",
		"4 -U b,2,20", "5 +U c,2,1", "6 -U c,2,1", "7 +U d,2,2", "|",
		"8 -D x,1,11", "|",
		"9 +I z,3,3", "|",
		"10 -D z,3,3", "11 -D d,2,2",
	}, changelog(t, e, tb, 0))
	require.Nil(t, lookup(t, e, "t", 1))
	require.Nil(t, lookup(t, e, "t", 2))

	upsert(t, e, "t", []any{"k", 7, 70})
	require.Equal(t, []any{"k", int64(7), int64(70)}, lookup(t, e, "t", 7))
	require.Equal(t, []any{"k", int64(7), int64(70)}, lookup(t, e, "t", "7"), "the key is coerced")
	require.Nil(t, lookup(t, e, "t", nil), "a NULL key finds nothing")
}

func TestPartialUpdate(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", nil)
	tb := bucket(info, 0)
	upsert(t, e, "t", []any{"a", 1, 10})
	res, err := e.Upsert(ctx, path("t"), [][]any{{"not written", 1, 99}, {"not written", 2, 5}}, UpsertOptions{TargetColumns: []int{1, 2}})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.RowsAffected)
	require.Equal(t, []string{
		"0 +I a,1,10", "|",
		"1 -U a,1,10", "2 +U a,1,99", "3 +I <nil>,2,5",
	}, changelog(t, e, tb, 0))
	require.Equal(t, []any{"a", int64(1), int64(99)}, lookup(t, e, "t", 1))

	res, err = e.Upsert(ctx, path("t"), [][]any{{"x", 1, 99}}, UpsertOptions{TargetColumns: []int{1, 2}})
	require.NoError(t, err)
	require.Zero(t, res.RowsAffected, "the target columns already hold these values")

	_, err = e.Upsert(ctx, path("t"), [][]any{{"x", 1, 1}}, UpsertOptions{TargetColumns: []int{0, 2}})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "missing id")
	_, err = e.Upsert(ctx, path("t"), [][]any{{"x", 1, 1}}, UpsertOptions{TargetColumns: []int{1, 7}})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)

	// A partial update that leaves out a NOT NULL column without a
	// default is refused for a new key only, naming that column (not
	// one the write gives); an existing key keeps its value there.
	_, err = e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("nn"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("id", metadata.IntType()), {Name: "a", Type: metadata.IntType(), NotNull: true}, {Name: "b", Type: metadata.IntType(), NotNull: true},
		}, PrimaryKey: []string{"id"}},
	}, false)
	require.NoError(t, err)
	_, err = e.Upsert(ctx, path("nn"), [][]any{{1, 2, 3}}, UpsertOptions{TargetColumns: []int{0, 2}})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "column a of table fluss.nn is NOT NULL and has no default")
	require.NotContains(t, err.Error(), "column b")
	_, err = e.Upsert(ctx, path("nn"), [][]any{{1, 2, 3}}, UpsertOptions{})
	require.NoError(t, err)
	res, err = e.Upsert(ctx, path("nn"), [][]any{{1, nil, 30}, {2, nil, 4}}, UpsertOptions{TargetColumns: []int{0, 2}})
	require.ErrorIs(t, err, metadata.ErrConstraint, "one new key fails the whole write")
	require.ErrorContains(t, err, "row 2: ")
	require.Equal(t, []any{int64(1), int64(2), int64(3)}, lookupFirst(t, e, "nn", 1), "nothing of the failed write is applied")
	res, err = e.Upsert(ctx, path("nn"), [][]any{{1, nil, 30}}, UpsertOptions{TargetColumns: []int{0, 2}})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.RowsAffected)
	require.Equal(t, []any{int64(1), int64(2), int64(30)}, lookupFirst(t, e, "nn", 1))

	// A new key takes the write's defaults, or the schema's.
	res, err = e.Upsert(ctx, path("nn"), [][]any{{2, nil, 4}}, UpsertOptions{TargetColumns: []int{0, 2}, Defaults: []any{nil, 7, nil}})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.RowsAffected)
	require.Equal(t, []any{int64(2), int64(7), int64(4)}, lookupFirst(t, e, "nn", 2))
	_, err = e.Upsert(ctx, path("nn"), [][]any{{3, nil, 4}}, UpsertOptions{TargetColumns: []int{0, 2}, Defaults: []any{nil, "x", nil}})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "default of column a")
	_, err = e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("dflt"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("id", metadata.IntType()), {Name: "a", Type: metadata.IntType(), NotNull: true, Default: &metadata.ColumnDefault{Value: "-3"}}, col("b", metadata.IntType()),
		}, PrimaryKey: []string{"id"}},
	}, false)
	require.NoError(t, err)
	_, err = e.Upsert(ctx, path("dflt"), [][]any{{1, nil, 5}}, UpsertOptions{TargetColumns: []int{0, 2}})
	require.NoError(t, err)
	require.Equal(t, []any{int64(1), int64(-3), int64(5)}, lookupFirst(t, e, "dflt", 1))
}

func TestKvWriteErrors(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", nil)
	_, err := e.Upsert(ctx, path("t"), [][]any{{"a", 1, 1}, {"b", nil, 2}}, UpsertOptions{})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "row 2, column id")
	_, err = e.Delete(ctx, path("t"), [][]any{{nil, nil, nil}})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.Zero(t, hw(t, e, bucket(info, 0)), "a refused statement writes nothing")

	createTable(t, e, "log", ordersColumns(), nil, nil)
	_, err = e.Upsert(ctx, path("log"), [][]any{orderRow(1)}, UpsertOptions{})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = e.Delete(ctx, path("log"), [][]any{orderRow(1)})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, _, err = e.Lookup(ctx, path("log"), orderRow(1))
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = e.Append(ctx, path("t"), [][]any{{"a", 1, 1}})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}

func TestFirstRowMergeEngine(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", map[string]string{metadata.OptMergeEngine: "first_row"})
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"a", 1, 1}))
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"b", 1, 2}, []any{"c", 2, 3}), "only the new key counts")
	require.Equal(t, int64(0), del(t, e, "t", []any{nil, 1, nil}), "first_row ignores deletes")
	require.Equal(t, []any{"a", int64(1), int64(1)}, lookup(t, e, "t", 1))
	require.Equal(t, []string{"0 +I a,1,1", "|", "1 +I c,2,3"}, changelog(t, e, bucket(info, 0), 0))
	_, err := e.Upsert(ctx, path("t"), [][]any{{"a", 1, 1}}, UpsertOptions{TargetColumns: []int{1, 2}})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}

func TestVersionedMergeEngine(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", map[string]string{metadata.OptMergeEngine: "versioned", metadata.OptVersionColumn: "n"})
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"a", 1, 5}))
	require.Equal(t, int64(0), upsert(t, e, "t", []any{"old", 1, 3}), "a lower version is ignored")
	require.Equal(t, int64(0), upsert(t, e, "t", []any{"null", 1, nil}), "NULL is the lowest version")
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"tie", 1, 5}), "a tie goes to the incoming row")
	require.Equal(t, int64(1), upsert(t, e, "t", []any{"new", 1, 9}))
	require.Equal(t, int64(0), del(t, e, "t", []any{nil, 1, nil}), "versioned ignores deletes")
	require.Equal(t, []any{"new", int64(1), int64(9)}, lookup(t, e, "t", 1))
	require.Equal(t, []string{
		"0 +I a,1,5", "|", "1 -U a,1,5", "2 +U tie,1,5", "|", "3 -U tie,1,5", "4 +U new,1,9",
	}, changelog(t, e, bucket(info, 0), 0))
}

func TestChangelogImageWAL(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", map[string]string{metadata.OptChangelogImage: "WAL"})
	upsert(t, e, "t", []any{"a", 1, 1})
	upsert(t, e, "t", []any{"b", 1, 2})
	del(t, e, "t", []any{nil, 1, nil})
	require.Equal(t, []string{"0 +I a,1,1", "|", "1 +U b,1,2", "|", "2 -D b,1,2"}, changelog(t, e, bucket(info, 0), 0))
}

// snapshotRows reads a whole KV snapshot: rows (projected) and keys.
func snapshotRows(t *testing.T, e *Engine, tb metadata.TableBucket, id int64, opts ReadOptions) (rows [][]any, keys [][]byte) {
	t.Helper()
	info := tableByID(t, e, tb.TableID)
	proj := opts.Projection
	if proj == nil {
		for i := range info.Schema.Columns {
			proj = append(proj, i)
		}
	}
	r, err := e.ReadKvSnapshot(ctx, tb, id, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	for r.Next() {
		b := r.Batch()
		require.Len(t, b.Keys, int(b.Record.NumRows()))
		require.Equal(t, len(proj), int(b.Record.NumCols()))
		for i := range int(b.Record.NumRows()) {
			row := make([]any, len(proj))
			for k, c := range proj {
				row[k] = metadata.ValueAt(b.Record.Column(k), info.Schema.Columns[c].Type, i)
			}
			rows = append(rows, row)
			keys = append(keys, append([]byte(nil), b.Keys[i]...))
		}
	}
	require.NoError(t, r.Err())
	return rows, keys
}

func TestKvSnapshotsReopenAndRecovery(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createPK(t, e, "t", map[string]string{metadata.OptBucketNum: "2"})
		for i := range 20 {
			upsert(t, e, "t", []any{fmt.Sprint("v", i), i, i})
		}
		res, err := e.TakeKvSnapshots(ctx, path("t"))
		require.NoError(t, err)
		require.Len(t, res, 2)
		for _, r := range res {
			require.Equal(t, int64(0), r.SnapshotID)
			require.Equal(t, hw(t, e, bucket(info, r.Bucket)), r.LogOffset)
		}
		// No change since: the same snapshots.
		again, err := e.TakeKvSnapshots(ctx, path("t"))
		require.NoError(t, err)
		require.Equal(t, res, again)
		del(t, e, "t", []any{nil, 3, nil})
		upsert(t, e, "t", []any{"changed", 4, 40})
	}()

	// Reopen: the KV state, the snapshots and their offsets survive.
	e, _ := testEngine(t, dir, nil)
	require.Nil(t, lookup(t, e, "t", 3))
	require.Equal(t, []any{"changed", int64(4), int64(40)}, lookup(t, e, "t", 4))
	require.Equal(t, []any{"v5", int64(5), int64(5)}, lookup(t, e, "t", 5))
	snaps, err := e.LatestKvSnapshots(ctx, path("t"), nil)
	require.NoError(t, err)
	require.Len(t, snaps.Buckets, 2)
	var total int
	for b, s := range snaps.Buckets {
		rows, keys := snapshotRows(t, e, bucket(info, b), s.SnapshotID, ReadOptions{})
		total += len(rows)
		for i := range rows {
			want, err := metadata.EncodeOrderedKey([]metadata.DataType{metadata.IntType()}, []any{rows[i][1]})
			require.NoError(t, err)
			require.Equal(t, want, keys[i])
			if i > 0 {
				require.Negative(t, bytes.Compare(keys[i-1], keys[i]), "keys ascend")
			}
			id := rows[i][1].(int64)
			require.Equal(t, []any{fmt.Sprint("v", id), id, id}, rows[i], "the snapshot holds the state at its cut")
		}
	}
	require.Equal(t, 20, total)

	// The next snapshot of a changed bucket gets the next id.
	res, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	var moved int
	for _, r := range res {
		if r.SnapshotID == 1 {
			moved++
		}
		require.Equal(t, hw(t, e, bucket(info, r.Bucket)), r.LogOffset)
	}
	require.NotZero(t, moved)
}

func TestKvWriteCutOffIsReplayed(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createPK(t, e, "t", nil)
		upsert(t, e, "t", []any{"a", 1, 1}, []any{"b", 2, 2})
	}()
	func() {
		e, _ := testEngine(t, dir, func(o *Options) { o.TestingSkipKvApply = true })
		defer e.Close()
		require.Equal(t, []any{"a", int64(1), int64(1)}, lookup(t, e, "t", 1), "a clean close left nothing to replay")
		require.Equal(t, int64(2), upsert(t, e, "t", []any{"a2", 1, 10}, []any{"c", 3, 3}))
		require.Equal(t, []any{"a", int64(1), int64(1)}, lookup(t, e, "t", 1), "the KV write was cut off")
		_, err := e.Upsert(ctx, path("t"), [][]any{{"x", 9, 9}}, UpsertOptions{})
		require.ErrorIs(t, err, metadata.ErrReadOnly)
	}()
	var logs bytes.Buffer
	e, _ := testEngine(t, dir, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	require.Contains(t, logs.String(), "replaying a bucket's log into its KV state", "the cut-off statement is replayed")
	require.Contains(t, logs.String(), "from=2 to=5", "from the flushed offset, not from the start")
	require.Equal(t, []any{"a2", int64(1), int64(10)}, lookup(t, e, "t", 1))
	require.Equal(t, []any{"c", int64(3), int64(3)}, lookup(t, e, "t", 3))
	require.Equal(t, []any{"b", int64(2), int64(2)}, lookup(t, e, "t", 2))
	// The merge after recovery sees the replayed state.
	upsert(t, e, "t", []any{"c2", 3, 4})
	lines := changelog(t, e, bucket(info, 0), 5)
	require.Equal(t, []string{"5 -U c,3,3", "6 +U c2,3,4"}, lines)
}

func TestKvRebuiltWhenPebbleIsLost(t *testing.T) {
	// With a replaced file system Pebble runs in memory: every Open
	// rebuilds the KV state from the logs alone.
	fsys := NewMemFS()
	tweak := func(o *Options) { o.FS = fsys; o.InMemory = false; o.Dir = "db" }
	func() {
		e, _ := testEngine(t, "", tweak)
		defer e.Close()
		createPK(t, e, "t", map[string]string{metadata.OptBucketNum: "3"})
		for i := range 30 {
			upsert(t, e, "t", []any{"v", i, i})
		}
		del(t, e, "t", []any{nil, 7, nil})
		upsert(t, e, "t", []any{"w", 8, 80})
	}()
	e, _ := testEngine(t, "", tweak)
	require.Nil(t, lookup(t, e, "t", 7))
	require.Equal(t, []any{"w", int64(8), int64(80)}, lookup(t, e, "t", 8))
	require.Equal(t, []any{"v", int64(29), int64(29)}, lookup(t, e, "t", 29))
}

func TestKvSnapshotPinnedWhileRead(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	info := createPK(t, e, "t", nil)
	tb := bucket(info, 0)
	for i := range 10 {
		upsert(t, e, "t", []any{"a", i, i})
	}
	_, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	r, err := e.ReadKvSnapshot(ctx, tb, 0, ReadOptions{Projection: []int{2}})
	require.NoError(t, err)

	upsert(t, e, "t", []any{"b", 100, 100})
	res, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	require.Equal(t, int64(1), res[0].SnapshotID)
	snap0 := filepath.Join(dir, kvSnapDir(tb), kvSnapFile(0))
	require.FileExists(t, snap0, "kept while a reader holds it")

	var n int
	for r.Next() {
		b := r.Batch()
		require.Equal(t, 1, int(b.Record.NumCols()))
		n += int(b.Record.NumRows())
	}
	require.NoError(t, r.Err())
	require.Equal(t, 10, n, "the old snapshot still reads its own cut")
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")
	require.NoFileExists(t, snap0, "removed once unpinned")
	_, err = e.ReadKvSnapshot(ctx, tb, 0, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrNotFound)

	rows, _ := snapshotRows(t, e, tb, 1, ReadOptions{Projection: []int{}})
	require.Len(t, rows, 11, "an empty projection still counts rows")
}

func TestKvSnapshotCorruption(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	info := createPK(t, e, "t", nil)
	tb := bucket(info, 0)
	for i := range 5 {
		upsert(t, e, "t", []any{"a", i, i})
	}
	_, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	file := filepath.Join(dir, kvSnapDir(tb), kvSnapFile(0))
	data, err := os.ReadFile(file)
	require.NoError(t, err)

	corruptAt := func(pos int) error {
		bad := append([]byte(nil), data...)
		bad[pos] ^= 0x40
		require.NoError(t, os.WriteFile(file, bad, 0o644))
		r, err := e.ReadKvSnapshot(ctx, tb, 0, ReadOptions{})
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
		}
		return r.Err()
	}
	for _, pos := range []int{3, kvSnapHeaderSize + 10, len(data) - 5} {
		err := corruptAt(pos)
		require.ErrorIs(t, err, metadata.ErrCorrupt, "byte %d", pos)
		require.ErrorContains(t, err, kvSnapFile(0))
	}
	require.NoError(t, os.WriteFile(file, data[:len(data)-3], 0o644))
	r, err := e.ReadKvSnapshot(ctx, tb, 0, ReadOptions{})
	require.NoError(t, err)
	for r.Next() {
	}
	require.ErrorIs(t, r.Err(), metadata.ErrCorrupt, "a truncated file")
	require.NoError(t, r.Close())
}

func TestPartitionedPrimaryKeyTable(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	info, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("p"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("dt", metadata.StringType()), col("id", metadata.IntType()), col("v", metadata.StringType()),
		}, PrimaryKey: []string{"dt", "id"}},
		PartitionKeys: []string{"dt"},
	}, false)
	require.NoError(t, err)
	res, err := e.Upsert(ctx, path("p"), [][]any{{"d1", 1, "a"}, {"d2", 1, "b"}}, UpsertOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.RowsAffected, "the same physical key in two partitions")
	res, err = e.Delete(ctx, path("p"), [][]any{{"d9", 1, nil}})
	require.NoError(t, err)
	require.Zero(t, res.RowsAffected)
	parts, err := e.ListPartitions(ctx, path("p"))
	require.NoError(t, err)
	require.Equal(t, []string{"d1", "d2"}, partitionNames(parts), "a delete creates no partition")

	look := func(dt string, id int) []any {
		row, found, err := e.Lookup(ctx, path("p"), []any{dt, id, nil})
		require.NoError(t, err)
		if !found {
			return nil
		}
		return row
	}
	require.Equal(t, []any{"d1", int64(1), "a"}, look("d1", 1))
	require.Equal(t, []any{"d2", int64(1), "b"}, look("d2", 1))
	require.Nil(t, look("d9", 1))

	snaps, err := e.TakeKvSnapshots(ctx, path("p"))
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	require.Equal(t, "d1", snaps[0].PartitionName)
	latest, err := e.LatestKvSnapshots(ctx, path("p"), &parts[1])
	require.NoError(t, err)
	require.Equal(t, parts[1].ID, latest.PartitionID)
	require.Equal(t, map[int32]metadata.KvSnapshot{0: {SnapshotID: 0, LogOffset: 1}}, latest.Buckets)

	snapDir := filepath.Join(dir, kvSnapDirName, fmt.Sprint(info.TableID), fmt.Sprint("p", parts[0].ID))
	require.DirExists(t, snapDir)
	require.NoError(t, e.DropPartition(ctx, path("p"), map[string]string{"dt": "d1"}, false))
	require.NoDirExists(t, snapDir)
	require.Nil(t, look("d1", 1))
	// Recreated by a write, the partition starts empty.
	upsert(t, e, "p", []any{"d1", 2, "c"})
	require.Nil(t, look("d1", 1))
	require.Equal(t, []any{"d1", int64(2), "c"}, look("d1", 2))

	require.NoError(t, e.DropTable(ctx, path("p"), false))
	require.NoDirExists(t, filepath.Join(dir, kvSnapDirName, fmt.Sprint(info.TableID)))
	// Recreated, the table has none of the old state.
	_, err = e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("p"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("dt", metadata.StringType()), col("id", metadata.IntType()), col("v", metadata.StringType()),
		}, PrimaryKey: []string{"dt", "id"}},
		PartitionKeys: []string{"dt"},
	}, false)
	require.NoError(t, err)
	require.Nil(t, look("d2", 1))
}

func TestBackgroundKvSnapshots(t *testing.T) {
	e, _ := testEngine(t, "", func(o *Options) { o.KvSnapshotInterval = 5 * time.Millisecond })
	info := createPK(t, e, "t", nil)
	upsert(t, e, "t", []any{"a", 1, 1})
	require.Eventually(t, func() bool {
		s, err := e.LatestKvSnapshots(ctx, path("t"), nil)
		require.NoError(t, err)
		return s.Buckets[0] == metadata.KvSnapshot{SnapshotID: 0, LogOffset: 1}
	}, 5*time.Second, 5*time.Millisecond)
	upsert(t, e, "t", []any{"b", 1, 2})
	require.Eventually(t, func() bool {
		s, err := e.LatestKvSnapshots(ctx, path("t"), nil)
		require.NoError(t, err)
		return s.Buckets[0].LogOffset == hw(t, e, bucket(info, 0))
	}, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, e.Close(), "Close stops the snapshot goroutine")
}

func TestRowValueCodec(t *testing.T) {
	types := []metadata.DataType{
		metadata.BooleanType(), metadata.TinyIntType(), metadata.IntType(), metadata.BigIntType(),
		metadata.FloatType(), metadata.DoubleType(), metadata.DecimalType(10, 2), metadata.DecimalType(30, 3),
		metadata.StringType(), metadata.BytesType(), metadata.DateType(), metadata.TimeType(9),
		metadata.TimestampType(6), metadata.TimestampLTZType(3),
		metadata.ArrayType(metadata.IntType()),
		metadata.MapType(metadata.StringType(), metadata.ArrayType(metadata.DoubleType())),
		metadata.RowType(metadata.Field{Name: "a", Type: metadata.IntType()}, metadata.Field{Name: "b", Type: metadata.StringType()}),
		metadata.StringType(),
	}
	raw := []any{
		true, -7, 123456, "-9223372036854775808",
		1.5, -2.25, "-12.34", "123456789012345678901234567.891",
		"héllo", []byte{0, 1, 2}, "2026-03-04", "12:34:56.123456789",
		"2026-01-02 03:04:05.123456", "1969-12-31 23:59:59.999",
		[]any{1, nil, 3},
		map[string]any{"k": []any{1.5, nil}, "z": nil},
		[]any{nil, "x"},
		nil,
	}
	row := make([]any, len(types))
	for i, typ := range types {
		v, err := metadata.CoerceValue(typ, raw[i])
		require.NoError(t, err, "column %d", i)
		row[i] = v
	}
	schema3 := &metadata.TableInfo{SchemaID: 3}
	enc, err := encodeRowValue(nil, 3, types, row)
	require.NoError(t, err)
	got, err := decodeRowValue(enc, schema3, types)
	require.NoError(t, err)
	require.Len(t, got, len(row))
	for i := range row {
		require.Zero(t, metadata.Compare(row[i], got[i]), "column %d: %v vs %v", i, row[i], got[i])
	}
	require.True(t, rowsEqual(row, got))

	_, err = decodeRowValue(enc, &metadata.TableInfo{SchemaID: 4}, types)
	require.ErrorIs(t, err, metadata.ErrCorrupt, "another schema id")
	// Truncated or damaged bytes are errors, never panics.
	for n := range len(enc) {
		_, err := decodeRowValue(enc[:n], schema3, types)
		require.ErrorIs(t, err, metadata.ErrCorrupt, "cut at %d", n)
	}
	for i := range enc {
		bad := append([]byte(nil), enc...)
		bad[i] ^= 0xFF
		_, _ = decodeRowValue(bad, schema3, types)
	}

	// Decoding some columns steps over the others: each alone, and every
	// second one, give the same values and leave the rest nil.
	for _, pick := range [][]int{{0}, {3}, {8}, {12}, {13}, {16}, {17}, {1, 3, 5, 7, 9, 11, 13, 15, 17}} {
		need := make([]bool, len(types))
		for _, c := range pick {
			need[c] = true
		}
		got, err := decodeRowColumns(enc, schema3, types, need)
		require.NoError(t, err, "columns %v", pick)
		for i := range row {
			if need[i] {
				require.Zero(t, metadata.Compare(row[i], got[i]), "columns %v: column %d", pick, i)
			} else {
				require.Nil(t, got[i], "columns %v: column %d is not read", pick, i)
			}
		}
		for n := range len(enc) {
			_, err := decodeRowColumns(enc[:n], schema3, types, need)
			require.ErrorIs(t, err, metadata.ErrCorrupt, "columns %v: cut at %d", pick, n)
		}
	}

	// A value written under an earlier schema holds its first columns: the
	// ones it lacks read as NULL; an id the table never had, or an earlier
	// schema wider than the current one, is corrupt.
	past, err := encodeRowValue(nil, 2, types[:5], row[:5])
	require.NoError(t, err)
	evolved := &metadata.TableInfo{SchemaID: 3, PastSchemas: []metadata.PastSchema{{ID: 1, Columns: 2}, {ID: 2, Columns: 5}}}
	got, err = decodeRowValue(past, evolved, types)
	require.NoError(t, err)
	for i := range row {
		if i < 5 {
			require.Zero(t, metadata.Compare(row[i], got[i]), "column %d", i)
		} else {
			require.Nil(t, got[i], "column %d, added after the value was written", i)
		}
	}
	_, err = decodeRowValue(past, schema3, types)
	require.ErrorIs(t, err, metadata.ErrCorrupt, "a schema id the table never had")
	_, err = decodeRowValue(past, &metadata.TableInfo{SchemaID: 3, PastSchemas: []metadata.PastSchema{{ID: 2, Columns: 4}}}, types)
	require.ErrorIs(t, err, metadata.ErrCorrupt, "more columns than the schema had")
	_, err = decodeRowValue(enc, &metadata.TableInfo{SchemaID: 4, PastSchemas: []metadata.PastSchema{{ID: 3, Columns: len(types) + 1}}}, types)
	require.ErrorIs(t, err, metadata.ErrCorrupt, "an earlier schema wider than the current one")

}

func TestConcurrentUpsertsSnapshotsAndLookups(t *testing.T) {
	e, _ := testEngine(t, "", func(o *Options) { o.KvSnapshotInterval = time.Millisecond })
	info := createPK(t, e, "t", map[string]string{metadata.OptBucketNum: "4"})
	const writers, per = 4, 40
	done := make(chan error, writers+1)
	for w := range writers {
		go func() {
			for i := range per {
				id := w*per + i
				if _, err := e.Upsert(ctx, path("t"), [][]any{{"v", id, 0}, {"v", id, 1}}, UpsertOptions{}); err != nil {
					done <- err
					return
				}
				if _, _, err := e.Lookup(ctx, path("t"), []any{nil, id, nil}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	go func() {
		for range 10 {
			if _, err := e.TakeKvSnapshots(ctx, path("t")); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range writers + 1 {
		require.NoError(t, <-done)
	}
	res, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	var n int
	for _, r := range res {
		require.Equal(t, hw(t, e, bucket(info, r.Bucket)), r.LogOffset)
		rows, _ := snapshotRows(t, e, bucket(info, r.Bucket), r.SnapshotID, ReadOptions{Projection: []int{2}})
		for _, row := range rows {
			require.Equal(t, int64(1), row[0])
		}
		n += len(rows)
	}
	require.Equal(t, writers*per, n)
}

func TestPinKvSnapshotKeepsItAcrossNewSnapshots(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	info := createPK(t, e, "t", nil)
	tb := bucket(info, 0)
	upsert(t, e, "t", []any{"a", 1, 1})
	_, err := e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	release, err := e.PinKvSnapshot(tb, 0)
	require.NoError(t, err)

	// A newer snapshot would remove snapshot 0, but the pin keeps it.
	upsert(t, e, "t", []any{"b", 2, 2})
	_, err = e.TakeKvSnapshots(ctx, path("t"))
	require.NoError(t, err)
	rows, _ := snapshotRows(t, e, tb, 0, ReadOptions{})
	require.Len(t, rows, 1, "the pinned snapshot still reads its own cut")

	release()
	release() // idempotent
	_, err = e.ReadKvSnapshot(ctx, tb, 0, ReadOptions{})
	require.ErrorIs(t, err, metadata.ErrNotFound)
	_, err = e.PinKvSnapshot(tb, 0)
	require.ErrorIs(t, err, metadata.ErrNotFound)
}

// A catalog with a column DEFAULT is written as version 3, which a
// release without defaults refuses instead of rewriting it without them;
// reopened, the defaults are there. A catalog without any stays version 1.
func TestCatalogKeepsDefaults(t *testing.T) {
	dir := t.TempDir()
	version := func() string {
		data, err := os.ReadFile(filepath.Join(dir, catalogFile))
		require.NoError(t, err)
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.Contains(line, `"version"`) {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createPK(t, e, "plain", nil)
		require.Equal(t, `"version": 1,`, version())
		_, err := e.CreateTable(ctx, metadata.TableDescriptor{
			Path: path("d"),
			Schema: metadata.Schema{Columns: []metadata.Column{
				col("id", metadata.IntType()), {Name: "s", Type: metadata.StringType(), Default: &metadata.ColumnDefault{Value: "x", Quoted: true}},
			}, PrimaryKey: []string{"id"}},
		}, false)
		require.NoError(t, err)
	}()
	require.Equal(t, `"version": 3,`, version())
	e, _ := testEngine(t, dir, nil)
	defer e.Close()
	info, err := e.TableInfo(ctx, path("d"))
	require.NoError(t, err)
	require.Equal(t, &metadata.ColumnDefault{Value: "x", Quoted: true}, info.Schema.Columns[1].Default)
}
