package fluss_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/flusslite/fluss"
)

// subChange is one row a subscription returned.
type subChange struct {
	kind      string
	partition string
	bucket    int32
	offset    int64 // -1: a row of the state
	id        int64
}

func conn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func subscribeT(t *testing.T, ctx context.Context, db *sql.DB, table string, opts fluss.SubscribeOptions) *fluss.Subscription {
	t.Helper()
	if opts.Allocator == nil {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		t.Cleanup(func() { mem.AssertSize(t, 0) })
		opts.Allocator = mem
	}
	s, err := fluss.Subscribe(ctx, conn(t, db), table, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// next reads n rows; the id is the first column after the system ones.
func next(t *testing.T, s *fluss.Subscription, n int) []subChange {
	t.Helper()
	var out []subChange
	for len(out) < n {
		require.True(t, s.Next(), "after %d of %d rows: %v", len(out), n, s.Err())
		out = append(out, batchChanges(t, s.RecordBatch())...)
	}
	return out
}

// batchChanges are the rows of one batch of a subscription.
func batchChanges(t *testing.T, rec arrow.RecordBatch) []subChange {
	t.Helper()
	require.Equal(t, "_change_type", rec.Schema().Field(0).Name)
	var out []subChange
	for i := range int(rec.NumRows()) {
		c := subChange{
			kind:   rec.Column(0).(*array.String).Value(i),
			bucket: rec.Column(2).(*array.Int32).Value(i),
			offset: -1,
			id:     rec.Column(5).(*array.Int64).Value(i),
		}
		if p := rec.Column(1).(*array.String); p.IsValid(i) {
			c.partition = p.Value(i)
		}
		if o := rec.Column(3).(*array.Int64); o.IsValid(i) {
			c.offset = o.Value(i)
			require.True(t, rec.Column(4).IsValid(i), "a change has its commit time")
		}
		out = append(out, c)
	}
	return out
}

// requireOrdered checks that each bucket's offsets only grow by one.
func requireOrdered(t *testing.T, rows []subChange, from map[string]int64) {
	t.Helper()
	last := map[string]int64{}
	for k, v := range from {
		last[k] = v - 1
	}
	for _, r := range rows {
		key := fmt.Sprintf("%s/%d", r.partition, r.bucket)
		if prev, ok := last[key]; ok {
			require.Equal(t, prev+1, r.offset, "bucket %s", key)
		}
		last[key] = r.offset
	}
}

func TestSubscribeConcurrentTransactionsExactlyOnce(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
	db, _ := openDB(t, "default.bucket.number=3")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL, p STRING) PARTITIONED BY (p)`)
	mustExec(t, db, `CREATE TABLE other (id BIGINT NOT NULL)`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{StartupMode: fluss.StartupLatest})

	// Writers commit transactions across partitions (new ones too),
	// buckets and tables while the subscription reads.
	const writers, txs, per = 4, 25, 4
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range txs {
				tx, err := db.Begin()
				if err != nil {
					t.Error(err)
					return
				}
				for k := range per {
					id := (w*txs+i)*per + k
					if _, err := tx.Exec(`INSERT INTO ev VALUES (?, ?)`, id, fmt.Sprintf("p%d", id%5)); err != nil {
						t.Error(err)
					}
				}
				if _, err := tx.Exec(`INSERT INTO other VALUES (?)`, i); err != nil {
					t.Error(err)
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	rows := next(t, s, writers*txs*per)
	wg.Wait()
	requireOrdered(t, rows, nil)
	seen := map[int64]bool{}
	for _, r := range rows {
		require.Equal(t, "+A", r.kind)
		require.False(t, seen[r.id], "id %d twice", r.id)
		seen[r.id] = true
		require.Equal(t, fmt.Sprintf("p%d", r.id%5), r.partition)
	}
	require.Len(t, seen, writers*txs*per, "partitions created after a latest start are read from their beginning")
}

func TestSubscribeResumeFromOffsets(t *testing.T) {
	dir := t.TempDir() + "/db"
	db, err := sql.Open("fluss", dir+"?default.bucket.number=2")
	require.NoError(t, err)
	mustExec(t, db, `CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	ctx := context.Background()

	// A full start: the state as +I rows, then the changes.
	c, err := db.Conn(ctx)
	require.NoError(t, err)
	s, err := fluss.Subscribe(ctx, c, "t", fluss.SubscribeOptions{Columns: []string{"id", "v"}})
	require.NoError(t, err)
	_, err = s.Offsets()
	require.ErrorContains(t, err, "still reading the table's state")
	state := next(t, s, 3)
	for _, r := range state {
		require.Equal(t, "+I", r.kind)
		require.Equal(t, int64(-1), r.offset)
	}
	mustExec(t, db, `UPDATE t SET v = 'b2' WHERE id = 2`)
	mustExec(t, db, `DELETE FROM t WHERE id = 3`)
	got := next(t, s, 3)
	// Ids 2 and 3 sit in two buckets, read side by side: the update's
	// -U and +U come in their bucket's order, the delete before or
	// after them.
	kinds := []string{got[0].kind, got[1].kind, got[2].kind}
	require.Contains(t, [][]string{{"-U", "+U", "-D"}, {"-D", "-U", "+U"}}, kinds)
	off, err := s.Offsets()
	require.NoError(t, err)
	saved, err := json.Marshal(off)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, c.Close())
	mustExec(t, db, `INSERT INTO t VALUES (4, 'd')`)
	require.NoError(t, db.Close())

	// After a reopen, resuming returns exactly what came after.
	db = reopen(t, dir)
	mustExec(t, db, `INSERT INTO t VALUES (5, 'e')`)
	o, err := fluss.ParseOffsets(saved)
	require.NoError(t, err)
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r := subscribeT(t, ctx2, db, "t", fluss.SubscribeOptions{Columns: []string{"id"}, Offsets: o})
	rows := next(t, r, 2)
	require.ElementsMatch(t, []int64{4, 5}, []int64{rows[0].id, rows[1].id})
	for _, x := range rows {
		require.Equal(t, "+I", x.kind)
	}
	_, err = fluss.Subscribe(ctx, conn(t, db), "t", fluss.SubscribeOptions{Offsets: o, StartupMode: fluss.StartupLatest})
	require.ErrorContains(t, err, "has no startup mode")
	mustExec(t, db, `CREATE TABLE u (id BIGINT NOT NULL)`)
	_, err = fluss.Subscribe(ctx, conn(t, db), "u", fluss.SubscribeOptions{Offsets: o})
	require.ErrorContains(t, err, "offsets to resume from are of table id")
	_, err = fluss.ParseOffsets([]byte(`{"table": 1}`))
	require.ErrorContains(t, err, "subscription offsets")
}

