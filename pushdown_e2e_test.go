package fluss_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// analyzeLines returns the EXPLAIN ANALYZE lines of q.
func analyzeLines(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	var out []string
	for _, r := range queryAll(t, db, "EXPLAIN ANALYZE "+q, args...) {
		out = append(out, r[0].(string))
	}
	return out
}

// readTotals parses the last line of EXPLAIN ANALYZE.
type readTotals struct {
	opened, splits, batches, skipped, groups, groupsAll, rows, result int64
}

func totals(t *testing.T, lines []string) readTotals {
	t.Helper()
	last := lines[len(lines)-1]
	var r readTotals
	_, err := fmt.Sscanf(last, "Read: splits=%d/%d batches=%d skipped=%d row_groups=%d/%d rows=%d result_rows=%d",
		&r.opened, &r.splits, &r.batches, &r.skipped, &r.groups, &r.groupsAll, &r.rows, &r.result)
	require.NoError(t, err, last)
	return r
}

func idsOf(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	var ids []int64
	for _, r := range queryAll(t, db, q, args...) {
		ids = append(ids, r[0].(int64))
	}
	slices.Sort(ids)
	return ids
}

// TestExplainPushdown pins what EXPLAIN prints of the pushdown decision
// for the cases of Fluss's own pushdown suite, end to end through SQL.
func TestExplainPushdown(t *testing.T) {
	db, _ := openDB(t, "sync=off")
	mustExec(t, db, `CREATE TABLE orders (id BIGINT, amount DOUBLE, name STRING, address STRING,
		day DATE, ts TIMESTAMP(3), tiny TINYINT, dt STRING) PARTITIONED BY (dt)`)
	mustExec(t, db, `CREATE TABLE orders_indexed (id BIGINT, amount DOUBLE, dt STRING) PARTITIONED BY (dt)
		WITH ('table.log.format' = 'INDEXED')`)
	mustExec(t, db, `INSERT INTO orders VALUES (1, 250, 'alice', 'x', '2026-01-02', '2026-01-02 10:00:00', 1, '2026-01-01'),
		(2, 50, 'bob', NULL, '2026-01-03', '2026-01-03 10:00:00', 2, '2026-01-02')`)
	mustExec(t, db, `INSERT INTO orders_indexed VALUES (1, 250, '2026-01-01')`)
	for _, tc := range []struct{ q, head, post string }{
		{`SELECT id FROM orders WHERE id = 7`,
			"[PushedPredicates: id = 7]", "PostFilter: id = 7"},
		{`SELECT id FROM orders WHERE amount >= 200`,
			"[PushedPredicates: amount >= 200]", "PostFilter: amount >= 200"},
		{`SELECT id FROM orders WHERE amount >= 200 AND address IS NOT NULL`,
			"[PushedPredicates: amount >= 200, address IS NOT NULL]", "PostFilter: amount >= 200 AND address IS NOT NULL"},
		{`SELECT id FROM orders WHERE name LIKE 'al%'`,
			"[PushedPredicates: name LIKE 'al%']", "PostFilter: name LIKE 'al%'"},
		{`SELECT id FROM orders WHERE id IN (1, 2, 3)`,
			"[PushedPredicates: id IN (1, 2, 3)]", "PostFilter: id IN (1, 2, 3)"},
		// Not pushable: evaluated above the scan only.
		{`SELECT id FROM orders WHERE amount % 2 = 0`,
			"", "PostFilter: (amount % 2) = 0"},
		{`SELECT id FROM orders WHERE amount % 2 = 0 AND id > 1`,
			"[PushedPredicates: id > 1]", "PostFilter: (amount % 2) = 0 AND id > 1"},
		{`SELECT id FROM orders WHERE day >= '2026-01-03' AND ts < '2026-01-03 00:00:00'`,
			"[PushedPredicates: day >= '2026-01-03', ts < '2026-01-03 00:00:00.000']", ""},
		{`SELECT id FROM orders WHERE day = '2026-01-03'`,
			"[PushedPredicates: day = '2026-01-03']", ""},
		{`SELECT id FROM orders WHERE dt = '2026-01-01' AND amount > 5`,
			"[PushedPredicates: amount > 5] [PartitionFilter: dt = '2026-01-01']", "PostFilter: amount > 5"},
		{`SELECT id FROM orders WHERE tiny = 300`,
			"[PushedPredicates: tiny = 300]", "PostFilter: tiny = 300"},
		{`SELECT id FROM orders WHERE 5 < id LIMIT 3`,
			"[PushedPredicates: id > 5]", ""},
		{`SELECT id FROM orders LIMIT 3`,
			"[Limit: 3]", ""},
		{`SELECT id FROM orders_indexed WHERE dt = '2026-01-01' AND amount >= 200`,
			"[PartitionFilter: dt = '2026-01-01']", "PostFilter: amount >= 200"},
	} {
		plan := planLines(t, db, tc.q)
		table := "orders"
		if strings.Contains(tc.q, "orders_indexed") {
			table = "orders_indexed"
		}
		head := fmt.Sprintf("FlussScan: [fluss.%s], Type: [Append]", table)
		if tc.head != "" {
			head += " " + tc.head
		}
		require.Equal(t, head, plan[0], tc.q)
		if tc.post != "" {
			require.Equal(t, tc.post, plan[2], tc.q)
		}
	}

	// A partition filter that matches no partition plans no split.
	plan := planLines(t, db, `SELECT id FROM orders WHERE dt = '2030-01-01'`)
	require.Equal(t, "FlussScan: [fluss.orders], Type: [Append] [PartitionFilter: dt = '2030-01-01']", plan[0])
	require.Zero(t, countKinds(plan)["log"])
	require.Empty(t, queryAll(t, db, `SELECT id FROM orders WHERE dt = '2030-01-01'`))
}

