package storage

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// partitionedKeyTable is pk (r STRING, id INT, v STRING), keyed by (r, id)
// and partitioned by r, holding eu/1=a, eu/2=b and us/1=c, with a
// prepared lookup of all its columns.
func partitionedKeyTable(t *testing.T) (*Engine, metadata.TableInfo, *KeyLookup) {
	t.Helper()
	e, _ := testEngine(t, "", nil)
	info, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("pk"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			col("r", metadata.StringType()),
			col("id", metadata.IntType()),
			col("v", metadata.StringType()),
		}, PrimaryKey: []string{"r", "id"}},
		PartitionKeys: []string{"r"},
		Options:       map[string]string{metadata.OptBucketNum: "3"},
	}, false)
	require.NoError(t, err)
	_, err = e.Upsert(ctx, path("pk"), [][]any{{"eu", int64(1), "a"}, {"eu", int64(2), "b"}, {"us", int64(1), "c"}}, UpsertOptions{})
	require.NoError(t, err)
	l, err := NewKeyLookup(&info, nil)
	require.NoError(t, err)
	return e, info, l
}

// A prepared lookup finds what Lookup finds, in a partitioned table too,
// reads a view's state in the view, and refuses a table that changed.
func TestKeyLookup(t *testing.T) {
	e, info, l := partitionedKeyTable(t)

	for _, c := range []struct {
		key   []any
		found bool
		v     any
	}{
		{[]any{"eu", int64(1), nil}, true, "a"},
		{[]any{"eu", int64(2), nil}, true, "b"},
		{[]any{"us", int64(1), nil}, true, "c"},
		{[]any{"us", int64(2), nil}, false, nil}, // no such key
		{[]any{"jp", int64(1), nil}, false, nil}, // no such partition
		{[]any{"eu", nil, nil}, false, nil},      // a NULL key finds nothing
	} {
		row, found, err := e.LookupKey(ctx, l, c.key)
		require.NoError(t, err, "%v", c.key)
		require.Equal(t, c.found, found, "%v", c.key)
		want, wantFound, err := e.Lookup(ctx, path("pk"), c.key)
		require.NoError(t, err)
		require.Equal(t, wantFound, found, "%v: as Lookup", c.key)
		require.Equal(t, want, row, "%v: as Lookup", c.key)
		if found {
			require.Equal(t, c.v, row[2])
		}
	}
	_, _, err := e.LookupKey(ctx, l, []any{"eu", int64(1)})
	require.ErrorIs(t, err, metadata.ErrInvalidValue, "a key row of the wrong width")

	// Reading only v leaves the other columns NULL.
	lv, err := NewKeyLookup(&info, []int{2})
	require.NoError(t, err)
	row, found, err := e.LookupKey(ctx, lv, []any{"us", int64(1), nil})
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, []any{nil, nil, "c"}, row)
	_, err = NewKeyLookup(&info, []int{3})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)

	// A view reads the state it was taken at.
	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	defer v.Close()
	_, err = e.Upsert(ctx, path("pk"), [][]any{{"eu", int64(1), "a2"}, {"us", int64(2), "d"}}, UpsertOptions{})
	require.NoError(t, err)
	row, found, err = v.LookupKey(ctx, l, []any{"eu", int64(1), nil})
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "a", row[2])
	_, found, err = v.LookupKey(ctx, l, []any{"us", int64(2), nil})
	require.NoError(t, err)
	require.False(t, found, "written after the view")
	row, found, err = e.LookupKey(ctx, l, []any{"eu", int64(1), nil})
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "a2", row[2])

	// Dropped, then created again with the same name: another table.
	require.NoError(t, e.DropTable(ctx, path("pk"), false))
	_, _, err = e.LookupKey(ctx, l, []any{"eu", int64(1), nil})
	require.ErrorIs(t, err, ErrTableChanged)
	createPK(t, e, "pk", nil)
	_, _, err = e.LookupKey(ctx, l, []any{"eu", int64(1), nil})
	require.ErrorIs(t, err, ErrTableChanged)
	_, _, err = v.LookupKey(ctx, l, []any{"eu", int64(1), nil})
	require.ErrorIs(t, err, ErrTableChanged)

	log := createTable(t, e, "log", []metadata.Column{col("id", metadata.IntType())}, nil, nil)
	_, err = NewKeyLookup(&log, nil)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}

