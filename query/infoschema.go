package query

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// infoSchemaTables are the columns of each information_schema table. The
// names follow MySQL's, lower case; the extra columns of .columns are the
// ones GORM's ColumnTypes reads.
var infoSchemaTables = map[string][]metadata.Column{
	"schemata": {
		{Name: "catalog_name", Type: metadata.StringType(), NotNull: true},
		{Name: "schema_name", Type: metadata.StringType(), NotNull: true},
	},
	"tables": {
		{Name: "table_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "table_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "table_type", Type: metadata.StringType(), NotNull: true},
		{Name: "table_comment", Type: metadata.StringType(), NotNull: true},
	},
	// statistics lists the primary key (index PRIMARY) and the secondary
	// indexes (CREATE TABLE, CREATE INDEX, ALTER TABLE ... ADD INDEX):
	// GORM's HasIndex asks it.
	"statistics": {
		{Name: "table_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "table_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "non_unique", Type: metadata.BigIntType(), NotNull: true},
		{Name: "index_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "index_name", Type: metadata.StringType(), NotNull: true},
		{Name: "seq_in_index", Type: metadata.BigIntType(), NotNull: true},
		{Name: "column_name", Type: metadata.StringType(), NotNull: true},
		{Name: "nullable", Type: metadata.StringType(), NotNull: true},
		{Name: "index_type", Type: metadata.StringType(), NotNull: true},
		{Name: "comment", Type: metadata.StringType(), NotNull: true},
		{Name: "index_comment", Type: metadata.StringType(), NotNull: true},
	},
	// views lists the views with their query as written; none can be
	// written through, so is_updatable is always NO.
	"views": {
		{Name: "table_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "table_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "view_definition", Type: metadata.StringType(), NotNull: true},
		{Name: "check_option", Type: metadata.StringType(), NotNull: true},
		{Name: "is_updatable", Type: metadata.StringType(), NotNull: true},
	},
	"columns": {
		{Name: "table_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "table_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "column_name", Type: metadata.StringType(), NotNull: true},
		{Name: "ordinal_position", Type: metadata.BigIntType(), NotNull: true},
		{Name: "column_default", Type: metadata.StringType()},
		{Name: "is_nullable", Type: metadata.StringType(), NotNull: true},
		{Name: "data_type", Type: metadata.StringType(), NotNull: true},
		{Name: "column_type", Type: metadata.StringType(), NotNull: true},
		{Name: "character_maximum_length", Type: metadata.BigIntType()},
		{Name: "numeric_precision", Type: metadata.BigIntType()},
		{Name: "numeric_scale", Type: metadata.BigIntType()},
		{Name: "datetime_precision", Type: metadata.BigIntType()},
		{Name: "column_key", Type: metadata.StringType(), NotNull: true},
		{Name: "extra", Type: metadata.StringType(), NotNull: true},
		{Name: "column_comment", Type: metadata.StringType(), NotNull: true},
	},
}

// infoSchemaInfo returns the table info of an information_schema table.
func infoSchemaInfo(path metadata.TablePath) (metadata.TableInfo, bool) {
	name := strings.ToLower(path.Table)
	cols, ok := infoSchemaTables[name]
	if !ok || !strings.EqualFold(path.Database, InfoSchemaDB) {
		return metadata.TableInfo{}, false
	}
	return metadata.TableInfo{
		Path:   metadata.TablePath{Database: InfoSchemaDB, Table: name},
		Schema: metadata.Schema{Columns: cols},
	}, true
}

// openInfoSchema builds the operators of a SELECT on information_schema:
// the whole table is built from the catalog in memory, then the query's
// filter, aggregation, projection and ordering run over it as over any
// scan.
func (s *Session) openInfoSchema(ctx context.Context, sp *sqlplan.SelectPlan) (exec.Operator, error) {
	rows, err := s.infoSchemaData(ctx, sp.Table.Path.Table)
	if err != nil {
		return nil, err
	}
	rec, err := BuildRecord(sp.Table.Schema.Columns, rows)
	if err != nil {
		return nil, err
	}
	all := make([]int, len(sp.Table.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	q := exec.QueryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	op, err := exec.Build(NewStatic(rec), q, exec.NewLayout(len(all), all), s.Exec)
	if err != nil {
		rec.Release()
		return nil, err
	}
	return op, nil
}

// infoSchemaData lists the rows of one information_schema table. A table
// dropped while it is listed is skipped.
func (s *Session) infoSchemaData(ctx context.Context, table string) ([][]any, error) {
	eng := s.Engine
	dbs, err := eng.ListDatabases(ctx)
	if err != nil {
		return nil, err
	}
	const catalog = "def"
	var rows [][]any
	if table == "schemata" {
		rows = append(rows, []any{catalog, InfoSchemaDB})
		for _, db := range dbs {
			rows = append(rows, []any{catalog, db})
		}
		return rows, nil
	}
	for _, db := range dbs {
		tables, err := eng.ListTables(ctx, db)
		if err != nil {
			if errors.Is(err, metadata.ErrNotFound) {
				continue
			}
			return nil, err
		}
		if table == "views" {
			tables = nil // views lists no table
		}
		for _, name := range tables {
			if table == "tables" {
				rows = append(rows, []any{catalog, db, name, "BASE TABLE", ""})
				continue
			}
			info, err := eng.TableInfo(ctx, metadata.TablePath{Database: db, Table: name})
			if err != nil {
				if errors.Is(err, metadata.ErrNotFound) {
					continue
				}
				return nil, err
			}
			if table == "statistics" {
				rows = append(rows, statisticsRows(catalog, &info)...)
				continue
			}
			for i, c := range info.Schema.Columns {
				rows = append(rows, columnRow(catalog, &info, i, c))
			}
		}
		viewRows, err := s.infoSchemaViewRows(ctx, table, catalog, db)
		if err != nil {
			return nil, err
		}
		rows = append(rows, viewRows...)
	}
	return rows, nil
}

// columnRow is one row of information_schema.columns. Types are named as
// MySQL names them, since the clients that read information_schema speak
// MySQL's dialect: the type a MySQL-dialect CREATE TABLE declared
// (varchar(191), bigint unsigned), else MySQL's name for the stored type
// (metadata.DataType.MySQLType). data_type is column_type without its
// length or modifiers, as in MySQL.
func columnRow(catalog string, info *metadata.TableInfo, i int, c metadata.Column) []any {
	nullable, key, extra := "YES", "", ""
	if c.NotNull {
		nullable = "NO"
	}
	for _, k := range info.Schema.PrimaryKey {
		if strings.EqualFold(k, c.Name) {
			key = "PRI"
		}
	}
	if i == info.AutoIncrementIndex() {
		extra = "auto_increment"
	}
	t := c.Type
	columnType := c.DeclaredType
	if columnType == "" {
		columnType = t.MySQLType()
	}
	dataType, _, _ := strings.Cut(columnType, "(")
	dataType, _, _ = strings.Cut(dataType, " ")
	var length, precision, scale, dtPrecision any
	switch {
	case t.Root == metadata.Char || t.Root == metadata.Binary:
		length = int64(t.Length)
	case t.Root == metadata.String || t.Root == metadata.Bytes:
		length = declaredLength(columnType)
	case t.Root == metadata.Decimal:
		precision, scale = int64(t.Precision), int64(t.Scale)
	case t.Root == metadata.Time || t.Root == metadata.Timestamp || t.Root == metadata.TimestampLTZ:
		dtPrecision = int64(t.Precision)
	}
	var def any
	if c.Default != nil {
		def = c.Default.MySQLText(t)
		if c.Default.IsCurrentTimestamp() && extra == "" {
			extra = "DEFAULT_GENERATED" // as MySQL 8 marks it
		}
	}
	return []any{catalog, info.Path.Database, info.Path.Table, c.Name, int64(i + 1), def, nullable,
		dataType, columnType, length, precision, scale, dtPrecision, key, extra, c.Comment}
}

// declaredLength is the character_maximum_length of a STRING or BYTES
// column: the n of a declared varchar(n) or varbinary(n), else MySQL's
// maximum of longtext and longblob.
func declaredLength(columnType string) any {
	if _, rest, ok := strings.Cut(columnType, "("); ok {
		if n, err := strconv.ParseInt(strings.TrimSuffix(rest, ")"), 10, 64); err == nil {
			return n
		}
	}
	return int64(math.MaxUint32)
}

// statisticsRows are the rows of information_schema.statistics for one
// table: one per column of each index, the primary key first.
func statisticsRows(catalog string, info *metadata.TableInfo) [][]any {
	indexes := info.Indexes
	if info.HasPrimaryKey() {
		indexes = append([]metadata.DeclaredIndex{{Name: "PRIMARY", Columns: info.Schema.PrimaryKey, Unique: true}}, indexes...)
	}
	var rows [][]any
	for _, ix := range indexes {
		nonUnique := int64(1)
		if ix.Unique {
			nonUnique = 0
		}
		for seq, col := range ix.Columns {
			nullable := "YES"
			if i := info.Schema.ColumnIndex(col); i >= 0 && info.Schema.Columns[i].NotNull {
				nullable = ""
			}
			rows = append(rows, []any{catalog, info.Path.Database, info.Path.Table, nonUnique, info.Path.Database,
				ix.Name, int64(seq + 1), col, nullable, "BTREE", "", ""})
		}
	}
	return rows
}
