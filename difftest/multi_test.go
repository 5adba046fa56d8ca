package difftest

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The multi-table differential test: every seed builds two or three random
// tables (log or primary-key, partitioned or not, 1 to 3 buckets, some
// lake-enabled and tiered with CALL sys.tier, some with a log tail written
// after tiering), loads the same rows into SQLite (INSERT OR REPLACE for a
// key table, which is what fluss's upsert does), and runs random queries
// over them in both. Every query is a pure function of its seed and its
// number, so -difftest.seed and -difftest.query rerun one of them alone.

var (
	flagSeed    = flag.Uint64("difftest.seed", 0, "run only this seed of TestMultiTable (0: the CI seeds)")
	flagSeeds   = flag.Int("difftest.seeds", 12, "seeds of TestMultiTable, each with its own tables")
	flagQueries = flag.Int("difftest.queries", 300, "random queries per seed of TestMultiTable")
	flagQuery   = flag.Int("difftest.query", -1, "run only this query number of each seed (-1: all)")
	flagForms   = flag.String("difftest.forms", "", "comma-separated query forms to generate beyond those on by default, or 'all'")
	flagDump    = flag.Bool("difftest.dump", false, "print every statement that sets up a seed's tables")
	flagBudget  = flag.Duration("difftest.budget", 90*time.Second, "TestMultiTable starts no new query after this, so that a slow engine cannot stretch CI (the queries it ran are logged)")
	flagHang    = flag.Duration("difftest.hang", 20*time.Second, "a query of TestMultiTable that takes longer fails as a hang")
)

// forms are the query forms the generator emits, each on once fluss
// answers it. A form that is off is never generated; -difftest.forms
// turns it on for one run, to see where fluss stands.
var forms = map[string]bool{
	"single":    true,  // one table: filters, aggregates, GROUP BY, ORDER BY + LIMIT
	"lake":      true,  // t$lake, the readable lake snapshot, as a relation
	"changelog": true,  // t$changelog of a log table (every row an insert) as a relation
	"join":      true,  // [INNER] JOIN ... ON equalities between the sides
	"left":      true,  // LEFT [OUTER] JOIN
	"right":     true,  // RIGHT [OUTER] JOIN
	"cross":     true,  // CROSS JOIN, filtered by WHERE
	"comma":     true,  // FROM a, b WHERE a.x = b.y
	"nonequi":   true,  // ON conditions without an equality, or with a residual
	"using":     true,  // JOIN ... USING (cols)
	"natural":   true,  // NATURAL JOIN against a derived table that shares one column
	"three":     true,  // three relations in one FROM
	"paren":     true,  // a parenthesised join as the right side: a JOIN (b JOIN c ON ...) ON ...
	"self":      true,  // a table joined with itself under two aliases
	"joinagg":   true,  // aggregates and GROUP BY over joins
	"derived":   true,  // FROM (SELECT ...) AS d
	"in":        true,  // x [NOT] IN (SELECT ...), not correlated
	"exists":    true,  // [NOT] EXISTS (SELECT ...), correlated by an equality or not
	"scalar":    true,  // scalar subqueries (aggregates), not correlated, in WHERE and the select list
	"correlate": true,  // other correlated subqueries: IN and scalar ones reaching the outer query, by any comparison
	"subjoin":   true,  // the subqueries above in a query over several relations (and correlated with any of them)
	"subon":     false, // the subqueries above in a join's ON condition
	"union":     true,  // UNION and UNION ALL
	"setops":    true,  // INTERSECT and EXCEPT
	"unionsub":  true,  // UNION [ALL] as a derived table and in an IN subquery
	"view":      true,  // views (CREATE VIEW over one table, a join or an aggregate) in FROM
	"with":      true,  // WITH name AS (SELECT ...): derived tables named up front
	"withset":   true,  // WITH before a set operation
}

func formsOn(t *testing.T) map[string]bool {
	on := map[string]bool{}
	for f, v := range forms {
		on[f] = v
	}
	for _, f := range strings.Split(*flagForms, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			for k := range on {
				on[k] = true
			}
		default:
			if _, ok := forms[f]; !ok {
				t.Fatalf("-difftest.forms: unknown form %q", f)
			}
			on[f] = true
		}
	}
	return on
}

func TestMultiTable(t *testing.T) {
	on := formsOn(t)
	deadline := time.Now().Add(*flagBudget)
	var seeds []uint64
	if *flagSeed != 0 {
		seeds = []uint64{*flagSeed}
	} else {
		for s := 1; s <= *flagSeeds; s++ {
			seeds = append(seeds, uint64(s))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runMulti(t, seed, on, deadline)
		})
	}
}

// mcol is a column of a relation in scope; kind is 'i' (integer), 'f'
// (double) or 's' (string).
type mcol struct {
	name string
	kind byte
}

// rel is a relation of a FROM clause: a table or a derived table under
// its alias.
type rel struct {
	alias string
	cols  []mcol
	key   []string // the primary key of a key table read as it is
}

// mtable is one random table of a seed.
type mtable struct {
	name        string
	pk          bool
	partitioned bool
	lake        bool
	buckets     int
	// size is 't' (tiny: a few rows), 'n' (normal) or 'l' (large): a tiny
	// side next to a large key table is joined by looking its keys up.
	size byte
	// dropped: a partition was dropped after tiering, so the log (and
	// m$changelog) no longer holds every row.
	dropped bool
}

func (m mtable) cols() []mcol {
	cs := []mcol{{"id", 'i'}, {"k", 'i'}, {"a", 'i'}, {"c", 'f'}, {"s", 's'}}
	if m.partitioned {
		cs = append(cs, mcol{"p", 's'})
	}
	return cs
}

// rel is the table under alias.
func (m mtable) rel(alias string) rel {
	r := rel{alias: alias, cols: m.cols()}
	if m.pk {
		r.key = []string{"id"}
		if m.partitioned {
			r.key = []string{"p", "id"}
		}
	}
	return r
}

func (m mtable) describe() string {
	kind := "log"
	if m.pk {
		kind = "primary-key"
	}
	var extra []string
	if m.partitioned {
		extra = append(extra, "partitioned by p")
	}
	if m.lake {
		extra = append(extra, "lake")
	}
	extra = append(extra, fmt.Sprintf("%d buckets", m.buckets), map[byte]string{'t': "tiny", 'n': "normal size", 'l': "large"}[m.size])
	return fmt.Sprintf("%s: %s table, %s", m.name, kind, strings.Join(extra, ", "))
}

