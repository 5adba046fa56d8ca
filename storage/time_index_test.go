package storage

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// testClock is a commit clock a test sets, also backwards.
type testClock struct{ ms atomic.Int64 }

func (c *testClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

func withClock(c *testClock, more ...func(*Options)) func(*Options) {
	return func(o *Options) {
		o.Clock = c.now
		for _, f := range more {
			f(o)
		}
	}
}

// firstOffsetAt is the brute-force answer OffsetsForTimestamp must give:
// the base offset of the first batch committed at or after ts, read from
// the whole log, or the high watermark.
func firstOffsetAt(t *testing.T, e *Engine, tb metadata.TableBucket, ts int64) int64 {
	t.Helper()
	r, err := e.ReadLog(ctx, tb, logStart(t, e, tb), -1, ReadOptions{})
	require.NoError(t, err)
	defer r.Close()
	for r.Next() {
		if b := r.Batch(); b.CommitTimestamp >= ts {
			return b.BaseOffset
		}
	}
	require.NoError(t, r.Err())
	return hw(t, e, tb)
}

func offsetAt(t *testing.T, e *Engine, tb metadata.TableBucket, ts int64) int64 {
	t.Helper()
	m, err := e.OffsetsForTimestamp(ctx, []metadata.TableBucket{tb}, ts)
	require.NoError(t, err)
	return m[tb]
}

// checkAllTimestamps compares OffsetsForTimestamp with the brute force for
// every timestamp from before the first commit to after the last.
func checkAllTimestamps(t *testing.T, e *Engine, tb metadata.TableBucket, from, to int64) {
	t.Helper()
	for ts := from; ts <= to; ts++ {
		require.Equal(t, firstOffsetAt(t, e, tb, ts), offsetAt(t, e, tb, ts), "timestamp %d", ts)
	}
}

// statementsAt appends one two-row statement per timestamp.
func statementsAt(t *testing.T, e *Engine, clock *testClock, table string, from int, times ...int64) {
	t.Helper()
	for i, ts := range times {
		clock.ms.Store(ts)
		appendRows(t, e, table, [][]any{orderRow(from + 2*i), orderRow(from + 2*i + 1)})
	}
}

func TestOffsetsForTimestamp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*Options)
	}{
		{"segment per statement", oneSegmentPerStatement},
		// One segment, an offset index entry every batch or so.
		{"one segment", func(o *Options) { o.IndexIntervalBytes = 1 }},
		{"sparse index", func(o *Options) { o.IndexIntervalBytes = 2000 }},
		{"small segments", func(o *Options) { o.SegmentBytes = 4000; o.IndexIntervalBytes = 1000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := &testClock{}
			var times []int64
			for i := range 40 {
				times = append(times, 1000+10*int64(i/2)) // two statements per timestamp
			}
			var tb metadata.TableBucket
			func() {
				e, _ := testEngine(t, dir, withClock(clock, tc.tweak))
				info := createTable(t, e, "t", ordersColumns(), nil, nil)
				tb = bucket(info, 0)
				require.Equal(t, int64(0), offsetAt(t, e, tb, 0), "a bucket never written to")
				statementsAt(t, e, clock, "t", 0, times...)
				require.Equal(t, int64(80), hw(t, e, tb))

				require.Equal(t, int64(0), offsetAt(t, e, tb, 0), "before all")
				require.Equal(t, int64(0), offsetAt(t, e, tb, 1000))
				require.Equal(t, int64(4), offsetAt(t, e, tb, 1001), "inside: the first batch of the next timestamp")
				require.Equal(t, int64(4), offsetAt(t, e, tb, 1010))
				require.Equal(t, int64(76), offsetAt(t, e, tb, 1190))
				require.Equal(t, int64(80), offsetAt(t, e, tb, 1191), "after all: the high watermark")
				checkAllTimestamps(t, e, tb, 990, 1200)
				require.NoError(t, e.Close())
			}()
			// Recovery rebuilds the index.
			e, _ := testEngine(t, dir, withClock(clock, tc.tweak))
			require.Equal(t, int64(4), offsetAt(t, e, tb, 1005))
			checkAllTimestamps(t, e, tb, 990, 1200)
		})
	}
}

// A clock that steps back leaves the log out of time order: the answer is
// still the first batch at or after the timestamp, as Kafka's index gives.
func TestOffsetsForTimestampClockStepsBack(t *testing.T) {
	for _, tweak := range []func(*Options){
		oneSegmentPerStatement,
		func(o *Options) { o.IndexIntervalBytes = 1 },
		func(o *Options) { o.SegmentBytes = 3000; o.IndexIntervalBytes = 700 },
	} {
		dir := t.TempDir()
		clock := &testClock{}
		var tb metadata.TableBucket
		times := []int64{100, 200, 150, 150, 300, 120, 250, 250, 400, 390, 380, 500, 90, 510}
		func() {
			e, _ := testEngine(t, dir, withClock(clock, tweak))
			info := createTable(t, e, "t", ordersColumns(), nil, nil)
			tb = bucket(info, 0)
			statementsAt(t, e, clock, "t", 0, times...)
			require.Equal(t, int64(2), offsetAt(t, e, tb, 160), "the batch at 200, not the later one at 150")
			require.Equal(t, int64(16), offsetAt(t, e, tb, 301))
			require.Equal(t, int64(26), offsetAt(t, e, tb, 505))
			checkAllTimestamps(t, e, tb, 80, 520)
			require.NoError(t, e.Close())
		}()
		e, _ := testEngine(t, dir, withClock(clock, tweak))
		checkAllTimestamps(t, e, tb, 80, 520)
	}
}

