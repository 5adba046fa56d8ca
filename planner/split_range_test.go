package planner

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func TestSplitRange(t *testing.T) {
	for _, tc := range []struct {
		start, stop, max int64
		want             [][2]int64
	}{
		{0, 5, 2, [][2]int64{{0, 2}, {2, 4}, {4, 5}}},
		{0, 5, 0, [][2]int64{{0, 5}}},
		{0, 5, 5, [][2]int64{{0, 5}}},
		{5, 5, 2, nil},
		{6, 5, 2, nil},
		{0, 9, 4, [][2]int64{{0, 3}, {3, 6}, {6, 9}}},
		{math.MaxInt64 - 5, math.MaxInt64, 2, [][2]int64{
			{math.MaxInt64 - 5, math.MaxInt64 - 3}, {math.MaxInt64 - 3, math.MaxInt64 - 1}, {math.MaxInt64 - 1, math.MaxInt64},
		}},
	} {
		got := splitRange(tc.start, tc.stop, tc.max)
		require.Equal(t, tc.want, got, "[%d, %d) M=%d", tc.start, tc.stop, tc.max)
		// The ranges tile [start, stop) and none is longer than M.
		if len(got) > 0 {
			require.Equal(t, tc.start, got[0][0])
			require.Equal(t, tc.stop, got[len(got)-1][1])
			for i, r := range got {
				require.Less(t, r[0], r[1])
				if tc.max > 0 {
					require.LessOrEqual(t, r[1]-r[0], tc.max)
				}
				if i > 0 {
					require.Equal(t, got[i-1][1], r[0])
				}
			}
		}
	}
}

func TestEstimateRows(t *testing.T) {
	splits := []Split{
		&LogSplit{StartOffset: 5, StopOffset: 12},
		&KvLogSplit{SnapshotID: 3, LogStart: 40, LogStop: 50},
		&LakeSplit{Files: []metadata.LakeFile{{RowCount: 100}, {RowCount: 7}}},
		&LakeLogSplit{Files: []metadata.LakeFile{{RowCount: 20}}, LogStart: 8, LogStop: 10},
	}
	require.EqualValues(t, 7+50+107+22, EstimateRows(splits))
	require.Zero(t, EstimateRows(nil))
}
