package lakeunion_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/storage"
)

// poisonAllocator overwrites every buffer it frees, so a batch read after
// its last Release shows garbage instead of its old values.
type poisonAllocator struct{ memory.Allocator }

func (p poisonAllocator) Free(b []byte) {
	for i := range b {
		b[i] = 0xAA
	}
	p.Allocator.Free(b)
}

// hookSource is a fakeSource whose log readers run next before each batch
// and count what they read.
type hookSource struct {
	*fakeSource
	// next, when set, runs before the n-th batch (from 0) of a log read
	// of bucket; ctx is the read's. It may block, panic, or fail the read
	// with an error.
	next func(ctx context.Context, bucket int32, n int) error
}

func (h *hookSource) ReadLog(ctx context.Context, tb metadata.TableBucket, start, stop int64, opts storage.ReadOptions) (lakeunion.LogBatchReader, error) {
	r, err := h.fakeSource.ReadLog(ctx, tb, start, stop, opts)
	if err != nil {
		return nil, err
	}
	return &hookLogReader{LogBatchReader: r, ctx: ctx, bucket: tb.Bucket, h: h}, nil
}

type hookLogReader struct {
	lakeunion.LogBatchReader
	ctx    context.Context
	bucket int32
	h      *hookSource
	n      int
	err    error
	stats  lakeunion.ReadStats
}

func (r *hookLogReader) Next() bool {
	if r.err != nil {
		return false
	}
	if r.h.next != nil {
		if r.err = r.h.next(r.ctx, r.bucket, r.n); r.err != nil {
			return false
		}
	}
	r.n++
	if !r.LogBatchReader.Next() {
		return false
	}
	r.stats.Batches++
	r.stats.BatchesSkipped++ // any count: the test checks it is summed
	r.stats.Rows += r.Batch().Record.NumRows()
	return true
}

func (r *hookLogReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.LogBatchReader.Err()
}

func (r *hookLogReader) Stats() lakeunion.ReadStats { return r.stats }

// idTable is a log table of one BIGINT column.
func idTable(buckets int) *metadata.TableInfo {
	return &metadata.TableInfo{
		Path:       metadata.TablePath{Database: "fluss", Table: "ids"},
		TableID:    testBucket.TableID,
		NumBuckets: buckets,
		Schema:     metadata.Schema{Columns: []metadata.Column{{Name: "id", Type: metadata.BigIntType()}}},
	}
}

// parallelEnv is a log table of splits buckets, each of batches batches
// of per rows; row i of bucket b is b*100000+i.
type parallelEnv struct {
	src    *hookSource
	mem    *memory.CheckedAllocator
	table  *metadata.TableInfo
	splits []planner.Split
	rows   int
}

func newParallelEnv(t *testing.T, splits, batches, per int) *parallelEnv {
	t.Helper()
	checkNoLeak(t)
	table := idTable(splits)
	mem := memory.NewCheckedAllocator(poisonAllocator{memory.NewGoAllocator()})
	env := &parallelEnv{src: &hookSource{fakeSource: newFakeSource(table, mem)}, mem: mem, table: table}
	for b := range int32(splits) {
		tb := testBucket
		tb.Bucket = b
		for k := range batches {
			var changes []change
			for i := range per {
				changes = append(changes, change{row: []any{int64(b)*100000 + int64(k*per+i)}})
			}
			env.src.appendLog(tb, 0, true, changes)
		}
		env.splits = append(env.splits, &planner.LogSplit{TableBucket: tb, StopOffset: int64(batches * per)})
	}
	env.rows = splits * batches * per
	t.Cleanup(func() {
		require.Zero(t, env.src.openReaders(), "open readers")
		mem.AssertSize(t, 0)
	})
	return env
}

func (e *parallelEnv) scan(opts lakeunion.Options) *lakeunion.Scan {
	opts.Allocator = e.mem
	return lakeunion.NewSourceScan(e.src, e.table, e.splits, opts)
}

// ids returns the id column of a batch.
func ids(rec arrow.RecordBatch) []int64 {
	return slices.Clone(rec.Column(0).(*array.Int64).Int64Values())
}

// checkNoLeak fails the test if goroutines it started are still running
// when it ends (after its deferred calls and later cleanups), retrying for
// a while as exiting goroutines take a moment to be gone.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines before the test, %d after:\n%s", before, n, buf)
		}
	})
}

