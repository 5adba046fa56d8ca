package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss"
)

// The streaming workloads of issue 18 (S1, S2, S3, SIDLE) read fluss's
// subscriptions, which the peers do not have: the report says so once.
const noSubscriptions = "S1, S2, S3 and SIDLE run on fluss only: DuckDB and SQLite have no subscriptions"

// streamTable is the log table S2 and S3 read: t's columns and buckets,
// loaded with t's -rows rows by the same path, then grown by their
// bursts. t itself stays as the other workloads (and RSS's child) expect.
const streamTable = "st"

// streamQuery reads every column of streamTable as a batch.
const streamQuery = `SELECT id, ts, k, v, s FROM ` + streamTable

// idColumn is the index of id in a subscription's batches: after the five
// system columns.
const idColumn = 5

func (h *harness) wantStreams() bool {
	return h.want("S1") || h.want("S2") || h.want("S3") || h.want("SIDLE")
}

// runStreams runs the streaming workloads asked for.
func (h *harness) runStreams(ctx context.Context) error {
	if h.want("S2") || h.want("S3") {
		fmt.Printf("loading fluss %s (t's %d rows, for S2 and S3)\n", streamTable, h.g.n)
		if _, err := h.fluss.sqlDB.ExecContext(ctx, `CREATE TABLE `+streamTable+` (`+flussColumns+`) WITH ('bucket.num' = '4')`); err != nil {
			return err
		}
		if err := h.fluss.appendArrow(ctx, streamTable, false, 0, h.g.n, h.g.row0); err != nil {
			return fmt.Errorf("load %s: %w", streamTable, err)
		}
		h.stRows = h.g.n
	}
	if h.want("S1") {
		h.s1(ctx)
	}
	if h.want("S2") {
		h.s2(ctx)
	}
	if h.want("S3") {
		h.s3(ctx)
	}
	if h.want("SIDLE") {
		h.sidle(ctx)
	}
	return nil
}

// streamResult is a result row that only fluss fills.
func (h *harness) streamResult(id, title, unit string, higher bool) *result {
	r := h.res(id, title, unit, higher)
	r.notes[colDuck], r.notes[colSQLite] = "-", "-"
	h.streams = true
	return r
}

// burstRows is the size of S2's burst and of S3's lag: a tenth of -rows
// (the 1M behind 10M), at least 1,000.
func (h *harness) burstRows() int64 { return max(1000, h.g.n/10) }

// s1 measures the latency of a subscription behind a writer committing
// single-row INSERTs at 1,000 a second, each durable when Exec returns
// (the bench's sync=on): p50 and p99 of the time from Exec returning to
// the subscriber holding the row.
func (h *harness) s1(ctx context.Context) {
	p50 := h.streamResult("S1p50", "subscription latency behind 1,000 durable single-row INSERTs/s, Exec returned to row received, p50", "µs", false)
	p99 := h.streamResult("S1p99", "the same, p99", "µs", false)
	if _, err := h.fluss.sqlDB.ExecContext(ctx, `CREATE TABLE s1 (id BIGINT NOT NULL) WITH ('bucket.num' = '4')`); err != nil {
		h.record(p50, colFluss, 0, err)
		return
	}
	var next int64
	for run := 0; run < h.cfg.runs; run++ {
		a, b, rate, err := h.s1Run(ctx, &next)
		h.record(p50, colFluss, a, err)
		h.record(p99, colFluss, b, err)
		if err != nil {
			break
		}
		fmt.Printf("  S1  fluss    run %d: p50 %s p99 %s at %.0f INSERTs/s\n", run+1, format(a, "µs"), format(b, "µs"), rate)
		p50.notes[colFluss] = fmt.Sprintf("writer reached %.0f INSERTs/s (last run; paced at 1,000/s)", rate)
	}
}

