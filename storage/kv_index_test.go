package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// createIndexed creates table t of pkColumns with a UNIQUE index on n and
// a plain one on v, over three buckets.
func createIndexed(t *testing.T, e *Engine) {
	t.Helper()
	_, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path:    path("t"),
		Schema:  metadata.Schema{Columns: pkColumns(), PrimaryKey: []string{"id"}},
		Options: map[string]string{metadata.OptBucketNum: "3"},
		Indexes: []metadata.DeclaredIndex{{Name: "un", Columns: []string{"n"}, Unique: true}, {Name: "iname", Columns: []string{"v"}}},
	}, false)
	require.NoError(t, err)
}

// indexIDs returns the ids of the rows the index finds for one value,
// sorted.
func indexIDs(t *testing.T, e *Engine, index string, v any) []int64 {
	t.Helper()
	rows, err := e.IndexLookup(ctx, path("t"), index, [][]any{{v}})
	require.NoError(t, err)
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r[1].(int64))
	}
	slices.Sort(ids)
	return ids
}

// checkIndexed checks the indexes of t after the writes of writeIndexed:
// lookups find what the rows hold, and the UNIQUE index refuses a value
// a row holds and takes one given up.
func checkIndexed(t *testing.T, e *Engine) {
	t.Helper()
	require.Equal(t, []int64{1, 3}, indexIDs(t, e, "iname", "a"))
	require.Equal(t, []int64{2}, indexIDs(t, e, "iname", "b"))
	require.Empty(t, indexIDs(t, e, "iname", "gone"))
	require.Equal(t, []int64{1}, indexIDs(t, e, "un", 11))
	require.Empty(t, indexIDs(t, e, "un", 10), "moved away")
	require.Empty(t, indexIDs(t, e, "un", 40), "deleted")
	_, err := e.Upsert(ctx, path("t"), [][]any{{"z", 9, 11}}, UpsertOptions{})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "Duplicate entry '11' for key 'un'")
	upsert(t, e, "t", []any{"z", 9, 10}, []any{"z", 8, 40})
}

// writeIndexed writes the rows checkIndexed expects, the last of its
// commits with lastEngine (one whose KV write may be cut off).
func writeIndexed(t *testing.T, e *Engine, last func() *Engine) {
	t.Helper()
	upsert(t, e, "t", []any{"a", 1, 10}, []any{"b", 2, 20}, []any{"gone", 4, 40}, []any{"a", 5, nil})
	if last != nil {
		require.NoError(t, e.Close())
		e = last()
		defer e.Close()
	}
	_, err := e.Commit(ctx, []Write{
		{Path: path("t"), Kind: WriteUpsert, Rows: [][]any{{"a", 1, 11}, {"a", 3, nil}}},
		{Path: path("t"), Kind: WriteDelete, Rows: [][]any{{nil, 4, nil}, {nil, 5, nil}}},
	})
	require.NoError(t, err)
}

// The index entries are rebuilt from the changelog like the rows: after a
// statement whose KV write was cut off, and when Pebble is lost.
func TestIndexReplayedFromChangelog(t *testing.T) {
	t.Run("cut-off", func(t *testing.T) {
		dir := t.TempDir()
		func() {
			e, _ := testEngine(t, dir, nil)
			createIndexed(t, e)
			writeIndexed(t, e, func() *Engine {
				e, _ := testEngine(t, dir, func(o *Options) { o.TestingSkipKvApply = true })
				return e
			})
		}()
		e, _ := testEngine(t, dir, nil)
		checkIndexed(t, e)
	})
	t.Run("pebble-lost", func(t *testing.T) {
		fsys := NewMemFS()
		tweak := func(o *Options) { o.FS = fsys; o.InMemory = false; o.Dir = "db" }
		func() {
			e, _ := testEngine(t, "", tweak)
			defer e.Close()
			createIndexed(t, e)
			writeIndexed(t, e, nil)
		}()
		e, _ := testEngine(t, "", tweak)
		checkIndexed(t, e)
	})
}

