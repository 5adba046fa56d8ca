package tiering

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/storage"
)

// sweepEnv is an engine and a lake whose file systems outlive them, so
// that the sweep can close both and reopen them on the same bytes; the
// lake's goes through a FaultFS.
type sweepEnv struct {
	t   *testing.T
	sfs storage.FS
	ffs *lake.FaultFS
	mem *memory.CheckedAllocator
	eng *storage.Engine
	lk  *lake.Lake
	svc *Service
}

func openSweep(t *testing.T, sfs storage.FS, ffs *lake.FaultFS) *sweepEnv {
	t.Helper()
	s := &sweepEnv{t: t, sfs: sfs, ffs: ffs, mem: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	opts := storage.DefaultOptions()
	opts.FS, opts.Dir, opts.Allocator = sfs, "db", s.mem
	eng, err := storage.Open(opts)
	require.NoError(t, err)
	// Small files and row groups: a round writes several files per
	// bucket, so faults land in the middle of rounds too.
	lk, err := lake.Open(lake.Options{FS: ffs, Dir: "lake", Sync: true, Allocator: s.mem, MaxRowsPerFile: 6, RowGroupRows: 6})
	require.NoError(t, err)
	s.eng, s.lk, s.svc = eng, lk, New(eng, lk, Options{Allocator: s.mem})
	return s
}

func (s *sweepEnv) close() {
	s.t.Helper()
	require.NoError(s.t, s.svc.Close())
	require.NoError(s.t, s.lk.Close())
	require.NoError(s.t, s.eng.Close())
	s.mem.AssertSize(s.t, 0)
}

func (s *sweepEnv) tier(name string) error {
	_, err := s.svc.Tier(bg, tpath(name))
	return err
}

// sweepModel is what the sweep's tables hold: rows by key, rendered as
// the reads render them.
type sweepModel struct {
	rows map[string]map[string]string // table -> key -> row
}

func newSweepModel() *sweepModel {
	return &sweepModel{rows: map[string]map[string]string{"logt": {}, "pkt": {}}}
}

func renderRow(vals []any) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = fmt.Sprint(v)
	}
	return strings.Join(out, ",")
}

