package storage

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// sweepStep is one call of the fault sweep's workload.
type sweepStep struct {
	name string
	run  func(e *Engine) error
}

// sweepWorkload writes to ev, kv (createCommitTables) and lk (a lake
// table): appends that roll segments and create a partition, upserts,
// deletes, a partial update, a multi-table commit, KV snapshots,
// partition DDL, a table creation and lake snapshot records.
func sweepWorkload() []sweepStep {
	appendEv := func(p string, ids ...int) func(e *Engine) error {
		return func(e *Engine) error { _, err := e.Append(ctx, path("ev"), evRows(p, ids...)); return err }
	}
	ids := func(from, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = from + i
		}
		return out
	}
	lakeSnap := func(id int64) func(e *Engine) error {
		return func(e *Engine) error {
			info, err := e.TableInfo(ctx, path("lk"))
			if err != nil {
				return err
			}
			return e.CommitLakeSnapshot(ctx, path("lk"), metadata.LakeSnapshot{
				SnapshotID:    id,
				TieredOffsets: map[metadata.TableBucket]int64{bucket(info, 0): id},
			})
		}
	}
	return []sweepStep{
		{"baseline commit", func(e *Engine) error { _, err := e.Commit(ctx, baselineCommit()); return err }},
		{"append, new partition", appendEv("b", ids(10, 30)...)},
		{"upsert", func(e *Engine) error {
			_, err := e.Upsert(ctx, path("kv"), [][]any{{"u7", 7, 7}, {"u8", 8, 8}, {"u1", 1, 1}}, UpsertOptions{})
			return err
		}},
		{"kv snapshot", func(e *Engine) error { _, err := e.TakeKvSnapshots(ctx, path("kv")); return err }},
		{"delete", func(e *Engine) error {
			_, err := e.Delete(ctx, path("kv"), [][]any{{nil, 2, nil}, {nil, 8, nil}})
			return err
		}},
		{"partial update", func(e *Engine) error {
			_, err := e.Upsert(ctx, path("kv"), [][]any{{nil, 3, 33}, {nil, 12, 12}}, UpsertOptions{TargetColumns: []int{1, 2}})
			return err
		}},
		{"lake snapshot 1", lakeSnap(1)},
		{"create partition", func(e *Engine) error {
			_, err := e.CreatePartition(ctx, path("ev"), map[string]string{"p": "c"}, true)
			return err
		}},
		{"target commit", func(e *Engine) error { _, err := e.Commit(ctx, targetCommit()); return err }},
		{"drop partition", func(e *Engine) error { return e.DropPartition(ctx, path("ev"), map[string]string{"p": "a"}, true) }},
		{"kv snapshot again", func(e *Engine) error { _, err := e.TakeKvSnapshots(ctx, path("kv")); return err }},
		{"append, rolls", appendEv("c", ids(200, 40)...)},
		{"create table", func(e *Engine) error {
			_, err := e.CreateTable(ctx, metadata.TableDescriptor{
				Path:   path("late"),
				Schema: metadata.Schema{Columns: []metadata.Column{col("x", metadata.IntType())}},
			}, false)
			return err
		}},
		{"create view", func(e *Engine) error {
			return e.CreateView(ctx, viewAt("v", "SELECT x FROM late", "x"), false, false)
		}},
		{"lake snapshot 2", lakeSnap(2)},
		{"replace view", func(e *Engine) error {
			return e.CreateView(ctx, viewAt("v", "SELECT x AS y FROM late", "y"), true, false)
		}},
		{"upsert after", func(e *Engine) error {
			_, err := e.Upsert(ctx, path("kv"), [][]any{{"z5", 5, 55}, {"z13", 13, 13}}, UpsertOptions{})
			return err
		}},
		// The last step shows whether the engine still writes.
		{"append at the end", appendEv("a", 300)},
	}
}

// sweepOpen opens an engine on fsys with small segments, so that the
// workload rolls them (and creates files mid-write).
func sweepOpen(t *testing.T, fsys FS) *Engine {
	t.Helper()
	opts := DefaultOptions()
	opts.FS, opts.Dir = fsys, "db"
	opts.SegmentBytes = 2048
	e, err := Open(opts)
	require.NoError(t, err)
	return e
}

// sweepSetup creates the workload's tables.
func sweepSetup(t *testing.T, e *Engine) {
	t.Helper()
	createCommitTables(t, e)
	createTable(t, e, "lk", []metadata.Column{col("x", metadata.IntType())}, nil,
		map[string]string{metadata.OptDatalakeEnabled: "true"})
}

// sweepState is commitState plus the tables, the partitions of ev and
// lk's readable lake snapshot.
func sweepState(t *testing.T, e *Engine) []string {
	t.Helper()
	out := commitState(t, e)
	tables, err := e.ListTables(ctx, metadata.DefaultDatabase)
	require.NoError(t, err)
	out = append(out, "tables "+strings.Join(tables, ","))
	views, err := e.ListViews(ctx, metadata.DefaultDatabase)
	require.NoError(t, err)
	for _, name := range views {
		v, err := e.View(ctx, path(name))
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("view %s %v %s", name, v.Columns, v.Query))
	}
	parts, err := e.ListPartitions(ctx, path("ev"))
	require.NoError(t, err)
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	out = append(out, "partitions "+strings.Join(names, ","))
	snap, ok, err := e.ReadableLakeSnapshot(ctx, path("lk"))
	require.NoError(t, err)
	out = append(out, fmt.Sprintf("lake %v %d", ok, snap.SnapshotID))
	return out
}

