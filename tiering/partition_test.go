package tiering

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

func partitionID(t *testing.T, e *env, table, name string) (int64, bool) {
	t.Helper()
	ps, err := e.eng.ListPartitions(bg, tpath(table))
	require.NoError(t, err)
	for _, p := range ps {
		if p.Name == name {
			return p.ID, true
		}
	}
	return 0, false
}

func rowsOfPartition(rows []lakeRow, name string) []string {
	var out []string
	for _, r := range rows {
		if r.partition == name {
			out = append(out, fmt.Sprintf("b%d@%d %s", r.bucket, r.offset, r.vals))
		}
	}
	return out
}

func TestPartitionsCreatedAndDropped(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("t", logCols(), nil, []string{"dt"}, map[string]string{metadata.OptBucketNum: "2"})
	e.appendRows("t", []any{int64(1), "a1", "a"}, []any{int64(2), "a2", "a"}, []any{int64(3), "b1", "b"}, []any{int64(4), "b2", "b"}, []any{int64(5), "b3", "b"})
	require.Equal(t, int64(1), e.tier("t"))
	m1 := e.checkLogLake("t")
	require.ElementsMatch(t, []string{"a", "b"}, m1.PartitionNames())
	info := e.info("t")
	oldB, _ := partitionID(t, e, "t", "b")
	var bRows []string
	for _, tb := range e.buckets("t") {
		if tb.PartitionID == oldB {
			bRows = append(bRows, e.logRows(info, tb, 0, -1)...)
		}
	}
	require.Len(t, bRows, 3)

	// A partition created after the round, one dropped after it.
	e.appendRows("t", []any{int64(6), "c1", "c"}, []any{int64(7), "a3", "a"})
	require.NoError(t, e.eng.DropPartition(bg, tpath("t"), map[string]string{"dt": "b"}, false))
	_, snap := e.checkRecord("t")
	require.Equal(t, "b", snap.PartitionNames[oldB], "the engine keeps the dropped partition's entry")

	require.Equal(t, int64(2), e.tier("t"))
	m2 := e.checkLogLake("t")
	require.ElementsMatch(t, []string{"a", "b", "c"}, m2.PartitionNames())
	for b := range int32(2) {
		require.Equal(t, paths(filesOf(m1, "b", b)), paths(filesOf(m2, "b", b)), "a lake-only partition keeps its files")
	}
	require.ElementsMatch(t, bRows, rowsOfPartition(e.lakeRows(info, m2.Files), "b"))
	_, snap = e.checkRecord("t")
	for b := range int32(2) {
		_, ok := snap.TieredOffsets[metadata.TableBucket{TableID: info.TableID, PartitionID: oldB, Bucket: b}]
		require.True(t, ok, "the lake-only partition keeps its tiered offsets")
	}
	require.Equal(t, "b", snap.PartitionNames[oldB])

	// The name comes back as a new partition: the lake keeps the old
	// partition's rows under the name and adds the new partition's, tiered
	// from its log start.
	e.appendRows("t", []any{int64(8), "new-b", "b"})
	newB, ok := partitionID(t, e, "t", "b")
	require.True(t, ok)
	require.NotEqual(t, oldB, newB)
	require.Equal(t, int64(3), e.tier("t"))
	m3, snap := e.checkRecord("t")
	var oldFiles, newFiles []metadata.LakeFile
	for b := range int32(2) {
		prev := paths(filesOf(m2, "b", b))
		for _, f := range filesOf(m3, "b", b) {
			if slices.Contains(prev, f.Path) {
				oldFiles = append(oldFiles, f)
			} else {
				newFiles = append(newFiles, f)
			}
		}
		require.Subset(t, paths(filesOf(m3, "b", b)), prev, "the old partition's files stay")
	}
	require.ElementsMatch(t, bRows, rowsOfPartition(e.lakeRows(info, oldFiles), "b"))
	var newRows []string
	for _, r := range e.lakeRows(info, newFiles) {
		newRows = append(newRows, fmt.Sprintf("@%d %s", r.offset, r.vals))
	}
	require.Equal(t, []string{"@0 8,new-b,b"}, newRows, "the new partition is tiered from its log start")
	var tieredNew int64
	for tb, off := range snap.TieredOffsets {
		require.NotEqual(t, oldB, tb.PartitionID, "the old partition's offsets are replaced by the new one's")
		if tb.PartitionID == newB {
			tieredNew += off
		}
	}
	require.Equal(t, int64(1), tieredNew, "the new partition's one row is tiered")
}

func TestPartitionedPrimaryKeyTable(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	cols := append(pkCols(), metadata.Column{Name: "dt", Type: metadata.StringType(), NotNull: true})
	e.create("k", cols, []string{"id", "dt"}, []string{"dt"}, map[string]string{metadata.OptBucketNum: "2"})
	e.upsert("k", []any{int64(1), "a", int64(1), "x"}, []any{int64(2), "a", int64(2), "x"})
	require.Equal(t, int64(1), e.tier("k"))

	// A new partition with a KV snapshot before its first round, and a
	// change in the old one.
	e.upsert("k", []any{int64(1), "y", int64(1), "y"}, []any{int64(3), "y", int64(3), "y"})
	_, err := e.eng.TakeKvSnapshots(bg, tpath("k"))
	require.NoError(t, err)
	e.upsert("k", []any{int64(3), "y2", int64(33), "y"})
	e.delete("k", []any{int64(2), nil, nil, "x"})
	require.Equal(t, int64(2), e.tier("k"))
	info := e.info("k")
	m, _ := e.checkRecord("k")
	var got []string
	for _, name := range []string{"x", "y"} {
		for b := range int32(2) {
			for _, r := range e.sortedState(info, filesOf(m, name, b)) {
				got = append(got, r.vals)
			}
		}
	}
	require.ElementsMatch(t, []string{"1,a,1,x", "1,y,1,y", "3,y2,33,y"}, got)
}
