package slt

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseRecords(t *testing.T) {
	script := `# a comment
hash-threshold 4

statement ok
CREATE TABLE t (a INT,
  b STRING)

skipif mysql
statement ok
INSERT INTO t VALUES (1, 'x')

onlyif mysql # fluss runs MySQL's records
statement error
INSERT INTO nowhere VALUES (1)

onlyif postgresql
query I nosort
SELECT 1

query IT rowsort lbl
SELECT a, b FROM t
----
1 x
2
(empty)

query R valuesort
SELECT a FROM t
----
9 values hashing to 0123456789abcdef0123456789abcdef

query I nosort
SELECT a FROM t WHERE a > 5

onlyif mysql
halt
`
	recs, err := Parse(strings.NewReader(script))
	require.NoError(t, err)
	require.Len(t, recs, 9)

	require.Equal(t, HashThreshold, recs[0].Kind)
	require.Equal(t, 4, recs[0].Threshold)

	require.Equal(t, StatementOK, recs[1].Kind)
	require.Equal(t, "CREATE TABLE t (a INT,\n  b STRING)", recs[1].SQL)
	require.Equal(t, 4, recs[1].Line)
	require.False(t, recs[1].Skip)

	require.True(t, recs[2].Skip, "skipif mysql excludes fluss")
	require.Equal(t, 8, recs[2].Line, "a record's line is its first condition's")

	require.Equal(t, StatementError, recs[3].Kind)
	require.False(t, recs[3].Skip, "onlyif mysql selects fluss, whatever follows the name")

	require.True(t, recs[4].Skip, "onlyif another database excludes fluss")

	q := recs[5]
	require.Equal(t, Query, q.Kind)
	require.Equal(t, "IT", q.Types)
	require.Equal(t, RowSort, q.Sort)
	require.Equal(t, "lbl", q.Label)
	require.Equal(t, "SELECT a, b FROM t", q.SQL)
	require.Equal(t, []string{"1", "x", "2", "(empty)"}, q.Expected, "values, not lines")
	require.False(t, q.Hashed())

	h := recs[6]
	require.Equal(t, ValueSort, h.Sort)
	require.True(t, h.Hashed())
	require.Equal(t, 9, h.HashCount)
	require.Equal(t, "0123456789abcdef0123456789abcdef", h.Hash)

	require.Equal(t, []string{}, recs[7].Expected, "a query without ---- expects no rows")
	require.False(t, recs[7].Hashed())

	require.Equal(t, Halt, recs[8].Kind)
	require.False(t, recs[8].Skip)
}

func TestParseHalt(t *testing.T) {
	recs, err := Parse(strings.NewReader("onlyif mssql\nhalt\n\nonlyif mysql\nhalt\n\nstatement ok\nSELECT 1\n"))
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, Halt, recs[0].Kind)
	require.True(t, recs[0].Skip)
	require.Equal(t, Halt, recs[1].Kind)
	require.False(t, recs[1].Skip)
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"statement maybe\nSELECT 1\n", "line 1: statement \"maybe\""},
		{"\n\nquery X nosort\nSELECT 1\n", "line 3: unknown column type"},
		{"query I sideways\nSELECT 1\n", "line 1: unknown sort mode"},
		{"query I\nSELECT 1\n", "line 1: query wants types and a sort mode"},
		{"loop i 1 3\n", "line 1: unknown record \"loop\""},
		{"skipif mysql\n\nstatement ok\nSELECT 1\n", "line 1: conditions without a record"},
		{"statement ok\n\n", "line 1: record without SQL"},
		{"hash-threshold many\n", "line 1: bad hash-threshold"},
		{"skipif\nstatement ok\nSELECT 1\n", "line 1: skipif names no database"},
	} {
		_, err := Parse(strings.NewReader(tc.script))
		require.ErrorContains(t, err, tc.want, tc.script)
	}
}

func TestParseHashLineNeedsAHash(t *testing.T) {
	// Text that only looks like a hash line is compared as values.
	recs, err := Parse(strings.NewReader("query T nosort\nSELECT 1\n----\n3 values hashing to nothing\n"))
	require.NoError(t, err)
	require.False(t, recs[0].Hashed())
	require.Equal(t, []string{"3", "values", "hashing", "to", "nothing"}, recs[0].Expected)
}