// lookedUp reads the record batches of a LookupKeys call, which it
// releases: their rows as canonical values, keyed by column key.
func lookedUp(t *testing.T, info metadata.TableInfo, key int) func([]arrow.RecordBatch, error) map[any][]any {
	return func(recs []arrow.RecordBatch, err error) map[any][]any {
		t.Helper()
		require.NoError(t, err)
		return recordRows(t, info, key, recs)
	}
}

func recordRows(t *testing.T, info metadata.TableInfo, key int, recs []arrow.RecordBatch) map[any][]any {
	t.Helper()
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	out := map[any][]any{}
	for _, rec := range recs {
		require.True(t, rec.Schema().Equal(metadata.ArrowSchema(info.Schema.Columns)), "%s", rec.Schema())
		for i := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for c := range row {
				row[c] = metadata.ValueAt(rec.Column(c), info.Schema.Columns[c].Type, i)
			}
			if row[key] == nil {
				continue // not told apart from the other rows without a key
			}
			_, dup := out[row[key]]
			require.False(t, dup, "row %v twice", row)
			out[row[key]] = row
		}
	}
	return out
}

// LookupKeys finds what LookupKey finds of every key row, each row once:
// over four buckets and enough keys for several goroutines, with rows
// written before and after a KV snapshot, deleted and overwritten rows,
// missing keys, NULL keys and keys given twice; in a view it reads the
// view's state.
func TestLookupKeys(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("pk"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "id", Type: metadata.BigIntType(), NotNull: true},
			col("v", metadata.StringType()),
			col("n", metadata.IntType()),
			col("d", metadata.DoubleType()),
			col("ts", metadata.TimestampType(3)),
		}, PrimaryKey: []string{"id"}},
		Options: map[string]string{metadata.OptBucketNum: "4"},
	}, false)
	require.NoError(t, err)
	const n = 6000 // keys 0..n-1 written; the lookups ask for 0..n+n/2
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	row := func(i int, v string) []any {
		if i%11 == 0 {
			return []any{int64(i), nil, nil, nil, nil}
		}
		return []any{int64(i), fmt.Sprint(v, i), int64(i), float64(i) / 4, base.Add(time.Duration(i) * time.Millisecond)}
	}
	var rows [][]any
	for i := range n {
		rows = append(rows, row(i, "v"))
	}
	_, err = e.Upsert(ctx, path("pk"), rows, UpsertOptions{})
	require.NoError(t, err)
	_, err = e.TakeKvSnapshots(ctx, path("pk"))
	require.NoError(t, err)
	// In the log tail, past the snapshot: every third key overwritten,
	// every seventh deleted.
	rows = rows[:0]
	var dels [][]any
	for i := 0; i < n; i++ {
		switch {
		case i%7 == 0:
			dels = append(dels, []any{int64(i), nil, nil, nil, nil})
		case i%3 == 0:
			rows = append(rows, row(i, "w"))
		}
	}
	_, err = e.Upsert(ctx, path("pk"), rows, UpsertOptions{})
	require.NoError(t, err)
	_, err = e.Delete(ctx, path("pk"), dels)
	require.NoError(t, err)

	var keyRows [][]any
	for i := n + n/2 - 1; i >= 0; i-- { // descending: LookupKeys sorts them
		keyRows = append(keyRows, []any{int64(i), nil, nil, nil, nil})
		if i%5 == 0 {
			keyRows = append(keyRows, []any{int64(i), nil, nil, nil, nil}) // twice
		}
	}
	keyRows = append(keyRows, []any{nil, nil, nil, nil, nil})
	live := func(i int64) []any {
		switch {
		case i >= n || i%7 == 0:
			return nil
		case i%3 == 0:
			return row(int(i), "w")
		}
		return row(int(i), "v")
	}
	for _, cols := range [][]int{nil, {0, 1, 4}, {3}} { // all columns, some, not the key
		l, err := NewKeyLookup(&info, cols)
		require.NoError(t, err)
		check := func(lookupKeys func([][]any) ([]arrow.RecordBatch, error), lookupKey func([]any) ([]any, bool, error), want func(i int64) []any) {
			t.Helper()
			// Batches of several sizes, so that the goroutines' shares
			// start and end at different keys.
			for _, size := range []int{1, 2, 100, 2047, 2048, 4099, 7001, len(keyRows)} {
				krs := keyRows[len(keyRows)-size:]
				by := 0
				if cols != nil && !slices.Contains(cols, 0) {
					// Without the key column the rows are told apart
					// by d, which is id/4 or NULL.
					by = 3
				}
				got := lookedUp(t, info, by)(lookupKeys(krs))
				seen := map[any]bool{}
				for _, kr := range krs {
					row, found, err := lookupKey(kr)
					require.NoError(t, err)
					if kr[0] != nil {
						w := want(kr[0].(int64))
						if w != nil {
							for c := range w {
								if cols != nil && !slices.Contains(cols, c) {
									w[c] = nil
								}
							}
						}
						require.Equal(t, w, row, "LookupKey %v", kr)
					}
					if !found {
						continue
					}
					k := row[0]
					if cols != nil && !slices.Contains(cols, 0) {
						k = row[3]
						if k == nil {
							continue // several rows with d NULL
						}
					}
					require.Equal(t, row, got[k], "%v of %d", kr, size)
					seen[k] = true
				}
				for k := range got {
					require.True(t, seen[k], "%v of %d: not asked for", k, size)
				}
			}
		}
		lookupKeys := func(krs [][]any) ([]arrow.RecordBatch, error) { return e.LookupKeys(ctx, l, krs) }
		lookupKey := func(kr []any) ([]any, bool, error) { return e.LookupKey(ctx, l, kr) }
		check(lookupKeys, lookupKey, live)

		// A view keeps its state while the table changes.
		v, err := e.ReadView(ctx)
		require.NoError(t, err)
		_, err = e.Delete(ctx, path("pk"), [][]any{{int64(1), nil, nil, nil, nil}, {int64(2), nil, nil, nil, nil}})
		require.NoError(t, err)
		_, err = e.Upsert(ctx, path("pk"), [][]any{{int64(n + 1), "new", nil, nil, nil}}, UpsertOptions{})
		require.NoError(t, err)
		check(func(krs [][]any) ([]arrow.RecordBatch, error) { return v.LookupKeys(ctx, l, krs) },
			func(kr []any) ([]any, bool, error) { return v.LookupKey(ctx, l, kr) }, live)
		check(lookupKeys, lookupKey, func(i int64) []any {
			switch i {
			case 1, 2:
				return nil
			case n + 1:
				return []any{i, "new", nil, nil, nil}
			}
			return live(i)
		})
		require.NoError(t, v.Close())
		// Back to the state live describes.
		_, err = e.Upsert(ctx, path("pk"), [][]any{row(1, "v"), row(2, "v")}, UpsertOptions{})
		require.NoError(t, err)
		_, err = e.Delete(ctx, path("pk"), [][]any{{int64(n + 1), nil, nil, nil, nil}})
		require.NoError(t, err)
	}

	// No keys, only NULL keys: no rows. A key row of the wrong width, a
	// cancelled context and a table changed since: errors.
	l, err := NewKeyLookup(&info, nil)
	require.NoError(t, err)
	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	defer v.Close()
	require.Empty(t, lookedUp(t, info, 0)(e.LookupKeys(ctx, l, nil)))
	require.Empty(t, lookedUp(t, info, 0)(e.LookupKeys(ctx, l, [][]any{{nil, nil, nil, nil, nil}})))
	_, err = e.LookupKeys(ctx, l, [][]any{{int64(1)}})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.LookupKeys(cancelled, l, keyRows)
	require.ErrorIs(t, err, context.Canceled)
	_, err = v.LookupKeys(cancelled, l, keyRows)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, e.DropTable(ctx, path("pk"), false))
	_, err = e.LookupKeys(ctx, l, keyRows)
	require.ErrorIs(t, err, ErrTableChanged)
	_, err = v.LookupKeys(ctx, l, keyRows)
	require.ErrorIs(t, err, ErrTableChanged)
}

