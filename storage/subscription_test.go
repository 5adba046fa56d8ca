package storage

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// subRow is one row a subscription delivered.
type subRow struct {
	tb     metadata.TableBucket
	part   string
	offset int64
	id     int64
}

// collect reads from s until it has n rows or the deadline passes.
func collect(t *testing.T, s *Subscription, n int) []subRow {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out []subRow
	for len(out) < n {
		require.True(t, s.Next(c), "after %d of %d rows: %v", len(out), n, s.Err())
		b := s.Batch()
		for i := range int(b.Record.NumRows()) {
			out = append(out, subRow{tb: b.TableBucket, part: b.Partition, offset: b.BaseOffset + int64(i),
				id: metadata.ValueAt(b.Record.Column(0), metadata.BigIntType(), i).(int64)})
		}
	}
	return out
}

// requireDense checks that each bucket's offsets run from its first
// without a gap or a repeat.
func requireDense(t *testing.T, rows []subRow, first map[metadata.TableBucket]int64) {
	t.Helper()
	next := map[metadata.TableBucket]int64{}
	for tb, off := range first {
		next[tb] = off
	}
	for _, r := range rows {
		require.Equal(t, next[r.tb], r.offset, "bucket %s", r.tb)
		next[r.tb] = r.offset + 1
	}
}

func subscribe(t *testing.T, e *Engine, table string, opts SubscribeOptions) *Subscription {
	t.Helper()
	s, err := e.Subscribe(ctx, path(table), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestSubscriptionConcurrentWriters(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createTable(t, e, "a", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "3"})
	createTable(t, e, "b", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "2"})
	appendRows(t, e, "a", [][]any{orderRow(-1)})
	sa := subscribe(t, e, "a", SubscribeOptions{})
	sb := subscribe(t, e, "b", SubscribeOptions{})

	// Writers commit to both tables at once, across their buckets.
	const writers, commits = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range commits {
				id := w*commits + i
				_, err := e.Commit(ctx, []Write{
					{Path: path("a"), Kind: WriteAppend, Rows: [][]any{orderRow(2 * id), orderRow(2*id + 1)}},
					{Path: path("b"), Kind: WriteAppend, Rows: [][]any{orderRow(id)}},
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var ra, rb []subRow
	var rwg sync.WaitGroup
	rwg.Add(2)
	go func() { defer rwg.Done(); ra = collect(t, sa, 1+2*writers*commits) }()
	go func() { defer rwg.Done(); rb = collect(t, sb, writers*commits) }()
	wg.Wait()
	rwg.Wait()

	requireDense(t, ra, nil)
	requireDense(t, rb, nil)
	seen := map[int64]bool{}
	for _, r := range ra {
		require.False(t, seen[r.id], "row %d twice", r.id)
		seen[r.id] = true
	}
	require.Len(t, seen, 1+2*writers*commits)
	offsets := sa.Offsets()
	require.Len(t, offsets, 3)
	for tb, off := range offsets {
		require.Equal(t, hw(t, e, tb), off)
	}
}

func TestSubscriptionIdleIsNotWoken(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createTable(t, e, "t", ordersColumns(), nil, nil)
	createTable(t, e, "other", ordersColumns(), nil, nil)
	appendRows(t, e, "t", [][]any{orderRow(0)})
	s := subscribe(t, e, "t", SubscribeOptions{})
	collect(t, s, 1)

	got := make(chan subRow, 1)
	go func() {
		rows := collect(t, s, 1)
		got <- rows[0]
	}()
	// Idle, and while another table is written: no wake-up at all.
	time.Sleep(50 * time.Millisecond)
	appendRows(t, e, "other", [][]any{orderRow(5)})
	time.Sleep(50 * time.Millisecond)
	require.Zero(t, s.Wakeups())
	select {
	case r := <-got:
		t.Fatalf("delivered %v with nothing written", r)
	default:
	}
	appendRows(t, e, "t", [][]any{orderRow(1)})
	select {
	case r := <-got:
		require.Equal(t, int64(1), r.id)
		require.Equal(t, int64(1), r.offset)
	case <-time.After(5 * time.Second):
		t.Fatal("the commit did not wake the subscription")
	}
	require.Equal(t, int64(1), s.Wakeups())
}

func TestSubscriptionStartOffsetsAndResume(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	var offsets map[metadata.TableBucket]int64
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "2"})
		appendStatements(t, e, "t", 0, 3)
		start := map[metadata.TableBucket]int64{bucket(info, 0): hw(t, e, bucket(info, 0)), bucket(info, 1): hw(t, e, bucket(info, 1))}
		s, err := e.Subscribe(ctx, path("t"), SubscribeOptions{Start: start})
		require.NoError(t, err)
		defer s.Close()
		appendStatements(t, e, "t", 100, 2)
		rows := collect(t, s, 4)
		requireDense(t, rows, start)
		for _, r := range rows {
			require.GreaterOrEqual(t, r.id, int64(100), "latest reads nothing written before it")
		}
		offsets = s.Offsets()
		appendStatements(t, e, "t", 200, 1)
	}()
	e, _ := testEngine(t, dir, nil)
	s := subscribe(t, e, "t", SubscribeOptions{Start: offsets})
	rows := collect(t, s, 2)
	requireDense(t, rows, offsets)
	require.ElementsMatch(t, []int64{200, 201}, []int64{rows[0].id, rows[1].id}, "after a reopen, exactly what was not delivered")
}

