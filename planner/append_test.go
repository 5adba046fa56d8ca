package planner_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
)

// testTable returns a log table with columns id, amount, address, name
// and the given partition columns ("p:INT"), as partition keys.
func testTable(buckets int, partitionCols []string, lake bool) (metadata.TableInfo, error) {
	cols := []metadata.Column{
		{Name: "id", Type: metadata.BigIntType()},
		{Name: "amount", Type: metadata.DoubleType()},
		{Name: "address", Type: metadata.StringType()},
		{Name: "name", Type: metadata.StringType()},
	}
	var keys []string
	for _, pc := range partitionCols {
		name, typ, ok := strings.Cut(pc, ":")
		if !ok {
			return metadata.TableInfo{}, fmt.Errorf("partition column %q: want name:TYPE", pc)
		}
		var t metadata.DataType
		switch strings.ToUpper(typ) {
		case "INT":
			t = metadata.IntType()
		case "BIGINT":
			t = metadata.BigIntType()
		case "DATE":
			t = metadata.DateType()
		case "STRING":
			t = metadata.StringType()
		default:
			return metadata.TableInfo{}, fmt.Errorf("type %q", typ)
		}
		cols = append(cols, metadata.Column{Name: name, Type: t})
		keys = append(keys, name)
	}
	return metadata.TableInfo{
		Path:          metadata.TablePath{Database: "fluss", Table: "orders"},
		TableID:       7,
		Schema:        metadata.Schema{Columns: cols},
		PartitionKeys: keys,
		NumBuckets:    buckets,
		Config:        metadata.TableConfig{LogFormat: metadata.LogFormatArrow, DatalakeEnabled: lake},
	}, nil
}

