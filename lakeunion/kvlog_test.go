package lakeunion_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/lakeunion"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
)

var testBucket = metadata.TableBucket{TableID: 1, PartitionID: metadata.NonPartitioned, Bucket: 0}

var testTypes = map[string]metadata.DataType{
	"BOOLEAN":       metadata.BooleanType(),
	"TINYINT":       metadata.TinyIntType(),
	"SMALLINT":      metadata.SmallIntType(),
	"INT":           metadata.IntType(),
	"BIGINT":        metadata.BigIntType(),
	"DOUBLE":        metadata.DoubleType(),
	"STRING":        metadata.StringType(),
	"CHAR(3)":       metadata.CharType(3),
	"BYTES":         metadata.BytesType(),
	"DATE":          metadata.DateType(),
	"DECIMAL(10,2)": metadata.DecimalType(10, 2),
	"TIMESTAMP(3)":  metadata.TimestampType(3),
	"ARRAY<INT>":    metadata.ArrayType(metadata.IntType()),
}

var changeTypes = map[string]metadata.ChangeType{"+A": metadata.ChangeAppendOnly, "+I": metadata.ChangeInsert, "-U": metadata.ChangeUpdateBefore, "+U": metadata.ChangeUpdateAfter, "-D": metadata.ChangeDelete}

// mergeEnv is the state a golden file builds up.
type mergeEnv struct {
	table *metadata.TableInfo
	mem   *memory.CheckedAllocator
	src   *fakeSource
}

// parseTable reads "name TYPE [pk] [partition]" lines.
func parseTable(t *testing.T, input string) *metadata.TableInfo {
	table := &metadata.TableInfo{
		Path:       metadata.TablePath{Database: "fluss", Table: "t"},
		TableID:    testBucket.TableID,
		NumBuckets: 1,
	}
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		typ, ok := testTypes[f[1]]
		require.True(t, ok, "type %q", f[1])
		col := metadata.Column{Name: f[0], Type: typ}
		for _, flag := range f[2:] {
			switch flag {
			case "pk":
				col.NotNull = true
				table.Schema.PrimaryKey = append(table.Schema.PrimaryKey, f[0])
			case "partition":
				table.PartitionKeys = append(table.PartitionKeys, f[0])
			default:
				t.Fatalf("flag %q", flag)
			}
		}
		table.Schema.Columns = append(table.Schema.Columns, col)
	}
	return table
}

// parseRow reads whitespace-separated values of every column; NULL is
// NULL, and a value of a nested type is written as Go would parse it
// nowhere, so tests keep nested columns NULL or use gen commands.
func (env *mergeEnv) parseRow(t *testing.T, fields []string) []any {
	cols := env.table.Schema.Columns
	require.Len(t, fields, len(cols), "row %q", fields)
	row := make([]any, len(cols))
	for i, s := range fields {
		if s == "NULL" {
			continue
		}
		v, err := metadata.CoerceValue(cols[i].Type, s)
		require.NoError(t, err, "column %s value %q", cols[i].Name, s)
		row[i] = v
	}
	return row
}

// genRow is the generated row of key k: every integer column k, every
// string column "s<k>", doubles k/2.
func (env *mergeEnv) genRow(k int64, suffix string) []any {
	cols := env.table.Schema.Columns
	row := make([]any, len(cols))
	for i, c := range cols {
		switch {
		case c.Type.IsInteger():
			row[i] = k
		case c.Type.IsString():
			row[i] = fmt.Sprintf("s%d%s", k, suffix)
		case c.Type.Root == metadata.Double:
			row[i] = float64(k) / 2
		}
	}
	return row
}

func parseRange(t *testing.T, s string) (int64, int64) {
	a, b, ok := strings.Cut(s, "..")
	require.True(t, ok, "range %q", s)
	lo, err := strconv.ParseInt(a, 10, 64)
	require.NoError(t, err)
	hi, err := strconv.ParseInt(b, 10, 64)
	require.NoError(t, err)
	return lo, hi
}

func (env *mergeEnv) projection(t *testing.T, d *datadriven.TestData, cols []metadata.Column) []int {
	arg, ok := d.Arg("proj")
	if !ok {
		return nil
	}
	proj := []int{}
	for _, name := range arg.Vals {
		if name == "" {
			continue
		}
		idx := -1
		for i, c := range cols {
			if c.Name == name {
				idx = i
			}
		}
		require.GreaterOrEqual(t, idx, 0, "column %q", name)
		proj = append(proj, idx)
	}
	return proj
}

