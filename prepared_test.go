package fluss

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The kept bindings of prepared statements (prepared.go) must give what a
// fresh binding gives: the same rows, column types and errors, also after
// the table, the current database or the transaction changes. These tests
// run each statement twice, warm (a statement that has run before and
// kept its binding) and fresh (a new statement, whose first execution
// binds in full), and compare.

type preparedEnv struct {
	t    *testing.T
	ctx  context.Context
	ctr  *Connector
	conn *Conn
}

func newPreparedEnv(t *testing.T) *preparedEnv {
	ctr, err := NewConnector(":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { ctr.Close() })
	ctx := context.Background()
	dc, err := ctr.Connect(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { dc.Close() })
	return &preparedEnv{t: t, ctx: ctx, ctr: ctr, conn: dc.(*Conn)}
}

func (e *preparedEnv) exec(q string, args ...any) driver.Result {
	e.t.Helper()
	res, err := e.conn.ExecContext(e.ctx, q, named(args))
	require.NoError(e.t, err, q)
	return res
}

func (e *preparedEnv) prepare(q string) *Stmt {
	e.t.Helper()
	st, err := e.conn.PrepareContext(e.ctx, q)
	require.NoError(e.t, err, q)
	return st.(*Stmt)
}

func named(args []any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		if n, ok := a.(namedArg); ok {
			out[i] = driver.NamedValue{Ordinal: i + 1, Name: n.name, Value: n.v}
		}
	}
	for i := range out {
		if err := (&Stmt{}).CheckNamedValue(&out[i]); err != nil {
			out[i].Value = err // unusable: the comparison shows it
		}
	}
	return out
}

type namedArg struct {
	name string
	v    any
}

// render renders what a query returns: its columns with their types,
// then its rows, or its error.
func render(rows driver.Rows, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	defer rows.Close()
	r := rows.(*Rows)
	out := fmt.Sprint(r.Columns())
	for i := range r.Columns() {
		n, _ := r.ColumnTypeNullable(i)
		out += fmt.Sprintf(" %s/%s/%v", r.ColumnTypeDatabaseTypeName(i), r.ColumnTypeScanType(i), n)
	}
	dest := make([]driver.Value, len(r.Columns()))
	for {
		err := r.Next(dest)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return out + " error: " + err.Error()
		}
		out += fmt.Sprintf(" %#v", dest)
	}
}

// warmAndFresh runs q with args through st (warm) and through a new
// statement (fresh) and requires the same result; it returns it.
func (e *preparedEnv) warmAndFresh(st *Stmt, args ...any) string {
	e.t.Helper()
	warm := render(st.QueryContext(e.ctx, named(args)))
	fresh := render(e.prepare(st.text).QueryContext(e.ctx, named(args)))
	require.Equal(e.t, fresh, warm, "%s with %v", st.text, args)
	return warm
}

func TestPreparedLookupAgreesWithBinding(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec(`CREATE TABLE kv (id BIGINT, r STRING, ts TIMESTAMP(3), d DECIMAL(10, 2), b BYTES, f FLOAT,
		tl TIMESTAMP_LTZ(3), k TINYINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '3')`)
	e.exec(`INSERT INTO kv VALUES (1, 'one', '2026-01-02 03:04:05.678', 1.5, x'0102', 2.5, '2026-01-02 03:04:05.678', 7),
		(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (3, 'three', '2026-03-03 00:00:00', -3.25, x'', -1, '2026-03-03 00:00:00', -3)`)
	queries := []string{
		`SELECT * FROM kv WHERE id = ?`,
		`SELECT r, id, d FROM kv WHERE ? = id`,
		`SELECT ts, tl, b, f, k FROM kv WHERE id <=> ?`,
		`SELECT r FROM kv WHERE id = ? LIMIT 0`,
		`SELECT r FROM kv WHERE id = ? LIMIT 1 OFFSET 1`,
		`SELECT r FROM kv WHERE id = ? LIMIT 5`,
		`SELECT x.r FROM kv AS x WHERE x.id = ?`,
		// Not the lookup shape: bound in full every time.
		`SELECT r FROM kv WHERE id = ? AND r = 'one'`,
		`SELECT r, id + 1 FROM kv WHERE id = ?`,
		`SELECT COUNT(*) FROM kv WHERE id = ?`,
	}
	args := []any{int64(1), 2, "3", 1.0, 1.5, nil, int64(99), "abc", time.Unix(0, 0), []byte("1"), true, int64(3)}
	for _, q := range queries {
		st := e.prepare(q)
		first := e.warmAndFresh(st, int64(1))
		for _, a := range args {
			e.warmAndFresh(st, a)
		}
		require.Equal(t, first, e.warmAndFresh(st, int64(1)))
	}
	// The lookup shapes kept their binding; the others did not.
	for q, kept := range map[string]bool{queries[0]: true, queries[3]: true, queries[7]: false, queries[8]: false} {
		st := e.prepare(q)
		_, err := st.QueryContext(e.ctx, named([]any{int64(1)}))
		require.NoError(t, err)
		require.NotNil(t, st.prepLookup, q)
		require.Equal(t, kept, st.prepLookup.tmpl != nil, q)
	}

	// An integer argument against a narrower key column.
	e.exec(`CREATE TABLE tk (k TINYINT, v STRING, PRIMARY KEY (k) NOT ENFORCED)`)
	e.exec(`INSERT INTO tk VALUES (1, 'one'), (127, 'max'), (-128, 'min')`)
	tk := e.prepare(`SELECT v FROM tk WHERE k = ?`)
	for _, a := range []any{1, 127, -128, 128, 300, -129, "127", 1.0, int64(1) << 40} {
		e.warmAndFresh(tk, a)
	}
	require.Contains(t, e.warmAndFresh(tk, 127), `"max"`)
	require.NotNil(t, tk.prepLookup.tmpl)

	// A string argument against a STRING key.
	e.exec(`CREATE TABLE sk (k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED)`)
	e.exec(`INSERT INTO sk VALUES ('a', 1), ('', 2), ('é', 3), ('10', 4)`)
	sk := e.prepare(`SELECT v FROM sk WHERE k = ?`)
	for _, a := range []any{"a", "", "é", "b", "a\xff", "\xff", []byte("a"), 10, int64(10), 1.5, nil, true} {
		e.warmAndFresh(sk, a)
	}
	require.Contains(t, e.warmAndFresh(sk, "é"), "3")
	require.NotNil(t, sk.prepLookup.tmpl)

	named := e.prepare(`SELECT r FROM kv WHERE id = :id`)
	for _, id := range []any{int64(1), int64(3), "1", nil} {
		require.Equal(t,
			render(e.prepare(named.text).QueryContext(e.ctx, []driver.NamedValue{{Name: "id", Ordinal: 1, Value: id}})),
			render(named.QueryContext(e.ctx, []driver.NamedValue{{Name: "id", Ordinal: 1, Value: id}})))
	}
}

