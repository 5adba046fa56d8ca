package tiering

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
)

// Rounds that each add a small file per bucket compact four files of a
// size class into one: after every round the lake holds exactly the log's
// rows up to the tiered offsets, with their offsets and commit times, and
// each bucket keeps few files.
func TestLogCompaction(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptBucketNum: "2"})
	maxFiles := 0
	for r := range 20 {
		e.appendRows("t", []any{int64(2 * r), fmt.Sprintf("n%d", r), "x"}, []any{int64(2*r + 1), "m", "y"})
		e.tier("t")
		m := e.checkLogLake("t")
		for b := range int32(2) {
			maxFiles = max(maxFiles, len(filesOf(m, "", b)))
		}
		// The timestamps are the log's commit times, never the round's.
		for _, row := range e.lakeRows(e.info("t"), m.Files) {
			require.Positive(t, row.ts)
		}
	}
	require.LessOrEqual(t, maxFiles, 2*compactMinFiles, "files of a bucket")
	m := e.manifest("t")
	require.Less(t, len(m.Files), 20, "twenty rounds, fewer files")
	require.Len(t, e.lakeRows(e.info("t"), m.Files), 40)

	require.Equal(t, 0, sizeClass(1))
	require.Equal(t, 0, sizeClass(compactBase))
	require.Equal(t, 1, sizeClass(compactBase+1))
	require.Equal(t, 2, sizeClass(16*compactBase))
	require.Equal(t, 3, sizeClass(16*compactBase+1))
	require.Equal(t, -1, lake.CompareDataFiles("t/b0/9-0.parquet", "t/b0/10-0.parquet"))
	require.Equal(t, -1, lake.CompareDataFiles("t/b0/10-1.parquet", "t/b0/10-2.parquet"))
}
