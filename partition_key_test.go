package fluss_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pkType is a partition-key type and values that sit on and near the
// places where a partition name could lose or confuse them: precision
// boundaries, signs, zero, extremes, case and odd but valid characters.
type pkType struct {
	typ string
	// values are stored in the key (bound as parameters).
	values []any
	// literals are compared with the key in predicates (SQL text); the
	// values' own literals are added to them.
	literals []string
}

// partitionKeyTypes lists every type that may be a partition key.
func partitionKeyTypes() []pkType {
	times := []string{"00:00:00", "00:00:00.0001", "00:00:00.0002", "00:00:00.000999999", "00:00:00.001",
		"00:00:00.000000001", "12:30:00.5", "12:30:00.500000001", "23:59:59.999", "23:59:59.999999", "23:59:59.999999999"}
	stamps := []string{"2026-01-01 00:00:00", "2026-01-01 00:00:00.0001", "2026-01-01 00:00:00.0002",
		"2026-01-01 00:00:00.000999999", "2026-01-01 00:00:00.001", "2026-01-01 00:00:00.000000001",
		"1969-12-31 23:59:59.999999999", "1970-01-01 00:00:00", "2026-12-31 23:59:59.999", "2026-12-31 23:59:59.999999999"}
	anys := func(ss []string) []any {
		out := make([]any, len(ss))
		for i, s := range ss {
			out[i] = s
		}
		return out
	}
	quoted := func(ss ...string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = "'" + s + "'"
		}
		return out
	}
	var out []pkType
	for _, p := range []int{0, 3, 4, 6, 9} {
		out = append(out, pkType{fmt.Sprintf("TIME(%d)", p), anys(times), quoted("00:00:00.00015", "12:30:00", "23:59:59")})
	}
	for _, p := range []int{0, 3, 6, 9} {
		out = append(out, pkType{fmt.Sprintf("TIMESTAMP(%d)", p), anys(stamps), quoted("2026-01-01 00:00:00.00015", "2025-12-31 23:59:59.9999999999")})
		out = append(out, pkType{fmt.Sprintf("TIMESTAMP_LTZ(%d)", p), anys(stamps), quoted("2026-01-01 00:00:00.00015", "1970-01-01 00:00:00.000000001")})
	}
	return append(out,
		pkType{"DATE", anys([]string{"0001-01-01", "1969-12-31", "1970-01-01", "2026-02-28", "2026-03-01", "9999-12-31"}), quoted("2026-02-27", "2024-02-29")},
		pkType{"TINYINT", []any{int64(-128), int64(-1), int64(0), int64(1), int64(127)}, []string{"-129", "128", "300", "-0", "0.5", "-1.5"}},
		pkType{"SMALLINT", []any{int64(-32768), int64(-10), int64(0), int64(9), int64(10), int64(32767)}, []string{"-32769", "32768", "9.99", "100000"}},
		pkType{"INT", []any{int64(math.MinInt32), int64(-2), int64(2), int64(10), int64(100), int64(math.MaxInt32)}, []string{"2147483648", "-2147483649", "2.5", "1e3"}},
		pkType{"BIGINT", []any{int64(math.MinInt64), int64(-5), int64(0), int64(1 << 40), int64(math.MaxInt64)}, []string{"9223372036854775808", "-0.5", "1099511627776.5"}},
		pkType{"FLOAT", []any{float64(float32(0.1)), -2.5, math.Copysign(0, -1), 0.0, 1e10, 1.5e-4, 16777217.0, float64(math.MaxFloat32), math.Inf(1), math.Inf(-1), math.NaN()},
			[]string{"0.1", "-2.5", "0", "1e10", "0.00015", "16777216", "1.5e-4", "3.4028235e38"}},
		pkType{"DOUBLE", []any{0.1, -2.5, math.Copysign(0, -1), 0.0, 1e300, 1e-300, 1.5e-4, 9007199254740993.0, math.Inf(1), math.NaN()},
			[]string{"0.1", "0.10000000000000001", "-2.5", "0", "1e300", "1e-300", "0.00015", "9007199254740992"}},
		pkType{"BOOLEAN", []any{true, false}, []string{"TRUE", "FALSE", "1", "0"}},
		pkType{"STRING", []any{"a", "A", "ab", "a-b", "a_b", "-", "_", "0", "00", "-1", "Z9", strings.Repeat("x", 200)},
			[]string{"'a'", "'B'", "'é'", "'a b'", "''", "'__x'", "'a%'", "'0'", "'-1'"}},
		pkType{"CHAR(3)", []any{"a", "ab", "abc", "A", "-"}, []string{"'a'", "'a  '", "'abcd'", "'b'"}},
		pkType{"BYTES", []any{[]byte{0}, []byte{0, 0}, []byte{1}, []byte{0x7f}, []byte{0x80}, []byte{0xff}, []byte{0xff, 0}},
			[]string{"X'00'", "X'0000'", "X'ff'", "X''", "X'7f80'"}},
		pkType{"BINARY(2)", []any{[]byte{0, 0}, []byte{0, 1}, []byte{0xff, 0xff}, []byte{0x80, 0}}, []string{"X'0000'", "X'00'", "X'ffff'", "X'800000'"}},
	)
}

