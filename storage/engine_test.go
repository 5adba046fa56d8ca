package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

var ctx = context.Background()

// testEngine opens an engine on a temporary directory (or in memory when
// dir is ""), with a checked allocator that must be empty at cleanup.
func testEngine(t testing.TB, dir string, tweak func(*Options)) (*Engine, *memory.CheckedAllocator) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts := DefaultOptions()
	opts.Dir = dir
	opts.InMemory = dir == ""
	opts.Allocator = mem
	if tweak != nil {
		tweak(&opts)
	}
	e, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, e.Close())
		mem.AssertSize(t, 0)
	})
	return e, mem
}

func col(name string, typ metadata.DataType) metadata.Column {
	return metadata.Column{Name: name, Type: typ}
}

func createTable(t *testing.T, e *Engine, name string, cols []metadata.Column, partitionKeys []string, opts map[string]string) metadata.TableInfo {
	t.Helper()
	info, err := e.CreateTable(ctx, metadata.TableDescriptor{
		Path:          metadata.TablePath{Database: metadata.DefaultDatabase, Table: name},
		Schema:        metadata.Schema{Columns: cols},
		PartitionKeys: partitionKeys,
		Options:       opts,
	}, false)
	require.NoError(t, err)
	return info
}

func ordersColumns() []metadata.Column {
	return []metadata.Column{
		{Name: "id", Type: metadata.BigIntType(), NotNull: true},
		col("name", metadata.StringType()),
		col("amount", metadata.DoubleType()),
		col("dt", metadata.DateType()),
	}
}

func orderRow(i int) []any {
	var name any = fmt.Sprintf("customer-%d", i)
	if i%7 == 3 {
		name = nil
	}
	return []any{int64(i), name, float64(i) * 1.5, "2026-01-02"}
}

// readAll reads [start, stop) of a bucket and returns the rows (projected
// columns) with their offsets.
func readAll(t *testing.T, e *Engine, tb metadata.TableBucket, start, stop int64, opts ReadOptions) (offsets []int64, rows [][]any) {
	t.Helper()
	info := tableByID(t, e, tb.TableID)
	proj := opts.Projection
	if proj == nil {
		for i := range info.Schema.Columns {
			proj = append(proj, i)
		}
	}
	r, err := e.ReadLog(ctx, tb, start, stop, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	for r.Next() {
		b := r.Batch()
		require.Equal(t, len(proj), int(b.Record.NumCols()))
		require.Nil(t, b.ChangeTypes, "log tables write append-only batches")
		require.NotZero(t, b.CommitTimestamp)
		for i := range int(b.Record.NumRows()) {
			row := make([]any, len(proj))
			for k, c := range proj {
				row[k] = metadata.ValueAt(b.Record.Column(k), info.Schema.Columns[c].Type, i)
			}
			offsets = append(offsets, b.BaseOffset+int64(i))
			rows = append(rows, row)
		}
	}
	require.NoError(t, r.Err())
	return offsets, rows
}

func tableByID(t *testing.T, e *Engine, id int64) metadata.TableInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	entry := e.mu.cat.byID[id]
	require.NotNil(t, entry)
	return entry.Info
}

func bucket(info metadata.TableInfo, b int32) metadata.TableBucket {
	return metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned, Bucket: b}
}

func hw(t *testing.T, e *Engine, tb metadata.TableBucket) int64 {
	t.Helper()
	m, err := e.ListOffsets(ctx, []metadata.TableBucket{tb}, metadata.OffsetLatest)
	require.NoError(t, err)
	return m[tb]
}

func appendRows(t *testing.T, e *Engine, table string, rows [][]any) {
	t.Helper()
	n, err := e.Append(ctx, metadata.TablePath{Database: metadata.DefaultDatabase, Table: table}, rows)
	require.NoError(t, err)
	require.Equal(t, int64(len(rows)), n)
}