// parseFilter reads "c1 AND c2 ..." where each conjunct is "col op value",
// "col IN (v, ...)", "col IS [NOT] NULL" or "col LIKE 'p%'", values
// parsed as the column's type.
func parseFilter(table metadata.TableInfo, text string) (predicate.P, error) {
	var out []predicate.P
	for _, c := range strings.Split(text, " AND ") {
		fields := strings.Fields(c)
		if len(fields) < 3 {
			return nil, fmt.Errorf("conjunct %q", c)
		}
		idx := table.Schema.ColumnIndex(fields[0])
		if idx < 0 {
			return nil, fmt.Errorf("column %q", fields[0])
		}
		col := table.Schema.Columns[idx]
		l := &predicate.Leaf{Column: idx, Name: col.Name, Type: col.Type}
		rest := strings.TrimSpace(strings.TrimPrefix(c, fields[0]))
		switch {
		case rest == "IS NULL":
			l.Op = predicate.IsNull
		case rest == "IS NOT NULL":
			l.Op = predicate.IsNotNull
		case strings.HasPrefix(rest, "LIKE "):
			l.Op = predicate.StartsWith
			l.Literals = []any{strings.TrimSuffix(unquote(strings.TrimPrefix(rest, "LIKE ")), "%")}
		case strings.HasPrefix(rest, "IN "):
			l.Op = predicate.In
			list := strings.Trim(strings.TrimPrefix(rest, "IN "), "()")
			for _, v := range strings.Split(list, ",") {
				x, err := metadata.CoerceValue(col.Type, unquote(strings.TrimSpace(v)))
				if err != nil {
					return nil, err
				}
				l.Literals = append(l.Literals, x)
			}
		default:
			ops := map[string]predicate.Op{"=": predicate.Eq, "<>": predicate.NotEq, "<": predicate.Lt,
				"<=": predicate.LtEq, ">": predicate.Gt, ">=": predicate.GtEq}
			op, ok := ops[fields[1]]
			if !ok {
				return nil, fmt.Errorf("operator %q", fields[1])
			}
			x, err := metadata.CoerceValue(col.Type, unquote(strings.Join(fields[2:], " ")))
			if err != nil {
				return nil, err
			}
			l.Op, l.Literals = op, []any{x}
		}
		out = append(out, l)
	}
	return predicate.AndOf(out...), nil
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// plannerEnv is the state a golden file builds up.
type plannerEnv struct {
	// kind is "append", "upsert", "changelog", or "lake": the append or
	// upsert planner by the table's kind, given the fake lake source.
	kind    string
	admin   *fakeAdmin
	lake    *fakeLake
	spec    planner.ScanSpec
	planner scanPlanner
	splits  []planner.Split
}

// scanPlanner is what every planner under test offers.
type scanPlanner interface {
	planner.SplitPlanner
	ScanType() planner.ScanType
}

func splitLines(splits []planner.Split) string {
	var b strings.Builder
	for _, s := range splits {
		fmt.Fprintln(&b, s)
	}
	if len(splits) == 0 {
		b.WriteString("no splits\n")
	}
	return b.String()
}

// changelogTable is the virtual table t$changelog of table: the system
// columns, then the table's columns; its filters use these indexes.
func changelogTable(table metadata.TableInfo) metadata.TableInfo {
	v := table
	v.Schema.PrimaryKey = nil
	v.Schema.Columns = append([]metadata.Column{
		{Name: "_change_type", Type: metadata.StringType(), NotNull: true},
		{Name: "_log_offset", Type: metadata.BigIntType(), NotNull: true},
		{Name: "_commit_timestamp", Type: metadata.TimestampLTZType(3), NotNull: true},
	}, table.Schema.Columns...)
	return v
}

// TestAppendPlanner runs testdata/append_planner.
func TestAppendPlanner(t *testing.T) { runPlannerGolden(t, "testdata/append_planner", "append") }

// TestUpsertPlanner runs testdata/upsert_planner.
func TestUpsertPlanner(t *testing.T) { runPlannerGolden(t, "testdata/upsert_planner", "upsert") }

// TestLakeUnion runs testdata/lake_union: the lake-union branch of both
// planners over the fake admin and the fake lake source.
func TestLakeUnion(t *testing.T) { runPlannerGolden(t, "testdata/lake_union", "lake") }

// TestIncrementalPlanner runs testdata/incremental_planner: time-range
// incremental reads of log and primary-key tables.
func TestIncrementalPlanner(t *testing.T) {
	runPlannerGolden(t, "testdata/incremental_planner", "incremental")
}

// TestStreamStartGolden runs testdata/stream_start: the start offsets each
// startup mode of a subscription plans per bucket.
func TestStreamStartGolden(t *testing.T) {
	runPlannerGolden(t, "testdata/stream_start", "stream")
}

// TestChangelogPlanner runs testdata/changelog_planner.
func TestChangelogPlanner(t *testing.T) {
	runPlannerGolden(t, "testdata/changelog_planner", "changelog")
}

// runPlannerGolden runs a planner golden file over the planner of kind:
//
//	table buckets=N [partition=(p:INT, ...)] [pk] [lake] [snapshot=N] [probe-error]
//	                    pk makes id (and the partition keys) the primary key
//	partitions          input: "<id> <name>" lines (values joined by '$')
//	offsets             input: "<partition|-> <bucket> <start> <hw>" lines
//	kv-snapshots        input: "<partition|-> <bucket> <snapshot id> <log offset>"
//	                    lines: the latest KV snapshot of those buckets
//	plan [max-records=V] [read-optimized=V] [limit=N]
//	                    input: optional "partition: ..." and "pushed: ..."
//	                    lines (over t$changelog's columns for changelog);
//	                    builds a planner and plans, printing the calls it
//	                    made and the splits
//	batches             input: "<partition|-> <bucket> <offset>@<ts> ..."
//	                    lines: the batches of a bucket's log, in order
//	plan [start=V] [end=V]
//	                    (incremental) the window's options
//	plan [startup-mode=V] [startup-ts=V]
//	                    (changelog) scan.startup.mode and its timestamp
//	tiered              input: "<partition|-> <bucket> <offset>" lines: the
//	                    tiered offsets of the probed lake snapshot
//	lake-files          input: "<partition|-> <bucket> <path> [amount=lo..hi]"
//	                    lines: the fake lake's files (values of the
//	                    partition joined by '$'), with the range of their
//	                    amount column when given
//	drop-partition      input: partition names removed from the engine
//	plan ... [no-lake-source] [lake-only]
//	                    (lake) without WithLake; with WithLakeOnly
//	replan              plans again with the same planner
//	splits [ids]        prints the splits of the last plan (with their
//	                    partition ids)
//	explain             input: post-filter conjuncts, one a line
//	drop-partition-after-listing
//	                    input: partition ids dropped right after the next
//	                    ListPartitions returns them
//	stream-start mode=V [ts=N]
//	                    input: an optional "partition: ..." line; the start
//	                    offset StreamStart plans per bucket for a
//	                    subscription in startup mode V (from ts for
//	                    timestamp)
func runPlannerGolden(t *testing.T, path, kind string) {
	env := plannerEnv{kind: kind}
	ctx := context.Background()
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "table":
			buckets := 1
			d.MaybeScanArgs(t, "buckets", &buckets)
			var parts []string
			if arg, ok := d.Arg("partition"); ok {
				parts = arg.Vals
			}
			table, err := testTable(buckets, parts, d.HasArg("lake"))
			require.NoError(t, err)
			if d.HasArg("pk") {
				table.Schema.PrimaryKey = append([]string{"id"}, table.PartitionKeys...)
			}
			env = plannerEnv{kind: kind, admin: newFakeAdmin(table)}
			env.lake = &fakeLake{table: &env.admin.table}
			if d.HasArg("snapshot") {
				var id int64
				d.ScanArgs(t, "snapshot", &id)
				env.admin.lake = &metadata.LakeSnapshot{SnapshotID: id}
			}
			if d.HasArg("probe-error") {
				env.admin.probeErr = errors.New("lake catalog unreachable")
			}
			return ""
		case "partitions":
			for _, line := range nonEmptyLines(d.Input) {
				f := strings.Fields(line)
				id, err := strconv.ParseInt(f[0], 10, 64)
				require.NoError(t, err)
				env.admin.partitions = append(env.admin.partitions, metadata.PartitionInfo{
					ID: id, Name: f[1], Values: strings.Split(f[1], "$"),
				})
			}
			return ""
		case "offsets", "set-hw", "kv-snapshots":
			for _, line := range nonEmptyLines(d.Input) {
				f := strings.Fields(line)
				b, err := strconv.ParseInt(f[1], 10, 32)
				require.NoError(t, err)
				tb, err := env.admin.bucket(f[0], int32(b))
				require.NoError(t, err)
				nums := make([]int64, len(f)-2)
				for i, s := range f[2:] {
					nums[i], err = strconv.ParseInt(s, 10, 64)
					require.NoError(t, err)
				}
				switch d.Cmd {
				case "set-hw":
					env.admin.hw[tb] = nums[0]
				case "kv-snapshots":
					env.admin.kv[tb] = metadata.KvSnapshot{SnapshotID: nums[0], LogOffset: nums[1]}
				default:
					env.admin.start[tb], env.admin.hw[tb] = nums[0], nums[1]
				}
			}
			return ""
		case "batches":
			// "<partition|-> <bucket> <offset>@<ts> ...": the batches of
			// a bucket's log, for OffsetsForTimestamp.
			for _, line := range nonEmptyLines(d.Input) {
				f := strings.Fields(line)
				b, err := strconv.ParseInt(f[1], 10, 32)
				require.NoError(t, err)
				tb, err := env.admin.bucket(f[0], int32(b))
				require.NoError(t, err)
				for _, bt := range f[2:] {
					o, ts, ok := strings.Cut(bt, "@")
					require.True(t, ok, bt)
					var fb fakeBatch
					fb.offset, err = strconv.ParseInt(o, 10, 64)
					require.NoError(t, err)
					fb.ts, err = strconv.ParseInt(ts, 10, 64)
					require.NoError(t, err)
					env.admin.batches[tb] = append(env.admin.batches[tb], fb)
				}
			}
			return ""
		case "tiered":
			require.NotNil(t, env.admin.lake, "tiered needs a snapshot")
			if env.admin.lake.TieredOffsets == nil {
				env.admin.lake.TieredOffsets = map[metadata.TableBucket]int64{}
			}
			for _, line := range nonEmptyLines(d.Input) {
				f := strings.Fields(line)
				require.Len(t, f, 3, line)
				b, err := strconv.ParseInt(f[1], 10, 32)
				require.NoError(t, err)
				tb, err := env.admin.bucket(f[0], int32(b))
				require.NoError(t, err)
				off, err := strconv.ParseInt(f[2], 10, 64)
				require.NoError(t, err)
				env.admin.lake.TieredOffsets[tb] = off
			}
			return ""
		case "lake-files":
			for _, line := range nonEmptyLines(d.Input) {
				f := strings.Fields(line)
				require.GreaterOrEqual(t, len(f), 3, line)
				b, err := strconv.ParseInt(f[1], 10, 32)
				require.NoError(t, err)
				lf := fakeLakeFile{file: metadata.LakeFile{Path: f[2], Bucket: int32(b), RowCount: 10}}
				if f[0] != "-" {
					lf.file.PartitionName, lf.file.PartitionValues = f[0], strings.Split(f[0], "$")
				}
				for _, kv := range f[3:] {
					k, v, ok := strings.Cut(kv, "=")
					require.True(t, ok && k == "amount", kv)
					lo, hi, ok := strings.Cut(v, "..")
					require.True(t, ok, kv)
					lf.minAmt, err = strconv.ParseFloat(lo, 64)
					require.NoError(t, err)
					lf.maxAmt, err = strconv.ParseFloat(hi, 64)
					require.NoError(t, err)
					lf.hasStats = true
				}
				env.lake.files = append(env.lake.files, lf)
			}
			return ""
		case "drop-partition":
			for _, name := range nonEmptyLines(d.Input) {
				n := len(env.admin.partitions)
				env.admin.partitions = slices.DeleteFunc(env.admin.partitions, func(p metadata.PartitionInfo) bool { return p.Name == name })
				require.Equal(t, n-1, len(env.admin.partitions), "partition %q", name)
			}
			return ""
		case "drop-offset":
			var part string
			var b int
			d.ScanArgs(t, "partition", &part)
			d.ScanArgs(t, "bucket", &b)
			tb, err := env.admin.bucket(part, int32(b))
			require.NoError(t, err)
			env.admin.drop[tb] = true
			return ""
		case "plan":
			env.spec = planner.ScanSpec{Table: env.admin.table.Path, Limit: -1, Options: map[string]string{}}
			for arg, opt := range map[string]string{
				"max-records":    planner.OptMaxRecordsPerSplit,
				"read-optimized": planner.OptReadOptimized,
				"start":          planner.OptIncrementalStart,
				"end":            planner.OptIncrementalEnd,
				"startup-mode":   planner.OptScanStartupMode,
				"startup-ts":     planner.OptScanStartupTimestamp,
			} {
				if d.HasArg(arg) {
					var v string
					d.ScanArgs(t, arg, &v)
					env.spec.Options[opt] = v
				}
			}
			d.MaybeScanArgs(t, "limit", &env.spec.Limit)
			filterTable := env.admin.table
			if kind == "changelog" {
				filterTable = changelogTable(filterTable)
			}
			for _, line := range nonEmptyLines(d.Input) {
				what, text, ok := strings.Cut(line, ": ")
				require.True(t, ok, line)
				p, err := parseFilter(filterTable, text)
				require.NoError(t, err, line)
				switch what {
				case "partition":
					env.spec.PartitionFilter = p
				case "pushed":
					env.spec.PushedPredicate = p
				default:
					t.Fatalf("unknown line %q", line)
				}
			}
			env.admin.resetCalls()
			var pl scanPlanner
			var err error
			switch kind {
			case "append":
				pl, err = planner.NewAppendPlanner(ctx, env.admin, env.admin.table, env.spec)
			case "upsert":
				pl, err = planner.NewUpsertPlanner(ctx, env.admin, env.admin.table, env.spec)
			case "changelog":
				pl, err = planner.NewChangelogPlanner(ctx, env.admin, env.admin.table, env.spec)
			case "incremental":
				var window planner.TimeRange
				var ok bool
				window, ok, err = planner.IncrementalRange(env.spec.Options, time.UTC)
				if err == nil && !ok {
					err = errors.New("no incremental window in the options")
				}
				if err == nil {
					pl, err = planner.NewIncrementalPlanner(ctx, env.admin, env.admin.table, env.spec, window)
				}
			case "lake":
				var opts []planner.Option
				if !d.HasArg("no-lake-source") {
					opts = append(opts, planner.WithLake(env.lake))
				}
				if d.HasArg("lake-only") {
					opts = append(opts, planner.WithLakeOnly())
				}
				if env.admin.table.HasPrimaryKey() {
					pl, err = planner.NewUpsertPlanner(ctx, env.admin, env.admin.table, env.spec, opts...)
				} else {
					pl, err = planner.NewAppendPlanner(ctx, env.admin, env.admin.table, env.spec, opts...)
				}
			}
			if err != nil {
				return fmt.Sprintf("probes=%d\nerror: %v\n", env.admin.probes, err)
			}
			env.planner = pl
			return env.plan(ctx)
		case "drop-partition-after-listing":
			for _, name := range nonEmptyLines(d.Input) {
				id, err := strconv.ParseInt(name, 10, 64)
				require.NoError(t, err)
				env.admin.dropAfterListing = append(env.admin.dropAfterListing, id)
			}
			return ""
		case "stream-start":
			return env.streamStart(ctx, t, d)
		case "replan":
			env.admin.resetCalls()
			return env.plan(ctx)
		case "splits":
			if d.HasArg("ids") {
				var b strings.Builder
				for _, s := range env.splits {
					fmt.Fprintf(&b, "partition-id=%d %s\n", s.Bucket().PartitionID, s)
				}
				return b.String()
			}
			return splitLines(env.splits)
		case "explain":
			table := env.admin.table
			if kind == "changelog" {
				table = changelogTable(table)
			}
			lines := planner.Explain(table, env.spec, env.planner, env.splits, nonEmptyLines(d.Input))
			return strings.Join(lines, "\n") + "\n"
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func (env *plannerEnv) plan(ctx context.Context) string {
	if env.lake != nil {
		env.lake.plans, env.lake.accepted = 0, nil
	}
	splits, err := env.planner.Plan(ctx)
	kv := ""
	if env.kind == "upsert" || (env.kind == "lake" && env.admin.table.HasPrimaryKey()) {
		kv = fmt.Sprintf(" kv-snapshots=%d", env.admin.kvSnapshots)
	}
	if env.kind == "incremental" {
		kv = fmt.Sprintf(" kv-snapshots=%d timestamp-offsets=%d", env.admin.kvSnapshots, env.admin.timestampOffsets)
	}
	calls := fmt.Sprintf("probes=%d list-partitions=%d list-offsets=%d%s has-lake=%t type=%s\n",
		env.admin.probes, env.admin.listPartitions, env.admin.listOffsets, kv,
		env.planner.HasLakeSnapshot(), env.planner.ScanType())
	if env.kind == "lake" && env.lake.plans > 0 {
		var acc []string
		for _, a := range env.lake.accepted {
			acc = append(acc, a.String())
		}
		calls += fmt.Sprintf("lake plans=%d snapshot=%d accepted=[%s]\n", env.lake.plans, env.lake.snapshotID, strings.Join(acc, ", "))
	}
	if err != nil {
		env.splits = nil
		return calls + "error: " + err.Error() + "\n"
	}
	env.splits = splits
	return calls + splitLines(splits)
}

func (env *plannerEnv) streamStart(ctx context.Context, t *testing.T, d *datadriven.TestData) string {
	var mode string
	d.ScanArgs(t, "mode", &mode)
	start := planner.Startup{Mode: planner.StartupMode(mode)}
	d.MaybeScanArgs(t, "ts", &start.Timestamp)
	spec := planner.ScanSpec{Table: env.admin.table.Path, Limit: -1}
	for _, line := range nonEmptyLines(d.Input) {
		text, ok := strings.CutPrefix(line, "partition: ")
		require.True(t, ok, line)
		p, err := parseFilter(env.admin.table, text)
		require.NoError(t, err, line)
		spec.PartitionFilter = p
	}
	env.admin.resetCalls()
	offsets, err := planner.StreamStart(ctx, env.admin, env.admin.table, spec, start)
	calls := fmt.Sprintf("list-partitions=%d list-offsets=%d timestamp-offsets=%d\n",
		env.admin.listPartitions, env.admin.listOffsets, env.admin.timestampOffsets)
	if err != nil {
		return calls + "error: " + err.Error() + "\n"
	}
	names := map[int64]string{metadata.NonPartitioned: "-"}
	for _, p := range env.admin.partitions {
		names[p.ID] = p.Name
	}
	buckets := slices.SortedFunc(maps.Keys(offsets), func(a, b metadata.TableBucket) int {
		return cmp.Or(cmp.Compare(a.PartitionID, b.PartitionID), cmp.Compare(a.Bucket, b.Bucket))
	})
	var b strings.Builder
	b.WriteString(calls)
	for _, tb := range buckets {
		fmt.Fprintf(&b, "partition=%s bucket=%d start=%d\n", names[tb.PartitionID], tb.Bucket, offsets[tb])
	}
	if len(buckets) == 0 {
		b.WriteString("no buckets\n")
	}
	return b.String()
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
