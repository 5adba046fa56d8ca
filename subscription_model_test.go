package fluss_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// modelChange is one row a subscription returned, in a model test.
type modelChange struct {
	table           string
	kind, partition string
	bucket          int32
	offset          int64 // -1: a row of a full start's state
	id, v           int64
}

// modelMarker is the partition the model test's last commits go to, to
// wake the subscriptions that wait; its rows are left out of the checks.
const modelMarker = "zz"

// modelSub is one subscription of the model test and what it returned.
type modelSub struct {
	name, table string
	opts        fluss.SubscribeOptions
	// resumeEvery, when positive, closes the subscription after that many
	// batches and resumes a new one from its offsets, through JSON.
	resumeEvery int
	out         []modelChange
	resumes     int
}

// modelPoint is the tables' state after one of the model test's commits,
// as the writers' own model has it: the high watermarks of a table's
// buckets ("table/partition/bucket") and its rows ("id/partition" -> v).
type modelPoint struct {
	table string
	hw    map[string]int64
	rows  map[string]int64
}

// modelTables is the writers' model of kv, lg and lk: what each holds
// after each commit, independent of what the engine returns.
type modelTables struct {
	mu     sync.Mutex
	rows   map[string]map[string]int64 // table -> "id/partition" -> v
	points []modelPoint
}

func newModelTables() *modelTables {
	return &modelTables{rows: map[string]map[string]int64{"kv": {}, "lg": {}, "lk": {}}}
}

func (m *modelTables) set(table string, id int64, p string, v int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[table][fmt.Sprintf("%d/%s", id, p)] = v
}

func (m *modelTables) delete(table string, id int64, p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows[table], fmt.Sprintf("%d/%s", id, p))
}

func (m *modelTables) dropPartition(table, p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.rows[table] {
		if _, kp, _ := strings.Cut(k, "/"); kp == p {
			delete(m.rows[table], k)
		}
	}
}

// record adds a point for each table: its high watermarks now and the
// model's rows. Only one writer writes each table, so nothing commits to
// it between its last commit and this.
func (m *modelTables) record(ctx context.Context, db *sql.DB, tables ...string) error {
	for _, table := range tables {
		hw, err := tableHighWatermarks(ctx, db, table)
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.points = append(m.points, modelPoint{table: table, hw: hw, rows: maps.Clone(m.rows[table])})
		m.mu.Unlock()
	}
	return nil
}