// LookupKeys in a partitioned table routes each key to its partition: a
// missing partition finds nothing.
func TestLookupKeysPartitioned(t *testing.T) {
	e, info, l := partitionedKeyTable(t)
	got := lookedUp(t, info, 2)(e.LookupKeys(ctx, l, [][]any{
		{"us", int64(1), nil}, {"jp", int64(1), nil}, {"eu", int64(2), nil}, {"eu", int64(3), nil}, {"eu", int64(1), nil}}))
	require.Equal(t, map[any][]any{"c": {"us", int64(1), "c"}, "b": {"eu", int64(2), "b"}, "a": {"eu", int64(1), "a"}}, got)
}

// Consecutive appends to one table are buffered as one write, without
// touching the callers' slices, and commit to the same state as the
// separate writes would.
func TestWriteBufferMergesAppends(t *testing.T) {
	writes := func() []Write {
		one := func(p string, id int) Write {
			rows := make([][]any, 1, 4) // spare capacity a merge must not write into
			rows[0] = []any{int64(id), p}
			return Write{Path: path("ev"), Kind: WriteAppend, Rows: rows}
		}
		return []Write{
			one("a", 1), one("b", 2), one("a", 3), one("a", 4), one("b", 5),
			{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"v1", 1, 1}}},
			one("a", 6), one("a", 7),
			{Path: path("ev"), Kind: WriteAppend, Rows: evRows("b", 8, 9, 10)},
		}
	}
	separate, _ := testEngine(t, "", nil)
	createCommitTables(t, separate)
	_, err := separate.Commit(ctx, writes())
	require.NoError(t, err)

	merged, _ := testEngine(t, "", nil)
	createCommitTables(t, merged)
	v, err := merged.ReadView(ctx)
	require.NoError(t, err)
	defer v.Close()
	buf := v.NewWriteBuffer()
	in := writes()
	for _, w := range in {
		res, err := buf.Add(ctx, w)
		require.NoError(t, err)
		require.EqualValues(t, len(w.Rows), res.RowsAffected)
	}
	got := buf.Writes()
	require.Len(t, got, 3, "ev, kv, ev")
	require.Len(t, got[0].Rows, 5)
	require.Len(t, got[2].Rows, 5)
	for i, w := range in {
		if w.Path == path("ev") && len(w.Rows) == 1 {
			require.Nil(t, w.Rows[:2][1], "write %d: its spare capacity was written", i)
		}
	}
	_, err = merged.Commit(ctx, got)
	require.NoError(t, err)
	require.Equal(t, commitState(t, separate), commitState(t, merged))
}