// drain reads a scan to its end, checking each batch again after a pause
// (the workers meanwhile read on and release their own references), and
// returns the ids in the order read with the error that ended it.
func drain(t *testing.T, scan *lakeunion.Scan) ([]int64, error) {
	t.Helper()
	var out []int64
	for {
		rec, err := scan.Next(context.Background())
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		first := ids(rec)
		time.Sleep(200 * time.Microsecond)
		require.Equal(t, first, ids(rec), "a batch changed before the next Next")
		out = append(out, first...)
	}
}

// TestParallelScanReadsEveryRowOnce: several workers read every row
// exactly once, each split's rows in their order, and every batch stays
// valid until the next Next.
func TestParallelScanReadsEveryRowOnce(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 4, 16} {
		t.Run(strconv.Itoa(threads), func(t *testing.T) {
			env := newParallelEnv(t, 12, 5, 7)
			scan := env.scan(lakeunion.Options{Threads: threads})
			want := min(max(threads, 1), 12)
			if threads == 0 {
				want = min(runtime.GOMAXPROCS(0), 12)
			}
			require.Equal(t, want, scan.Workers())
			got, err := drain(t, scan)
			require.NoError(t, err)
			require.NoError(t, scan.Close())
			require.Len(t, got, env.rows)
			// Within a split the order is kept.
			last := map[int64]int64{}
			for _, id := range got {
				b := id / 100000
				if prev, ok := last[b]; ok {
					require.Greater(t, id, prev, "split %d out of order", b)
				}
				last[b] = id
			}
			slices.Sort(got)
			require.Len(t, slices.Compact(got), env.rows, "a row read twice")
			if threads == 1 {
				// One worker reads the splits in the order given.
				for i := 1; i < len(got); i++ {
					require.Less(t, got[i-1], got[i])
				}
			}
			for i, st := range scan.Stats() {
				require.True(t, st.Opened)
				require.Equal(t, "log", st.Kind)
				require.EqualValues(t, i, st.Bucket.Bucket)
				require.EqualValues(t, 35, st.Rows)
				require.EqualValues(t, 35, st.RowsRead)
				require.EqualValues(t, 5, st.Batches)
				require.EqualValues(t, 5, st.BatchesSkipped)
			}
		})
	}
}

// TestParallelScanBatchOutlivesWorkers: a batch Next returned stays valid
// while every worker reads on and blocks, until the next Next.
func TestParallelScanBatchOutlivesWorkers(t *testing.T) {
	env := newParallelEnv(t, 4, 20, 3)
	scan := env.scan(lakeunion.Options{Threads: 4})
	rec, err := scan.Next(context.Background())
	require.NoError(t, err)
	first := ids(rec)
	// Give the workers time to fill the channel and read their readers'
	// next batches, which releases the readers' own references.
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, first, ids(rec))
	require.NoError(t, scan.Close())
}

// TestParallelScanCloseEarly: closing a scan whose workers are blocked —
// sending to a full channel, or inside a reader waiting on its context —
// returns promptly, leaves no goroutine, reader or buffer behind.
func TestParallelScanCloseEarly(t *testing.T) {
	t.Run("blocked sending", func(t *testing.T) {
		env := newParallelEnv(t, 8, 50, 4)
		scan := env.scan(lakeunion.Options{Threads: 4})
		_, err := scan.Next(context.Background())
		require.NoError(t, err)
		time.Sleep(10 * time.Millisecond)
		require.NoError(t, scan.Close())
		require.NoError(t, scan.Close(), "Close is idempotent")
		_, err = scan.Next(context.Background())
		require.ErrorIs(t, err, io.EOF)
	})
	t.Run("blocked reading", func(t *testing.T) {
		env := newParallelEnv(t, 8, 3, 4)
		env.src.next = func(ctx context.Context, _ int32, n int) error {
			if n > 0 {
				<-ctx.Done() // a read that waits until it is cancelled
				return ctx.Err()
			}
			return nil
		}
		scan := env.scan(lakeunion.Options{Threads: 4})
		_, err := scan.Next(context.Background())
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, scan.Close())
		require.Less(t, time.Since(start), time.Second)
		opened := 0
		for _, st := range scan.Stats() {
			if st.Opened {
				opened++
			}
		}
		require.LessOrEqual(t, opened, 4, "each worker opens one split at a time")
	})
	t.Run("never read", func(t *testing.T) {
		env := newParallelEnv(t, 8, 3, 4)
		scan := env.scan(lakeunion.Options{Threads: 4})
		require.NoError(t, scan.Close())
		require.Zero(t, len(env.src.logReads), "no split opened before the first Next")
	})
}

