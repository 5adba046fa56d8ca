package planner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
)

// TestProbeExactlyOnce: however often the scan asks about the lake
// (HasLakeSnapshot, ScanType, EXPLAIN, Plan), the probe ran once, at
// construction.
func TestProbeExactlyOnce(t *testing.T) {
	ctx := context.Background()
	for _, snapshot := range []bool{false, true} {
		table, err := testTable(2, nil, true)
		require.NoError(t, err)
		admin := newFakeAdmin(table)
		if snapshot {
			admin.lake = &metadata.LakeSnapshot{SnapshotID: 3}
		}
		p, err := planner.NewAppendPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1})
		require.NoError(t, err)
		require.Equal(t, 1, admin.probes)
		for range 3 {
			require.Equal(t, snapshot, p.HasLakeSnapshot())
			_ = p.ScanType()
			_ = planner.Explain(table, planner.ScanSpec{Limit: -1}, p, nil, nil)
			_, _ = p.Plan(ctx)
		}
		require.Equal(t, 1, admin.probes)
		id, ok := p.LakeSnapshotID()
		require.Equal(t, snapshot, ok)
		if snapshot {
			require.Equal(t, int64(3), id)
			require.Equal(t, planner.TypeLakeAppend, p.ScanType())
		} else {
			require.Equal(t, planner.TypeAppend, p.ScanType())
		}
	}
}

func TestNoProbeWithoutLake(t *testing.T) {
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	admin.lake = &metadata.LakeSnapshot{SnapshotID: 9} // present, but the table has no lake
	p, err := planner.NewAppendPlanner(context.Background(), admin, table, planner.ScanSpec{Limit: -1})
	require.NoError(t, err)
	require.False(t, p.HasLakeSnapshot())
	_, err = p.Plan(context.Background())
	require.NoError(t, err)
	require.Zero(t, admin.probes)
}

// TestLakeUnionNeedsLakeSource: a probe that finds a snapshot with no lake
// source to plan it is an error of Plan, for both planners, never a
// silent log-only read.
func TestLakeUnionNeedsLakeSource(t *testing.T) {
	ctx := context.Background()
	for _, pk := range []bool{false, true} {
		table, err := testTable(1, nil, true)
		require.NoError(t, err)
		if pk {
			table.Schema.PrimaryKey = []string{"id"}
		}
		admin := newFakeAdmin(table)
		admin.lake = &metadata.LakeSnapshot{SnapshotID: 1}
		var p planner.SplitPlanner
		if pk {
			p, err = planner.NewUpsertPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.WithLake(nil))
		} else {
			p, err = planner.NewAppendPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1})
		}
		require.NoError(t, err)
		require.True(t, p.HasLakeSnapshot())
		_, err = p.Plan(ctx)
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		require.ErrorContains(t, err, "no lake source")
		require.Zero(t, admin.listOffsets)
	}
}

// failingLake fails every Plan.
type failingLake struct{ fakeLake }

func (f *failingLake) Plan(context.Context, int64, predicate.P, []predicate.P) ([]metadata.LakeFile, error) {
	return nil, metadata.ErrCorrupt
}

func TestLakePlanErrorPropagates(t *testing.T) {
	table, err := testTable(1, nil, true)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	admin.lake = &metadata.LakeSnapshot{SnapshotID: 6}
	p, err := planner.NewAppendPlanner(context.Background(), admin, table, planner.ScanSpec{Limit: -1},
		planner.WithLake(&failingLake{fakeLake{table: &table}}))
	require.NoError(t, err)
	_, err = p.Plan(context.Background())
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, "plan lake snapshot 6 of fluss.orders")
}

// TestLakeSplitKinds: the split kinds of the lake branch and what they
// report.
func TestLakeSplitKinds(t *testing.T) {
	tb := metadata.TableBucket{TableID: 7, PartitionID: planner.FirstLakeOnlyPartitionID, Bucket: 2}
	files := []metadata.LakeFile{{Path: "a"}, {Path: "b"}}
	var s planner.Split = &planner.LakeSplit{TableBucket: tb, Partition: "2026-01-01", Files: files}
	require.Equal(t, "lake", s.Kind())
	require.Equal(t, tb, s.Bucket())
	require.Equal(t, "2026-01-01", s.PartitionName())
	require.True(t, planner.IsLakeOnlyPartition(s.Bucket().PartitionID))
	require.False(t, planner.IsLakeOnlyPartition(metadata.NonPartitioned))
	require.False(t, planner.IsLakeOnlyPartition(0))
	s = &planner.LakeLogSplit{TableBucket: tb, Files: files[:1], LogStart: 3, LogStop: 8}
	require.Equal(t, "lake+log", s.Kind())
	require.Equal(t, "lake+log partition=- bucket=2 log=3..8 lake_files=1", s.(fmt.Stringer).String())
}

