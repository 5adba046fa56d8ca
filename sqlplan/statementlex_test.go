package sqlplan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The lexer switches to MySQL's string rules where the text the query
// parser reads begins, so each part of a statement lexes as its grammar
// says, in one pass.
func TestLexStatementModes(t *testing.T) {
	strs := func(sql string) []string {
		toks, err := lexStatement(sql)
		require.NoError(t, err, sql)
		var out []string
		for _, tk := range toks {
			if tk.kind == tokString {
				out = append(out, tk.text)
			}
		}
		return out
	}
	// DDL: a backslash is literal, a doubled quote is a quote.
	require.Equal(t, []string{`a\b`, `it's`}, strs(`CREATE TABLE t (a INT COMMENT 'a\b') COMMENT 'it''s'`))
	// Queries: a backslash escapes.
	require.Equal(t, []string{`it's`}, strs(`SELECT 'it\'s'`))
	require.Equal(t, []string{`it's`}, strs(`(SELECT 'it\'s')`))
	require.Equal(t, []string{`it's`}, strs(`EXPLAIN SELECT 'it\'s'`))
	// CREATE TABLE ... AS: the options lex as DDL, the query as a query.
	require.Equal(t, []string{`a\b`, `c`, `it's`}, strs(`CREATE TABLE t WITH ('a\b' = 'c') AS SELECT 'it\'s'`))
	// An AS inside the parentheses (a computed column) is no query.
	require.Equal(t, []string{`a\b`}, strs(`CREATE TABLE t (a INT, b AS a + 1 COMMENT 'a\b')`))
	// CREATE [OR REPLACE] VIEW: a query after the header.
	require.Equal(t, []string{`it's`}, strs(`CREATE VIEW v AS SELECT 'it\'s'`))
	require.Equal(t, []string{`it's`}, strs(`CREATE OR REPLACE VIEW v AS SELECT 'it\'s'`))
	require.Equal(t, []string{`it's`}, strs(`WITH a AS (SELECT 'it\'s') SELECT * FROM a`))
}

func TestLexStatementNesting(t *testing.T) {
	deep := "SELECT " + strings.Repeat("(", MaxNesting+1) + "1" + strings.Repeat(")", MaxNesting+1)
	_, err := lexStatement(deep)
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	require.Equal(t, len("SELECT ")+MaxNesting, se.Pos)
	require.Contains(t, se.Msg, "nested more than")

	ok := "SELECT " + strings.Repeat("(", MaxNesting) + "1" + strings.Repeat(")", MaxNesting)
	_, err = lexStatement(ok)
	require.NoError(t, err)

	// A lexing error before the depth is exceeded is the error reported.
	_, err = lexStatement("SELECT 'open" + strings.Repeat("(", MaxNesting+1))
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Msg, "unterminated string")
}
