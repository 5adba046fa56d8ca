package sqlplan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// pkCatalog is newCatalog plus primary-key tables built the way the engine
// builds them (metadata.NewTableInfo: key columns NOT NULL, Config parsed).
func pkCatalog(t *testing.T) fakeCatalog {
	t.Helper()
	cat := newCatalog()
	add := func(name string, cols []metadata.Column, pk, part []string, opts map[string]string) {
		info, err := metadata.NewTableInfo(metadata.TableDescriptor{
			Path:          metadata.TablePath{Database: "fluss", Table: name},
			Schema:        metadata.Schema{Columns: cols, PrimaryKey: pk},
			PartitionKeys: part,
			Options:       opts,
		}, int64(len(cat)+1), 1, time.Time{})
		require.NoError(t, err, name)
		cat[info.Path] = info
	}
	// The key is neither first nor contiguous, and its partition key dt
	// comes first in the key.
	add("orders", []metadata.Column{
		col("name", metadata.StringType()),
		col("dt", metadata.StringType()),
		col("amount", metadata.DecimalType(10, 2)),
		col("id", metadata.BigIntType()),
		col("tiny", metadata.TinyIntType()),
		col("note", metadata.CharType(3)),
		{Name: "qty", Type: metadata.IntType(), NotNull: true},
		col("arr", metadata.ArrayType(metadata.IntType())),
		col("day", metadata.DateType()),
	}, []string{"dt", "id", "tiny"}, []string{"dt"}, nil)
	add("events", []metadata.Column{
		col("ts", metadata.TimestampType(3)),
		col("v", metadata.IntType()),
	}, []string{"ts"}, nil, nil)
	add("fr", []metadata.Column{col("k", metadata.IntType()), col("v", metadata.StringType())},
		[]string{"k"}, nil, map[string]string{metadata.OptMergeEngine: "first_row"})
	add("ver", []metadata.Column{col("k", metadata.IntType()), col("v", metadata.StringType()), col("ver", metadata.BigIntType())},
		[]string{"k"}, nil, map[string]string{metadata.OptMergeEngine: "versioned", metadata.OptVersionColumn: "ver"})
	// MySQL's AUTO_INCREMENT key, and Fluss's auto-increment column
	// outside the key (a dictionary table).
	add("users", []metadata.Column{col("id", metadata.BigIntType()), col("name", metadata.StringType()), col("age", metadata.IntType())},
		[]string{"id"}, nil, map[string]string{metadata.OptAutoIncrementFields: "id"})
	add("dict", []metadata.Column{col("word", metadata.StringType()), col("uid", metadata.IntType()), col("n", metadata.BigIntType())},
		[]string{"word"}, nil, map[string]string{metadata.OptAutoIncrementFields: "uid"})
	return cat
}

func bindUpdate(t *testing.T, sql string, args ...Arg) (*UpdatePlan, error) {
	t.Helper()
	return BindUpdate(context.Background(), mustParse(t, sql).(*Update), pkCatalog(t), "fluss", args)
}

func bindDelete(t *testing.T, sql string, args ...Arg) (*DeletePlan, error) {
	t.Helper()
	return BindDelete(context.Background(), mustParse(t, sql).(*Delete), pkCatalog(t), "fluss", args)
}

func dumpSet(p *UpdatePlan) []string {
	var out []string
	for _, a := range p.Set {
		out = append(out, p.Table.Schema.Columns[a.Column].Name+"="+dumpExpr(a.Expr))
	}
	return out
}