func segmentFiles(t *testing.T, dir string, tb metadata.TableBucket) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, tabletDir(tb)))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestAppendReadAcrossSegmentRolls(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, func(o *Options) {
		o.SegmentBytes = 2048
		o.IndexIntervalBytes = 700
	})
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	var want [][]any
	for s := range 40 {
		var rows [][]any
		for i := range 10 {
			rows = append(rows, orderRow(s*10+i))
		}
		appendRows(t, e, "orders", rows)
		want = append(want, rows...)
	}
	tb := bucket(info, 0)
	require.Equal(t, int64(400), hw(t, e, tb))
	segs := segmentFiles(t, dir, tb)
	require.Greater(t, len(segs), 3, "tiny segments must roll")
	require.Equal(t, "00000000000000000000.log", segs[0])

	// Every row, projected and reordered.
	offsets, rows := readAll(t, e, tb, 0, -1, ReadOptions{Projection: []int{2, 0}})
	require.Len(t, rows, 400)
	for i, row := range rows {
		require.Equal(t, int64(i), offsets[i])
		require.Equal(t, []any{want[i][2], want[i][0]}, row)
	}
	// A range starting and ending inside batches and segments.
	offsets, rows = readAll(t, e, tb, 37, 263, ReadOptions{})
	require.Len(t, rows, 263-37)
	for i, row := range rows {
		require.Equal(t, int64(37+i), offsets[i])
		require.Equal(t, want[37+i][0], row[0])
		require.Equal(t, want[37+i][1], row[1])
		require.Equal(t, metadata.DateValue(20455), row[3])
	}
	// Zero columns: only row counts.
	r, err := e.ReadLog(ctx, tb, 5, 25, ReadOptions{Projection: []int{}})
	require.NoError(t, err)
	var n int64
	for r.Next() {
		require.Zero(t, r.Batch().Record.NumCols())
		n += r.Batch().Record.NumRows()
	}
	require.NoError(t, r.Err())
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")
	require.Equal(t, int64(20), n)
}

func TestHighWatermarkPinsReads(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	tb := bucket(info, 0)
	appendRows(t, e, "orders", [][]any{orderRow(0), orderRow(1), orderRow(2)})
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{Projection: []int{0}})
	require.NoError(t, err)
	appendRows(t, e, "orders", [][]any{orderRow(3), orderRow(4)})
	var ids []any
	for r.Next() {
		for i := range int(r.Batch().Record.NumRows()) {
			ids = append(ids, metadata.ValueAt(r.Batch().Record.Column(0), metadata.BigIntType(), i))
		}
	}
	require.NoError(t, r.Err())
	require.NoError(t, r.Close())
	require.Equal(t, []any{int64(0), int64(1), int64(2)}, ids, "rows written after the reader opened are not seen")

	// A stop past the high watermark is capped at it.
	offsets, _ := readAll(t, e, tb, 1, 1000, ReadOptions{})
	require.Equal(t, []int64{1, 2, 3, 4}, offsets)
	earliest, err := e.ListOffsets(ctx, []metadata.TableBucket{tb}, metadata.OffsetEarliest)
	require.NoError(t, err)
	require.Equal(t, int64(0), earliest[tb])
	require.Equal(t, int64(5), hw(t, e, tb))
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	var want [][]any
	func() {
		e, _ := testEngine(t, dir, func(o *Options) { o.SegmentBytes = 1024 })
		defer e.Close()
		require.NoError(t, e.CreateDatabase(ctx, "shop", false))
		createTable(t, e, "orders", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "2"})
		for s := range 10 {
			rows := [][]any{orderRow(2 * s), orderRow(2*s + 1)}
			appendRows(t, e, "orders", rows)
			want = append(want, rows...)
		}
		// A dropped table's id is never reused.
		createTable(t, e, "gone", ordersColumns(), nil, nil)
		require.NoError(t, e.DropTable(ctx, metadata.TablePath{Database: "fluss", Table: "gone"}, false))
	}()

	e, _ := testEngine(t, dir, nil)
	dbs, err := e.ListDatabases(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"fluss", "shop"}, dbs)
	tables, err := e.ListTables(ctx, "fluss")
	require.NoError(t, err)
	require.Equal(t, []string{"orders"}, tables)
	info, err := e.TableInfo(ctx, metadata.TablePath{Database: "fluss", Table: "orders"})
	require.NoError(t, err)
	require.Equal(t, 2, info.NumBuckets)
	require.Equal(t, ordersColumns()[0].Name, info.Schema.Columns[0].Name)

	var got [][]any
	for b := range int32(2) {
		require.Equal(t, int64(10), hw(t, e, bucket(info, b)))
		_, rows := readAll(t, e, bucket(info, b), 0, -1, ReadOptions{})
		got = append(got, rows...)
	}
	sortRows(got)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.Equal(t, want[i][0], got[i][0])
		require.Equal(t, want[i][1], got[i][1])
		require.Equal(t, want[i][2], got[i][2])
	}
	appendRows(t, e, "orders", [][]any{orderRow(100)})
	again := createTable(t, e, "gone", ordersColumns(), nil, nil)
	require.Equal(t, info.TableID+2, again.TableID, "table ids are never reused")
}

