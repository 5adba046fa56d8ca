package lake

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func TestManifestCommit(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, Sync: true})
	require.NoError(t, err)
	table := simpleTable()

	_, ok, err := l.LatestManifest(bg, table.TableID)
	require.NoError(t, err)
	require.False(t, ok, "no snapshot yet is not an error")

	f1 := writeRows(t, l, table, "", nil, 1, simpleRows(0, 10))
	m1 := Manifest{SnapshotID: 1, TableID: table.TableID, Files: []metadata.LakeFile{f1},
		TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Bucket: 0, Offset: 10}}}
	require.NoError(t, l.Commit(bg, m1))

	f2 := writeRows(t, l, table, "", nil, 2, simpleRows(10, 20))
	require.Equal(t, "3/data/-/b0/2-0.parquet", f2.Path)
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	m2 := Manifest{SnapshotID: 2, TableID: table.TableID, Files: []metadata.LakeFile{f2, f1}, CommittedAt: at,
		TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Bucket: 0, Offset: 20}}}
	require.NoError(t, l.Commit(bg, m2))

	// Ids must increase.
	require.ErrorIs(t, l.Commit(bg, m2), metadata.ErrExists)
	require.ErrorIs(t, l.Commit(bg, m1), metadata.ErrExists)
	// A manifest naming files outside the table is refused.
	bad := Manifest{SnapshotID: 9, TableID: table.TableID, Files: []metadata.LakeFile{{Path: "../x.parquet"}}}
	require.ErrorIs(t, l.Commit(bg, bad), metadata.ErrInvalidValue)

	// A crash mid-commit leaves a temporary file; readers ignore it.
	snaps := filepath.Join(dir, "3", "snapshots")
	require.NoError(t, os.WriteFile(filepath.Join(snaps, manifestName(3)+".tmp"), []byte(`{"format":1,"snap`), 0o644))
	require.NoError(t, l.Close())

	// Reopened, the lake sees snapshot 2 as written.
	l, err = Open(Options{Dir: dir, Sync: true})
	require.NoError(t, err)
	defer l.Close()
	got, ok, err := l.LatestManifest(bg, table.TableID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(2), got.SnapshotID)
	require.Equal(t, at, got.CommittedAt)
	require.Equal(t, []metadata.LakeFile{f1, f2}, got.Files, "files in canonical order")
	require.Equal(t, int64(20), got.TieredOffsets[0].Offset)
	old, err := l.Manifest(bg, table.TableID, 1)
	require.NoError(t, err)
	require.Equal(t, []metadata.LakeFile{f1}, old.Files)
	_, err = l.Manifest(bg, table.TableID, 7)
	require.ErrorIs(t, err, metadata.ErrNotFound)

	// The next commit takes id 3 and removes the leftover.
	m3 := Manifest{SnapshotID: 3, TableID: table.TableID, Files: []metadata.LakeFile{f1, f2}}
	require.NoError(t, l.Commit(bg, m3))
	names, err := os.ReadDir(snaps)
	require.NoError(t, err)
	var listed []string
	for _, n := range names {
		listed = append(listed, n.Name())
	}
	require.Equal(t, []string{manifestName(1), manifestName(2), manifestName(3), FileListName}, listed)
	got, _, err = l.LatestManifest(bg, table.TableID)
	require.NoError(t, err)
	require.Equal(t, int64(3), got.SnapshotID)
	require.False(t, got.CommittedAt.IsZero())

	// Dropping the table removes everything.
	require.NoError(t, l.DropTable(table.TableID))
	_, ok, err = l.LatestManifest(bg, table.TableID)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = os.Stat(filepath.Join(dir, "3"))
	require.True(t, os.IsNotExist(err))
}

func TestCorruptManifest(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir})
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.Commit(bg, Manifest{SnapshotID: 1, TableID: 5}))
	name := filepath.Join(dir, "5", "snapshots", manifestName(2))
	for _, body := range []string{
		`{"format":1,"snapshot_id":2,"table_id":5,"files":[`,                         // truncated
		`{"format":2,"snapshot_id":2,"table_id":5}`,                                  // unknown format
		`{"format":1,"snapshot_id":3,"table_id":5}`,                                  // wrong id
		`{"format":1,"snapshot_id":2,"table_id":5,"files":[{"path":"/etc/passwd"}]}`, // escapes the lake
		"\x00\x01garbage",
	} {
		require.NoError(t, os.WriteFile(name, []byte(body), 0o644))
		// A fresh lake: nothing cached.
		l2, err := Open(Options{Dir: dir})
		require.NoError(t, err)
		_, _, err = l2.LatestManifest(bg, 5)
		require.ErrorIs(t, err, metadata.ErrCorrupt, body)
		require.Contains(t, err.Error(), "5/snapshots/"+manifestName(2))
		require.NoError(t, l2.Close())
	}
}