// TestOutOfRangeLiteralsPushed: a literal the column's type cannot hold
// is pushed with its exact value and answers exactly: no wrap-around, no
// rounding, no error, on a partition key (pruning) as on a data column.
func TestOutOfRangeLiteralsPushed(t *testing.T) {
	db, _ := openDB(t, "sync=off")
	mustExec(t, db, `CREATE TABLE t (id BIGINT, x TINYINT, n INT, p TINYINT) PARTITIONED BY (p)`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 127, 2, 44), (2, -128, 3, 127), (3, 44, NULL, -128), (4, NULL, 5, 44)`)
	for _, tc := range []struct {
		where string
		want  []int64
	}{
		{"x = 300", nil},
		{"x = 44", []int64{3}},
		{"x < 300", []int64{1, 2, 3}},
		{"x > -300", []int64{1, 2, 3}},
		{"x <> 300", []int64{1, 2, 3}},
		{"NOT (x = 300)", []int64{1, 2, 3}},
		{"x IN (300, 44)", []int64{3}},
		{"x BETWEEN -1000 AND 1000", []int64{1, 2, 3}},
		{"n > 2.5", []int64{2, 4}},
		{"n < 2.5", []int64{1}},
		{"n = 2.5", nil},
		{"p = 300", nil},
		{"p < 300", []int64{1, 2, 3, 4}},
		{"p = 44 AND x < 1000", []int64{1}},
		{"300 > p AND p > 100", []int64{2}},
	} {
		q := "SELECT id FROM t WHERE " + tc.where
		require.Equal(t, tc.want, idsOf(t, db, q), tc.where)
		require.NotContains(t, strings.Join(planLines(t, db, q), "\n"), "44 = ", tc.where)
	}
	// p = 300 prunes every partition: nothing is planned.
	require.Zero(t, countKinds(planLines(t, db, "SELECT id FROM t WHERE p = 300"))["log"])
}

// timeOrdered creates ev(ts, id, v) with statistics (or without) and
// writes n rows in time order, per rows per INSERT: one record batch per
// INSERT.
func timeOrdered(t *testing.T, db *sql.DB, table string, stats bool, n, per int) time.Time {
	t.Helper()
	with := ""
	if !stats {
		with = ` WITH ('table.statistics.columns' = '')`
	}
	mustExec(t, db, `CREATE TABLE `+table+` (ts TIMESTAMP(3), id BIGINT, v STRING)`+with)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start := 0; start < n; start += per {
		var vals []string
		var args []any
		for i := start; i < min(start+per, n); i++ {
			vals = append(vals, "(?, ?, ?)")
			args = append(args, base.Add(time.Duration(i)*time.Second), int64(i), fmt.Sprint("v", i))
		}
		mustExec(t, db, `INSERT INTO `+table+` VALUES `+strings.Join(vals, ", "), args...)
	}
	return base
}

// TestExplainAnalyzeSkipsBatches: a selective range over time-ordered
// data reads the few batches that may hold it and skips the rest by their
// statistics; without statistics every batch is read. The rows are the
// same.
func TestExplainAnalyzeSkipsBatches(t *testing.T) {
	// One split reader, so that "no further split is opened" is exact;
	// with more workers each may have opened one split before the limit.
	db, _ := openDB(t, "sync=off&threads=1")
	base := timeOrdered(t, db, "ev", true, 400, 10)
	timeOrdered(t, db, "ev_nostats", false, 400, 10)
	lo, hi := base.Add(195*time.Second), base.Add(214*time.Second)
	q := `SELECT id FROM %s WHERE ts BETWEEN ? AND ?`

	lines := analyzeLines(t, db, fmt.Sprintf(q, "ev"), lo, hi)
	require.Contains(t, lines[0], "[PushedPredicates: ts >= '2026-01-01 00:03:15.000', ts <= '2026-01-01 00:03:34.000']")
	require.Equal(t, "Split: log partition=- bucket=0 log=0..400", lines[3])
	require.True(t, strings.HasPrefix(lines[4], "  read: "), lines[4])
	got := totals(t, lines)
	require.Equal(t, readTotals{opened: 1, splits: 1, batches: 3, skipped: 37, rows: 30, result: 20}, got, strings.Join(lines, "\n"))

	none := totals(t, analyzeLines(t, db, fmt.Sprintf(q, "ev_nostats"), lo, hi))
	require.Equal(t, readTotals{opened: 1, splits: 1, batches: 40, rows: 400, result: 20}, none)

	want := idsOf(t, db, fmt.Sprintf(q, "ev_nostats"), lo, hi)
	require.Len(t, want, 20)
	require.Equal(t, want, idsOf(t, db, fmt.Sprintf(q, "ev"), lo, hi))

	// A point lookup-free scan with a LIMIT and no post filter stops early:
	// no further split is opened once the limit is reached.
	lim := analyzeLines(t, db, `SELECT /*+ OPTIONS('scan.max-records-per-split'='100') */ id FROM ev LIMIT 5`)
	require.Contains(t, lim[0], "[Limit: 5]")
	lt := totals(t, lim)
	require.Equal(t, int64(4), lt.splits)
	require.Equal(t, int64(1), lt.opened, strings.Join(lim, "\n"))
	require.Equal(t, int64(5), lt.result)
}

// TestRangeSplits: scan.max-records-per-split cuts a log-only append range
// of R records into ceil(R/M) ranges, from the DSN or a hint (the hint
// wins), and never a key table's read or a lake-union tail.
func TestRangeSplits(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off&scan.max-records-per-split=2")
	mustExec(t, db, `CREATE TABLE lg (id BIGINT)`)
	mustExec(t, db, `INSERT INTO lg VALUES (1), (2), (3), (4), (5)`)
	plan := planLines(t, db, `SELECT id FROM lg`)
	require.Equal(t, []string{
		"Split: log partition=- bucket=0 log=0..2",
		"Split: log partition=- bucket=0 log=2..4",
		"Split: log partition=- bucket=0 log=4..5",
	}, plan[2:])
	require.Equal(t, []int64{1, 2, 3, 4, 5}, idsOf(t, db, `SELECT id FROM lg`))

	hinted := `SELECT /*+ OPTIONS('scan.max-records-per-split'='4') */ id FROM lg`
	require.Equal(t, []string{
		"Split: log partition=- bucket=0 log=0..3",
		"Split: log partition=- bucket=0 log=3..5",
	}, planLines(t, db, hinted)[2:])
	require.Equal(t, []int64{1, 2, 3, 4, 5}, idsOf(t, db, hinted))
	require.Len(t, planLines(t, db, `SELECT /*+ OPTIONS('scan.max-records-per-split'='0') */ id FROM lg`)[2:], 1)

	// A key table: one kv+log split per bucket, whatever M.
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')`)
	require.Equal(t, map[string]int{"kv+log": 1}, countKinds(planLines(t, db, `SELECT v FROM kv`)))
	require.Len(t, queryAll(t, db, `SELECT v FROM kv`), 5)

	// Lake-union: the tail after the tiered offset is not cut.
	mustExec(t, db, `CREATE TABLE lk (id BIGINT) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO lk VALUES (1), (2)`)
	tier(t, db, "lk")
	mustExec(t, db, `INSERT INTO lk VALUES (3), (4), (5), (6), (7)`)
	kinds := countKinds(planLines(t, db, `SELECT id FROM lk`))
	require.Equal(t, map[string]int{"lake": 1, "log": 1}, kinds)
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, idsOf(t, db, `SELECT id FROM lk`))
}

