package lake

import (
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// expireSetup commits 12 snapshots of a log-like table (each lists every
// earlier file and one new) and leaves a file of a round still writing
// (snapshot 13, in no manifest).
func expireSetup(t *testing.T, l *Lake, table *metadata.TableInfo) {
	t.Helper()
	var files []metadata.LakeFile
	for snap := int64(1); snap <= 12; snap++ {
		files = append(files, writeRows(t, l, table, "", nil, snap, [][]any{{snap, "r"}}))
		require.NoError(t, l.Commit(bg, Manifest{SnapshotID: snap, TableID: table.TableID, Files: slices.Clone(files),
			TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: snap}}}))
	}
	writeRows(t, l, table, "", nil, 13, [][]any{{int64(13), "r"}})
}

// lakeState lists a table's manifests and data files.
func lakeState(t *testing.T, l *Lake, tableID int64) (snaps []int64, files []string) {
	t.Helper()
	snaps, err := l.snapshotIDs(tableID)
	require.NoError(t, err)
	require.NoError(t, l.eachDataFile(tableID, func(rel string) error {
		files = append(files, rel)
		return nil
	}))
	slices.Sort(files)
	return snaps, files
}

// checkLive checks that every file a remaining manifest lists is there
// and reads.
func checkLive(t *testing.T, l *Lake, table *metadata.TableInfo, what string) {
	t.Helper()
	snaps, _ := lakeState(t, l, table.TableID)
	require.NotEmpty(t, snaps, what)
	for _, id := range snaps {
		m, err := l.Manifest(bg, table.TableID, id)
		require.NoError(t, err, what)
		r, err := l.OpenFiles(bg, table, m.Files, ReadOptions{Projection: []int{0}})
		require.NoError(t, err, "%s: snapshot %d", what, id)
		rows := rowsOf(t, r, []metadata.DataType{metadata.BigIntType()})
		require.Len(t, rows, len(m.Files), "%s: snapshot %d reads every file it lists", what, id)
	}
}

// Expire keeps the newest snapshots and the ones asked for, removes the
// others' manifests and every file no remaining manifest lists, and
// leaves the files of a round still writing.
func TestExpireKeepsWhatIsLive(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := testTable(5, []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType())}, nil, nil)
	expireSetup(t, l, table)
	_, before := lakeState(t, l, table.TableID)
	require.Len(t, before, 13)

	res, err := l.Expire(bg, table.TableID, 3, []int64{5, 5, 99})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 4, 6, 7, 8, 9}, res.Snapshots)
	require.Zero(t, res.Files, "a log table's newest snapshot lists every earlier file")
	snaps, files := lakeState(t, l, table.TableID)
	require.Equal(t, []int64{5, 10, 11, 12}, snaps)
	require.Equal(t, before, files)
	checkLive(t, l, table, "after expiry")

	// A primary-key-like table: each snapshot lists only its own file.
	pk := testTable(6, []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType())}, nil, nil)
	for snap := int64(1); snap <= 6; snap++ {
		f := writeRows(t, l, pk, "", nil, snap, [][]any{{snap, "r"}})
		require.NoError(t, l.Commit(bg, Manifest{SnapshotID: snap, TableID: pk.TableID, Files: []metadata.LakeFile{f},
			TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: snap}}}))
	}
	res, err = l.Expire(bg, pk.TableID, 2, []int64{2})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 3, 4}, res.Snapshots)
	require.Equal(t, 3, res.Files)
	require.Positive(t, res.Bytes)
	snaps, files = lakeState(t, l, pk.TableID)
	require.Equal(t, []int64{2, 5, 6}, snaps)
	require.Len(t, files, 3)
	checkLive(t, l, pk, "primary-key table")

	// The newest snapshot stays whatever retain says.
	res, err = l.Expire(bg, pk.TableID, 0, nil)
	require.NoError(t, err)
	snaps, files = lakeState(t, l, pk.TableID)
	require.Equal(t, []int64{6}, snaps)
	require.Len(t, files, 1)
	checkLive(t, l, pk, "retain 0")
}

// A removal failing at every step (a crash there) leaves every file a
// remaining manifest lists in place; the next call finishes the job.
func TestExpireFailingAtEveryRemoval(t *testing.T) {
	table := testTable(5, []metadata.Column{col("id", metadata.BigIntType()), col("s", metadata.StringType())}, nil, nil)
	pkLike := func(l *Lake) {
		for snap := int64(1); snap <= 8; snap++ {
			f := writeRows(t, l, table, "", nil, snap, [][]any{{snap, "r"}})
			require.NoError(t, l.Commit(bg, Manifest{SnapshotID: snap, TableID: table.TableID, Files: []metadata.LakeFile{f},
				TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: snap}}}))
		}
	}
	failEveryRemoval(t, table, pkLike, 12, "6 manifests, then 6 files", func(l *Lake, at string) { checkLive(t, l, table, at) })
}

// failEveryRemoval runs Expire(retain 2) on the lake setup builds, once
// whole (it must remove calls files and manifests, for the reason why),
// then once failing at each removal: after each failure check must hold,
// and a second call must leave what the whole run left.
func failEveryRemoval(t *testing.T, table *metadata.TableInfo, setup func(*Lake), calls int64, why string, check func(l *Lake, at string)) {
	t.Helper()
	counter := NewFaultFS(NewMemFS())
	l, _ := testLake(t, true, func(o *Options) { o.FS = counter })
	setup(l)
	counter.FailNth(FaultRemove, 0, nil)
	_, err := l.Expire(bg, table.TableID, 2, nil)
	require.NoError(t, err)
	require.Equal(t, calls, counter.CallsOf(FaultRemove), why)
	wantSnaps, wantFiles := lakeState(t, l, table.TableID)

	for n := int64(1); n <= calls; n++ {
		ffs := NewFaultFS(NewMemFS())
		l, _ := testLake(t, true, func(o *Options) { o.FS = ffs })
		setup(l)
		ffs.FailNth(FaultRemove, n, syscall.EIO)
		_, err := l.Expire(bg, table.TableID, 2, nil)
		require.ErrorIs(t, err, syscall.EIO, "remove %d", n)
		check(l, ffs.FiredAt())
		ffs.Disarm()
		_, err = l.Expire(bg, table.TableID, 2, nil)
		require.NoError(t, err)
		snaps, files := lakeState(t, l, table.TableID)
		require.Equal(t, wantSnaps, snaps, "remove %d", n)
		require.Equal(t, wantFiles, files, "remove %d", n)
	}
}