// TestBindUpdate pins how SET binds: constants folded into literals of the
// column's type, expressions over the old row cast to it, and the read of
// the rows to update.
func TestBindUpdate(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		args  []Arg
		set   []string
		where string
	}{
		{"UPDATE orders SET name = 'x' WHERE id = 1", nil,
			[]string{"name='x':STRING"}, "(id#3:BIGINT = 1:BIGINT)"},
		// Constants take the column's type as INSERT values do (DECIMAL rounds).
		{"UPDATE orders SET amount = 1.505, qty = -7, note = 'ab', day = '2026-01-02'", nil,
			[]string{"amount=1.51:DECIMAL(10, 2)", "qty=-7:INT", "note='ab':CHAR(3)", "day='2026-01-02':DATE"}, "<nil>"},
		{"UPDATE orders SET name = NULL, arr = ARRAY(1, ?) WHERE tiny = ?", pos(2, 3),
			[]string{"name=NULL:STRING", "arr='[1, 2]':ARRAY<INT>"}, "(tiny#4:TINYINT = 3:TINYINT)"},
		{"UPDATE orders SET arr = ?, qty = CAST(? AS SIGNED)", pos([]int64{5}, "9"),
			[]string{"arr='[5]':ARRAY<INT>", "qty=9:INT"}, "<nil>"},
		// Expressions over the same row keep their own type (the executor
		// converts the results to the column's type).
		{"UPDATE orders SET qty = qty + 1, name = UPPER(name), amount = amount * 2 WHERE qty > 0", nil,
			[]string{
				"qty=(qty#6:INT + 1:BIGINT):BIGINT",
				"name=upper(name#0:STRING):STRING",
				"amount=(amount#2:DECIMAL(10, 2) * 2:BIGINT):DECIMAL(38, 2)",
			}, "(qty#6:INT > 0:INT)"},
		{"UPDATE orders AS o SET o.qty = o.qty WHERE o.dt = '2026-01-01'", nil,
			[]string{"qty=o.qty#6:INT"}, "(o.dt#1:STRING = '2026-01-01':STRING)"},
		{"UPDATE pk SET w = CASE WHEN w IS NULL THEN 0 ELSE w END", nil,
			[]string{"w=(CASE WHEN (w#2:INT IS NULL) THEN 0:BIGINT ELSE w#2:INT END):BIGINT"}, "<nil>"},
		// A typed NULL expression fits anywhere.
		{"UPDATE pk SET w = CASE WHEN w > 1 THEN NULL END", nil,
			[]string{"w=(CASE WHEN (w#2:INT > 1:INT) THEN NULL END)"}, "<nil>"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			plan, err := bindUpdate(t, tc.sql, tc.args...)
			require.NoError(t, err)
			require.Equal(t, tc.set, dumpSet(plan))
			for _, a := range plan.Set {
				if l, ok := a.Expr.(*Literal); ok {
					require.True(t, l.T.Equal(plan.Table.Schema.Columns[a.Column].Type), "constants take the column's type")
				}
			}
			// The read is SELECT * over the same table.
			require.Equal(t, plan.Table.Path, plan.Read.Table.Path)
			require.Equal(t, tc.where, dumpExpr(plan.Read.Where))
			require.Len(t, plan.Read.Output, len(plan.Table.Schema.Columns))
			require.Len(t, plan.Read.Columns, len(plan.Table.Schema.Columns))
			require.Equal(t, int64(-1), plan.Read.Limit)
			require.Empty(t, plan.Read.Virtual)
		})
	}

	// Binding copies: the parsed statement serves another execution.
	st := mustParse(t, "UPDATE orders SET qty = ? WHERE id = ?").(*Update)
	before := st.String()
	for _, v := range []int{1, 2} {
		plan, err := BindUpdate(context.Background(), st, pkCatalog(t), "", pos(v*10, v))
		require.NoError(t, err)
		require.Equal(t, []string{"qty=" + dumpExpr(&Literal{Value: int64(v * 10), T: metadata.IntType()})}, dumpSet(plan))
	}
	require.Equal(t, before, st.String())
}

