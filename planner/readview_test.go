package planner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
)

// fakeView is an in-memory planner.ReadView.
type fakeView struct {
	start, stop map[metadata.TableBucket]int64
	kv          map[metadata.TableBucket]metadata.KvSnapshot
	lake        map[int64]metadata.LakeSnapshot
}

var _ planner.ReadView = (*fakeView)(nil)

func (v *fakeView) LogOffsets(tb metadata.TableBucket) (int64, int64) { return v.start[tb], v.stop[tb] }
func (v *fakeView) KvSnapshot(tb metadata.TableBucket) (metadata.KvSnapshot, bool) {
	s, ok := v.kv[tb]
	return s, ok
}
func (v *fakeView) LakeSnapshot(id int64) (metadata.LakeSnapshot, bool) {
	s, ok := v.lake[id]
	return s, ok
}

// TestReadViewAppend: with a read view, the stop and start offsets and
// the lake probe are the view's, whatever the live admin says; without
// one, the planner reads the admin as before.
func TestReadViewAppend(t *testing.T) {
	ctx := context.Background()
	table, err := testTable(2, nil, true)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	b0, b1 := metadata.TableBucket{TableID: 7, PartitionID: -1, Bucket: 0}, metadata.TableBucket{TableID: 7, PartitionID: -1, Bucket: 1}
	admin.hw[b0], admin.hw[b1] = 50, 60
	admin.start[b0] = 10
	admin.lake = &metadata.LakeSnapshot{SnapshotID: 4, TieredOffsets: map[metadata.TableBucket]int64{b0: 40}}
	view := &fakeView{
		start: map[metadata.TableBucket]int64{b0: 2},
		stop:  map[metadata.TableBucket]int64{b0: 30, b1: 5},
	}

	p, err := planner.NewAppendPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.WithReadView(view))
	require.NoError(t, err)
	require.False(t, p.HasLakeSnapshot(), "the view had no lake snapshot")
	require.Zero(t, admin.probes)
	splits, err := p.Plan(ctx)
	require.NoError(t, err)
	require.Equal(t, "log partition=- bucket=0 log=2..30\nlog partition=- bucket=1 log=0..5\n", splitLines(splits))
	require.Zero(t, admin.listOffsets, "offsets come from the view")

	// The view's lake snapshot, with its tiered offsets.
	view.lake = map[int64]metadata.LakeSnapshot{7: {SnapshotID: 2, TieredOffsets: map[metadata.TableBucket]int64{b0: 20}}}
	p, err = planner.NewAppendPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1},
		planner.WithLake(&fakeLake{table: &table}), planner.WithReadView(view))
	require.NoError(t, err)
	id, ok := p.LakeSnapshotID()
	require.True(t, ok)
	require.EqualValues(t, 2, id)
	splits, err = p.Plan(ctx)
	require.NoError(t, err)
	require.Equal(t, "log partition=- bucket=0 log=20..30\nlog partition=- bucket=1 log=0..5\n", splitLines(splits))

	// Without a view: live.
	p, err = planner.NewAppendPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.WithLake(&fakeLake{table: &table}))
	require.NoError(t, err)
	id, _ = p.LakeSnapshotID()
	require.EqualValues(t, 4, id)
	splits, err = p.Plan(ctx)
	require.NoError(t, err)
	require.Equal(t, "log partition=- bucket=0 log=40..50\nlog partition=- bucket=1 log=0..60\n", splitLines(splits))
}

// TestReadViewUpsert: an upsert scan at a view reads the view's KV
// snapshots (never a newer live one) and tails up to the view's stops;
// the changelog planner takes the view too.
func TestReadViewUpsert(t *testing.T) {
	ctx := context.Background()
	table, err := testTable(2, nil, false)
	require.NoError(t, err)
	table.Schema.PrimaryKey = []string{"id"}
	admin := newFakeAdmin(table)
	b0, b1 := metadata.TableBucket{TableID: 7, PartitionID: -1, Bucket: 0}, metadata.TableBucket{TableID: 7, PartitionID: -1, Bucket: 1}
	admin.hw[b0], admin.hw[b1] = 90, 80
	admin.kv[b0] = metadata.KvSnapshot{SnapshotID: 9, LogOffset: 70} // taken after the view
	admin.kv[b1] = metadata.KvSnapshot{SnapshotID: 5, LogOffset: 60}
	view := &fakeView{
		stop: map[metadata.TableBucket]int64{b0: 40, b1: 30},
		kv:   map[metadata.TableBucket]metadata.KvSnapshot{b0: {SnapshotID: 3, LogOffset: 35}},
	}
	p, err := planner.NewUpsertPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.WithReadView(view))
	require.NoError(t, err)
	splits, err := p.Plan(ctx)
	require.NoError(t, err)
	require.Equal(t, "kv+log partition=- bucket=0 log=35..40 kv_snapshot=3\nkv+log partition=- bucket=1 log=0..30 kv_snapshot=none\n", splitLines(splits))
	require.Zero(t, admin.kvSnapshots)

	c, err := planner.NewChangelogPlanner(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.WithReadView(view))
	require.NoError(t, err)
	splits, err = c.Plan(ctx)
	require.NoError(t, err)
	require.Equal(t, "log partition=- bucket=0 log=0..40\nlog partition=- bucket=1 log=0..30\n", splitLines(splits))
}