// TestPartitionKeyTypesEndToEnd prunes partitions of every key type Fluss
// partitions by, typed, through SQL.
func TestPartitionKeyTypesEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		values []any
		where  string
		want   []int64
	}{
		{"BOOLEAN", []any{true, false}, "p = FALSE", []int64{1}},
		{"INT", []any{2, 10, 100}, "p > 5", []int64{1, 2}},
		{"BIGINT", []any{int64(3000000000), int64(-1), int64(20)}, "p >= 20", []int64{0, 2}},
		{"FLOAT", []any{1.5, 2.25, -3.0}, "p > 1.5", []int64{1}},
		{"DOUBLE", []any{1.5, 2.25, -3.0}, "p <= 1.5", []int64{0, 2}},
		{"STRING", []any{"EU", "US", "APAC"}, "p IN ('US', 'EU')", []int64{0, 1}},
		{"BYTES", []any{[]byte{0x01}, []byte{0x7f}, []byte{0xff}}, "p > X'01'", []int64{1, 2}},
		{"DATE", []any{"2026-01-01", "2026-01-02", "2026-02-01"}, "p >= '2026-01-02'", []int64{1, 2}},
		{"TIMESTAMP(3)", []any{"2026-01-01 10:00:00", "2026-01-01 10:00:00.5", "2026-01-02 00:00:00"}, "p > '2026-01-01 10:00:00'", []int64{1, 2}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			db, _ := openDB(t, "sync=off")
			mustExec(t, db, fmt.Sprintf(`CREATE TABLE pt (id BIGINT, p %s) PARTITIONED BY (p)`, tc.typ))
			for i, v := range tc.values {
				mustExec(t, db, `INSERT INTO pt VALUES (?, ?)`, int64(i), v)
			}
			require.Len(t, queryAll(t, db, `SHOW PARTITIONS pt`), len(tc.values))
			q := `SELECT id FROM pt WHERE ` + tc.where
			require.Equal(t, tc.want, idsOf(t, db, q))
			plan := planLines(t, db, q)
			require.Contains(t, plan[0], "[PartitionFilter: ")
			require.NotContains(t, strings.Join(plan, "\n"), "PostFilter", "a partition predicate is never evaluated again")
			require.Equal(t, len(tc.want), countKinds(plan)["log"], "one split per matching partition")
		})
	}
}