func sortRows(rows [][]any) {
	slices.SortFunc(rows, func(a, b []any) int { return metadata.Compare(a[0], b[0]) })
}

func TestTornTailIsTruncated(t *testing.T) {
	dir := t.TempDir()
	var (
		info    metadata.TableInfo
		restore func()
	)
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "orders", ordersColumns(), nil, nil)
		for s := range 3 {
			if s == 2 {
				// The last statement is the one a crash cuts short: the
				// checkpoint on disk is the one from before it.
				restore = keepAcked(t, dir)
			}
			appendRows(t, e, "orders", [][]any{orderRow(3 * s), orderRow(3*s + 1), orderRow(3*s + 2)})
		}
	}()
	restore()
	tb := bucket(info, 0)
	seg := filepath.Join(dir, tabletDir(tb), segmentName(0, ".log"))
	st, err := os.Stat(seg)
	require.NoError(t, err)
	// Find where the last batch starts, then cut it in the middle.
	lastStart := batchStarts(t, seg)[2]
	cut := lastStart + (st.Size()-lastStart)/2
	require.NoError(t, os.Truncate(seg, cut))

	e, _ := testEngine(t, dir, nil)
	require.Equal(t, int64(6), hw(t, e, tb), "the torn statement is gone, the earlier ones stay")
	st, err = os.Stat(seg)
	require.NoError(t, err)
	require.Equal(t, lastStart, st.Size(), "the torn bytes are truncated away")
	offsets, rows := readAll(t, e, tb, 0, -1, ReadOptions{Projection: []int{0}})
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5}, offsets)
	require.Equal(t, int64(5), rows[5][0])

	appendRows(t, e, "orders", [][]any{orderRow(42)})
	offsets, rows = readAll(t, e, tb, 0, -1, ReadOptions{Projection: []int{0}})
	require.Len(t, offsets, 7)
	require.Equal(t, int64(42), rows[6][0])
}

// batchStarts lists the byte positions of the batches of a segment file.
func batchStarts(t *testing.T, path string) []int64 {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []int64
	for pos := int64(0); pos < int64(len(data)); {
		out = append(out, pos)
		n := int64(data[pos+8]) | int64(data[pos+9])<<8 | int64(data[pos+10])<<16 | int64(data[pos+11])<<24
		pos += 12 + n
	}
	return out
}

func TestTornTailVariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		harm func(t *testing.T, path string, lastStart int64)
	}{
		{"header cut short", func(t *testing.T, path string, lastStart int64) {
			require.NoError(t, os.Truncate(path, lastStart+10))
		}},
		{"bad CRC on the last batch", func(t *testing.T, path string, lastStart int64) {
			flipByte(t, path, lastStart+60)
		}},
		{"length past the end", func(t *testing.T, path string, lastStart int64) {
			flipByte(t, path, lastStart+10) // high byte of the length
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var (
				info    metadata.TableInfo
				restore func()
			)
			func() {
				e, _ := testEngine(t, dir, nil)
				defer e.Close()
				info = createTable(t, e, "orders", ordersColumns(), nil, nil)
				appendRows(t, e, "orders", [][]any{orderRow(0), orderRow(1)})
				// The second statement is the one a crash cuts short.
				restore = keepAcked(t, dir)
				appendRows(t, e, "orders", [][]any{orderRow(2)})
			}()
			restore()
			tb := bucket(info, 0)
			seg := filepath.Join(dir, tabletDir(tb), segmentName(0, ".log"))
			tc.harm(t, seg, batchStarts(t, seg)[1])
			e, _ := testEngine(t, dir, nil)
			require.Equal(t, int64(2), hw(t, e, tb))
			offsets, _ := readAll(t, e, tb, 0, -1, ReadOptions{})
			require.Equal(t, []int64{0, 1}, offsets)
		})
	}
}

