package planner_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
)

func TestParseStartup(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	s, err := planner.ParseStartup(nil, nil)
	require.NoError(t, err)
	require.Equal(t, planner.Startup{Mode: planner.StartupFull}, s)

	s, err = planner.ParseStartup(map[string]string{planner.OptScanStartupMode: " Latest "}, nil)
	require.NoError(t, err)
	require.Equal(t, "latest", s.String())

	s, err = planner.ParseStartup(map[string]string{
		planner.OptScanStartupMode:      "timestamp",
		planner.OptScanStartupTimestamp: "2026-03-04 05:06:07",
	}, tokyo)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 4, 5, 6, 7, 0, tokyo).UnixMilli(), s.Timestamp)
	require.Equal(t, "timestamp 1772568367000", s.String())

	_, err = planner.ParseStartup(map[string]string{planner.OptScanStartupMode: "timestamp", planner.OptScanStartupTimestamp: " "}, nil)
	require.ErrorIs(t, err, metadata.ErrInvalidOption)
	require.Contains(t, err.Error(), "'scan.startup.timestamp' is required int 'TIMESTAMP' startup mode but missing.")
	_, err = planner.ParseStartup(map[string]string{planner.OptScanStartupMode: "timestamp", planner.OptScanStartupTimestamp: "soon"}, nil)
	require.ErrorIs(t, err, metadata.ErrInvalidOption)
	require.Contains(t, err.Error(), "Invalid value for 'scan.startup.timestamp': 'soon'.")
}

// scan.startup.* is honoured by t$changelog only: the other planners
// refuse it rather than ignore it.
func TestStartupRefusedOutsideChangelog(t *testing.T) {
	ctx := context.Background()
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	for _, opt := range []string{planner.OptScanStartupMode, planner.OptScanStartupTimestamp} {
		spec := planner.ScanSpec{Table: table.Path, Limit: -1, Options: map[string]string{opt: "latest"}}
		_, err = planner.NewAppendPlanner(ctx, newFakeAdmin(table), table, spec)
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		require.Contains(t, err.Error(), "'"+opt+"' applies to t$changelog; a batch read of fluss.orders reads the whole table")
		spec.Options[planner.OptIncrementalStart] = "1"
		_, err = planner.NewIncrementalPlanner(ctx, newFakeAdmin(table), table, spec, planner.TimeRange{Start: 1, End: 2})
		require.ErrorIs(t, err, metadata.ErrUnsupported)
		delete(spec.Options, planner.OptIncrementalStart)
		pk := table
		pk.Schema.PrimaryKey = []string{"id"}
		_, err = planner.NewUpsertPlanner(ctx, newFakeAdmin(pk), pk, spec)
		require.ErrorIs(t, err, metadata.ErrUnsupported)
	}
}