var errBroken = errors.New("broken read")

// TestParallelScanErrorStopsAll: the first error a worker meets is what
// Next returns, and it stops the other workers, which are blocked in
// their reads.
func TestParallelScanErrorStopsAll(t *testing.T) {
	for _, threads := range []int{1, 4} {
		t.Run(strconv.Itoa(threads), func(t *testing.T) {
			env := newParallelEnv(t, 8, 3, 4)
			env.src.next = func(ctx context.Context, bucket int32, n int) error {
				switch {
				case bucket == 0 && n == 1:
					return fmt.Errorf("bucket %d: %w", bucket, errBroken)
				case bucket != 0 && n == 1:
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			}
			// Split 0 first, so that a single worker meets the error
			// before it blocks.
			scan := env.scan(lakeunion.Options{Threads: threads})
			done := make(chan error, 1)
			go func() {
				_, err := drain(t, scan)
				done <- err
			}()
			select {
			case err := <-done:
				require.ErrorIs(t, err, errBroken)
				require.Contains(t, err.Error(), "bucket 0")
			case <-time.After(5 * time.Second):
				t.Fatal("the error did not stop the scan")
			}
			_, err := scan.Next(context.Background())
			require.ErrorIs(t, err, errBroken, "the error is sticky")
			require.NoError(t, scan.Close())
		})
	}
}

// TestParallelScanPanicIsError: a panic in a reader becomes a
// *PanicError of the scan, in either mode, and the scan cleans up.
func TestParallelScanPanicIsError(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(strconv.Itoa(threads), func(t *testing.T) {
			env := newParallelEnv(t, 6, 3, 4)
			env.src.next = func(_ context.Context, bucket int32, n int) error {
				if bucket == 2 && n == 2 {
					panic("reader bug")
				}
				return nil
			}
			scan := env.scan(lakeunion.Options{Threads: threads})
			_, err := drain(t, scan)
			var pe *lakeunion.PanicError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, "reader bug", pe.Value)
			require.Equal(t, env.splits[2], pe.Split)
			require.NotEmpty(t, pe.Stack)
			require.Contains(t, err.Error(), "bucket=2")
			require.NoError(t, scan.Close())
		})
	}
}

// TestScanLimit: a scan with a limit yields exactly that many rows and
// opens no split once they are produced.
func TestScanLimit(t *testing.T) {
	// 10 splits of 3 batches of 4 rows.
	for _, tc := range []struct {
		threads    int
		limit      int64
		wantRows   int
		maxOpened  int
		wantOpened int // exact, for one worker; 0: not checked
	}{
		{threads: 1, limit: 5, wantRows: 5, maxOpened: 1, wantOpened: 1},
		{threads: 1, limit: 12, wantRows: 12, maxOpened: 1, wantOpened: 1},
		{threads: 1, limit: 13, wantRows: 13, maxOpened: 2, wantOpened: 2},
		{threads: 1, limit: -1, wantRows: 120, maxOpened: 10, wantOpened: 10},
		{threads: 1, limit: 0, wantRows: 120, maxOpened: 10, wantOpened: 10},
		{threads: 1, limit: 500, wantRows: 120, maxOpened: 10, wantOpened: 10},
		// Each of the two workers opens one split, and the first
		// batches of both reach the limit.
		{threads: 2, limit: 5, wantRows: 5, maxOpened: 2},
		{threads: 4, limit: 30, wantRows: 30, maxOpened: 4 + 3},
	} {
		t.Run(fmt.Sprintf("threads=%d/limit=%d", tc.threads, tc.limit), func(t *testing.T) {
			env := newParallelEnv(t, 10, 3, 4)
			scan := env.scan(lakeunion.Options{Threads: tc.threads, Limit: tc.limit})
			got, err := drain(t, scan)
			require.NoError(t, err)
			require.Len(t, got, tc.wantRows)
			slices.Sort(got)
			require.Len(t, slices.Compact(got), tc.wantRows)
			_, err = scan.Next(context.Background())
			require.ErrorIs(t, err, io.EOF)
			require.NoError(t, scan.Close())
			opened := 0
			var rows int64
			for _, st := range scan.Stats() {
				if st.Opened {
					opened++
				}
				rows += st.Rows
			}
			require.LessOrEqual(t, opened, tc.maxOpened)
			require.Len(t, env.src.logReads, opened)
			if tc.wantOpened > 0 {
				require.Equal(t, tc.wantOpened, opened)
				// One worker reads whole batches of 4 until the limit.
				require.EqualValues(t, (tc.wantRows+3)/4*4, rows)
			}
		})
	}
}