func flipByte(t *testing.T, path string, pos int64) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[pos] ^= 0x40
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func TestCorruptionInsideSegmentIsReported(t *testing.T) {
	dir := t.TempDir()
	var info metadata.TableInfo
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "orders", ordersColumns(), nil, nil)
		for s := range 3 {
			appendRows(t, e, "orders", [][]any{orderRow(2 * s), orderRow(2*s + 1)})
		}
	}()
	tb := bucket(info, 0)
	seg := filepath.Join(dir, tabletDir(tb), segmentName(0, ".log"))
	starts := batchStarts(t, seg)
	flipByte(t, seg, starts[1]+50) // inside the second of three batches

	e, _ := testEngine(t, dir, nil)
	require.Equal(t, int64(6), hw(t, e, tb), "damage inside the log is not truncated")
	r, err := e.ReadLog(ctx, tb, 0, -1, ReadOptions{})
	require.NoError(t, err)
	var rows int64
	for r.Next() {
		rows += r.Batch().Record.NumRows()
	}
	require.Equal(t, int64(2), rows, "the batch before the damage is read")
	require.ErrorIs(t, r.Err(), metadata.ErrCorrupt)
	require.ErrorContains(t, r.Err(), filepath.Join("data", fmt.Sprint(info.TableID), "b0", "00000000000000000000.log"))
	require.ErrorContains(t, r.Err(), fmt.Sprintf("byte %d", starts[1]))
	require.NoError(t, r.Close())

	// The batch after the damage is still readable.
	offsets, _ := readAll(t, e, tb, 4, -1, ReadOptions{})
	require.Equal(t, []int64{4, 5}, offsets)
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	_ = e
	// flock locks belong to the open file description: a second Open in
	// this process conflicts just as another process would.
	opts := DefaultOptions()
	opts.Dir = dir
	_, err := Open(opts)
	require.ErrorIs(t, err, metadata.ErrLocked)
	require.ErrorContains(t, err, dir)

	// Two in-memory engines are independent.
	m1, _ := testEngine(t, "", nil)
	m2, _ := testEngine(t, "", nil)
	createTable(t, m1, "t", ordersColumns(), nil, nil)
	tables, err := m2.ListTables(ctx, "fluss")
	require.NoError(t, err)
	require.Empty(t, tables)
}

func TestCloseReleasesLock(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.Dir = dir
	e, err := Open(opts)
	require.NoError(t, err)
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "Close is idempotent")
	_, err = e.ListDatabases(ctx)
	require.ErrorIs(t, err, metadata.ErrClosed)
	e, err = Open(opts)
	require.NoError(t, err)
	require.NoError(t, e.Close())
}

