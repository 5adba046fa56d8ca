package sqlplan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestBindSubquery pins how subqueries bind: the inner query in its own
// scope, names it does not have resolved in the queries around it
// (innermost first) and collected as the correlation.
func TestBindSubquery(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string
	}{
		// Uncorrelated: no outer list.
		{"SELECT id FROM t WHERE i IN (SELECT x FROM db2.small)",
			"(i#2:INT IN [SELECT x FROM db2.small] where <nil>)"},
		{"SELECT id FROM t WHERE i NOT IN (SELECT x FROM db2.small WHERE y = 'a')",
			"(i#2:INT IN NOT [SELECT x FROM db2.small WHERE y = 'a'] where (y#1:STRING = 'a':STRING))"},
		// The same table under an alias: t.i is the outer row's.
		{"SELECT id FROM t WHERE i > (SELECT COUNT(*) FROM t AS x WHERE x.i < t.i)",
			"(SCALAR [SELECT COUNT(*) FROM t AS x WHERE x.i < t.i] where (x.i#2:INT < outer#0(i):INT) type BIGINT outer t.i#2:INT)"},
		// An unqualified name the inner table lacks is the outer one's.
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM db2.small WHERE x > tiny)",
			"(EXISTS [SELECT 1 FROM db2.small WHERE x > tiny] where (x#0:INT > outer#0(tiny):TINYINT) outer tiny#1:TINYINT)"},
		// Innermost first: i is the inner table's own column.
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS x WHERE i = 1)",
			"(EXISTS [SELECT 1 FROM t AS x WHERE i = 1] where (i#2:INT = 1:INT))"},
		// One slot per name as written, however often it is read.
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM db2.small WHERE x = t.i OR x > t.i OR x = i)",
			"(EXISTS [SELECT 1 FROM db2.small WHERE ((x = t.i OR x > t.i) OR x = i)] where (((x#0:INT = outer#0(i):INT) OR (x#0:INT > outer#0(i):INT)) OR (x#0:INT = outer#1(i):INT)) outer t.i#2:INT, i#2:INT)"},
		// Two levels: the middle query correlates with the outer column
		// the innermost one reads, and the innermost reads the middle's
		// slot (a key of its semi-join).
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM db2.small WHERE EXISTS (SELECT 1 FROM pk WHERE pk.w = t.i AND pk.v = small.y))",
			"(EXISTS [SELECT 1 FROM db2.small WHERE EXISTS (SELECT 1 FROM pk WHERE (pk.w = t.i AND pk.v = small.y))] " +
				"where (SEMI (outer#0(i):INT, small.y#1:STRING) [(w, v) of SELECT 1 FROM pk WHERE (pk.w = t.i AND pk.v = small.y)] where <nil>) outer t.i#2:INT)"},
		{"SELECT id FROM t WHERE i >= ALL (SELECT x FROM db2.small WHERE x IS NOT NULL)",
			"(i#2:INT >= ALL [SELECT x FROM db2.small WHERE x IS NOT NULL] where (x#0:INT IS NOT NULL))"},
		{"SELECT id FROM t WHERE i <> SOME (SELECT x FROM db2.small)",
			"(i#2:INT <> ANY [SELECT x FROM db2.small] where <nil>)"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			plan, err := bindUnoptimized(t, tc.sql)
			require.NoError(t, err)
			var sub Expr
			Walk(plan.Where, func(x Expr) bool {
				if s, ok := x.(*Subquery); ok && sub == nil {
					sub = s
				}
				return sub == nil
			})
			require.NotNil(t, sub)
			require.Equal(t, tc.want, dumpExpr(sub))
		})
	}
}

// TestBindSubqueryOutputs pins where a subquery may appear and what its
// outer query then reads: the columns of the correlation are read by the
// scan; a scalar subquery in the select list names its column as written.
func TestBindSubqueryOutputs(t *testing.T) {
	plan, err := bindSelect(t, "SELECT (SELECT MAX(x) FROM db2.small WHERE x < t.tiny), id FROM t "+
		"GROUP BY id, tiny HAVING (SELECT COUNT(*) FROM db2.small) > 0 ORDER BY (SELECT 1)")
	require.NoError(t, err)
	require.Equal(t, "(select MAX(x) from db2.small where x < t.tiny)", plan.Output[0].Name)
	require.Equal(t, []int{0, 1}, plan.Columns)
	require.Equal(t, metadata.IntType(), plan.Output[0].Expr.Type())
	require.IsType(t, &Subquery{}, plan.Having.(*Compare).L)
	require.IsType(t, &Subquery{}, plan.OrderBy[0].Expr)
}

