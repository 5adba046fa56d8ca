package tiering

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

func TestCrashBetweenLakeCommitAndEngineRecord(t *testing.T) {
	e := newEnv(t, t.TempDir(), nil, nil)
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptBucketNum: "2"})
	e.create("k", pkCols(), []string{"id"}, nil, map[string]string{metadata.OptBucketNum: "2"})
	want := model{}
	for i := range 8 {
		e.appendRows("t", []any{int64(i), "r", "x"})
		e.upsert("k", []any{int64(i), "a", int64(i)})
		want.put(int64(i), "a", int64(i))
	}
	require.Equal(t, int64(1), e.tier("t"))
	require.Equal(t, int64(1), e.tier("k"))

	e.appendRows("t", []any{int64(100), "tail", "y"}, []any{int64(101), "tail", "y"})
	e.upsert("k", []any{int64(1), "b", int64(10)})
	want.put(1, "b", 10)
	e.delete("k", []any{int64(2), nil, nil})
	delete(want, 2)

	// Phase 1 only, then the process dies.
	e.svc.hooks.skipPhase2 = true
	require.Equal(t, int64(2), e.tier("t"))
	require.Equal(t, int64(2), e.tier("k"))
	for _, name := range []string{"t", "k"} {
		snap, ok := e.snapshot(name)
		require.True(t, ok)
		require.Equal(t, int64(1), snap.SnapshotID, "the engine still records the old snapshot")
		require.Equal(t, int64(2), e.manifest(name).SnapshotID)
	}
	e.reopen()
	snap, _ := e.snapshot("t")
	require.Equal(t, int64(1), snap.SnapshotID)

	require.NoError(t, e.svc.Recover(bg))
	snap, _ = e.snapshot("t")
	require.Equal(t, int64(2), snap.SnapshotID)
	e.checkLogLake("t") // every row once
	e.checkPKLake("k", want, true)
	require.NoError(t, e.svc.Recover(bg), "recovering twice changes nothing")
	snap, _ = e.snapshot("k")
	require.Equal(t, int64(2), snap.SnapshotID)

	// Without a reopen, the next round repairs the record first.
	e.appendRows("t", []any{int64(200), "more", "z"})
	e.svc.hooks.skipPhase2 = true
	require.Equal(t, int64(3), e.tier("t"))
	e.svc.hooks.skipPhase2 = false
	require.Equal(t, int64(3), e.tier("t"), "nothing new; the record catches up")
	snap, _ = e.snapshot("t")
	require.Equal(t, int64(3), snap.SnapshotID)
	e.checkLogLake("t")
	e.appendRows("t", []any{int64(201), "more", "z"})
	require.Equal(t, int64(4), e.tier("t"))
	e.checkLogLake("t")

	// Reopen after a clean round keeps everything.
	e.reopen()
	require.NoError(t, e.svc.Recover(bg))
	snap, _ = e.snapshot("t")
	require.Equal(t, int64(4), snap.SnapshotID)
	e.checkLogLake("t")
	e.checkPKLake("k", want, true)
}