func TestPartitions(t *testing.T) {
	dir := t.TempDir()
	path := metadata.TablePath{Database: "fluss", Table: "events"}
	cols := []metadata.Column{col("id", metadata.BigIntType()), col("p", metadata.IntType()), col("region", metadata.StringType())}
	var info metadata.TableInfo
	func() {
		e, _ := testEngine(t, dir, nil)
		defer e.Close()
		info = createTable(t, e, "events", cols, []string{"p", "region"}, nil)
		// Dynamic partitions, created by the write.
		appendRows(t, e, "events", [][]any{{int64(1), int64(10), "eu"}, {int64(2), int64(2), "us"}, {int64(3), int64(2), "us"}})
		parts, err := e.ListPartitions(ctx, path)
		require.NoError(t, err)
		require.Equal(t, []string{"2$us", "10$eu"}, partitionNames(parts), "typed order: 2 before 10")
		require.Equal(t, []string{"2", "us"}, parts[0].Values)

		p5, err := e.CreatePartition(ctx, path, map[string]string{"P": "5", "region": "eu"}, false)
		require.NoError(t, err)
		require.Equal(t, "5$eu", p5.Name)
		_, err = e.CreatePartition(ctx, path, map[string]string{"p": "5", "region": "eu"}, false)
		require.ErrorIs(t, err, metadata.ErrExists)
		again, err := e.CreatePartition(ctx, path, map[string]string{"p": "5", "region": "eu"}, true)
		require.NoError(t, err)
		require.Equal(t, p5, again)
		_, err = e.CreatePartition(ctx, path, map[string]string{"p": "x", "region": "eu"}, false)
		require.ErrorIs(t, err, metadata.ErrInvalidValue)
		_, err = e.CreatePartition(ctx, path, map[string]string{"p": "1"}, false)
		require.ErrorContains(t, err, "lacks partition key region")
		_, err = e.CreatePartition(ctx, path, map[string]string{"p": "1", "region": "x", "id": "3"}, false)
		require.ErrorContains(t, err, "id")

		parts, err = e.ListPartitions(ctx, path)
		require.NoError(t, err)
		require.Equal(t, []string{"2$us", "5$eu", "10$eu"}, partitionNames(parts))
		p2 := parts[0]
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: p2.ID, Bucket: 0}
		offsets, rows := readAll(t, e, tb, 0, -1, ReadOptions{Projection: []int{0}})
		require.Equal(t, []int64{0, 1}, offsets)
		require.Equal(t, [][]any{{int64(2)}, {int64(3)}}, rows)
	}()

	e, _ := testEngine(t, dir, nil)
	parts, err := e.ListPartitions(ctx, path)
	require.NoError(t, err)
	require.Equal(t, []string{"2$us", "5$eu", "10$eu"}, partitionNames(parts), "partitions survive a reopen")
	p10 := parts[2]
	dataDir := filepath.Join(dir, partitionDir(info.TableID, p10.ID))
	require.DirExists(t, dataDir)
	require.NoError(t, e.DropPartition(ctx, path, map[string]string{"p": "10", "region": "eu"}, false))
	require.NoDirExists(t, dataDir)
	require.ErrorIs(t, e.DropPartition(ctx, path, map[string]string{"p": "10", "region": "eu"}, false), metadata.ErrNotFound)
	require.NoError(t, e.DropPartition(ctx, path, map[string]string{"p": "10", "region": "eu"}, true))
	_, err = e.ListOffsets(ctx, []metadata.TableBucket{{TableID: info.TableID, PartitionID: p10.ID}}, metadata.OffsetLatest)
	require.ErrorIs(t, err, metadata.ErrNotFound)

	// Written again, the partition comes back with a new id and no rows.
	appendRows(t, e, "events", [][]any{{int64(9), int64(10), "eu"}})
	parts, err = e.ListPartitions(ctx, path)
	require.NoError(t, err)
	require.Equal(t, "10$eu", parts[2].Name)
	require.Greater(t, parts[2].ID, p10.ID, "partition ids are never reused")
	tb := metadata.TableBucket{TableID: info.TableID, PartitionID: parts[2].ID}
	_, rows := readAll(t, e, tb, 0, -1, ReadOptions{})
	require.Equal(t, [][]any{{int64(9), int64(10), "eu"}}, rows)

	// NULL partition values are refused before anything is written.
	_, err = e.Append(ctx, path, [][]any{{int64(1), int64(2), "us"}, {int64(1), nil, "us"}})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "row 2")
	require.Equal(t, int64(2), hw(t, e, metadata.TableBucket{TableID: info.TableID, PartitionID: parts[0].ID}))
}

func partitionNames(parts []metadata.PartitionInfo) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Name)
	}
	return out
}

