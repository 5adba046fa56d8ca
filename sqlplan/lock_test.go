package sqlplan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestParseLockingClause: FOR UPDATE, FOR SHARE and LOCK IN SHARE MODE end
// a SELECT (also one with WITH, LIMIT or a ';') and print back; inside a
// query or after a set operation they are refused.
func TestParseLockingClause(t *testing.T) {
	for q, want := range map[string]LockMode{
		"SELECT a FROM t WHERE id = ? FOR UPDATE":              LockForUpdate,
		"select a from t for update;":                          LockForUpdate,
		"SELECT a FROM t ORDER BY a LIMIT 1 FOR UPDATE":        LockForUpdate,
		"SELECT a FROM t FOR SHARE":                            LockShare,
		"SELECT a FROM t LOCK IN SHARE MODE":                   LockShare,
		"WITH c AS (SELECT 1 AS x) SELECT x FROM c FOR UPDATE": LockForUpdate,
		"SELECT a FROM t":                                      LockNone,
		"SELECT a FROM `for` AS `update`":                      LockNone,
	} {
		st, err := Parse(q)
		require.NoError(t, err, q)
		sel, ok := st.(*Select)
		require.True(t, ok, q)
		require.Equal(t, want, sel.Lock, q)
		again, err := Parse(st.String())
		require.NoError(t, err, st.String())
		require.Equal(t, want, again.(*Select).Lock, st.String())
	}
	for q, msg := range map[string]string{
		"SELECT a FROM t UNION SELECT b FROM u FOR UPDATE":       "FOR UPDATE after a set operation",
		"SELECT a FROM (SELECT a FROM t FOR UPDATE) x":           "inside a query",
		"SELECT a FROM t WHERE a IN (SELECT b FROM u FOR SHARE)": "",
	} {
		_, err := Parse(q)
		require.Error(t, err, q)
		if msg != "" {
			require.ErrorIs(t, err, metadata.ErrUnsupported, q)
			require.ErrorContains(t, err, msg, q)
		}
	}
}

// TestParseSavepoint: the three savepoint statements, in MySQL's optional
// words, print back; a missing name is a syntax error.
func TestParseSavepoint(t *testing.T) {
	for q, want := range map[string]Savepoint{
		"SAVEPOINT sp1":                  {Kind: SavepointSet, Name: "sp1"},
		"savepoint `my point`;":          {Kind: SavepointSet, Name: "my point"},
		"ROLLBACK TO sp1":                {Kind: SavepointRollbackTo, Name: "sp1"},
		"ROLLBACK TO SAVEPOINT sp1":      {Kind: SavepointRollbackTo, Name: "sp1"},
		"ROLLBACK WORK TO SAVEPOINT sp1": {Kind: SavepointRollbackTo, Name: "sp1"},
		"RELEASE SAVEPOINT sp1":          {Kind: SavepointRelease, Name: "sp1"},
	} {
		st, err := Parse(q)
		require.NoError(t, err, q)
		require.Equal(t, &want, st, q)
		again, err := Parse(st.String())
		require.NoError(t, err, st.String())
		require.Equal(t, st, again)
		require.Zero(t, st.NumInput())
	}
	for _, q := range []string{"SAVEPOINT", "ROLLBACK", "ROLLBACK sp1", "RELEASE sp1", "RELEASE SAVEPOINT", "SAVEPOINT a b"} {
		_, err := Parse(q)
		require.ErrorIs(t, err, metadata.ErrSyntax, q)
	}
}
