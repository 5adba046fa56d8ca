package storage

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func createKeyTable(t *testing.T, e *Engine, name string, opts map[string]string) metadata.TablePath {
	t.Helper()
	path := metadata.TablePath{Database: metadata.DefaultDatabase, Table: name}
	_, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path,
		Schema: metadata.Schema{Columns: []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType())},
			PrimaryKey: []string{"id"}},
		Options: opts,
	}, false)
	require.NoError(t, err)
	return path
}

// TestAutoIncrementNeverReused: values are consecutive within an
// engine's life and, after a reopen, larger than any handed out before
// (the rest of the persisted range is skipped, never handed out twice).
func TestAutoIncrementNeverReused(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	path := createKeyTable(t, e, "users", map[string]string{metadata.OptAutoIncrementFields: "id"})
	other := createKeyTable(t, e, "other", map[string]string{metadata.OptAutoIncrementFields: "id"})

	first, err := e.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), first, "values start at 1")
	first, err = e.AllocateAutoIncrement(ctx, path, 3)
	require.NoError(t, err)
	require.Equal(t, int64(2), first)
	first, err = e.AllocateAutoIncrement(ctx, path, 2000) // beyond one range
	require.NoError(t, err)
	require.Equal(t, int64(5), first)
	last := first + 2000 - 1

	first, err = e.AllocateAutoIncrement(ctx, other, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), first, "each table counts on its own")
	require.NoError(t, e.Close())

	e2, _ := testEngine(t, dir, nil)
	first, err = e2.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Greater(t, first, last, "a reopened engine never hands out a value again")
	again, err := e2.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Equal(t, first+1, again)

	// An explicit value moves the counter past it, durably.
	require.NoError(t, e2.AdvanceAutoIncrement(ctx, path, 1_000_000))
	next, err := e2.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1_000_001), next)
	require.NoError(t, e2.AdvanceAutoIncrement(ctx, path, 7), "a value below the counter changes nothing")
	next, err = e2.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1_000_002), next)
	require.NoError(t, e2.AdvanceAutoIncrement(ctx, path, 5_000_000))
	require.NoError(t, e2.Close())

	e3, _ := testEngine(t, dir, nil)
	next, err = e3.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Greater(t, next, int64(5_000_000))
}

// TestAutoIncrementErrors: a table without an auto-increment column, an
// unknown table and a damaged limit file are errors, never a silent
// restart from 1.
func TestAutoIncrementErrors(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	plain := createKeyTable(t, e, "plain", nil)
	_, err := e.AllocateAutoIncrement(ctx, plain, 1)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "has no auto-increment column")
	_, err = e.AllocateAutoIncrement(ctx, metadata.TablePath{Database: "fluss", Table: "nope"}, 1)
	require.ErrorIs(t, err, metadata.ErrNotFound)

	path := createKeyTable(t, e, "t", map[string]string{metadata.OptAutoIncrementFields: "id"})
	_, err = e.AllocateAutoIncrement(ctx, path, 0)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	_, err = e.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	info, err := e.TableInfo(ctx, path)
	require.NoError(t, err)
	require.NoError(t, e.Close())

	file := filepath.Join(dir, autoIncFile(info.TableID))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data[0] ^= 0xff
	require.NoError(t, os.WriteFile(file, data, 0o644))
	e2, _ := testEngine(t, dir, nil)
	_, err = e2.AllocateAutoIncrement(ctx, path, 1)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, autoIncFile(info.TableID))

	require.NoError(t, os.WriteFile(file, data[:5], 0o644))
	_, err = e2.AllocateAutoIncrement(ctx, path, 1)
	require.ErrorIs(t, err, metadata.ErrCorrupt, "the damaged state is not cached")
}

// TestAutoIncrementFailedPersist: when the limit cannot be written, the
// allocation fails and hands out nothing; the next one succeeds.
func TestAutoIncrementFailedPersist(t *testing.T) {
	ffs := NewFaultFS(NewMemFS())
	e, _ := testEngine(t, "", func(o *Options) { o.FS = ffs })
	path := createKeyTable(t, e, "t", map[string]string{metadata.OptAutoIncrementFields: "id"})
	ffs.FailNth(FaultSync, 1, os.ErrInvalid)
	_, err := e.AllocateAutoIncrement(ctx, path, 1)
	require.Error(t, err)
	ffs.Disarm()
	first, err := e.AllocateAutoIncrement(ctx, path, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), first)
}

// TestAutoIncrementConcurrent: concurrent allocations never overlap.
func TestAutoIncrementConcurrent(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	path := createKeyTable(t, e, "t", map[string]string{metadata.OptAutoIncrementFields: "id"})
	const workers, rounds, n = 4, 50, 7
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				first, err := e.AllocateAutoIncrement(ctx, path, n)
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				for v := first; v < first+n; v++ {
					if seen[v] {
						t.Errorf("value %d handed out twice", v)
					}
					seen[v] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, workers*rounds*n)
}

func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