// s1Run writes -stream-time's worth of rows, ids from *next on, paced at
// one per millisecond (a slow commit is not made up by a burst after it:
// the next INSERT goes as soon as the last returns).
func (h *harness) s1Run(ctx context.Context, next *int64) (p50, p99, rate float64, err error) {
	n := max(100, int(h.cfg.streamTime/time.Millisecond))
	first := *next
	*next += int64(n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := h.fluss.sqlDB.Conn(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	defer conn.Close()
	sub, err := fluss.Subscribe(ctx, conn, "s1", fluss.SubscribeOptions{StartupMode: fluss.StartupLatest})
	if err != nil {
		return 0, 0, 0, err
	}
	defer sub.Close()
	recv := make([]time.Time, n)
	done := make(chan error, 1)
	go func() {
		seen := 0
		for seen < n && sub.Next() {
			at := time.Now()
			ids := sub.RecordBatch().Column(idColumn).(*array.Int64)
			for i := range ids.Len() {
				j := ids.Value(i) - first
				if j < 0 || j >= int64(n) || !recv[j].IsZero() {
					done <- fmt.Errorf("S1 subscription returned id %d, outside this run's [%d, %d) or twice", ids.Value(i), first, first+int64(n))
					return
				}
				recv[j] = at
				seen++
			}
		}
		if seen < n {
			done <- fmt.Errorf("S1 subscription ended after %d of %d rows: %w", seen, n, sub.Err())
			return
		}
		done <- nil
	}()
	st, err := h.fluss.sqlDB.PrepareContext(ctx, `INSERT INTO s1 VALUES (?)`)
	if err != nil {
		return 0, 0, 0, err
	}
	defer st.Close()
	sent := make([]time.Time, n)
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		if _, err := st.ExecContext(ctx, first+int64(i)); err != nil {
			return 0, 0, 0, fmt.Errorf("S1 INSERT of id %d: %w", first+int64(i), err)
		}
		sent[i] = time.Now()
	}
	rate = float64(n) / time.Since(start).Seconds()
	select {
	case err := <-done:
		if err != nil {
			return 0, 0, 0, err
		}
	case <-time.After(10 * time.Second):
		return 0, 0, 0, fmt.Errorf("S1 subscription had not returned every row 10 s after the last INSERT")
	}
	lat := make([]time.Duration, n)
	for i := range lat {
		// A row received before its Exec returned counts as no wait.
		lat[i] = max(0, recv[i].Sub(sent[i]))
	}
	slices.Sort(lat)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return us(lat[n/2]), us(lat[n*99/100]), rate, nil
}

// streamRead reads sub until it has returned want rows and returns the
// sum of their ids.
func streamRead(sub *fluss.Subscription, what string, want int64) (int64, error) {
	var n, sum int64
	for n < want && sub.Next() {
		ids := sub.RecordBatch().Column(idColumn).(*array.Int64)
		for i := range ids.Len() {
			sum += ids.Value(i)
		}
		n += int64(ids.Len())
	}
	if n < want {
		return 0, fmt.Errorf("%s subscription ended after %d of %d rows: %w", what, n, want, sub.Err())
	}
	if n > want {
		return 0, fmt.Errorf("%s subscription returned %d rows, want %d", what, n, want)
	}
	return sum, nil
}

// arrowRead times a QueryArrow read and checks its row count and id sum.
func (h *harness) arrowRead(ctx context.Context, what string, wantN, wantSum int64, q string, args ...any) (time.Duration, error) {
	conn, err := h.fluss.sqlDB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	start := time.Now()
	rr, err := fluss.QueryArrow(ctx, conn, q, args...)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n, sum int64
	for rr.Next() {
		rec := rr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			sum += ids.Value(i)
		}
		n += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return 0, err
	}
	d := time.Since(start)
	return d, checkScan(what, n, sum, wantN, wantSum)
}

// s2 measures a full subscription of st (-rows rows) and then a burst of
// a tenth as many new rows, appended (AppendArrow of ready batches,
// durable) once it has opened and before it reads: rows/s from Subscribe
// until it has returned them all, less the burst's write, against a
// QueryArrow read of the same rows afterwards. The write is left out so
// that the figure is the subscription's: appended while the subscription
// reads, the burst made it wait for the writer, and the rows/s were the
// writer's.
func (h *harness) s2(ctx context.Context) {
	sub := h.streamResult("S2", fmt.Sprintf("full subscription of %s (a log table of t's rows) then a burst of %d rows appended once it opened (the write not timed), rows/s", streamTable, h.burstRows()), "rows/s", true)
	scan := h.streamResult("S2scan", "QueryArrow read of the same rows, rows/s", "rows/s", true)
	for run := 0; run < h.cfg.runs; run++ {
		a, b, w, err := h.s2Run(ctx)
		h.record(sub, colFluss, a, err)
		h.record(scan, colFluss, b, err)
		if err != nil {
			return
		}
		fmt.Printf("  S2  fluss    run %d: subscription %s, QueryArrow %s (%d rows; the burst's write, not timed, took %v)\n",
			run+1, format(a, "rows/s"), format(b, "rows/s"), h.stRows, w.Round(time.Millisecond))
		sub.notes[colFluss] = fmt.Sprintf("the burst's AppendArrow (not timed) took %v in the last run", w.Round(time.Millisecond))
	}
}