// setup is what runMulti executes: a statement for both engines, or for
// fluss alone (tiering).
type setupStmt struct {
	fluss, lite string
}

func newTables(r *rand.Rand) ([]mtable, []setupStmt) {
	n := 2 + r.IntN(2)
	var ts []mtable
	var stmts []setupStmt
	for i := range n {
		m := mtable{
			name:        fmt.Sprintf("t%d", i+1),
			pk:          r.IntN(2) == 0,
			partitioned: r.IntN(3) == 0,
			lake:        r.IntN(2) == 0,
			buckets:     1 + r.IntN(3),
			size:        "ttnnl"[r.IntN(5)],
		}
		if m.pk {
			// Key tables are mostly large and log tables small, so that
			// joins of one with the other look keys up.
			m.size = "nll"[r.IntN(3)]
		}
		ts = append(ts, m)
		stmts = append(stmts, setupStmt{fluss: m.flussDDL(), lite: m.liteDDL()})
	}
	for i := range ts {
		var load []setupStmt
		load, ts[i].dropped = ts[i].load(r)
		stmts = append(stmts, load...)
	}
	for range r.IntN(3) {
		if st, ok := copyRows(r, ts); ok {
			stmts = append(stmts, st)
		}
	}
	for _, m := range ts {
		if m.changelog() {
			// A log table's changelog is its rows, each appended (+A),
			// which t$changelog shows as insert.
			cols := "id, k, a, c, s"
			if m.partitioned {
				cols += ", p"
			}
			stmts = append(stmts, setupStmt{lite: "CREATE VIEW `" + m.name + "$changelog` AS SELECT 'insert' AS _change_type, " + cols + " FROM " + m.name})
		}
	}
	return ts, stmts
}

// changelog reports whether m$changelog is modelled in SQLite: a log
// table whose log holds every row.
func (m mtable) changelog() bool { return !m.pk && !m.dropped }

// viewCols are the columns of every view, so that a view serves where a
// table of those columns would.
var viewCols = []mcol{{"id", 'i'}, {"k", 'i'}, {"a", 'i'}, {"s", 's'}}

// newViews creates two views in both engines: over one table with a
// filter, over a join, or an aggregate; the second may read the first.
func newViews(r *rand.Rand, ts []mtable) ([]string, []setupStmt) {
	var names []string
	var out []setupStmt
	for i := range 2 {
		m, m2 := ts[r.IntN(len(ts))], ts[r.IntN(len(ts))]
		var q string
		switch r.IntN(4) {
		case 0:
			q = fmt.Sprintf("SELECT id, k, a, s FROM %s WHERE a > %d", m.name, r.IntN(21)-10)
		case 1:
			q = fmt.Sprintf("SELECT x.id AS id, x.k AS k, y.a AS a, y.s AS s FROM %s AS x %s %s AS y ON x.k = y.k",
				m.name, []string{"JOIN", "LEFT JOIN"}[r.IntN(2)], m2.name)
		case 2:
			q = fmt.Sprintf("SELECT k, COUNT(*) AS id, SUM(a) AS a, MIN(s) AS s FROM %s GROUP BY k", m.name)
		default:
			if i == 0 {
				q = fmt.Sprintf("SELECT DISTINCT id, k, a, s FROM %s", m.name)
			} else {
				q = fmt.Sprintf("SELECT v.id, v.k, v.a + 1 AS a, v.s FROM %s AS v WHERE v.k <> %d", names[0], r.IntN(7))
			}
		}
		name := fmt.Sprintf("v%d", i+1)
		names = append(names, name)
		ddl := "CREATE VIEW " + name + " AS " + q
		out = append(out, setupStmt{fluss: ddl, lite: ddl})
	}
	return names, out
}

// copyRows is an INSERT ... SELECT from one table into another or into
// itself (which must read the table before it writes). A key table takes
// rows only from a key table of the same key, so that no key comes twice
// and which row wins does not depend on the order they are read in.
func copyRows(r *rand.Rand, ts []mtable) (setupStmt, bool) {
	dst, src := ts[r.IntN(len(ts))], ts[r.IntN(len(ts))]
	if dst.pk && (!src.pk || src.partitioned != dst.partitioned) {
		return setupStmt{}, false
	}
	cols, sel := "id, k, a, c, s", "id, k + 1, a, c, s"
	if dst.pk {
		// Upserts of existing keys with new values.
		sel = "id, k, a - 1, c, s"
	}
	if dst.partitioned {
		cols += ", p"
		if src.partitioned {
			sel += ", p"
		} else {
			sel += ", 'y'"
		}
	}
	q := fmt.Sprintf(" INTO %s (%s) SELECT %s FROM %s WHERE k %s %d", dst.name, cols, sel, src.name, []string{"<", ">=", "<>"}[r.IntN(3)], r.IntN(7))
	if dst.pk {
		return setupStmt{fluss: "INSERT" + q, lite: "INSERT OR REPLACE" + q}, true
	}
	return setupStmt{fluss: "INSERT" + q, lite: "INSERT" + q}, true
}

func (m mtable) flussDDL() string {
	cols := "id BIGINT, k INT, a INT, c DOUBLE, s STRING"
	key := "id"
	if m.partitioned {
		cols += ", p STRING"
		key = "p, id"
	}
	if m.pk {
		cols += ", PRIMARY KEY (" + key + ") NOT ENFORCED"
	}
	q := "CREATE TABLE " + m.name + " (" + cols + ")"
	if m.partitioned {
		q += " PARTITIONED BY (p)"
	}
	with := []string{fmt.Sprintf("'bucket.num' = '%d'", m.buckets)}
	if m.lake {
		with = append(with, "'table.datalake.enabled' = 'true'")
	}
	return q + " WITH (" + strings.Join(with, ", ") + ")"
}

func (m mtable) liteDDL() string {
	cols := "id INTEGER, k INTEGER, a INTEGER, c REAL, s TEXT"
	key := "id"
	if m.partitioned {
		cols += ", p TEXT NOT NULL"
		key = "p, id"
	}
	if m.pk {
		cols = strings.Replace(cols, "id INTEGER", "id INTEGER NOT NULL", 1) + ", PRIMARY KEY (" + key + ")"
	}
	return "CREATE TABLE " + m.name + " (" + cols + ")"
}