func TestBindSubqueryErrors(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		sentinel error
		want     string
	}{
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM db2.small WHERE nope = 1)", metadata.ErrNotFound, "column nope does not exist in table db2.small"},
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM db2.small WHERE u.x = 1)", metadata.ErrNotFound, "table u of column u.x is not in FROM"},
		{"SELECT id FROM t WHERE EXISTS (SELECT 1 FROM nope)", metadata.ErrNotFound, "table fluss.nope does not exist"},
		{"SELECT id FROM t WHERE i IN (SELECT x, y FROM db2.small)", metadata.ErrInvalidValue, "subquery i IN (SELECT x, y FROM db2.small) returns 2 columns; one is needed here"},
		{"SELECT (SELECT * FROM db2.small) FROM t", metadata.ErrInvalidValue, "subquery (SELECT * FROM db2.small) returns 2 columns"},
		{"SELECT id FROM t WHERE dt IN (SELECT x FROM db2.small)", metadata.ErrUnsupported, "cannot compare dt (DATE) with x (INT)"},
		{"SELECT id FROM t WHERE EXISTS (SELECT /*+ OPTIONS('read.optimized'='true') */ 1 FROM db2.small)", metadata.ErrUnsupported, "an OPTIONS hint in a subquery is not supported"},
		{"SELECT (SELECT SUM(t.i) FROM db2.small) FROM t", metadata.ErrUnsupported, "aggregate SUM(i) of the enclosing query's columns inside a subquery is not supported"},
		// The outer query's alias hides its table's name, as in FROM.
		{"SELECT id FROM t AS a WHERE EXISTS (SELECT 1 FROM db2.small WHERE x = t.i)", metadata.ErrNotFound, "table t of column t.i is not in FROM"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bindSelect(t, tc.sql)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
}

// TestBindValues pins the binding of a correlated subquery for one outer
// row: the values are literals, converted to the inner column's type when
// nothing is lost, so that the inner query plans as if they were written
// there; a value that does not convert compares as it is.
func TestBindValues(t *testing.T) {
	plan, err := bindSelect(t, "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM pk WHERE pk.id = t.i AND pk.v = t.tiny)")
	require.NoError(t, err)
	sub := plan.Where.(*Subquery)
	require.True(t, sub.Correlated())
	cat := newCatalog()
	inner, err := sub.BindValues(context.Background(), cat, []any{int64(7), int64(8)})
	require.NoError(t, err)
	require.Equal(t, "((pk.id#0:INT = 7:INT) AND (pk.v#1:STRING = 8:TINYINT))", dumpExpr(inner.Where))
	key, residual, ok := PointLookup(inner)
	require.True(t, ok)
	require.Equal(t, int64(7), key[0])
	require.Len(t, residual, 1)

	inner, err = sub.BindValues(context.Background(), cat, []any{nil, int64(1)})
	require.NoError(t, err)
	require.Equal(t, "((pk.id#0:INT = NULL:INT) AND (pk.v#1:STRING = 1:TINYINT))", dumpExpr(inner.Where))

	_, err = sub.BindValues(context.Background(), cat, []any{int64(1)})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)

	str, err := bindSelect(t, "SELECT id, (SELECT x.id FROM t AS x WHERE x.i = t.name) FROM t")
	require.NoError(t, err)
	inner, err = str.Output[1].Expr.(*Subquery).BindValues(context.Background(), cat, []any{"x1"})
	require.NoError(t, err)
	require.Equal(t, "(x.i#2:INT = 'x1':STRING)", dumpExpr(inner.Where))
}

// TestSubqueryPlaceholders: the inner query's placeholders count with the
// statement's and bind from its arguments, also when bound again.
func TestSubqueryPlaceholders(t *testing.T) {
	st := mustParse(t, "SELECT id FROM t WHERE i IN (SELECT x FROM db2.small WHERE y = ? AND x > t.tiny) AND id = ?")
	require.Equal(t, 2, st.NumInput())
	plan, err := BindSelect(context.Background(), st.(*Select), newCatalog(), "fluss", pos("a", int64(3)))
	require.NoError(t, err)
	sub := Conjuncts(plan.Where)[0].(*Subquery)
	inner, err := sub.BindValues(context.Background(), newCatalog(), []any{int64(2)})
	require.NoError(t, err)
	require.Equal(t, "((y#1:STRING = 'a':STRING) AND (x#0:INT > 2:INT))", dumpExpr(inner.Where))
	_, err = BindSelect(context.Background(), st.(*Select), newCatalog(), "fluss", pos("a"))
	require.True(t, errors.Is(err, metadata.ErrInvalidValue), "%v", err)
}

