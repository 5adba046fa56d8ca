package fluss_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// drain reads a bounded subscription to its end, failing if it does not
// end within the context's time.
func drain(t *testing.T, s *fluss.Subscription) []subChange {
	t.Helper()
	var out []subChange
	for {
		if !s.Next() {
			require.NoError(t, s.Err(), "a bounded subscription ends with no error")
			require.False(t, s.Next(), "and stays ended")
			return out
		}
		out = append(out, batchChanges(t, s.RecordBatch())...)
	}
}

// A latest-offset bounded read with writers committing all along returns
// exactly the rows below the high watermarks pinned at its start, each
// bucket's offsets from its start to its stop with no gap; buckets never
// written end at once.
func TestBoundedLatestOffsetWithConcurrentWriters(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=4")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL, amount INT)`)
	mustExec(t, db, `CREATE TABLE one (id BIGINT NOT NULL)`)
	mustExec(t, db, `INSERT INTO one VALUES (1)`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var written atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO ev VALUES (?, 1)`, i); err != nil {
				return
			}
			written.Store(i)
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for written.Load() < 50 {
		time.Sleep(time.Millisecond)
	}

	before := written.Load()
	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest, Bounded: fluss.BoundedLatestOffset})
	rows := drain(t, s)
	for written.Load() < before+50 {
		time.Sleep(time.Millisecond) // the writers went on past the stops
	}
	off, err := s.Offsets()
	require.NoError(t, err)
	stops := map[int32]int64{}
	total := int64(0)
	for _, b := range off.Buckets {
		stops[b.Bucket] = b.Offset
		total += b.Offset
	}
	require.Len(t, stops, 4)
	require.Equal(t, total, int64(len(rows)), "every row below the stops, once")
	require.GreaterOrEqual(t, total, before, "every row committed before the start")
	seen := map[int32]int64{}
	ids := map[int64]bool{}
	for _, r := range rows {
		require.Equal(t, seen[r.bucket], r.offset, "bucket %d in offset order from 0", r.bucket)
		seen[r.bucket]++
		require.Equal(t, "+A", r.kind)
		require.False(t, ids[r.id], "id %d twice", r.id)
		ids[r.id] = true
	}
	for id := int64(1); id <= before; id++ {
		require.True(t, ids[id], "id %d was committed before the start", id)
	}
	// The same rows through database/sql, once more bounded at the start.
	r, err := db.QueryContext(ctx, `SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'latest-offset') */ id FROM ev`)
	require.NoError(t, err)
	n := 0
	for r.Next() {
		n++
	}
	require.NoError(t, r.Err())
	require.NoError(t, r.Close())
	require.GreaterOrEqual(t, int64(n), total)

	// Three of one's four buckets have nothing to read: they end at once.
	s = subscribeT(t, ctx, db, "one", fluss.SubscribeOptions{Bounded: fluss.BoundedLatestOffset})
	rows = drain(t, s)
	require.Len(t, rows, 1)
}

// A bounded read of a key table's changelog (not of its state) and of
// its t$changelog stops at the pinned high watermarks; the full start of
// a key table is refused.
func TestBoundedKeyTableChangelog(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE users (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO users VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `INSERT INTO users VALUES (1, 'c')`)
	mustExec(t, db, `DELETE FROM users WHERE id = 2`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	s := subscribeT(t, ctx, db, "users", fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest, Bounded: fluss.BoundedLatestOffset})
	mustExec(t, db, `INSERT INTO users VALUES (3, 'late')`) // after the stops
	rows := drain(t, s)
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r.kind]++
		require.NotEqual(t, int64(3), r.id, "committed after the start")
	}
	require.Equal(t, map[string]int{"+I": 2, "-U": 1, "+U": 1, "-D": 1}, kinds)

	q := func(hint, table string) ([]string, error) {
		r, err := db.QueryContext(ctx, `SELECT /*+ OPTIONS('scan.mode' = 'streaming', `+hint+`) */ _change_type, id FROM `+table)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var out []string
		for r.Next() {
			var ct string
			var id int64
			require.NoError(t, r.Scan(&ct, &id))
			out = append(out, fmt.Sprintf("%s %d", ct, id))
		}
		return out, r.Err()
	}
	got, err := q(`'scan.bounded.mode' = 'latest-offset'`, "`users$changelog`")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"insert 1", "insert 2", "update_before 1", "update_after 1", "delete 2", "insert 3"}, got)
	got, err = q(`'scan.startup.mode' = 'latest', 'scan.bounded.mode' = 'latest-offset'`, "`users$changelog`")
	require.NoError(t, err)
	require.Empty(t, got, "latest to latest-offset: nothing")

	_, err = fluss.Subscribe(ctx, conn(t, db), "users", fluss.SubscribeOptions{Bounded: fluss.BoundedLatestOffset})
	require.ErrorIs(t, err, fluss.ErrUnsupported)
	require.ErrorContains(t, err, "'scan.bounded.mode' = 'latest-offset' on primary-key table fluss.users needs startup mode 'earliest', 'latest' or 'timestamp'")
	r, err := db.QueryContext(ctx, `SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp' = '1') */ id FROM users`)
	if err == nil {
		r.Close()
	}
	require.ErrorContains(t, err, "'scan.bounded.mode' = 'timestamp' on primary-key table fluss.users")
}

