package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		in    string
		stmts []string
		rest  string
	}{
		{in: "SELECT 1;", stmts: []string{"SELECT 1"}},
		{in: "SELECT 1; SELECT 2;\n", stmts: []string{"SELECT 1", "SELECT 2"}, rest: "\n"},
		{in: "SELECT 1", rest: "SELECT 1"},
		{in: "SELECT\n  1;\nSELECT", stmts: []string{"SELECT\n  1"}, rest: "\nSELECT"},
		// Semicolons that end nothing.
		{in: "SELECT ';';", stmts: []string{"SELECT ';'"}},
		{in: "SELECT 'it''s;';", stmts: []string{"SELECT 'it''s;'"}},
		{in: `SELECT 'a\';b';`, stmts: []string{`SELECT 'a\';b'`}},
		{in: `SELECT "x;y";`, stmts: []string{`SELECT "x;y"`}},
		{in: "SELECT a AS `b;c`;", stmts: []string{"SELECT a AS `b;c`"}},
		{in: "SELECT a AS `b``;`;", stmts: []string{"SELECT a AS `b``;`"}},
		{in: "SELECT 1 -- one; two\n;", stmts: []string{"SELECT 1 -- one; two"}},
		{in: "SELECT /* ; */ 1;", stmts: []string{"SELECT /* ; */ 1"}},
		{in: "SELECT /*+ OPTIONS('a'=';') */ 1;", stmts: []string{"SELECT /*+ OPTIONS('a'=';') */ 1"}},
		// Unfinished: the rest holds the open literal or comment.
		{in: "SELECT 'abc;", rest: "SELECT 'abc;"},
		{in: "SELECT 1 /* ;", rest: "SELECT 1 /* ;"},
		{in: "SELECT 1; SELECT 'x\n;", stmts: []string{"SELECT 1"}, rest: " SELECT 'x\n;"},
		// Empty statements and comments alone are dropped.
		{in: ";;  ; -- nothing\n;/* nor this */;", stmts: nil},
		{in: "-- SELECT 1;\nSELECT 2;", stmts: []string{"-- SELECT 1;\nSELECT 2"}},
	} {
		stmts, rest := splitStatements(tc.in)
		require.Equal(t, tc.stmts, stmts, "%q", tc.in)
		require.Equal(t, tc.rest, rest, "%q", tc.in)
	}
}

func TestFirstKeyword(t *testing.T) {
	for in, want := range map[string]string{
		"select 1":                    "SELECT",
		"  -- c\n /* d */ explain x":  "EXPLAIN",
		"/*+ hint */ select":          "",
		"SHOW TABLES":                 "SHOW",
		"insert into t":               "INSERT",
		"(SELECT 1)":                  "SELECT",
		"( (select 1) union select 2": "SELECT",
		"":                            "",
	} {
		require.Equal(t, want, firstKeyword(in), "%q", in)
	}
	require.True(t, returnsRows("DESCRIBE"))
	require.True(t, returnsRows("CALL"))
	require.False(t, returnsRows("INSERT"))
	require.False(t, returnsRows("CREATE"))
}

func TestLineAtAndCaret(t *testing.T) {
	text := "SELECT a,\n\tbb FROM t"
	line, col, l := lineAt(text, 11)
	require.Equal(t, 2, line)
	require.Equal(t, 2, col)
	require.Equal(t, "\tbb FROM t", l)
	require.Equal(t, "\t", caretPad(l[:col-1]), "a tab stays a tab so that the caret lines up")
	line, col, l = lineAt("SELECT 'é', x", 13)
	require.Equal(t, 1, line)
	require.Equal(t, 14, col)
	require.Equal(t, "            ", caretPad(l[:col-1]), "é is two bytes but one column")
	require.Equal(t, "  ", caretPad("日"), "wide characters take two columns")
	_, _, l = lineAt("a\nb", 3)
	require.Equal(t, "b", l, "a position at the end points after the last line")
}
