package sqlplan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// fakeCatalog is an in-memory Catalog.
type fakeCatalog map[metadata.TablePath]metadata.TableInfo

func (c fakeCatalog) TableInfo(_ context.Context, p metadata.TablePath) (metadata.TableInfo, error) {
	if info, ok := c[p]; ok {
		return info, nil
	}
	return metadata.TableInfo{}, fmt.Errorf("table %s: %w", p, metadata.ErrNotFound)
}

var _ Catalog = fakeCatalog(nil)

func col(name string, t metadata.DataType) metadata.Column {
	return metadata.Column{Name: name, Type: t}
}

func newCatalog() fakeCatalog {
	t := metadata.TableInfo{
		Path: metadata.TablePath{Database: "fluss", Table: "t"},
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "id", Type: metadata.BigIntType(), NotNull: true},
			col("tiny", metadata.TinyIntType()),
			col("i", metadata.IntType()),
			col("Name", metadata.StringType()),
			col("c3", metadata.CharType(3)),
			col("amount", metadata.DecimalType(10, 2)),
			col("price", metadata.DoubleType()),
			col("f", metadata.FloatType()),
			col("dt", metadata.DateType()),
			col("ts", metadata.TimestampType(3)),
			col("ltz", metadata.TimestampLTZType(3)),
			col("tm", metadata.TimeType(0)),
			col("flag", metadata.BooleanType()),
			col("b", metadata.BytesType()),
			col("bin", metadata.BinaryType(2)),
			col("arr", metadata.ArrayType(metadata.IntType())),
			col("m", metadata.MapType(metadata.StringType(), metadata.IntType())),
			col("r", metadata.RowType(metadata.Field{Name: "a", Type: metadata.IntType()}, metadata.Field{Name: "b", Type: metadata.StringType()})),
		}},
	}
	pk := metadata.TableInfo{
		Path: metadata.TablePath{Database: "fluss", Table: "pk"},
		Schema: metadata.Schema{Columns: []metadata.Column{
			{Name: "id", Type: metadata.IntType(), NotNull: true},
			{Name: "v", Type: metadata.StringType(), NotNull: true},
			col("w", metadata.IntType()),
		}, PrimaryKey: []string{"id"}},
	}
	other := metadata.TableInfo{
		Path:   metadata.TablePath{Database: "db2", Table: "small"},
		Schema: metadata.Schema{Columns: []metadata.Column{col("x", metadata.IntType()), col("y", metadata.StringType())}},
	}
	return fakeCatalog{t.Path: t, pk.Path: pk, other.Path: other}
}

func mustParse(t *testing.T, sql string) Statement {
	t.Helper()
	st, err := Parse(sql)
	require.NoError(t, err, sql)
	return st
}

func bindSelect(t *testing.T, sql string, args ...Arg) (*SelectPlan, error) {
	t.Helper()
	st := mustParse(t, sql)
	if e, ok := st.(*Explain); ok {
		st = e.Select
	}
	return BindSelect(context.Background(), st.(*Select), newCatalog(), "fluss", args)
}

func pos(vs ...any) []Arg {
	args := make([]Arg, len(vs))
	for i, v := range vs {
		args[i] = Arg{Ordinal: i + 1, Value: v}
	}
	return args
}

