package metadata

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))

func desc(cols []Column, pk, part []string, opts map[string]string) TableDescriptor {
	return TableDescriptor{
		Path:          TablePath{Database: "fluss", Table: "t"},
		Schema:        Schema{Columns: cols, PrimaryKey: pk},
		PartitionKeys: part,
		Options:       opts,
	}
}

func col(name string, t DataType) Column { return Column{Name: name, Type: t} }

func TestNewTableInfoLogTable(t *testing.T) {
	d := desc([]Column{col("id", BigIntType()), col("dt", StringType()), col("v", DoubleType())}, nil, []string{"DT"}, nil)
	info, err := NewTableInfo(d, 7, 3, now)
	require.NoError(t, err)
	require.Equal(t, int64(7), info.TableID)
	require.Equal(t, 3, info.NumBuckets)
	require.Nil(t, info.BucketKeys)
	require.Equal(t, []string{"dt"}, info.PartitionKeys, "spelled as the column is")
	require.Equal(t, now.UTC(), info.CreatedAt)
	for i, c := range info.Schema.Columns {
		require.Equal(t, int32(i), c.ID)
		require.False(t, c.NotNull)
	}
	require.Equal(t, LogFormatArrow, info.Config.LogFormat)
	// The descriptor is not modified.
	require.Equal(t, int32(0), d.Schema.Columns[2].ID)

	info, err = NewTableInfo(desc([]Column{col("id", BigIntType())}, nil, nil, map[string]string{OptBucketKey: "ID", OptBucketNum: "8"}), 1, 1, now)
	require.NoError(t, err)
	require.Equal(t, []string{"id"}, info.BucketKeys)
	require.Equal(t, 8, info.NumBuckets)
	require.Equal(t, []int{0}, info.BucketKeyIndexes())
}

func TestNewTableInfoPrimaryKeyTable(t *testing.T) {
	d := desc([]Column{col("id", BigIntType()), col("dt", DateType()), col("ver", TimestampLTZType(3)), col("n", IntType())},
		[]string{"id", "dt"}, []string{"dt"}, map[string]string{
			OptMergeEngine:         "versioned",
			OptVersionColumn:       "VER",
			OptAutoIncrementFields: "n",
			OptStatisticsColumns:   "id,dt,id",
		})
	info, err := NewTableInfo(d, 1, 0, now)
	require.NoError(t, err)
	require.Equal(t, 1, info.NumBuckets, "default bucket number below 1 means 1")
	require.True(t, info.Schema.Columns[0].NotNull)
	require.True(t, info.Schema.Columns[1].NotNull)
	require.False(t, info.Schema.Columns[2].NotNull)
	require.Equal(t, []string{"id"}, info.PhysicalPrimaryKey())
	require.Equal(t, []string{"id"}, info.BucketKeys, "bucket key defaults to the physical primary key")
	require.Equal(t, MergeVersioned, info.Config.MergeEngine)
	require.Equal(t, "ver", info.Config.VersionColumn)
	require.Equal(t, []string{"n"}, info.Config.AutoIncrement)
	require.Equal(t, []string{"id", "dt"}, info.Config.StatisticsColumns)
	require.Equal(t, 3, info.AutoIncrementIndex())
}

// TestAutoIncrementKey: unlike Fluss, the auto-increment column may be a
// primary-key column (MySQL's AUTO_INCREMENT key, which the ORMs need).
func TestAutoIncrementKey(t *testing.T) {
	d := desc([]Column{col("id", BigIntType()), col("dt", DateType()), col("s", StringType())},
		[]string{"dt", "id"}, []string{"dt"}, map[string]string{OptAutoIncrementFields: "ID"})
	info, err := NewTableInfo(d, 1, 1, now)
	require.NoError(t, err)
	require.Equal(t, []string{"id"}, info.Config.AutoIncrement)
	require.Equal(t, 0, info.AutoIncrementIndex())

	info, err = NewTableInfo(desc([]Column{col("id", BigIntType())}, []string{"id"}, nil, nil), 1, 1, now)
	require.NoError(t, err)
	require.Equal(t, -1, info.AutoIncrementIndex())
}