// TestBindUpdateErrors pins each refusal: its sentinel and its text.
func TestBindUpdateErrors(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		args     []Arg
		sentinel error
		want     string
	}{
		{"UPDATE nope SET v = 1", nil, metadata.ErrNotFound, "table fluss.nope does not exist"},
		{"UPDATE t SET i = 1 WHERE id = 2", nil, metadata.ErrUnsupported, "UPDATE needs a primary-key table; fluss.t is a log table (append only)"},
		{"UPDATE fr SET v = 'x'", nil, metadata.ErrUnsupported, "UPDATE on table fluss.fr is not supported: its first_row merge engine takes no UPDATE or DELETE statements"},
		{"UPDATE ver SET v = 'x'", nil, metadata.ErrUnsupported, "UPDATE on table fluss.ver is not supported: its versioned merge engine takes no UPDATE or DELETE statements"},
		{"UPDATE `orders$changelog` SET qty = 1", nil, metadata.ErrUnsupported, "cannot UPDATE virtual table fluss.orders$changelog: virtual tables are read-only"},
		{"UPDATE orders SET id = 2 WHERE id = 1", nil, metadata.ErrUnsupported, "UPDATE of primary-key column id is not supported: delete the row and insert it with the new key"},
		{"UPDATE orders SET qty = 1, TINY = 2", nil, metadata.ErrUnsupported, "UPDATE of primary-key column tiny is not supported"},
		{"UPDATE orders SET dt = '2026-01-01'", nil, metadata.ErrUnsupported, "UPDATE of partition key column dt is not supported"},
		{"UPDATE orders SET nope = 1", nil, metadata.ErrNotFound, "column nope does not exist in table fluss.orders"},
		{"UPDATE orders SET qty = 1, QTY = 2", nil, metadata.ErrInvalidValue, "column qty is assigned twice in the UPDATE"},
		{"UPDATE orders SET qty = nope + 1", nil, metadata.ErrNotFound, "column nope does not exist in table fluss.orders"},
		{"UPDATE orders SET qty = 1 WHERE nope = 1", nil, metadata.ErrNotFound, "column nope does not exist in table fluss.orders"},
		{"UPDATE orders SET qty = 1 WHERE qty", nil, metadata.ErrUnsupported, "WHERE needs a BOOLEAN condition, not INT (qty)"},
		// A constant that does not fit names the column and the value.
		{"UPDATE orders SET qty = 99999999999", nil, metadata.ErrInvalidValue, "SET qty = 99999999999: invalid value: value 99999999999 out of range for INT"},
		{"UPDATE orders SET qty = ?", pos(int64(1) << 40), metadata.ErrInvalidValue, "SET qty = 1099511627776: invalid value"},
		{"UPDATE orders SET day = ?", pos("soon"), metadata.ErrInvalidValue, "SET day = 'soon': invalid value"},
		{"UPDATE orders SET note = 'abcd'", nil, metadata.ErrInvalidValue, "SET note = 'abcd': invalid value"},
		{"UPDATE orders SET arr = ARRAY('x')", nil, metadata.ErrInvalidValue, "SET arr = ARRAY('x'): element 0 of ARRAY<INT>"},
		{"UPDATE orders SET qty = NULL", nil, metadata.ErrConstraint, "SET qty = NULL: NULL in a NOT NULL column"},
		{"UPDATE orders SET qty = ?", pos(nil), metadata.ErrConstraint, "SET qty = NULL: NULL in a NOT NULL column"},
		{"UPDATE orders SET qty = ?", nil, metadata.ErrInvalidValue, "SET qty: no argument for placeholder $1"},
		// An expression of a type the column cannot take.
		{"UPDATE orders SET qty = name", nil, metadata.ErrUnsupported, "SET qty = name: cannot assign STRING to column qty of type INT"},
		{"UPDATE orders SET day = UPPER(name)", nil, metadata.ErrUnsupported, "SET day = UPPER(name): cannot assign STRING to column day of type DATE"},
		{"UPDATE orders SET qty = COUNT(*)", nil, metadata.ErrUnsupported, "aggregate function COUNT is not allowed in SET"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bindUpdate(t, tc.sql, tc.args...)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
}

func TestBindDelete(t *testing.T) {
	plan, err := bindDelete(t, "DELETE FROM orders WHERE dt = ? AND amount > 10", pos("2026-01-01")...)
	require.NoError(t, err)
	require.Equal(t, metadata.TablePath{Database: "fluss", Table: "orders"}, plan.Table.Path)
	require.Equal(t, "((dt#1:STRING = '2026-01-01':STRING) AND (amount#2:DECIMAL(10, 2) > 10.00:DECIMAL(10, 2)))", dumpExpr(plan.Read.Where))
	require.Len(t, plan.Read.Output, 9)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, plan.Read.Columns)

	plan, err = bindDelete(t, "DELETE FROM pk")
	require.NoError(t, err)
	require.Nil(t, plan.Read.Where)
	require.Equal(t, "pk", plan.Read.Table.Path.Table)

	for _, tc := range []struct {
		sql      string
		args     []Arg
		sentinel error
		want     string
	}{
		{"DELETE FROM nope", nil, metadata.ErrNotFound, "table fluss.nope does not exist"},
		{"DELETE FROM db2.small WHERE x = 1", nil, metadata.ErrUnsupported, "DELETE needs a primary-key table; db2.small is a log table (append only)"},
		{"DELETE FROM fr WHERE k = 1", nil, metadata.ErrUnsupported, "DELETE on table fluss.fr is not supported: its first_row merge engine takes no UPDATE or DELETE statements"},
		{"DELETE FROM ver", nil, metadata.ErrUnsupported, "DELETE on table fluss.ver is not supported: its versioned merge engine"},
		{"DELETE FROM `pk$changelog`", nil, metadata.ErrUnsupported, "cannot DELETE FROM virtual table fluss.pk$changelog: virtual tables are read-only"},
		{"DELETE FROM orders WHERE nope = 1", nil, metadata.ErrNotFound, "column nope does not exist in table fluss.orders"},
		{"DELETE FROM orders WHERE day = ?", pos("soon"), metadata.ErrInvalidValue, "cannot convert 'soon' to DATE for column day"},
		{"DELETE FROM orders WHERE id = ?", nil, metadata.ErrInvalidValue, "no argument for placeholder $1"},
		{"DELETE FROM orders WHERE SUM(qty) > 1", nil, metadata.ErrUnsupported, "aggregate function SUM is not allowed in WHERE"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bindDelete(t, tc.sql, tc.args...)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
}

// TestBindInsertPrimaryKey covers INSERT into primary-key tables: the key
// must be listed and non-NULL, and a column list that leaves some other
// column out is a partial update.
func TestBindInsertPrimaryKey(t *testing.T) {
	bind := func(sql string, args ...Arg) (*InsertPlan, error) {
		return BindInsert(context.Background(), mustParse(t, sql).(*Insert), pkCatalog(t), "fluss", args)
	}
	for _, tc := range []struct {
		sql     string
		partial bool
		columns []int
	}{
		{"INSERT INTO orders VALUES ('n', '2026-01-01', 1, 2, 3, 'abc', 4, NULL, NULL)", false, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"INSERT INTO orders (tiny, id, dt, qty) VALUES (3, 2, '2026-01-01', 5)", true, []int{4, 3, 1, 6}},
		// Listing every column in another order is no partial update.
		{"INSERT INTO pk (w, v, id) VALUES (1, 'a', 2)", false, []int{2, 1, 0}},
		// Leaving out a NOT NULL non-key column is fine: it keeps its value.
		{"INSERT INTO pk (id, w) VALUES (1, 2)", true, []int{0, 2}},
		{"INSERT INTO pk (id, v) SELECT id, name FROM t", true, []int{0, 1}},
		// A log table fills unlisted columns with NULL: never partial.
		{"INSERT INTO db2.small (x) VALUES (1)", false, []int{0}},
		// first_row and versioned tables take whole rows.
		{"INSERT INTO fr VALUES (1, 'a')", false, []int{0, 1}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			plan, err := bind(tc.sql)
			require.NoError(t, err)
			require.Equal(t, tc.partial, plan.Partial)
			require.Equal(t, tc.columns, plan.Columns)
		})
	}
	plan, err := bind("INSERT INTO orders (tiny, id, dt, qty) VALUES (3, 2, '2026-01-01', 5)")
	require.NoError(t, err)
	require.Equal(t, [][]any{{nil, "2026-01-01", nil, int64(2), int64(3), nil, int64(5), nil, nil}}, plan.Rows)

	for _, tc := range []struct {
		sql      string
		args     []Arg
		sentinel error
		want     string
	}{
		{"INSERT INTO orders (id, tiny, qty) VALUES (1, 2, 3)", nil, metadata.ErrConstraint,
			"primary-key column dt is not listed: an INSERT into primary-key table fluss.orders must give every key column"},
		{"INSERT INTO orders (dt, id, qty) VALUES ('d', 1, 3)", nil, metadata.ErrConstraint, "primary-key column tiny is not listed"},
		{"INSERT INTO orders (dt, id, tiny) VALUES ('d', 1, NULL)", nil, metadata.ErrConstraint, "row 1, column tiny: NULL in a primary-key column"},
		{"INSERT INTO orders (dt, id, tiny) VALUES (?, 1, 2)", pos(nil), metadata.ErrConstraint, "row 1, column dt: NULL in a primary-key column"},
		{"INSERT INTO orders (dt, id, tiny, qty) VALUES ('d', 1, 2, NULL)", nil, metadata.ErrConstraint, "row 1, column qty: NULL in a NOT NULL column"},
		{"INSERT INTO fr (k) VALUES (1)", nil, metadata.ErrUnsupported, "partial update of table fluss.fr is not supported: its first_row merge engine takes whole rows (list every column)"},
		{"INSERT INTO ver (k, ver) VALUES (1, 2)", nil, metadata.ErrUnsupported, "partial update of table fluss.ver is not supported: its versioned merge engine"},
		{"INSERT INTO `orders$changelog` VALUES (1)", nil, metadata.ErrUnsupported, "cannot INSERT INTO virtual table fluss.orders$changelog: virtual tables are read-only"},
		{"INSERT INTO pk (id, id) VALUES (1, 2)", nil, metadata.ErrInvalidValue, "column id is listed twice in the INSERT"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bind(tc.sql, tc.args...)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
}

// TestBindChangelog binds queries over `t$changelog`: three metadata
// columns first, then the table's columns, indexes in that virtual schema.
func TestBindChangelog(t *testing.T) {
	bind := func(sql string, args ...Arg) (*SelectPlan, error) {
		return BindSelect(context.Background(), mustParse(t, sql).(*Select), pkCatalog(t), "fluss", args)
	}
	plan, err := bind("SELECT * FROM `orders$changelog` WHERE _change_type = '-D' AND id = ? AND _log_offset >= 10", pos(5)...)
	require.NoError(t, err)
	require.Equal(t, VirtualChangelog, plan.Virtual)
	require.Equal(t, metadata.TablePath{Database: "fluss", Table: "orders"}, plan.Base.Path)
	require.Equal(t, metadata.TablePath{Database: "fluss", Table: "orders$changelog"}, plan.Table.Path)
	require.Equal(t, plan.Base.TableID, plan.Table.TableID)
	require.False(t, plan.Table.HasPrimaryKey(), "the changelog is a log")
	require.True(t, plan.Base.HasPrimaryKey())
	require.Equal(t, []string{"dt"}, plan.Table.PartitionKeys)
	require.Equal(t, []int{4}, plan.Table.PartitionKeyIndexes(), "partition key dt in the virtual schema")
	var outs []string
	for _, o := range plan.Output {
		outs = append(outs, o.Name+"="+dumpExpr(o.Expr))
	}
	require.Equal(t, []string{
		"_change_type=_change_type#0:STRING", "_log_offset=_log_offset#1:BIGINT",
		"_commit_timestamp=_commit_timestamp#2:TIMESTAMP_LTZ(3)",
		"name=name#3:STRING", "dt=dt#4:STRING", "amount=amount#5:DECIMAL(10, 2)", "id=id#6:BIGINT",
		"tiny=tiny#7:TINYINT", "note=note#8:CHAR(3)", "qty=qty#9:INT", "arr=arr#10:ARRAY<INT>", "day=day#11:DATE",
	}, outs)
	for i := range NumChangelogMetaColumns {
		require.True(t, plan.Table.Schema.Columns[i].NotNull)
	}
	require.Equal(t, "(((_change_type#0:STRING = '-D':STRING) AND (id#6:BIGINT = 5:BIGINT)) AND (_log_offset#1:BIGINT >= 10:BIGINT))", dumpExpr(plan.Where))
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, plan.Columns)
	_, _, ok := PointLookup(plan)
	require.False(t, ok, "a changelog is never a point lookup")

	// A log table has a changelog too; qualified names, case-insensitive
	// suffix, aggregates over the virtual schema.
	plan, err = bind("SELECT _change_type, COUNT(*), MAX(_commit_timestamp) FROM db2.`small$ChangeLog` GROUP BY _change_type")
	require.NoError(t, err)
	require.Equal(t, VirtualChangelog, plan.Virtual)
	require.Equal(t, "small", plan.Base.Path.Table)
	require.Equal(t, []int{0, 2}, plan.Columns)
	require.Equal(t, "_change_type#0:STRING", dumpExpr(plan.GroupBy[0]))
	require.Equal(t, "TIMESTAMP_LTZ(3)", plan.Output[2].Expr.Type().String())
	plan, err = bind("SELECT `small$changelog`.y FROM db2.`small$changelog`")
	require.NoError(t, err)
	require.Equal(t, "small$changelog.y#4:STRING", dumpExpr(plan.Output[0].Expr))

	// t$binlog of a key table: the system columns, then the before and
	// after images as ROWs of the table's columns; no key of its own.
	plan, err = bind("SELECT _change_type, after FROM `orders$Binlog`")
	require.NoError(t, err)
	require.Equal(t, VirtualBinlog, plan.Virtual)
	require.Equal(t, "orders", plan.Base.Path.Table)
	require.Equal(t, []int{0, 4}, plan.Columns)
	require.Len(t, plan.Table.Schema.Columns, 5)
	require.Equal(t, []string{BeforeColumn, AfterColumn}, []string{plan.Table.Schema.Columns[3].Name, plan.Table.Schema.Columns[4].Name})
	require.Equal(t, metadata.Row, plan.Output[1].Expr.Type().Root)
	require.Len(t, plan.Output[1].Expr.Type().Fields, len(plan.Base.Schema.Columns))
	require.False(t, plan.Table.HasPrimaryKey())
	require.Empty(t, plan.Table.PartitionKeys)
	_, err = bind("SELECT * FROM db2.`small$binlog`")
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.ErrorContains(t, err, "$binlog is only supported for primary-key tables")

	// A real table has no Virtual and no Base.
	plan, err = bind("SELECT id FROM orders")
	require.NoError(t, err)
	require.Empty(t, plan.Virtual)
	require.Zero(t, plan.Base.TableID)

	for _, tc := range []struct {
		sql      string
		sentinel error
		want     string
	}{
		{"SELECT * FROM `orders$nope`", metadata.ErrNotFound, "table fluss.orders$nope does not exist: $nope is no virtual table (known: $changelog, $binlog, $lake, $lake$snapshots)"},
		{"SELECT * FROM `orders$`", metadata.ErrNotFound, "table fluss.orders$ does not exist: $ is no virtual table"},
		{"SELECT * FROM `nope$changelog`", metadata.ErrNotFound, "table fluss.nope does not exist"},
		{"SELECT * FROM `orders$lake`", metadata.ErrUnsupported, "fluss.orders$lake: table fluss.orders is not lake-enabled"},
		{"SELECT __offset FROM `orders$changelog`", metadata.ErrNotFound, "column __offset does not exist in table fluss.orders$changelog"},
		{"SELECT * FROM `orders$changelog` WHERE _log_offset = 'x'", metadata.ErrInvalidValue, "cannot convert 'x' to BIGINT for column _log_offset"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bind(tc.sql)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			require.True(t, strings.HasPrefix(err.Error(), tc.want), "error %q should start with %q", err, tc.want)
		})
	}
}

// TestChangelogTable checks the virtual table on its own: the base is not
// modified and the metadata columns have ids no stored column has.
func TestChangelogTable(t *testing.T) {
	base := pkCatalog(t)[metadata.TablePath{Database: "fluss", Table: "ver"}]
	v := ChangelogTable(base)
	require.Equal(t, []string{ChangeTypeColumn, LogOffsetColumn, CommitTimestampColumn, "k", "v", "ver"}, v.Schema.ColumnNames())
	var ids []int32
	for _, c := range v.Schema.Columns {
		ids = append(ids, c.ID)
	}
	require.Equal(t, []int32{-1, -2, -3, 0, 1, 2}, ids)
	require.Equal(t, []metadata.DataType{metadata.StringType(), metadata.BigIntType(), metadata.TimestampLTZType(3)},
		[]metadata.DataType{v.Schema.Columns[0].Type, v.Schema.Columns[1].Type, v.Schema.Columns[2].Type})
	require.Equal(t, "ver$changelog", v.Path.Table)
	require.Empty(t, v.Schema.PrimaryKey)
	// The base is untouched.
	require.Equal(t, []string{"k", "v", "ver"}, base.Schema.ColumnNames())
	require.Equal(t, []string{"k"}, base.Schema.PrimaryKey)
}

// TestPointLookup pins when a query is a point lookup and what it looks up.
func TestPointLookup(t *testing.T) {
	for _, tc := range []struct {
		where    string
		args     []Arg
		key      []any // nil: not a lookup
		residual []string
	}{
		// Composite key with a partition key, in any order, either way round.
		{"dt = '2026-01-01' AND id = 7 AND tiny = 3", nil,
			[]any{nil, "2026-01-01", nil, int64(7), int64(3), nil, nil, nil, nil}, nil},
		{"3 = tiny AND id = ? AND dt = ?", pos(int64(7), "d"),
			[]any{nil, "d", nil, int64(7), int64(3), nil, nil, nil, nil}, nil},
		{"tiny <=> 3 AND id = 7 AND dt = 'd'", nil,
			[]any{nil, "d", nil, int64(7), int64(3), nil, nil, nil, nil}, nil},
		// Extra conjuncts are the residual, a repeated key equality too.
		{"dt = 'd' AND qty > 1 AND id = 7 AND tiny = 3 AND (name = 'a' OR name IS NULL) AND id = 8", nil,
			[]any{nil, "d", nil, int64(7), int64(3), nil, nil, nil, nil},
			[]string{"(qty#6:INT > 1:INT)", "((name#0:STRING = 'a':STRING) OR (name#0:STRING IS NULL))", "(id#3:BIGINT = 8:BIGINT)"}},
		// Not a lookup: a key column missing (the partition key too), a
		// non-equality, an OR, a NULL, a literal outside the key's type.
		{"id = 7 AND tiny = 3", nil, nil, nil},
		{"dt = 'd' AND id = 7", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny >= 3", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny IN (3)", nil, nil, nil},
		{"dt = 'd' AND (id = 7 AND tiny = 3 OR id = 8)", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny = 3 OR dt = 'e' AND id = 7 AND tiny = 3", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny = NULL", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny <=> NULL", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny = 300", nil, nil, nil},
		{"dt = 'd' AND id = 7 AND tiny = ?", pos(300), nil, nil},
		{"dt = 'd' AND id = 7.5 AND tiny = 3", nil, nil, nil},
		{"dt = 'd' AND id = tiny AND tiny = 3", nil, nil, nil},
		{"dt = 'd' AND id + 0 = 7 AND tiny = 3", nil, nil, nil},
		{"dt = 'd' AND id <> 7 AND tiny = 3", nil, nil, nil},
		{"NOT (dt = 'd' AND id = 7 AND tiny = 3)", nil, nil, nil},
		// An exact DECIMAL literal with trailing zeros still names an integer key.
		{"dt = 'd' AND id = 7.00 AND tiny = 3", nil,
			[]any{nil, "d", nil, int64(7), int64(3), nil, nil, nil, nil}, nil},
	} {
		t.Run(tc.where, func(t *testing.T) {
			plan, err := BindSelect(context.Background(), mustParse(t, "SELECT name FROM orders WHERE "+tc.where).(*Select), pkCatalog(t), "fluss", tc.args)
			require.NoError(t, err)
			key, residual, ok := PointLookup(plan)
			if tc.key == nil {
				require.False(t, ok)
				require.Nil(t, key)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.key, key)
			var res []string
			for _, r := range residual {
				res = append(res, dumpExpr(r))
			}
			require.Equal(t, tc.residual, res)
		})
	}

	lookup := func(sql string, args ...Arg) ([]any, bool) {
		plan, err := BindSelect(context.Background(), mustParse(t, sql).(*Select), pkCatalog(t), "fluss", args)
		require.NoError(t, err)
		key, _, ok := PointLookup(plan)
		return key, ok
	}
	// A TIMESTAMP(3) key takes an instant that is exactly a millisecond,
	// narrowed to the column's precision, and nothing finer.
	key, ok := lookup("SELECT * FROM events WHERE ts = '2026-01-02 03:04:05.678'")
	require.True(t, ok)
	require.Equal(t, []any{time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC), nil}, key)
	_, ok = lookup("SELECT * FROM events WHERE ts = '2026-01-02 03:04:05.6781'")
	require.False(t, ok)
	key, ok = lookup("SELECT v FROM events WHERE ts = ?", pos(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))...)
	require.True(t, ok)
	require.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), key[0])
	// Single-column key; aggregates over a lookup are still a lookup.
	key, ok = lookup("SELECT COUNT(*) FROM pk WHERE id = 4")
	require.True(t, ok)
	require.Equal(t, []any{int64(4), nil, nil}, key)
	// Log tables, no WHERE, no FROM: no lookup.
	for _, sql := range []string{"SELECT * FROM t WHERE id = 1", "SELECT * FROM pk", "SELECT 1"} {
		_, ok = lookup(sql)
		require.False(t, ok, sql)
	}
	_, _, ok = PointLookup(nil)
	require.False(t, ok)
}