// TestBindWhere pins how WHERE binds: column resolution, literal
// coercion to the column type when nothing is lost, placeholders.
func TestBindWhere(t *testing.T) {
	for _, tc := range []struct {
		where string
		args  []Arg
		want  string
	}{
		// Column names resolve case-insensitively to the schema's spelling.
		{"NAME = 'x'", nil, "(Name#3:STRING = 'x':STRING)"},
		{"t.id = 1", nil, "(t.id#0:BIGINT = 1:BIGINT)"},
		{"fluss.t.id = 1", nil, "(fluss.t.id#0:BIGINT = 1:BIGINT)"},
		// Integer literals take an integer column's type when they fit...
		{"tiny = 100", nil, "(tiny#1:TINYINT = 100:TINYINT)"},
		{"i = -5", nil, "(i#2:INT = -5:INT)"},
		{"1 < i", nil, "(1:INT < i#2:INT)"},
		// ...and stay BIGINT when they do not: exact comparison, no match, no error.
		{"tiny = 300", nil, "(tiny#1:TINYINT = 300:BIGINT)"},
		{"i = 99999999999", nil, "(i#2:INT = 99999999999:BIGINT)"},
		// A decimal literal against an integer column stays DECIMAL (2.5, not 2).
		{"i > 2.5", nil, "(i#2:INT > 2.5:DECIMAL(2, 1))"},
		// DECIMAL columns take literals that fit without rounding.
		{"amount = 12", nil, "(amount#5:DECIMAL(10, 2) = 12.00:DECIMAL(10, 2))"},
		{"amount = 1.5", nil, "(amount#5:DECIMAL(10, 2) = 1.50:DECIMAL(10, 2))"},
		{"amount = 1.505", nil, "(amount#5:DECIMAL(10, 2) = 1.505:DECIMAL(4, 3))"},
		{"amount = '7.25'", nil, "(amount#5:DECIMAL(10, 2) = 7.25:DECIMAL(10, 2))"},
		{"amount > 1e2", nil, "(amount#5:DECIMAL(10, 2) > 100:DOUBLE)"},
		// Floating columns take numbers as floats; FLOAT rounds to float32 like the column.
		{"price >= 10", nil, "(price#6:DOUBLE >= 10:DOUBLE)"},
		{"f = 0.1", nil, "(f#7:FLOAT = 0.1:FLOAT)"},
		// Strings are parsed as dates, timestamps and times.
		{"dt = '2026-01-02'", nil, "(dt#8:DATE = '2026-01-02':DATE)"},
		{"dt BETWEEN '2026-01-01' AND '2026-01-31'", nil, "(dt#8:DATE BETWEEN '2026-01-01':DATE AND '2026-01-31':DATE)"},
		{"dt IN ('2026-01-01', '2026-01-02')", nil, "(dt#8:DATE IN ('2026-01-01':DATE, '2026-01-02':DATE))"},
		{"ts > '2026-01-02 10:00:00.123456'", nil, "(ts#9:TIMESTAMP(3) > '2026-01-02 10:00:00.123456000':TIMESTAMP(9))"},
		{"tm < '12:30'", nil, "(tm#11:TIME(0) < '12:30:00.000000000':TIME(9))"},
		// CHAR(n) takes strings that fit; longer ones stay STRING and never match.
		{"c3 = 'abc'", nil, "(c3#4:CHAR(3) = 'abc':CHAR(3))"},
		{"c3 = 'abcd'", nil, "(c3#4:CHAR(3) = 'abcd':STRING)"},
		{"b = 'xy'", nil, "(b#13:BYTES = X'7879':BYTES)"},
		{"bin = X'0102'", nil, "(bin#14:BINARY(2) = X'0102':BINARY(2))"},
		{"flag = 1", nil, "(flag#12:BOOLEAN = TRUE:BOOLEAN)"},
		{"flag", nil, "flag#12:BOOLEAN"},
		{"name LIKE 'ab%' ESCAPE '!'", nil, "(Name#3:STRING LIKE 'ab%':STRING ESCAPE !)"},
		{"name IS NOT NULL AND NOT (i IS NULL)", nil, "((Name#3:STRING IS NOT NULL) AND (NOT (i#2:INT IS NULL)))"},
		{"i = NULL OR i <=> NULL", nil, "((i#2:INT = NULL) OR (i#2:INT <=> NULL))"},
		{"(i + 1) * 2 > amount", nil, "(((i#2:INT + 1:BIGINT):BIGINT * 2:BIGINT):BIGINT > amount#5:DECIMAL(10, 2))"},
		{"CAST('2026-01-05' AS DATE) = dt", nil, "('2026-01-05':DATE = dt#8:DATE)"},
		{"CASE WHEN i > 1 THEN 'a' ELSE NULL END = 'a'", nil, "((CASE WHEN (i#2:INT > 1:INT) THEN 'a':STRING ELSE NULL END):STRING = 'a':STRING)"},
		{"-i < 0", nil, "((-i#2:INT) < 0:INT)"},
		// Placeholders become literals of the argument, then coerce like literals.
		{"tiny = ? AND name = ?", pos(int64(7), "bob"), "((tiny#1:TINYINT = 7:TINYINT) AND (Name#3:STRING = 'bob':STRING))"},
		{"tiny = ?", pos(300), "(tiny#1:TINYINT = 300:BIGINT)"},
		{"dt = ?", pos("2026-03-04"), "(dt#8:DATE = '2026-03-04':DATE)"},
		{"ts = ?", pos(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))), "(ts#9:TIMESTAMP(3) = '2026-01-02 03:04:05.000000000':TIMESTAMP(9))"},
		{"ltz = ?", pos(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))), "(ltz#10:TIMESTAMP_LTZ(3) = '2026-01-02 02:04:05.000000000':TIMESTAMP_LTZ(9))"},
		{"amount > ?", pos(2.5), "(amount#5:DECIMAL(10, 2) > 2.5:DOUBLE)"},
		{"id IN (?, ?)", pos(int32(1), uint8(2)), "(id#0:BIGINT IN (1:BIGINT, 2:BIGINT))"},
		{"arr = ?", pos([]int{1, 2}), "(arr#15:ARRAY<INT> = '[1, 2]':ARRAY<INT>)"},
		{"i = $2 AND tiny = $1", pos(1, 2), "((i#2:INT = 2:INT) AND (tiny#1:TINYINT = 1:TINYINT))"},
		{"i = :x AND tiny = :x", []Arg{{Ordinal: 1, Name: "x", Value: 3}}, "((i#2:INT = 3:INT) AND (tiny#1:TINYINT = 3:TINYINT))"},
		{"i = ?", pos(nil), "(i#2:INT = NULL)"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			plan, err := bindSelect(t, "SELECT id FROM t WHERE "+tc.where, tc.args...)
			require.NoError(t, err)
			require.Equal(t, tc.want, dumpExpr(plan.Where))
		})
	}
}