// A timestamp bounded read stops before the first batch committed at or
// after the time; the time must not be in the future; a missing time is
// Fluss's error, in SQL and in the Go API.
func TestBoundedTimestamp(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL, amount INT)`)
	mustExec(t, db, `CREATE TABLE kv (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)`)
	for i := 1; i <= 3; i++ {
		mustExec(t, db, `INSERT INTO ev VALUES (?, 1)`, i)
		mustExec(t, db, `INSERT INTO kv VALUES (?, 1)`, i)
	}
	time.Sleep(5 * time.Millisecond)
	until := time.Now()
	time.Sleep(5 * time.Millisecond)
	for i := 4; i <= 6; i++ {
		mustExec(t, db, `INSERT INTO ev VALUES (?, 1)`, i)
		mustExec(t, db, `INSERT INTO kv VALUES (?, 1)`, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := func(rows []subChange) []int64 {
		var out []int64
		for _, r := range rows {
			out = append(out, r.id)
		}
		return out
	}
	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{Bounded: fluss.BoundedTimestamp, BoundedTimestamp: until})
	require.ElementsMatch(t, []int64{1, 2, 3}, ids(drain(t, s)))
	s = subscribeT(t, ctx, db, "kv", fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest, Bounded: fluss.BoundedTimestamp, BoundedTimestamp: until})
	require.ElementsMatch(t, []int64{1, 2, 3}, ids(drain(t, s)))

	r, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.startup.mode' = 'earliest', `+
		`'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp' = '%d') */ id FROM `+"`kv$changelog`", until.UnixMilli()))
	require.NoError(t, err)
	var got []int64
	for r.Next() {
		var id int64
		require.NoError(t, r.Scan(&id))
		got = append(got, id)
	}
	require.NoError(t, r.Err())
	r.Close()
	require.ElementsMatch(t, []int64{1, 2, 3}, got)

	// The 'yyyy-MM-dd HH:mm:ss' form, in the DSN's zone (UTC here): a
	// time before every commit reads nothing.
	r, err = db.QueryContext(ctx, `SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp' = '2001-01-01 00:00:00') */ id FROM ev`)
	require.NoError(t, err)
	require.False(t, r.Next())
	require.NoError(t, r.Err())
	r.Close()

	future := time.Now().Add(time.Hour)
	for q, want := range map[string]string{
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'timestamp') */ id FROM ev`:                                                                   "'scan.bounded.timestamp' is required in 'timestamp' bounded mode but missing.",
		fmt.Sprintf(`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp' = '%d') */ id FROM ev`, future.UnixMilli()): "is in the future",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'latest-offset', 'scan.bounded.timestamp' = '1') */ id FROM ev`:                               "'scan.bounded.timestamp' is set but 'scan.bounded.mode' is 'latest-offset'",
		`SELECT /*+ OPTIONS('scan.mode' = 'streaming', 'scan.bounded.mode' = 'soon') */ id FROM ev`:                                                                        "'scan.bounded.mode' = 'soon': want 'unbounded', 'latest-offset' or 'timestamp'",
		`SELECT /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ id FROM ev`:                                                                                          "'scan.bounded.mode' applies to a streaming read",
	} {
		rows, err := db.QueryContext(ctx, q)
		if err == nil {
			rows.Close()
		}
		require.ErrorContains(t, err, want, q)
	}
	for _, tc := range []struct {
		opts fluss.SubscribeOptions
		want string
	}{
		{fluss.SubscribeOptions{Bounded: fluss.BoundedTimestamp}, "'BoundedTimestamp' is required in \"timestamp\" bounded mode but missing"},
		{fluss.SubscribeOptions{Bounded: fluss.BoundedTimestamp, BoundedTimestamp: future}, "is in the future"},
		{fluss.SubscribeOptions{Bounded: fluss.BoundedLatestOffset, BoundedTimestamp: until}, "BoundedTimestamp is set but the bounded mode is \"latest-offset\""},
		{fluss.SubscribeOptions{Bounded: "forever"}, "bounded mode \"forever\""},
	} {
		_, err := fluss.Subscribe(ctx, conn(t, db), "ev", tc.opts)
		require.ErrorContains(t, err, tc.want, "%+v", tc.opts)
	}
}

// A latest-offset bounded read of a partitioned table does not read a
// partition created after its start (its stop is 0), and a read with
// nothing to read ends at once.
func TestBoundedNewPartitionAndEmpty(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL, p STRING) PARTITIONED BY (p)`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{Bounded: fluss.BoundedLatestOffset})
	require.Empty(t, drain(t, s), "no partition: ends at once")

	mustExec(t, db, `INSERT INTO ev VALUES (1, 'a')`)
	s = subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest, Bounded: fluss.BoundedLatestOffset})
	mustExec(t, db, `INSERT INTO ev VALUES (2, 'b'), (3, 'a')`)
	rows := drain(t, s)
	require.Len(t, rows, 1)
	require.Equal(t, int64(1), rows[0].id)
}