// TestKvMerge runs testdata/kvmerge: the fold of a log tail and its merge
// with a KV snapshot.
//
//	table                 input: "name TYPE [pk] [partition]" lines
//	snapshot [id=N]       input: rows of the snapshot (any order)
//	gen-snapshot [id=N] keys=A..B
//	log [ts=N] [append-only]
//	                      input: "<+I|-U|+U|-D|+A> values..." lines: one batch
//	gen-log ct=X keys=A..B [suffix=S]
//	read [snapshot=N|none] [start=N] [stop=N] [proj=(a,b)] [batch=N]
//	     [snapshot-batch=N] [summary] [batches]
//	                      reads a kv+log split and prints its rows (or,
//	                      with summary, the row count and key range)
//	changelog [start=N] [stop=N] [proj=(...)]
//	                      reads the log as t$changelog
//	lake-file path=P      input: rows of a lake file (any order)
//	gen-lake-file path=P keys=A..B [suffix=S]
//	read-lake [files=(a,b)] [proj=(...)] [filter=(col,op,v)] [lake-batch=N]
//	                      reads a lake split of the files (default all,
//	                      by path) and prints its rows and lake reads
//	read-lake-log [files=(...)] [start=N] [stop=N] [proj=(...)] [batch=N]
//	     [filter=(col,op,v)] [lake-batch=N] [disorder] [summary] [batches]
//	                      reads a lake+log split: the fake lake merges
//	                      the files by key (a later file wins), the
//	                      reader merges that with the folded tail
func TestKvMerge(t *testing.T) { runMergeTest(t, "testdata/kvmerge") }

// TestLakeMerge runs testdata/lakemerge: lake splits, and the merge of a
// bucket's sorted lake files with its changelog tail.
func TestLakeMerge(t *testing.T) { runMergeTest(t, "testdata/lakemerge") }

// TestChangelog runs testdata/changelog.
func TestChangelog(t *testing.T) { runMergeTest(t, "testdata/changelog") }