// ---- the differential test ----

// dcol is a column of a random table: its SQL type, and how to draw its
// values (canonical, for the model) and bind them.
type dcol struct {
	name, typ string
	t         metadata.DataType
	gen       func(r *rand.Rand) any // canonical value, nil for NULL
}

func ddec(n int64) metadata.DecimalValue {
	return metadata.DecimalValue{Num: decimal128.FromI64(n), Scale: 2}
}

var dBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var dcols = []dcol{
	{"ti", "TINYINT", metadata.TinyIntType(), func(r *rand.Rand) any { return []int64{-128, -1, 0, 1, 44, 127}[r.IntN(6)] }},
	{"i", "INT", metadata.IntType(), func(r *rand.Rand) any { return int64(r.IntN(40) - 10) }},
	{"bi", "BIGINT", metadata.BigIntType(), func(r *rand.Rand) any {
		return []int64{math.MinInt64, -5, 0, 7, 1 << 40, math.MaxInt64}[r.IntN(6)]
	}},
	{"d", "DOUBLE", metadata.DoubleType(), func(r *rand.Rand) any {
		return []float64{-2.5, math.Copysign(0, -1), 0, 0.25, 1.5, 3, 1e300, math.Inf(1), math.NaN()}[r.IntN(9)]
	}},
	{"s", "STRING", metadata.StringType(), func(r *rand.Rand) any {
		return []string{"", "a", "ab", "abc", "b", "ba", "é", strings.Repeat("x", 70) + "a", strings.Repeat("x", 70) + "b"}[r.IntN(9)]
	}},
	{"dt", "DATE", metadata.DateType(), func(r *rand.Rand) any { return metadata.DateValue(20454 + r.IntN(10)) }},
	{"ts", "TIMESTAMP(3)", metadata.TimestampType(3), func(r *rand.Rand) any {
		return dBase.Add(time.Duration(r.IntN(20)) * 500 * time.Millisecond)
	}},
	{"dec", "DECIMAL(10,2)", metadata.DecimalType(10, 2), func(r *rand.Rand) any { return ddec(int64(r.IntN(21)*25 - 250)) }},
	{"b", "BOOLEAN", metadata.BooleanType(), func(r *rand.Rand) any { return r.IntN(2) == 0 }},
}

