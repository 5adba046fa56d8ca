package slt

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	_ "github.com/flusslite/fluss"
	"github.com/stretchr/testify/require"
)

// A script whose every record has a known outcome against fluss. Its
// refusals are forms fluss will always refuse (an unknown function, a row
// of the wrong width), so that the test does not change as fluss grows.
// The hash of 1, 2, 3 is md5sum's of "1\n2\n3\n".
const classified = `
statement ok
CREATE TABLE t (a INTEGER, b VARCHAR(10))

statement ok
INSERT INTO t VALUES (1, 'x'), (2, '')

query IT rowsort
SELECT a, b FROM t
----
1
x
2
(empty)

query I nosort
SELECT count(*) FROM t
----
3

statement error
INSERT INTO t VALUES (3, 'y')

statement error
INSERT INTO nowhere VALUES (1)

query I nosort
SELECT no_such_function(a) FROM t

query R nosort six
SELECT sum(a) FROM t
----
6.000

query R nosort six
SELECT 7
----
7.000

query I valuesort
SELECT a FROM t
----
3 values hashing to c0710d6b4f15dfa88f600b0e6b624077

statement ok
INSERT INTO t VALUES (1, 2, 3, 4)

query I nosort
SELECT count(*) FROM t
----
99

query I nosort
SELECT no_such_function(a) FROM t

query I nosort
SELECT max(a) FROM t
----
3
`

func TestRunClassifies(t *testing.T) {
	recs, err := Parse(strings.NewReader(classified))
	require.NoError(t, err)
	db, err := sql.Open("fluss", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	res := (&Runner{Timeout: 10 * time.Second}).Run(db, recs)

	require.Equal(t, 14, res.Records)
	got := map[int]Class{}
	for _, f := range res.Failures {
		got[f.Record.Line] = f.Class
	}
	require.Equal(t, map[int]Class{
		16: Wrong,         // count is 2, not 3
		21: ErrorExpected, // a good INSERT
		27: Refused,       // unknown function
		35: Wrong,         // passes its own result, differs from label six's
		45: Refused,       // too many values: the file is now tainted
		48: AfterRefused,  // wrong count, but after the refusal
		53: AfterRefused,  // refused, but after the refusal
	}, got)
	require.Equal(t, 7, res.Records-res.Passed)
	for _, f := range res.Failures {
		if f.Class == AfterRefused {
			require.Equal(t, res.Failures[4].Cause, f.Cause, "a consequence is grouped by the refusal it follows")
		}
	}
	require.NotContains(t, res.Failures[2].Cause, "no_such_function", "a cause does not name the object")
}

func TestTaints(t *testing.T) {
	for _, s := range []string{"CREATE INDEX i ON t(a)", "create unique index i on t(a)", "DROP INDEX i", "REINDEX t"} {
		require.False(t, taints(s), s)
	}
	for _, s := range []string{"CREATE TABLE t(a INT)", "INSERT INTO t SELECT * FROM u", "DROP TABLE t", "CREATE VIEW v AS SELECT 1"} {
		require.True(t, taints(s), s)
	}
}

func TestCause(t *testing.T) {
	require.Equal(t, `syntax error near "ALL"`, Cause(errors.New(`fluss: syntax error at line 1, column 8 near "ALL"`)))
	require.Equal(t, `syntax error near "VIEW"`, Cause(errors.New(`fluss: syntax error at line 1, column 8 near "VIEW": expected DATABASE or TABLE`)))
	require.Equal(t, "table _ does not exist", Cause(errors.New(`fluss: table "t9" does not exist`)))
	require.Equal(t, "not supported: JOIN", Cause(errors.New("fluss: not supported: JOIN\nmore")))
}

// stuck is a driver whose statements behave as their text says: "hang"
// never returns, ignoring its context, "panic" reports a recovered panic,
// anything else succeeds.
type stuck struct{ release chan struct{} }

func (d stuck) Open(string) (driver.Conn, error) { return stuckConn(d), nil }

type stuckConn stuck

func (c stuckConn) Prepare(q string) (driver.Stmt, error) { return stuckStmt{c, q}, nil }
func (stuckConn) Close() error                            { return nil }
func (stuckConn) Begin() (driver.Tx, error)               { return nil, errors.New("no transactions") }

type stuckStmt struct {
	c stuckConn
	q string
}

func (stuckStmt) Close() error  { return nil }
func (stuckStmt) NumInput() int { return 0 }
func (s stuckStmt) Exec([]driver.Value) (driver.Result, error) {
	switch s.q {
	case "hang":
		<-s.c.release
	case "panic":
		return nil, errors.New("panic reading the result: boom")
	}
	return driver.RowsAffected(0), nil
}
func (s stuckStmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("no queries")
}

func TestRunHangAndPanic(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	sql.Register("slt-stuck", stuck{release})
	db, err := sql.Open("slt-stuck", "")
	require.NoError(t, err)
	recs, err := Parse(strings.NewReader("statement ok\npanic\n\nstatement error\npanic\n\nstatement ok\nfine\n\nstatement ok\nhang\n\nstatement ok\nfine\n"))
	require.NoError(t, err)
	start := time.Now()
	res := (&Runner{Timeout: 100 * time.Millisecond}).Run(db, recs)
	require.Less(t, time.Since(start), 5*time.Second)

	require.True(t, res.Halted, "nothing more is sent to a database that hangs")
	require.Equal(t, 4, res.Records)
	require.Equal(t, 1, res.Passed)
	require.Len(t, res.Failures, 3)
	require.Equal(t, Panic, res.Failures[0].Class)
	require.Equal(t, Panic, res.Failures[1].Class, "a panic fails even where an error is expected")
	require.Equal(t, Hang, res.Failures[2].Class)
	require.Equal(t, 10, res.Failures[2].Record.Line)
}

func TestBoundedHonoursContext(t *testing.T) {
	r := &Runner{Timeout: 50 * time.Millisecond}
	done, hung := r.bounded(func(ctx context.Context) { <-ctx.Done() })
	require.True(t, done)
	require.True(t, hung, "a statement that only stops when cancelled took too long")
	done, hung = r.bounded(func(context.Context) {})
	require.True(t, done)
	require.False(t, hung)
}
