package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// The commit tests use two tables: ev, a log table partitioned by p with
// two buckets, and kv, a primary-key table (pkColumns, keyed by id) with
// three.
func createCommitTables(t *testing.T, e *Engine) {
	t.Helper()
	createTable(t, e, "ev", []metadata.Column{
		{Name: "id", Type: metadata.BigIntType(), NotNull: true},
		col("p", metadata.StringType()),
	}, []string{"p"}, map[string]string{metadata.OptBucketNum: "2"})
	createPK(t, e, "kv", map[string]string{metadata.OptBucketNum: "3"})
}

func evRows(p string, ids ...int) [][]any {
	var rows [][]any
	for _, id := range ids {
		rows = append(rows, []any{int64(id), p})
	}
	return rows
}

func baselineCommit() []Write {
	return []Write{
		{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", 0, 1, 2, 3, 4, 5)},
		{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"v1", 1, 1}, {"v2", 2, 2}, {"v3", 3, 3}, {"v4", 4, 4}, {"v5", 5, 5}, {"v6", 6, 6}}},
	}
}

// targetCommit touches both tables, both partitions of ev (b is new) and
// several kv buckets, with writes that depend on earlier ones.
func targetCommit() []Write {
	return []Write{
		{Path: path("ev"), Kind: WriteAppend, Rows: append(evRows("a", 100, 101, 102), evRows("b", 103, 104, 105)...)},
		{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"x1", 1, 100}, {"v2", 2, 2}, {"x10", 10, 10}}},
		{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 4, nil}, {nil, 99, nil}}},
		{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"y11", 11, 11}}},
		{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 11, nil}}},
		{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{nil, 1, 111}}, Upsert: UpsertOptions{TargetColumns: []int{1, 2}}},
	}
}

var targetResults = []WriteResult{{6}, {2}, {1}, {1}, {1}, {1}}

// commitState renders what a reader sees of ev and kv: every ev row
// (sorted), the keys 0..20 of kv, and the high watermark of every bucket
// written to, whose sum proves that no stray batch is left in a log.
func commitState(t *testing.T, e *Engine) []string {
	t.Helper()
	var out []string
	ev, err := e.TableInfo(ctx, path("ev"))
	require.NoError(t, err)
	parts, err := e.ListPartitions(ctx, path("ev"))
	require.NoError(t, err)
	var evLines []string
	for _, p := range parts {
		for b := range int32(ev.NumBuckets) {
			tb := metadata.TableBucket{TableID: ev.TableID, PartitionID: p.ID, Bucket: b}
			h := hw(t, e, tb)
			if h == 0 {
				continue
			}
			out = append(out, fmt.Sprintf("ev %s/b%d hw=%d", p.Name, b, h))
			_, rows := readAll(t, e, tb, 0, -1, ReadOptions{})
			for _, r := range rows {
				evLines = append(evLines, fmt.Sprintf("ev %v", r))
			}
		}
	}
	kv, err := e.TableInfo(ctx, path("kv"))
	require.NoError(t, err)
	for b := range int32(kv.NumBuckets) {
		if h := hw(t, e, bucket(kv, b)); h > 0 {
			out = append(out, fmt.Sprintf("kv b%d hw=%d", b, h))
		}
	}
	slices.Sort(evLines)
	out = append(out, evLines...)
	for id := range 21 {
		if row := lookup(t, e, "kv", id); row != nil {
			out = append(out, fmt.Sprintf("kv %v", row))
		}
	}
	return out
}

func TestCommitIsAtomicAcrossTablesAndPartitions(t *testing.T) {
	dir := t.TempDir()
	var none, all []string
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		createCommitTables(t, e)
		_, err := e.Commit(ctx, baselineCommit())
		require.NoError(t, err)
		none = commitState(t, e)
		res, err := e.Commit(ctx, targetCommit())
		require.NoError(t, err)
		require.Equal(t, targetResults, res)
		all = commitState(t, e)
	}()
	require.NotEqual(t, none, all)
	for _, want := range []string{
		"ev [100 a]", "ev [105 b]",
		"kv [x1 1 111]", // upsert, then a partial update of n
		"kv [v2 2 2]", "kv [v3 3 3]", "kv [x10 10 10]",
	} {
		require.Contains(t, all, want)
	}
	for _, gone := range []string{"kv [v4 4 4]", "kv [y11 11 11]"} {
		require.NotContains(t, all, gone)
	}

	e, _ := testEngine(t, dir, nil)
	require.Equal(t, all, commitState(t, e), "a committed commit is all there after reopen")
	require.Zero(t, journalRecordBytes(t, DiskFS(), filepath.Join(dir, journalFile)), "Open empties the journal")
}