// partitionCols are partition keys with values that make valid partition
// names.
var partitionCols = []dcol{
	{"ps", "STRING", metadata.StringType(), func(r *rand.Rand) any { return []string{"a", "b", "c10", "c2"}[r.IntN(4)] }},
	{"pi", "INT", metadata.IntType(), func(r *rand.Rand) any { return []int64{-5, 2, 10, 100}[r.IntN(4)] }},
	{"pd", "DATE", metadata.DateType(), func(r *rand.Rand) any { return metadata.DateValue(20454 + r.IntN(3)) }},
	{"pt", "TINYINT", metadata.TinyIntType(), func(r *rand.Rand) any { return []int64{-128, 0, 127}[r.IntN(3)] }},
}

// bindValue turns a canonical value into what the driver binds.
func bindValue(c dcol, v any) any {
	switch x := v.(type) {
	case metadata.DateValue:
		return x.Time()
	case metadata.DecimalValue:
		return x.String()
	}
	return v
}

// sqlLiteral renders a literal for column c.
func sqlLiteral(c dcol, v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'e', -1, 64)
	case metadata.DecimalValue:
		return x.String()
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case metadata.DateValue:
		// The SQL parser has no typed DATE '...' literal: a string
		// compares as a DATE against a DATE column.
		return "'" + x.Time().Format("2006-01-02") + "'"
	case time.Time:
		return "'" + x.Format("2006-01-02 15:04:05.999999") + "'"
	}
	panic(fmt.Sprintf("literal %T", v))
}

// literalFor draws a literal to compare column c with: usually a value of
// its domain, sometimes one the type cannot hold exactly (out of range,
// finer than its scale or precision) or NULL.
func literalFor(r *rand.Rand, c dcol) any {
	if r.IntN(12) == 0 {
		return nil
	}
	if r.IntN(4) == 0 {
		switch c.t.Root {
		case metadata.TinyInt:
			return []any{int64(300), int64(-300), int64(128)}[r.IntN(3)]
		case metadata.Int:
			return []any{metadata.DecimalValue{Num: decimal128.FromI64(25), Scale: 1}, int64(1) << 40}[r.IntN(2)]
		case metadata.Decimal:
			return metadata.DecimalValue{Num: decimal128.FromI64(int64(r.IntN(50)*5 - 125)), Scale: 3}
		case metadata.Timestamp:
			return dBase.Add(time.Duration(r.IntN(20)) * 500 * time.Millisecond).Add(time.Duration(r.IntN(3)) * 250 * time.Microsecond)
		case metadata.Double:
			return []any{int64(3), metadata.DecimalValue{Num: decimal128.FromI64(15), Scale: 1}}[r.IntN(2)]
		}
	}
	v := c.gen(r)
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return 1.5 // NaN and Inf have no SQL literal form
	}
	return v
}

