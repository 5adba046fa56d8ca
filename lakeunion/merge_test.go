package lakeunion_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
)

// modelTable has its key (k) in the middle, so key order is not the
// first column's order.
func modelTable() *metadata.TableInfo {
	return &metadata.TableInfo{
		Path:       metadata.TablePath{Database: "fluss", Table: "t"},
		TableID:    testBucket.TableID,
		NumBuckets: 1,
		Schema: metadata.Schema{
			Columns: []metadata.Column{
				{Name: "v", Type: metadata.StringType()},
				{Name: "k", Type: metadata.IntType(), NotNull: true},
				{Name: "n", Type: metadata.BigIntType()},
			},
			PrimaryKey: []string{"k"},
		},
	}
}

// readAll drains a scan of splits into formatted rows, then checks that
// every reader was closed and every buffer released.
func readAll(t *testing.T, src *fakeSource, mem *memory.CheckedAllocator, table *metadata.TableInfo,
	splits []planner.Split, opts lakeunion.Options) ([]string, error) {
	t.Helper()
	opts.Allocator = mem
	scan := lakeunion.NewSourceScan(src, table, splits, opts)
	var rows []string
	var err error
	for {
		rec, e := scan.Next(context.Background())
		if e != nil {
			if e != io.EOF {
				err = e
			}
			break
		}
		for i := range int(rec.NumRows()) {
			rows = append(rows, formatRow(rec, i))
		}
	}
	require.NoError(t, scan.Close())
	require.Zero(t, src.open, "open readers")
	mem.AssertSize(t, 0)
	return rows, err
}

// TestKvMergeModel merges random snapshots with random changelog tails,
// cut at random stop offsets, through random batch sizes and projections,
// and compares every read with a map that applies the changes one by one.
func TestKvMergeModel(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkModel(t, seed)
		})
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
}

func checkModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	table := modelTable()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := newFakeSource(table, mem)
	const keys = 40
	row := func(k int) []any {
		var n any
		if rng.IntN(5) > 0 {
			n = rng.Int64N(1000) - 500
		}
		return []any{fmt.Sprintf("v%d-%d", k, rng.IntN(100)), int64(k), n}
	}
	model := map[int][]any{}
	hasSnap := rng.IntN(4) > 0
	if hasSnap {
		var snap [][]any
		for k := range keys {
			if rng.IntN(2) == 0 {
				r := row(k)
				model[k] = r
				snap = append(snap, r)
			}
		}
		src.snaps[testBucket] = map[int64][][]any{1: snap}
	}
	// The changelog as a writer would emit it: +I for a new key, -U/+U
	// for an update, -D for a delete, full images.
	state := map[int][]any{}
	for k, r := range model {
		state[k] = r
	}
	var log []change
	for range rng.IntN(120) {
		k := rng.IntN(keys)
		old, ok := state[k]
		switch {
		case !ok:
			r := row(k)
			log = append(log, change{ct: metadata.ChangeInsert, row: r})
			state[k] = r
		case rng.IntN(3) == 0:
			log = append(log, change{ct: metadata.ChangeDelete, row: old})
			delete(state, k)
		default:
			r := row(k)
			log = append(log, change{ct: metadata.ChangeUpdateBefore, row: old}, change{ct: metadata.ChangeUpdateAfter, row: r})
			state[k] = r
		}
	}
	for i := 0; i < len(log); {
		n := 1 + rng.IntN(10)
		src.appendLog(testBucket, 0, false, log[i:min(i+n, len(log))])
		i += n
	}
	// Cut anywhere, possibly between a -U and its +U, and apply the kept
	// changes to the model: the last change wins, -U and -D remove.
	stop := int64(rng.IntN(len(log) + 1))
	for _, c := range log[:stop] {
		k := int(c.row[1].(int64))
		if c.ct == 2 || c.ct == 4 {
			delete(model, k)
		} else {
			model[k] = c.row
		}
	}
	proj := rng.Perm(3)[:rng.IntN(4)]
	if len(proj) == 0 && rng.IntN(2) == 0 {
		proj = nil // all columns
	}
	var split planner.Split = &planner.KvLogSplit{TableBucket: testBucket, SnapshotID: planner.NoKvSnapshot, LogStop: stop}
	if hasSnap {
		split.(*planner.KvLogSplit).SnapshotID = 1
	}
	src.snapBatch = 1 + rng.IntN(12)
	opts := lakeunion.Options{Projection: proj, BatchSize: 1 + rng.IntN(16)}
	// Half the time the base is the lake instead: the snapshot's rows
	// spread over one to three files (the fake merges them by key), read
	// in batches of a random size, perhaps filtered before the merge.
	useLake := rng.IntN(2) == 0
	var threshold int64
	filtered := false
	if useLake {
		ls := &planner.LakeLogSplit{TableBucket: testBucket, LogStop: stop}
		if hasSnap {
			nfiles := 1 + rng.IntN(3)
			for i := range nfiles {
				ls.Files = append(ls.Files, metadata.LakeFile{Path: fmt.Sprintf("f%d", i)})
				src.lake[fmt.Sprintf("f%d", i)] = nil
			}
			for _, r := range src.snaps[testBucket][1] {
				f := fmt.Sprintf("f%d", rng.IntN(nfiles))
				src.lake[f] = append(src.lake[f], r)
			}
		}
		split = ls
		src.lakeBatch = 1 + rng.IntN(12)
		// A filter only when the key is read, so rows stay tellable
		// apart.
		if proj == nil || slices.Contains(proj, 1) {
			if filtered = rng.IntN(2) == 0; filtered {
				threshold = rng.Int64N(1000) - 500
				opts.Filter = &predicate.Leaf{Column: 2, Name: "n", Type: metadata.BigIntType(),
					Op: predicate.GtEq, Literals: []any{threshold}}
			}
		}
	}
	got, err := readAll(t, src, mem, table, []planner.Split{split}, opts)
	require.NoError(t, err)

	var want []string
	ks := make([]int, 0, len(model))
	for k := range model {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	if proj == nil {
		proj = []int{0, 1, 2}
	}
	for _, k := range ks {
		vals := make([]string, len(proj))
		for i, c := range proj {
			vals[i] = metadata.FormatValue(table.Schema.Columns[c].Type, model[k][c])
		}
		if len(vals) == 0 {
			want = append(want, "()")
		} else {
			want = append(want, strings.Join(vals, " "))
		}
	}
	what := fmt.Sprintf("seed %d: snapshot=%t lake=%t stop=%d proj=%v batch=%d snapshot-batch=%d lake-batch=%d",
		seed, hasSnap, useLake, stop, proj, opts.BatchSize, src.snapBatch, src.lakeBatch)
	if !filtered {
		require.Equal(t, want, got, what)
		return
	}
	// Lake rows filtered before the merge: the read may leave out rows
	// the filter drops, but every row it emits is the model's, in order,
	// and every model row the filter keeps is there.
	j := 0
	for i, k := range ks {
		if j < len(got) && got[j] == want[i] {
			j++
			continue
		}
		n, ok := model[k][2].(int64)
		require.False(t, ok && n >= threshold, "%s n>=%d: row %q missing from %q", what, threshold, want[i], got)
	}
	require.Equal(t, len(got), j, "%s n>=%d: rows %q not in the model %q", what, threshold, got, want)
}

