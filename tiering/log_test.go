package tiering

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// checkRecord verifies that the engine's record of the table's lake
// snapshot is the lake's latest manifest.
func (e *env) checkRecord(name string) (lake.Manifest, metadata.LakeSnapshot) {
	e.t.Helper()
	m := e.manifest(name)
	snap, ok := e.snapshot(name)
	require.True(e.t, ok)
	require.Equal(e.t, m.SnapshotID, snap.SnapshotID)
	require.Equal(e.t, engineSnapshot(e.info(name).TableID, m), snap)
	return m, snap
}

// checkLogLake verifies a log table's lake against its log: every bucket's
// lake rows are exactly its log rows below the tiered offset (none
// missing, none twice), with the log's offsets and commit times. The
// buckets must still have their log from 0.
func (e *env) checkLogLake(name string) lake.Manifest {
	e.t.Helper()
	info := e.info(name)
	m, snap := e.checkRecord(name)
	rows := e.lakeRows(info, m.Files)
	got := map[metadata.TableBucket][]string{}
	parts := map[string]int64{}
	if info.IsPartitioned() {
		ps, err := e.eng.ListPartitions(bg, info.Path)
		require.NoError(e.t, err)
		for _, p := range ps {
			parts[p.Name] = p.ID
		}
	}
	for _, r := range rows {
		pid := metadata.NonPartitioned
		if r.partition != "" {
			id, ok := parts[r.partition]
			if !ok {
				continue // a lake-only partition: checked by its test
			}
			pid = id
		}
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: pid, Bucket: r.bucket}
		got[tb] = append(got[tb], fmt.Sprintf("b%d@%d %s", r.bucket, r.offset, r.vals))
	}
	for _, tb := range e.buckets(name) {
		off, ok := snap.TieredOffsets[tb]
		if !ok {
			require.Empty(e.t, got[tb], "%s has lake rows but no tiered offset", tb)
			continue
		}
		want := e.logRows(info, tb, 0, off)
		require.ElementsMatch(e.t, want, got[tb], "lake rows of %s", tb)
	}
	// __timestamp is the commit time of the row's batch.
	times := map[string]int64{}
	for _, tb := range e.buckets(name) {
		r, err := e.eng.ReadLog(bg, tb, 0, -1, storage.ReadOptions{Projection: []int{}})
		require.NoError(e.t, err)
		for r.Next() {
			b := r.Batch()
			for i := range b.Record.NumRows() {
				times[fmt.Sprintf("%d/%d/%d", tb.PartitionID, tb.Bucket, b.BaseOffset+i)] = b.CommitTimestamp
			}
		}
		require.NoError(e.t, r.Err())
		r.Close()
	}
	for _, r := range rows {
		if pid, ok := parts[r.partition]; ok || r.partition == "" {
			if r.partition == "" {
				pid = metadata.NonPartitioned
			}
			require.Equal(e.t, times[fmt.Sprintf("%d/%d/%d", pid, r.bucket, r.offset)], r.ts, "__timestamp of %s", r)
		}
	}
	return m
}

func TestLogTableRounds(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptBucketNum: "2"})
	_, ok := e.snapshot("t")
	require.False(t, ok)

	for i := range 2 {
		rows := make([][]any, 5)
		for j := range rows {
			rows[j] = []any{int64(i*5 + j), fmt.Sprintf("n%d", i*5+j), "x"}
		}
		e.appendRows("t", rows...)
	}
	require.Equal(t, int64(1), e.tier("t"))
	m1 := e.checkLogLake("t")
	hw := e.offsets(e.buckets("t"), metadata.OffsetLatest)
	_, snap := e.checkRecord("t")
	require.Equal(t, hw, snap.TieredOffsets, "everything up to the high watermark is tiered")
	require.Len(t, e.lakeRows(e.info("t"), m1.Files), 10)

	require.Equal(t, int64(1), e.tier("t"), "nothing new: no new snapshot")
	require.Equal(t, int64(1), e.manifest("t").SnapshotID)

	// A tail, then a second round: the new rows are added, nothing twice.
	e.appendRows("t", []any{int64(10), "a", "y"}, []any{int64(11), nil, "y"}, []any{int64(12), "c", "y"})
	require.Equal(t, int64(2), e.tier("t"))
	m2 := e.checkLogLake("t")
	require.Subset(t, paths(m2.Files), paths(m1.Files), "a log table's earlier files stay")
	require.Greater(t, len(m2.Files), len(m1.Files))
	require.Len(t, e.lakeRows(e.info("t"), m2.Files), 13)

	// A tail that is not tiered: the lake and the log after the tiered
	// offsets together hold every row once.
	e.appendRows("t", []any{int64(13), "d", "z"})
	_, snap = e.checkRecord("t")
	union := strs(e.lakeRows(e.info("t"), m2.Files))
	var all []string
	for _, tb := range e.buckets("t") {
		union = append(union, e.logRows(e.info("t"), tb, snap.TieredOffsets[tb], -1)...)
		all = append(all, e.logRows(e.info("t"), tb, 0, -1)...)
	}
	require.ElementsMatch(t, all, union)
	require.Len(t, all, 14)

	require.Equal(t, int64(3), e.tier("t"))
	e.checkLogLake("t")
}

func TestTierRefusesTablesWithoutLake(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	_, err := e.eng.CreateTable(bg, metadata.TableDescriptor{Path: tpath("plain"), Schema: metadata.Schema{Columns: logCols()}}, false)
	require.NoError(t, err)
	_, err = e.svc.Tier(bg, tpath("plain"))
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	_, err = e.svc.Tier(bg, tpath("missing"))
	require.ErrorIs(t, err, metadata.ErrNotFound)
}

func TestBucketsWithoutData(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptBucketNum: "3", metadata.OptBucketKey: "id"})
	// Find ids that land in one bucket only.
	e.appendRows("t", []any{int64(1), "a", "x"})
	var used metadata.TableBucket
	for tb, hw := range e.offsets(e.buckets("t"), metadata.OffsetLatest) {
		if hw > 0 {
			used = tb
		}
	}
	e.appendRows("t", []any{int64(1), "b", "x"})
	require.Equal(t, int64(1), e.tier("t"))
	m, snap := e.checkRecord("t")
	e.checkLogLake("t")
	require.Len(t, snap.TieredOffsets, 3, "every bucket gets a tiered offset, also those without rows")
	for _, tb := range e.buckets("t") {
		if tb == used {
			require.Equal(t, int64(2), snap.TieredOffsets[tb])
			require.NotEmpty(t, filesOf(m, "", tb.Bucket))
		} else {
			require.Equal(t, int64(0), snap.TieredOffsets[tb])
			require.Empty(t, filesOf(m, "", tb.Bucket), "no rows, no file")
		}
	}
	require.Equal(t, int64(1), e.tier("t"), "still nothing new")
}
