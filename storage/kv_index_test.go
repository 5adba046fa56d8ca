package storage

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

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

// A catalog with a built index says version 5, which a release that only
// recorded indexes refuses; an index such a release recorded on a key
// table (no id, no entries) is dropped on load rather than read.
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
	require.Contains(t, string(data), `"version": 5,`)
	// As the older release wrote it: the index without its id.
	old := strings.ReplaceAll(string(data), `"version": 5,`, `"version": 1,`)
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