// CREATE INDEX on rows builds from them; DROP INDEX removes its entries,
// and an index created again under the same name starts empty of them.
func TestCreateDropIndexEntries(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createPK(t, e, "t", map[string]string{metadata.OptBucketNum: "3"})
	upsert(t, e, "t", []any{"a", 1, 10}, []any{"b", 2, 10})
	_, err := e.CreateIndex(ctx, path("t"), metadata.DeclaredIndex{Name: "un", Columns: []string{"n"}, Unique: true}, false)
	require.ErrorContains(t, err, "Duplicate entry '10' for key 'un'")
	_, err = e.IndexLookup(ctx, path("t"), "un", [][]any{{10}})
	require.ErrorIs(t, err, metadata.ErrNotFound, "a refused index is not left behind")
	info, err := e.CreateIndex(ctx, path("t"), metadata.DeclaredIndex{Name: "iname", Columns: []string{"v"}}, false)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, indexIDs(t, e, "iname", "a"))
	_, err = e.DropIndex(ctx, path("t"), "iname", false)
	require.NoError(t, err)
	n := 0
	p := kvIndexPrefix(info.TableID, info.Indexes[0].ID)
	require.NoError(t, indexRowKeys(e.kv, p, func([]byte) (bool, error) { n++; return true, nil }))
	require.Zero(t, n, "the dropped index's entries are gone")
}

// A catalog with a built UNIQUE index says version 6, which a release
// whose slots were hints refuses; one with built indexes none of which is
// UNIQUE says 5, which a release that only recorded indexes refuses; an
// index such a release recorded on a key table (no id, no entries) is
// dropped on load rather than read.
func TestCatalogIndexesVersion(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, catalogFile)
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createIndexed(t, e)
		upsert(t, e, "t", []any{"a", 1, 10})
	}()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), `"version": 6,`)
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		_, err := e.DropIndex(ctx, path("t"), "un", false)
		require.NoError(t, err)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Contains(t, string(data), `"version": 5,`, "only the plain index is left")
		_, err = e.CreateIndex(ctx, path("t"), metadata.DeclaredIndex{Name: "un", Columns: []string{"n"}, Unique: true}, false)
		require.NoError(t, err)
	}()
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), `"version": 6,`)
	// As the older release wrote it: the index without its id.
	old := strings.ReplaceAll(string(data), `"version": 6,`, `"version": 1,`)
	old = regexp.MustCompile(`,\s*"id": \d+`).ReplaceAllString(old, "")
	require.NoError(t, os.WriteFile(file, []byte(old), 0o644))
	e, _ := testEngine(t, dir, nil)
	info, err := e.TableInfo(ctx, path("t"))
	require.NoError(t, err)
	require.Empty(t, info.Indexes)
	_, err = e.CreateIndex(ctx, path("t"), metadata.DeclaredIndex{Name: "un", Columns: []string{"n"}, Unique: true}, false)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, indexIDs(t, e, "un", 10))
}

// slotID returns the id of the row the slot of value n of index un names,
// and false when there is no slot.
func slotID(t *testing.T, e *Engine, n any) (int64, bool) {
	t.Helper()
	entry, err := e.mu.cat.table(path("t"))
	require.NoError(t, err)
	ix := entry.indexes[0]
	require.Equal(t, "un", ix.def.Name)
	sk, ok, err := ix.slot([]any{n})
	require.NoError(t, err)
	require.True(t, ok)
	v, closer, err := e.kv.Get(sk)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false
	}
	require.NoError(t, err)
	defer closer.Close()
	rowKey, copied, err := parseSlotValue(v)
	require.NoError(t, err)
	row, err := kvReadRow(e.kv, entry, rowKey)
	require.NoError(t, err)
	require.NotNil(t, row, "slot %v names no row", n)
	if copied != nil {
		stored, closer, err := e.kv.Get(rowKey)
		require.NoError(t, err)
		require.Equal(t, stored, copied, "slot %v carries the row as stored", n)
		closer.Close()
	}
	return row[1].(int64), true
}