// bindUnoptimized binds sql as BindSelect does but runs no optimizer
// rule: the plan as the binder and decorrelate leave it.
func bindUnoptimized(t *testing.T, sql string) (*SelectPlan, error) {
	t.Helper()
	s, err := expandNames(context.Background(), mustParse(t, sql).(*Select), newCatalog(), "fluss")
	if err != nil {
		return nil, err
	}
	return bindSelectRules(context.Background(), s, newCatalog(), "fluss", nil, nil)
}

// TestDecorrelate pins the rewrite of a WHERE conjunct [NOT] EXISTS
// correlated by one equality into IN over the inner key, and the forms it
// leaves alone.
func TestDecorrelate(t *testing.T) {
	for _, tc := range []struct {
		where string
		want  string
	}{
		{"EXISTS (SELECT 1 FROM db2.small WHERE small.x = t.i AND y <> 'z')",
			"(t.i#2:INT IN [x of SELECT 1 FROM db2.small WHERE (small.x = t.i AND y <> 'z')] where (y#1:STRING <> 'z':STRING))"},
		{"id > 0 AND EXISTS (SELECT y FROM db2.small WHERE t.tiny = x ORDER BY y)",
			"((id#0:BIGINT > 0:BIGINT) AND (t.tiny#1:TINYINT IN [x of SELECT y FROM db2.small WHERE t.tiny = x ORDER BY y] where <nil>))"},
		// NOT EXISTS is the anti-join on the key, which a NULL outer
		// value passes: it matches no key.
		{"NOT EXISTS (SELECT 1 FROM db2.small WHERE small.x = t.i)",
			"(SEMI (t.i#2:INT) NOT [(x) of SELECT 1 FROM db2.small WHERE small.x = t.i] where <nil>)"},
		// Where the key's types hash apart, the anti-join is NOT IN over
		// the keys that are not NULL.
		{"NOT EXISTS (SELECT 1 FROM db2.small WHERE small.x = t.price)",
			"((t.price#6:DOUBLE IS NULL) OR (t.price#6:DOUBLE IN NOT [x of SELECT 1 FROM db2.small WHERE small.x = t.price] where (small.x#0:INT IS NOT NULL)))"},
		// Left alone: an aggregate (always one row), LIMIT, two
		// correlations, a correlation that is no equality or is read in
		// the output, EXISTS that is not a conjunct of the WHERE.
		{"EXISTS (SELECT COUNT(*) FROM db2.small WHERE x = t.i)", "(EXISTS"},
		{"EXISTS (SELECT 1 FROM db2.small WHERE x = t.i LIMIT 1)", "(EXISTS"},
		// Two equalities, and IN correlated by one: a semi-join on the
		// tuple of keys, for types whose equal values are equal as values.
		{"EXISTS (SELECT 1 FROM db2.small WHERE x = t.i AND y = t.name)",
			"(SEMI (t.i#2:INT, t.Name#3:STRING) [(x, y) of SELECT 1 FROM db2.small WHERE (x = t.i AND y = t.name)] where <nil>)"},
		{"NOT EXISTS (SELECT 1 FROM db2.small WHERE x = t.i AND t.name = y AND x > 2)",
			"(SEMI (t.i#2:INT, t.Name#3:STRING) NOT [(x, y) of SELECT 1 FROM db2.small WHERE ((x = t.i AND t.name = y) AND x > 2)] where (x#0:INT > 2:INT))"},
		{"tiny IN (SELECT x FROM db2.small WHERE y = t.name)",
			"(SEMI (tiny#1:TINYINT, t.Name#3:STRING) [(x, y) of SELECT x FROM db2.small WHERE y = t.name] where <nil>)"},
		{"tiny NOT IN (SELECT x FROM db2.small WHERE y = t.name)", "(tiny#1:TINYINT IN NOT"},
		{"price IN (SELECT x FROM db2.small WHERE y = t.name)", "(price#6:DOUBLE IN [SELECT"},
		{"EXISTS (SELECT 1 FROM db2.small WHERE x = t.price AND y = t.name)", "(EXISTS"},
		{"EXISTS (SELECT 1 FROM db2.small WHERE x < t.i)", "(EXISTS"},
		{"EXISTS (SELECT t.name FROM db2.small WHERE x = t.i)", "(EXISTS"},
		{"EXISTS (SELECT 1 FROM db2.small WHERE x = t.i OR y = 'a')", "(EXISTS"},
		{"id = 1 OR EXISTS (SELECT 1 FROM db2.small WHERE x = t.i)", "((id#0:BIGINT = 1:BIGINT) OR (EXISTS"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			plan, err := bindUnoptimized(t, "SELECT id FROM t WHERE "+tc.where)
			require.NoError(t, err)
			got := dumpExpr(plan.Where)
			require.True(t, strings.HasPrefix(got, tc.want), "got %s", got)
		})
	}
}