// Point reads of flushed rows are served from the block cache. (Pebble
// charges its memtables to the cache, so a cache no larger than the
// memtables held no block at all once they had grown: openKv sizes it
// for both.)
func TestKvBlockCacheHoldsBlocks(t *testing.T) {
	e, _ := testEngine(t, t.TempDir(), func(o *Options) { o.Sync = false })
	createPK(t, e, "t", nil)
	for i := range 12 {
		upsert(t, e, "t", []any{"v", int64(i), int64(i)})
		require.NoError(t, e.kv.Flush())
	}
	// Into one file before the reads: a compaction of the twelve flushed
	// files finishing after them would evict the obsolete files' cached
	// blocks and leave the cache empty.
	require.NoError(t, e.kv.Compact(ctx, []byte{0}, bytes.Repeat([]byte{0xff}, 16), false))
	for range 3 {
		for i := range 12 {
			row, found, err := e.Lookup(ctx, path("t"), []any{nil, int64(i), nil})
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, int64(i), row[2])
		}
	}
	m := e.kv.Metrics()
	require.Positive(t, m.BlockCache.Count, "blocks are cached")
	require.Positive(t, m.BlockCache.Hits, "reads hit the cache")
}

// AddChecked skips checking the rows of an append only when they cannot
// fail the check: the table is the one they were checked against and has
// no partition or bucket keys. Commit takes the values of a checked
// append that already have their column's kind as they are, and checks
// every other one, so rows not as promised still fail there.
func TestWriteBufferAddChecked(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	lg := createTable(t, e, "lg", []metadata.Column{{Name: "id", Type: metadata.BigIntType(), NotNull: true}, col("s", metadata.StringType())}, nil, map[string]string{metadata.OptBucketNum: "2"})
	createCommitTables(t, e)
	ev, err := e.TableInfo(ctx, path("ev"))
	require.NoError(t, err)
	v, err := e.ReadView(ctx)
	require.NoError(t, err)
	defer v.Close()
	same := CheckedRows{TableID: lg.TableID, SchemaID: lg.SchemaID}

	buf := v.NewWriteBuffer()
	res, err := buf.AddChecked(ctx, Write{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{int64(1), "a"}, {int64(2), nil}}}, same)
	require.NoError(t, err)
	require.EqualValues(t, 2, res.RowsAffected)
	// Not as promised: taken on trust, refused by Commit.
	_, err = buf.AddChecked(ctx, Write{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{"x", "b"}}}, same)
	require.NoError(t, err)
	require.Len(t, buf.Writes(), 1, "merged")
	_, err = e.Commit(ctx, buf.Writes())
	require.ErrorIs(t, err, metadata.ErrInvalidValue)

	// Checked against another table, of the wrong width, or into a
	// partitioned table: checked here.
	buf = v.NewWriteBuffer()
	_, err = buf.AddChecked(ctx, Write{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{"x", "b"}}}, CheckedRows{TableID: lg.TableID + 100, SchemaID: lg.SchemaID})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	_, err = buf.AddChecked(ctx, Write{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{int64(1)}}}, same)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	_, err = buf.AddChecked(ctx, Write{Path: path("ev"), Kind: WriteAppend, Rows: [][]any{{int64(1), nil}}}, CheckedRows{TableID: ev.TableID, SchemaID: ev.SchemaID})
	require.ErrorIs(t, err, metadata.ErrConstraint, "a NULL partition key")
	require.Empty(t, buf.Writes())
	_, err = buf.AddChecked(ctx, Write{Path: path("lg"), Kind: WriteAppend, Rows: [][]any{{int64(3), "c"}}}, same)
	require.NoError(t, err)
	_, err = e.Commit(ctx, buf.Writes())
	require.NoError(t, err)
}

// canonicalKind trusts only values that coercion would return unchanged
// with nothing left to check: a narrower integer's range, a FLOAT's
// rounding, a CHAR's length and a timestamp's precision are checked.
func TestCanonicalKind(t *testing.T) {
	for _, c := range []struct {
		t    metadata.DataType
		v    any
		want bool
	}{
		{metadata.BigIntType(), int64(1), true},
		{metadata.IntType(), int64(1 << 40), false},
		{metadata.DoubleType(), 1.5, true},
		{metadata.FloatType(), 1.5, false},
		{metadata.StringType(), "x", true},
		{metadata.CharType(1), "xx", false},
		{metadata.BigIntType(), "1", false},
		{metadata.TimestampType(3), time.Now(), false},
		{metadata.BooleanType(), true, true},
		{metadata.StringType(), nil, true},
	} {
		require.Equal(t, c.want, canonicalKind(c.t, c.v), "%s %#v", c.t, c.v)
	}
}
