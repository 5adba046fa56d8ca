package metadata

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestColumnDefaultValue(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	at := time.Date(2026, 7, 1, 12, 30, 45, 123456789, time.UTC)
	for _, tc := range []struct {
		c     Column
		want  any
		mysql string
		sql   string
	}{
		{Column{Name: "b", Type: BooleanType(), Default: &ColumnDefault{Value: "true"}}, true, "1", "true"},
		{Column{Name: "b", Type: BooleanType(), Default: &ColumnDefault{Value: "0"}}, false, "0", "0"},
		{Column{Name: "i", Type: IntType(), Default: &ColumnDefault{Value: "-5"}}, int64(-5), "-5", "-5"},
		{Column{Name: "i", Type: IntType(), Default: &ColumnDefault{Value: "7", Quoted: true}}, int64(7), "7", "'7'"},
		{Column{Name: "d", Type: DecimalType(10, 2), Default: &ColumnDefault{Value: "1.5"}}, "1.50", "1.5", "1.5"},
		{Column{Name: "s", Type: StringType(), Default: &ColumnDefault{Value: "it's", Quoted: true}}, "it's", "it's", "'it''s'"},
		{Column{Name: "dt", Type: DateType(), Default: &ColumnDefault{Value: "2026-01-02", Quoted: true}}, DateOf(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)), "2026-01-02", "'2026-01-02'"},
		// The statement's time: a TIMESTAMP takes loc's wall clock, a
		// TIMESTAMP_LTZ the instant, each in its precision.
		{Column{Name: "ts", Type: TimestampType(3), Default: &ColumnDefault{Expr: CurrentTimestamp}}, time.Date(2026, 7, 1, 8, 30, 45, 123000000, time.UTC), "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"},
		{Column{Name: "ltz", Type: TimestampLTZType(0), Default: &ColumnDefault{Expr: "CURRENT_TIMESTAMP(3)"}}, time.Date(2026, 7, 1, 12, 30, 45, 0, time.UTC), "CURRENT_TIMESTAMP(3)", "CURRENT_TIMESTAMP(3)"},
		{Column{Name: "n", Type: IntType()}, nil, "", ""},
	} {
		v, err := tc.c.DefaultValue(at, ny)
		require.NoError(t, err, tc.c.Name)
		if d, ok := v.(DecimalValue); ok {
			require.Equal(t, tc.want, d.String())
		} else {
			require.Equal(t, tc.want, v, tc.c.Name)
		}
		if tc.c.Default != nil {
			require.Equal(t, tc.mysql, tc.c.Default.MySQLText(tc.c.Type))
			require.Equal(t, tc.sql, tc.c.Default.SQL())
		}
	}
}

func TestColumnDefaultChecked(t *testing.T) {
	for _, tc := range []struct {
		c    Column
		want string
	}{
		{Column{Name: "a", Type: TinyIntType(), Default: &ColumnDefault{Value: "300"}}, `DEFAULT 300 on column "a"`},
		{Column{Name: "a", Type: IntType(), Default: &ColumnDefault{Value: "x", Quoted: true}}, `DEFAULT 'x' on column "a"`},
		{Column{Name: "a", Type: DateType(), Default: &ColumnDefault{Expr: CurrentTimestamp}}, `only a TIMESTAMP or TIMESTAMP_LTZ column`},
		{Column{Name: "a", Type: ArrayType(IntType()), Default: &ColumnDefault{Value: "1"}}, `nested type takes no default`},
	} {
		_, err := NewTableInfo(desc([]Column{col("id", IntType()), tc.c}, nil, nil, nil), 1, 1, now)
		require.ErrorIs(t, err, ErrInvalidValue)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := NewTableInfo(desc([]Column{{Name: "id", Type: IntType(), Default: &ColumnDefault{Value: "1"}}}, []string{"id"}, nil, nil), 1, 1, now)
	require.ErrorIs(t, err, ErrInvalidTable)
	require.ErrorContains(t, err, `primary-key column "id" takes no DEFAULT`)
}

// A catalog written before defaults existed has no "default" key: its
// columns have none. One written now keeps them.
func TestColumnDefaultJSON(t *testing.T) {
	var old Column
	require.NoError(t, json.Unmarshal([]byte(`{"name":"a","type":{"root":"INT"},"id":0}`), &old))
	require.Nil(t, old.Default)
	c := Column{Name: "a", Type: StringType(), Default: &ColumnDefault{Value: "x", Quoted: true}}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	var back Column
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, c, back)
}