func reopen(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("fluss", dir+"?default.bucket.number=2")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSubscribeFiltersAndChangelog(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL, p STRING, amount INT) PARTITIONED BY (p)`)
	mustExec(t, db, `INSERT INTO ev VALUES (1, 'a', 5), (2, 'a', 50), (3, 'b', 50)`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{Columns: []string{"id", "amount"}, Where: "p = ? AND amount > ?", Args: []any{"a", 10}, StartupMode: fluss.StartupEarliest})
	rows := next(t, s, 1)
	require.Equal(t, int64(2), rows[0].id)
	require.Equal(t, "a", rows[0].partition)
	require.Equal(t, "_partition", s.Schema().Field(1).Name)
	mustExec(t, db, `INSERT INTO ev VALUES (4, 'b', 99), (5, 'a', 1), (6, 'a', 60)`)
	rows = next(t, s, 1)
	require.Equal(t, int64(6), rows[0].id)

	// t$changelog, with its own columns.
	cl := subscribeT(t, ctx, db, "ev$changelog", fluss.SubscribeOptions{Columns: []string{"id", "_change_type"}, Where: "p = 'b'"})
	rows = next(t, cl, 2)
	require.ElementsMatch(t, []int64{3, 4}, []int64{rows[0].id, rows[1].id})

	for _, tc := range []struct {
		table string
		opts  fluss.SubscribeOptions
		want  string
	}{
		{"ev", fluss.SubscribeOptions{StartupMode: "timestamp"}, "startup mode \"timestamp\""},
		{"ev", fluss.SubscribeOptions{Columns: []string{}}, "reads no column"},
		{"ev", fluss.SubscribeOptions{Where: "nope = 1"}, "nope"},
		{"missing", fluss.SubscribeOptions{}, "missing"},
		{"ev", fluss.SubscribeOptions{Where: "id = ?"}, "placeholder"},
	} {
		_, err := fluss.Subscribe(ctx, conn(t, db), tc.table, tc.opts)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestSubscribeCancelAndPartitionDrop(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL, p STRING) PARTITIONED BY (p)`)
	mustExec(t, db, `INSERT INTO ev VALUES (1, 'a'), (2, 'b')`)
	ctx, cancel := context.WithCancel(context.Background())
	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{})
	require.Len(t, next(t, s, 2), 2)
	mustExec(t, db, `ALTER TABLE ev DROP PARTITION (p = 'b')`)
	mustExec(t, db, `INSERT INTO ev VALUES (3, 'a')`)
	require.Equal(t, int64(3), next(t, s, 1)[0].id, "a dropped partition ends its buckets, the others go on")
	off, err := s.Offsets()
	require.NoError(t, err)
	require.Len(t, off.Buckets, 1)
	require.Equal(t, "a", off.Buckets[0].Partition)

	done := make(chan bool)
	go func() { done <- s.Next() }()
	time.Sleep(30 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case ok := <-done:
		require.False(t, ok)
	case <-time.After(2 * time.Second):
		t.Fatal("cancel did not end Next")
	}
	require.Less(t, time.Since(start), time.Second)
	require.ErrorIs(t, s.Err(), context.Canceled)
}