func (m *sweepModel) want(table string) []string {
	var out []string
	for _, r := range m.rows[table] {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// sweepStep is one step of the workload: a write (which never touches
// the lake and must work) or a tiering round of one table.
type sweepStep struct {
	name  string
	tier  string
	write func(s *sweepEnv, m *sweepModel)
}

func appendLog(ids []int64, dts ...string) func(s *sweepEnv, m *sweepModel) {
	return func(s *sweepEnv, m *sweepModel) {
		var rows [][]any
		for i, id := range ids {
			row := []any{id, fmt.Sprintf("n%d", id), dts[i%len(dts)]}
			rows = append(rows, row)
			m.rows["logt"][fmt.Sprint(id)] = renderRow(row)
		}
		_, err := s.eng.Append(bg, tpath("logt"), rows)
		require.NoError(s.t, err)
	}
}

func upsertPK(rows ...[]any) func(s *sweepEnv, m *sweepModel) {
	return func(s *sweepEnv, m *sweepModel) {
		_, err := s.eng.Upsert(bg, tpath("pkt"), rows, storage.UpsertOptions{})
		require.NoError(s.t, err)
		for _, r := range rows {
			m.rows["pkt"][fmt.Sprint(r[0])] = renderRow(r)
		}
	}
}

func deletePK(ids ...int32) func(s *sweepEnv, m *sweepModel) {
	return func(s *sweepEnv, m *sweepModel) {
		var rows [][]any
		for _, id := range ids {
			rows = append(rows, []any{id, nil, nil})
			delete(m.rows["pkt"], fmt.Sprint(id))
		}
		_, err := s.eng.Delete(bg, tpath("pkt"), rows)
		require.NoError(s.t, err)
	}
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// sweepWorkload writes to a partitioned log table and a primary-key table
// (both lake-enabled) and tiers each twice: first rounds, then rounds that
// add a partition, update and delete keys; a tail after them stays in the
// log.
func sweepWorkload() []sweepStep {
	return []sweepStep{
		{name: "append 1", write: appendLog(seq(0, 6), "a", "b")},
		{name: "upsert 1", write: upsertPK(
			[]any{int32(1), "v1", int64(10)}, []any{int32(2), "v2", int64(20)}, []any{int32(3), nil, int64(30)},
			[]any{int32(4), "v4", int64(40)}, []any{int32(5), "v5", nil}, []any{int32(6), "v6", int64(60)})},
		{name: "tier logt 1", tier: "logt"},
		{name: "tier pkt 1", tier: "pkt"},
		{name: "append 2, new partition", write: appendLog(seq(6, 6), "b", "c")},
		{name: "upsert 2", write: upsertPK([]any{int32(2), "v2'", int64(21)}, []any{int32(7), "v7", int64(70)}, []any{int32(8), "v8", int64(80)})},
		{name: "delete 1", write: deletePK(4, 5)},
		{name: "tier logt 2", tier: "logt"},
		{name: "tier pkt 2", tier: "pkt"},
		{name: "append 3", write: appendLog(seq(12, 3), "a", "c")},
		{name: "upsert 3", write: upsertPK([]any{int32(1), "v1'", int64(11)}, []any{int32(4), "v4'", int64(41)})},
		{name: "delete 2", write: deletePK(7)},
	}
}

func sweepSetup(t *testing.T, s *sweepEnv) {
	t.Helper()
	for _, d := range []metadata.TableDescriptor{
		{Path: tpath("logt"), Schema: metadata.Schema{Columns: logCols()}, PartitionKeys: []string{"dt"},
			Options: map[string]string{metadata.OptBucketNum: "1"}},
		{Path: tpath("pkt"), Schema: metadata.Schema{Columns: pkCols(), PrimaryKey: []string{"id"}},
			Options: map[string]string{metadata.OptBucketNum: "2"}},
	} {
		d.Options[metadata.OptDatalakeEnabled] = "true"
		_, err := s.eng.CreateTable(bg, d, false)
		require.NoError(t, err)
	}
}

// lakeBlind is the engine with its lake snapshots hidden, so that a
// planner plans the log-only branch.
type lakeBlind struct{ *storage.Engine }

func (lakeBlind) ReadableLakeSnapshot(context.Context, metadata.TablePath) (metadata.LakeSnapshot, bool, error) {
	return metadata.LakeSnapshot{}, false, nil
}

type sweepPlanner interface {
	planner.SplitPlanner
	ScanType() planner.ScanType
}

// read scans a table through the lake-union branch (withLake) or the
// log-only one and renders its rows, sorted.
func (s *sweepEnv) read(name string, withLake bool) ([]string, planner.ScanType) {
	t := s.t
	t.Helper()
	info, err := s.eng.TableInfo(bg, tpath(name))
	require.NoError(t, err)
	spec := planner.ScanSpec{Table: info.Path, Limit: -1}
	var admin planner.Admin = lakeBlind{s.eng}
	var opts []planner.Option
	src := lakeunion.EngineSource(s.eng, s.lk)
	if withLake {
		admin = s.eng
		opts = append(opts, planner.WithLake(s.lk.Source(&info)))
	}
	var p sweepPlanner
	if info.HasPrimaryKey() {
		p, err = planner.NewUpsertPlanner(bg, admin, info, spec, opts...)
	} else {
		p, err = planner.NewAppendPlanner(bg, admin, info, spec, opts...)
	}
	require.NoError(t, err)
	defer p.Close()
	splits, err := p.Plan(bg)
	require.NoError(t, err)
	scan := lakeunion.NewSourceScan(src, &info, splits, lakeunion.Options{Allocator: s.mem, Threads: 1})
	defer func() { require.NoError(t, scan.Close()) }()
	var rows []string
	for {
		rec, err := scan.Next(bg)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "read %s (lake %v)", name, withLake)
		for i := range int(rec.NumRows()) {
			vals := make([]any, len(info.Schema.Columns))
			for c, col := range info.Schema.Columns {
				vals[c] = metadata.ValueAt(rec.Column(c), col.Type, i)
			}
			rows = append(rows, renderRow(vals))
		}
	}
	slices.Sort(rows)
	return rows, p.ScanType()
}

// checkReads compares the lake-union and the log-only reads of both
// tables with the model. With inStep, each table's lake snapshot as the
// engine records it must also be the lake's latest manifest, and the
// lake-union read must plan that branch.
func (s *sweepEnv) checkReads(m *sweepModel, what string, inStep bool) {
	s.t.Helper()
	for _, name := range []string{"logt", "pkt"} {
		want := m.want(name)
		got, typ := s.read(name, true)
		require.Equal(s.t, want, got, "%s: %s, lake-union read", what, name)
		got, _ = s.read(name, false)
		require.Equal(s.t, want, got, "%s: %s, log-only read", what, name)
		if !inStep {
			continue
		}
		require.Contains(s.t, []planner.ScanType{planner.TypeLakeAppend, planner.TypeLakeUpsert}, typ, "%s: %s", what, name)
		info, err := s.eng.TableInfo(bg, tpath(name))
		require.NoError(s.t, err)
		lm, ok, err := s.lk.LatestManifest(bg, info.TableID)
		require.NoError(s.t, err)
		require.True(s.t, ok, "%s: %s has a lake snapshot", what, name)
		rec, ok, err := s.eng.ReadableLakeSnapshot(bg, info.Path)
		require.NoError(s.t, err)
		require.True(s.t, ok)
		require.Equal(s.t, lm.SnapshotID, rec.SnapshotID, "%s: %s: the engine records the lake's latest snapshot", what, name)
	}
}

var lakeFaultAll = flag.Bool("lakefault.all", false, "TestLakeFaultSweep fails every call of every kind, not a spread of them")

// faultPoints picks the n to fail: every one up to dense, then about
// sparse more spread over the rest, and the last.
func faultPoints(calls int64, dense, sparse int) []int64 {
	if *lakeFaultAll {
		dense = int(calls)
	}
	var out []int64
	for n := int64(1); n <= min(calls, int64(dense)); n++ {
		out = append(out, n)
	}
	if rest := calls - int64(dense); rest > 0 {
		for k := range int64(sparse) {
			out = append(out, int64(dense)+(k+1)*rest/int64(sparse+1))
		}
		out = append(out, calls)
	}
	return slices.Compact(out)
}

// TestLakeFaultSweep fails, for each kind of lake file system call
// (write, fsync, rename, create) and a spread of n (every n with
// -lakefault.all; fewer under the race detector, which makes Parquet
// encoding slow), the nth call of that kind a tiering workload makes,
// with ENOSPC or EIO by turns. The round that hits the fault returns an
// error wrapping the cause and naming the table, and no other round
// fails; the lake-union and the log-only reads equal what was written
// right after the failure; and an engine and lake reopened on a healthy
// file system recover, tier on, and read the same, the engine recording
// the lake's latest snapshot. Arrow memory is checked after every run.
func TestLakeFaultSweep(t *testing.T) {
	steps := sweepWorkload()
	run := func(s *sweepEnv, m *sweepModel, onFail func(st sweepStep, err error)) {
		for _, st := range steps {
			if st.write != nil {
				st.write(s, m)
			} else if err := s.tier(st.tier); err != nil {
				onFail(st, err)
			}
		}
	}

	// Count the workload's calls of each kind.
	ffs := lake.NewFaultFS(lake.NewMemFS())
	s := openSweep(t, storage.NewMemFS(), ffs)
	sweepSetup(t, s)
	ffs.FailNth(lake.FaultAll, 0, nil)
	m := newSweepModel()
	run(s, m, func(st sweepStep, err error) { require.NoError(t, err, st.name) })
	s.checkReads(m, "healthy", true)
	s.close()

	dense, sparse := 8, 6
	if raceEnabled {
		dense, sparse = 1, 1
	}
	injected := 0
	for _, kind := range []lake.FaultOp{lake.FaultWrite, lake.FaultSync, lake.FaultRename, lake.FaultCreate} {
		calls := ffs.CallsOf(kind)
		require.NotZero(t, calls, kind)
		points := faultPoints(calls, dense, sparse)
		failedIn := map[string]int{}
		for _, n := range points {
			errno := syscall.ENOSPC
			if n%2 == 0 {
				errno = syscall.EIO
			}
			what := fmt.Sprintf("%s %d of %d", kind, n, calls)
			ffs := lake.NewFaultFS(lake.NewMemFS())
			sfs := storage.NewMemFS()
			s := openSweep(t, sfs, ffs)
			sweepSetup(t, s)
			ffs.FailNth(kind, n, errno)
			m := newSweepModel()
			failed := ""
			run(s, m, func(st sweepStep, err error) {
				require.Empty(t, failed, "%s: round %q fails after %q failed: one fault fails one round", what, st.name, failed)
				require.True(t, ffs.Fired(), "%s: round %q: %v", what, st.name, err)
				require.ErrorIs(t, err, errno, "%s: round %q: the error names its cause", what, st.name)
				require.ErrorContains(t, err, "tier "+tpath(st.tier).String(), "%s: the error names the table", what)
				failed = st.name
				s.checkReads(m, what+": right after "+st.name+" failed at "+ffs.FiredAt(), false)
			})
			require.True(t, ffs.Fired(), what)
			if strings.HasSuffix(ffs.FiredAt(), lake.FileListName+".tmp") {
				// The file list for outside readers is written after the
				// commit; its failure is logged and fails no round.
				require.Empty(t, failed, "%s: a failed file list fails no round", what)
				s.checkReads(m, what+": after the file list failed", false)
				s.close()
				continue
			}
			require.NotEmpty(t, failed, "%s: the fault at %s surfaced in no round", what, ffs.FiredAt())
			failedIn[failed]++
			injected++
			s.close()

			// Reopen on a healthy file system: recovery, a round of each
			// table, the same reads.
			ffs.Disarm()
			s = openSweep(t, sfs, ffs)
			require.NoError(t, s.svc.Recover(bg), what)
			appendLog(seq(100, 2), "a", "d")(s, m)
			upsertPK([]any{int32(2), "after", int64(2)})(s, m)
			require.NoError(t, s.tier("logt"), what)
			require.NoError(t, s.tier("pkt"), what)
			s.checkReads(m, what+": after reopen and a round", true)
			s.close()
		}
		t.Logf("%s: %d calls, %d failed one at a time; the rounds that failed: %v", kind, calls, len(points), failedIn)
	}
	t.Logf("%d faults injected", injected)
	require.NotZero(t, injected)
}