// TestParallelScanContext: a cancelled or timed-out context ends a Next
// that waits for a batch at once with ctx.Err(), while every reader is
// blocked. The workers run under the first Next's context and stop with
// it; a later Next's own context (laterCtx: the first Next ran under
// Background) wakes that Next even though the workers do not see it.
func TestParallelScanContext(t *testing.T) {
	for _, timeout := range []bool{false, true} {
		for _, laterCtx := range []bool{false, true} {
			t.Run(fmt.Sprintf("timeout=%v/later=%v", timeout, laterCtx), func(t *testing.T) {
				env := newParallelEnv(t, 6, 3, 4)
				env.src.next = func(ctx context.Context, _ int32, n int) error {
					if n > 0 {
						<-ctx.Done()
						return ctx.Err()
					}
					return nil
				}
				scan := env.scan(lakeunion.Options{Threads: 3})
				if laterCtx {
					_, err := scan.Next(context.Background())
					require.NoError(t, err)
				}
				var (
					ctx    context.Context
					cancel context.CancelFunc
				)
				if timeout {
					ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
				} else {
					ctx, cancel = context.WithCancel(context.Background())
					time.AfterFunc(30*time.Millisecond, cancel)
				}
				defer cancel()
				endedC := make(chan time.Time, 1)
				context.AfterFunc(ctx, func() { endedC <- time.Now() })
				var err error
				for err == nil {
					_, err = scan.Next(ctx)
				}
				returned := time.Now()
				require.Equal(t, ctx.Err(), err)
				// The Next waiting for a batch returned as the context
				// ended (the bound is loose for loaded machines).
				require.Less(t, returned.Sub(<-endedC), 500*time.Millisecond)
				_, err = scan.Next(ctx)
				require.Equal(t, ctx.Err(), err)
				require.NoError(t, scan.Close())
			})
		}
	}
}

// TestScanStatsMerge: a kv+log split's stats sum its tail's log reads.
func TestScanStatsMerge(t *testing.T) {
	table := modelTable()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := &hookSource{fakeSource: newFakeSource(table, mem)}
	src.appendLog(testBucket, 0, false, []change{{ct: 1, row: []any{"b", int64(2), nil}}, {ct: 1, row: []any{"a", int64(1), nil}}})
	src.appendLog(testBucket, 0, false, []change{{ct: 4, row: []any{"b", int64(2), nil}}})
	splits := []planner.Split{&planner.KvLogSplit{TableBucket: testBucket, SnapshotID: planner.NoKvSnapshot, LogStop: 3}}
	scan := lakeunion.NewSourceScan(src, table, splits, lakeunion.Options{Allocator: mem})
	n := 0
	for {
		rec, err := scan.Next(context.Background())
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		n += int(rec.NumRows())
	}
	require.NoError(t, scan.Close())
	require.Equal(t, 1, n)
	require.Equal(t, []lakeunion.SplitStats{{
		Split: splits[0], Kind: "kv+log", Bucket: testBucket, Opened: true,
		Batches: 2, BatchesSkipped: 2, RowsRead: 3, Rows: 1,
	}}, scan.Stats())
	mem.AssertSize(t, 0)
}

// TestParallelScanLimitWithoutConsumer: the workers themselves stop taking
// splits once the limit is produced, even while the consumer does not
// pull (so that a consumer-side cut cannot be what stops them).
func TestParallelScanLimitWithoutConsumer(t *testing.T) {
	env := newParallelEnv(t, 10, 1, 4)
	scan := env.scan(lakeunion.Options{Threads: 2, Limit: 5})
	rec, err := scan.Next(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 4, rec.NumRows())
	time.Sleep(20 * time.Millisecond)
	env.src.mu.Lock()
	opened := len(env.src.logReads)
	env.src.mu.Unlock()
	// Two splits of 4 rows reach the limit of 5; a third split may be
	// taken by a worker that checked the count just before the second
	// batch was counted.
	require.LessOrEqual(t, opened, 3)
	rec, err = scan.Next(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 1, rec.NumRows(), "the batch past the limit is cut")
	_, err = scan.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, scan.Close())
}
