// Package difftest runs random queries against fluss and SQLite (the pure
// Go modernc.org/sqlite) over the same random tables and requires the same
// results. It lives in its own module so that the main module does not
// depend on SQLite.
//
// The queries stay inside the subset both engines agree on: integer
// arithmetic without division, comparisons, three-valued logic, IS NULL,
// IN, BETWEEN, LIKE (SQLite is made case-sensitive), CASE, COALESCE, ABS,
// LOWER, UPPER, LENGTH of ASCII text, COUNT/SUM/MIN/MAX/AVG with and
// without GROUP BY and HAVING, DISTINCT, ORDER BY (NULLs first ascending,
// last descending, in both) and LIMIT/OFFSET. ORDER BY always covers every
// output column, so a LIMIT picks the same rows in both.
package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	_ "github.com/flusslite/fluss"
	_ "modernc.org/sqlite"
)

const (
	tables  = 6  // random tables, each with its own seed
	queries = 80 // random queries per table
	rows    = 150
)

type column struct {
	name string
	kind byte // 'i' integer, 'f' double, 's' string
}

// s is a small integer and t a short string: both make groups.
var columns = []column{{"a", 'i'}, {"b", 'i'}, {"c", 'f'}, {"s", 'i'}, {"t", 's'}}

func TestDifferential(t *testing.T) {
	for seed := uint64(1); seed <= tables; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runSeed(t, seed)
		})
	}
}

func runSeed(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 42))
	fl, err := sql.Open("fluss", fmt.Sprintf(":memory:?default.bucket.number=%d", 1+r.IntN(3)))
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	lite, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	lite.SetMaxOpenConns(1) // one in-memory database
	mustExec(t, fl, `CREATE TABLE t (a BIGINT, b INT, c DOUBLE, s INT, t STRING)`)
	mustExec(t, lite, `CREATE TABLE t (a INTEGER, b INTEGER, c REAL, s INTEGER, t TEXT)`)
	mustExec(t, lite, `PRAGMA case_sensitive_like = ON`)
	// Rows in a few INSERTs, so that fluss reads several batches.
	for start := 0; start < rows; start += 40 {
		var vals []string
		for i := start; i < min(start+40, rows); i++ {
			vals = append(vals, "("+strings.Join([]string{
				maybeNull(r, fmt.Sprint(r.IntN(201)-100)),
				maybeNull(r, fmt.Sprint(r.IntN(21)-10)),
				maybeNull(r, fmt.Sprintf("%d.%d", r.IntN(41)-20, r.IntN(4)*25)),
				maybeNull(r, fmt.Sprint(r.IntN(5))),
				maybeNull(r, "'"+[]string{"apple", "Apple", "banana", "b_c", "cherry", "", "a%b"}[r.IntN(7)]+"'"),
			}, ", ")+")")
		}
		ins := "INSERT INTO t VALUES " + strings.Join(vals, ", ")
		mustExec(t, fl, ins)
		mustExec(t, lite, ins)
	}
	g := &gen{r: r}
	nonEmpty := 0
	for range queries {
		q := g.query()
		want, err := run(lite, q)
		if err != nil {
			t.Fatalf("sqlite: %v\n%s", err, q)
		}
		got, err := run(fl, q)
		if err != nil {
			t.Fatalf("fluss: %v\n%s", err, q)
		}
		if !same(got, want) {
			t.Fatalf("results differ for\n%s\nfluss:  %v\nsqlite: %v", q, got, want)
		}
		if len(got) > 0 {
			nonEmpty++
		}
	}
	// Agreement on empty results alone would prove little.
	if nonEmpty < queries/2 {
		t.Fatalf("only %d of %d queries returned rows", nonEmpty, queries)
	}
}

func maybeNull(r *rand.Rand, v string) string {
	if r.IntN(8) == 0 {
		return "NULL"
	}
	return v
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// run returns the rows of q with numbers as float64 (both engines agree
// on the values, not always on int versus float), text as string.
func run(db querier, q string) ([][]any, error) { return runCtx(context.Background(), db, q) }

func runCtx(ctx context.Context, db querier, q string) ([][]any, error) {
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			switch x := v.(type) {
			case int64:
				vals[i] = float64(x)
			case []byte:
				vals[i] = string(x)
			}
		}
		out = append(out, vals)
	}
	return out, rs.Err()
}

func same(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			x, xf := a[i][j].(float64)
			y, yf := b[i][j].(float64)
			if xf && yf {
				// Sums of doubles may be added in another order.
				if math.Abs(x-y) > 1e-9*math.Max(1, math.Abs(y)) {
					return false
				}
				continue
			}
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// gen builds random queries of the shared subset.
type gen struct{ r *rand.Rand }

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) col(kind byte) string {
	var cs []string
	for _, c := range columns {
		if kind == 0 || c.kind == kind {
			cs = append(cs, c.name)
		}
	}
	return g.pick(cs...)
}

