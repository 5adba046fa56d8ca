package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// streamRows reads n rows of a streaming query, each as a string of its
// values, failing after 10 seconds.
func streamRows(t *testing.T, rows *sql.Rows, n int) []string {
	t.Helper()
	cols, err := rows.Columns()
	require.NoError(t, err)
	out := make([]string, 0, n)
	for len(out) < n {
		require.True(t, rows.Next(), "after %d of %d rows: %v", len(out), n, rows.Err())
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		s := ""
		for i, v := range vals {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprint(v)
		}
		out = append(out, s)
	}
	return out
}

func streamQuery(t *testing.T, db *sql.DB, mode, q string, args ...any) (*sql.Rows, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	hint := "/*+ OPTIONS('scan.mode' = 'streaming'"
	if mode != "" {
		hint += ", 'scan.startup.mode' = '" + mode + "'"
	}
	rows, err := db.QueryContext(ctx, "SELECT "+hint+") */ "+q, args...)
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); rows.Close() })
	return rows, cancel
}

func TestStreamingSelectModes(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE orders (id BIGINT NOT NULL, amount DOUBLE)`)
	mustExec(t, db, `CREATE TABLE users (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO orders VALUES (1, 10), (2, 20)`)
	mustExec(t, db, `INSERT INTO users VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `UPDATE users SET name = 'a2' WHERE id = 1`)

	// full, on a log table: the earliest offsets, then what comes.
	full, _ := streamQuery(t, db, "", `id, amount FROM orders WHERE amount > 5`)
	require.ElementsMatch(t, []string{"1 10", "2 20"}, streamRows(t, full, 2))
	// latest: nothing written before it, and it waits rather than fail.
	latest, _ := streamQuery(t, db, "latest", `id FROM orders`)
	// full, on a key table: the state as of one cut, then its changes.
	state, _ := streamQuery(t, db, "full", `id, name FROM users`)
	require.ElementsMatch(t, []string{"1 a2", "2 b"}, streamRows(t, state, 2))
	// the changelog carries each change's type.
	changes, _ := streamQuery(t, db, "earliest", "_change_type, id, name FROM `users$changelog`")
	require.Equal(t, []string{"insert 1 a", "update_before 1 a", "update_after 1 a2", "insert 2 b"}, sortedByBucket(streamRows(t, changes, 4)))

	mustExec(t, db, `INSERT INTO orders VALUES (3, 1), (4, 40)`)
	mustExec(t, db, `UPDATE users SET name = 'b2' WHERE id = 2`)
	require.Equal(t, []string{"4 40"}, streamRows(t, full, 1), "the WHERE filters the stream")
	require.ElementsMatch(t, []string{"3", "4"}, streamRows(t, latest, 2))
	require.Equal(t, []string{"2 b", "2 b2"}, streamRows(t, state, 2), "the update's -U and +U images")
	require.Equal(t, []string{"update_before 2 b", "update_after 2 b2"}, streamRows(t, changes, 2))
}

// sortedByBucket keeps the order of the rows of each id (one bucket's
// changes come in offset order) and orders ids.
func sortedByBucket(rows []string) []string {
	byID := map[byte][]string{}
	var ids []byte
	for _, r := range rows {
		id := strings.Fields(r)[1][0] // the row's id, after its change type
		if byID[id] == nil {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], r)
	}
	out := []string{}
	for _, want := range []byte("123456789") {
		out = append(out, byID[want]...)
	}
	return out
}

func TestStreamingSelectCancel(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL)`)
	rows, cancel := streamQuery(t, db, "latest", `id FROM t`)
	done := make(chan error)
	go func() {
		rows.Next()
		done <- rows.Err()
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(2 * time.Second):
		t.Fatal("a cancelled streaming query did not return")
	}
	require.Less(t, time.Since(start), time.Second)
	require.NoError(t, rows.Close())
	// The connection is usable afterwards.
	mustExec(t, db, `INSERT INTO t VALUES (1)`)
}

func TestStreamingSelectRefusals(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, k STRING)`)
	for q, want := range map[string]string{
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming') */ COUNT(*) FROM t`:                              "a streaming read has no aggregate",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming') */ id FROM t ORDER BY id`:                        "has no ORDER BY",
		`SELECT /*+ OPTIONS('scan.mode' = 'stream') */ id FROM t`:                                       "'scan.mode' = 'stream'; use 'batch' or 'streaming'",
		`SELECT /*+ OPTIONS('scan.startup.mode' = 'latest') */ id FROM t`:                               "'scan.startup.mode' applies to t$changelog",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.startup.mode' = 'timestamp') */ id FROM t`: "'scan.startup.timestamp' is required int 'TIMESTAMP' startup mode but missing.",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.startup.mode' = 'soon') */ id FROM t`:      "'scan.startup.mode' = 'soon': want 'full', 'earliest', 'latest' or 'timestamp'",
		`SELECT id FROM t UNION SELECT /*+ OPTIONS('scan.mode' = 'streaming') */ id FROM t`:             "is a SELECT of one table",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming') */ a.id FROM t a JOIN t b ON a.id = b.id`:        "reads one table",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.startup.mode' = 'offsets') */ id FROM t`:   "fluss.Subscribe",
	} {
		rows, err := db.Query(q)
		if err == nil {
			rows.Close()
		}
		require.ErrorContains(t, err, want, q)
	}
}