// TestSubscriptionModel runs writers (transactions across tables and
// partitions, upserts, deletes, partitions added and dropped, KV
// snapshots, tiering rounds, a segment roll every few commits) while
// subscriptions of every startup mode read, some closed and resumed from
// their offsets as they go. Caught up to the high watermarks the writers
// left, each subscription's changes are, per bucket, consecutive offsets
// (nothing twice, nothing missed; from 0 for earliest starts and
// partitions created later), every subscription agrees with every other
// on what each offset holds, and its output folded per key (kv) or
// collected (lg, lk) is the table. Along the way, each bucket of each
// subscription, folded at every commit it read up to, holds the rows the
// writers' model puts in that bucket after that commit; a full start's
// state, at the offset its first change follows. Last, a subscription
// stopped half-way resumes after the engine is reopened exactly where it
// stopped.
func TestSubscriptionModel(t *testing.T) {
	db, dsn := openDB(t, "default.bucket.number=2&tiering=off&log.segment.file-size=1kb")
	for _, ddl := range []string{
		`CREATE TABLE kv (id BIGINT NOT NULL, p STRING NOT NULL, v BIGINT, PRIMARY KEY (id, p) NOT ENFORCED) PARTITIONED BY (p)`,
		`CREATE TABLE lg (id BIGINT NOT NULL, p STRING, v BIGINT) PARTITIONED BY (p)`,
		`CREATE TABLE lk (id BIGINT NOT NULL, p STRING, v BIGINT) WITH ('table.datalake.enabled' = 'true')`,
	} {
		mustExec(t, db, ddl)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c))
	// Rows before any subscription: full starts have a state to read.
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'p0', 1), (2, 'p0', 2), (3, 'p1', 3)`)
	mustExec(t, db, `INSERT INTO lg VALUES (1, 'p0', 1), (2, 'p1', 2)`)
	mustExec(t, db, `INSERT INTO lk VALUES (1, 'x', 1), (2, 'x', 2)`)
	queryAll(t, db, `CALL sys.kv_snapshot('kv')`)
	queryAll(t, db, `CALL sys.tier('lk')`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'p0', 10)`)
	mustExec(t, db, `INSERT INTO lk VALUES (3, 'x', 3)`)
	midway := time.Now()
	mustExec(t, db, `INSERT INTO lg VALUES (3, 'p0', 3)`)
	model := newModelTables()
	for _, r := range []struct {
		table string
		id    int64
		p     string
		v     int64
	}{{"kv", 1, "p0", 10}, {"kv", 2, "p0", 2}, {"kv", 3, "p1", 3}, {"lg", 1, "p0", 1}, {"lg", 2, "p1", 2}, {"lg", 3, "p0", 3}, {"lk", 1, "x", 1}, {"lk", 2, "x", 2}, {"lk", 3, "x", 3}} {
		model.set(r.table, r.id, r.p, r.v)
	}
	require.NoError(t, model.record(context.Background(), db, "kv", "lg", "lk"))

	var subs []*modelSub
	for _, table := range []string{"kv", "lg", "lk"} {
		subs = append(subs,
			&modelSub{name: table + "/full", table: table, opts: fluss.SubscribeOptions{StartupMode: fluss.StartupFull}},
			&modelSub{name: table + "/earliest", table: table, opts: fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest}},
			&modelSub{name: table + "/latest", table: table, opts: fluss.SubscribeOptions{StartupMode: fluss.StartupLatest}},
			&modelSub{name: table + "/timestamp", table: table, opts: fluss.SubscribeOptions{StartupMode: fluss.StartupTimestamp, StartupTimestamp: midway}},
			&modelSub{name: table + "/resumed", table: table, opts: fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest}, resumeEvery: 1 + rng.IntN(5)},
			&modelSub{name: table + "/full-resumed", table: table, opts: fluss.SubscribeOptions{}, resumeEvery: 3 + rng.IntN(5)},
		)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	// target, once set, is the high watermarks the readers stop at.
	var target atomic.Pointer[map[string]int64]
	var readers sync.WaitGroup
	for _, s := range subs {
		sub, err := fluss.Subscribe(ctx, conn(t, db), s.table, s.opts)
		require.NoError(t, err, s.name)
		readers.Add(1)
		go func() {
			defer readers.Done()
			if err := s.read(ctx, db, sub, &target); err != nil {
				t.Errorf("%s: %v", s.name, err)
				cancel() // the others would wait for a target that never comes
			}
		}()
	}

	// The writers: one owns kv and lg and their partitions (so that no
	// write creates a partition another just dropped), one runs KV
	// snapshots, tiering rounds and lk's writes.
	var writers sync.WaitGroup
	writers.Add(2)
	go func() {
		defer writers.Done()
		if err := modelWrites(ctx, db, rand.New(rand.NewPCG(seed, 1)), 150, model); err != nil {
			t.Errorf("writer: %v", err)
		}
	}()
	go func() {
		defer writers.Done()
		r := rand.New(rand.NewPCG(seed, 2))
		for i := range 40 {
			var err error
			switch r.IntN(4) {
			case 0:
				_, err = db.ExecContext(ctx, `CALL sys.kv_snapshot('kv')`)
			case 1:
				_, err = db.ExecContext(ctx, `CALL sys.tier('lk')`)
			default:
				_, err = db.ExecContext(ctx, `INSERT INTO lk VALUES (?, 'x', ?), (?, 'y', ?)`, 100+2*i, i, 101+2*i, i)
				if err == nil {
					model.set("lk", int64(100+2*i), "x", int64(i))
					model.set("lk", int64(101+2*i), "y", int64(i))
					err = model.record(ctx, db, "lk")
				}
			}
			if err != nil {
				t.Errorf("snapshots and tiering: %v", err)
				return
			}
		}
	}()
	writers.Wait()
	if t.Failed() {
		cancel()
		readers.Wait()
		return
	}
	hw := map[string]int64{}
	for _, table := range []string{"kv", "lg", "lk"} {
		for k, v := range highWatermarks(t, ctx, db, table) {
			hw[table+"/"+k] = v
		}
	}
	target.Store(&hw)
	// Commits after the target wake the readers that wait.
	mustExec(t, db, `INSERT INTO kv VALUES (0, 'zz', 0)`)
	mustExec(t, db, `INSERT INTO lg VALUES (0, 'zz', 0)`)
	mustExec(t, db, `INSERT INTO lk VALUES (0, 'zz', 0)`)
	readers.Wait()
	require.False(t, t.Failed())

	// What each offset holds, as the first subscription that read it saw
	// it; every other must agree.
	at := map[string]modelChange{}
	for _, s := range subs {
		checkModelOutput(t, db, s, at, hw)
	}
	// The bucket of every row any subscription returned; one row, one
	// bucket.
	bucketOf := map[string]string{}
	for _, c := range at {
		k, bk := c.rowKey(), c.bucketKey()
		if was, ok := bucketOf[k]; ok {
			require.Equal(t, was, bk, "row %s in two buckets", k)
		}
		bucketOf[k] = bk
	}
	checked := 0
	for _, s := range subs {
		checked += checkModelPoints(t, s, model.points, bucketOf)
	}
	require.Positive(t, checked)

	// Stopped half-way, the engine reopened, resumed from the offsets.
	half := &modelSub{name: "kv/reopened", table: "kv", opts: fluss.SubscribeOptions{StartupMode: fluss.StartupEarliest}}
	sub, err := fluss.Subscribe(ctx, conn(t, db), "kv", half.opts)
	require.NoError(t, err)
	// Up to 5 batches: a run whose writes left kv fewer stops where kv
	// ends.
	for i := 0; i < 5 && !reachedModel(sub, "kv", hw); i++ {
		require.True(t, sub.Next(), "%v", sub.Err())
		half.out = append(half.out, modelRows(sub, "kv")...)
	}
	off, err := sub.Offsets()
	require.NoError(t, err)
	js, err := json.Marshal(off)
	require.NoError(t, err)
	require.NoError(t, sub.Close())
	require.NoError(t, db.Close())
	db2, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db2.Close() })
	o, err := fluss.ParseOffsets(js)
	require.NoError(t, err)
	sub, err = fluss.Subscribe(ctx, conn(t, db2), "kv", fluss.SubscribeOptions{Offsets: o})
	require.NoError(t, err)
	defer sub.Close()
	for !reachedModel(sub, "kv", hw) {
		require.True(t, sub.Next(), "%v", sub.Err())
		half.out = append(half.out, modelRows(sub, "kv")...)
	}
	checkModelOutput(t, db2, half, at, hw)
	resumes := 0
	for _, s := range subs {
		resumes += s.resumes
	}
	require.Positive(t, resumes)
	t.Logf("%d subscriptions, %d offsets checked, %d bucket states checked at %d commit points, %d resumes from offsets", len(subs)+1, len(at), checked, len(model.points), resumes)
}