func TestRoundRobin(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "3"})
	var rows [][]any
	for i := range 7 {
		rows = append(rows, orderRow(i))
	}
	appendRows(t, e, "orders", rows)
	require.Equal(t, []int64{3, 2, 2}, []int64{hw(t, e, bucket(info, 0)), hw(t, e, bucket(info, 1)), hw(t, e, bucket(info, 2))})
	// The next statement starts where this one stopped.
	appendRows(t, e, "orders", rows[:5])
	require.Equal(t, []int64{4, 4, 4}, []int64{hw(t, e, bucket(info, 0)), hw(t, e, bucket(info, 1)), hw(t, e, bucket(info, 2))})
	_, got := readAll(t, e, bucket(info, 1), 0, -1, ReadOptions{Projection: []int{0}})
	require.Equal(t, [][]any{{int64(1)}, {int64(4)}, {int64(0)}, {int64(3)}}, got)
}

func TestBucketKeyRouting(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, map[string]string{metadata.OptBucketNum: "4", metadata.OptBucketKey: "id"})
	var rows [][]any
	for i := range 100 {
		rows = append(rows, orderRow(i))
	}
	appendRows(t, e, "orders", rows)
	total := 0
	for b := range int32(4) {
		_, got := readAll(t, e, bucket(info, b), 0, -1, ReadOptions{Projection: []int{0}})
		require.NotEmpty(t, got, "100 keys reach every one of 4 buckets")
		for _, row := range got {
			key, err := metadata.EncodeKey([]metadata.DataType{metadata.BigIntType()}, row)
			require.NoError(t, err)
			require.Equal(t, int(b), metadata.BucketOf(key, 4), "id %v", row[0])
		}
		total += len(got)
	}
	require.Equal(t, 100, total)
}

func TestBadRowsAreRejectedBeforeWriting(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	cols := append(ordersColumns(), col("small", metadata.TinyIntType()))
	info := createTable(t, e, "orders", cols, nil, nil)
	path := info.Path
	good := []any{int64(1), "a", 1.0, "2026-01-01", int64(1)}
	appendRows(t, e, "orders", [][]any{good})
	for _, tc := range []struct {
		row      []any
		sentinel error
		text     []string
	}{
		{[]any{int64(2), "a"}, metadata.ErrInvalidValue, []string{"row 2 has 2 values", "5 columns"}},
		{[]any{nil, "a", 1.0, "2026-01-01", int64(1)}, metadata.ErrConstraint, []string{"row 2", "column id", "NOT NULL"}},
		{[]any{int64(2), "a", 1.0, "2026-01-01", int64(300)}, metadata.ErrInvalidValue, []string{"row 2", "column small", "300"}},
		{[]any{int64(2), "a", 1.0, "2026-13-45", int64(1)}, metadata.ErrInvalidValue, []string{"row 2", "column dt", "2026-13-45"}},
	} {
		n, err := e.Append(ctx, path, [][]any{good, tc.row})
		require.ErrorIs(t, err, tc.sentinel)
		for _, s := range tc.text {
			require.ErrorContains(t, err, s)
		}
		require.Zero(t, n)
		require.Equal(t, int64(1), hw(t, e, bucket(info, 0)), "nothing of a bad statement is written")
	}
	_, err := e.Append(ctx, metadata.TablePath{Database: "fluss", Table: "nope"}, [][]any{good})
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.ErrorContains(t, err, "fluss.nope")
	_, err = e.TableInfo(ctx, metadata.TablePath{Database: "fluss", Table: "nope"})
	require.ErrorIs(t, err, metadata.ErrNotFound)
	require.ErrorContains(t, err, "fluss.nope")
}