func TestCommitAppliesWritesInOrder(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createPK(t, e, "t", nil)
	log := createTable(t, e, "l", ordersColumns(), nil, nil)
	upsert(t, e, "t", []any{"a", 1, 1})

	res, err := e.Commit(ctx, []Write{
		{Path: path("t"), Kind: WriteUpsert, Rows: [][]any{{"b", 2, 2}}},
		{Path: path("l"), Kind: WriteAppend, Rows: [][]any{orderRow(1), orderRow(2)}},
		{Path: path("t"), Kind: WriteDelete, Rows: [][]any{{nil, 2, nil}, {nil, 1, nil}}},
		{Path: path("t"), Kind: WriteUpsert, Rows: [][]any{{"c", 1, 3}, {"c", 1, 3}}},
		{Path: path("l"), Kind: WriteAppend, Rows: [][]any{orderRow(3)}},
	})
	require.NoError(t, err)
	require.Equal(t, []WriteResult{{1}, {2}, {2}, {1}, {1}}, res)
	// One batch per bucket, holding every write's changes in order.
	require.Equal(t, []string{
		"0 +I a,1,1", "|",
		"1 +I b,2,2", "2 -D b,2,2", "3 -D a,1,1", "4 +I c,1,3",
	}, changelog(t, e, bucket(info, 0), 0))
	require.Nil(t, lookup(t, e, "t", 2))
	require.Equal(t, []any{"c", int64(1), int64(3)}, lookup(t, e, "t", 1))
	offsets, rows := readAll(t, e, bucket(log, 0), 0, -1, ReadOptions{Projection: []int{0}})
	require.Equal(t, []int64{0, 1, 2}, offsets)
	require.Equal(t, [][]any{{int64(1)}, {int64(2)}, {int64(3)}}, rows)

	// A commit that changes nothing writes nothing.
	res, err = e.Commit(ctx, []Write{{Path: path("t"), Kind: WriteUpsert, Rows: [][]any{{"c", 1, 3}}}})
	require.NoError(t, err)
	require.Equal(t, []WriteResult{{0}}, res)
	require.Equal(t, int64(5), hw(t, e, bucket(info, 0)))
	res, err = e.Commit(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, res)
}

func TestCommitRefusesBeforeWriting(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createCommitTables(t, e)
	_, err := e.Commit(ctx, baselineCommit())
	require.NoError(t, err)
	before := commitState(t, e)
	for _, tc := range []struct {
		writes []Write
		is     error
		msg    string
	}{
		{
			writes: []Write{
				{Path: path("ev"), Kind: WriteAppend, Rows: evRows("new", 7)},
				{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"x", nil, 1}}},
			},
			is:  metadata.ErrConstraint,
			msg: "write 2 of 2 (upsert fluss.kv)",
		},
		{
			writes: []Write{
				{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"x", 1, 1}}},
				{Path: path("kv"), Kind: WriteAppend, Rows: [][]any{{"x", 2, 2}}},
			},
			is:  metadata.ErrUnsupported,
			msg: "write 2 of 2 (append fluss.kv)",
		},
		{
			writes: []Write{
				{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", 8)},
				{Path: path("nope"), Kind: WriteAppend, Rows: evRows("a", 9)},
			},
			is:  metadata.ErrNotFound,
			msg: "write 2 of 2 (append fluss.nope)",
		},
		{
			writes: []Write{{Path: path("ev"), Kind: WriteAppend, Rows: [][]any{{int64(1)}}}},
			is:     metadata.ErrInvalidValue,
			msg:    "row 1 has 1 values",
		},
	} {
		_, err := e.Commit(ctx, tc.writes)
		require.ErrorIs(t, err, tc.is)
		require.ErrorContains(t, err, tc.msg)
	}
	require.Equal(t, before, commitState(t, e))
	parts, err := e.ListPartitions(ctx, path("ev"))
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, partitionNames(parts), "no partition is created for a refused commit")
}

