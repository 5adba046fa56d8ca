package pushdown_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/pushdown"
	"github.com/flusslite/fluss/sqlplan"
)

func col(name string, t metadata.DataType) metadata.Column {
	return metadata.Column{Name: name, Type: t}
}

func table(name string, cols []metadata.Column, partitionKeys []string, pk []string, format metadata.LogFormat) *metadata.TableInfo {
	return &metadata.TableInfo{
		Path:          metadata.TablePath{Database: "fluss", Table: name},
		TableID:       1,
		Schema:        metadata.Schema{Columns: cols, PrimaryKey: pk},
		PartitionKeys: partitionKeys,
		NumBuckets:    1,
		Config:        metadata.TableConfig{LogFormat: format},
	}
}

var ordersCols = []metadata.Column{
	col("id", metadata.BigIntType()),
	col("amount", metadata.DoubleType()),
	col("name", metadata.StringType()),
	col("address", metadata.StringType()),
	col("dt", metadata.StringType()),
	col("ts", metadata.TimestampType(3)),
	col("tiny", metadata.TinyIntType()),
	col("price", metadata.DecimalType(10, 2)),
	col("day", metadata.DateType()),
	col("qty", metadata.IntType()),
	col("tags", metadata.ArrayType(metadata.IntType())),
}

// tables are the fixtures of testdata/split and testdata/prune.
var tables = map[string]*metadata.TableInfo{
	// A log table partitioned by dt, in ARROW format: pushes data predicates.
	"orders": table("orders", ordersCols, []string{"dt"}, nil, metadata.LogFormatArrow),
	// The same in INDEXED format: no statistics, nothing pushed.
	"orders_indexed": table("orders_indexed", ordersCols, []string{"dt"}, nil, metadata.LogFormatIndexed),
	// A primary-key table: its changelog is merged by key, nothing pushed.
	"orders_pk": table("orders_pk", ordersCols, []string{"dt"}, []string{"id", "dt"}, metadata.LogFormatArrow),
	// Partitioned by an INT.
	"by_int": table("by_int", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.IntType()),
	}, []string{"p"}, nil, ""),
	// Partitioned by a DATE.
	"by_date": table("by_date", []metadata.Column{
		col("id", metadata.BigIntType()), col("d", metadata.DateType()),
	}, []string{"d"}, nil, ""),
	// Partitioned by a STRING.
	"by_string": table("by_string", []metadata.Column{
		col("id", metadata.BigIntType()), col("s", metadata.StringType()),
	}, []string{"s"}, nil, ""),
	// Partitioned by two keys: a DATE and a STRING.
	"by_two": table("by_two", []metadata.Column{
		col("id", metadata.BigIntType()), col("amount", metadata.DoubleType()),
		col("dt", metadata.DateType()), col("region", metadata.StringType()),
	}, []string{"dt", "region"}, nil, ""),
	// One table per remaining partition-key type.
	"by_bigint": table("by_bigint", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.BigIntType()),
	}, []string{"p"}, nil, ""),
	"by_tiny": table("by_tiny", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.TinyIntType()),
	}, []string{"p"}, nil, ""),
	"by_float": table("by_float", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.FloatType()),
	}, []string{"p"}, nil, ""),
	"by_double": table("by_double", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.DoubleType()),
	}, []string{"p"}, nil, ""),
	"by_bytes": table("by_bytes", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.BytesType()),
	}, []string{"p"}, nil, ""),
	"by_timestamp": table("by_timestamp", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.TimestampType(3)),
	}, []string{"p"}, nil, ""),
	"by_boolean": table("by_boolean", []metadata.Column{
		col("id", metadata.BigIntType()), col("p", metadata.BooleanType()),
	}, []string{"p"}, nil, ""),
	// A primary-key table with the lake enabled: pushes what the lake
	// accepts (the test's lake refuses the LIKE forms).
	"orders_pk_lake": lakeEnabled(table("orders_pk_lake", ordersCols, []string{"dt"}, []string{"id", "dt"}, metadata.LogFormatArrow)),
	// Partitioned by a BIGINT and a BOOLEAN.
	"by_bool": table("by_bool", []metadata.Column{
		col("id", metadata.BigIntType()), col("n", metadata.BigIntType()), col("b", metadata.BooleanType()),
	}, []string{"n", "b"}, nil, ""),
}

func lakeEnabled(t *metadata.TableInfo) *metadata.TableInfo {
	t.Config.DatalakeEnabled = true
	return t
}

// noLikeLake is a lake filter that accepts every predicate but the LIKE
// forms.
func noLikeLake(ps []predicate.P) (accepted, remaining []predicate.P) {
	for _, p := range ps {
		if l, ok := p.(*predicate.Leaf); ok && (l.Op == predicate.StartsWith || l.Op == predicate.EndsWith || l.Op == predicate.Contains) {
			remaining = append(remaining, p)
			continue
		}
		accepted = append(accepted, p)
	}
	return accepted, remaining
}

func lookup(t *testing.T, d *datadriven.TestData) *metadata.TableInfo {
	var name string
	d.ScanArgs(t, "table", &name)
	tbl, ok := tables[name]
	require.True(t, ok, "unknown table %q", name)
	return tbl
}

func show(p predicate.P) string {
	if p == nil {
		return "-"
	}
	return p.String()
}