func TestAppendPlannerRefusesPrimaryKeyTable(t *testing.T) {
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	table.Schema.PrimaryKey = []string{"id"}
	_, err = planner.NewAppendPlanner(context.Background(), newFakeAdmin(table), table, planner.ScanSpec{Limit: -1})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}

func TestBadMaxRecordsOption(t *testing.T) {
	table, err := testTable(1, nil, true)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	spec := planner.ScanSpec{Limit: -1, Options: map[string]string{planner.OptMaxRecordsPerSplit: "1.5"}}
	_, err = planner.NewAppendPlanner(context.Background(), admin, table, spec)
	require.ErrorIs(t, err, metadata.ErrInvalidOption)
	require.ErrorContains(t, err, planner.OptMaxRecordsPerSplit)
	require.Zero(t, admin.probes)
}

func TestCloseIsIdempotent(t *testing.T) {
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	p, err := planner.NewAppendPlanner(context.Background(), newFakeAdmin(table), table, planner.ScanSpec{Limit: -1})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	_, err = p.Plan(context.Background())
	require.ErrorIs(t, err, planner.ErrClosed)
}

// TestPartitionFilterOnDataColumnRefused: a partition filter that reads a
// data column would see it as NULL and prune partitions holding matching
// rows; the planner refuses it instead.
func TestPartitionFilterOnDataColumnRefused(t *testing.T) {
	table, err := testTable(1, []string{"p:INT"}, false)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	admin.partitions = []metadata.PartitionInfo{{ID: 1, Name: "1", Values: []string{"1"}}}
	filter, err := parseFilter(table, "amount > 5")
	require.NoError(t, err)
	p, err := planner.NewAppendPlanner(context.Background(), admin, table, planner.ScanSpec{Limit: -1, PartitionFilter: filter})
	require.NoError(t, err)
	_, err = p.Plan(context.Background())
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.ErrorContains(t, err, "not a partition key")
}

func TestTypeOf(t *testing.T) {
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	require.Equal(t, planner.TypeAppend, planner.TypeOf(table, nil))
	table.Schema.PrimaryKey = []string{"id"}
	require.Equal(t, planner.TypeUpsert, planner.TypeOf(table, nil))
	require.Equal(t, planner.TypeLakeUpsert, planner.TypeOf(table, lakePlanner{}))
}

// lakePlanner is a SplitPlanner whose probe found a snapshot.
type lakePlanner struct{}

func (lakePlanner) HasLakeSnapshot() bool                         { return true }
func (lakePlanner) Plan(context.Context) ([]planner.Split, error) { return nil, nil }
func (lakePlanner) Close() error                                  { return nil }

func TestUpsertPlannerKvSnapshotError(t *testing.T) {
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	table.Schema.PrimaryKey = []string{"id"}
	admin := newFakeAdmin(table)
	admin.kvErr = errors.New("snapshot store unreachable")
	p, err := planner.NewUpsertPlanner(context.Background(), admin, table, planner.ScanSpec{Limit: -1})
	require.NoError(t, err)
	_, err = p.Plan(context.Background())
	require.ErrorContains(t, err, "latest kv snapshots of fluss.orders: snapshot store unreachable")
	require.NoError(t, p.Close())
	_, err = p.Plan(context.Background())
	require.ErrorIs(t, err, planner.ErrClosed)
}

func TestKvLogSplitString(t *testing.T) {
	s := &planner.KvLogSplit{
		TableBucket: metadata.TableBucket{TableID: 1, PartitionID: 4, Bucket: 2},
		Partition:   "2026-01-01$US", SnapshotID: planner.NoKvSnapshot, LogStart: 3, LogStop: 9,
	}
	require.Equal(t, "kv+log partition=2026-01-01$US bucket=2 log=3..9 kv_snapshot=none", s.String())
	require.False(t, s.HasSnapshot())
	s.SnapshotID, s.Partition = 0, ""
	require.Equal(t, "kv+log partition=- bucket=2 log=3..9 kv_snapshot=0", s.String())
	require.Equal(t, "kv+log", s.Kind())
}