// TestFaultSweep fails, for each kind of file system call (write, fsync,
// rename, create) and each n, the nth call of that kind a workload makes,
// with ENOSPC or EIO by turns. The failing step returns an error wrapping
// the cause and leaves what readers see as it was; later steps either
// work or fail with ErrReadOnly; and an engine reopened on a healthy file
// system holds exactly the steps that returned nil, plus possibly the one
// that failed, and writes on.
func TestFaultSweep(t *testing.T) {
	steps := sweepWorkload()
	// want runs the steps in keep on a healthy file system.
	cache := map[string][]string{}
	want := func(keep []int) []string {
		key := fmt.Sprint(keep)
		if s, ok := cache[key]; ok {
			return s
		}
		e := sweepOpen(t, NewMemFS())
		defer e.Close()
		sweepSetup(t, e)
		for _, i := range keep {
			require.NoError(t, steps[i].run(e), steps[i].name)
		}
		cache[key] = sweepState(t, e)
		return cache[key]
	}

	injected := 0
	for _, kind := range []struct {
		name string
		op   FaultOp
	}{{"write", FaultWrite}, {"sync", FaultSync}, {"rename", FaultRename}, {"create", FaultCreate}} {
		// Count the workload's calls of this kind.
		ffs := NewFaultFS(NewMemFS())
		e := sweepOpen(t, ffs)
		sweepSetup(t, e)
		ffs.FailNth(kind.op, 0, nil)
		for _, s := range steps {
			require.NoError(t, s.run(e), s.name)
		}
		calls := ffs.Calls()
		require.NoError(t, e.Close())
		require.NotZero(t, calls, kind.name)

		var readOnly, keptWorking, silent int
		for n := int64(1); n <= calls; n++ {
			errno := syscall.ENOSPC
			if n%2 == 0 {
				errno = syscall.EIO
			}
			ffs := NewFaultFS(NewMemFS())
			e := sweepOpen(t, ffs)
			sweepSetup(t, e)
			ffs.FailNth(kind.op, n, errno)
			var acked []int
			failed, readOnlyAt := -1, -1
			for i, s := range steps {
				err := s.run(e)
				switch {
				case err == nil:
					acked = append(acked, i)
				case failed < 0:
					require.True(t, ffs.Fired(), "%s %d: step %q: %v", kind.name, n, s.name, err)
					require.ErrorIs(t, err, errno, "%s %d: step %q: the error names its cause", kind.name, n, s.name)
					with := slices.Sorted(slices.Values(append(slices.Clone(acked), i)))
					got, exp := sweepState(t, e), want(acked)
					if !sameState(got, exp, want(with)) {
						require.Equal(t, exp, got, "%s %d: step %q: a failed step leaves nothing behind", kind.name, n, s.name)
					}
					failed = i
				default:
					readOnlyAt = i
					require.ErrorIs(t, err, metadata.ErrReadOnly, "%s %d: step %q after the failure of %q", kind.name, n, s.name, steps[failed].name)
				}
			}
			require.True(t, ffs.Fired(), "%s %d", kind.name, n)
			ffs.Disarm()
			switch {
			case failed < 0:
				// Files the engine rebuilds or repairs by itself (the
				// offset index, the commit journal's bookkeeping).
				silent++
			case readOnlyAt >= 0:
				readOnly++
			default:
				keptWorking++
			}
			injected++
			_ = e.Close()

			e = sweepOpen(t, ffs)
			got := sweepState(t, e)
			if failed >= 0 {
				with := want(slices.Sorted(slices.Values(append(slices.Clone(acked), failed))))
				if !sameState(got, want(acked), with) && !slices.Equal(got, with) {
					require.Equal(t, want(acked), got, "%s %d: after reopen, step %q failed; neither without it nor with it:\n%s",
						kind.name, n, steps[failed].name, strings.Join(with, "\n"))
				}
			} else {
				require.Equal(t, want(acked), got, "%s %d: after reopen", kind.name, n)
			}
			_, err := e.Append(ctx, path("ev"), evRows("a", 900))
			require.NoError(t, err, "%s %d: the reopened engine writes", kind.name, n)
			require.NoError(t, e.Close())
		}
		t.Logf("%s: %d calls failed one at a time: %d left the engine read-only, %d kept it working, %d were repaired unseen",
			kind.name, calls, readOnly, keptWorking, silent)
	}
	t.Logf("%d faults injected", injected)
	require.NotZero(t, injected)
}

// sameState reports whether got is want, but for partitions of ev that
// only with (the state with the failed step) has: a write creates its new
// partitions before its batches, as a Fluss client asks the coordinator
// for them first, so a failed write may leave them behind, empty.
func sameState(got, want, with []string) bool {
	if len(got) != len(want) {
		return false
	}
	parts := func(line string) ([]string, bool) {
		rest, ok := strings.CutPrefix(line, "partitions ")
		return strings.Split(rest, ","), ok
	}
	var allowed []string
	for _, line := range with {
		if p, ok := parts(line); ok {
			allowed = p
		}
	}
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		g, ok1 := parts(got[i])
		w, ok2 := parts(want[i])
		if !ok1 || !ok2 {
			return false
		}
		for _, p := range g {
			if !slices.Contains(w, p) && !slices.Contains(allowed, p) {
				return false
			}
		}
		for _, p := range w {
			if p != "" && !slices.Contains(g, p) {
				return false
			}
		}
	}
	return true
}