// TestBindFloatLiteral checks that a literal compared with a FLOAT column
// is rounded to float32 as the column's values are, so that f = 0.1 finds
// a stored 0.1.
func TestBindFloatLiteral(t *testing.T) {
	plan, err := bindSelect(t, "SELECT id FROM t WHERE f = 0.1")
	require.NoError(t, err)
	require.Equal(t, float64(float32(0.1)), plan.Where.(*Compare).R.(*Literal).Value)
}

// TestBindErrors pins the error text and sentinel of each binding error.
func TestBindErrors(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		args     []Arg
		sentinel error
		want     string
	}{
		{"SELECT a FROM nope", nil, metadata.ErrNotFound, "table fluss.nope does not exist"},
		{"SELECT a FROM db2.nope", nil, metadata.ErrNotFound, "table db2.nope does not exist"},
		{"SELECT nope FROM t", nil, metadata.ErrNotFound, "column nope does not exist in table fluss.t"},
		{"SELECT id FROM t WHERE zz = 1", nil, metadata.ErrNotFound, "column zz does not exist in table fluss.t"},
		{"SELECT u.id FROM t", nil, metadata.ErrNotFound, "table u of column u.id is not in FROM"},
		{"SELECT t.id FROM t AS x", nil, metadata.ErrNotFound, "table t of column t.id is not in FROM"},
		{"SELECT u.* FROM t", nil, metadata.ErrNotFound, "table u in u.* is not in FROM"},
		{"SELECT a", nil, metadata.ErrNotFound, "column a does not exist (the query reads no table)"},
		{"SELECT id FROM t WHERE dt = '2026-13-45'", nil, metadata.ErrInvalidValue, "cannot convert '2026-13-45' to DATE for column dt"},
		{"SELECT id FROM t WHERE ts < 'yesterday'", nil, metadata.ErrInvalidValue, "cannot convert 'yesterday' to TIMESTAMP(3) for column ts"},
		{"SELECT id FROM t WHERE dt = ?", pos("soon"), metadata.ErrInvalidValue, "cannot convert 'soon' to DATE for column dt"},
		{"SELECT id FROM t WHERE amount = 'lots'", nil, metadata.ErrInvalidValue, "cannot convert 'lots' to DECIMAL(10, 2) for column amount"},
		{"SELECT id FROM t WHERE i = 'x1'", nil, metadata.ErrInvalidValue, "cannot convert 'x1' to INT for column i"},
		{"SELECT id FROM t WHERE arr = ?", pos("no"), metadata.ErrInvalidValue, "cannot convert 'no' to ARRAY<INT> for column arr"},
		{"SELECT id FROM t WHERE dt = 5", nil, metadata.ErrUnsupported, "cannot compare dt (DATE) with 5 (BIGINT)"},
		{"SELECT id FROM t WHERE name = X'05'", nil, metadata.ErrUnsupported, "cannot compare Name (STRING) with X'05' (BYTES)"},
		{"SELECT id FROM t WHERE i", nil, metadata.ErrUnsupported, "WHERE needs a BOOLEAN condition, not INT (i)"},
		{"SELECT id FROM t WHERE i AND flag", nil, metadata.ErrUnsupported, "AND needs a BOOLEAN condition, not INT (i)"},
		{"SELECT id FROM t WHERE i LIKE 'a%'", nil, metadata.ErrUnsupported, "LIKE compares strings, not INT (i)"},
		{"SELECT name + 1 FROM t", nil, metadata.ErrUnsupported, "arithmetic on STRING"},
		{"SELECT id FROM t WHERE COUNT(*) > 1", nil, metadata.ErrUnsupported, "aggregate function COUNT is not allowed in WHERE"},
		{"SELECT SUM(MAX(i)) FROM t", nil, metadata.ErrUnsupported, "aggregate function MAX inside another aggregate"},
		{"SELECT frobnicate(i) FROM t", nil, metadata.ErrUnsupported, "function FROBNICATE is not supported"},
		{"SELECT id FROM t WHERE i = ?", nil, metadata.ErrInvalidValue, "no argument for placeholder $1 (0 given)"},
		{"SELECT id FROM t WHERE i = :who", pos(1), metadata.ErrInvalidValue, "no argument for placeholder :who"},
		{"SELECT id FROM t LIMIT ?", pos(-1), metadata.ErrInvalidValue, "LIMIT must be a non-negative integer, not -1"},
		{"SELECT id FROM t LIMIT ?", pos("ten"), metadata.ErrInvalidValue, "LIMIT must be a non-negative integer, not 'ten'"},
		{"SELECT id FROM t ORDER BY 3", nil, metadata.ErrNotFound, "ORDER BY position 3 is not in the select list (1 to 1)"},
		{"SELECT ?", pos([]int{1}), metadata.ErrInvalidValue, "cannot tell the type of argument []int here; compare it with a column"},
		{"SELECT CAST(? AS DATE)", pos([]int{1}), metadata.ErrInvalidValue, "cannot tell the type of argument []int"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bindSelect(t, tc.sql, tc.args...)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
}

// TestBindSelectPlan pins the plan's other fields: output names and
// expressions, the columns read, LIMIT and OFFSET, keys and hints.
func TestBindSelectPlan(t *testing.T) {
	plan, err := bindSelect(t, "SELECT /*+ OPTIONS('read.optimized'='true') */ "+
		"id, name AS who, i + 1, COUNT(*) AS n FROM t WHERE dt = '2026-01-01' "+
		"GROUP BY id, who HAVING n > 1 ORDER BY n DESC, 1 LIMIT ? OFFSET ?", pos(10, 5)...)
	require.NoError(t, err)
	require.Equal(t, metadata.TablePath{Database: "fluss", Table: "t"}, plan.Table.Path)
	require.True(t, plan.From)
	var outs []string
	for _, o := range plan.Output {
		outs = append(outs, o.Name+"="+dumpExpr(o.Expr))
	}
	require.Equal(t, []string{
		"id=id#0:BIGINT", "who=Name#3:STRING", "i + 1=(i#2:INT + 1:BIGINT):BIGINT", "n=count(*):BIGINT",
	}, outs)
	require.Equal(t, []int{0, 2, 3, 8}, plan.Columns)
	require.Equal(t, int64(10), plan.Limit)
	require.Equal(t, int64(5), plan.Offset)
	require.Equal(t, "id#0:BIGINT", dumpExpr(plan.GroupBy[0]))
	require.Equal(t, "Name#3:STRING", dumpExpr(plan.GroupBy[1]), "GROUP BY an output alias")
	require.Equal(t, "(count(*):BIGINT > 1:BIGINT)", dumpExpr(plan.Having))
	require.Equal(t, "count(*):BIGINT", dumpExpr(plan.OrderBy[0].Expr))
	require.True(t, plan.OrderBy[0].Desc)
	require.Equal(t, "id#0:BIGINT", dumpExpr(plan.OrderBy[1].Expr), "ORDER BY a position")
	require.Equal(t, map[string]string{"read.optimized": "true"}, plan.Hints)

	// * expands to every column in schema order; no LIMIT is -1.
	plan, err = bindSelect(t, "SELECT * FROM db2.small")
	require.NoError(t, err)
	require.Len(t, plan.Output, 2)
	require.Equal(t, "x", plan.Output[0].Name)
	require.Equal(t, "y#1:STRING", dumpExpr(plan.Output[1].Expr))
	require.Equal(t, []int{0, 1}, plan.Columns)
	require.Equal(t, int64(-1), plan.Limit)
	require.Equal(t, int64(0), plan.Offset)

	// The current database qualifies unqualified names.
	st := mustParse(t, "SELECT x FROM small").(*Select)
	plan, err = BindSelect(context.Background(), st, newCatalog(), "db2", nil)
	require.NoError(t, err)
	require.Equal(t, "db2", plan.Table.Path.Database)

	// SELECT without FROM.
	plan, err = bindSelect(t, "SELECT 1, VERSION(), ARRAY(1, 2.5)")
	require.NoError(t, err)
	require.False(t, plan.From)
	require.Empty(t, plan.Columns)
	require.Equal(t, "VERSION()", plan.Output[1].Name)
	require.Equal(t, "ARRAY<DECIMAL(38, 1)>", plan.Output[2].Expr.Type().String())

	// Aggregates and arithmetic are typed (DESIGN §6).
	plan, err = bindSelect(t, "SELECT SUM(i), SUM(amount), AVG(i), AVG(amount), SUM(price), MIN(dt), i / 2, amount * amount, i DIV 2, price + i FROM t")
	require.NoError(t, err)
	var types []string
	for _, o := range plan.Output {
		types = append(types, o.Expr.Type().String())
	}
	require.Equal(t, []string{"BIGINT", "DECIMAL(38, 2)", "DOUBLE", "DECIMAL(38, 6)", "DOUBLE", "DATE",
		"DECIMAL(38, 4)", "DECIMAL(38, 4)", "BIGINT", "DOUBLE"}, types)
}

// TestBindDoesNotMutate checks that a parsed statement can be bound again
// with other arguments: binding copies.
func TestBindDoesNotMutate(t *testing.T) {
	st := mustParse(t, "SELECT id FROM t WHERE i = ? AND dt = '2026-01-01'").(*Select)
	before := st.String()
	for _, v := range []int{1, 2} {
		plan, err := BindSelect(context.Background(), st, newCatalog(), "", pos(v))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("((i#2:INT = %d:INT) AND (dt#8:DATE = '2026-01-01':DATE))", v), dumpExpr(plan.Where))
	}
	require.Equal(t, before, st.String())
}