// modelWrites commits n random writes to kv and lg: transactions across
// both tables and several partitions, upserts, deletes, partitions added
// and dropped (names never used again).
func modelWrites(ctx context.Context, db *sql.DB, r *rand.Rand, n int, m *modelTables) error {
	live := []string{"p0", "p1"}
	nextPart, nextID := 2, int64(1000)
	for range n {
		var err error
		switch k := r.IntN(10); {
		case k == 0 && len(live) > 1:
			i := r.IntN(len(live))
			p := live[i]
			live = slices.Delete(live, i, i+1)
			for _, table := range []string{"kv", "lg"} {
				if _, err = db.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s DROP PARTITION (p = '%s')`, table, p)); err != nil {
					break
				}
				m.dropPartition(table, p)
			}
		case k <= 1:
			p := fmt.Sprintf("p%d", nextPart)
			nextPart++
			live = append(live, p)
			for _, table := range []string{"kv", "lg"} {
				if _, err = db.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ADD PARTITION (p = '%s')`, table, p)); err != nil {
					break
				}
			}
		case k <= 2:
			id, p := int64(r.IntN(20)), live[r.IntN(len(live))]
			if _, err = db.ExecContext(ctx, `DELETE FROM kv WHERE id = ? AND p = ?`, id, p); err == nil {
				m.delete("kv", id, p)
			}
		default:
			var tx *sql.Tx
			if tx, err = db.BeginTx(ctx, nil); err != nil {
				return err
			}
			var writes []func()
			for range 1 + r.IntN(4) {
				p := live[r.IntN(len(live))]
				id, v := int64(r.IntN(20)), int64(r.IntN(1000))
				if _, err = tx.Exec(`INSERT INTO kv VALUES (?, ?, ?)`, id, p, v); err != nil {
					break
				}
				lid, lv := nextID, int64(r.IntN(1000))
				if _, err = tx.Exec(`INSERT INTO lg VALUES (?, ?, ?)`, lid, p, lv); err != nil {
					break
				}
				writes = append(writes, func() { m.set("kv", id, p, v); m.set("lg", lid, p, lv) })
				nextID++
			}
			if err == nil {
				if err = tx.Commit(); err == nil {
					for _, w := range writes {
						w()
					}
				}
			} else {
				_ = tx.Rollback()
			}
		}
		if err != nil {
			return err
		}
		if err := m.record(ctx, db, "kv", "lg"); err != nil {
			return err
		}
	}
	return nil
}

