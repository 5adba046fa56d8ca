package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flusslite/fluss"
)

// lifecycleRows is the size of the table the lifecycle matrix reads, in
// lifecycleBatches inserts: many record batches, so that a cancelled
// read still has batches to fetch after its first row.
const (
	lifecycleRows    = 2000
	lifecycleBatches = 40
)

// cursor is one open result, whatever API opened it.
type cursor interface {
	next() bool // the next row (or record batch, for Arrow)
	err() error
	close() error
}

type sqlCursor struct{ rows *sql.Rows }

func (c sqlCursor) next() bool   { return c.rows.Next() }
func (c sqlCursor) err() error   { return c.rows.Err() }
func (c sqlCursor) close() error { return c.rows.Close() }

type arrowCursor struct{ rr array.RecordReader }

func (c arrowCursor) next() bool { return c.rr.Next() }
func (c arrowCursor) err() error { return c.rr.Err() }
func (c arrowCursor) close() error {
	c.rr.Release()
	return nil
}

// lifecycleAPI opens a query through one API. open returns the cursor
// and, for the "still usable" check, a function counting the table's rows
// through the same handle; done ends what the API began (a transaction).
type lifecycleAPI struct {
	name  string
	setup func(t *testing.T, db *sql.DB) (open func(ctx context.Context, q string) (cursor, error), count func() int, done func())
}

const lifecycleQuery = `SELECT id, v FROM big`

var lifecycleAPIs = []lifecycleAPI{
	{"db.Query", func(t *testing.T, db *sql.DB) (func(context.Context, string) (cursor, error), func() int, func()) {
		open := func(ctx context.Context, q string) (cursor, error) {
			rows, err := db.QueryContext(ctx, q)
			return sqlCursor{rows}, err
		}
		return open, func() int { return len(txRows(t, db, lifecycleQuery)) }, func() {}
	}},
	{"Stmt.Query", func(t *testing.T, db *sql.DB) (func(context.Context, string) (cursor, error), func() int, func()) {
		stmt, err := db.Prepare(lifecycleQuery)
		require.NoError(t, err)
		open := func(ctx context.Context, _ string) (cursor, error) {
			rows, err := stmt.QueryContext(ctx)
			return sqlCursor{rows}, err
		}
		count := func() int {
			rows, err := stmt.Query()
			require.NoError(t, err)
			defer rows.Close()
			n := 0
			for rows.Next() {
				n++
			}
			require.NoError(t, rows.Err())
			return n
		}
		return open, count, func() { require.NoError(t, stmt.Close()) }
	}},
	{"Tx.Query", func(t *testing.T, db *sql.DB) (func(context.Context, string) (cursor, error), func() int, func()) {
		tx, err := db.BeginTx(context.Background(), nil)
		require.NoError(t, err)
		open := func(ctx context.Context, q string) (cursor, error) {
			rows, err := tx.QueryContext(ctx, q)
			return sqlCursor{rows}, err
		}
		return open, func() int { return len(txRows(t, tx, lifecycleQuery)) }, func() { require.NoError(t, tx.Commit()) }
	}},
	{"QueryArrow", func(t *testing.T, db *sql.DB) (func(context.Context, string) (cursor, error), func() int, func()) {
		conn, err := db.Conn(context.Background())
		require.NoError(t, err)
		open := func(ctx context.Context, q string) (cursor, error) {
			rr, err := fluss.QueryArrow(ctx, conn, q)
			if err != nil {
				return nil, err
			}
			return arrowCursor{rr}, nil
		}
		count := func() int {
			rr, err := fluss.QueryArrow(context.Background(), conn, lifecycleQuery)
			require.NoError(t, err)
			defer rr.Release()
			n := 0
			for rr.Next() {
				n += int(rr.RecordBatch().NumRows())
			}
			require.NoError(t, rr.Err())
			return n
		}
		return open, count, func() { require.NoError(t, conn.Close()) }
	}},
}

