package planner_test

import (
	"context"
	"testing"
	"time"

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
		bounded   planner.BoundedMode // "": unbounded
		stopAt    int64
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
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "UNBOUNDED"}, streaming: true, start: planner.Startup{Mode: planner.StartupFull}},
		{opts: map[string]string{"scan.mode": "streaming", "scan.startup.mode": "earliest", "scan.bounded.mode": "latest-offset"}, streaming: true,
			start: planner.Startup{Mode: planner.StartupEarliest}, bounded: planner.BoundedLatestOffset},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "timestamp", "scan.bounded.timestamp": "1700000000000"}, streaming: true,
			start: planner.Startup{Mode: planner.StartupFull}, bounded: planner.BoundedTimestamp, stopAt: 1700000000000},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "timestamp", "scan.bounded.timestamp": "2023-11-14 22:13:20"}, streaming: true,
			start: planner.Startup{Mode: planner.StartupFull}, bounded: planner.BoundedTimestamp, stopAt: 1700000000000},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "timestamp"}, err: "'scan.bounded.timestamp' is required in 'timestamp' bounded mode but missing."},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "timestamp", "scan.bounded.timestamp": " "}, err: "'scan.bounded.timestamp' is required in 'timestamp' bounded mode but missing."},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "timestamp", "scan.bounded.timestamp": "yesterday"}, err: "Invalid value for 'scan.bounded.timestamp': 'yesterday'"},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.timestamp": "1"}, err: "'scan.bounded.timestamp' is set but 'scan.bounded.mode' is 'unbounded'"},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "latest-offset", "scan.bounded.timestamp": "1"}, err: "'scan.bounded.timestamp' is set but 'scan.bounded.mode' is 'latest-offset'"},
		{opts: map[string]string{"scan.mode": "streaming", "scan.bounded.mode": "earliest"}, err: "'scan.bounded.mode' = 'earliest': want 'unbounded', 'latest-offset' or 'timestamp'"},
	} {
		streaming, start, bounded, err := planner.StreamOptions(tc.opts, nil)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%v", tc.opts)
			require.ErrorIs(t, err, errKind(tc.err))
			continue
		}
		require.NoError(t, err, "%v", tc.opts)
		require.Equal(t, tc.streaming, streaming, "%v", tc.opts)
		require.Equal(t, tc.start, start, "%v", tc.opts)
		if !tc.streaming {
			require.Equal(t, planner.Bounded{}, bounded, "%v", tc.opts)
			continue
		}
		want := planner.Bounded{Mode: tc.bounded, Timestamp: tc.stopAt}
		if tc.bounded == "" {
			want.Mode = planner.BoundedUnbounded
		}
		require.Equal(t, want, bounded, "%v", tc.opts)
		require.Equal(t, tc.bounded != "", bounded.IsBounded(), "%v", tc.opts)
	}
	// A batch read always stops: the bounded options are refused there,
	// not ignored.
	for _, k := range []string{"scan.bounded.mode", "scan.bounded.timestamp"} {
		err := planner.CheckOptions(map[string]string{k: "latest-offset"})
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		require.ErrorContains(t, err, "'"+k+"' applies to a streaming read ('scan.mode' = 'streaming'); a batch read always stops")
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

// StreamStop plans one stop per bucket: the high watermark (0 for a
// bucket never written) or the first batch committed at or after the
// bounded timestamp, the high watermark when none is; unbounded has no
// stops, and a bounded timestamp in the future is refused.
func TestStreamStop(t *testing.T) {
	table, err := testTable(2, nil, false)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	tb := func(b int32) metadata.TableBucket {
		return metadata.TableBucket{TableID: table.TableID, PartitionID: metadata.NonPartitioned, Bucket: b}
	}
	admin.start[tb(0)], admin.hw[tb(0)] = 2, 9
	admin.batches[tb(0)] = []fakeBatch{{0, 10}, {2, 20}, {5, 30}, {7, 40}}
	ctx := context.Background()
	spec := planner.ScanSpec{Limit: -1}

	stops, err := planner.StreamStop(ctx, admin, table, spec, planner.Bounded{})
	require.NoError(t, err)
	require.Nil(t, stops)
	stops, err = planner.StreamStop(ctx, admin, table, spec, planner.Bounded{Mode: planner.BoundedLatestOffset})
	require.NoError(t, err)
	require.Equal(t, map[metadata.TableBucket]int64{tb(0): 9, tb(1): 0}, stops)
	for ts, want := range map[int64]int64{1: 2, 20: 2, 21: 5, 40: 7, 41: 9} {
		stops, err = planner.StreamStop(ctx, admin, table, spec, planner.Bounded{Mode: planner.BoundedTimestamp, Timestamp: ts})
		require.NoError(t, err)
		require.Equal(t, map[metadata.TableBucket]int64{tb(0): want, tb(1): 0}, stops, "ts %d", ts)
	}
	_, err = planner.StreamStop(ctx, admin, table, spec, planner.Bounded{Mode: planner.BoundedTimestamp, Timestamp: time.Now().Add(time.Hour).UnixMilli()})
	require.ErrorIs(t, err, metadata.ErrInvalidOption)
	require.ErrorContains(t, err, "'scan.bounded.timestamp'")
	require.ErrorContains(t, err, "is in the future")
}

// CheckBounded: Fluss's rules on what may be bounded.
func TestCheckBounded(t *testing.T) {
	logTable, err := testTable(1, nil, false)
	require.NoError(t, err)
	lakeTable, err := testTable(1, nil, true)
	require.NoError(t, err)
	keyTable := logTable
	keyTable.Schema.PrimaryKey = []string{keyTable.Schema.Columns[0].Name}
	require.True(t, keyTable.HasPrimaryKey())
	latest := planner.Bounded{Mode: planner.BoundedLatestOffset}
	for _, tc := range []struct {
		table   metadata.TableInfo
		virtual string
		start   planner.StartupMode
		bounded planner.Bounded
		err     string
	}{
		{table: logTable, start: planner.StartupFull, bounded: latest},
		{table: logTable, start: planner.StartupLatest, bounded: latest},
		{table: keyTable, start: planner.StartupEarliest, bounded: latest},
		{table: keyTable, start: planner.StartupTimestamp, bounded: latest},
		{table: keyTable, start: planner.StartupOffsets, bounded: latest},
		{table: keyTable, virtual: "changelog", start: planner.StartupFull, bounded: latest},
		{table: keyTable, virtual: "binlog", start: planner.StartupFull, bounded: latest},
		{table: keyTable, start: planner.StartupFull},
		{table: keyTable, start: planner.StartupFull, bounded: planner.Bounded{Mode: planner.BoundedUnbounded}},
		{table: keyTable, start: planner.StartupFull, bounded: latest,
			err: "'scan.bounded.mode' = 'latest-offset' on primary-key table " + keyTable.Path.String() + " needs startup mode 'earliest', 'latest' or 'timestamp'"},
		{table: keyTable, start: "", bounded: planner.Bounded{Mode: planner.BoundedTimestamp, Timestamp: 1}, err: "'scan.bounded.mode' = 'timestamp' on primary-key table"},
		{table: lakeTable, start: planner.StartupFull, bounded: latest, err: "its 'full' startup is a lake union read, which is never bounded"},
		{table: lakeTable, start: planner.StartupEarliest, bounded: latest},
	} {
		err := planner.CheckBounded(&tc.table, tc.virtual, tc.start, tc.bounded)
		if tc.err == "" {
			require.NoError(t, err, "%+v", tc)
			continue
		}
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		require.ErrorContains(t, err, tc.err)
	}
}