// TestCommitCrashPoints stops a commit at every point (before each of its
// batches, and after its commit point: all batches written and fsynced)
// and reopens: before the commit point nothing of it survives, after it
// everything does.
func TestCommitCrashPoints(t *testing.T) { bothCommitPaths(t, testCommitCrashPoints) }

func testCommitCrashPoints(t *testing.T) {
	run := func(t *testing.T, stop func(batches int, recorded bool) bool) (none, after []string, stopped bool) {
		// A file system that outlives the engine, as a disk does; the
		// journal file is checked through it.
		fsys := NewMemFS()
		onFS := func(o *Options) { o.FS, o.InMemory, o.Dir = fsys, false, "db" }
		var armed atomic.Bool
		func() {
			e, _ := testEngine(t, "", func(o *Options) {
				onFS(o)
				o.TestingCrashCommit = func(batches int, recorded bool) bool {
					return armed.Load() && stop(batches, recorded)
				}
			})
			defer e.Close()
			createCommitTables(t, e)
			_, err := e.Commit(ctx, baselineCommit())
			require.NoError(t, err)
			none = commitState(t, e)
			armed.Store(true)
			_, err = e.Commit(ctx, targetCommit())
			if err == nil {
				return
			}
			stopped = true
			require.ErrorIs(t, err, errTestingCrash)
			require.Equal(t, none, commitState(t, e), "readers never see a stopped commit")
			_, err = e.Commit(ctx, baselineCommit())
			require.ErrorIs(t, err, metadata.ErrReadOnly)
		}()
		e, _ := testEngine(t, "", onFS)
		defer e.Close()
		after = commitState(t, e)
		require.Zero(t, journalRecordBytes(t, fsys, filepath.Join("db", journalFile)), "Open settles and empties the journal")
		// The engine works after recovery; its batches follow on at the
		// recovered log ends.
		_, err := e.Commit(ctx, []Write{{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", 1000, 1001)}})
		require.NoError(t, err)
		require.Len(t, commitState(t, e), len(after)+2)
		return none, after, stopped
	}

	// The reference: the commit done whole.
	var all []string
	{
		e, _ := testEngine(t, "", nil)
		createCommitTables(t, e)
		_, err := e.Commit(ctx, baselineCommit())
		require.NoError(t, err)
		_, err = e.Commit(ctx, targetCommit())
		require.NoError(t, err)
		all = commitState(t, e)
	}

	total := 0
	for k := 0; ; k++ {
		var seen int
		none, after, stopped := run(t, func(batches int, recorded bool) bool {
			seen = max(seen, batches)
			return !recorded && batches == k
		})
		if !stopped {
			total = seen
			require.Equal(t, all, after)
			break
		}
		require.Equal(t, none, after, "stopped after %d batches, before the commit point", k)
	}
	require.Greater(t, total, 4, "the commit writes several batches")

	_, after, stopped := run(t, func(batches int, recorded bool) bool { return recorded })
	require.True(t, stopped)
	require.Equal(t, all, after, "stopped after the commit point, before the done record, the KV store and the high watermarks")
}

// TestCommitFaultMatrix fails, one at a time, every file system call a
// multi-table commit makes (writes, fsyncs, renames, creations; ENOSPC
// and EIO by turns). The commit either succeeds or returns the error;
// what was committed before stays; the engine keeps working or refuses
// writes with ErrReadOnly; and after a reopen the state holds exactly all
// or none of the commit.
func TestCommitFaultMatrix(t *testing.T) { bothCommitPaths(t, testCommitFaultMatrix) }

func testCommitFaultMatrix(t *testing.T) {
	open := func(t *testing.T, fsys FS) *Engine {
		opts := DefaultOptions()
		opts.FS, opts.Dir = fsys, "db"
		e, err := Open(opts)
		require.NoError(t, err)
		return e
	}
	followUp := []Write{
		{Path: path("ev"), Kind: WriteAppend, Rows: evRows("c", 500, 501)},
		{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"f", 20, 20}, {"g", 19, 19}}},
	}
	// States: none, all, and each followed by the follow-up commit.
	states := func() (none, all, noneF, allF []string) {
		e := open(t, NewMemFS())
		defer e.Close()
		createCommitTables(t, e)
		_, err := e.Commit(ctx, baselineCommit())
		require.NoError(t, err)
		none = commitState(t, e)
		_, err = e.Commit(ctx, targetCommit())
		require.NoError(t, err)
		all = commitState(t, e)
		_, err = e.Commit(ctx, followUp)
		require.NoError(t, err)
		allF = commitState(t, e)

		e2 := open(t, NewMemFS())
		defer e2.Close()
		createCommitTables(t, e2)
		_, err = e2.Commit(ctx, baselineCommit())
		require.NoError(t, err)
		_, err = e2.Commit(ctx, followUp)
		require.NoError(t, err)
		noneF = commitState(t, e2)
		return
	}
	none, all, noneF, allF := states()

	// Count the calls of the commit.
	ffs := NewFaultFS(NewMemFS())
	e := open(t, ffs)
	createCommitTables(t, e)
	_, err := e.Commit(ctx, baselineCommit())
	require.NoError(t, err)
	ffs.FailNth(FaultAll, 0, nil)
	_, err = e.Commit(ctx, targetCommit())
	require.NoError(t, err)
	calls := ffs.Calls()
	require.NoError(t, e.Close())
	require.Greater(t, calls, int64(20))

	var failed, readOnly, keptWorking int
	for n := int64(1); n <= calls+1; n++ {
		errno := syscall.ENOSPC
		if n%2 == 0 {
			errno = syscall.EIO
		}
		ffs := NewFaultFS(NewMemFS())
		e := open(t, ffs)
		createCommitTables(t, e)
		_, err := e.Commit(ctx, baselineCommit())
		require.NoError(t, err)

		ffs.FailNth(FaultAll, n, errno)
		res, err := e.Commit(ctx, targetCommit())
		fired := ffs.Fired()
		ffs.Disarm()
		committed := err == nil
		if committed {
			require.Equal(t, targetResults, res)
			require.Equal(t, all, commitState(t, e), "call %d", n)
		} else {
			require.True(t, fired)
			failed++
			require.ErrorIs(t, err, errno, "call %d: the error names the cause", n)
			require.Equal(t, none, commitState(t, e), "call %d: a failed commit leaves nothing", n)
		}
		_, ferr := e.Commit(ctx, followUp)
		if ferr != nil {
			require.ErrorIs(t, ferr, metadata.ErrReadOnly, "call %d", n)
			readOnly++
		} else if !committed {
			keptWorking++
		}
		require.NoError(t, e.Close())

		e = open(t, ffs)
		want := map[[2]bool][]string{{false, false}: none, {true, false}: all, {false, true}: noneF, {true, true}: allF}[[2]bool{committed, ferr == nil}]
		require.Equal(t, want, commitState(t, e), "call %d (%v): after reopen", n, err)
		_, err = e.Commit(ctx, []Write{{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", 900)}})
		require.NoError(t, err, "call %d: the reopened engine works", n)
		require.NoError(t, e.Close())
	}
	require.Greater(t, failed, 10)
	require.NotZero(t, readOnly, "failed fsyncs turn the engine read-only")
	require.NotZero(t, keptWorking, "failed writes roll back and the engine goes on")
	t.Logf("%d calls, %d failed commits: %d left the engine read-only, %d kept it working", calls, failed, readOnly, keptWorking)
}

func TestConcurrentCommits(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	createCommitTables(t, e)
	const writers, commits = 4, 15
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		// Lookups and log reads race the commits (for -race).
		for {
			select {
			case <-stop:
				return
			default:
			}
			for g := range writers {
				if _, _, err := e.Lookup(ctx, path("kv"), []any{nil, g, nil}); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := e.ListPartitions(ctx, path("ev")); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for g := range writers {
		wg.Go(func() {
			for i := range commits {
				res, err := e.Commit(ctx, []Write{
					{Path: path("ev"), Kind: WriteAppend, Rows: evRows(fmt.Sprint(i%4), g*1000+i, g*1000+i+500)},
					{Path: path("kv"), Kind: WriteUpsert, Rows: [][]any{{"w", g, i}, {"x", 100 + g*100 + i, i}}},
					{Path: path("kv"), Kind: WriteDelete, Rows: [][]any{{nil, 100 + g*100 + i - 1, nil}}},
				})
				if err != nil {
					t.Error(err)
					return
				}
				if res[0].RowsAffected != 2 || res[1].RowsAffected != 2 || res[2].RowsAffected != int64(min(i, 1)) {
					t.Errorf("writer %d commit %d: results %v", g, i, res)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	state := commitState(t, e)
	n := 0
	for _, line := range state {
		if strings.HasPrefix(line, "ev [") {
			n++
		}
	}
	require.Equal(t, writers*commits*2, n)
	for g := range writers {
		require.Equal(t, []any{"w", int64(g), int64(commits - 1)}, lookup(t, e, "kv", g))
		row, found, err := e.Lookup(ctx, path("kv"), []any{nil, 100 + g*100 + commits - 1, nil})
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, "x", row[0])
	}
}

func TestCommitJournalIsKeptSmall(t *testing.T) {
	defer func(v int64) { journalCompactBytes = v }(journalCompactBytes)
	journalCompactBytes = 200
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	createCommitTables(t, e)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 15 {
				_, err := e.Commit(ctx, []Write{{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", g*100+i, g*100+i+50)}})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	require.Less(t, journalRecordBytes(t, DiskFS(), filepath.Join(dir, journalFile)), int64(600), "the journal is emptied once past its threshold")
	require.Equal(t, journalPreallocBytes(), fileSize(t, filepath.Join(dir, journalFile)), "the file keeps its size")
	state := commitState(t, e)
	require.Contains(t, state, "ev [350 a]")
}

func TestCommitJournalDamage(t *testing.T) {
	withoutRedo(t)
	dir := t.TempDir()
	crashed := func() {
		e, _ := testEngine(t, dir, func(o *Options) {
			o.TestingCrashCommit = func(batches int, recorded bool) bool { return batches == 2 && !recorded }
		})
		defer e.Close()
		if _, err := e.TableInfo(ctx, path("ev")); errors.Is(err, metadata.ErrNotFound) {
			createCommitTables(t, e)
		}
		_, err := e.Commit(ctx, targetCommit())
		require.ErrorIs(t, err, errTestingCrash)
	}
	crashed()
	jpath := filepath.Join(dir, journalFile)
	good, err := os.ReadFile(jpath)
	require.NoError(t, err)
	require.NotEmpty(t, good)

	// A torn record after the intent is an append that never completed.
	end := journalRecordBytes(t, DiskFS(), jpath)
	require.NotZero(t, end)
	torn := slices.Clone(good)
	copy(torn[end:], []byte{7, 0, 0})
	require.NoError(t, os.WriteFile(jpath, torn, 0o644))
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		state := commitState(t, e)
		require.NotContains(t, strings.Join(state, ";"), "ev [100", "the unfinished commit is rolled back")
	}()

	// Damage with a whole record after it is reported, not guessed at.
	crashed()
	good, err = os.ReadFile(jpath)
	require.NoError(t, err)
	end = journalRecordBytes(t, DiskFS(), jpath)
	bad := slices.Clone(good)
	copy(bad[end:], encodeJournalRecord(journalDone, 12345, nil))
	bad[journalHeaderSize+1] ^= 0xff
	require.NoError(t, os.WriteFile(jpath, bad, 0o644))
	opts := DefaultOptions()
	opts.Dir = dir
	_, err = Open(opts)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, journalFile)
	require.ErrorContains(t, err, "byte 0")
}

// TestCommitSurvivesPowerLoss repeats the crash points and the fault
// matrix, but then cuts the power: the engine reopens on what the worst
// disk would keep (only what was fsynced, only names whose directory was
// fsynced). Every acknowledged commit is there, and the commit under test
// is all there or not at all.
func TestCommitSurvivesPowerLoss(t *testing.T) { bothCommitPaths(t, testCommitSurvivesPowerLoss) }

func testCommitSurvivesPowerLoss(t *testing.T) {
	open := func(t *testing.T, fsys FS, tweak func(*Options)) *Engine {
		opts := DefaultOptions()
		opts.FS, opts.Dir = fsys, "db"
		// A segment per batch: new segments must be made durable too.
		opts.SegmentBytes = 1
		if tweak != nil {
			tweak(&opts)
		}
		e, err := Open(opts)
		require.NoError(t, err)
		return e
	}
	// afterPowerLoss reopens on what survives of fsys and returns the
	// state, checking that the engine then works.
	afterPowerLoss := func(t *testing.T, fsys FS) []string {
		crashed, err := MemFSAfterCrash(fsys)
		require.NoError(t, err)
		e := open(t, crashed, nil)
		defer func() { require.NoError(t, e.Close()) }()
		state := commitState(t, e)
		_, err = e.Commit(ctx, targetCommit())
		require.NoError(t, err)
		return state
	}
	// One batch, so no journal fsync of its own: an abort record of the
	// commit before must have been made durable by that commit.
	followUp := []Write{{Path: path("ev"), Kind: WriteAppend, Rows: evRows("a", 500)}}
	var none, all, noneF, allF []string
	for _, target := range []bool{false, true} {
		e := open(t, NewMemFS(), nil)
		createCommitTables(t, e)
		_, err := e.Commit(ctx, baselineCommit())
		require.NoError(t, err)
		if target {
			_, err = e.Commit(ctx, targetCommit())
			require.NoError(t, err)
			all = commitState(t, e)
		} else {
			none = commitState(t, e)
		}
		_, err = e.Commit(ctx, followUp)
		require.NoError(t, err)
		if target {
			allF = commitState(t, e)
		} else {
			noneF = commitState(t, e)
		}
		require.NoError(t, e.Close())
	}

	t.Run("crash points", func(t *testing.T) {
		for k := 0; ; k++ {
			fsys := NewCrashMemFS()
			var armed atomic.Bool
			stop := func(batches int, recorded bool) bool {
				return armed.Load() && (k < 0 && recorded || !recorded && batches == k)
			}
			e := open(t, fsys, func(o *Options) { o.TestingCrashCommit = stop })
			createCommitTables(t, e)
			_, err := e.Commit(ctx, baselineCommit())
			require.NoError(t, err)
			armed.Store(true)
			_, err = e.Commit(ctx, targetCommit())
			if err == nil {
				require.Equal(t, all, afterPowerLoss(t, fsys))
				require.NoError(t, e.Close())
				if journalRedoBytes < 0 {
					require.Greater(t, k, 4)
				} else {
					require.Equal(t, 1, k, "a redo commit's commit point is its journal record")
				}
				break
			}
			require.ErrorIs(t, err, errTestingCrash)
			require.Equal(t, none, afterPowerLoss(t, fsys), "stopped before batch %d", k)
			require.NoError(t, e.Close())
		}
		// Past the commit point: a redo commit is asked before each of
		// its batches (none of them fsynced) and after the last; an
		// intent's commit once, after every batch is fsynced.
		stops := 0
		for k := 0; k < 64; k++ {
			fsys := NewCrashMemFS()
			var armed atomic.Bool
			e := open(t, fsys, func(o *Options) {
				o.TestingCrashCommit = func(batches int, recorded bool) bool { return armed.Load() && recorded && batches == k }
			})
			createCommitTables(t, e)
			_, err := e.Commit(ctx, baselineCommit())
			require.NoError(t, err)
			armed.Store(true)
			_, err = e.Commit(ctx, targetCommit())
			if err != nil {
				stops++
				require.ErrorIs(t, err, errTestingCrash)
				require.Equal(t, all, afterPowerLoss(t, fsys), "stopped after the commit point, before batch %d", k)
			}
			require.NoError(t, e.Close())
		}
		if journalRedoBytes < 0 {
			require.Equal(t, 1, stops)
		} else {
			require.Greater(t, stops, 4)
		}
	})

	t.Run("faults", func(t *testing.T) {
		for n := int64(1); ; n++ {
			inner := NewCrashMemFS()
			ffs := NewFaultFS(inner)
			e := open(t, ffs, nil)
			createCommitTables(t, e)
			_, err := e.Commit(ctx, baselineCommit())
			require.NoError(t, err)
			ffs.FailNth(FaultAll, n, syscall.EIO)
			_, err = e.Commit(ctx, targetCommit())
			fired := ffs.Fired()
			ffs.Disarm()
			_, ferr := e.Commit(ctx, followUp)
			if ferr != nil {
				require.ErrorIs(t, ferr, metadata.ErrReadOnly)
			}
			want := map[[2]bool][]string{{false, false}: none, {true, false}: all, {false, true}: noneF, {true, true}: allF}[[2]bool{err == nil, ferr == nil}]
			require.Equal(t, want, afterPowerLoss(t, inner), "call %d (%v, then %v)", n, err, ferr)
			require.NoError(t, e.Close())
			if !fired {
				break
			}
		}
	})
}