// pkLiteral renders a stored value as a SQL literal.
func pkLiteral(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", true
	case int64:
		return fmt.Sprint(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return fmt.Sprintf("%v", x), true
	case bool:
		if x {
			return "TRUE", true
		}
		return "FALSE", true
	case []byte:
		return fmt.Sprintf("X'%x'", x), true
	}
	return "", false
}

// pkPredicate draws a predicate over p from lits, at most depth levels of
// AND, OR and NOT deep.
func pkPredicate(r *rand.Rand, lits []string, depth int) string {
	lit := func() string {
		if r.IntN(15) == 0 {
			return "NULL"
		}
		return lits[r.IntN(len(lits))]
	}
	k := r.IntN(10)
	if depth <= 0 {
		k = r.IntN(6)
	}
	switch k {
	case 0, 1:
		return fmt.Sprintf("p %s %s", []string{"=", "<>", "<", "<=", ">", ">="}[r.IntN(6)], lit())
	case 2:
		return fmt.Sprintf("%s %s p", lit(), []string{"=", "<", ">=", ">"}[r.IntN(4)])
	case 3:
		kw := []string{" BETWEEN ", " NOT BETWEEN "}[r.IntN(2)]
		return "p" + kw + lit() + " AND " + lit()
	case 4:
		var in []string
		for range 1 + r.IntN(4) {
			in = append(in, lit())
		}
		return "p" + []string{" IN (", " NOT IN ("}[r.IntN(2)] + strings.Join(in, ", ") + ")"
	case 5:
		return "p " + []string{"IS NULL", "IS NOT NULL"}[r.IntN(2)]
	case 6, 7:
		op := []string{" AND ", " OR "}[k-6]
		return "(" + pkPredicate(r, lits, depth-1) + op + pkPredicate(r, lits, depth-1) + ")"
	default:
		return "NOT (" + pkPredicate(r, lits, depth-1) + ")"
	}
}