func TestSubscriptionPartitionsComeAndGo(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	cols := []metadata.Column{{Name: "id", Type: metadata.BigIntType(), NotNull: true}, col("p", metadata.StringType())}
	info := createTable(t, e, "t", cols, []string{"p"}, map[string]string{metadata.OptBucketNum: "2"})
	appendRows(t, e, "t", [][]any{{int64(1), "a"}})
	parts, err := e.ListPartitions(ctx, path("t"))
	require.NoError(t, err)
	start := map[metadata.TableBucket]int64{}
	for b := range int32(2) {
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: parts[0].ID, Bucket: b}
		start[tb] = hw(t, e, tb)
	}
	s := subscribe(t, e, "t", SubscribeOptions{Start: start})

	// A partition the write creates is read from its beginning, each of
	// its rows once.
	appendRows(t, e, "t", [][]any{{int64(2), "b"}, {int64(3), "b"}, {int64(4), "a"}})
	rows := collect(t, s, 3)
	ids := map[int64]string{}
	for _, r := range rows {
		ids[r.id] = r.part
	}
	require.Equal(t, map[int64]string{2: "b", 3: "b", 4: "a"}, ids)

	// Dropping one ends its buckets; the others go on.
	require.NoError(t, e.DropPartition(ctx, path("t"), map[string]string{"p": "b"}, false))
	appendRows(t, e, "t", [][]any{{int64(5), "a"}})
	rows = collect(t, s, 1)
	require.Equal(t, int64(5), rows[0].id)
	require.Len(t, s.Offsets(), 2, "only partition a's buckets are left")

	// A partition filter keeps new partitions that match, only.
	filtered := subscribe(t, e, "t", SubscribeOptions{PartitionFilter: eqString(1, "c")})
	appendRows(t, e, "t", [][]any{{int64(6), "d"}, {int64(7), "c"}})
	rows = collect(t, filtered, 1)
	require.Equal(t, int64(7), rows[0].id)
	require.Equal(t, "c", rows[0].part)

	// Dropping the table ends the subscription with an error.
	require.NoError(t, e.DropTable(ctx, path("t"), false))
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.False(t, s.Next(c))
	require.ErrorIs(t, s.Err(), metadata.ErrNotFound)
}

func TestSubscriptionRetentionGapIsAnError(t *testing.T) {
	e, _ := testEngine(t, "", oneSegmentPerStatement)
	info := createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptLogTTL: "1 h"})
	appendStatements(t, e, "t", 0, 3)
	s := subscribe(t, e, "t", SubscribeOptions{Start: map[metadata.TableBucket]int64{bucket(info, 0): 0}})
	_, err := e.DropExpired(ctx, time.Now().Add(2*time.Hour))
	require.NoError(t, err)
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.False(t, s.Next(c))
	require.ErrorIs(t, s.Err(), ErrLogRemoved)
	require.ErrorContains(t, s.Err(), "offsets 0 to 3 are gone")
	require.ErrorContains(t, s.Err(), bucket(info, 0).String())
}

func TestSubscriptionCancelIsPromptAndLeaksNothing(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createTable(t, e, "t", ordersColumns(), nil, nil)
	s := subscribe(t, e, "t", SubscribeOptions{})
	c, cancel := context.WithCancel(ctx)
	done := make(chan bool)
	go func() { done <- s.Next(c) }()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case ok := <-done:
		require.False(t, ok)
	case <-time.After(time.Second):
		t.Fatal("Next did not return after cancel")
	}
	require.Less(t, time.Since(start), 500*time.Millisecond)
	require.ErrorIs(t, s.Err(), context.Canceled)
	require.NoError(t, s.Close())
	// The engine's own background work may start goroutines meanwhile:
	// what must be gone is every goroutine inside the subscription.
	require.Eventually(t, func() bool { return !goroutineIn("storage.(*Subscription)") }, 5*time.Second, 10*time.Millisecond)

	// A closed engine wakes and ends a waiting subscription.
	s2 := subscribe(t, e, "t", SubscribeOptions{})
	go func() { done <- s2.Next(ctx) }()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, e.Close())
	select {
	case ok := <-done:
		require.False(t, ok)
		require.ErrorIs(t, s2.Err(), metadata.ErrClosed)
	case <-time.After(time.Second):
		t.Fatal("Close did not end the subscription")
	}
}

