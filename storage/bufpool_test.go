package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"
)

func TestSizeClass(t *testing.T) {
	for _, size := range []int{1, 4096, 256<<20 + 1} {
		_, _, ok := sizeClass(size)
		require.False(t, ok, "size %d is not pooled", size)
	}
	seen := map[int]int{}
	for _, size := range []int{4097, 5000, 5120, 5121, 8192, 8193, 1 << 20, 3<<20 + 7, 256 << 20} {
		class, capacity, ok := sizeClass(size)
		require.True(t, ok, "size %d", size)
		require.GreaterOrEqual(t, capacity, size)
		require.LessOrEqual(t, capacity, size+size/4, "size %d wastes at most a quarter", size)
		require.Less(t, class, poolClasses)
		// A class always has the same capacity, and its capacity is its
		// own class (what Free relies on).
		if c, ok := seen[class]; ok {
			require.Equal(t, c, capacity, "class %d", class)
		}
		seen[class] = capacity
		c2, cap2, ok := sizeClass(capacity)
		require.True(t, ok)
		require.Equal(t, class, c2)
		require.Equal(t, capacity, cap2)
	}
}

func TestPoolRecycles(t *testing.T) {
	var p poolAllocator
	buf := p.newBuffer(10_000)
	require.Len(t, buf.Bytes(), 10_000)
	buf.Release()
	// A buffer of another size in the same class may come back (sync.Pool
	// promises nothing, so only the contents are checked when it does).
	b := p.Allocate(9_000)
	require.Len(t, b, 9_000)
	for _, x := range b {
		require.Zero(t, x, "Allocate returns zeroed memory")
	}
	// Buffers of sizes outside the classes are dropped, not pooled.
	p.Free(make([]byte, 100))
	p.Free(make([]byte, 5000))
	b = p.Reallocate(20_000, b)
	require.Len(t, b, 20_000)
}

// TestRetainedRecordSurvivesLaterBatches: a record a consumer still holds
// keeps its batch buffer out of the pool while the reader goes on through
// many batches that do recycle theirs. Under the race detector freed
// buffers are poisoned, so a buffer recycled too early shows as garbage.
func TestRetainedRecordSurvivesLaterBatches(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, map[string]string{"bucket.num": "1"})
	name := func(i int) string { return fmt.Sprintf("customer-%d-%s", i, strings.Repeat("x", 60)) }
	for b := range 50 {
		var rows [][]any
		for i := range 100 { // about 10 KiB per batch: pooled sizes
			id := b*100 + i
			rows = append(rows, []any{int64(id), name(id), float64(id), "2026-01-02"})
		}
		appendRows(t, e, "orders", rows)
	}
	pooled := batchPool.buffers.Load()
	r, err := e.ReadLog(context.Background(), bucket(info, 0), 0, -1, ReadOptions{})
	require.NoError(t, err)
	defer r.Close()
	var kept []arrow.RecordBatch
	for r.Next() {
		rec := r.Batch().Record
		if len(kept) < 3 {
			rec.Retain()
			kept = append(kept, rec)
		}
	}
	require.NoError(t, r.Err())
	require.Len(t, kept, 3)
	require.GreaterOrEqual(t, batchPool.buffers.Load()-pooled, int64(50), "every batch read into a pooled buffer")
	for b, rec := range kept {
		ids := rec.Column(0).(*array.Int64)
		names := rec.Column(1).(*array.String)
		require.EqualValues(t, 100, rec.NumRows())
		for i := range 100 {
			require.Equal(t, int64(b*100+i), ids.Value(i))
			require.Equal(t, name(b*100+i), names.Value(i))
		}
		rec.Release()
	}
}