// TestPartitionKeyDifferential: for every type that may be a partition key,
// a table partitioned by p answers every random predicate over p exactly as
// the same table unpartitioned does, for a log table and a key table
// (whose point lookups render the key's partition from a literal), with
// part of each table tiered to the lake. Partition pruning decides on the
// key's values, so a value finer than milliseconds, a negative zero or a
// string that differs in case is never put in or kept out of the answer
// by its partition's name.
func TestPartitionKeyDifferential(t *testing.T) {
	const seed = 15
	r := rand.New(rand.NewPCG(seed, 3))
	perType := 24
	if testing.Short() {
		perType = 8
	}
	// An odd offset, so that TIMESTAMP_LTZ literals read in the session's
	// zone land off the UTC hour in the partitions' names.
	db, _ := openDB(t, "sync=off&tiering=off&loc=Asia/Kathmandu")
	total, nonEmpty := 0, 0
	var wrong []string
	for ti, kt := range partitionKeyTypes() {
		for _, keyed := range []bool{false, true} {
			pt, ft := fmt.Sprintf("pt%d_%v", ti, keyed), fmt.Sprintf("ft%d_%v", ti, keyed)
			cols := fmt.Sprintf("id INT, p %s", kt.typ)
			if keyed {
				cols += ", PRIMARY KEY (p, id) NOT ENFORCED"
			}
			lake := " WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')"
			mustExec(t, db, fmt.Sprintf("CREATE TABLE %s (%s) PARTITIONED BY (p)%s", pt, cols, lake))
			mustExec(t, db, fmt.Sprintf("CREATE TABLE %s (%s)%s", ft, cols, lake))
			lits := append([]string(nil), kt.literals...)
			id := 0
			for round := range 2 {
				for _, v := range kt.values {
					if l, ok := pkLiteral(v); ok && round == 0 {
						lits = append(lits, l)
					}
					for _, tbl := range []string{pt, ft} {
						mustExec(t, db, "INSERT INTO "+tbl+" VALUES (?, ?)", id, v)
					}
					id++
				}
				if round == 0 {
					for _, tbl := range []string{pt, ft} {
						mustExec(t, db, "CALL sys.tier('"+tbl+"')")
					}
				}
			}
			for range perType {
				where := pkPredicate(r, lits, 2)
				if keyed && r.IntN(3) == 0 {
					// Every key column fixed: a point lookup.
					where = fmt.Sprintf("p = %s AND id = %d", lits[r.IntN(len(lits))], r.IntN(id))
				}
				want := idsOf(t, db, "SELECT id FROM "+ft+" WHERE "+where)
				got := idsOf(t, db, "SELECT id FROM "+pt+" WHERE "+where)
				if !slices.Equal(want, got) {
					wrong = append(wrong, fmt.Sprintf("%s (%s): WHERE %s: unpartitioned %v, partitioned %v", kt.typ, pt, where, want, got))
				}
				total++
				if len(want) > 0 && len(want) < id {
					nonEmpty++
				}
			}
		}
	}
	t.Logf("%d predicates over %d key types, %d selecting some rows but not all", total, len(partitionKeyTypes()), nonEmpty)
	require.Empty(t, wrong, "%d of %d predicates answer differently when the table is partitioned (seed %d)", len(wrong), total, seed)
	// The predicates discriminate: many select some rows, not all.
	require.Greater(t, nonEmpty, total/4)
}

// TestTimePartitionKeyBelowMillisecond is issue 15's item 3 as reported:
// values of a TIME(9) key that differ below the millisecond get partitions
// of their own, and pruning finds each of them.
func TestTimePartitionKeyBelowMillisecond(t *testing.T) {
	db, _ := openDB(t, "sync=off")
	mustExec(t, db, `CREATE TABLE tt (id INT, t TIME(9)) PARTITIONED BY (t)`)
	mustExec(t, db, `INSERT INTO tt VALUES (1, '00:00:00.0001'), (2, '00:00:00.0002'), (3, '23:59:59.999'), (4, '23:59:59.999999999')`)
	var names []string
	for _, r := range queryAll(t, db, `SHOW PARTITIONS tt`) {
		names = append(names, fmt.Sprint(r[0]))
	}
	require.Equal(t, []string{"00-00-00_000100000", "00-00-00_000200000", "23-59-59_999000000", "23-59-59_999999999"}, names)
	require.Equal(t, []int64{1}, idsOf(t, db, `SELECT id FROM tt WHERE t = '00:00:00.0001'`))
	require.Equal(t, []int64{3}, idsOf(t, db, `SELECT id FROM tt WHERE t = '23:59:59.999'`))
	require.Equal(t, []int64{2, 3}, idsOf(t, db, `SELECT id FROM tt WHERE t > '00:00:00.0001' AND t < '23:59:59.9999'`))
}