func TestNewTableInfoErrors(t *testing.T) {
	id, s, dt := col("id", BigIntType()), col("s", StringType()), col("dt", DateType())
	cases := []struct {
		name string
		d    TableDescriptor
		is   []error
		msg  string
	}{
		{"no columns", desc(nil, nil, nil, nil), []error{ErrInvalidTable}, "has no columns"},
		{"duplicate", desc([]Column{id, col("ID", IntType())}, nil, nil, nil), []error{ErrInvalidTable}, `column "ID" is declared twice`},
		{"reserved", desc([]Column{col("_change_type", IntType())}, nil, nil, nil), []error{ErrInvalidTable}, "reserved"},
		{"bad type", desc([]Column{col("d", DecimalType(40, 0))}, nil, nil, nil), []error{ErrInvalidType}, `column "d"`},
		{"pk missing", desc([]Column{id}, []string{"nope"}, nil, nil), []error{ErrInvalidTable, ErrNotFound}, `primary key column "nope"`},
		{"pk twice", desc([]Column{id}, []string{"id", "ID"}, nil, nil), []error{ErrInvalidTable}, "listed twice"},
		{"pk nested", desc([]Column{col("a", ArrayType(IntType()))}, []string{"a"}, nil, nil), []error{ErrInvalidTable}, "cannot be keys"},
		{"part missing", desc([]Column{id}, nil, []string{"dt"}, nil), []error{ErrInvalidTable, ErrNotFound}, `partition key column "dt"`},
		{"part type", desc([]Column{id, col("d", DecimalType(10, 2))}, nil, []string{"d"}, nil), []error{ErrInvalidTable}, `partition key "d" has type DECIMAL(10, 2)`},
		{"part outside pk", desc([]Column{id, dt}, []string{"id"}, []string{"dt"}, nil), []error{ErrInvalidTable}, `partition key "dt" must be part of the primary key`},
		{"pk only partition", desc([]Column{id, dt}, []string{"dt"}, []string{"dt"}, nil), []error{ErrInvalidTable}, "not a partition key"},
		{"bucket num", desc([]Column{id}, nil, nil, map[string]string{OptBucketNum: "4097"}), []error{ErrInvalidOption}, `bucket.num = "4097"`},
		{"bucket num zero", desc([]Column{id}, nil, nil, map[string]string{OptBucketNum: "0"}), []error{ErrInvalidOption}, "[1, 4096]"},
		{"bucket key missing", desc([]Column{id}, nil, nil, map[string]string{OptBucketKey: "x"}), []error{ErrInvalidTable, ErrNotFound}, `bucket key column "x"`},
		{"bucket key outside pk", desc([]Column{id, s, dt}, []string{"id", "dt"}, []string{"dt"}, map[string]string{OptBucketKey: "dt"}), []error{ErrInvalidTable}, `bucket key "dt" must be part of the primary key without the partition keys (id)`},
		{"bucket key nested", desc([]Column{col("m", MapType(StringType(), IntType()))}, nil, nil, map[string]string{OptBucketKey: "m"}), []error{ErrInvalidTable}, "cannot be keys"},
		{"unknown option", desc([]Column{id}, nil, nil, map[string]string{"foo": "bar"}), []error{ErrInvalidOption}, `unknown table option "foo"`},
		{"merge on log", desc([]Column{id}, nil, nil, map[string]string{OptMergeEngine: "first_row"}), []error{ErrInvalidOption}, "needs a primary-key table"},
		{"versioned no col", desc([]Column{id, s}, []string{"id"}, nil, map[string]string{OptMergeEngine: "versioned"}), []error{ErrInvalidOption}, "needs table.merge-engine.versioned.ver-column"},
		{"versioned bad col", desc([]Column{id, s}, []string{"id"}, nil, map[string]string{OptMergeEngine: "versioned", OptVersionColumn: "s"}), []error{ErrInvalidOption}, "must be INT, BIGINT, TIMESTAMP or TIMESTAMP_LTZ"},
		{"versioned missing col", desc([]Column{id, s}, []string{"id"}, nil, map[string]string{OptMergeEngine: "versioned", OptVersionColumn: "z"}), []error{ErrInvalidOption, ErrNotFound}, `"z"`},
		{"ver col alone", desc([]Column{id, s}, []string{"id"}, nil, map[string]string{OptVersionColumn: "id"}), []error{ErrInvalidOption}, "only meaningful"},
		{"stats missing", desc([]Column{id}, nil, nil, map[string]string{OptStatisticsColumns: "q"}), []error{ErrInvalidOption, ErrNotFound}, "table.statistics.columns"},
		{"stats bytes", desc([]Column{id, col("b", BytesType())}, nil, nil, map[string]string{OptStatisticsColumns: "b"}), []error{ErrInvalidOption}, "has no statistics"},
		{"autoinc log", desc([]Column{id}, nil, nil, map[string]string{OptAutoIncrementFields: "id"}), []error{ErrInvalidOption}, "needs a primary-key table"},
		{"autoinc type", desc([]Column{id, s}, []string{"id"}, nil, map[string]string{OptAutoIncrementFields: "s"}), []error{ErrInvalidOption}, "must be INT or BIGINT"},
		{"autoinc missing", desc([]Column{id, s}, []string{"id"}, nil, map[string]string{OptAutoIncrementFields: "q"}), []error{ErrInvalidOption, ErrNotFound}, `names column "q"`},
		{"autoinc partition key", desc([]Column{id, col("p", IntType())}, []string{"id", "p"}, []string{"p"}, map[string]string{OptAutoIncrementFields: "p"}), []error{ErrInvalidOption}, "must not decide the partition"},
		{"autoinc not null outside key", desc([]Column{id, {Name: "n", Type: BigIntType(), NotNull: true}}, []string{"id"}, nil, map[string]string{OptAutoIncrementFields: "n"}), []error{ErrInvalidOption}, "must be nullable"},
		{"autopart unpartitioned", desc([]Column{id}, nil, nil, map[string]string{OptAutoPartitionEnabled: "true"}), []error{ErrInvalidOption}, "needs a partitioned table"},
		{"autopart key", desc([]Column{id, dt, s}, nil, []string{"dt", "s"}, map[string]string{OptAutoPartitionEnabled: "true"}), []error{ErrInvalidOption}, "must name the time partition key"},
		{"autopart bad key", desc([]Column{id, dt}, nil, []string{"dt"}, map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionKey: "id"}), []error{ErrInvalidOption}, "is not a partition key"},
		{"bad table name", TableDescriptor{Path: TablePath{Database: "fluss", Table: "a/b"}, Schema: Schema{Columns: []Column{id}}}, []error{ErrInvalidTable}, `table name "a/b" is invalid`},
		{"reserved db name", TableDescriptor{Path: TablePath{Database: "__sys", Table: "t"}, Schema: Schema{Columns: []Column{id}}}, []error{ErrInvalidTable}, "database name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewTableInfo(c.d, 1, 1, now)
			for _, is := range c.is {
				require.ErrorIs(t, err, is)
			}
			require.ErrorContains(t, err, c.msg)
		})
	}
	_, err := NewTableInfo(desc([]Column{id}, nil, nil, nil), 1, 5000, now)
	require.ErrorIs(t, err, ErrInvalidOption)
}