// lifecycleModes are the ways a result ends. run reads from c, opened
// with ctx (whose end it may trigger through stop), and checks how it
// ended.
var lifecycleModes = []struct {
	name string
	// timeout makes the query's context a timeout instead of a cancel.
	timeout bool
	run     func(t *testing.T, c cursor, ctx context.Context, stop func())
}{
	{"exhaust", false, func(t *testing.T, c cursor, _ context.Context, _ func()) {
		n := 0
		for c.next() {
			n++
		}
		require.NoError(t, c.err())
		require.Positive(t, n)
		require.NoError(t, c.close())
	}},
	{"close early", false, func(t *testing.T, c cursor, _ context.Context, _ func()) {
		require.NoError(t, c.close())
		require.NoError(t, c.close(), "Close is idempotent")
		require.NoError(t, c.err())
	}},
	{"close mid-loop", false, func(t *testing.T, c cursor, _ context.Context, _ func()) {
		require.True(t, c.next())
		require.NoError(t, c.close())
		require.NoError(t, c.err())
	}},
	{"cancel", false, func(t *testing.T, c cursor, ctx context.Context, stop func()) {
		require.True(t, c.next())
		stop()
		for c.next() {
		}
		require.ErrorIs(t, c.err(), context.Canceled)
		require.Equal(t, ctx.Err(), c.err(), "ctx.Err() itself")
		require.NoError(t, c.close())
	}},
	{"timeout", true, func(t *testing.T, c cursor, ctx context.Context, _ func()) {
		require.True(t, c.next())
		<-ctx.Done()
		for c.next() {
		}
		require.ErrorIs(t, c.err(), context.DeadlineExceeded)
		require.Equal(t, ctx.Err(), c.err(), "ctx.Err() itself")
		require.NoError(t, c.close())
	}},
}

// TestRowsLifecycle is the lifecycle matrix: every way a result ends
// (read to the end, closed before or while reading, its context cancelled
// or timed out) through every API that returns one (db.Query, Stmt.Query,
// Tx.Query, fluss.QueryArrow). Each ends as it should (a cancelled or
// timed-out read fails with the context's error, never ErrBadConn), the
// handle stays usable, and once the database is closed no goroutine is
// left behind.
func TestRowsLifecycle(t *testing.T) {
	for _, api := range lifecycleAPIs {
		for _, mode := range lifecycleModes {
			t.Run(api.name+"/"+mode.name, func(t *testing.T) {
				ignore := goleak.IgnoreCurrent()
				db := openLifecycleDB(t)
				open, count, done := api.setup(t, db)

				ctx, cancel := context.WithCancel(context.Background())
				if mode.timeout {
					cancel()
					// Long enough for the query to open on a loaded
					// machine; the test waits for it to fire.
					ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
				}
				c, err := open(ctx, lifecycleQuery)
				require.NoError(t, err)
				mode.run(t, c, ctx, cancel)
				cancel()

				require.Equal(t, lifecycleRows, count(), "the handle still works")
				done()
				require.NoError(t, db.Close())
				goleak.VerifyNone(t, ignore)
			})
		}
	}
}

// openLifecycleDB opens an in-memory database holding table big of
// lifecycleRows rows in lifecycleBatches statements over 2 buckets.
func openLifecycleDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("fluss", ":memory:?tiering=off&kv.snapshot.interval=0&threads=2")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, `CREATE TABLE big (id BIGINT NOT NULL, v STRING) WITH ('bucket.num' = '2')`)
	per := lifecycleRows / lifecycleBatches
	var b strings.Builder
	for s := 0; s < lifecycleRows; s += per {
		b.Reset()
		b.WriteString("INSERT INTO big VALUES ")
		for i := s; i < s+per; i++ {
			if i > s {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d, 'v%d')", i, i)
		}
		mustExec(t, db, b.String())
	}
	return db
}