func (h *harness) s2Run(ctx context.Context) (subRate, scanRate float64, write time.Duration, err error) {
	burst := h.burstRows()
	from, to := h.stRows, h.stRows+burst
	recs := readyBatches(h.g, from, to)
	defer releaseAll(recs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := h.fluss.sqlDB.Conn(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	defer conn.Close()
	start := time.Now()
	sub, err := fluss.Subscribe(ctx, conn, streamTable, fluss.SubscribeOptions{StartupMode: fluss.StartupFull})
	if err != nil {
		return 0, 0, 0, err
	}
	defer sub.Close()
	t0 := time.Now()
	if err := h.fluss.appendBatches(ctx, streamTable, recs); err != nil {
		return 0, 0, 0, fmt.Errorf("S2 burst: %w", err)
	}
	write = time.Since(t0)
	sum, err := streamRead(sub, "S2", to)
	d := time.Since(start) - write
	if err != nil {
		return 0, 0, 0, err
	}
	h.stRows = to
	if err := checkScan("S2 subscription", to, sum, to, idSum(0, to)); err != nil {
		return 0, 0, 0, err
	}
	sub.Close()
	sd, err := h.arrowRead(ctx, "S2 QueryArrow", to, idSum(0, to), streamQuery)
	if err != nil {
		return 0, 0, 0, err
	}
	return float64(to) / d.Seconds(), float64(to) / sd.Seconds(), write, nil
}

// s3 measures catching up: a subscription of st that stood at its end is
// resumed from its offsets after a tenth of -rows rows were appended, and
// is timed until it has returned them, against a QueryArrow read of the
// same rows, appended to a table of their own as well. The two reads
// take turns going first, each after a garbage collection.
func (h *harness) s3(ctx context.Context) {
	sub := h.streamResult("S3", fmt.Sprintf("subscription of %s resumed %d rows behind, until caught up", streamTable, h.burstRows()), "ms", false)
	scan := h.streamResult("S3scan", "QueryArrow read of the same rows, from a table holding only them", "ms", false)
	for run := 0; run < h.cfg.runs; run++ {
		a, b, err := h.s3Run(ctx)
		h.record(sub, colFluss, a, err)
		h.record(scan, colFluss, b, err)
		if err != nil {
			return
		}
		fmt.Printf("  S3  fluss    run %d: resumed subscription %s, QueryArrow %s\n", run+1, format(a, "ms"), format(b, "ms"))
	}
}

func (h *harness) s3Run(ctx context.Context) (subMs, scanMs float64, err error) {
	behind := h.burstRows()
	from, to := h.stRows, h.stRows+behind
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := h.fluss.sqlDB.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	// Where a consumer that read everything so far stands.
	at, err := fluss.Subscribe(ctx, conn, streamTable, fluss.SubscribeOptions{StartupMode: fluss.StartupLatest})
	if err != nil {
		return 0, 0, err
	}
	off, err := at.Offsets()
	at.Close()
	if err != nil {
		return 0, 0, err
	}
	// The same rows go into a table of their own, for the batch read to
	// read exactly them.
	h.s3Tables++
	copyTable := fmt.Sprintf("s3_%d", h.s3Tables)
	if _, err := h.fluss.sqlDB.ExecContext(ctx, `CREATE TABLE `+copyTable+` (`+flussColumns+`) WITH ('bucket.num' = '4')`); err != nil {
		return 0, 0, err
	}
	defer h.fluss.sqlDB.ExecContext(ctx, `DROP TABLE `+copyTable)
	recs := readyBatches(h.g, from, to)
	err = h.fluss.appendBatches(ctx, streamTable, recs)
	if err == nil {
		err = h.fluss.appendBatches(ctx, copyTable, recs)
	}
	releaseAll(recs)
	if err != nil {
		return 0, 0, fmt.Errorf("S3 append: %w", err)
	}
	h.stRows = to
	resume := func() (time.Duration, error) {
		start := time.Now()
		sub, err := fluss.Subscribe(ctx, conn, streamTable, fluss.SubscribeOptions{Offsets: off})
		if err != nil {
			return 0, err
		}
		defer sub.Close()
		sum, err := streamRead(sub, "S3", behind)
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		return d, checkScan("S3 subscription", behind, sum, behind, idSum(from, to))
	}
	scanRead := func() (time.Duration, error) {
		return h.arrowRead(ctx, "S3 QueryArrow", behind, idSum(from, to), `SELECT id, ts, k, v, s FROM `+copyTable)
	}
	// Neither read pays for the garbage of the appends or of the other
	// read, and they take turns going first.
	var d, sd time.Duration
	for i := range 2 {
		runtime.GC()
		if (i+h.s3Tables)%2 == 0 {
			d, err = resume()
		} else {
			sd, err = scanRead()
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return ms(d), ms(sd), nil
}

// idleCPUBar is SIDLE's bar, in CPU milliseconds per second, on what a
// waiting subscription adds to the idle engine: a tenth of a per cent of
// one core. Anything that polls, even a timer at 1 kHz, costs more.
const idleCPUBar = 1.0

// sidle measures the CPU time of the process over -idle-time twice, once:
// with the engine open and idle (SIDLEbase), then while a subscription
// waits on a table nobody writes (SIDLE); then it writes a row and checks
// the subscription returns it, so that the figure is a live
// subscription's. The bar is on the difference: what the idle engine
// costs (the storage's background goroutines, the Go runtime) is not the
// subscription's.
func (h *harness) sidle(ctx context.Context) {
	base := h.streamResult("SIDLEbase", fmt.Sprintf("process CPU time over %v with the engine open and idle, no subscription (one run), ms per s", h.cfg.idleTime), "ms/s", false)
	r := h.streamResult("SIDLE", fmt.Sprintf("process CPU time over %v while a subscription waits for a commit (one run), ms per s", h.cfg.idleTime), "ms/s", false)
	b, v, err := h.idleRun(ctx)
	h.record(base, colFluss, b, err)
	h.record(r, colFluss, v, err)
	if err == nil {
		fmt.Printf("  SIDLE fluss  %s of CPU over %v with a waiting subscription, %s without\n", format(v, "ms/s"), h.cfg.idleTime, format(b, "ms/s"))
	}
}

// idleCPU is the process's CPU time per second of wall time while wait
// waits.
func idleCPU(wait func() error) (float64, error) {
	c0, err := processCPU()
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := wait(); err != nil {
		return 0, err
	}
	c1, err := processCPU()
	if err != nil {
		return 0, err
	}
	return ms(c1-c0) / time.Since(t0).Seconds(), nil
}

func (h *harness) idleRun(ctx context.Context) (base, sub float64, err error) {
	if _, err := processCPU(); err != nil {
		return 0, 0, err
	}
	if _, err := h.fluss.sqlDB.ExecContext(ctx, `CREATE TABLE sidle (id BIGINT NOT NULL) WITH ('bucket.num' = '4')`); err != nil {
		return 0, 0, err
	}
	// What the workloads before left behind (garbage, memory to return
	// to the system) is not the subscription's.
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(200 * time.Millisecond)
	if base, err = idleCPU(func() error { time.Sleep(h.cfg.idleTime); return nil }); err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := h.fluss.sqlDB.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	s, err := fluss.Subscribe(ctx, conn, "sidle", fluss.SubscribeOptions{StartupMode: fluss.StartupLatest})
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	got := make(chan error, 1)
	go func() {
		_, err := streamRead(s, "SIDLE", 1)
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	sub, err = idleCPU(func() error {
		select {
		case err := <-got:
			return fmt.Errorf("SIDLE subscription returned before any write: %v", err)
		case <-time.After(h.cfg.idleTime):
			return nil
		}
	})
	if err != nil {
		return 0, 0, err
	}
	if _, err := h.fluss.sqlDB.ExecContext(ctx, `INSERT INTO sidle VALUES (1)`); err != nil {
		return 0, 0, err
	}
	select {
	case err := <-got:
		if err != nil {
			return 0, 0, err
		}
	case <-time.After(10 * time.Second):
		return 0, 0, errors.New("SIDLE subscription did not return the row written after the idle time within 10 s")
	}
	return base, sub, nil
}