func eqString(column int, v string) predicate.P {
	return &predicate.Leaf{Op: predicate.Eq, Column: column, Name: "p", Type: metadata.StringType(), Literals: []any{v}}
}

// goroutineIn reports whether a goroutine's stack holds a function whose
// name contains fn.
func goroutineIn(fn string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), fn)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// A bounded subscription reads each bucket to its stop and ends with no
// error: a bucket whose start is at or past its stop, and one Stop does
// not name, end at once; commits after the stops are not read.
func TestSubscriptionBoundedStops(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "3"})
	appendStatements(t, e, "t", 0, 6)
	b0, b1, b2 := bucket(info, 0), bucket(info, 1), bucket(info, 2)
	stop0, stop1 := hw(t, e, b0), hw(t, e, b1)
	require.Positive(t, stop0)
	require.Positive(t, stop1)
	s := subscribe(t, e, "t", SubscribeOptions{Bounded: true,
		Start: map[metadata.TableBucket]int64{b0: 0, b1: stop1 + 5},
		Stop:  map[metadata.TableBucket]int64{b0: stop0, b1: stop1}})
	appendStatements(t, e, "t", 100, 3)
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var rows []subRow
	for s.Next(c) {
		b := s.Batch()
		for i := range int(b.Record.NumRows()) {
			rows = append(rows, subRow{tb: b.TableBucket, offset: b.BaseOffset + int64(i)})
		}
	}
	require.NoError(t, s.Err())
	require.True(t, s.Done())
	require.Len(t, rows, int(stop0), "bucket 0 to its stop; bucket 1 starts past its stop, bucket 2 has none")
	requireDense(t, rows, map[metadata.TableBucket]int64{b0: 0})
	require.Equal(t, stop0, s.Offsets()[b0])
	require.Less(t, stop0, hw(t, e, b0), "the later commits were not read")
	require.Zero(t, s.Offsets()[b2])
	require.False(t, s.Next(c), "it stays ended")
	require.NoError(t, s.Err())

	// Unbounded, Done never holds.
	u := subscribe(t, e, "t", SubscribeOptions{})
	require.False(t, u.Done())
}

// Buckets with committed offsets are read side by side, each by a reader
// of its own running ahead of Next: every bucket's batches still come in
// offset order, the offsets say what was delivered (not what was read
// ahead), and Close in the middle stops the readers and frees what they
// read.
func TestSubscriptionReadsBucketsSideBySide(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createTable(t, e, "t", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "4"})
	const commits, per = 40, 25
	for c := range commits {
		rows := make([][]any, per)
		for i := range rows {
			rows[i] = orderRow(c*per + i)
		}
		appendRows(t, e, "t", rows)
	}
	s := subscribe(t, e, "t", SubscribeOptions{})
	part := collect(t, s, commits*per/2)
	require.Positive(t, s.running, "readers run while buckets are behind")
	reading := 0
	for _, b := range s.buckets {
		if b.reading {
			reading++
		}
	}
	require.Equal(t, s.running, reading)
	requireDense(t, part, nil)
	// The offsets are those of the batches delivered: a subscription
	// resumed from them delivers exactly the rest.
	at := s.Offsets()
	delivered := map[metadata.TableBucket]int64{}
	for _, r := range part {
		delivered[r.tb] = r.offset + 1
	}
	for tb, off := range at {
		require.Equal(t, delivered[tb], off, "bucket %s", tb)
	}
	require.NoError(t, s.Close())
	require.Eventually(t, func() bool { return !goroutineIn("storage.(*Subscription).fetch") }, 5*time.Second, 10*time.Millisecond)

	rest := collect(t, subscribe(t, e, "t", SubscribeOptions{Start: at}), commits*per-len(part))
	requireDense(t, rest, at)
	seen := map[int64]bool{}
	for _, r := range append(part, rest...) {
		require.False(t, seen[r.id], "row %d twice", r.id)
		seen[r.id] = true
	}
	require.Len(t, seen, commits*per)
}
