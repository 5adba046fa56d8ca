package tiering

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

var bg = context.Background()

// env is an engine, its lake and a tiering service, in memory or in a
// directory (then reopen works).
type env struct {
	t      *testing.T
	dir    string
	tweakE func(*storage.Options)
	tweakS func(*Options)
	mem    *memory.CheckedAllocator
	eng    *storage.Engine
	lk     *lake.Lake
	svc    *Service
}

func newEnv(t *testing.T, dir string, tweakE func(*storage.Options), tweakS func(*Options)) *env {
	t.Helper()
	e := &env{t: t, dir: dir, tweakE: tweakE, tweakS: tweakS, mem: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	e.open()
	t.Cleanup(func() {
		e.close()
		e.mem.AssertSize(t, 0)
	})
	return e
}

func (e *env) open() {
	t := e.t
	t.Helper()
	opts := storage.DefaultOptions()
	opts.Dir = e.dir
	opts.InMemory = e.dir == ""
	opts.Allocator = e.mem
	if e.tweakE != nil {
		e.tweakE(&opts)
	}
	eng, err := storage.Open(opts)
	require.NoError(t, err)
	lopts := lake.Options{InMemory: e.dir == "", Sync: true, Allocator: e.mem}
	if e.dir != "" {
		lopts.Dir = filepath.Join(e.dir, "lake")
	}
	lk, err := lake.Open(lopts)
	require.NoError(t, err)
	sopts := Options{Allocator: e.mem}
	if e.tweakS != nil {
		e.tweakS(&sopts)
	}
	e.eng, e.lk, e.svc = eng, lk, New(eng, lk, sopts)
}

func (e *env) close() {
	if e.svc == nil {
		return
	}
	require.NoError(e.t, e.svc.Close())
	require.NoError(e.t, e.lk.Close())
	require.NoError(e.t, e.eng.Close())
	e.svc, e.lk, e.eng = nil, nil, nil
}

func (e *env) reopen() {
	e.t.Helper()
	e.close()
	e.open()
}

func tpath(name string) metadata.TablePath {
	return metadata.TablePath{Database: metadata.DefaultDatabase, Table: name}
}

func (e *env) create(name string, cols []metadata.Column, pk, partKeys []string, opts map[string]string) metadata.TableInfo {
	e.t.Helper()
	all := map[string]string{metadata.OptDatalakeEnabled: "true"}
	for k, v := range opts {
		all[k] = v
	}
	info, err := e.eng.CreateTable(bg, metadata.TableDescriptor{
		Path:          tpath(name),
		Schema:        metadata.Schema{Columns: cols, PrimaryKey: pk},
		PartitionKeys: partKeys,
		Options:       all,
	}, false)
	require.NoError(e.t, err)
	return info
}

func (e *env) tier(name string) int64 {
	e.t.Helper()
	id, err := e.svc.Tier(bg, tpath(name))
	require.NoError(e.t, err)
	return id
}

func (e *env) info(name string) metadata.TableInfo {
	e.t.Helper()
	info, err := e.eng.TableInfo(bg, tpath(name))
	require.NoError(e.t, err)
	return info
}

func (e *env) snapshot(name string) (metadata.LakeSnapshot, bool) {
	e.t.Helper()
	s, ok, err := e.eng.ReadableLakeSnapshot(bg, tpath(name))
	require.NoError(e.t, err)
	return s, ok
}

func (e *env) manifest(name string) lake.Manifest {
	e.t.Helper()
	m, ok, err := e.lk.LatestManifest(bg, e.info(name).TableID)
	require.NoError(e.t, err)
	require.True(e.t, ok)
	return m
}

func (e *env) offsets(tbs []metadata.TableBucket, spec metadata.OffsetSpec) map[metadata.TableBucket]int64 {
	e.t.Helper()
	m, err := e.eng.ListOffsets(bg, tbs, spec)
	require.NoError(e.t, err)
	return m
}

func (e *env) buckets(name string) []metadata.TableBucket {
	e.t.Helper()
	info := e.info(name)
	parts := []int64{metadata.NonPartitioned}
	if info.IsPartitioned() {
		ps, err := e.eng.ListPartitions(bg, info.Path)
		require.NoError(e.t, err)
		parts = parts[:0]
		for _, p := range ps {
			parts = append(parts, p.ID)
		}
	}
	var out []metadata.TableBucket
	for _, p := range parts {
		for b := range info.NumBuckets {
			out = append(out, metadata.TableBucket{TableID: info.TableID, PartitionID: p, Bucket: int32(b)})
		}
	}
	return out
}

// logRows renders [start, stop) of a bucket's log, one "b<bucket>@<offset>
// <values>" per row (a log table's rows; change types are ignored).
func (e *env) logRows(info metadata.TableInfo, tb metadata.TableBucket, start, stop int64) []string {
	e.t.Helper()
	r, err := e.eng.ReadLog(bg, tb, start, stop, storage.ReadOptions{})
	require.NoError(e.t, err)
	defer r.Close()
	var out []string
	for r.Next() {
		b := r.Batch()
		for i := range int(b.Record.NumRows()) {
			vals := make([]string, len(info.Schema.Columns))
			for c, col := range info.Schema.Columns {
				vals[c] = fmt.Sprint(metadata.ValueAt(b.Record.Column(c), col.Type, i))
			}
			out = append(out, fmt.Sprintf("b%d@%d %s", tb.Bucket, b.BaseOffset+int64(i), strings.Join(vals, ",")))
		}
	}
	require.NoError(e.t, r.Err())
	return out
}

// lakeRow is one row of lake files with its system columns.
type lakeRow struct {
	partition string
	bucket    int32
	offset    int64
	ts        int64 // ms
	vals      string
}

func (r lakeRow) String() string {
	if r.partition != "" {
		return fmt.Sprintf("%s/b%d@%d %s", r.partition, r.bucket, r.offset, r.vals)
	}
	return fmt.Sprintf("b%d@%d %s", r.bucket, r.offset, r.vals)
}

// lakeRows reads files with their system columns, file after file.
func (e *env) lakeRows(info metadata.TableInfo, files []metadata.LakeFile) []lakeRow {
	e.t.Helper()
	all := make([]int, len(info.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	var out []lakeRow
	for _, f := range files {
		r, err := e.lk.OpenFiles(bg, &info, []metadata.LakeFile{f}, lake.ReadOptions{Projection: all, WithSystemColumns: true})
		require.NoError(e.t, err)
		for r.Next() {
			rec := r.Record()
			n := len(info.Schema.Columns)
			for i := range int(rec.NumRows()) {
				vals := make([]string, n)
				for c, col := range info.Schema.Columns {
					vals[c] = fmt.Sprint(metadata.ValueAt(rec.Column(c), col.Type, i))
				}
				row := lakeRow{
					partition: f.PartitionName,
					bucket:    rec.Column(n).(*array.Int32).Value(i),
					offset:    rec.Column(n + 1).(*array.Int64).Value(i),
					ts:        int64(rec.Column(n + 2).(*array.Timestamp).Value(i)),
					vals:      strings.Join(vals, ","),
				}
				require.Equal(e.t, f.Bucket, row.bucket, "__bucket matches the file's bucket")
				out = append(out, row)
			}
		}
		require.NoError(e.t, r.Err())
		require.NoError(e.t, r.Close())
	}
	return out
}

func strs[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	slices.Sort(out)
	return out
}

func filesOf(m lake.Manifest, partition string, bucket int32) []metadata.LakeFile {
	var out []metadata.LakeFile
	for _, f := range m.Files {
		if f.PartitionName == partition && f.Bucket == bucket {
			out = append(out, f)
		}
	}
	return out
}

func paths(files []metadata.LakeFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	slices.Sort(out)
	return out
}

func logCols() []metadata.Column {
	return []metadata.Column{
		{Name: "id", Type: metadata.BigIntType(), NotNull: true},
		{Name: "name", Type: metadata.StringType()},
		{Name: "dt", Type: metadata.StringType(), NotNull: true},
	}
}

func pkCols() []metadata.Column {
	return []metadata.Column{
		{Name: "id", Type: metadata.IntType(), NotNull: true},
		{Name: "v", Type: metadata.StringType()},
		{Name: "n", Type: metadata.BigIntType()},
	}
}

func (e *env) appendRows(name string, rows ...[]any) {
	e.t.Helper()
	_, err := e.eng.Append(bg, tpath(name), rows)
	require.NoError(e.t, err)
}

func (e *env) upsert(name string, rows ...[]any) {
	e.t.Helper()
	_, err := e.eng.Upsert(bg, tpath(name), rows, storage.UpsertOptions{})
	require.NoError(e.t, err)
}

func (e *env) delete(name string, rows ...[]any) {
	e.t.Helper()
	_, err := e.eng.Delete(bg, tpath(name), rows)
	require.NoError(e.t, err)
}