func TestPreparedLookupPartitioned(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec(`CREATE TABLE p (reg STRING, id INT, v STRING, PRIMARY KEY (reg, id) NOT ENFORCED) PARTITIONED BY (reg) WITH ('bucket.num' = '2')`)
	e.exec(`INSERT INTO p VALUES ('eu', 1, 'a'), ('eu', 2, 'b'), ('us', 1, 'c')`)
	st := e.prepare(`SELECT v FROM p WHERE id = ? AND reg = ?`)
	for _, a := range [][]any{{1, "eu"}, {2, "eu"}, {1, "us"}, {2, "us"}, {1, "jp"}, {1, nil}, {1, "eu"}} {
		e.warmAndFresh(st, a...)
	}
	require.NotNil(t, st.prepLookup.tmpl)
	require.Contains(t, e.warmAndFresh(st, 1, "us"), `"c"`)
}

// A kept binding follows the catalog: a table created again with another
// schema, a dropped table, another current database, a transaction.
func TestPreparedLookupFollowsChanges(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec(`CREATE TABLE kv (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	e.exec(`INSERT INTO kv VALUES (1, 'old')`)
	st := e.prepare(`SELECT * FROM kv WHERE id = ?`)
	require.Contains(t, e.warmAndFresh(st, 1), `"old"`)

	e.exec(`DROP TABLE kv`)
	require.Contains(t, e.warmAndFresh(st, 1), "does not exist")
	e.exec(`CREATE TABLE kv (n INT, id BIGINT, v DOUBLE, PRIMARY KEY (id) NOT ENFORCED)`)
	e.exec(`INSERT INTO kv VALUES (5, 1, 2.5)`)
	got := e.warmAndFresh(st, 1)
	require.Contains(t, got, "[n id v]")
	require.Contains(t, got, "2.5")

	e.exec(`CREATE DATABASE d2`)
	e.exec(`CREATE TABLE d2.kv (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	e.exec(`INSERT INTO d2.kv VALUES (1, 'in d2')`)
	e.exec(`USE d2`)
	require.Contains(t, e.warmAndFresh(st, 1), `"in d2"`)
	e.exec(`USE fluss`)
	require.Contains(t, e.warmAndFresh(st, 1), "2.5")

	// In a transaction the lookup reads the transaction's view.
	tx, err := e.conn.BeginTx(e.ctx, driver.TxOptions{})
	require.NoError(t, err)
	other, err := e.ctr.Connect(e.ctx)
	require.NoError(t, err)
	defer other.Close()
	_, err = other.(*Conn).ExecContext(e.ctx, `INSERT INTO kv VALUES (6, 1, 9.5)`, nil)
	require.NoError(t, err)
	require.Contains(t, e.warmAndFresh(st, 1), "2.5", "the view is from before the other write")
	require.NoError(t, tx.Commit())
	require.Contains(t, e.warmAndFresh(st, 1), "9.5")
}

// insertRows reads a log table's rows in a stable order.
func (e *preparedEnv) rows(q string) string {
	e.t.Helper()
	return render(e.conn.QueryContext(e.ctx, q, nil))
}

func TestPreparedInsertAgreesWithBinding(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec(`CREATE TABLE lg (id BIGINT NOT NULL, ts TIMESTAMP(3), s STRING, c CHAR(2))`)
	warm := e.prepare(`INSERT INTO lg VALUES (?, ?, ?, ?)`)
	ts := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	cases := [][]any{
		{int64(1), ts, "a", "x"},
		{2, "2026-01-02 03:04:05.6", nil, nil},
		{nil, ts, "null id", "x"}, // NOT NULL
		{"x", ts, "bad id", "x"},  // not a number
		{int64(3), ts, "c too long", "xyz"},
		{int64(4), 1.5, "bad ts", "x"},
		{int64(5), ts, "e", "y"},
	}
	for _, args := range cases {
		_, werr := warm.ExecContext(e.ctx, named(args))
		_, ferr := e.prepare(warm.text).ExecContext(e.ctx, named(args))
		require.Equal(t, fmt.Sprint(ferr), fmt.Sprint(werr), "%v", args)
		require.NotNil(t, warm.prepInsert, "%v", args)
	}
	// Each good row twice (warm and fresh), nothing of the bad ones.
	got := e.rows(`SELECT id, s FROM lg ORDER BY id`)
	require.Equal(t, `[id s] BIGINT/int64/false STRING/sql.NullString/true`+
		` []driver.Value{1, "a"} []driver.Value{1, "a"} []driver.Value{2, driver.Value(nil)} []driver.Value{2, driver.Value(nil)}`+
		` []driver.Value{5, "e"} []driver.Value{5, "e"}`, got)

	// The table created again with another shape: the statement binds to it.
	e.exec(`DROP TABLE lg`)
	_, err := warm.ExecContext(e.ctx, named(cases[0]))
	require.ErrorContains(t, err, "does not exist")
	e.exec(`CREATE TABLE lg (id BIGINT, s STRING, ts TIMESTAMP(3), c CHAR(2), extra INT)`)
	_, werr := warm.ExecContext(e.ctx, named(cases[0]))
	_, ferr := e.prepare(warm.text).ExecContext(e.ctx, named(cases[0]))
	require.Error(t, werr)
	require.Equal(t, ferr.Error(), werr.Error())
	e.exec(`DROP TABLE lg`)
	e.exec(`CREATE TABLE lg (id BIGINT, ts TIMESTAMP(3), s STRING, c STRING)`)
	_, err = warm.ExecContext(e.ctx, named([]any{int64(7), ts, "new", "long is fine now"}))
	require.NoError(t, err)
	require.Contains(t, e.rows(`SELECT c FROM lg`), "long is fine now")
}

// Generated keys are filled into each execution's rows; the kept binding
// holds none.
func TestPreparedInsertAutoIncrement(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec("CREATE TABLE users (`id` bigint unsigned AUTO_INCREMENT, `name` varchar(64), PRIMARY KEY (`id`))")
	st := e.prepare(`INSERT INTO users (name) VALUES (?)`)
	var ids []int64
	for _, n := range []string{"a", "b", "c"} {
		res, err := st.ExecContext(e.ctx, named([]any{n}))
		require.NoError(t, err)
		id, err := res.LastInsertId()
		require.NoError(t, err)
		ids = append(ids, id)
	}
	require.Equal(t, []int64{ids[0], ids[0] + 1, ids[0] + 2}, ids)
	require.Nil(t, st.prepInsert.tmpl.Plan().Rows)
	got := e.rows(`SELECT id, name FROM users ORDER BY id`)
	require.Contains(t, got, fmt.Sprintf(`[]driver.Value{%d, "c"}`, ids[2]))
}

// Single-row INSERTs in a transaction are buffered as one write per run
// of rows into one table, and commit every row in order.
func TestPreparedInsertInTransaction(t *testing.T) {
	e := newPreparedEnv(t)
	e.exec(`CREATE TABLE lg (id BIGINT, s STRING) WITH ('bucket.num' = '3')`)
	e.exec(`CREATE TABLE other (id BIGINT)`)
	tx, err := e.conn.BeginTx(e.ctx, driver.TxOptions{})
	require.NoError(t, err)
	st := e.prepare(`INSERT INTO lg VALUES (?, ?)`)
	for i := range 100 {
		res, err := st.ExecContext(e.ctx, named([]any{i, fmt.Sprint("s", i)}))
		require.NoError(t, err)
		n, err := res.RowsAffected()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		if i == 50 {
			e.exec(`INSERT INTO other VALUES (1)`)
		}
	}
	require.Len(t, e.conn.tx.buf.Writes(), 3, "lg, other, lg")
	require.NoError(t, tx.Commit())
	got := e.rows(`SELECT COUNT(*), SUM(id), COUNT(DISTINCT s) FROM lg`)
	require.Contains(t, got, `{100, 4950, 100}`)
}
