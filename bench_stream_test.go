package fluss_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// BenchmarkSubscriptionLatency is issue 18's S1 in small: one row
// inserted per op, the time from Exec returning to the subscription
// returning it (p50 and p99 over the ops), with sync=off so that the
// figure is the wake-up path's, not the fsync's.
func BenchmarkSubscriptionLatency(b *testing.B) {
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE ev (id BIGINT NOT NULL)`)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := db.Conn(ctx)
	require.NoError(b, err)
	defer c.Close()
	sub, err := fluss.Subscribe(ctx, c, "ev", fluss.SubscribeOptions{StartupMode: fluss.StartupLatest})
	require.NoError(b, err)
	defer sub.Close()
	got := make(chan time.Time, 1)
	go func() {
		for sub.Next() {
			got <- time.Now()
		}
		close(got)
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if _, err := db.Exec(`INSERT INTO ev VALUES (?)`, i); err != nil {
			b.Fatal(err)
		}
		sent := time.Now()
		at, ok := <-got
		if !ok {
			b.Fatal(sub.Err())
		}
		// A row seen before Exec returned counts as no wait at all.
		lat = append(lat, max(0, at.Sub(sent)))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	cancel()
	for range got {
	}
}

// BenchmarkSubscriptionFull is issue 18's S2 in small: a full
// subscription of a 4-bucket log table of FLUSS_BENCH_ROWS rows (default
// 1,000,000) read to its end (sub), against a QueryArrow read of the same
// columns (scan); rows/s of each.
//
//	go test -run X -bench BenchmarkSubscriptionFull -benchtime 5x .
func BenchmarkSubscriptionFull(b *testing.B) {
	n := benchRows(b, 1_000_000)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE st (` + benchColumns + `) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	appendBenchRows(b, db, "st", int64(n), 1, 0)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	const idColumn = 5 // after the system columns
	b.Run("sub", func(b *testing.B) {
		for range b.N {
			ctx, cancel := context.WithCancel(ctx)
			sub, err := fluss.Subscribe(ctx, conn, "st", fluss.SubscribeOptions{StartupMode: fluss.StartupFull})
			require.NoError(b, err)
			var got, sum int64
			for got < int64(n) && sub.Next() {
				ids := sub.RecordBatch().Column(idColumn).(*array.Int64)
				for i := range ids.Len() {
					sum += ids.Value(i)
				}
				got += int64(ids.Len())
			}
			require.NoError(b, sub.Err())
			sub.Close()
			cancel()
			require.Equal(b, int64(n), got)
			require.Equal(b, int64(n)*int64(n-1)/2, sum)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("scan", func(b *testing.B) {
		for range b.N {
			rr, err := fluss.QueryArrow(ctx, conn, `SELECT id, ts, k, v, s FROM st`)
			require.NoError(b, err)
			var got, sum int64
			for rr.Next() {
				ids := rr.RecordBatch().Column(0).(*array.Int64)
				for i := range ids.Len() {
					sum += ids.Value(i)
				}
				got += int64(ids.Len())
			}
			require.NoError(b, rr.Err())
			rr.Release()
			require.Equal(b, int64(n), got)
			require.Equal(b, int64(n)*int64(n-1)/2, sum)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
