package query

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

func subscribe(t *testing.T, ctx context.Context, s *Session, text string, req StreamRequest) *Subscription {
	t.Helper()
	st, err := sqlplan.Parse(text)
	require.NoError(t, err)
	sel, ok := st.(*sqlplan.Select)
	require.True(t, ok, text)
	sub, err := s.Subscribe(ctx, sel, nil, req)
	require.NoError(t, err, text)
	return sub
}

// keyTableWithSnapshots creates kv (two buckets) with rows 0..n-1, a KV
// snapshot of each bucket, and a tail of updates after it.
func keyTableWithSnapshots(t *testing.T, s *Session, n int) {
	t.Helper()
	run(t, s, `CREATE TABLE kv (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d)", i, i)
	}
	run(t, s, `INSERT INTO kv VALUES `+b.String())
	_, err := s.Engine.TakeKvSnapshots(context.Background(), metadata.TablePath{Database: metadata.DefaultDatabase, Table: "kv"})
	require.NoError(t, err)
	run(t, s, `INSERT INTO kv VALUES (0, -1), (1, -1)`)
}

// TestSubscriptionReleasesPins: a `full` start pins one read view and
// the KV snapshots its state is read from while it reads them, and lets
// go of them once the state is read (an idle subscription holds
// nothing), when closed in the middle of the state, and when its context
// ends; no goroutine outlives a closed or cancelled subscription.
func TestSubscriptionReleasesPins(t *testing.T) {
	newSession := testSession(t, nil)
	s := newSession()
	const n = 3000
	keyTableWithSnapshots(t, s, n)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	eng := s.Engine
	require.Equal(t, storage.Pins{}, eng.Pins())
	ctx := context.Background()
	full := StreamRequest{Mode: StartupFull}

	t.Run("close mid-state", func(t *testing.T) {
		sub := subscribe(t, ctx, newSession(), `SELECT id, v FROM kv`, full)
		b, meta, err := sub.Next(ctx)
		require.NoError(t, err)
		require.True(t, meta.Snapshot)
		require.Positive(t, b.NumRows())
		pins := eng.Pins()
		require.Equal(t, 1, pins.ReadViews, "the view the state is read at")
		require.GreaterOrEqual(t, pins.KvSnapshots, int64(2), "both buckets' snapshots")
		_, err = sub.Offsets()
		require.ErrorIs(t, err, ErrSnapshotPhase)
		require.NoError(t, sub.Close())
		require.Equal(t, storage.Pins{}, eng.Pins())
		require.NoError(t, sub.Close(), "idempotent")
	})

	t.Run("idle after the state", func(t *testing.T) {
		sub := subscribe(t, ctx, newSession(), `SELECT id, v FROM kv`, full)
		rows := 0
		for rows < n {
			b, meta, err := sub.Next(ctx)
			require.NoError(t, err)
			require.True(t, meta.Snapshot, "after %d rows", rows)
			rows += b.NumRows()
		}
		require.Equal(t, n, rows, "one row per key: the tail's updates are in the state")
		require.NotEqual(t, storage.Pins{}, eng.Pins(), "the last state batch is still being read")
		wait, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, _, err := sub.Next(wait)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "nothing new: it waits")
		require.Equal(t, storage.Pins{}, eng.Pins(), "idle, it holds nothing")
		off, err := sub.Offsets()
		require.NoError(t, err)
		require.Len(t, off, 2)
		require.NoError(t, sub.Close())
		require.Equal(t, storage.Pins{}, eng.Pins())
	})

	t.Run("context cancelled mid-state", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		sub := subscribe(t, sctx, newSession(), `SELECT id FROM kv WHERE v >= 0`, full)
		_, _, err := sub.Next(sctx)
		require.NoError(t, err)
		cancel()
		for {
			_, _, err = sub.Next(sctx)
			if err != nil {
				break
			}
		}
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, sub.Close())
		require.Equal(t, storage.Pins{}, eng.Pins())
	})

	t.Run("context cancelled while waiting", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		sub := subscribe(t, sctx, newSession(), `SELECT id FROM kv`, StreamRequest{Mode: StartupLatest})
		require.Equal(t, storage.Pins{}, eng.Pins(), "a latest start pins nothing")
		done := make(chan error, 1)
		go func() {
			_, _, err := sub.Next(sctx)
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(2 * time.Second):
			t.Fatal("cancel did not end Next")
		}
		require.Less(t, time.Since(start), time.Second)
		require.NoError(t, sub.Close())
		require.Equal(t, storage.Pins{}, eng.Pins())
	})
}
