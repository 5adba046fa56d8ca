package storage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestCatalogCountersBehindIdsAreCorrupt: a next_table_id or
// next_partition_id not above the ids in use would hand one out again.
func TestCatalogCountersBehindIdsAreCorrupt(t *testing.T) {
	for _, counter := range []string{"next_table_id", "next_partition_id"} {
		t.Run(counter, func(t *testing.T) {
			dir := t.TempDir()
			opts := DefaultOptions()
			opts.Dir = dir
			e, err := Open(opts)
			require.NoError(t, err)
			createTable(t, e, "pt", []metadata.Column{col("id", metadata.BigIntType()), col("p", metadata.StringType())}, []string{"p"}, nil)
			_, err = e.CreatePartition(ctx, metadata.TablePath{Database: metadata.DefaultDatabase, Table: "pt"}, map[string]string{"p": "a"}, false)
			require.NoError(t, err)
			require.NoError(t, e.Close())

			name := filepath.Join(dir, catalogFile)
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			var raw map[string]any
			require.NoError(t, json.Unmarshal(b, &raw))
			raw[counter] = 1
			b, err = json.Marshal(raw)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(name, b, 0o644))

			_, err = Open(opts)
			require.ErrorIs(t, err, metadata.ErrCorrupt)
			require.Contains(t, err.Error(), counter)
		})
	}
}

// TestCreatingDatabaseNeverLeavesFilesWithoutCatalog: a crash at any
// point of creating a database (and its first table and write) leaves a
// directory that opens: either nothing of the engine, or a catalog.
func TestCreatingDatabaseNeverLeavesFilesWithoutCatalog(t *testing.T) {
	for _, sync := range []bool{true, false} {
		for n := int64(1); ; n++ {
			crash := NewCrashMemFS()
			ffs := NewFaultFS(crash)
			ffs.FailNth(FaultAll, n, syscall.EIO)
			opts := DefaultOptions()
			opts.FS, opts.Dir, opts.Sync = ffs, "db", sync
			if e, err := Open(opts); err == nil {
				// Faults may fail these too; the crash is what matters.
				_, _ = e.CreateTable(ctx, metadata.TableDescriptor{Path: metadata.TablePath{Database: metadata.DefaultDatabase, Table: "t"}, Schema: metadata.Schema{Columns: ordersColumns()}}, false)
				_, _ = e.Append(ctx, metadata.TablePath{Database: metadata.DefaultDatabase, Table: "t"}, [][]any{orderRow(1)})
				_ = e.Close()
			}
			after, err := MemFSAfterCrash(crash)
			require.NoError(t, err)
			opts.FS = after
			e, err := Open(opts)
			require.NoError(t, err, "sync=%v, fault %d at %s", sync, n, ffs.FiredAt())
			require.NoError(t, e.Close())
			if !ffs.Fired() {
				break
			}
		}
	}
}

// TestOpenKeepsWhatItCannotPlace: entries of data/ and kv-snapshots/
// whose ids the catalog never allocated stay on open, and a new table
// never takes an id whose files remain.
func TestOpenKeepsWhatItCannotPlace(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.Dir = dir
	e, err := Open(opts)
	require.NoError(t, err)
	require.NoError(t, e.Close())
	for _, rel := range []string{"data/1/b0/00000000000000000000.log", "kv-snapshots/2/b0/00000000000000000001.snap", "lake/3/snapshots/00000000000000000001.json", "data/p4/x", "data/04/x"} {
		name := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.WriteFile(name, []byte("kept"), 0o644))
	}
	e, err = Open(opts)
	require.NoError(t, err)
	defer func() { e.Close() }()
	for _, rel := range []string{"data/1/b0/00000000000000000000.log", "kv-snapshots/2/b0/00000000000000000001.snap", "data/p4/x", "data/04/x"} {
		require.FileExists(t, filepath.Join(dir, filepath.FromSlash(rel)))
	}
	info := createTable(t, e, "t", ordersColumns(), nil, nil)
	require.Equal(t, int64(4), info.TableID, "ids 1 to 3 still have files")
	require.False(t, e.DroppedTable(1), "an id the catalog never allocated is not a dropped table")
	require.NoError(t, e.DropTable(ctx, info.Path, false))
	require.True(t, e.DroppedTable(info.TableID))

	// The skipped ids stay skipped, and their files stay, after a reopen.
	require.NoError(t, e.Close())
	e, err = Open(opts)
	require.NoError(t, err)
	require.False(t, e.DroppedTable(1))
	require.FileExists(t, filepath.Join(dir, "data", "1", "b0", "00000000000000000000.log"))
	info = createTable(t, e, "t2", ordersColumns(), nil, nil)
	require.Equal(t, int64(5), info.TableID)
}

func TestCatalogMissingErrorNamesWhatItFound(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "data", "photos"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "commits.log"), nil, 0o644))
	opts := DefaultOptions()
	opts.Dir = dir
	_, err := Open(opts)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.Contains(t, err.Error(), "holds data/, commits.log but catalog.json is missing")
	_, err = os.Stat(filepath.Join(dir, catalogFile))
	require.True(t, errors.Is(err, os.ErrNotExist), "a refused open writes no catalog")
}
