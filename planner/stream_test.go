package planner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
)

func TestStreamOptions(t *testing.T) {
	for _, tc := range []struct {
		opts      map[string]string
		streaming bool
		start     planner.Startup
		err       string
	}{
		{opts: nil},
		{opts: map[string]string{"scan.mode": "batch"}},
		{opts: map[string]string{"scan.mode": "STREAMING"}, streaming: true, start: planner.Startup{Mode: planner.StartupFull}},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "Latest"}, streaming: true, start: planner.Startup{Mode: planner.StartupLatest}},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "earliest"}, streaming: true, start: planner.Startup{Mode: planner.StartupEarliest}},
		{opts: map[string]string{"scan.mode": "tail"}, err: "'scan.mode' = 'tail'; use 'batch' or 'streaming'"},
		// A batch read's startup options are its planner's to honour
		// (t$changelog) or refuse.
		{opts: map[string]string{"scan.startup.mode": "latest"}},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "timestamp", "scan.startup.timestamp": "1"}, streaming: true, start: planner.Startup{Mode: planner.StartupTimestamp, Timestamp: 1}},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "timestamp"}, err: "'scan.startup.timestamp' is required int 'TIMESTAMP' startup mode but missing."},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "offsets"}, err: "fluss.Subscribe"},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.timestamp": "1"}, err: "'scan.startup.timestamp' is set but 'scan.startup.mode' is 'full'"},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "now"}, err: "'scan.startup.mode' = 'now'"},
	} {
		streaming, start, err := planner.StreamOptions(tc.opts, nil)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%v", tc.opts)
			require.ErrorIs(t, err, errKind(tc.err))
			continue
		}
		require.NoError(t, err, "%v", tc.opts)
		require.Equal(t, tc.streaming, streaming, "%v", tc.opts)
		require.Equal(t, tc.start, start, "%v", tc.opts)
	}
	// Inside another statement a streaming read is refused, not run as a
	// batch.
	require.ErrorContains(t, planner.CheckOptions(map[string]string{"scan.mode": "streaming"}), "is a SELECT of one table")
	require.NoError(t, planner.CheckOptions(map[string]string{"scan.mode": "batch"}))
}

func errKind(string) error { return metadata.ErrInvalidOption }

// StreamStart plans one offset per bucket of the partitions the filter
// keeps: the log start (past 0 once retention moved it) or the high
// watermark, 0 for a bucket never written; a partition dropped while
// planning is left out.
func TestStreamStart(t *testing.T) {
	table, err := testTable(2, []string{"p:INT"}, false)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	for id := int64(1); id <= 3; id++ {
		v := []string{string(rune('0' + id))}
		admin.partitions = append(admin.partitions, metadata.PartitionInfo{ID: id, Name: v[0], Values: v})
	}
	tb := func(p int64, b int32) metadata.TableBucket {
		return metadata.TableBucket{TableID: table.TableID, PartitionID: p, Bucket: b}
	}
	admin.start[tb(1, 0)], admin.hw[tb(1, 0)] = 4, 9
	admin.hw[tb(1, 1)] = 2
	admin.hw[tb(2, 0)] = 7
	ctx := context.Background()

	earliest, err := planner.StreamStart(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.Startup{Mode: planner.StartupEarliest})
	require.NoError(t, err)
	require.Equal(t, map[metadata.TableBucket]int64{tb(1, 0): 4, tb(1, 1): 0, tb(2, 0): 0, tb(2, 1): 0, tb(3, 0): 0, tb(3, 1): 0}, earliest)

	pcol := len(table.Schema.Columns) - 1
	for i, c := range table.Schema.Columns {
		if c.Name == "p" {
			pcol = i
		}
	}
	filter := &predicate.Leaf{Op: predicate.LtEq, Column: pcol, Name: "p", Type: metadata.IntType(), Literals: []any{int64(2)}}
	latest, err := planner.StreamStart(ctx, admin, table, planner.ScanSpec{PartitionFilter: filter, Limit: -1}, planner.Startup{Mode: planner.StartupLatest})
	require.NoError(t, err)
	require.Equal(t, map[metadata.TableBucket]int64{tb(1, 0): 9, tb(1, 1): 2, tb(2, 0): 7, tb(2, 1): 0}, latest)
	require.Equal(t, 2, admin.listOffsets, "one batched ListOffsets per plan")

	admin.dropAfterListing = []int64{2}
	latest, err = planner.StreamStart(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.Startup{Mode: planner.StartupLatest})
	require.NoError(t, err)
	require.Equal(t, map[metadata.TableBucket]int64{tb(1, 0): 9, tb(1, 1): 2, tb(3, 0): 0, tb(3, 1): 0}, latest)

	_, err = planner.StreamStart(ctx, admin, table, planner.ScanSpec{Limit: -1}, planner.Startup{Mode: planner.StartupFull})
	require.ErrorIs(t, err, metadata.ErrUnsupported)
}