// TestFoldKeepsOneEntryPerKey: 3000 changes of 10 keys leave 10 entries.
func TestFoldKeepsOneEntryPerKey(t *testing.T) {
	table := modelTable()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := newFakeSource(table, mem)
	for round := range 100 {
		var cs []change
		for k := range 10 {
			old := []any{fmt.Sprintf("r%d", round), int64(k), int64(round)}
			cs = append(cs, change{ct: metadata.ChangeUpdateBefore, row: old}, change{ct: metadata.ChangeUpdateAfter, row: []any{fmt.Sprintf("r%d", round+1), int64(k), int64(round + 1)}})
		}
		cs = append(cs, change{ct: metadata.ChangeInsert, row: []any{"x", int64(100 + round%3), nil}})
		src.appendLog(testBucket, 0, false, cs)
	}
	split := &planner.KvLogSplit{TableBucket: testBucket, SnapshotID: planner.NoKvSnapshot, LogStop: src.logEnd(testBucket)}
	r, err := lakeunion.OpenSplitFrom(context.Background(), src, table, split, lakeunion.Options{Allocator: mem})
	require.NoError(t, err)
	n := 0
	for r.Next() {
		n += int(r.RecordBatch().NumRows())
	}
	require.NoError(t, r.Err())
	require.Equal(t, 13, n)
	require.Equal(t, 13, lakeunion.FoldedKeys(r))
	r.Release()
	require.Zero(t, src.open)
	mem.AssertSize(t, 0)
}