// intExpr is an integer expression small enough never to overflow.
func (g *gen) intExpr(depth int) string {
	if depth <= 0 || g.r.IntN(3) == 0 {
		if g.r.IntN(4) == 0 {
			return fmt.Sprint(g.r.IntN(21) - 10)
		}
		return g.col('i')
	}
	switch g.r.IntN(6) {
	case 0:
		return "(" + g.intExpr(depth-1) + " " + g.pick("+", "-", "*") + " " + g.intExpr(depth-1) + ")"
	case 1:
		return "(" + g.intExpr(depth-1) + " % " + g.intExpr(depth-1) + ")"
	case 2:
		return "ABS(" + g.intExpr(depth-1) + ")"
	case 3:
		return "COALESCE(" + g.intExpr(depth-1) + ", " + g.intExpr(depth-1) + ")"
	case 4:
		return "CASE WHEN " + g.cond(depth-1) + " THEN " + g.intExpr(depth-1) + " ELSE " + g.intExpr(depth-1) + " END"
	}
	return "LENGTH(" + g.strExpr() + ")"
}

func (g *gen) strExpr() string {
	switch g.r.IntN(4) {
	case 0:
		return "LOWER(t)"
	case 1:
		return "UPPER(t)"
	case 2:
		return "COALESCE(t, 'none')"
	}
	return "t"
}

func (g *gen) cond(depth int) string {
	if depth > 0 && g.r.IntN(3) == 0 {
		switch g.r.IntN(3) {
		case 0:
			return "(" + g.cond(depth-1) + " AND " + g.cond(depth-1) + ")"
		case 1:
			return "(" + g.cond(depth-1) + " OR " + g.cond(depth-1) + ")"
		}
		return "NOT " + g.cond(depth-1)
	}
	op := g.pick("=", "<>", "<", "<=", ">", ">=")
	switch g.r.IntN(8) {
	case 0:
		return g.col(0) + g.pick(" IS NULL", " IS NOT NULL")
	case 1:
		return g.col('i') + g.pick(" IN ", " NOT IN ") + fmt.Sprintf("(%d, %d, %d)", g.r.IntN(11)-5, g.r.IntN(5), g.r.IntN(50))
	case 2:
		lo := g.r.IntN(41) - 20
		return g.col('i') + g.pick(" BETWEEN ", " NOT BETWEEN ") + fmt.Sprintf("%d AND %d", lo, lo+g.r.IntN(30))
	case 3:
		return "t" + g.pick(" LIKE ", " NOT LIKE ") + g.pick("'a%'", "'%e%'", "'b_c'", "'%'", "'A%'", "'_'")
	case 4:
		return "c " + op + " " + fmt.Sprintf("%d.5", g.r.IntN(21)-10)
	case 5:
		return g.strExpr() + " " + op + " " + g.pick("'apple'", "'b'", "''", "'cherry'")
	}
	return g.intExpr(1) + " " + op + " " + g.intExpr(1)
}

func (g *gen) query() string {
	var where string
	if g.r.IntN(3) > 0 {
		where = " WHERE " + g.cond(2)
	}
	limit := ""
	if g.r.IntN(2) == 0 {
		limit = fmt.Sprintf(" LIMIT %d", g.r.IntN(8))
		if g.r.IntN(2) == 0 {
			limit += fmt.Sprintf(" OFFSET %d", g.r.IntN(5))
		}
	}
	dir := func() string { return g.pick("", " DESC") }
	switch g.r.IntN(4) {
	case 0: // plain rows
		n := 1 + g.r.IntN(3)
		var items, keys []string
		for i := range n {
			if g.r.IntN(2) == 0 {
				items = append(items, g.intExpr(2))
			} else {
				items = append(items, g.pick(g.col(0), g.strExpr()))
			}
			keys = append(keys, fmt.Sprint(i+1)+dir())
		}
		distinct := g.pick("", "", "DISTINCT ")
		return "SELECT " + distinct + strings.Join(items, ", ") + " FROM t" + where + " ORDER BY " + strings.Join(keys, ", ") + limit
	case 1: // global aggregates
		return "SELECT " + strings.Join(g.aggs(1+g.r.IntN(4)), ", ") + " FROM t" + where
	default: // GROUP BY
		keys := []string{g.pick("s", "t", "b", "(a % 3)", "LOWER(t)")}
		if g.r.IntN(3) == 0 {
			keys = append(keys, g.pick("s", "b"))
		}
		items := append(append([]string{}, keys...), g.aggs(1+g.r.IntN(3))...)
		var order []string
		for i := range items {
			order = append(order, fmt.Sprint(i+1)+dir())
		}
		having := ""
		if g.r.IntN(3) == 0 {
			having = g.pick(" HAVING COUNT(*) > 2", " HAVING SUM(b) > 0", " HAVING MIN(a) < 0 OR MAX(a) IS NULL")
		}
		return "SELECT " + strings.Join(items, ", ") + " FROM t" + where + " GROUP BY " + strings.Join(keys, ", ") + having +
			" ORDER BY " + strings.Join(order, ", ") + limit
	}
}

func (g *gen) aggs(n int) []string {
	var out []string
	for range n {
		switch g.r.IntN(7) {
		case 0:
			out = append(out, "COUNT(*)")
		case 1:
			out = append(out, "COUNT("+g.col(0)+")")
		case 2:
			out = append(out, "COUNT(DISTINCT "+g.pick("s", "t", "b")+")")
		case 3:
			out = append(out, "SUM("+g.intExpr(1)+")")
		case 4:
			out = append(out, g.pick("MIN", "MAX")+"("+g.col(0)+")")
		case 5:
			out = append(out, "AVG("+g.col('i')+")")
		default:
			out = append(out, "SUM(c)")
		}
	}
	return out
}
