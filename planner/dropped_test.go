package planner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
)

// A partition dropped after the planner listed it and before it asked for
// its offsets and KV snapshots is planned as absent: the other
// partitions' splits, no error. A partition that is still listed but
// whose offsets are not found is no drop, and still fails the plan.
func TestPartitionDroppedWhilePlanning(t *testing.T) {
	setup := func(t *testing.T, pk bool) *fakeAdmin {
		table, err := testTable(2, []string{"p:INT"}, false)
		require.NoError(t, err)
		if pk {
			table.Schema.PrimaryKey = []string{"id", "p"}
		}
		admin := newFakeAdmin(table)
		for id := int64(1); id <= 3; id++ {
			v := []string{string(rune('0' + id))}
			admin.partitions = append(admin.partitions, metadata.PartitionInfo{ID: id, Name: v[0], Values: v})
			for b := int32(0); b < 2; b++ {
				tb := metadata.TableBucket{TableID: table.TableID, PartitionID: id, Bucket: b}
				admin.hw[tb] = 10
				if pk {
					admin.kv[tb] = metadata.KvSnapshot{SnapshotID: 1, LogOffset: 4}
				}
			}
		}
		return admin
	}
	plan := func(t *testing.T, admin *fakeAdmin) ([]planner.Split, error) {
		var p planner.SplitPlanner
		var err error
		if admin.table.HasPrimaryKey() {
			p, err = planner.NewUpsertPlanner(context.Background(), admin, admin.table, planner.ScanSpec{Limit: -1})
		} else {
			p, err = planner.NewAppendPlanner(context.Background(), admin, admin.table, planner.ScanSpec{Limit: -1})
		}
		require.NoError(t, err)
		defer p.Close()
		return p.Plan(context.Background())
	}
	for _, pk := range []bool{false, true} {
		admin := setup(t, pk)
		admin.dropAfterListing = []int64{2}
		splits, err := plan(t, admin)
		require.NoError(t, err, "pk=%v", pk)
		var parts []int64
		for _, s := range splits {
			parts = append(parts, s.Bucket().PartitionID)
		}
		require.Equal(t, []int64{1, 1, 3, 3}, parts, "pk=%v", pk)

		admin = setup(t, pk)
		admin.missing = []int64{2}
		_, err = plan(t, admin)
		require.ErrorIs(t, err, metadata.ErrNotFound, "pk=%v", pk)
		require.ErrorContains(t, err, "partition 2", "pk=%v", pk)
	}
}