// TestScanDispatch reads a log split and a kv+log split in one Scan.
func TestScanDispatch(t *testing.T) {
	table := modelTable()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := newFakeSource(table, mem)
	other := metadata.TableBucket{TableID: 1, PartitionID: metadata.NonPartitioned, Bucket: 1}
	src.appendLog(testBucket, 0, false, []change{{ct: metadata.ChangeInsert, row: []any{"b", int64(2), nil}}, {ct: metadata.ChangeInsert, row: []any{"a", int64(1), nil}}})
	src.appendLog(other, 0, false, []change{{ct: metadata.ChangeInsert, row: []any{"c", int64(3), nil}}, {ct: metadata.ChangeDelete, row: []any{"c", int64(3), nil}}})
	splits := []planner.Split{
		&planner.LogSplit{TableBucket: other, StartOffset: 0, StopOffset: 2},
		&planner.KvLogSplit{TableBucket: testBucket, SnapshotID: planner.NoKvSnapshot, LogStop: 2},
	}
	// One worker: the rows come split after split, in order.
	rows, err := readAll(t, src, mem, table, splits, lakeunion.Options{Projection: []int{1, 0}, Threads: 1})
	require.NoError(t, err)
	// The log split gives the raw rows; the kv+log split the state by key.
	require.Equal(t, []string{"3 c", "3 c", "1 a", "2 b"}, rows)
}

func TestKvMergeErrors(t *testing.T) {
	ctx := context.Background()
	table := modelTable()
	split := func() *planner.KvLogSplit {
		return &planner.KvLogSplit{TableBucket: testBucket, SnapshotID: 1, LogStop: 1}
	}
	setup := func() (*fakeSource, *memory.CheckedAllocator) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		src := newFakeSource(table, mem)
		src.snaps[testBucket] = map[int64][][]any{1: {{"a", int64(1), nil}, {"b", int64(2), nil}}}
		src.appendLog(testBucket, 0, false, []change{{ct: metadata.ChangeInsert, row: []any{"c", int64(3), nil}}})
		return src, mem
	}

	t.Run("snapshot out of order", func(t *testing.T) {
		src, mem := setup()
		src.disorder = true
		_, err := readAll(t, src, mem, table, []planner.Split{split()}, lakeunion.Options{})
		require.ErrorIs(t, err, metadata.ErrCorrupt)
		require.ErrorContains(t, err, "out of order")
	})
	t.Run("bad change type", func(t *testing.T) {
		src, mem := setup()
		src.appendLog(testBucket, 0, false, []change{{ct: 9, row: []any{"d", int64(4), nil}}})
		sp := split()
		sp.LogStop = 2
		_, err := readAll(t, src, mem, table, []planner.Split{sp}, lakeunion.Options{})
		require.ErrorIs(t, err, metadata.ErrCorrupt)
		require.ErrorContains(t, err, "log offset 1 has change type 9")
	})
	t.Run("missing snapshot", func(t *testing.T) {
		src, mem := setup()
		sp := split()
		sp.SnapshotID = 7
		_, err := readAll(t, src, mem, table, []planner.Split{sp}, lakeunion.Options{})
		require.ErrorIs(t, err, metadata.ErrNotFound)
		require.ErrorContains(t, err, "kv_snapshot=7")
	})
	t.Run("tail past the log", func(t *testing.T) {
		src, mem := setup()
		sp := split()
		sp.LogStop = 5
		_, err := readAll(t, src, mem, table, []planner.Split{sp}, lakeunion.Options{})
		require.ErrorIs(t, err, metadata.ErrNotFound)
	})
	t.Run("kv+log split as changelog", func(t *testing.T) {
		src, mem := setup()
		_, err := readAll(t, src, mem, table, []planner.Split{split()}, lakeunion.Options{Changelog: true})
		require.ErrorIs(t, err, metadata.ErrUnsupported)
	})
	t.Run("kv+log split of a log table", func(t *testing.T) {
		src, mem := setup()
		logTable := modelTable()
		logTable.Schema.PrimaryKey = nil
		_, err := readAll(t, src, mem, logTable, []planner.Split{split()}, lakeunion.Options{})
		require.ErrorIs(t, err, metadata.ErrUnsupported)
	})
	t.Run("projection out of range", func(t *testing.T) {
		src, mem := setup()
		_, err := readAll(t, src, mem, table, []planner.Split{split()}, lakeunion.Options{Projection: []int{3}})
		require.ErrorIs(t, err, metadata.ErrInvalidValue)
	})
	t.Run("cancelled", func(t *testing.T) {
		src, mem := setup()
		cctx, cancel := context.WithCancel(ctx)
		r, err := lakeunion.OpenSplitFrom(cctx, src, table, split(), lakeunion.Options{Allocator: mem})
		require.NoError(t, err)
		cancel()
		require.False(t, r.Next())
		require.True(t, errors.Is(r.Err(), context.Canceled))
		r.Release()
		require.Zero(t, src.open)
		mem.AssertSize(t, 0)
	})
	t.Run("released early", func(t *testing.T) {
		src, mem := setup()
		src.snapBatch = 1
		r, err := lakeunion.OpenSplitFrom(ctx, src, table, split(), lakeunion.Options{Allocator: mem, BatchSize: 1})
		require.NoError(t, err)
		require.True(t, r.Next())
		r.Release()
		require.Zero(t, src.open)
		mem.AssertSize(t, 0)
	})
}