func bindInsert(t *testing.T, sql string, args ...Arg) (*InsertPlan, error) {
	t.Helper()
	return BindInsert(context.Background(), mustParse(t, sql).(*Insert), newCatalog(), "fluss", args)
}

func TestBindInsert(t *testing.T) {
	plan, err := bindInsert(t, "INSERT INTO pk (w, id, v) VALUES (1, 2, 'a'), (NULL, ?, ?)", pos(int64(3), "b")...)
	require.NoError(t, err)
	require.Equal(t, []int{2, 0, 1}, plan.Columns)
	require.Equal(t, [][]any{{int64(2), "a", int64(1)}, {int64(3), "b", nil}}, plan.Rows)

	// Every type from literals, nested values through the constructors,
	// and unlisted columns left nil.
	plan, err = bindInsert(t, `INSERT INTO t (id, tiny, amount, price, dt, ts, tm, flag, b, bin, arr, m, r, c3)
		VALUES (-9, -128, 12.345, 1e3, '2026-01-02', '2026-01-02 03:04:05.678', '10:11:12', TRUE, 'xy', X'0a0b',
		ARRAY(1, NULL, 3), MAP('k1', 1, 'k2', NULL), ROW(7, 'seven'), 'ab')`)
	require.NoError(t, err)
	row := plan.Rows[0]
	require.Len(t, row, 18)
	require.Equal(t, int64(-9), row[0])
	require.Equal(t, int64(-128), row[1])
	require.Nil(t, row[2], "unlisted column")
	require.Equal(t, "12.35", row[5].(metadata.DecimalValue).String(), "DECIMAL rounds half up like Fluss")
	require.Equal(t, 1000.0, row[6])
	require.Equal(t, "2026-01-02", metadata.FormatValue(metadata.DateType(), row[8]))
	require.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC), row[9])
	require.Equal(t, "10:11:12", metadata.FormatValue(metadata.TimeType(0), row[11]))
	require.Equal(t, true, row[12])
	require.Equal(t, []byte("xy"), row[13])
	require.Equal(t, []byte{10, 11}, row[14])
	require.Equal(t, []any{int64(1), nil, int64(3)}, row[15])
	require.Equal(t, "{k1=1, k2=NULL}", metadata.FormatValue(metadata.MapType(metadata.StringType(), metadata.IntType()), row[16]))
	require.Equal(t, []any{int64(7), "seven"}, row[17])
	require.Equal(t, "ab", row[4])

	// Go values as arguments: slices, maps and time.Time.
	plan, err = bindInsert(t, "INSERT INTO t (id, arr, m, ts) VALUES (?, ?, ?, ?)",
		pos(1, []int32{4, 5}, map[string]int{"a": 1}, time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))...)
	require.NoError(t, err)
	require.Equal(t, []any{int64(4), int64(5)}, plan.Rows[0][15])
	require.Equal(t, time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC), plan.Rows[0][9])

	// INSERT ... SELECT keeps the bound query.
	plan, err = bindInsert(t, "INSERT INTO db2.small (x, y) SELECT i, name FROM t WHERE id > ?", pos(5)...)
	require.NoError(t, err)
	require.Nil(t, plan.Rows)
	require.NotNil(t, plan.Select)
	require.Equal(t, "(id#0:BIGINT > 5:BIGINT)", dumpExpr(plan.Select.Where))
	require.Equal(t, []int{0, 1}, plan.Columns)
}