func TestFilterSkipsBatchesByStatistics(t *testing.T) {
	e, _ := testEngine(t, "", nil)
	info := createTable(t, e, "orders", ordersColumns(), nil, nil)
	appendRows(t, e, "orders", [][]any{orderRow(1), orderRow(2)})
	appendRows(t, e, "orders", [][]any{orderRow(50), orderRow(60)})
	gt := func(v int64) predicate.P {
		return &predicate.Leaf{Op: predicate.Gt, Column: 0, Name: "id", Type: metadata.BigIntType(), Literals: []any{v}}
	}
	offsets, _ := readAll(t, e, bucket(info, 0), 0, -1, ReadOptions{Filter: gt(10)})
	require.Equal(t, []int64{2, 3}, offsets, "the first batch (ids 1..2) cannot match id > 10")
	offsets, _ = readAll(t, e, bucket(info, 0), 0, -1, ReadOptions{Filter: gt(1)})
	require.Equal(t, []int64{0, 1, 2, 3}, offsets, "a batch that may match is returned whole")
	offsets, _ = readAll(t, e, bucket(info, 0), 0, -1, ReadOptions{Filter: gt(100)})
	require.Empty(t, offsets)

	// Without statistics nothing is skipped.
	info2 := createTable(t, e, "nostats", ordersColumns(), nil, map[string]string{metadata.OptStatisticsColumns: ""})
	appendRows(t, e, "nostats", [][]any{orderRow(1)})
	offsets, _ = readAll(t, e, bucket(info2, 0), 0, -1, ReadOptions{Filter: gt(100)})
	require.Equal(t, []int64{0}, offsets)
}

func TestDDL(t *testing.T) {
	dir := t.TempDir()
	e, _ := testEngine(t, dir, nil)
	require.NoError(t, e.CreateDatabase(ctx, "shop", false))
	require.ErrorIs(t, e.CreateDatabase(ctx, "shop", false), metadata.ErrExists)
	require.NoError(t, e.CreateDatabase(ctx, "shop", true))
	require.ErrorIs(t, e.CreateDatabase(ctx, "bad name", false), metadata.ErrInvalidTable)

	desc := metadata.TableDescriptor{Path: metadata.TablePath{Database: "shop", Table: "t"}, Schema: metadata.Schema{Columns: ordersColumns()}}
	info, err := e.CreateTable(ctx, desc, false)
	require.NoError(t, err)
	_, err = e.CreateTable(ctx, desc, false)
	require.ErrorIs(t, err, metadata.ErrExists)
	same, err := e.CreateTable(ctx, desc, true)
	require.NoError(t, err)
	require.Equal(t, info.TableID, same.TableID)
	desc.Path.Database = "nope"
	_, err = e.CreateTable(ctx, desc, false)
	require.ErrorIs(t, err, metadata.ErrNotFound)

	altered, err := e.AlterTable(ctx, info.Path, map[string]string{metadata.OptStatisticsColumns: "id"})
	require.NoError(t, err)
	require.Equal(t, []string{"id"}, altered.Config.StatisticsColumns)
	_, err = e.AlterTable(ctx, info.Path, map[string]string{"no.such.option": "1"})
	require.ErrorIs(t, err, metadata.ErrInvalidOption)

	_, err = e.Append(ctx, info.Path, [][]any{orderRow(1)})
	require.NoError(t, err)
	require.DirExists(t, filepath.Join(dir, tableDir(info.TableID)))
	require.ErrorIs(t, e.DropDatabase(ctx, "shop", false, false), metadata.ErrConstraint)
	require.NoError(t, e.DropDatabase(ctx, "shop", false, true))
	require.NoDirExists(t, filepath.Join(dir, tableDir(info.TableID)))
	require.ErrorIs(t, e.DropDatabase(ctx, "shop", false, false), metadata.ErrNotFound)
	require.NoError(t, e.DropDatabase(ctx, "shop", true, false))
	require.Error(t, e.DropDatabase(ctx, "fluss", false, true))
	require.ErrorIs(t, e.DropTable(ctx, info.Path, false), metadata.ErrNotFound)

	snaps, err := e.LatestKvSnapshots(ctx, createTable(t, e, "t", ordersColumns(), nil, nil).Path, nil)
	require.NoError(t, err)
	require.Empty(t, snaps.Buckets)
	require.Equal(t, 1, snaps.NumBuckets)
	_, ok, err := e.ReadableLakeSnapshot(ctx, metadata.TablePath{Database: "fluss", Table: "t"})
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = e.ReadableLakeSnapshot(ctx, metadata.TablePath{Database: "fluss", Table: "nope"})
	require.ErrorIs(t, err, metadata.ErrNotFound)
}