// TestBindInsertAutoIncrement: the auto-increment column may be left out,
// also when it is the key; a nil value marks each value the driver
// generates (left out, NULL, DEFAULT, or 0 for a key, as in MySQL).
func TestBindInsertAutoIncrement(t *testing.T) {
	bind := func(sql string, args ...Arg) (*InsertPlan, error) {
		return BindInsert(context.Background(), mustParse(t, sql).(*Insert), pkCatalog(t), "fluss", args)
	}
	for _, tc := range []struct {
		sql     string
		columns []int
		partial bool
		rows    [][]any
	}{
		{"INSERT INTO users (name, age) VALUES ('ann', 3), ('bob', NULL)", []int{1, 2, 0}, false,
			[][]any{{nil, "ann", int64(3)}, {nil, "bob", nil}}},
		{"INSERT INTO users (name) VALUES ('ann')", []int{1, 0}, true, [][]any{{nil, "ann", nil}}},
		{"INSERT INTO users VALUES (DEFAULT, 'a', 1), (NULL, 'b', 2), (0, 'c', 3), (7, 'd', 4), (?, 'e', 5)", []int{0, 1, 2}, false,
			[][]any{{nil, "a", int64(1)}, {nil, "b", int64(2)}, {nil, "c", int64(3)}, {int64(7), "d", int64(4)}, {int64(9), "e", int64(5)}}},
		{"INSERT INTO users (`id`, `name`, `age`) VALUES (DEFAULT, 'a', DEFAULT)", []int{0, 1, 2}, false, [][]any{{nil, "a", nil}}},
		{"INSERT INTO dict (word, n) VALUES ('a', 1)", []int{0, 2, 1}, false, [][]any{{"a", nil, int64(1)}}},
		{"INSERT INTO dict (word) VALUES ('a')", []int{0, 1}, true, [][]any{{"a", nil, nil}}},
		{"INSERT INTO dict VALUES ('a', NULL, 1), ('b', DEFAULT, 2)", []int{0, 1, 2}, false, [][]any{{"a", nil, int64(1)}, {"b", nil, int64(2)}}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			plan, err := bind(tc.sql, Arg{Ordinal: 1, Value: int64(9)})
			require.NoError(t, err)
			require.Equal(t, tc.columns, plan.Columns)
			require.Equal(t, tc.partial, plan.Partial)
			require.Equal(t, tc.rows, plan.Rows)
			require.Equal(t, plan.Table.AutoIncrementIndex(), plan.AutoIncrement)
		})
	}
	plan, err := bind("INSERT INTO pk (id, v) VALUES (1, 'a')")
	require.NoError(t, err)
	require.Equal(t, -1, plan.AutoIncrement)

	for _, tc := range []struct {
		sql  string
		is   error
		want string
	}{
		{"INSERT INTO dict VALUES ('a', 5, 1)", metadata.ErrConstraint, "takes no explicit value"},
		{"INSERT INTO users (name, age) VALUES ('a', 1, 2)", metadata.ErrInvalidValue, "row 1 has 3 values, expected 2"},
		{"INSERT INTO users (id, name) VALUES (1, DEFAULT), (2, 'b')", nil, ""},
		{"INSERT INTO pk (id, v) VALUES (1, DEFAULT)", metadata.ErrConstraint, "column v: DEFAULT, but the column is NOT NULL and has no default"},
		{"INSERT INTO users (name) SELECT name FROM t", nil, ""},
		{"INSERT INTO users (name) SELECT name, name FROM t", metadata.ErrInvalidValue, "INSERT has 1 target columns but the SELECT returns 2"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := bind(tc.sql)
			if tc.is == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestBindInsertOnDuplicate: ON DUPLICATE KEY UPDATE in its upsert forms
// names the listed columns an existing key keeps.
func TestBindInsertOnDuplicate(t *testing.T) {
	bind := func(sql string) (*InsertPlan, error) {
		return BindInsert(context.Background(), mustParse(t, sql).(*Insert), pkCatalog(t), "fluss", nil)
	}
	plan, err := bind("INSERT INTO `users` (`id`,`name`,`age`) VALUES (1,'a',2) ON DUPLICATE KEY UPDATE `name`=VALUES(`name`)")
	require.NoError(t, err)
	require.Equal(t, []ConflictAction{{Column: 2, Keep: true}}, plan.OnConflict, "age keeps its stored value")
	plan, err = bind("INSERT INTO users (id, name, age) VALUES (1, 'a', 2) ON DUPLICATE KEY UPDATE id = id")
	require.NoError(t, err)
	require.Equal(t, []ConflictAction{{Column: 1, Keep: true}, {Column: 2, Keep: true}}, plan.OnConflict, "an existing key changes nothing")
	plan, err = bind("INSERT INTO users (name, age) VALUES ('a', 2) ON DUPLICATE KEY UPDATE name = VALUES(name), users.age = VALUES(age)")
	require.NoError(t, err)
	require.Empty(t, plan.OnConflict, "a plain upsert")
	// GORM's Save sets updated_at to a constant on conflict.
	plan, err = BindInsert(context.Background(), mustParse(t, "INSERT INTO users (id, name, age) VALUES (1, 'a', 2) ON DUPLICATE KEY UPDATE age = ?, name = VALUES(name)").(*Insert),
		pkCatalog(t), "fluss", []Arg{{Ordinal: 1, Value: 7}})
	require.NoError(t, err)
	require.Equal(t, []ConflictAction{{Column: 2, Value: int64(7)}}, plan.OnConflict)

	for _, tc := range []struct {
		sql  string
		is   error
		want string
	}{
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = CONCAT(name, 'b')", metadata.ErrUnsupported, "only col = VALUES(col)"},
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE id = 5", metadata.ErrUnsupported, "key column"},
		{"INSERT INTO users (id, age) VALUES (1, 2) ON DUPLICATE KEY UPDATE age = 'x'", metadata.ErrInvalidValue, "age"},
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUES(age)", metadata.ErrUnsupported, "only col = VALUES(col)"},
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE age = VALUES(age)", metadata.ErrUnsupported, "does not list"},
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE zz = VALUES(zz)", metadata.ErrNotFound, "zz"},
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE name = VALUES(name), name = name", metadata.ErrInvalidValue, "assigned twice"},
		{"INSERT INTO db2.small (x) VALUES (1) ON DUPLICATE KEY UPDATE x = VALUES(x)", metadata.ErrUnsupported, "log table"},
		{"INSERT INTO users (id, name) VALUES (1, 'a') ON DUPLICATE KEY UPDATE other.name = VALUES(name)", metadata.ErrNotFound, "not the table inserted into"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			st, err := Parse(tc.sql)
			if err == nil {
				_, err = BindInsert(context.Background(), st.(*Insert), pkCatalog(t), "fluss", nil)
			}
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestInsertSelectRow: a row of an INSERT ... SELECT becomes a full row
// as a row of VALUES does, with the same conversions and errors.
func TestInsertSelectRow(t *testing.T) {
	bind := func(sql string) *InsertPlan {
		plan, err := BindInsert(context.Background(), mustParse(t, sql).(*Insert), pkCatalog(t), "fluss", nil)
		require.NoError(t, err, sql)
		require.NotNil(t, plan.Select)
		return plan
	}
	plan := bind("INSERT INTO users (name, age) SELECT name, id FROM t")
	row, err := plan.SelectRow(0, []any{"ann", int64(7)})
	require.NoError(t, err)
	require.Equal(t, []any{nil, "ann", int64(7)}, row, "the generated key is left to the driver")
	_, err = plan.SelectRow(1, []any{"ann", int64(1) << 40})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "row 2, column age: invalid value: value 1099511627776 out of range for INT")

	plan = bind("INSERT INTO users SELECT id, name, id FROM t")
	row, err = plan.SelectRow(0, []any{int64(0), "a", int64(0)})
	require.NoError(t, err)
	require.Equal(t, []any{nil, "a", int64(0)}, row, "0 in an auto-increment key is generated")

	plan = bind("INSERT INTO dict SELECT name, id, id FROM t")
	_, err = plan.SelectRow(0, []any{"w", int64(3), int64(1)})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "row 1, column uid: an auto-increment column outside the primary key takes no explicit value")

	plan = bind("INSERT INTO orders (dt, id, tiny, qty) SELECT name, id, id, id FROM t")
	_, err = plan.SelectRow(2, []any{nil, int64(1), int64(1), int64(1)})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "row 3, column dt: NULL in a primary-key column")
	_, err = plan.SelectRow(0, []any{"d", int64(1), int64(1), nil})
	require.ErrorIs(t, err, metadata.ErrConstraint)
	require.ErrorContains(t, err, "row 1, column qty: NULL in a NOT NULL column")
	_, err = plan.SelectRow(0, []any{"d", int64(1), int64(1), int64(1), int64(1)})
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
}