func TestRoundsOfOneTableNeverOverlap(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptBucketNum: "2"})
	var inRound, overlaps atomic.Int32
	e.svc.hooks.beforeRound = func(*metadata.TableInfo) {
		if inRound.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(time.Millisecond)
		inRound.Add(-1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 3 {
		wg.Go(func() {
			for i := range 5 {
				if _, err := e.eng.Append(bg, tpath("t"), [][]any{{int64(w*100 + i), "c", "x"}}); err != nil {
					errs <- err
				}
				if _, err := e.svc.Tier(bg, tpath("t")); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, overlaps.Load())
	e.tier("t")
	e.checkLogLake("t")
	require.Len(t, e.lakeRows(e.info("t"), e.manifest("t").Files), 15)
}

// loops counts the goroutines running a Service's background loop.
func loops() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "tiering.(*Service).run(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBackgroundTieringAndExpiry(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, "", func(o *storage.Options) { o.SegmentBytes = 1 }, func(o *Options) {
		o.Enabled = true
		o.CheckInterval = 5 * time.Millisecond
		o.ExpireInterval = 10 * time.Millisecond
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptDatalakeFreshness: "50ms", metadata.OptLogTTL: "1ms"})
	_, err := e.eng.CreateTable(bg, metadata.TableDescriptor{Path: tpath("plain"), Schema: metadata.Schema{Columns: logCols()},
		Options: map[string]string{metadata.OptLogTTL: "1ms"}}, false)
	require.NoError(t, err)
	// The first round panics: the loop logs it and goes on.
	var panicked atomic.Bool
	e.svc.hooks.beforeRound = func(*metadata.TableInfo) {
		if panicked.CompareAndSwap(false, true) {
			panic("injected")
		}
	}
	require.Zero(t, loops())
	e.svc.Start()
	e.svc.Start() // a second Start does nothing
	require.Eventually(t, func() bool { return loops() == 1 }, time.Second, time.Millisecond, "one background loop")

	for i := range 3 {
		e.appendRows("t", []any{int64(i), "r", "x"})
		e.appendRows("plain", []any{int64(i), "r", "x"})
	}
	tb := e.buckets("t")[0]
	plain := e.buckets("plain")[0]
	caughtUp := func() bool {
		snap, ok, err := e.eng.ReadableLakeSnapshot(bg, tpath("t"))
		return err == nil && ok && snap.TieredOffsets[tb] == e.offsets([]metadata.TableBucket{tb}, metadata.OffsetLatest)[tb]
	}
	require.Eventually(t, caughtUp, 5*time.Second, 5*time.Millisecond)
	require.True(t, panicked.Load())
	require.Eventually(t, func() bool { return bytes.Contains([]byte(logs.String()), []byte("panicked")) }, time.Second, 5*time.Millisecond)

	// Expiry: the plain table loses all but its active segment; the lake
	// table only what is tiered.
	require.Eventually(t, func() bool {
		return e.offsets([]metadata.TableBucket{plain}, metadata.OffsetEarliest)[plain] == 2
	}, 5*time.Second, 5*time.Millisecond)
	e.appendRows("t", []any{int64(10), "r", "x"})
	require.Eventually(t, caughtUp, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		return e.offsets([]metadata.TableBucket{tb}, metadata.OffsetEarliest)[tb] == 3
	}, 5*time.Second, 5*time.Millisecond)
	snap, _ := e.snapshot("t")
	require.LessOrEqual(t, e.offsets([]metadata.TableBucket{tb}, metadata.OffsetEarliest)[tb], snap.TieredOffsets[tb])
	m := e.manifest("t")
	require.Len(t, e.lakeRows(e.info("t"), m.Files), 4, "every row reached the lake before its log expired")

	require.NoError(t, e.svc.Close())
	require.NoError(t, e.svc.Close(), "idempotent")
	// Close waits for the loop to return; its goroutine still shows in a
	// stack dump while it unwinds the deferred Done.
	require.Eventually(t, func() bool { return loops() == 0 }, time.Second, time.Millisecond, "the background goroutine ended")
	// Nothing runs after Close.
	id := e.manifest("t").SnapshotID
	e.appendRows("t", []any{int64(11), "r", "x"})
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, id, e.manifest("t").SnapshotID)
	require.NotContains(t, logs.String(), "tiering round failed")
}

func TestDisabledServiceRunsNothingButTiers(t *testing.T) {
	e := newEnv(t, "", nil, func(o *Options) { o.CheckInterval = time.Millisecond })
	e.create("t", logCols(), nil, nil, map[string]string{metadata.OptDatalakeFreshness: "1ms"})
	e.appendRows("t", []any{int64(1), "r", "x"})
	e.svc.Start()
	require.Zero(t, loops())
	time.Sleep(50 * time.Millisecond)
	_, ok := e.snapshot("t")
	require.False(t, ok, "tiering is off")
	require.Equal(t, int64(1), e.tier("t"))
	e.checkLogLake("t")
	require.NoError(t, e.svc.Close())
}

func TestTierAfterTableDropped(t *testing.T) {
	e := newEnv(t, "", nil, nil)
	e.create("t", logCols(), nil, nil, nil)
	e.appendRows("t", []any{int64(1), "r", "x"})
	done := make(chan struct{})
	e.svc.hooks.beforeRound = func(info *metadata.TableInfo) {
		<-done
	}
	errc := make(chan error, 1)
	go func() {
		_, err := e.svc.Tier(bg, tpath("t"))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, e.eng.DropTable(bg, tpath("t"), false))
	close(done)
	err := <-errc
	require.Error(t, err)
	require.ErrorIs(t, err, metadata.ErrNotFound, fmt.Sprint(err))
}