// load writes the table's rows in a few statements: a key table gets
// upserts of keys it already holds, an UPDATE and a DELETE, some of them
// after a KV snapshot; a lake table is tiered, and most get a log tail
// after that.
func (m mtable) load(r *rand.Rand) ([]setupStmt, bool) {
	var out []setupStmt
	both := func(q string) { out = append(out, setupStmt{fluss: q, lite: q}) }
	keys := 40
	if m.size == 'l' {
		keys = 200
	}
	insert := func(n int) {
		var vals []string
		for range n {
			id := fmt.Sprint(r.IntN(keys))
			if !m.pk {
				id = maybeNull(r, id)
			}
			v := []string{
				id,
				maybeNull(r, fmt.Sprint(r.IntN(7))),
				maybeNull(r, fmt.Sprint(r.IntN(41)-20)),
				maybeNull(r, fmt.Sprintf("%d.%02d", r.IntN(21)-10, r.IntN(4)*25)),
				maybeNull(r, "'"+[]string{"ant", "bee", "cat", "Cat", "dog", ""}[r.IntN(6)]+"'"),
			}
			if m.partitioned {
				v = append(v, "'"+[]string{"x", "y", "z"}[r.IntN(3)]+"'")
			}
			vals = append(vals, "("+strings.Join(v, ", ")+")")
		}
		q := " INTO " + m.name + " VALUES " + strings.Join(vals, ", ")
		if m.pk {
			out = append(out, setupStmt{fluss: "INSERT" + q, lite: "INSERT OR REPLACE" + q})
		} else {
			both("INSERT" + q)
		}
	}
	dropped := false
	change := func() {
		if !m.pk {
			return
		}
		both(fmt.Sprintf("UPDATE %s SET a = a + %d WHERE k = %d", m.name, 1+r.IntN(5), r.IntN(7)))
		if !dropped {
			// A DELETE of a key that only the lake holds (its partition
			// dropped from the engine) emits nothing, as in Fluss: the
			// row stays, where SQLite would delete it.
			both(fmt.Sprintf("DELETE FROM %s WHERE a < %d", m.name, -16+r.IntN(6)))
		}
	}
	switch m.size {
	case 't':
		insert(1 + r.IntN(4))
	case 'l':
		for range 2 {
			insert(40 + r.IntN(20))
		}
	default:
		for range 1 + r.IntN(3) {
			insert(10 + r.IntN(25))
		}
	}
	if m.pk && r.IntN(2) == 0 {
		// A KV snapshot, so that the changes below are a changelog tail
		// merged over it.
		out = append(out, setupStmt{fluss: "CALL sys.kv_snapshot('" + m.name + "')"})
	}
	change()
	if m.lake {
		// SQLite keeps a copy of what was tiered, which is what fluss's
		// m$lake reads.
		lake := "`" + m.name + "$lake`"
		out = append(out, setupStmt{fluss: "CALL sys.tier('" + m.name + "')",
			lite: "CREATE TABLE " + lake + " AS SELECT * FROM " + m.name})
		if m.partitioned && r.IntN(2) == 0 {
			// Every row of z is tiered, so the lake still holds them all:
			// the table reads as before, and rows written to z after this
			// add to them.
			out = append(out, setupStmt{fluss: "ALTER TABLE " + m.name + " DROP IF EXISTS PARTITION (p = 'z')"})
			dropped = true
		}
		if r.IntN(4) > 0 {
			insert(5 + r.IntN(15))
			change()
		}
	}
	return out, dropped
}

func runMulti(t *testing.T, seed uint64, on map[string]bool, deadline time.Time) {
	r := rand.New(rand.NewPCG(seed, 0xd1ff))
	tables, stmts := newTables(r)
	var views []string
	if on["view"] {
		// A stream of its own, so that views leave the tables as they are.
		var vs []setupStmt
		views, vs = newViews(rand.New(rand.NewPCG(seed, 0x71e3)), tables)
		stmts = append(stmts, vs...)
	}
	fl, err := sql.Open("fluss", ":memory:?tiering=off")
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	lite, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	lite.SetMaxOpenConns(1)
	mustExec(t, lite, `PRAGMA case_sensitive_like = ON`)
	var schema []string
	for _, m := range tables {
		schema = append(schema, m.describe())
	}
	for _, s := range stmts {
		if *flagDump {
			t.Logf("fluss: %s\nsqlite: %s", s.fluss, s.lite)
		}
		if s.fluss != "" {
			execDrain(t, fl, s.fluss)
		}
		if s.lite != "" {
			mustExec(t, lite, s.lite)
		}
	}
	failCtx := func(i int, q string) string {
		return fmt.Sprintf("seed %d, query %d (rerun: go test -run 'TestMultiTable/seed=%d$' -difftest.seed=%d -difftest.query=%d [-difftest.dump])\n"+
			"tables:\n  %s\n%s\nquery:\n  %s", seed, i, seed, seed, i, strings.Join(schema, "\n  "), ddl(stmts, len(tables)), q)
	}
	nonEmpty, ran := 0, 0
	for i := range *flagQueries {
		if *flagQuery >= 0 && i != *flagQuery {
			continue
		}
		if time.Now().After(deadline) {
			t.Logf("seed %d: -difftest.budget spent, %d of %d queries ran", seed, ran, *flagQueries)
			break
		}
		g := &mgen{r: rand.New(rand.NewPCG(seed, uint64(i))), tables: tables, views: views, on: on}
		q, ordered := g.query()
		liteQ := q
		if g.unlimited != "" {
			liteQ = g.unlimited
		}
		want, err := runFor(lite, liteQ)
		if err != nil {
			t.Fatalf("sqlite failed (a generator bug): %v\n%s", err, failCtx(i, q))
		}
		var got [][]any
		if g.chance(8) {
			// A read-only transaction reads one view, its lookups too.
			got, err = runTx(fl, q)
			q += "\n  (fluss: in a read-only transaction)"
		} else {
			got, err = runFor(fl, q)
		}
		if err != nil {
			t.Fatalf("fluss failed: %v\n%s", err, failCtx(i, q))
		}
		if !ordered {
			sortRows(got)
			sortRows(want)
		}
		if g.unlimited != "" {
			var n int
			fmt.Sscanf(q[strings.LastIndex(q, " LIMIT ")+len(" LIMIT "):], "%d", &n)
			if len(got) != min(n, len(want)) || !subset(got, want) {
				t.Fatalf("the LIMIT kept rows the query without it does not return, or too few or too many\n%s\nfluss  (%d rows): %s\nsqlite without the LIMIT (%d rows): %s",
					failCtx(i, q), len(got), show(got), len(want), show(want))
			}
		} else if !same(got, want) {
			t.Fatalf("results differ (%s)\n%s\nfluss  (%d rows): %s\nsqlite (%d rows): %s",
				map[bool]string{true: "in order", false: "as multisets"}[ordered], failCtx(i, q),
				len(got), show(got), len(want), show(want))
		}
		ran++
		if len(got) > 0 {
			nonEmpty++
		}
	}
	// Agreement on empty results alone would prove little.
	if ran >= 50 && nonEmpty < ran/3 {
		t.Fatalf("seed %d: only %d of %d queries returned rows", seed, nonEmpty, ran)
	}
}

