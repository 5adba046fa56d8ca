package fluss_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// aggCols are the columns of the aggregation test's table, each with its
// function and its model: how the stored value and an upsert's combine
// (nil is NULL; the row exists).
var aggCols = []struct {
	name, typ, fn string
	gen           func(rng *rand.Rand) any
	merge         func(acc, in any) any
}{
	{"s", "BIGINT", "sum", randInt, skipNulls(func(a, b any) any { return a.(int64) + b.(int64) })},
	{"p", "BIGINT", "product", func(rng *rand.Rand) any { return maybeNull(rng, int64(rng.IntN(3)+1)) }, skipNulls(func(a, b any) any { return a.(int64) * b.(int64) })},
	{"mx", "INT", "max", randInt, skipNulls(func(a, b any) any { return max(a.(int64), b.(int64)) })},
	{"mn", "STRING", "min", randStr, skipNulls(func(a, b any) any { return min(a.(string), b.(string)) })},
	{"lv", "STRING", "last_value", randStr, func(_, in any) any { return in }},
	{"lvin", "STRING", "last_value_ignore_nulls", randStr, skipNulls(func(_, in any) any { return in })},
	{"fv", "INT", "first_value", randInt, func(acc, _ any) any { return acc }},
	{"fvin", "INT", "first_value_ignore_nulls", randInt, func(acc, in any) any {
		if acc == nil {
			return in
		}
		return acc
	}},
	{"la", "STRING", "listagg", randStr, skipNulls(func(a, b any) any { return a.(string) + ";" + b.(string) })},
	{"ba", "BOOLEAN", "bool_and", randBool, skipNulls(func(a, b any) any { return a.(bool) && b.(bool) })},
	{"bo", "BOOLEAN", "bool_or", randBool, skipNulls(func(a, b any) any { return a.(bool) || b.(bool) })},
	{"dflt", "STRING", "", randStr, skipNulls(func(_, in any) any { return in })}, // last_value_ignore_nulls
}

func maybeNull(rng *rand.Rand, v any) any {
	if rng.IntN(5) == 0 {
		return nil
	}
	return v
}
func randInt(rng *rand.Rand) any  { return maybeNull(rng, int64(rng.IntN(200)-100)) }
func randStr(rng *rand.Rand) any  { return maybeNull(rng, fmt.Sprintf("v%02d", rng.IntN(30))) }
func randBool(rng *rand.Rand) any { return maybeNull(rng, rng.IntN(2) == 0) }

// skipNulls makes f skip NULLs: a NULL input keeps the value, a NULL
// value takes the input.
func skipNulls(f func(a, b any) any) func(a, b any) any {
	return func(a, b any) any {
		switch {
		case b == nil:
			return a
		case a == nil:
			return b
		}
		return f(a, b)
	}
}