// read reads until the target is set and reached, closing and resuming
// every resumeEvery batches.
func (s *modelSub) read(ctx context.Context, db *sql.DB, sub *fluss.Subscription, target *atomic.Pointer[map[string]int64]) error {
	defer func() { sub.Close() }()
	batches := 0
	for {
		if hw := target.Load(); hw != nil && reachedModel(sub, s.table, *hw) {
			return nil
		}
		if !sub.Next() {
			return fmt.Errorf("after %d batches: %w", batches, sub.Err())
		}
		s.out = append(s.out, modelRows(sub, s.table)...)
		batches++
		if s.resumeEvery == 0 || batches%s.resumeEvery != 0 {
			continue
		}
		off, err := sub.Offsets()
		if err != nil {
			continue // still reading a full start's state
		}
		js, err := json.Marshal(off)
		if err != nil {
			return err
		}
		if err := sub.Close(); err != nil {
			return err
		}
		o, err := fluss.ParseOffsets(js)
		if err != nil {
			return err
		}
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		if sub, err = fluss.Subscribe(ctx, c, s.table, fluss.SubscribeOptions{Offsets: o}); err != nil {
			return err
		}
		s.resumes++
	}
}

// reachedModel reports whether the subscription's offsets are at or past
// the high watermark of every bucket of table in hw.
func reachedModel(sub *fluss.Subscription, table string, hw map[string]int64) bool {
	off, err := sub.Offsets()
	if err != nil {
		return false
	}
	have := map[string]int64{}
	for _, b := range off.Buckets {
		have[fmt.Sprintf("%s/%s/%d", table, b.Partition, b.Bucket)] = b.Offset
	}
	for k, v := range hw {
		if strings.HasPrefix(k, table+"/") && have[k] < v {
			return false
		}
	}
	return true
}

// highWatermarks are the next offsets of every bucket of table, as a
// latest start takes them, by "partition/bucket".
func highWatermarks(t *testing.T, ctx context.Context, db *sql.DB, table string) map[string]int64 {
	t.Helper()
	hw, err := tableHighWatermarks(ctx, db, table)
	require.NoError(t, err)
	out := map[string]int64{}
	for k, v := range hw {
		out[strings.TrimPrefix(k, table+"/")] = v
	}
	return out
}