func TestBindInsertErrors(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		args     []Arg
		sentinel error
		want     string
	}{
		{"INSERT INTO nope VALUES (1)", nil, metadata.ErrNotFound, "table fluss.nope does not exist"},
		{"INSERT INTO pk (id, zz) VALUES (1, 2)", nil, metadata.ErrNotFound, "column zz does not exist in table fluss.pk"},
		{"INSERT INTO pk VALUES (1, 'a', 2), (1, 'a', 2, 3)", nil, metadata.ErrInvalidValue, "row 2 has 4 values, expected 3"},
		{"INSERT INTO pk (id) VALUES (1, 2)", nil, metadata.ErrInvalidValue, "row 1 has 2 values, expected 1"},
		{"INSERT INTO t (id, tiny) VALUES (1, 300)", nil, metadata.ErrInvalidValue, "row 1, column tiny: invalid value: value 300 out of range for TINYINT"},
		{"INSERT INTO t (id, tiny) VALUES (1, 1), (2, ?)", pos(-129), metadata.ErrInvalidValue, "row 2, column tiny: invalid value: value -129 out of range for TINYINT"},
		{"INSERT INTO t (id, dt) VALUES (1, '2026-13-45')", nil, metadata.ErrInvalidValue, "row 1, column dt: invalid value"},
		{"INSERT INTO t (id, c3) VALUES (1, 'abcd')", nil, metadata.ErrInvalidValue, "row 1, column c3: invalid value"},
		{"INSERT INTO t (id, arr) VALUES (1, ARRAY('x'))", nil, metadata.ErrInvalidValue, "row 1, column arr: element 0 of ARRAY<INT>: invalid value"},
		{"INSERT INTO t (id) VALUES (NULL)", nil, metadata.ErrConstraint, "row 1, column id: NULL in a NOT NULL column"},
		{"INSERT INTO pk VALUES (?, 'a', 1)", pos(nil), metadata.ErrConstraint, "row 1, column id: NULL in a primary-key column"},
		{"INSERT INTO t (tiny) VALUES (1)", nil, metadata.ErrConstraint, "column id is NOT NULL, has no default, and the INSERT gives it no value"},
		{"INSERT INTO pk (v) VALUES ('a')", nil, metadata.ErrConstraint, "primary-key column id is not listed"},
		{"INSERT INTO t (id, tiny) VALUES (1, i)", nil, metadata.ErrUnsupported, "row 1, column tiny: expression i in VALUES is not supported"},
		{"INSERT INTO t (id, m) VALUES (1, MAP('k'))", nil, metadata.ErrInvalidValue, "row 1, column m: MAP(...) takes key, value pairs, not 1 arguments"},
		{"INSERT INTO t (id) VALUES (?)", nil, metadata.ErrInvalidValue, "row 1, column id: no argument for placeholder $1"},
		{"INSERT INTO db2.small SELECT i FROM t", nil, metadata.ErrInvalidValue, "INSERT has 2 target columns but the SELECT returns 1"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bindInsert(t, tc.sql, tc.args...)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
	// A repeated column is refused.
	_, err := bindInsert(t, "INSERT INTO pk (id, ID) VALUES (1, 2)")
	require.EqualError(t, err, "column id is listed twice in the INSERT")
	// A partial update of a primary-key table may leave NOT NULL non-key
	// columns out: they keep their stored values.
	plan, err := bindInsert(t, "INSERT INTO pk (id, w) VALUES (1, 2)")
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1), nil, int64(2)}}, plan.Rows)
	require.True(t, errors.Is(fmt.Errorf("x: %w", metadata.ErrConstraint), metadata.ErrConstraint))
}