func runMergeTest(t *testing.T, path string) {
	var env mergeEnv
	ctx := context.Background()
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "table":
			env = mergeEnv{table: parseTable(t, d.Input)}
			return ""
		case "snapshot", "gen-snapshot":
			id := int64(1)
			d.MaybeScanArgs(t, "id", &id)
			var rows [][]any
			if d.Cmd == "snapshot" {
				for _, line := range nonEmptyLines(d.Input) {
					rows = append(rows, env.parseRow(t, strings.Fields(line)))
				}
			} else {
				var keys string
				d.ScanArgs(t, "keys", &keys)
				lo, hi := parseRange(t, keys)
				for k := lo; k <= hi; k++ {
					rows = append(rows, env.genRow(k, ""))
				}
			}
			env.snapshots()[id] = rows
			return ""
		case "log", "gen-log":
			var ts int64
			d.MaybeScanArgs(t, "ts", &ts)
			var changes []change
			if d.Cmd == "log" {
				for _, line := range nonEmptyLines(d.Input) {
					f := strings.Fields(line)
					ct, ok := changeTypes[f[0]]
					require.True(t, ok, "change type %q", f[0])
					changes = append(changes, change{ct: ct, row: env.parseRow(t, f[1:])})
				}
			} else {
				var ctName, keys, suffix string
				d.ScanArgs(t, "ct", &ctName)
				d.ScanArgs(t, "keys", &keys)
				d.MaybeScanArgs(t, "suffix", &suffix)
				lo, hi := parseRange(t, keys)
				for k := lo; k <= hi; k++ {
					changes = append(changes, change{ct: changeTypes[ctName], row: env.genRow(k, suffix)})
				}
			}
			base := env.source().appendLog(testBucket, ts, d.HasArg("append-only"), changes)
			return fmt.Sprintf("offsets %d..%d\n", base, base+int64(len(changes)))
		case "lake-file", "gen-lake-file":
			var path string
			d.ScanArgs(t, "path", &path)
			var rows [][]any
			if d.Cmd == "lake-file" {
				for _, line := range nonEmptyLines(d.Input) {
					rows = append(rows, env.parseRow(t, strings.Fields(line)))
				}
			} else {
				var keys, suffix string
				d.ScanArgs(t, "keys", &keys)
				d.MaybeScanArgs(t, "suffix", &suffix)
				lo, hi := parseRange(t, keys)
				for k := lo; k <= hi; k++ {
					rows = append(rows, env.genRow(k, suffix))
				}
			}
			env.source().lake[path] = rows
			return ""
		case "read-lake", "read-lake-log":
			return env.readLake(ctx, t, d)
		case "read":
			return env.read(ctx, t, d)
		case "changelog":
			return env.changelog(ctx, t, d)
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func (env *mergeEnv) source() *fakeSource {
	if env.src == nil {
		env.mem = memory.NewCheckedAllocator(memory.NewGoAllocator())
		env.src = newFakeSource(env.table, env.mem)
	}
	return env.src
}

func (env *mergeEnv) snapshots() map[int64][][]any {
	src := env.source()
	if src.snaps[testBucket] == nil {
		src.snaps[testBucket] = map[int64][][]any{}
	}
	return src.snaps[testBucket]
}

func (env *mergeEnv) read(ctx context.Context, t *testing.T, d *datadriven.TestData) string {
	src := env.source()
	split := &planner.KvLogSplit{TableBucket: testBucket, SnapshotID: 1, LogStop: src.logEnd(testBucket)}
	if arg, ok := d.Arg("snapshot"); ok {
		if arg.Vals[0] == "none" {
			split.SnapshotID = planner.NoKvSnapshot
		} else {
			d.ScanArgs(t, "snapshot", &split.SnapshotID)
		}
	}
	d.MaybeScanArgs(t, "start", &split.LogStart)
	d.MaybeScanArgs(t, "stop", &split.LogStop)
	opts := lakeunion.Options{Projection: env.projection(t, d, env.table.Schema.Columns), Allocator: env.mem}
	d.MaybeScanArgs(t, "batch", &opts.BatchSize)
	src.snapBatch = 0
	d.MaybeScanArgs(t, "snapshot-batch", &src.snapBatch)
	out := env.drain(ctx, t, src, split, opts, d.HasArg("summary"), d.HasArg("batches"))
	return out
}

// filter parses filter=(col,op,value) into a predicate over the table.
func (env *mergeEnv) filter(t *testing.T, d *datadriven.TestData) predicate.P {
	arg, ok := d.Arg("filter")
	if !ok {
		return nil
	}
	require.Len(t, arg.Vals, 3, "filter=(col,op,value)")
	idx := env.table.Schema.ColumnIndex(arg.Vals[0])
	require.GreaterOrEqual(t, idx, 0, "column %q", arg.Vals[0])
	col := env.table.Schema.Columns[idx]
	ops := map[string]predicate.Op{"=": predicate.Eq, "<>": predicate.NotEq, "<": predicate.Lt,
		"<=": predicate.LtEq, ">": predicate.Gt, ">=": predicate.GtEq}
	op, ok := ops[arg.Vals[1]]
	require.True(t, ok, "operator %q", arg.Vals[1])
	v, err := metadata.CoerceValue(col.Type, arg.Vals[2])
	require.NoError(t, err)
	return &predicate.Leaf{Column: idx, Name: col.Name, Type: col.Type, Op: op, Literals: []any{v}}
}

// readLake reads a lake split (read-lake) or a lake+log split
// (read-lake-log) of the files named (default: every lake file, in path
// order) and prints its rows, then the lake reads it made.
func (env *mergeEnv) readLake(ctx context.Context, t *testing.T, d *datadriven.TestData) string {
	src := env.source()
	var files []metadata.LakeFile
	if arg, ok := d.Arg("files"); ok {
		for _, p := range arg.Vals {
			if p != "" {
				files = append(files, metadata.LakeFile{Path: p})
			}
		}
	} else {
		for _, p := range slices.Sorted(maps.Keys(src.lake)) {
			files = append(files, metadata.LakeFile{Path: p})
		}
	}
	var split planner.Split
	if d.Cmd == "read-lake" {
		split = &planner.LakeSplit{TableBucket: testBucket, Files: files}
	} else {
		sp := &planner.LakeLogSplit{TableBucket: testBucket, Files: files, LogStop: src.logEnd(testBucket)}
		d.MaybeScanArgs(t, "start", &sp.LogStart)
		d.MaybeScanArgs(t, "stop", &sp.LogStop)
		split = sp
	}
	opts := lakeunion.Options{Projection: env.projection(t, d, env.table.Schema.Columns), Allocator: env.mem, Filter: env.filter(t, d)}
	d.MaybeScanArgs(t, "batch", &opts.BatchSize)
	src.lakeBatch = 0
	d.MaybeScanArgs(t, "lake-batch", &src.lakeBatch)
	src.disorder = d.HasArg("disorder")
	defer func() { src.disorder = false }()
	src.lakeReads = nil
	out := env.drain(ctx, t, src, split, opts, d.HasArg("summary"), d.HasArg("batches"))
	for _, r := range src.lakeReads {
		out += fmt.Sprintf("lake read: sorted=%t files=%d proj=%v filter-rows=%t", r.sorted, r.files, r.proj, r.filterRows)
		if r.filter != "" {
			out += " filter=" + r.filter
		}
		out += "\n"
	}
	return out
}

func (env *mergeEnv) changelog(ctx context.Context, t *testing.T, d *datadriven.TestData) string {
	src := env.source()
	split := &planner.LogSplit{TableBucket: testBucket, StopOffset: src.logEnd(testBucket)}
	d.MaybeScanArgs(t, "start", &split.StartOffset)
	d.MaybeScanArgs(t, "stop", &split.StopOffset)
	opts := lakeunion.Options{
		Projection: env.projection(t, d, lakeunion.ChangelogColumns(env.table)),
		Changelog:  true,
		Allocator:  env.mem,
	}
	out := env.drain(ctx, t, src, split, opts, false, d.HasArg("batches"))
	if len(src.logReads) > 0 {
		out += fmt.Sprintf("log read projection: %v\n", src.logReads[len(src.logReads)-1])
	}
	return out
}

// drain reads a split through a Scan and renders its rows; it then checks
// that every reader was closed and every Arrow buffer released.
func (env *mergeEnv) drain(ctx context.Context, t *testing.T, src *fakeSource, split planner.Split,
	opts lakeunion.Options, summary, batches bool) string {
	scan := lakeunion.NewSourceScan(src, env.table, []planner.Split{split}, opts)
	var b strings.Builder
	var rows, nbatches int
	var first, last string
	header := false
	for {
		rec, err := scan.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			require.NoError(t, scan.Close())
			require.Zero(t, src.open, "open readers")
			env.mem.AssertSize(t, 0)
			return "error: " + err.Error() + "\n"
		}
		nbatches++
		if !header && !summary {
			names := make([]string, rec.NumCols())
			for i, f := range rec.Schema().Fields() {
				names[i] = f.Name
			}
			if len(names) == 0 {
				names = []string{"(no columns)"}
			}
			fmt.Fprintf(&b, "%s\n", strings.Join(names, " "))
			header = true
		}
		if batches && !summary {
			fmt.Fprintf(&b, "-- batch of %d\n", rec.NumRows())
		}
		for i := range int(rec.NumRows()) {
			line := formatRow(rec, i)
			if rows == 0 {
				first = line
			}
			last = line
			rows++
			if !summary {
				fmt.Fprintf(&b, "%s\n", line)
			}
		}
	}
	require.NoError(t, scan.Close())
	require.NoError(t, scan.Close(), "Close is idempotent")
	require.Zero(t, src.open, "open readers")
	env.mem.AssertSize(t, 0)
	if summary {
		fmt.Fprintf(&b, "rows=%d batches=%d\nfirst: %s\nlast: %s\n", rows, nbatches, first, last)
	}
	if rows == 0 {
		b.WriteString("no rows\n")
	}
	return b.String()
}

// formatRow renders row i of rec, each value by its Arrow array.
func formatRow(rec arrow.RecordBatch, i int) string {
	vals := make([]string, rec.NumCols())
	for c := range vals {
		col := rec.Column(c)
		if col.IsNull(i) {
			vals[c] = "NULL"
			continue
		}
		switch a := col.(type) {
		case *array.Binary:
			vals[c] = fmt.Sprintf("%x", a.Value(i))
		case *array.Decimal128:
			dt := a.DataType().(*arrow.Decimal128Type)
			vals[c] = metadata.ValueAt(a, metadata.DecimalType(int(dt.Precision), int(dt.Scale)), i).(metadata.DecimalValue).String()
		case *array.Timestamp:
			vals[c] = a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC().Format("2006-01-02 15:04:05.000")
		default:
			vals[c] = col.ValueStr(i)
		}
	}
	if len(vals) == 0 {
		return "()"
	}
	return strings.Join(vals, " ")
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