func TestAutoPartitionResolved(t *testing.T) {
	info, err := NewTableInfo(desc([]Column{col("id", BigIntType()), col("dt", StringType()), col("r", StringType())}, nil,
		[]string{"dt", "r"}, map[string]string{OptAutoPartitionEnabled: "true", OptAutoPartitionKey: "DT"}), 1, 1, now)
	require.NoError(t, err)
	require.Equal(t, "dt", info.Config.AutoPartition.Key)
	require.Equal(t, 0, info.Config.AutoPartition.NumPrecreate, "several partition keys: nothing pre-created, as in Fluss")
}

func TestAlterOptions(t *testing.T) {
	orig, err := NewTableInfo(desc([]Column{col("id", BigIntType()), col("b", BytesType())}, nil, nil, map[string]string{OptLogTTL: "1 d"}), 1, 2, now)
	require.NoError(t, err)

	got, err := AlterOptions(orig, map[string]string{OptDatalakeEnabled: "true", OptLogTTL: "2 d", OptStatisticsColumns: ""})
	require.NoError(t, err)
	require.True(t, got.Config.DatalakeEnabled)
	require.Equal(t, "parquet", got.Config.DatalakeFormat)
	require.Equal(t, 48*time.Hour, got.Config.LogTTL)
	require.Equal(t, []string{}, got.Config.StatisticsColumns)
	// The original is untouched.
	require.Equal(t, 24*time.Hour, orig.Config.LogTTL)
	require.Equal(t, map[string]string{OptLogTTL: "1 d"}, orig.Options)

	_, err = AlterOptions(orig, map[string]string{OptBucketNum: "4"})
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, `"bucket.num" cannot be changed`)
	_, err = AlterOptions(orig, map[string]string{OptMergeEngine: "first_row"})
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = AlterOptions(orig, map[string]string{"x.y": "1"})
	require.ErrorIs(t, err, ErrInvalidOption)
	_, err = AlterOptions(orig, map[string]string{OptLogTTL: "soon"})
	require.ErrorIs(t, err, ErrInvalidOption)
	_, err = AlterOptions(orig, map[string]string{OptStatisticsColumns: "b"})
	require.ErrorIs(t, err, ErrInvalidOption)
}