// uniqueID looks n up through a prepared lookup by index un; 0 when no
// row holds it.
func uniqueID(t *testing.T, e *Engine, n any) int64 {
	t.Helper()
	info, err := e.TableInfo(ctx, path("t"))
	require.NoError(t, err)
	l, err := NewIndexKeyLookup(&info, "un", []int{1})
	require.NoError(t, err)
	row, found, err := e.LookupIndexKey(ctx, l, []any{n})
	require.NoError(t, err)
	if !found {
		return 0
	}
	return row[1].(int64)
}

// A UNIQUE index keeps a slot per value naming its row, also when one
// commit moves values between rows in either order; a slot that is
// missing or names the wrong row only sends the lookup to the entries.
func TestUniqueIndexSlots(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createIndexed(t, e)
	upsert(t, e, "t", []any{"a", 1, 10}, []any{"b", 2, 20}, []any{"c", 3, nil})
	for round := range 20 {
		// Swap the values of rows 1 and 2 in one commit: the map of a
		// commit's rows is walked in a new order each time.
		lo, hi := int64(10), int64(20)
		if round%2 == 1 {
			lo, hi = hi, lo
		}
		upsert(t, e, "t", []any{"a", 1, hi}, []any{"b", 2, lo})
		id, ok := slotID(t, e, hi)
		require.True(t, ok, "round %d", round)
		require.Equal(t, int64(1), id, "round %d", round)
		id, ok = slotID(t, e, lo)
		require.True(t, ok, "round %d", round)
		require.Equal(t, int64(2), id, "round %d", round)
	}
	require.Equal(t, int64(1), uniqueID(t, e, 10))
	require.Equal(t, int64(2), uniqueID(t, e, int64(20)))
	require.Zero(t, uniqueID(t, e, 30))
	require.Zero(t, uniqueID(t, e, nil))
	// A value given up and one deleted leave no slot.
	upsert(t, e, "t", []any{"b", 2, 30})
	_, ok := slotID(t, e, 20)
	require.False(t, ok)
	_, err := e.Commit(ctx, []Write{{Path: path("t"), Kind: WriteDelete, Rows: [][]any{{nil, 2, nil}}}})
	require.NoError(t, err)
	_, ok = slotID(t, e, 30)
	require.False(t, ok)
	require.Zero(t, uniqueID(t, e, 30))

	// Slots gone wrong: one naming a row of another value, one missing.
	entry, err := e.mu.cat.table(path("t"))
	require.NoError(t, err)
	ix := entry.indexes[0]
	slot10, _, err := ix.slot([]any{int64(10)})
	require.NoError(t, err)
	slot, closer, err := e.kv.Get(slot10)
	require.NoError(t, err)
	rowKey1, copied, err := parseSlotValue(slot)
	require.NoError(t, err)
	require.NotNil(t, copied, "a small row is carried by its slots")
	rowKey1 = bytes.Clone(rowKey1)
	closer.Close()
	upsert(t, e, "t", []any{"d", 4, 40})
	slot40, _, err := ix.slot([]any{int64(40)})
	require.NoError(t, err)
	require.NoError(t, e.kv.Set(slot40, rowKey1, pebble.NoSync), "the slot of 40 names row 1, which holds 10, as a slot that does not carry its row")
	require.NoError(t, e.kv.Delete(slot10, pebble.NoSync))
	require.Equal(t, int64(4), uniqueID(t, e, 40))
	require.Equal(t, int64(1), uniqueID(t, e, 10))
	require.Equal(t, []int64{4}, indexIDs(t, e, "un", 40))
	require.Equal(t, []int64{1}, indexIDs(t, e, "un", 10))
	// Gone wrong, the slots still do not let a duplicate in.
	_, err = e.Upsert(ctx, path("t"), [][]any{{"z", 9, 10}}, UpsertOptions{})
	require.ErrorContains(t, err, "Duplicate entry '10' for key 'un'")
}
