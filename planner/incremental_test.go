package planner_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
)

func TestIncrementalRange(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	start, end := planner.OptIncrementalStart, planner.OptIncrementalEnd
	for _, tc := range []struct {
		name string
		opts map[string]string
		loc  *time.Location
		want planner.TimeRange
		ok   bool
		err  string
	}{
		{name: "none", opts: map[string]string{planner.OptReadOptimized: "true"}},
		{name: "start only", opts: map[string]string{start: "1000"}, ok: true,
			want: planner.TimeRange{Start: 1000, End: math.MaxInt64}},
		{name: "window", opts: map[string]string{start: " 1000 ", end: "2000"}, ok: true,
			want: planner.TimeRange{Start: 1000, End: 2000}},
		{name: "blank end is no end", opts: map[string]string{start: "1000", end: "  "}, ok: true,
			want: planner.TimeRange{Start: 1000, End: math.MaxInt64}},
		{name: "datetime in UTC", opts: map[string]string{start: "2026-01-02 03:04:05"}, ok: true,
			want: planner.TimeRange{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli(), End: math.MaxInt64}},
		{name: "datetime in the session zone", loc: berlin, ok: true,
			opts: map[string]string{start: "2026-07-01 12:00:00", end: "2026-07-01 13:00:00"},
			want: planner.TimeRange{Start: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC).UnixMilli(),
				End: time.Date(2026, 7, 1, 11, 0, 0, 0, time.UTC).UnixMilli()}},
		{name: "blank start", opts: map[string]string{start: " ", end: "2000"},
			err: "invalid option: 'scan.incremental.start.timestamp' must not be blank. Provide epoch milliseconds or a 'yyyy-MM-dd HH:mm:ss' timestamp, or omit the option for a full-table batch read."},
		{name: "end without start", opts: map[string]string{end: "2000"},
			err: "invalid option: 'scan.incremental.end.timestamp' is set but 'scan.incremental.start.timestamp' is missing. An end timestamp alone cannot truncate a batch read; set a start timestamp for an incremental read, or remove the end option."},
		{name: "blank end without start", opts: map[string]string{end: ""},
			err: "invalid option: 'scan.incremental.end.timestamp' is set but 'scan.incremental.start.timestamp' is missing."},
		{name: "start after end", opts: map[string]string{start: "2026-01-02 00:00:00", end: "1000"},
			err: "invalid option: Invalid incremental time range: the start timestamp '2026-01-02 00:00:00' must be strictly before the end timestamp '1000'. The window is left-closed right-open '[start, end)'."},
		{name: "start equals end", opts: map[string]string{start: "1000", end: "1000"},
			err: "Invalid incremental time range: the start timestamp '1000' must be strictly before the end timestamp '1000'."},
		{name: "bad start", opts: map[string]string{start: "yesterday"},
			err: "invalid option: Invalid value for 'scan.incremental.start.timestamp': 'yesterday'. It should be epoch milliseconds or follow the format 'yyyy-MM-dd HH:mm:ss', e.g. '2023-12-09 23:09:12' or '1678883047356'."},
		{name: "bad end", opts: map[string]string{start: "1", end: "2026-01-02T00:00:00"},
			err: "Invalid value for 'scan.incremental.end.timestamp': '2026-01-02T00:00:00'."},
		{name: "negative millis", opts: map[string]string{start: "-5"}, err: "Invalid value for 'scan.incremental.start.timestamp': '-5'."},
		{name: "millis overflow", opts: map[string]string{start: "99999999999999999999"}, err: "Invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := planner.IncrementalRange(tc.opts, tc.loc)
			if tc.err != "" {
				require.ErrorIs(t, err, metadata.ErrInvalidOption)
				require.Contains(t, err.Error(), tc.err)
				require.False(t, ok)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestTimeRange(t *testing.T) {
	r := planner.TimeRange{Start: 1000, End: math.MaxInt64}
	require.False(t, r.Bounded())
	require.Equal(t, "[1000, latest)", r.String())
	r.End = 2000
	require.True(t, r.Bounded())
	require.Equal(t, "[1000, 2000)", r.String())

	now := time.UnixMilli(10_000)
	require.True(t, r.PredatesRetention(now, 5*time.Second), "start 1s is older than now-5s")
	require.False(t, r.PredatesRetention(now, 9*time.Second))
	require.False(t, r.PredatesRetention(now, 0), "a ttl of 0 keeps the log forever")
}

// The planners of full-table reads refuse the options of an incremental
// read rather than ignore its window.
func TestFullReadPlannersRefuseIncrementalOptions(t *testing.T) {
	ctx := context.Background()
	table, err := testTable(1, nil, false)
	require.NoError(t, err)
	admin := newFakeAdmin(table)
	spec := planner.ScanSpec{Table: table.Path, Limit: -1, Options: map[string]string{planner.OptIncrementalStart: "1"}}
	_, err = planner.NewAppendPlanner(ctx, admin, table, spec)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = planner.NewChangelogPlanner(ctx, admin, table, spec)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	table.Schema.PrimaryKey = []string{"id"}
	_, err = planner.NewUpsertPlanner(ctx, newFakeAdmin(table), table, spec)
	require.ErrorIs(t, err, metadata.ErrUnsupported)

	_, err = planner.NewIncrementalPlanner(ctx, admin, table, spec, planner.TimeRange{Start: 5, End: 5})
	require.ErrorIs(t, err, metadata.ErrInvalidOption, "an empty window")
}