// truth is SQL's three-valued logic for the model.
type truth int

const (
	tFalse truth = iota
	tNull
	tTrue
)

func tOf(b bool) truth {
	if b {
		return tTrue
	}
	return tFalse
}

// dexpr is a random WHERE expression: its SQL and its model.
type dexpr struct {
	sql  string
	eval func(row []any) truth
}

func cmpTruth(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

var flipOp = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// genExpr draws a WHERE expression over cols (index i of the row is
// cols[i]) at most depth levels deep.
func genExpr(r *rand.Rand, cols []dcol, depth int) dexpr {
	k := r.IntN(12)
	if depth <= 0 {
		k = r.IntN(8)
	}
	ci := r.IntN(len(cols))
	c := cols[ci]
	name := c.name
	switch k {
	case 0, 1, 2: // column op literal, either way round
		op := []string{"=", "<>", "<", "<=", ">", ">="}[r.IntN(6)]
		lit := literalFor(r, c)
		text := sqlLiteral(c, lit)
		e := dexpr{sql: fmt.Sprintf("%s %s %s", name, op, text)}
		if r.IntN(3) == 0 {
			e.sql = fmt.Sprintf("%s %s %s", text, flipOp[op], name)
		}
		e.eval = func(row []any) truth {
			if row[ci] == nil || lit == nil {
				return tNull
			}
			return tOf(cmpTruth(op, metadata.Compare(row[ci], lit)))
		}
		return e
	case 3:
		not := r.IntN(2) == 0
		e := dexpr{sql: name + " IS NULL"}
		if not {
			e.sql = name + " IS NOT NULL"
		}
		e.eval = func(row []any) truth { return tOf((row[ci] == nil) != not) }
		return e
	case 4: // [NOT] IN
		var lits []any
		var texts []string
		for range 1 + r.IntN(3) {
			l := literalFor(r, c)
			lits = append(lits, l)
			texts = append(texts, sqlLiteral(c, l))
		}
		not := r.IntN(3) == 0
		kw := " IN ("
		if not {
			kw = " NOT IN ("
		}
		return dexpr{sql: name + kw + strings.Join(texts, ", ") + ")", eval: func(row []any) truth {
			if row[ci] == nil {
				return tNull
			}
			out := tFalse
			for _, l := range lits {
				if l == nil {
					out = tNull
				} else if metadata.Compare(row[ci], l) == 0 {
					out = tTrue
					break
				}
			}
			if not {
				return 2 - out
			}
			return out
		}}
	case 5: // [NOT] BETWEEN
		lo, hi := literalFor(r, c), literalFor(r, c)
		not := r.IntN(3) == 0
		kw := " BETWEEN "
		if not {
			kw = " NOT BETWEEN "
		}
		return dexpr{sql: name + kw + sqlLiteral(c, lo) + " AND " + sqlLiteral(c, hi), eval: func(row []any) truth {
			v := row[ci]
			ge, le := tNull, tNull
			if v != nil && lo != nil {
				ge = tOf(metadata.Compare(v, lo) >= 0)
			}
			if v != nil && hi != nil {
				le = tOf(metadata.Compare(v, hi) <= 0)
			}
			out := min(ge, le)
			if not {
				return 2 - out
			}
			return out
		}}
	case 6: // LIKE forms on a string column
		si := slices.IndexFunc(cols, func(c dcol) bool { return c.typ == "STRING" })
		if si < 0 {
			return genExpr(r, cols, depth)
		}
		text := []string{"", "a", "b", "x", "ab", "xa"}[r.IntN(6)]
		form := r.IntN(3)
		pattern := []string{text + "%", "%" + text, "%" + text + "%"}[form]
		return dexpr{sql: cols[si].name + " LIKE '" + pattern + "'", eval: func(row []any) truth {
			v, ok := row[si].(string)
			if !ok {
				return tNull
			}
			switch form {
			case 0:
				return tOf(strings.HasPrefix(v, text))
			case 1:
				return tOf(strings.HasSuffix(v, text))
			}
			return tOf(strings.Contains(v, text))
		}}
	case 7: // not convertible: arithmetic on an integer column
		ii := slices.IndexFunc(cols, func(c dcol) bool { return c.typ == "INT" || c.typ == "BIGINT" && c.name == "id" })
		if ii < 0 {
			ii = 0
		}
		n := int64(r.IntN(5) + 2)
		return dexpr{sql: fmt.Sprintf("%s %% %d = 1", cols[ii].name, n), eval: func(row []any) truth {
			v, ok := row[ii].(int64)
			if !ok {
				return tNull
			}
			return tOf(v%n == 1)
		}}
	case 8, 9:
		a, b := genExpr(r, cols, depth-1), genExpr(r, cols, depth-1)
		if k == 8 {
			return dexpr{sql: "(" + a.sql + " AND " + b.sql + ")", eval: func(row []any) truth { return min(a.eval(row), b.eval(row)) }}
		}
		return dexpr{sql: "(" + a.sql + " OR " + b.sql + ")", eval: func(row []any) truth { return max(a.eval(row), b.eval(row)) }}
	default:
		a := genExpr(r, cols, depth-1)
		return dexpr{sql: "NOT (" + a.sql + ")", eval: func(row []any) truth { return 2 - a.eval(row) }}
	}
}

// TestPushdownDifferential: random tables (column types, a partition key
// or none, 1 to 3 buckets, many small INSERTs so that each batch holds a
// few rows and statistics decide) and random WHERE clauses, convertible
// and not. Every query answers the same rows on the table with statistics
// (pushdown skipping batches), on the same rows without statistics
// (nothing skippable) and in a brute-force model evaluated in Go.
func TestPushdownDifferential(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	tables, queries := 6, 60
	if testing.Short() {
		tables, queries = 3, 30
	}
	db, _ := openDB(t, "sync=off")
	var skippedTotal int64
	for ti := range tables {
		cols := []dcol{{name: "id", typ: "BIGINT", t: metadata.BigIntType(), gen: func(r *rand.Rand) any { return int64(r.IntN(130)) }}}
		for _, i := range r.Perm(len(dcols))[:3+r.IntN(4)] {
			cols = append(cols, dcols[i])
		}
		partitioned := r.IntN(2) == 0
		var partKey string
		if partitioned {
			pc := partitionCols[r.IntN(len(partitionCols))]
			cols = append(cols, pc)
			partKey = pc.name
		}
		buckets := 1 + r.IntN(3)
		var defs []string
		for _, c := range cols {
			defs = append(defs, c.name+" "+c.typ)
		}
		ddl := "(" + strings.Join(defs, ", ") + ")"
		if partitioned {
			ddl += " PARTITIONED BY (" + partKey + ")"
		}
		withStats := fmt.Sprintf(" WITH ('bucket.num' = '%d')", buckets)
		noStats := fmt.Sprintf(" WITH ('bucket.num' = '%d', 'table.statistics.columns' = '')", buckets)
		on, off := fmt.Sprintf("t%d", ti), fmt.Sprintf("t%d_nostats", ti)
		mustExec(t, db, "CREATE TABLE "+on+" "+ddl+withStats)
		mustExec(t, db, "CREATE TABLE "+off+" "+ddl+noStats)

		var model [][]any
		nrows := 40 + r.IntN(80)
		for id := 0; id < nrows; {
			n := 1 + r.IntN(6)
			var holes []string
			var args []any
			for ; n > 0 && id < nrows; n-- {
				row := make([]any, len(cols))
				row[0] = int64(id)
				for ci, c := range cols[1:] {
					if c.name != partKey && r.IntN(6) == 0 {
						continue // NULL (never in a partition key)
					}
					row[ci+1] = c.gen(r)
				}
				model = append(model, row)
				holes = append(holes, "("+strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")+")")
				for ci, v := range row {
					args = append(args, bindValue(cols[ci], v))
				}
				id++
			}
			ins := " VALUES " + strings.Join(holes, ", ")
			mustExec(t, db, "INSERT INTO "+on+ins, args...)
			mustExec(t, db, "INSERT INTO "+off+ins, args...)
		}

		for range queries {
			e := genExpr(r, cols, 2)
			var want []int64
			for _, row := range model {
				if e.eval(row) == tTrue {
					want = append(want, row[0].(int64))
				}
			}
			q := func(table string) string { return "SELECT id FROM " + table + " WHERE " + e.sql }
			gotOn := idsOf(t, db, q(on))
			gotOff := idsOf(t, db, q(off))
			require.Equal(t, want, gotOn, "%s on %s %s (seed %d)", e.sql, on, ddl, seed)
			require.Equal(t, want, gotOff, "%s on %s %s (seed %d)", e.sql, off, ddl, seed)
			skippedTotal += totals(t, analyzeLines(t, db, q(on))).skipped
		}
	}
	// The statistics did skip batches along the way: the test exercised
	// pushdown, not just the post filter.
	require.Positive(t, skippedTotal)
}

// TestExplainAnalyzeLake: the lake's share of the read is counted in
// Parquet row groups, the log tail's in batches; a predicate that rules a
// lake file out by its statistics drops it at planning, and the tail batch
// by its own.
func TestExplainAnalyzeLake(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off")
	mustExec(t, db, `CREATE TABLE lk (id BIGINT, v STRING) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `CREATE TABLE kv (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true')`)
	for i := range 5 {
		mustExec(t, db, `INSERT INTO lk VALUES (?, 'a'), (?, 'b')`, i*2, i*2+1)
		mustExec(t, db, `INSERT INTO kv VALUES (?, 'a'), (?, 'b')`, i*2, i*2+1)
	}
	tier(t, db, "lk")
	tier(t, db, "kv")
	mustExec(t, db, `INSERT INTO lk VALUES (100, 'z')`)
	mustExec(t, db, `INSERT INTO kv VALUES (100, 'z'), (3, 'c')`)

	lines := analyzeLines(t, db, `SELECT id FROM lk WHERE id > 3`)
	require.Equal(t, []string{
		"Split: lake partition=- bucket=0 lake_files=1",
		"  read: batches=0 skipped=0 row_groups=1/1 rows=10",
		"Split: log partition=- bucket=0 log=10..11",
		"  read: batches=1 skipped=0 row_groups=0/0 rows=1",
		"Read: splits=2/2 batches=1 skipped=0 row_groups=1/1 rows=11 result_rows=7",
	}, lines[3:])

	// The primary-key table's lake rows are filtered before the merge.
	got := totals(t, analyzeLines(t, db, `SELECT id FROM kv WHERE id > 3`))
	require.Equal(t, readTotals{opened: 1, splits: 1, batches: 1, groups: 1, groupsAll: 1, rows: 8, result: 7}, got)
	require.Equal(t, []int64{4, 5, 6, 7, 8, 9, 100}, idsOf(t, db, `SELECT id FROM kv WHERE id > 3`))

	lines = analyzeLines(t, db, `SELECT id FROM lk WHERE id > 1000`)
	require.Equal(t, map[string]int{"log": 1}, countKinds(lines), "the lake file is pruned at planning")
	require.Equal(t, readTotals{opened: 1, splits: 1, skipped: 1}, totals(t, lines))

	// COUNT(*) reads every split and yields one row.
	count := totals(t, analyzeLines(t, db, `SELECT COUNT(*) FROM lk`))
	require.Equal(t, int64(11), count.rows)
	require.Equal(t, int64(1), count.result)
}