// TestPushdown runs testdata/split and testdata/prune.
//
//	split table=T        input: WHERE clause; prints the three outputs
//	convert table=T      input: expression; prints Convert's predicate
//	prune table=T parts=(v1$w1, v2$w2, ...)
//	                     input: WHERE clause; prints the partition filter
//	                     and the partitions it keeps
func TestPushdown(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			tbl := lookup(t, d)
			where, err := parseWhere(tbl, strings.TrimSpace(d.Input))
			require.NoError(t, err, d.Input)
			switch d.Cmd {
			case "split":
				res := pushdown.SplitWithLake(tbl, where, noLikeLake)
				var out strings.Builder
				fmt.Fprintf(&out, "partition: %s\n", show(res.PartitionFilter))
				fmt.Fprintf(&out, "pushed: %s\n", show(res.Pushed))
				for _, e := range res.PostFilter {
					fmt.Fprintf(&out, "post: %s\n", e)
				}
				checkResult(t, tbl, where, res)
				return out.String()
			case "convert":
				p, ok := pushdown.Convert(tbl, where)
				if !ok {
					return "not convertible"
				}
				return p.String()
			case "prune":
				arg, ok := d.Arg("parts")
				require.True(t, ok, "prune needs parts")
				var parts []metadata.PartitionInfo
				for i, name := range arg.Vals {
					parts = append(parts, metadata.PartitionInfo{
						ID: int64(i + 1), Name: name, Values: strings.Split(name, "$"),
					})
				}
				res := pushdown.Split(tbl, where)
				kept, err := pushdown.PrunePartitions(tbl, parts, res.PartitionFilter)
				if err != nil {
					return "error: " + err.Error()
				}
				names := make([]string, len(kept))
				for i, p := range kept {
					names[i] = p.Name
				}
				if len(names) == 0 {
					names = []string{"(none)"}
				}
				return fmt.Sprintf("partition: %s\nkept: %s\n", show(res.PartitionFilter), strings.Join(names, " "))
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// checkResult asserts the invariants of a split that hold whatever the
// WHERE clause: every conjunct lands in exactly one of the partition
// filter and the post filter, and the pushed predicate is made only of
// conjuncts that are also in the post filter.
func checkResult(t *testing.T, tbl *metadata.TableInfo, where sqlplan.Expr, res pushdown.Result) {
	conj := sqlplan.Conjuncts(where)
	require.Equal(t, len(conj), len(predicate.Conjuncts(res.PartitionFilter))+len(res.PostFilter), "a conjunct was lost or doubled")
	var pushedFromPost int
	for _, e := range res.PostFilter {
		if p, ok := pushdown.Convert(tbl, e); ok {
			pushedFromPost += len(predicate.Conjuncts(p))
		}
	}
	pushed := len(predicate.Conjuncts(res.Pushed))
	switch {
	case !tbl.HasPrimaryKey() && tbl.Config.LogFormat != metadata.LogFormatIndexed:
		// An ARROW log pushes every convertible data conjunct.
		require.Equal(t, pushedFromPost, pushed)
	case tbl.Config.DatalakeEnabled:
		// The lake takes its share of them.
		require.LessOrEqual(t, pushed, pushedFromPost)
	default:
		require.Zero(t, pushed, "nothing is pushed without statistics to test")
	}
}

func TestSplitNil(t *testing.T) {
	res := pushdown.Split(tables["orders"], nil)
	require.Equal(t, pushdown.Result{}, res)
}

func TestSplitWithLakePushesWhatTheLakeAccepts(t *testing.T) {
	table, err := metadata.NewTableInfo(metadata.TableDescriptor{
		Path: metadata.TablePath{Database: "fluss", Table: "kv"},
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "k", Type: metadata.IntType()},
			{Name: "v", Type: metadata.StringType()},
		}, PrimaryKey: []string{"k"}},
		Options: map[string]string{"table.datalake.enabled": "true"},
	}, 1, 1, time.Now())
	require.NoError(t, err)
	k := &sqlplan.ColumnRef{Name: "k", Index: 0, T: metadata.IntType()}
	v := &sqlplan.ColumnRef{Name: "v", Index: 1, T: metadata.StringType()}
	where := &sqlplan.And{
		L: &sqlplan.Compare{Op: sqlplan.OpGt, L: k, R: &sqlplan.Literal{Value: int64(5), T: metadata.IntType()}},
		R: &sqlplan.Like{E: v, Pattern: &sqlplan.Literal{Value: "a%", T: metadata.StringType()}},
	}
	var asked []string
	onlyRanges := func(ps []predicate.P) (acc, rest []predicate.P) {
		for _, p := range ps {
			asked = append(asked, p.String())
			if l, ok := p.(*predicate.Leaf); ok && l.Op == predicate.StartsWith {
				rest = append(rest, p)
				continue
			}
			acc = append(acc, p)
		}
		return acc, rest
	}
	res := pushdown.SplitWithLake(&table, where, onlyRanges)
	require.Equal(t, []string{"k > 5", "v LIKE 'a%'"}, asked)
	require.Equal(t, "k > 5", res.Pushed.String())
	require.Len(t, res.PostFilter, 2, "every data conjunct is evaluated again")

	// Without the lake a primary-key table pushes nothing.
	require.Nil(t, pushdown.Split(&table, where).Pushed)
	table.Config.DatalakeEnabled = false
	require.Nil(t, pushdown.SplitWithLake(&table, where, onlyRanges).Pushed)
}
