package tiering

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestTableDroppedBetweenLakeCommitAndRecord: a round whose table was
// dropped after its lake commit said "recovery records it", which no
// recovery does for a dropped table, and left lake/<id>/ behind.
func TestTableDroppedBetweenLakeCommitAndRecord(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir, nil, nil)
	info := e.create("t", logCols(), nil, nil, nil)
	e.appendRows("t", []any{int64(1), "r", "x"})
	e.tier("t")
	e.appendRows("t", []any{int64(2), "r", "x"})
	e.svc.hooks.beforeRecord = func(*metadata.TableInfo) {
		require.NoError(t, e.eng.DropTable(bg, tpath("t"), false))
	}
	_, err := e.svc.Tier(bg, tpath("t"))
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.NotContains(t, err.Error(), "recovery records it")
	require.Contains(t, err.Error(), "was dropped during the round")
	require.NoDirExists(t, filepath.Join(dir, "lake", strconv.FormatInt(info.TableID, 10)))
}

// TestRecoverRemovesLakesOfDroppedTables: a lake left by a drop (the
// engine's drop done, the lake's not) is removed at the next open, and
// nothing the lake did not write, nor the lake of an id the engine never
// gave out.
func TestRecoverRemovesLakesOfDroppedTables(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir, nil, nil)
	gone := e.create("gone", logCols(), nil, nil, nil)
	kept := e.create("kept", logCols(), nil, nil, nil)
	for _, name := range []string{"gone", "kept"} {
		e.appendRows(name, []any{int64(1), "r", "x"})
		e.tier(name)
	}
	require.NoError(t, e.eng.DropTable(bg, tpath("gone"), false))
	e.close()

	lakeDir := filepath.Join(dir, "lake")
	goneDir := filepath.Join(lakeDir, strconv.FormatInt(gone.TableID, 10))
	foreign := []string{
		filepath.Join(goneDir, "data", "-", "b0", "notes.txt"),
		filepath.Join(goneDir, "snapshots", "x.tmp"),
		filepath.Join(lakeDir, "9999", "snapshots", "00000000000000000001.json"),
		filepath.Join(lakeDir, "photos", "img1.jpg"),
	}
	for _, f := range foreign {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("precious"), 0o644))
	}
	e.open()
	require.NoError(t, e.svc.Recover(bg))
	for _, f := range foreign {
		require.FileExists(t, f)
	}
	entries, err := os.ReadDir(filepath.Join(goneDir, "data", "-", "b0"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the dropped table's Parquet files are removed")
	entries, err = os.ReadDir(filepath.Join(goneDir, "snapshots"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the dropped table's manifests are removed")
	_, ok, err := e.lk.LatestManifest(bg, kept.TableID)
	require.NoError(t, err)
	require.True(t, ok, "the lake of a live table stays")
	ids, err := e.lk.TableIDs()
	require.NoError(t, err)
	require.Contains(t, ids, int64(9999))
}
