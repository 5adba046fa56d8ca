package fluss_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// Every error about a place in the statement carries its byte position
// and says where it is as a line and column.
func TestErrorsNameTheirPosition(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE t (a INT, b STRING, c DOUBLE)`)
	for _, tc := range []struct {
		sql  string
		is   error
		pos  int
		text string
	}{
		{"SELECT amout FROM t", fluss.ErrNotFound, 7, "column amout does not exist in table fluss.t at line 1, column 8"},
		{"SELECT a,\n  nosuch(b) FROM t", fluss.ErrUnsupported, 12, "function NOSUCH is not supported at line 2, column 3"},
		{"SELECT a FROM t WHERE SUM(a) > 1", fluss.ErrUnsupported, 22, "aggregate function SUM is not allowed in WHERE at line 1, column 23"},
		{"SELECT UPPER(a, b) FROM t", fluss.ErrInvalid, 7, "UPPER takes 1 argument(s), not 2 at line 1, column 8"},
		{"SELECT c, b + 1 FROM t", fluss.ErrUnsupported, 10, "arithmetic on STRING in (b + 1) at line 1, column 11"},
		{"SELECT a FROM t GROUP BY b", fluss.ErrUnsupported, 7, "column a must appear in GROUP BY or in an aggregate function"},
		{"SELECT * FROM\n\tnosuch", fluss.ErrNotFound, 15, "table fluss.nosuch does not exist at line 2, column 2"},
		{"SELECT a FROM t WHERE c LIKE 'x%'", fluss.ErrUnsupported, 22, "LIKE compares strings, not DOUBLE (c) at line 1, column 23"},
		{"SELECT CAST(b AS BLOB) FROM t", fluss.ErrSyntax, 17, `syntax error at line 1, column 18 near "BLOB"`},
		{"SELECT a FROM t HAVING zz > 1", fluss.ErrNotFound, 23, "at line 1, column 24"},
		{"SELECT a FROM t WHERE", fluss.ErrSyntax, 21, "syntax error at line 1, column 22: unexpected end of statement"},
		{"SELECT a,\n  COUNT(ALL DISTINCT b) FROM t", fluss.ErrSyntax, 22, `syntax error at line 2, column 13 near "DISTINCT": ALL and DISTINCT cannot both be given`},
		{"SELECT ALL a, nosuch FROM t", fluss.ErrNotFound, 14, "column nosuch does not exist in table fluss.t at line 1, column 15"},
		{"SELECT ALL a FROM t WHERE", fluss.ErrSyntax, 25, "syntax error at line 1, column 26: unexpected end of statement"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			rows, err := db.Query(tc.sql)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				require.NoError(t, rows.Close())
			}
			require.ErrorIs(t, err, tc.is)
			var fe *fluss.Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.pos, fe.Pos)
			require.Contains(t, err.Error(), tc.text)
			require.Contains(t, err.Error(), "at line")
		})
	}
}