// tableHighWatermarks are the next offsets of every bucket of table, by
// "table/partition/bucket".
func tableHighWatermarks(ctx context.Context, db *sql.DB, table string) (map[string]int64, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	sub, err := fluss.Subscribe(ctx, c, table, fluss.SubscribeOptions{StartupMode: fluss.StartupLatest})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	off, err := sub.Offsets()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, b := range off.Buckets {
		out[fmt.Sprintf("%s/%s/%d", table, b.Partition, b.Bucket)] = b.Offset
	}
	return out, nil
}

// rowKey is the row's key in modelTables: "table/id/partition".
func (c modelChange) rowKey() string { return fmt.Sprintf("%s/%d/%s", c.table, c.id, c.partition) }

// bucketKey is the bucket the row came from: "table/partition/bucket"
// (lk is not partitioned: its partition is empty).
func (c modelChange) bucketKey() string {
	if c.table == "lk" {
		return fmt.Sprintf("lk//%d", c.bucket)
	}
	return fmt.Sprintf("%s/%s/%d", c.table, c.partition, c.bucket)
}

// modelRows are the rows of the subscription's current batch of table.
func modelRows(sub *fluss.Subscription, table string) []modelChange {
	rec := sub.RecordBatch()
	col := map[string]int{}
	for i, f := range rec.Schema().Fields() {
		col[f.Name] = i
	}
	var out []modelChange
	for i := range int(rec.NumRows()) {
		c := modelChange{
			table:  table,
			kind:   rec.Column(col[fluss.ColumnChangeType]).(*array.String).Value(i),
			bucket: rec.Column(col[fluss.ColumnBucket]).(*array.Int32).Value(i),
			offset: -1,
			id:     rec.Column(col["id"]).(*array.Int64).Value(i),
			v:      rec.Column(col["v"]).(*array.Int64).Value(i),
		}
		if p := rec.Column(col[fluss.ColumnPartition]).(*array.String); p.IsValid(i) {
			c.partition = p.Value(i)
		}
		if p := rec.Column(col["p"]).(*array.String); c.partition == "" && p.IsValid(i) {
			c.partition = p.Value(i) // lk is not partitioned: its p is a column
		}
		if o := rec.Column(col[fluss.ColumnLogOffset]).(*array.Int64); o.IsValid(i) {
			c.offset = o.Value(i)
		}
		out = append(out, c)
	}
	return out
}

// checkModelOutput checks one subscription's output against the others'
// (at) and against its table.
func checkModelOutput(t *testing.T, db *sql.DB, s *modelSub, at map[string]modelChange, hw map[string]int64) {
	t.Helper()
	partitioned := s.table != "lk"
	last := map[string]int64{}
	stateDone := false
	state := map[string]int64{} // "id/partition" -> v
	for i, c := range s.out {
		if c.partition == modelMarker {
			continue
		}
		key := fmt.Sprintf("%d/%s", c.id, c.partition)
		if c.offset < 0 {
			require.False(t, stateDone, "%s: row %d: a state row after a change", s.name, i)
			require.Equal(t, map[string]string{"kv": "+I", "lg": "+A", "lk": "+A"}[s.table], c.kind, s.name)
			_, dup := state[key]
			require.False(t, dup, "%s: %s twice in the state", s.name, key)
			state[key] = c.v
			continue
		}
		stateDone = true
		bk := c.bucketKey()
		prev, seen := last[bk]
		switch {
		case seen:
			require.Equal(t, prev+1, c.offset, "%s: bucket %s: offsets follow each other (row %d)", s.name, bk, i)
		case s.opts.StartupMode == fluss.StartupEarliest && s.opts.Offsets == nil:
			require.Zero(t, c.offset, "%s: bucket %s starts at its log start", s.name, bk)
		}
		last[bk] = c.offset
		ok := fmt.Sprintf("%s@%d", bk, c.offset)
		if ref, had := at[ok]; had {
			require.Equal(t, ref, c, "%s: offset %s as the others read it", s.name, ok)
		} else {
			at[ok] = c
		}
		switch c.kind {
		case "+A", "+I", "+U":
			if s.table != "kv" {
				_, dup := state[key]
				require.False(t, dup, "%s: %s twice", s.name, key)
			}
			state[key] = c.v
		case "-D":
			delete(state, key)
		case "-U":
		default:
			t.Fatalf("%s: change type %q", s.name, c.kind)
		}
	}
	// Every bucket read to the high watermark: the last offset is hw-1.
	for bk, off := range last {
		if want, live := hw[bk]; live {
			require.Equal(t, want-1, off, "%s: bucket %s read to its high watermark", s.name, bk)
		}
	}
	// Folded (or collected), the output is the table, but for what a
	// later start never saw (latest and timestamp start mid-log).
	if s.opts.StartupMode == fluss.StartupLatest || s.opts.StartupMode == fluss.StartupTimestamp {
		return
	}
	q := fmt.Sprintf(`SELECT id, p, v FROM %s WHERE p <> '%s'`, s.table, modelMarker)
	want := map[string]int64{}
	for _, row := range queryAll(t, db, q) {
		want[fmt.Sprintf("%v/%v", row[0], row[1])] = row[2].(int64)
	}
	live := map[string]bool{}
	for bk := range hw {
		if parts := strings.SplitN(bk, "/", 3); parts[0] == s.table {
			live[parts[1]] = true
		}
	}
	got := map[string]int64{}
	for key, v := range state {
		// Rows of dropped partitions are no longer in the table.
		if _, p, _ := strings.Cut(key, "/"); !partitioned || live[p] {
			got[key] = v
		}
	}
	require.Equal(t, want, got, "%s: the output folded is the table", s.name)
}