func TestSubscribeFullReadsTheLakeFirst(t *testing.T) {
	db, _ := openDB(t, "tiering=off&default.bucket.number=2")
	for _, ddl := range []string{
		`CREATE TABLE lg (id BIGINT NOT NULL) WITH ('table.datalake.enabled' = 'true')`,
		`CREATE TABLE kv (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true')`,
	} {
		mustExec(t, db, ddl)
	}
	for _, table := range []string{"lg", "kv"} {
		mustExec(t, db, `INSERT INTO `+table+` VALUES `+map[string]string{"lg": "(1), (2)", "kv": "(1, 1), (2, 2)"}[table])
		queryAll(t, db, `CALL sys.tier('`+table+`')`)
		mustExec(t, db, `INSERT INTO `+table+` VALUES `+map[string]string{"lg": "(3)", "kv": "(3, 3)"}[table])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, table := range []string{"lg", "kv"} {
		s := subscribeT(t, ctx, db, table, fluss.SubscribeOptions{Columns: []string{"id"}})
		state := next(t, s, 3)
		ids := []int64{}
		for _, r := range state {
			require.Equal(t, int64(-1), r.offset, "%s: a row of the state", table)
			ids = append(ids, r.id)
		}
		require.ElementsMatch(t, []int64{1, 2, 3}, ids, table)
		mustExec(t, db, `INSERT INTO `+table+` VALUES `+map[string]string{"lg": "(4)", "kv": "(4, 4)"}[table])
		r := next(t, s, 1)[0]
		require.Equal(t, int64(4), r.id)
		require.Equal(t, map[string]string{"lg": "+A", "kv": "+I"}[table], r.kind)
		require.GreaterOrEqual(t, r.offset, int64(0))
	}
}

// TestSubscribeExactlyOnceConsumer runs the README's recipe: a consumer
// copies a log table into another, storing its offsets in the same
// transaction as the rows; stopped at arbitrary points and resumed from
// what it stored, it leaves every row copied once.
func TestSubscribeExactlyOnceConsumer(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=3")
	mustExec(t, db, `CREATE TABLE src (id BIGINT NOT NULL)`)
	mustExec(t, db, `CREATE TABLE dst (id BIGINT NOT NULL)`)
	mustExec(t, db, `CREATE TABLE consumer_offsets (name STRING NOT NULL, offsets STRING, PRIMARY KEY (name) NOT ENFORCED)`)
	const total = 300
	go func() {
		for i := range total {
			if _, err := db.Exec(`INSERT INTO src VALUES (?)`, i); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	// consume copies up to stopAfter batches, then stops as a crash would.
	consume := func(stopAfter int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		opts := fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest}
		var js string
		switch err := db.QueryRowContext(ctx, `SELECT offsets FROM consumer_offsets WHERE name = 'copy'`).Scan(&js); err {
		case nil:
			o, err := fluss.ParseOffsets([]byte(js))
			require.NoError(t, err)
			opts = fluss.SubscribeOptions{Offsets: o}
		case sql.ErrNoRows:
		default:
			require.NoError(t, err)
		}
		c := conn(t, db)
		sub, err := fluss.Subscribe(ctx, c, "src", opts)
		require.NoError(t, err)
		defer sub.Close()
		for range stopAfter {
			require.True(t, sub.Next(), "%v", sub.Err())
			rec := sub.RecordBatch()
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			ids := rec.Column(5).(*array.Int64)
			for i := range ids.Len() {
				_, err := tx.Exec(`INSERT INTO dst VALUES (?)`, ids.Value(i))
				require.NoError(t, err)
			}
			off, err := sub.Offsets()
			require.NoError(t, err)
			b, err := json.Marshal(off)
			require.NoError(t, err)
			_, err = tx.Exec(`INSERT INTO consumer_offsets VALUES ('copy', ?)`, string(b))
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
		}
	}
	count := func() (n, distinct int64) {
		require.NoError(t, db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT id) FROM dst`).Scan(&n, &distinct))
		return n, distinct
	}
	for round := 0; ; round++ {
		consume(1 + round%4)
		if n, _ := count(); n == total {
			break
		}
		require.Less(t, round, 10*total, "the consumer makes no progress")
	}
	n, distinct := count()
	require.Equal(t, int64(total), n)
	require.Equal(t, int64(total), distinct, "no row copied twice")
}

// TestSubscribeFromTimestamp starts at the first batch committed at or
// after a time, found through the time index, by the Go API and the SQL
// hint; a time in the future is refused.
func TestSubscribeFromTimestamp(t *testing.T) {
	db, _ := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := db.ExecContext(ctx, `CREATE TABLE ev (id BIGINT, amount BIGINT)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO ev VALUES (1, 10), (2, 20)`)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)
	from := time.Now()
	time.Sleep(5 * time.Millisecond)
	_, err = db.ExecContext(ctx, `INSERT INTO ev VALUES (3, 30)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO ev VALUES (4, 40)`)
	require.NoError(t, err)

	s := subscribeT(t, ctx, db, "ev", fluss.SubscribeOptions{StartupMode: fluss.StartupTimestamp, StartupTimestamp: from})
	rows := next(t, s, 2)
	require.Equal(t, []int64{3, 4}, []int64{rows[0].id, rows[1].id}, "only what was committed at or after the time")

	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	q := fmt.Sprintf(`SELECT /*+ OPTIONS('scan.mode'='streaming', 'scan.startup.mode'='timestamp', 'scan.startup.timestamp'='%d') */ id FROM ev`, from.UnixMilli())
	r, err := db.QueryContext(sctx, q)
	require.NoError(t, err)
	var got []int64
	for len(got) < 2 && r.Next() {
		var id int64
		require.NoError(t, r.Scan(&id))
		got = append(got, id)
	}
	require.Equal(t, []int64{3, 4}, got)
	scancel()
	_ = r.Close()

	for _, opts := range []fluss.SubscribeOptions{
		{StartupMode: fluss.StartupTimestamp, StartupTimestamp: time.Now().Add(time.Hour)},
		{StartupMode: fluss.StartupLatest, StartupTimestamp: from},
	} {
		_, err := fluss.Subscribe(ctx, conn(t, db), "ev", opts)
		require.Error(t, err, "%+v", opts)
	}
	_, err = fluss.Subscribe(ctx, conn(t, db), "ev", fluss.SubscribeOptions{StartupMode: fluss.StartupTimestamp, StartupTimestamp: time.Now().Add(time.Hour)})
	require.ErrorContains(t, err, "in the future")
}

// A partition dropped while a full start reads the table's state leaves
// the subscription: the state of the others and the changes after it
// arrive, and nothing fails.
func TestSubscriptionFullStateOfDroppedPartition(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	mustExec(t, db, `CREATE TABLE kv (id BIGINT NOT NULL, p STRING NOT NULL, v BIGINT, PRIMARY KEY (id, p) NOT ENFORCED) PARTITIONED BY (p) WITH ('bucket.num' = '1')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := fluss.Subscribe(ctx, conn(t, db), "kv", fluss.SubscribeOptions{StartupMode: fluss.StartupFull})
	require.NoError(t, err)
	defer sub.Close()
	require.True(t, sub.Next(), "%v", sub.Err())
	first := modelRows(sub, "kv")
	require.Len(t, first, 1)
	// Drop a partition whose state is not read yet.
	gone := "c"
	if first[0].partition == "c" {
		gone = "b"
	}
	mustExec(t, db, fmt.Sprintf(`ALTER TABLE kv DROP PARTITION (p = '%s')`, gone))
	mustExec(t, db, `INSERT INTO kv VALUES (4, 'a', 4)`)
	seen := map[int64]bool{first[0].id: true}
	for !seen[4] {
		require.True(t, sub.Next(), "%v", sub.Err())
		for _, c := range modelRows(sub, "kv") {
			require.NotEqual(t, gone, c.partition, "a row of the dropped partition")
			seen[c.id] = true
		}
	}
	require.NoError(t, sub.Err())
}