func everyType() []DataType {
	return []DataType{
		BooleanType(), TinyIntType(), SmallIntType(), IntType(), BigIntType(), FloatType(), DoubleType(),
		DecimalType(38, 10), DecimalType(10, 2), CharType(3), StringType(), BinaryType(4), BytesType(), DateType(),
		TimeType(0), TimeType(9), TimestampType(9), TimestampType(6), TimestampLTZType(3),
		ArrayType(IntType()), MapType(StringType(), IntType()),
		RowType(Field{"a", IntType()}, Field{"b", StringType()}),
		ArrayType(RowType(Field{"x y", MapType(DateType(), ArrayType(DecimalType(20, 4)))})),
	}
}

func TestDataTypeJSON(t *testing.T) {
	b, err := json.Marshal(DecimalType(10, 2))
	require.NoError(t, err)
	require.JSONEq(t, `{"root":"DECIMAL","precision":10,"scale":2}`, string(b))
	b, err = json.Marshal(MapType(StringType(), ArrayType(TimeType(0))))
	require.NoError(t, err)
	require.JSONEq(t, `{"root":"MAP","key":{"root":"STRING"},"value":{"root":"ARRAY","element":{"root":"TIME","precision":0}}}`, string(b))
	b, err = json.Marshal(RowType(Field{"a", CharType(2)}))
	require.NoError(t, err)
	require.JSONEq(t, `{"root":"ROW","fields":[{"name":"a","type":{"root":"CHAR","length":2}}]}`, string(b))

	for _, typ := range everyType() {
		b, err := json.Marshal(typ)
		require.NoError(t, err)
		var back DataType
		require.NoError(t, json.Unmarshal(b, &back), string(b))
		require.True(t, typ.Equal(back), "%s -> %s -> %s", typ, b, back)
	}

	for _, bad := range []string{
		`{"root":"VARCHAR"}`, `{"root":"DECIMAL","precision":50,"scale":0}`, `{"root":"DECIMAL","precision":5}`,
		`{"root":"ARRAY"}`, `{"root":"MAP","key":{"root":"ARRAY","element":{"root":"INT"}},"value":{"root":"INT"}}`,
		`{"root":"ROW","fields":[]}`, `[1]`, `{"root":"CHAR"}`,
	} {
		var d DataType
		require.ErrorIs(t, json.Unmarshal([]byte(bad), &d), ErrInvalidType, bad)
	}
	_, err = json.Marshal(DataType{})
	require.Error(t, err)
}

func TestTableInfoJSONRoundTrip(t *testing.T) {
	var cols []Column
	for i, typ := range everyType() {
		cols = append(cols, Column{Name: "c" + string(rune('a'+i)), Type: typ, Comment: typ.String()})
	}
	d := desc(cols, []string{"ca", "cd"}, []string{"cd"}, map[string]string{
		OptBucketNum: "3", OptDatalakeEnabled: "true", OptStatisticsColumns: "ca,cd", OptLogTTL: "2 d",
	})
	d.Comment = "every type"
	info, err := NewTableInfo(d, 42, 1, now)
	require.NoError(t, err)

	b, err := json.Marshal(info)
	require.NoError(t, err)
	var back TableInfo
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, TableConfig{}, back.Config, "Config is not persisted")
	require.NoError(t, back.Resolve())
	require.Equal(t, info.Config, back.Config)
	require.True(t, info.CreatedAt.Equal(back.CreatedAt))
	back.CreatedAt = info.CreatedAt
	require.Len(t, back.Schema.Columns, len(info.Schema.Columns))
	for i := range info.Schema.Columns {
		a, b := info.Schema.Columns[i], back.Schema.Columns[i]
		require.True(t, a.Type.Equal(b.Type), a.Name)
		a.Type, b.Type = DataType{}, DataType{}
		require.Equal(t, a, b)
	}
	require.Equal(t, info.PartitionKeys, back.PartitionKeys)
	require.Equal(t, info.BucketKeys, back.BucketKeys)
	require.Equal(t, info.Schema.PrimaryKey, back.Schema.PrimaryKey)
	require.Equal(t, info.Options, back.Options)
	require.Equal(t, info.NumBuckets, back.NumBuckets)
	require.Equal(t, info.Comment, back.Comment)
}
