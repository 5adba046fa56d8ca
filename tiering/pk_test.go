package tiering

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// model is the expected state of a primary-key table: id -> "id,v,n".
type model map[int64]string

func (m model) put(id int64, v any, n int64) {
	m[id] = fmt.Sprintf("%d,%v,%d", id, v, n)
}

// sortedState reads one bucket's lake files through the sorted reader,
// checking that keys ascend strictly, and returns its rows.
func (e *env) sortedState(info metadata.TableInfo, files []metadata.LakeFile) []lakeRow {
	e.t.Helper()
	all := make([]int, len(info.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	sr, err := e.lk.OpenSorted(bg, &info, files, lake.ReadOptions{Projection: all, WithSystemColumns: true})
	require.NoError(e.t, err)
	defer sr.Close()
	var (
		out  []lakeRow
		last []byte
	)
	n := len(info.Schema.Columns)
	for sr.Next() {
		rec, keys := sr.Batch()
		for i := range int(rec.NumRows()) {
			require.True(e.t, last == nil || bytes.Compare(last, keys[i]) < 0, "keys ascend")
			last = bytes.Clone(keys[i])
			vals := make([]string, n)
			for c, col := range info.Schema.Columns {
				vals[c] = fmt.Sprint(metadata.ValueAt(rec.Column(c), col.Type, i))
			}
			out = append(out, lakeRow{
				offset: metadata.ValueAt(rec.Column(n+1), metadata.BigIntType(), i).(int64),
				vals:   strings.Join(vals, ","),
			})
		}
	}
	require.NoError(e.t, sr.Err())
	return out
}

// lastChanges folds a bucket's changelog [0, stop): per live key ("id"
// rendered) the offset of its last change.
func (e *env) lastChanges(info metadata.TableInfo, tb metadata.TableBucket, stop int64) map[string]int64 {
	e.t.Helper()
	r, err := e.eng.ReadLog(bg, tb, 0, stop, storage.ReadOptions{})
	require.NoError(e.t, err)
	defer r.Close()
	out := map[string]int64{}
	for r.Next() {
		b := r.Batch()
		for i := range int(b.Record.NumRows()) {
			id := fmt.Sprint(metadata.ValueAt(b.Record.Column(0), info.Schema.Columns[0].Type, i))
			switch b.ChangeTypes[i] {
			case metadata.ChangeInsert, metadata.ChangeUpdateAfter:
				out[id] = b.BaseOffset + int64(i)
			default:
				delete(out, id)
			}
		}
	}
	require.NoError(e.t, r.Err())
	return out
}

// checkPKLake verifies a primary-key table's lake: per bucket a sorted,
// duplicate-free state; together the model; each row's __offset the
// offset of its key's last change (when checkOffsets).
func (e *env) checkPKLake(name string, want model, checkOffsets bool) lake.Manifest {
	e.t.Helper()
	info := e.info(name)
	m, snap := e.checkRecord(name)
	var got []string
	for _, tb := range e.buckets(name) {
		files := filesOf(m, "", tb.Bucket)
		rows := e.sortedState(info, files)
		// The files hold each key once: a plain read equals the merge.
		require.Len(e.t, e.lakeRows(info, files), len(rows), "files of %s hold each key once", tb)
		var last map[string]int64
		if checkOffsets {
			last = e.lastChanges(info, tb, snap.TieredOffsets[tb])
			require.Len(e.t, rows, len(last))
		}
		for _, r := range rows {
			got = append(got, r.vals)
			if checkOffsets {
				id := strings.SplitN(r.vals, ",", 2)[0]
				require.Equal(e.t, last[id], r.offset, "__offset of %s is its last change", r.vals)
			}
		}
	}
	var wantRows []string
	for _, r := range want {
		wantRows = append(wantRows, r)
	}
	require.ElementsMatch(e.t, wantRows, got)
	return m
}

func TestPrimaryKeyTableRounds(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("k", pkCols(), []string{"id"}, nil, map[string]string{metadata.OptBucketNum: "2"})
	want := model{}
	for i := range 20 {
		e.upsert("k", []any{int64(i), "a", int64(i)})
		want.put(int64(i), "a", int64(i))
	}
	require.Equal(t, int64(1), e.tier("k"))
	m1 := e.checkPKLake("k", want, true)

	// Updates, deletes, a delete of a missing key and re-inserts.
	e.upsert("k", []any{int64(1), "b", int64(10)}, []any{int64(2), "b", int64(20)})
	want.put(1, "b", 10)
	want.put(2, "b", 20)
	e.delete("k", []any{int64(3), nil, nil}, []any{int64(4), nil, nil}, []any{int64(99), nil, nil})
	delete(want, 3)
	delete(want, 4)
	e.upsert("k", []any{int64(4), "again", int64(40)}, []any{int64(1), "c", int64(11)})
	want.put(4, "again", 40)
	want.put(1, "c", 11)
	e.upsert("k", []any{int64(100), nil, int64(0)})
	want.put(100, nil, 0)
	require.Equal(t, int64(2), e.tier("k"))
	m2 := e.checkPKLake("k", want, true)
	for b := range int32(2) {
		before, after := paths(filesOf(m1, "", b)), paths(filesOf(m2, "", b))
		require.NotEmpty(t, after)
		for _, p := range after {
			require.NotContains(t, before, p, "a key table's bucket files are replaced, not added to")
		}
	}

	require.Equal(t, int64(2), e.tier("k"), "nothing new")

	// A tail: upsert then delete the same key within one round, and an
	// update of a key whose bucket changes nothing else.
	e.upsert("k", []any{int64(200), "x", int64(1)})
	e.delete("k", []any{int64(200), nil, nil})
	e.upsert("k", []any{int64(5), "d", int64(55)})
	want.put(5, "d", 55)
	require.Equal(t, int64(3), e.tier("k"))
	e.checkPKLake("k", want, true)

	// Deleting everything leaves buckets without files.
	for id := range want {
		e.delete("k", []any{id, nil, nil})
	}
	require.Equal(t, int64(4), e.tier("k"))
	m4 := e.checkPKLake("k", model{}, true)
	require.Empty(t, m4.Files)
}

func TestPrimaryKeyBucketStartsFromKvSnapshot(t *testing.T) {
	e := newEnv(t, "", func(o *storage.Options) { o.SegmentBytes = 1 }, nil)
	// No lake at first: TTL may remove the log before the KV snapshot.
	_, err := e.eng.CreateTable(bg, metadata.TableDescriptor{
		Path:    tpath("k"),
		Schema:  metadata.Schema{Columns: pkCols(), PrimaryKey: []string{"id"}},
		Options: map[string]string{metadata.OptBucketNum: "1", metadata.OptLogTTL: "1 s"},
	}, false)
	require.NoError(t, err)
	want := model{}
	for i := range 6 {
		e.upsert("k", []any{int64(i), "a", int64(i)})
		want.put(int64(i), "a", int64(i))
	}
	e.delete("k", []any{int64(5), nil, nil})
	delete(want, 5)
	snaps, err := e.eng.TakeKvSnapshots(bg, tpath("k"))
	require.NoError(t, err)
	snapOff := snaps[0].LogOffset
	require.Equal(t, int64(7), snapOff)
	e.upsert("k", []any{int64(0), "b", int64(100)}) // -U +U at 7, 8
	want.put(0, "b", 100)
	e.upsert("k", []any{int64(9), "c", int64(9)}) // +I at 9
	want.put(9, "c", 9)
	n, err := e.eng.DropExpired(bg, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 7, n)
	tb := e.buckets("k")[0]
	require.Equal(t, snapOff, e.offsets([]metadata.TableBucket{tb}, metadata.OffsetEarliest)[tb])

	_, err = e.eng.AlterTable(bg, tpath("k"), map[string]string{metadata.OptDatalakeEnabled: "true"})
	require.NoError(t, err)
	require.Equal(t, int64(1), e.tier("k"))
	m := e.checkPKLake("k", want, false)
	rows := e.sortedState(e.info("k"), m.Files)
	offsets := map[string]int64{}
	for _, r := range rows {
		offsets[strings.SplitN(r.vals, ",", 2)[0]] = r.offset
	}
	require.Equal(t, map[string]int64{
		"0": 8,           // changed after the snapshot: its last change
		"1": snapOff - 1, // from the snapshot: the snapshot's offset - 1
		"2": snapOff - 1,
		"3": snapOff - 1,
		"4": snapOff - 1,
		"9": 9,
	}, offsets)
	_, snap := e.checkRecord("k")
	require.Equal(t, int64(10), snap.TieredOffsets[tb])

	// The next round goes on from the lake.
	e.delete("k", []any{int64(1), nil, nil})
	delete(want, 1)
	require.Equal(t, int64(2), e.tier("k"))
	e.checkPKLake("k", want, false)
}

func TestPrimaryKeyTableWithoutSnapshotStartsFromLogStart(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("k", pkCols(), []string{"id"}, nil, map[string]string{metadata.OptBucketNum: "1"})
	want := model{}
	for i := range 5 {
		e.upsert("k", []any{int64(i), "a", int64(i)})
		want.put(int64(i), "a", int64(i))
	}
	e.upsert("k", []any{int64(2), "z", int64(2)})
	want.put(2, "z", 2)
	require.Equal(t, int64(1), e.tier("k"))
	e.checkPKLake("k", want, true)
}