// subset reports whether every row of a (a multiset) is in b (a
// multiset), both sorted by sortRows.
func subset(a, b [][]any) bool {
	j := 0
	for _, r := range a {
		for j < len(b) && !same([][]any{r}, [][]any{b[j]}) && rowKey(b[j]) < rowKey(r) {
			j++
		}
		if j == len(b) || !same([][]any{r}, [][]any{b[j]}) {
			return false
		}
		j++
	}
	return true
}

// runFor is run with -difftest.hang as its deadline.
func runFor(db querier, q string) ([][]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *flagHang)
	defer cancel()
	rows, err := runCtx(ctx, db, q)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("no answer within -difftest.hang (%v), a hang: %w", *flagHang, err)
	}
	return rows, err
}

// runTx is runFor inside a read-only snapshot transaction.
func runTx(db *sql.DB, q string) ([][]any, error) {
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelSnapshot, ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return runFor(tx, q)
}

// ddl is the CREATE TABLE statements of fluss, for a failure's report.
func ddl(stmts []setupStmt, n int) string {
	var b strings.Builder
	for _, s := range stmts[:n] {
		b.WriteString("  " + s.fluss + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// execDrain runs q and reads any rows it returns (CALL returns some).
func execDrain(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	for rs.Next() {
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	rs.Close()
}

// rowKey is a row as text, for sorting a multiset; doubles are rounded so
// that sums added in another order sort alike.
func rowKey(row []any) string {
	var b strings.Builder
	for _, v := range row {
		switch x := v.(type) {
		case nil:
			b.WriteString("\x00N")
		case float64:
			b.WriteString("\x00F" + strconv.FormatFloat(x, 'e', 9, 64))
		default:
			fmt.Fprintf(&b, "\x00%T%v", v, v)
		}
	}
	return b.String()
}

func sortRows(rows [][]any) {
	slices.SortStableFunc(rows, func(a, b []any) int { return strings.Compare(rowKey(a), rowKey(b)) })
}

func show(rows [][]any) string {
	const most = 20
	var parts []string
	for i, r := range rows {
		if i == most {
			parts = append(parts, fmt.Sprintf("... %d more", len(rows)-most))
			break
		}
		parts = append(parts, fmt.Sprint(r))
	}
	return strings.Join(parts, " ")
}

// mgen builds one random query over a seed's tables, with the forms that
// are on.
type mgen struct {
	r      *rand.Rand
	tables []mtable
	views  []string
	on     map[string]bool
	alias  int // aliases are numbered per query so that subqueries never shadow
	// used are the tables in FROM under their own names (one each, or
	// the names would be ambiguous); where are the join conditions of
	// comma and cross joins, for the WHERE clause.
	used  []string
	where []string
	inOn  bool // an ON condition is being generated
	// unlimited is the query without its LIMIT when the query has a
	// LIMIT but no ORDER BY.
	unlimited string
	// ctes are the WITH clause's definitions, "name AS (SELECT ...)".
	ctes  []string
	inSet bool // a side of a set operation is being generated
}

func (g *mgen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *mgen) chance(n int) bool { return g.r.IntN(n) == 0 }

func (g *mgen) newAlias(prefix string) string {
	g.alias++
	return fmt.Sprintf("%s%d", prefix, g.alias)
}

func (g *mgen) table() mtable { return g.tables[g.r.IntN(len(g.tables))] }

// colOf returns a qualified column of kind (0: any) from the scope.
func (g *mgen) colOf(sc []rel, kind byte) (string, bool) {
	var cs []string
	for _, r := range sc {
		for _, c := range r.cols {
			if kind == 0 || c.kind == kind {
				cs = append(cs, r.alias+"."+c.name)
			}
		}
	}
	if len(cs) == 0 {
		return "", false
	}
	return g.pick(cs...), true
}

func (g *mgen) icol(sc []rel) string {
	if c, ok := g.colOf(sc, 'i'); ok {
		return c
	}
	return fmt.Sprint(g.r.IntN(7))
}

func (g *mgen) intExpr(sc []rel, depth int) string {
	if depth <= 0 || g.chance(2) {
		if g.chance(5) {
			return fmt.Sprint(g.r.IntN(21) - 10)
		}
		return g.icol(sc)
	}
	switch g.r.IntN(5) {
	case 0:
		return "(" + g.intExpr(sc, depth-1) + " " + g.pick("+", "-", "*") + " " + g.intExpr(sc, depth-1) + ")"
	case 1:
		return "ABS(" + g.intExpr(sc, depth-1) + ")"
	case 2:
		return "COALESCE(" + g.intExpr(sc, depth-1) + ", " + g.intExpr(sc, depth-1) + ")"
	case 3:
		return "CASE WHEN " + g.cond(sc, depth-1) + " THEN " + g.intExpr(sc, depth-1) + " ELSE " + g.intExpr(sc, depth-1) + " END"
	}
	return "(" + g.intExpr(sc, depth-1) + " % " + fmt.Sprint(2+g.r.IntN(4)) + ")"
}

func (g *mgen) strExpr(sc []rel) string {
	c, ok := g.colOf(sc, 's')
	if !ok {
		return g.pick("'ant'", "'cat'")
	}
	switch g.r.IntN(4) {
	case 0:
		return "LOWER(" + c + ")"
	case 1:
		return "COALESCE(" + c + ", 'none')"
	}
	return c
}

// cond is a condition over the scope; with the subquery forms on it may
// hold a subquery whose correlation reaches into the scope.
func (g *mgen) cond(sc []rel, depth int) string {
	if depth > 0 && g.chance(3) {
		switch g.r.IntN(3) {
		case 0:
			return "(" + g.cond(sc, depth-1) + " AND " + g.cond(sc, depth-1) + ")"
		case 1:
			return "(" + g.cond(sc, depth-1) + " OR " + g.cond(sc, depth-1) + ")"
		}
		return "NOT " + g.cond(sc, depth-1)
	}
	if depth > 0 && g.chance(3) && g.subqueryIn(sc) {
		if q, ok := g.subqueryCond(sc); ok {
			return q
		}
	}
	op := g.pick("=", "<>", "<", "<=", ">", ">=")
	switch g.r.IntN(7) {
	case 0:
		c, _ := g.colOf(sc, 0)
		if c == "" {
			c = g.icol(sc)
		}
		return c + g.pick(" IS NULL", " IS NOT NULL")
	case 1:
		return g.icol(sc) + g.pick(" IN ", " NOT IN ") + fmt.Sprintf("(%d, %d, %d)", g.r.IntN(7), g.r.IntN(7), g.r.IntN(41)-20)
	case 2:
		lo := g.r.IntN(41) - 20
		return g.icol(sc) + g.pick(" BETWEEN ", " NOT BETWEEN ") + fmt.Sprintf("%d AND %d", lo, lo+g.r.IntN(25))
	case 3:
		if c, ok := g.colOf(sc, 'f'); ok {
			return c + " " + op + " " + fmt.Sprintf("%d.5", g.r.IntN(21)-10)
		}
	case 4:
		if _, ok := g.colOf(sc, 's'); ok {
			if g.chance(2) {
				return g.strExpr(sc) + g.pick(" LIKE ", " NOT LIKE ") + g.pick("'a%'", "'%a%'", "'_at'", "'%'")
			}
			return g.strExpr(sc) + " " + op + " " + g.pick("'ant'", "'cat'", "''", "'dog'")
		}
	}
	return g.intExpr(sc, 1) + " " + op + " " + g.intExpr(sc, 1)
}

// subqueryIn reports whether a condition over the scope may hold a
// subquery.
func (g *mgen) subqueryIn(sc []rel) bool {
	return (len(sc) == 1 || g.on["subjoin"]) && (!g.inOn || g.on["subon"])
}

// subqueryCond is a predicate with a subquery over a fresh alias, from
// the subquery forms that are on.
func (g *mgen) subqueryCond(outer []rel) (string, bool) {
	var kinds []string
	for _, f := range []string{"in", "exists", "scalar", "correlate"} {
		if g.on[f] {
			kinds = append(kinds, f)
		}
	}
	if len(kinds) == 0 {
		return "", false
	}
	m := g.table()
	a := g.newAlias("s")
	inner := []rel{{alias: a, cols: m.cols()}}
	from := " FROM " + m.name + " AS " + a
	filter := func(sc []rel) string {
		if g.chance(2) {
			return ""
		}
		return " WHERE " + g.cond(sc, 1)
	}
	switch g.pick(kinds...) {
	case "in":
		sub := "SELECT " + g.icol(inner) + from + filter(inner)
		switch g.r.IntN(4) {
		case 0:
			sub = "SELECT DISTINCT " + g.icol(inner) + from + filter(inner)
		case 2:
			if g.on["unionsub"] {
				m2 := g.table()
				b := g.newAlias("s")
				sub += " " + g.pick("UNION", "UNION ALL") + " SELECT " + b + "." + g.pick("k", "a", "id") + " FROM " + m2.name + " AS " + b
			}
		case 1:
			// MySQL refuses LIMIT in an IN subquery; a grouped one is fine.
			k := g.icol(inner)
			sub = "SELECT " + k + from + filter(inner) + " GROUP BY " + k + " HAVING COUNT(*) > 1"
		}
		return g.intExpr(outer, 1) + g.pick(" IN ", " NOT IN ") + "(" + sub + ")", true
	case "exists":
		if g.chance(3) {
			return g.pick("", "NOT ") + "EXISTS (SELECT 1" + from + filter(inner) + ")", true
		}
		// Correlated by an equality: a semi- or anti-join.
		where := " WHERE " + g.icol(inner) + " = " + g.icol(outer)
		if g.chance(2) {
			where += " AND " + g.cond(inner, 1)
		}
		return g.pick("", "NOT ") + "EXISTS (SELECT 1" + from + where + ")", true
	case "scalar":
		agg := g.pick("MIN", "MAX", "SUM", "COUNT") + "(" + g.icol(inner) + ")"
		if g.chance(4) {
			agg = "COUNT(*)"
		}
		return g.intExpr(outer, 1) + " " + g.pick("=", "<", ">=", "<>") + " (SELECT " + agg + from + filter(inner) + ")", true
	}
	// correlate: the subquery's WHERE reaches the outer scope through
	// other than an equality, or the subquery is a correlated aggregate.
	both := append(slices.Clip(inner), outer...)
	corr := " WHERE " + g.icol(inner) + " " + g.pick("<", ">", "<>", "=") + " " + g.icol(outer)
	if g.chance(2) {
		corr += " AND " + g.cond(both, 1)
	}
	if g.chance(2) {
		return g.intExpr(outer, 1) + g.pick(" IN ", " NOT IN ") + "(SELECT " + g.icol(inner) + from + corr + ")", true
	}
	agg := g.pick("MIN", "MAX", "COUNT") + "(" + g.icol(inner) + ")"
	return g.intExpr(outer, 1) + " " + g.pick("=", "<", ">=") + " (SELECT " + agg + from + corr + ")", true
}

// havingSubquery is a HAVING condition with a subquery, over an
// aggregate or the group key.
func (g *mgen) havingSubquery(key string) string {
	m := g.table()
	a := g.newAlias("s")
	inner := []rel{{alias: a, cols: m.cols()}}
	from := " FROM " + m.name + " AS " + a
	if g.on["in"] && (!g.on["scalar"] || g.chance(2)) {
		return key + g.pick(" IN ", " NOT IN ") + "(SELECT " + g.icol(inner) + from + " WHERE " + g.cond(inner, 0) + ")"
	}
	return "COUNT(*) " + g.pick(">", "<=", "=") + " (SELECT " + g.pick("COUNT(*)", "MAX("+g.icol(inner)+")", "MIN("+g.icol(inner)+")") + from + ")"
}

// scalarItem is a scalar subquery for the select list.
func (g *mgen) scalarItem(outer []rel) string {
	m := g.table()
	a := g.newAlias("s")
	inner := []rel{{alias: a, cols: m.cols()}}
	agg := g.pick("MAX", "MIN", "SUM", "COUNT") + "(" + g.icol(inner) + ")"
	where := ""
	switch {
	case g.on["correlate"] && g.chance(2):
		where = " WHERE " + g.icol(inner) + " " + g.pick("=", "=", "<", ">") + " " + g.icol(outer)
	case g.chance(2):
		where = " WHERE " + g.cond(inner, 1)
	}
	return "(SELECT " + agg + " FROM " + m.name + " AS " + a + where + ")"
}

// source is one relation for a FROM clause: a table under an alias (or
// under its own name), or a derived table.
func (g *mgen) source() (string, rel) {
	if g.on["derived"] && g.chance(4) {
		text, r := g.derived()
		if g.on["with"] && (!g.inSet || g.on["withset"]) && g.chance(2) {
			// The same derived table, named in the WITH clause.
			open := strings.LastIndex(text, ") AS ")
			name := g.newAlias("w")
			g.ctes = append(g.ctes, name+" AS "+text[:open+1])
			return name + " AS " + r.alias, r
		}
		return text, r
	}
	if len(g.views) > 0 && g.chance(5) {
		v := g.views[g.r.IntN(len(g.views))]
		a := g.newAlias("v")
		return v + " AS " + a, rel{alias: a, cols: viewCols}
	}
	m := g.table()
	if g.on["changelog"] && m.changelog() && g.chance(6) {
		a := g.newAlias("c")
		return "`" + m.name + "$changelog` AS " + a, rel{alias: a, cols: append([]mcol{{"_change_type", 's'}}, m.cols()...)}
	}
	if g.on["lake"] && m.lake && g.chance(5) {
		a := g.newAlias("l")
		return "`" + m.name + "$lake` AS " + a, rel{alias: a, cols: m.cols()}
	}
	if g.chance(4) && !g.usesName(m.name) {
		g.used = append(g.used, m.name)
		return m.name, m.rel(m.name)
	}
	a := g.newAlias("x")
	return m.name + g.pick(" AS ", " ") + a, m.rel(a)
}

func (g *mgen) usesName(n string) bool { return slices.Contains(g.used, n) }

// derived is a derived table of one of three shapes.
func (g *mgen) derived() (string, rel) {
	m := g.table()
	a := g.newAlias("y")
	in := []rel{{alias: a, cols: m.cols()}}
	d := g.newAlias("d")
	where := ""
	if g.chance(2) {
		where = " WHERE " + g.cond(in, 1)
	}
	if g.on["unionsub"] && g.chance(4) {
		m2 := g.table()
		b := g.newAlias("y")
		q := "(SELECT " + a + ".k AS k, " + a + ".a AS a FROM " + m.name + " AS " + a + where + " " + g.pick("UNION", "UNION ALL") +
			" SELECT " + b + ".id, " + b + ".k FROM " + m2.name + " AS " + b + ") AS " + d
		return q, rel{alias: d, cols: []mcol{{"k", 'i'}, {"a", 'i'}}}
	}
	switch g.r.IntN(3) {
	case 0:
		q := "(SELECT " + a + ".k AS k, COUNT(*) AS n, SUM(" + a + ".a) AS sa FROM " + m.name + " AS " + a + where + " GROUP BY " + a + ".k) AS " + d
		return q, rel{alias: d, cols: []mcol{{"k", 'i'}, {"n", 'i'}, {"sa", 'i'}}}
	case 1:
		q := "(SELECT DISTINCT " + a + ".k AS k, " + a + ".s AS s FROM " + m.name + " AS " + a + where + ") AS " + d
		return q, rel{alias: d, cols: []mcol{{"k", 'i'}, {"s", 's'}}}
	}
	q := "(SELECT " + a + ".id AS id, " + a + ".k AS k, " + g.intExpr(in, 1) + " AS a, " + a + ".c AS c FROM " + m.name + " AS " + a + where + ") AS " + d
	return q, rel{alias: d, cols: []mcol{{"id", 'i'}, {"k", 'i'}, {"a", 'i'}, {"c", 'f'}}}
}

// onCond joins r to the relations before it.
func (g *mgen) onCond(left []rel, r rel) string {
	l := left[g.r.IntN(len(left))]
	eq := func(lc, rc string) string { return l.alias + "." + lc + " = " + r.alias + "." + rc }
	has := func(x rel, c string) bool {
		return slices.ContainsFunc(x.cols, func(m mcol) bool { return m.name == c })
	}
	var c string
	coversKey := len(r.key) > 0
	for _, k := range r.key {
		coversKey = coversKey && has(l, k)
	}
	switch {
	case coversKey && g.chance(2):
		// r's whole primary key: a lookup join when l is small.
		var eqs []string
		for _, k := range r.key {
			eqs = append(eqs, eq(k, k))
		}
		c = strings.Join(eqs, " AND ")
	case has(l, "p") && has(r, "p") && g.chance(3):
		// The whole key of a partitioned key table: a lookup join when
		// the other side is small.
		c = eq("p", "p") + " AND " + eq("id", "id")
	case has(l, "id") && has(r, "id") && g.chance(4):
		c = eq("k", "k") + " AND " + eq("id", "id")
	case has(l, "a") && has(r, "k") && g.chance(4):
		c = eq("a", "k")
	case has(l, "id") && has(r, "id") && g.chance(4):
		c = eq("id", "id")
	default:
		c = eq("k", "k")
	}
	if g.on["nonequi"] {
		g.inOn = true
		defer func() { g.inOn = false }()
		both := append(slices.Clip(left), r)
		switch g.r.IntN(4) {
		case 0: // no equality at all: a nested loop
			c = g.icol([]rel{l}) + " " + g.pick("<", ">=", "<>") + " " + g.icol([]rel{r})
		case 1: // an equality and a residual
			c += " AND " + g.cond(both, 1)
		}
	}
	return c
}

// from builds the FROM clause of a query with the join forms that are
// on, and returns the relations in scope.
func (g *mgen) from() (string, []rel) {
	var joins []string
	for _, f := range []string{"join", "left", "right", "cross", "comma"} {
		if g.on[f] {
			joins = append(joins, f)
		}
	}
	if len(joins) == 0 || g.chance(5) {
		s, r := g.source()
		return s, []rel{r}
	}
	n := 2
	if g.on["three"] && g.chance(3) {
		n = 3
	}
	if small, keyed, ok := g.lookupPair(); ok && g.chance(4) {
		// A small table joined with a key table on its whole key, the
		// shape fluss answers with lookups instead of a scan.
		a, b := g.newAlias("x"), g.newAlias("x")
		ra, rb := small.rel(a), keyed.rel(b)
		var eqs []string
		for _, k := range rb.key {
			eqs = append(eqs, a+"."+k+" = "+b+"."+k)
		}
		on := strings.Join(eqs, " AND ")
		if g.on["nonequi"] && g.chance(3) {
			g.inOn = true
			on += " AND " + g.cond([]rel{ra, rb}, 1)
			g.inOn = false
		}
		kind := "JOIN"
		if g.on["left"] && g.chance(2) {
			kind = "LEFT JOIN"
		}
		return small.name + " AS " + a + " " + kind + " " + keyed.name + " AS " + b + " ON " + on, []rel{ra, rb}
	}
	first, r0 := g.source()
	if g.on["self"] && g.chance(5) {
		// The same table twice under two aliases.
		m := g.table()
		a, b := g.newAlias("x"), g.newAlias("x")
		ra, rb := m.rel(a), m.rel(b)
		return m.name + " AS " + a + " JOIN " + m.name + " AS " + b + " ON " + g.onCond([]rel{ra}, rb), []rel{ra, rb}
	}
	text, sc := first, []rel{r0}
	var where []string
	comma := false
	for i := 1; i < n; i++ {
		kind := g.pick(joins...)
		if comma && kind != "cross" {
			// After a comma every join is a comma: MySQL's JOIN binds
			// tighter than a comma (a, b JOIN c ON a.x = c.x cannot see
			// a), while SQLite reads them left to right.
			kind = "comma"
		}
		if g.on["paren"] && i == 1 && n == 3 && kind != "comma" && g.chance(3) {
			// a JOIN (b JOIN c ON b-c) ON a-(b or c)
			sb, rb := g.source()
			sc2, rc := g.source()
			inner := "(" + sb + " JOIN " + sc2 + " ON " + g.onCond([]rel{rb}, rc) + ")"
			text += " " + g.joinWord(kind) + " " + inner + " ON " + g.onCond([]rel{rb, rc}, r0)
			sc = append(sc, rb, rc)
			break
		}
		s, r := g.source()
		switch kind {
		case "comma":
			comma = true
			text += ", " + s
			where = append(where, g.onCond(sc, r))
		case "cross":
			text += " CROSS JOIN " + s
			where = append(where, g.onCond(sc, r))
		default:
			if g.on["using"] && g.chance(4) && once(sc, r, "k") {
				cols := "k"
				if once(sc, r, "id") && g.chance(2) {
					cols = "k, id"
				}
				text += " " + g.joinWord(kind) + " " + s + " USING (" + cols + ")"
			} else if g.on["natural"] && g.on["derived"] && g.chance(6) {
				// A derived table that shares only k with the left side.
				m := g.table()
				a, d := g.newAlias("y"), g.newAlias("d")
				s = "(SELECT " + a + ".k AS k, " + a + ".a AS na FROM " + m.name + " AS " + a + ") AS " + d
				r = rel{alias: d, cols: []mcol{{"k", 'i'}, {"na", 'i'}}}
				if !hasOnly(sc, r, "k") || !once(sc, r, "k") {
					text += " " + g.joinWord(kind) + " " + s + " ON " + g.onCond(sc, r)
				} else {
					text += " NATURAL " + g.joinWord(kind) + " " + s
				}
			} else {
				text += " " + g.joinWord(kind) + " " + s + " ON " + g.onCond(sc, r)
			}
		}
		sc = append(sc, r)
	}
	if len(where) > 0 {
		g.where = append(g.where, where...)
	}
	return text, sc
}

// lookupPair picks a tiny table and a key table whose whole key the tiny
// one has (a partitioned key needs a partitioned tiny table).
func (g *mgen) lookupPair() (small, keyed mtable, ok bool) {
	var smalls, keyeds []mtable
	for _, m := range g.tables {
		if m.size == 't' {
			smalls = append(smalls, m)
		}
		if m.pk && m.size != 't' {
			keyeds = append(keyeds, m)
		}
	}
	for range 4 {
		if len(smalls) == 0 || len(keyeds) == 0 {
			return small, keyed, false
		}
		small, keyed = smalls[g.r.IntN(len(smalls))], keyeds[g.r.IntN(len(keyeds))]
		if small.name != keyed.name && (small.partitioned || !keyed.partitioned) {
			return small, keyed, true
		}
	}
	return small, keyed, false
}

// once reports whether column c of r names exactly one column on the
// left, as USING and NATURAL need (more would be ambiguous).
func once(sc []rel, r rel, c string) bool {
	in := func(x rel) bool { return slices.ContainsFunc(x.cols, func(m mcol) bool { return m.name == c }) }
	n := 0
	for _, x := range sc {
		if in(x) {
			n++
		}
	}
	return n == 1 && in(r)
}

// hasOnly reports whether the only column name r shares with the scope is c.
func hasOnly(sc []rel, r rel, c string) bool {
	for _, rc := range r.cols {
		for _, x := range sc {
			for _, xc := range x.cols {
				if xc.name == rc.name && rc.name != c {
					return false
				}
			}
		}
	}
	return true
}

func (g *mgen) joinWord(kind string) string {
	switch kind {
	case "left":
		return g.pick("LEFT JOIN", "LEFT OUTER JOIN")
	case "right":
		return g.pick("RIGHT JOIN", "RIGHT OUTER JOIN")
	}
	return g.pick("JOIN", "INNER JOIN")
}

// query returns a random query and whether its ORDER BY fixes the order
// of its rows (else they are compared as multisets).
func (g *mgen) query() (string, bool) {
	var sets []string
	if g.on["union"] {
		sets = append(sets, "UNION", "UNION ALL")
	}
	if g.on["setops"] {
		sets = append(sets, "INTERSECT", "EXCEPT")
	}
	var (
		text    string
		ordered bool
	)
	if len(sets) > 0 && g.chance(5) {
		g.inSet = true
		text, ordered = g.setQuery(sets)
	} else {
		text, ordered = g.selectQuery()
	}
	if len(g.ctes) > 0 {
		with := "WITH " + strings.Join(g.ctes, ", ") + " "
		text = with + text
		if g.unlimited != "" {
			g.unlimited = with + g.unlimited
		}
	}
	return text, ordered
}

func (g *mgen) selectQuery() (string, bool) {
	g.where, g.used = nil, nil
	from, sc := g.from()
	joined := len(sc) > 1
	if g.chance(2) {
		g.where = append(g.where, g.cond(sc, 2))
	}
	where := ""
	if len(g.where) > 0 {
		where = " WHERE " + strings.Join(g.where, " AND ")
	}
	shape := g.r.IntN(4)
	if joined && !g.on["joinagg"] {
		shape = 0
	}
	var items []string
	var groupBy, having string
	switch shape {
	case 0, 1: // rows
		for range 1 + g.r.IntN(3) {
			switch {
			case g.on["scalar"] && g.subqueryIn(sc) && g.chance(6):
				items = append(items, g.scalarItem(sc))
			case g.chance(2):
				items = append(items, g.intExpr(sc, 2))
			default:
				c, _ := g.colOf(sc, 0)
				items = append(items, c)
			}
		}
		if g.chance(4) {
			items[0] = "DISTINCT " + items[0]
		}
	case 2: // global aggregates
		items = g.aggs(sc, 1+g.r.IntN(3))
	default: // GROUP BY
		keys := []string{g.icol(sc)}
		if g.chance(3) {
			if c, ok := g.colOf(sc, 's'); ok {
				keys = append(keys, c)
			}
		}
		items = append(slices.Clip(keys), g.aggs(sc, 1+g.r.IntN(3))...)
		groupBy = " GROUP BY " + strings.Join(keys, ", ")
		if g.chance(3) {
			having = " HAVING " + g.pick("COUNT(*) > 1", "SUM("+g.icol(sc)+") > 0", "MIN("+g.icol(sc)+") IS NULL OR COUNT(*) > 2")
			if (g.on["scalar"] || g.on["in"]) && g.subqueryIn(sc) && g.chance(2) {
				having = " HAVING " + g.havingSubquery(keys[0])
			}
		}
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + from + where + groupBy + having
	return g.orderLimit(q, len(items))
}

// orderLimit adds, or not, an ORDER BY over every output column and then
// maybe a LIMIT: the rows it keeps are then the same in both engines.
func (g *mgen) orderLimit(q string, n int) (string, bool) {
	if g.chance(2) {
		if g.chance(4) {
			// A LIMIT without ORDER BY may keep any of the rows: SQLite
			// answers the query without it, and fluss's rows must be that
			// many of those.
			g.unlimited = q
			return q + fmt.Sprintf(" LIMIT %d", g.r.IntN(10)), false
		}
		return q, false
	}
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprint(i+1)+g.pick("", " DESC"))
	}
	q += " ORDER BY " + strings.Join(keys, ", ")
	if g.chance(2) {
		q += fmt.Sprintf(" LIMIT %d", g.r.IntN(10))
		if g.chance(3) {
			q += fmt.Sprintf(" OFFSET %d", g.r.IntN(5))
		}
	}
	return q, true
}

func (g *mgen) aggs(sc []rel, n int) []string {
	var out []string
	for range n {
		switch g.r.IntN(7) {
		case 0:
			out = append(out, "COUNT(*)")
		case 1:
			c, _ := g.colOf(sc, 0)
			out = append(out, "COUNT("+c+")")
		case 2:
			out = append(out, "COUNT(DISTINCT "+g.icol(sc)+")")
		case 3:
			out = append(out, "SUM("+g.intExpr(sc, 1)+")")
		case 4:
			c, _ := g.colOf(sc, 0)
			out = append(out, g.pick("MIN", "MAX")+"("+c+")")
		case 5:
			out = append(out, "AVG("+g.icol(sc)+")")
		default:
			if c, ok := g.colOf(sc, 'f'); ok {
				out = append(out, "SUM("+c+")")
			} else {
				out = append(out, "COUNT(*)")
			}
		}
	}
	return out
}

// setQuery is two SELECTs of one table each, of the same column kinds,
// under a set operation.
func (g *mgen) setQuery(ops []string) (string, bool) {
	kinds := []byte{'i'}
	if g.chance(2) {
		kinds = append(kinds, g.pick("i", "s")[0])
	}
	part := func() string {
		m := g.table()
		a := g.newAlias("u")
		sc := []rel{{alias: a, cols: m.cols()}}
		from := m.name + " AS " + a
		var where []string
		if g.on["join"] && g.chance(3) {
			// A join as one side of the set operation.
			g.where, g.used = nil, nil
			from, sc = g.from()
			where = g.where
		}
		var items []string
		for _, k := range kinds {
			if k == 's' {
				items = append(items, g.strExpr(sc))
			} else if g.chance(2) {
				items = append(items, g.intExpr(sc, 1))
			} else {
				items = append(items, g.icol(sc))
			}
		}
		if g.chance(2) {
			where = append(where, g.cond(sc, 1))
		}
		q := "SELECT " + strings.Join(items, ", ") + " FROM " + from
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
		return q
	}
	op := g.pick(ops...)
	q := part() + " " + op + " " + part()
	if g.chance(4) {
		// INTERSECT binds tighter than UNION and EXCEPT in MySQL, while
		// SQLite reads every compound left to right: mix them only where
		// both read alike.
		op2 := g.pick(ops...)
		if (op == "INTERSECT") != (op2 == "INTERSECT") {
			op2 = op
		}
		q += " " + op2 + " " + part()
	}
	return g.orderLimit(q, len(kinds))
}
