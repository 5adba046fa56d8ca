package storage

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// BenchmarkKvLookup measures Engine.Lookup of random keys of a 4-bucket
// primary-key table of FLUSS_BENCH_ROWS rows (default 1,000,000), after a
// KV snapshot. Besides the time per lookup it reports the CPU time of the
// benchmark's thread per lookup (cpu-ns/op), which a busy machine disturbs
// less than the wall time.
//
//	go test -run X -bench BenchmarkKvLookup -benchtime 300000x ./storage
func BenchmarkKvLookup(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("FLUSS_BENCH_ROWS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(b, err)
	}
	opts := DefaultOptions()
	opts.Dir = b.TempDir()
	opts.Sync = false
	e, err := Open(opts)
	require.NoError(b, err)
	defer e.Close()
	_, err = e.CreateTable(ctx, metadata.TableDescriptor{
		Path: path("kv"),
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "id", Type: metadata.BigIntType(), NotNull: true},
			{Name: "v", Type: metadata.DoubleType()},
			{Name: "s", Type: metadata.StringType()},
		}, PrimaryKey: []string{"id"}},
		Options: map[string]string{"bucket.num": "4"},
	}, false)
	require.NoError(b, err)
	const chunk = 64 << 10
	rows := make([][]any, 0, chunk)
	for lo := 0; lo < n; lo += chunk {
		rows = rows[:0]
		for i := lo; i < min(lo+chunk, n); i++ {
			rows = append(rows, []any{int64(i), float64(i), "s" + strconv.Itoa(i)})
		}
		_, err := e.Upsert(ctx, path("kv"), rows, UpsertOptions{})
		require.NoError(b, err)
	}
	_, err = e.TakeKvSnapshots(ctx, path("kv"))
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(1, 2))
	key := []any{int64(0), nil, nil}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	b.ResetTimer()
	for b.Loop() {
		k := rng.Int64N(int64(n))
		key[0] = k
		row, found, err := e.Lookup(ctx, path("kv"), key)
		if err != nil || !found || row[1] != float64(k) {
			b.Fatalf("key %d: %v %v %v", k, row, found, err)
		}
	}
	b.StopTimer()
	if cpu := threadCPU(); cpu > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
	}
	m := e.kv.Metrics()
	b.Logf("block cache: %d blocks, %d hits, %d misses; L0 tables: %d", m.BlockCache.Count, m.BlockCache.Hits, m.BlockCache.Misses, m.Levels[0].TablesCount)
}