// checkModelPoints checks one subscription against the writers' model: a
// bucket read up to a commit point's high watermark, folded, holds the
// rows the model puts in that bucket there (bucketOf: the bucket of each
// row); a full start's state, of a bucket that has changes after it, is
// the model's at the offset of the first. It returns the bucket states
// checked. Latest and timestamp starts fold only a suffix of the log,
// which no point's rows describe: they are left out.
func checkModelPoints(t *testing.T, s *modelSub, points []modelPoint, bucketOf map[string]string) int {
	t.Helper()
	if s.opts.StartupMode == fluss.StartupLatest || s.opts.StartupMode == fluss.StartupTimestamp {
		return 0
	}
	// at[bucket][hw] are the points that put the bucket at hw.
	at := map[string]map[int64][]*modelPoint{}
	for i := range points {
		p := &points[i]
		if p.table != s.table {
			continue
		}
		for bk, hw := range p.hw {
			if at[bk] == nil {
				at[bk] = map[int64][]*modelPoint{}
			}
			at[bk][hw] = append(at[bk][hw], p)
		}
	}
	want := func(p *modelPoint, bk string) map[string]int64 {
		out := map[string]int64{}
		for k, v := range p.rows {
			if bucketOf[s.table+"/"+k] == bk {
				out[s.table+"/"+k] = v
			}
		}
		return out
	}
	fold := map[string]map[string]int64{} // bucket -> row key -> v
	state := map[string]map[string]int64{}
	started := map[string]bool{}
	checked := 0
	check := func(bk string, next int64, got map[string]int64, what string) {
		for _, p := range at[bk][next] {
			require.Equal(t, want(p, bk), got, "%s: bucket %s %s, at offset %d", s.name, bk, what, next)
			checked++
		}
	}
	for _, c := range s.out {
		if c.partition == modelMarker {
			continue
		}
		bk := c.bucketKey()
		if c.offset < 0 {
			if state[bk] == nil {
				state[bk] = map[string]int64{}
			}
			state[bk][c.rowKey()] = c.v
			continue
		}
		if fold[bk] == nil {
			fold[bk] = maps.Clone(state[bk])
			if fold[bk] == nil {
				fold[bk] = map[string]int64{}
			}
			if !started[bk] && (state[bk] != nil || s.opts.StartupMode == fluss.StartupFull) {
				check(bk, c.offset, fold[bk], "as the full start's state")
			}
			started[bk] = true
		}
		switch c.kind {
		case "+A", "+I", "+U":
			fold[bk][c.rowKey()] = c.v
		case "-D":
			delete(fold[bk], c.rowKey())
		}
		check(bk, c.offset+1, fold[bk], "folded")
	}
	return checked
}
