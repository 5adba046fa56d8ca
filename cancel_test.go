package fluss_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// cancelRows is the size of the table the cancellation tests read: large
// enough, in 64kb log segments, that a scan is still running when it is
// cancelled.
const cancelRows = 200_000

// cancelBound is what the tests assert a cancellation takes at most. The
// target is 100ms; the bound is looser so that a loaded CI machine (and
// the race detector) does not fail them. cancelLatency logs the real
// figure.
const cancelBound = time.Second

// openCancelDBs returns two databases on one engine in a fresh
// directory, holding table big of cancelRows rows (id, v) in 4 buckets:
// one reads with 4 workers, the other in the caller's goroutine
// (threads=1).
func openCancelDBs(t *testing.T) map[string]*sql.DB {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	open := func(threads int) *sql.DB {
		db, err := sql.Open("fluss", fmt.Sprintf("%s?log.segment.file-size=64kb&default.bucket.number=4&threads=%d", dir, threads))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbs := map[string]*sql.DB{"threads=4": open(4), "threads=1": open(1)}
	db := dbs["threads=4"]
	mustExec(t, db, `CREATE TABLE big (id BIGINT NOT NULL, v STRING)`)
	const chunk = 10_000
	var b strings.Builder
	for start := 0; start < cancelRows; start += chunk {
		b.Reset()
		b.WriteString("INSERT INTO big VALUES ")
		for i := start; i < start+chunk; i++ {
			if i > start {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,'v%d')", i, i%97)
		}
		mustExec(t, db, b.String())
	}
	return dbs
}

// checkGoroutines fails the test if, when it ends, a goroutine runs that
// did not run when it called checkGoroutines: every worker a query starts
// must be gone once the query is over.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// cancelMode is how a test ends its query's context.
type cancelMode struct {
	name string
	// ctx returns the query's context and, for a cancel, the function
	// the test calls to cancel it (nil for a timeout, which fires on its
	// own after d).
	ctx func(d time.Duration) (context.Context, context.CancelFunc, func())
}

var cancelModes = []cancelMode{
	{"cancel", func(time.Duration) (context.Context, context.CancelFunc, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		return ctx, cancel, cancel
	}},
	{"timeout", func(d time.Duration) (context.Context, context.CancelFunc, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		return ctx, cancel, nil
	}},
}

// cancelQueries are the queries of the matrix, each in two shapes:
// streaming (rows come out while the scan runs; the consumer is between
// rows when the context ends) and blocking (one Next runs the whole scan
// because nothing passes the filter, so the context ends inside it). The
// aggregate and sort queries belong here too.
var cancelQueries = []struct {
	name, query string
	// blocking: the first Next does not return before the scan ends.
	blocking bool
}{
	{"scan", `SELECT id, v FROM big`, false},
	{"scan filtered", `SELECT id, v FROM big WHERE id % 7 = 100`, true},
}

// TestCancelMatrix runs every query of cancelQueries under every
// cancelMode: the query fails with the context's error (never
// driver.ErrBadConn) within cancelBound of the context's end, no
// goroutine is left behind, and the connection pool still works.
func TestCancelMatrix(t *testing.T) {
	dbs := openCancelDBs(t)
	for _, threads := range []string{"threads=4", "threads=1"} {
		db := dbs[threads]
		// Warm the pool so its connection is not counted as a leak.
		require.Len(t, queryAll(t, db, `SELECT id FROM big LIMIT 3`), 3)
		for _, q := range cancelQueries {
			for _, m := range cancelModes {
				t.Run(threads+"/"+q.name+"/"+m.name, func(t *testing.T) {
					checkGoroutines(t)
					latency := cancelLatency(t, db, q.query, q.blocking, m)
					t.Logf("%s %s: returned %v after the context ended", q.name, m.name, latency)
					require.Less(t, latency, cancelBound)
					// The pool still works.
					var n int64
					require.NoError(t, db.QueryRow(`SELECT id FROM big WHERE id = 12345`).Scan(&n))
					require.EqualValues(t, 12345, n)
				})
			}
		}
	}
}

// cancelLatency runs query under m's context and returns how long after
// the context ended the query returned its error. For a blocking query
// the context ends d after the first Next starts (cancel) or after it was
// made (timeout); a streaming query's ends after its first 1000 rows.
// When the scan ended before its context, or the context before the
// query started, it retries with a shorter or a longer d.
func cancelLatency(t *testing.T, db *sql.DB, query string, blocking bool, m cancelMode) time.Duration {
	t.Helper()
	d := 5 * time.Millisecond
	for range 12 {
		latency, retry := tryCancel(t, db, query, blocking, m, d)
		switch retry {
		case 0:
			return latency
		case 1:
			d *= 2
		case -1:
			d = max(d/2, 50*time.Microsecond)
		}
		t.Logf("retry with d=%v", d)
	}
	t.Fatal("the context never ended while the scan ran")
	return 0
}

// tryCancel is one attempt of cancelLatency; retry is 0 when it measured,
// 1 when the context ended before the query started (d too short), -1
// when the query ended before its context did (d too long).
func tryCancel(t *testing.T, db *sql.DB, query string, blocking bool, m cancelMode, d time.Duration) (latency time.Duration, retry int) {
	t.Helper()
	ctx, release, cancel := m.ctx(d)
	defer release()
	rows, err := db.QueryContext(ctx, query)
	if err != nil && ctx.Err() != nil {
		require.Equal(t, ctx.Err(), err)
		return 0, 1
	}
	require.NoError(t, err)
	defer rows.Close()
	endedC := make(chan time.Time, 1)
	go func() {
		<-ctx.Done()
		endedC <- time.Now()
	}()
	defer release() // ends the goroutine whatever happens
	if blocking {
		if cancel != nil {
			time.AfterFunc(d, cancel)
		}
		require.False(t, rows.Next(), "the filter passes no row")
	} else {
		n := 0
		for rows.Next() {
			if n++; n == 1000 {
				if cancel != nil {
					cancel()
				} else {
					<-ctx.Done()
				}
			}
		}
		require.Less(t, n, cancelRows, "the scan was still running when the context ended")
	}
	returned := time.Now()
	err = rows.Err()
	if err == nil {
		return 0, -1
	}
	require.False(t, errors.Is(err, driver.ErrBadConn))
	require.Equal(t, ctx.Err(), err)
	require.NoError(t, rows.Close())
	return max(returned.Sub(<-endedC), 0), 0
}
