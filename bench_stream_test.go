package fluss_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