func TestCallValues(t *testing.T) {
	st := mustParse(t, "CALL sys.tier(?, 'x', 3)").(*Call)
	vals, err := st.Values(pos("orders"))
	require.NoError(t, err)
	require.Equal(t, []any{"orders", "x", int64(3)}, vals)
	_, err = st.Values(nil)
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
}

func TestIdentPosition(t *testing.T) {
	require.Equal(t, 7, IdentPosition("SELECT amout FROM t", "amout"))
	require.Equal(t, 28, IdentPosition("SELECT a FROM t WHERE 'x' = `Zz`", "zz"))
	require.Equal(t, -1, IdentPosition("SELECT 'amout' FROM t", "amout"), "a string literal is no identifier")
	require.Equal(t, -1, IdentPosition("SELECT a FROM t", "b"))
}

// TestHasParam: a placeholder anywhere in an expression is found, also
// when a sibling after it holds none.
func TestHasParam(t *testing.T) {
	for e, want := range map[Expr]bool{
		&Arith{Op: '+', L: &Param{Ordinal: 1}, R: &Literal{Value: int64(1)}}: true,
		&Arith{Op: '+', L: &Literal{Value: int64(1)}, R: &Param{Ordinal: 1}}: true,
		&Literal{Value: int64(1)}: false,
		nil:                       false,
	} {
		require.Equal(t, want, hasParam(e), "%v", e)
	}
}

// TestCoalesceConstantFolds: COALESCE or IFNULL whose first argument is a
// non-NULL constant is that constant, in the function's type, so the
// columns after it are not read (nor need grouping, as in MySQL).
func TestCoalesceConstantFolds(t *testing.T) {
	p, err := bindSelect(t, "SELECT COALESCE(-86, i, id), IFNULL('x', Name), COALESCE(NULL, i) FROM t GROUP BY tiny")
	require.NoError(t, err)
	require.Equal(t, &Literal{Value: int64(-86), T: metadata.BigIntType()}, p.Output[0].Expr)
	require.Equal(t, &Literal{Value: "x", T: metadata.StringType()}, p.Output[1].Expr)
	require.IsType(t, &Func{}, p.Output[2].Expr, "COALESCE(NULL, i) still reads i")
	require.Equal(t, "coalesce(-86, i, id)", strings.ToLower(p.Output[0].Name))
}