// TestCoarseTimePartitionsStillAnswer: a TIME(9) partition named to the
// millisecond, as earlier versions named them, holds rows that differ
// below it. Pruning keeps it for any value of its millisecond and the rows
// are tested again; rows of that millisecond keep going to it, so a key
// stays in one partition; other values get exact names.
func TestCoarseTimePartitionsStillAnswer(t *testing.T) {
	db, dsn := openDB(t, "sync=off")
	mustExec(t, db, `CREATE TABLE tt (id INT, t TIME(9)) PARTITIONED BY (t)`)
	mustExec(t, db, `INSERT INTO tt VALUES (1, '00:00:00.0001')`)
	mustExec(t, db, `CREATE TABLE kk (id INT, t TIME(9), v INT, PRIMARY KEY (t, id) NOT ENFORCED) PARTITIONED BY (t)`)
	mustExec(t, db, `INSERT INTO kk VALUES (1, '00:00:00.0001', 1), (2, '00:00:00.0002', 1)`)
	require.NoError(t, db.Close())
	dir := strings.Split(dsn, "?")[0]
	cat, err := os.ReadFile(filepath.Join(dir, "catalog.json"))
	require.NoError(t, err)
	legacy := string(cat)
	for _, exact := range []string{"00-00-00_000100000", "00-00-00_000200000"} {
		require.Contains(t, legacy, `"`+exact+`"`)
	}
	// The table tt's partition and one of kk's take the old name; two of a
	// table cannot share it.
	legacy = strings.Replace(legacy, `"00-00-00_000100000"`, `"00-00-00_000"`, -1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(legacy), 0o644))

	db, err = sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()
	mustExec(t, db, `INSERT INTO tt VALUES (2, '00:00:00.0002'), (3, '00:00:00.0001'), (4, '00:00:00'), (5, '00:00:01.0000001')`)
	var names []string
	for _, r := range queryAll(t, db, `SHOW PARTITIONS tt`) {
		names = append(names, fmt.Sprint(r[0]))
	}
	require.Equal(t, []string{"00-00-00_000", "00-00-01_000000100"}, names)
	for where, want := range map[string][]int64{
		"t = '00:00:00.0001'":                {1, 3},
		"t = '00:00:00'":                     {4},
		"t > '00:00:00.00015'":               {2, 5},
		"t IN ('00:00:00.0002', '00:00:01')": {2},
		"t < '00:00:00.0002'":                {1, 3, 4},
		"NOT (t = '00:00:00.0001')":          {2, 4, 5},
		"t >= '00:00:00.001'":                {5},
	} {
		require.Equal(t, want, idsOf(t, db, "SELECT id FROM tt WHERE "+where), where)
	}
	plan := planLines(t, db, `SELECT id FROM tt WHERE t = '00:00:00.0001'`)
	require.Contains(t, strings.Join(plan, "\n"), "PostFilter", "the rows of a coarse partition are tested again")

	// The key table: an upsert of a key in the coarse partition replaces
	// it there, and a lookup finds it.
	mustExec(t, db, `INSERT INTO kk VALUES (1, '00:00:00.0001', 2), (3, '00:00:00.0003', 3)`)
	require.Equal(t, [][]any{{int64(1), int64(2)}, {int64(2), int64(1)}, {int64(3), int64(3)}}, queryAll(t, db, `SELECT id, v FROM kk ORDER BY id`))
	require.Equal(t, [][]any{{int64(2)}}, queryAll(t, db, `SELECT v FROM kk WHERE t = '00:00:00.0001' AND id = 1`))
	require.Equal(t, [][]any{{int64(1)}}, queryAll(t, db, `SELECT v FROM kk WHERE t = '00:00:00.0002' AND id = 2`))
}

// TestLookupOfUnnameablePartitionValue: a point lookup whose partition-key
// literal could never name a partition finds no row, as a scan does,
// instead of failing.
func TestLookupOfUnnameablePartitionValue(t *testing.T) {
	db, _ := openDB(t, "sync=off")
	mustExec(t, db, `CREATE TABLE k (id INT, p STRING, PRIMARY KEY (p, id) NOT ENFORCED) PARTITIONED BY (p)`)
	mustExec(t, db, `INSERT INTO k VALUES (1, 'a')`)
	for _, q := range []string{`SELECT id FROM k WHERE p = 'é' AND id = 1`, `SELECT id FROM k WHERE p = 'a b' AND id = 1`, `SELECT id FROM k WHERE p = '' AND id = 1`} {
		require.Contains(t, planLines(t, db, q)[0], "FlussLookup", q)
		require.Empty(t, idsOf(t, db, q), q)
	}
	require.Equal(t, []int64{1}, idsOf(t, db, `SELECT id FROM k WHERE p = 'a' AND id = 1`))
}
