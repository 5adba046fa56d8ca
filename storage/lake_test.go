package storage

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func lakeOpts(extra map[string]string) map[string]string {
	out := map[string]string{metadata.OptDatalakeEnabled: "true"}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func TestCommitLakeSnapshotIsRecordedAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	var p1, p2 metadata.PartitionInfo
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "t", ordersColumns(), []string{"dt"}, lakeOpts(map[string]string{metadata.OptBucketNum: "2"}))
		_, ok, err := e.ReadableLakeSnapshot(ctx, path("t"))
		require.NoError(t, err)
		require.False(t, ok, "never tiered: no snapshot, and no error")

		var err2 error
		p1, err2 = e.CreatePartition(ctx, path("t"), map[string]string{"dt": "2026-01-01"}, false)
		require.NoError(t, err2)
		p2, err2 = e.CreatePartition(ctx, path("t"), map[string]string{"dt": "2026-01-02"}, false)
		require.NoError(t, err2)
		snap := metadata.LakeSnapshot{
			SnapshotID: 1,
			TieredOffsets: map[metadata.TableBucket]int64{
				{TableID: info.TableID, PartitionID: p1.ID, Bucket: 0}: 5,
				{TableID: info.TableID, PartitionID: p1.ID, Bucket: 1}: 0,
				{TableID: info.TableID, PartitionID: p2.ID, Bucket: 0}: 7,
			},
			PartitionNames: map[int64]string{p1.ID: p1.Name, p2.ID: p2.Name, 999: "unused"},
		}
		require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), snap))
		got, ok, err := e.ReadableLakeSnapshot(ctx, path("t"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(1), got.SnapshotID)
		require.Equal(t, snap.TieredOffsets, got.TieredOffsets)
		// Only the names the offsets use are kept.
		require.Equal(t, map[int64]string{p1.ID: p1.Name, p2.ID: p2.Name}, got.PartitionNames)

		// The answer is the caller's to change.
		got.TieredOffsets[metadata.TableBucket{TableID: info.TableID, PartitionID: p1.ID}] = 100
		again, _, err := e.ReadableLakeSnapshot(ctx, path("t"))
		require.NoError(t, err)
		require.Equal(t, int64(5), again.TieredOffsets[metadata.TableBucket{TableID: info.TableID, PartitionID: p1.ID}])

		// Dropping a partition keeps its entry: the lake still has it.
		require.NoError(t, e.DropPartition(ctx, path("t"), map[string]string{"dt": "2026-01-01"}, false))
		// Other DDL keeps the record too.
		_, err = e.AlterTable(ctx, path("t"), map[string]string{metadata.OptLogTTL: "2 d"})
		require.NoError(t, err)
	}()

	e, _ := testEngine(t, dir, nil)
	got, ok, err := e.ReadableLakeSnapshot(ctx, path("t"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(1), got.SnapshotID)
	require.Len(t, got.TieredOffsets, 3)
	require.Equal(t, int64(5), got.TieredOffsets[metadata.TableBucket{TableID: info.TableID, PartitionID: p1.ID, Bucket: 0}])
	require.Equal(t, p1.Name, got.PartitionNames[p1.ID])

	// A newer snapshot replaces it whole.
	require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), metadata.LakeSnapshot{
		SnapshotID:     3,
		TieredOffsets:  map[metadata.TableBucket]int64{{TableID: info.TableID, PartitionID: p2.ID, Bucket: 1}: 2},
		PartitionNames: map[int64]string{p2.ID: p2.Name},
	}))
	got, _, err = e.ReadableLakeSnapshot(ctx, path("t"))
	require.NoError(t, err)
	require.Equal(t, int64(3), got.SnapshotID)
	require.Equal(t, map[metadata.TableBucket]int64{{TableID: info.TableID, PartitionID: p2.ID, Bucket: 1}: 2}, got.TieredOffsets)

	// Dropping the table drops its record; a new table of the name has none.
	require.NoError(t, e.DropTable(ctx, path("t"), false))
	createTable(t, e, "t", ordersColumns(), []string{"dt"}, lakeOpts(nil))
	_, ok, err = e.ReadableLakeSnapshot(ctx, path("t"))
	require.NoError(t, err)
	require.False(t, ok)
}

func TestCommitLakeSnapshotRefusesBadSnapshots(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "t", ordersColumns(), nil, lakeOpts(map[string]string{metadata.OptBucketNum: "2"}))
	plain := createTable(t, e, "plain", ordersColumns(), nil, nil)
	parted := createTable(t, e, "parted", ordersColumns(), []string{"dt"}, lakeOpts(nil))
	tb := func(id, p int64, b int32) metadata.TableBucket {
		return metadata.TableBucket{TableID: id, PartitionID: p, Bucket: b}
	}
	np := metadata.NonPartitioned
	require.NoError(t, e.CommitLakeSnapshot(ctx, path("t"), metadata.LakeSnapshot{SnapshotID: 2, TieredOffsets: map[metadata.TableBucket]int64{tb(info.TableID, np, 0): 1}}))
	cases := []struct {
		name  string
		table string
		snap  metadata.LakeSnapshot
		want  error
	}{
		{"no lake", "plain", metadata.LakeSnapshot{SnapshotID: 1, TieredOffsets: map[metadata.TableBucket]int64{tb(plain.TableID, np, 0): 1}}, metadata.ErrUnsupported},
		{"not newer", "t", metadata.LakeSnapshot{SnapshotID: 2}, metadata.ErrInvalidValue},
		{"older", "t", metadata.LakeSnapshot{SnapshotID: 1}, metadata.ErrInvalidValue},
		{"zero id", "parted", metadata.LakeSnapshot{}, metadata.ErrInvalidValue},
		{"other table", "t", metadata.LakeSnapshot{SnapshotID: 3, TieredOffsets: map[metadata.TableBucket]int64{tb(plain.TableID, np, 0): 1}}, metadata.ErrInvalidValue},
		{"bucket out of range", "t", metadata.LakeSnapshot{SnapshotID: 3, TieredOffsets: map[metadata.TableBucket]int64{tb(info.TableID, np, 2): 1}}, metadata.ErrInvalidValue},
		{"negative offset", "t", metadata.LakeSnapshot{SnapshotID: 3, TieredOffsets: map[metadata.TableBucket]int64{tb(info.TableID, np, 0): -1}}, metadata.ErrInvalidValue},
		{"partition of unpartitioned", "t", metadata.LakeSnapshot{SnapshotID: 3, TieredOffsets: map[metadata.TableBucket]int64{tb(info.TableID, 5, 0): 1}, PartitionNames: map[int64]string{5: "x"}}, metadata.ErrInvalidValue},
		{"partition without name", "parted", metadata.LakeSnapshot{SnapshotID: 3, TieredOffsets: map[metadata.TableBucket]int64{tb(parted.TableID, 5, 0): 1}}, metadata.ErrInvalidValue},
		{"no partition", "parted", metadata.LakeSnapshot{SnapshotID: 3, TieredOffsets: map[metadata.TableBucket]int64{tb(parted.TableID, np, 0): 1}}, metadata.ErrInvalidValue},
		{"missing table", "nope", metadata.LakeSnapshot{SnapshotID: 3}, metadata.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.CommitLakeSnapshot(ctx, path(c.table), c.snap)
			require.ErrorIs(t, err, c.want)
		})
	}
	got, ok, err := e.ReadableLakeSnapshot(ctx, path("t"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(2), got.SnapshotID, "refused snapshots change nothing")
}