func TestOffsetsForTimestampEmptyBuckets(t *testing.T) {
	clock := &testClock{}
	e, _ := testEngine(t, "", withClock(clock))
	info := createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "4"})
	clock.ms.Store(1000)
	appendRows(t, e, "t", [][]any{orderRow(0)})
	var buckets []metadata.TableBucket
	for b := range int32(4) {
		buckets = append(buckets, bucket(info, b))
	}
	got, err := e.OffsetsForTimestamp(ctx, buckets, 500)
	require.NoError(t, err)
	var written, zero int
	for _, tb := range buckets {
		switch got[tb] {
		case 0:
			zero++
			if hw(t, e, tb) == 1 {
				written++
			}
		default:
			t.Fatalf("bucket %s: offset %d", tb, got[tb])
		}
	}
	require.Equal(t, 4, zero)
	require.Equal(t, 1, written)
	got, err = e.OffsetsForTimestamp(ctx, buckets, 1001)
	require.NoError(t, err)
	for _, tb := range buckets {
		require.Equal(t, hw(t, e, tb), got[tb], "after all: the high watermark")
	}

	_, err = e.OffsetsForTimestamp(ctx, []metadata.TableBucket{{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: 9}}, 0)
	require.Error(t, err, "a bucket the table does not have")
}

// TTL moves the log start past 0: the answer starts there, never at an
// offset that is gone.
func TestOffsetsForTimestampAfterExpiry(t *testing.T) {
	dir := t.TempDir()
	clock := &testClock{}
	e, _ := testEngine(t, dir, withClock(clock, oneSegmentPerStatement))
	info := createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptLogTTL: "1 h"})
	tb := bucket(info, 0)
	statementsAt(t, e, clock, "t", 0, 1000, 2000, 3000, 4000, 5000)
	n, err := e.DropExpired(ctx, time.UnixMilli(2500).Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, int64(4), logStart(t, e, tb))
	require.Equal(t, int64(4), offsetAt(t, e, tb, 0), "before all that is left: the log start")
	require.Equal(t, int64(4), offsetAt(t, e, tb, 1500))
	require.Equal(t, int64(6), offsetAt(t, e, tb, 3001))
	require.Equal(t, int64(10), offsetAt(t, e, tb, 5001))
	checkAllTimestamps(t, e, tb, 0, 5100)
}

// Cutting the log back (recovery's truncateTo) takes the time index and the
// newest timestamp back with it: later batches older than the cut ones are
// found again.
func TestOffsetsForTimestampAfterTruncate(t *testing.T) {
	for _, tweak := range []func(*Options){
		func(o *Options) { o.IndexIntervalBytes = 1 },
		func(o *Options) { o.SegmentBytes = 3000; o.IndexIntervalBytes = 700 },
	} {
		clock := &testClock{}
		e, _ := testEngine(t, t.TempDir(), withClock(clock, tweak))
		info := createTable(t, e, "t", ordersColumns(), nil, nil)
		tb := bucket(info, 0)
		statementsAt(t, e, clock, "t", 0, 100, 200, 300, 400, 500, 600)
		require.NoError(t, e.tablet(tb).truncateTo(4))
		require.Equal(t, int64(4), hw(t, e, tb))
		require.Equal(t, int64(4), offsetAt(t, e, tb, 201))
		checkAllTimestamps(t, e, tb, 0, 700)
		statementsAt(t, e, clock, "t", 4, 250, 260, 700)
		require.Equal(t, int64(4), offsetAt(t, e, tb, 240))
		require.Equal(t, int64(6), offsetAt(t, e, tb, 255))
		checkAllTimestamps(t, e, tb, 0, 800)
	}
}

// BenchmarkOffsetsForTimestamp finds a timestamp in a bucket of 20,000
// single-row batches over many segments: the time index reads about one
// index interval of headers, where a scan reads them all.
func BenchmarkOffsetsForTimestamp(b *testing.B) {
	clock := &testClock{}
	e, _ := testEngine(b, "", withClock(clock, func(o *Options) { o.SegmentBytes = 1 << 20 }))
	info, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path:   metadata.TablePath{Database: metadata.DefaultDatabase, Table: "t"},
		Schema: metadata.Schema{Columns: ordersColumns()},
	}, false)
	require.NoError(b, err)
	const n = 20000
	for i := range n {
		clock.ms.Store(int64(1000 + i))
		_, err := e.Append(ctx, info.Path, [][]any{orderRow(i)})
		require.NoError(b, err)
	}
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
	b.Run("index", func(b *testing.B) {
		for i := range b.N {
			ts := int64(1000 + (i*7919)%n)
			m, err := e.OffsetsForTimestamp(ctx, []metadata.TableBucket{tb}, ts)
			if err != nil || m[tb] != ts-1000 {
				b.Fatalf("timestamp %d: offset %d, %v", ts, m[tb], err)
			}
		}
	})
	// What the index saves: reading the batches up to the answer, no
	// column decoded.
	b.Run("scan", func(b *testing.B) {
		for i := range b.N {
			ts := int64(1000 + (i*7919)%n)
			r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{Projection: []int{}})
			require.NoError(b, err)
			found := int64(-1)
			for found < 0 && r.Next() {
				if bt := r.Batch(); bt.CommitTimestamp >= ts {
					found = bt.BaseOffset
				}
			}
			require.NoError(b, r.Close())
			if found != ts-1000 {
				b.Fatalf("timestamp %d: offset %d", ts, found)
			}
		}
	})
}