// The aggregation merge engine against a model: every function over
// random upserts with NULLs, partial updates (a column list) that combine
// only their columns, through a reopen and a tiering round; deletes as
// table.delete.behavior says.
func TestAggregationMergeEngineModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("fluss", dir+"?tiering=off")
	require.NoError(t, err)
	defs := []string{"id BIGINT"}
	opts := []string{"'table.merge-engine' = 'aggregation'", "'fields.la.listagg.delimiter' = ';'", "'bucket.num' = '3'", "'table.datalake.enabled' = 'true'"}
	for _, c := range aggCols {
		defs = append(defs, c.name+" "+c.typ)
		if c.fn != "" {
			opts = append(opts, fmt.Sprintf("'fields.%s.agg' = '%s'", c.name, c.fn))
		}
	}
	mustExec(t, db, "CREATE TABLE agg ("+strings.Join(defs, ", ")+", PRIMARY KEY (id) NOT ENFORCED) WITH ("+strings.Join(opts, ", ")+")")
	model := map[int64][]any{}
	rng := rand.New(rand.NewPCG(3, 4))
	upsert := func() {
		id := int64(rng.IntN(20))
		// A partial update names some columns; the others are left as
		// they are (a new key: NULL).
		var names []string
		var vals []any
		var idx []int
		for i, c := range aggCols {
			if rng.IntN(4) == 0 {
				continue
			}
			names, vals, idx = append(names, c.name), append(vals, c.gen(rng)), append(idx, i)
		}
		args := append([]any{id}, vals...)
		mustExec(t, db, "INSERT INTO agg (id, "+strings.Join(names, ", ")+") VALUES (?"+strings.Repeat(", ?", len(vals))+")", args...)
		old, ok := model[id]
		next := make([]any, len(aggCols))
		copy(next, old)
		for k, i := range idx {
			if !ok {
				next[i] = vals[k]
			} else {
				next[i] = aggCols[i].merge(old[i], vals[k])
			}
		}
		model[id] = next
	}
	check := func(what string) {
		t.Helper()
		got := map[int64][]any{}
		names := make([]string, len(aggCols))
		for i, c := range aggCols {
			names[i] = c.name
		}
		for _, r := range queryAll(t, db, "SELECT id, "+strings.Join(names, ", ")+" FROM agg") {
			row := make([]any, len(aggCols))
			for i, v := range r[1:] {
				switch x := v.(type) {
				case []byte:
					row[i] = string(x)
				case int64:
					if aggCols[i].typ == "BOOLEAN" {
						row[i] = x != 0
					} else {
						row[i] = x
					}
				default:
					row[i] = x
				}
			}
			got[r[0].(int64)] = row
		}
		require.Equal(t, model, got, what)
	}
	for range 300 {
		upsert()
	}
	check("after upserts")
	require.NoError(t, db.Close())
	db, err = sql.Open("fluss", dir+"?tiering=off")
	require.NoError(t, err)
	defer db.Close()
	check("after a reopen")
	mustExec(t, db, `CALL sys.tier('agg')`)
	for range 100 {
		upsert()
	}
	check("tiered, and upserted after")
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM `agg$lake`").Scan(&n))
	require.Positive(t, n, "the lake holds the aggregated rows")

	// Deletes: ignored by default (a DELETE statement says so), applied
	// with 'allow', refused with 'disable'; UPDATE has no meaning here.
	_, err = db.Exec(`DELETE FROM agg WHERE id = 1`)
	require.ErrorContains(t, err, "table.delete.behavior is 'ignore'")
	_, err = db.Exec(`UPDATE agg SET s = 1 WHERE id = 1`)
	require.ErrorContains(t, err, "aggregation merge engine takes no UPDATE")
	mustExec(t, db, `CREATE TABLE aggd (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'fields.s.agg' = 'sum', 'table.delete.behavior' = 'allow')`)
	mustExec(t, db, `INSERT INTO aggd VALUES (1, 5), (1, 6), (2, 1)`)
	mustExec(t, db, `DELETE FROM aggd WHERE id = 1`)
	mustExec(t, db, `INSERT INTO aggd VALUES (1, 7)`)
	require.Equal(t, [][]any{{int64(1), int64(7)}, {int64(2), int64(1)}}, queryAll(t, db, `SELECT id, s FROM aggd ORDER BY id`), "a deleted key starts again")
	mustExec(t, db, `CREATE TABLE aggx (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'table.delete.behavior' = 'disable')`)
	_, err = db.Exec(`DELETE FROM aggx WHERE id = 1`)
	require.ErrorContains(t, err, "Delete operations are disabled for this table. The table.delete.behavior is set to 'disable'.")
	// A sum beyond its type is an error, and nothing of the statement is
	// written.
	mustExec(t, db, `INSERT INTO aggd VALUES (3, 9223372036854775800)`)
	_, err = db.Exec(`INSERT INTO aggd VALUES (3, 100)`)
	require.ErrorContains(t, err, "out of range")
}

// The options' rules, with Fluss's texts where it has them.
func TestAggregationAndDeleteBehaviorOptions(t *testing.T) {
	db, _ := openDB(t)
	for _, c := range []struct{ ddl, want string }{
		{`CREATE TABLE e1 (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'fields.s.agg' = 'sum')`, "aggregate function sum does not apply to type STRING"},
		{`CREATE TABLE e2 (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'fields.id.agg' = 'sum')`, "id is a primary-key column"},
		{`CREATE TABLE e3 (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'fields.nope.agg' = 'sum')`, "nope"},
		{`CREATE TABLE e4 (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('fields.s.agg' = 'sum')`, "only meaningful with table.merge-engine = 'aggregation'"},
		{`CREATE TABLE e5 (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'fields.s.agg' = 'rbm64')`, "rbm64 is not supported"},
		{`CREATE TABLE e6 (id BIGINT, s BIGINT) WITH ('table.delete.behavior' = 'ignore')`, "The option 'table.delete.behavior' is only supported for primary key tables."},
		{`CREATE TABLE e7 (id BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row', 'table.delete.behavior' = 'allow')`, "Table with 'FIRST_ROW' merge engine does not support delete operations"},
		{`CREATE TABLE e8 (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation', 'fields.s.listagg.delimiter' = '|')`, "not aggregated by listagg"},
	} {
		_, err := db.Exec(c.ddl)
		require.ErrorContains(t, err, c.want, c.ddl)
	}
	// The default engine with 'ignore' and 'disable'.
	mustExec(t, db, `CREATE TABLE kd (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.delete.behavior' = 'disable')`)
	_, err := db.Exec(`DELETE FROM kd WHERE id = 1`)
	require.ErrorContains(t, err, "Delete operations are disabled")
	mustExec(t, db, `INSERT INTO kd VALUES (1, 'a'), (1, 'b')`)
	require.Equal(t, [][]any{{int64(1), "b"}}, queryAll(t, db, `SELECT id, v FROM kd`))
}
