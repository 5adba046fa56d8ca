package fluss

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// infoSchemaDB is the read-only database that describes the catalog, as in
// MySQL: ORMs (GORM's HasTable and ColumnTypes) and tools query it.
const infoSchemaDB = "information_schema"

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
	if !ok || !strings.EqualFold(path.Database, infoSchemaDB) {
		return metadata.TableInfo{}, false
	}
	return metadata.TableInfo{
		Path:   metadata.TablePath{Database: infoSchemaDB, Table: name},
		Schema: metadata.Schema{Columns: cols},
	}, true
}

// sessionCatalog is the catalog a SELECT binds against: the engine's,
// plus the information_schema tables.
type sessionCatalog struct {
	eng *storage.Engine
}

func (c sessionCatalog) TableInfo(ctx context.Context, path metadata.TablePath) (metadata.TableInfo, error) {
	if strings.EqualFold(path.Database, infoSchemaDB) {
		if info, ok := infoSchemaInfo(path); ok {
			return info, nil
		}
		return metadata.TableInfo{}, fmt.Errorf("information_schema has no table %s (known: schemata, tables, columns): %w",
			path.Table, metadata.ErrNotFound)
	}
	return c.eng.TableInfo(ctx, path)
}

// isInfoSchema reports whether a bound SELECT reads information_schema.
func isInfoSchema(sp *sqlplan.SelectPlan) bool {
	return sp.From && sp.Table.Path.Database == infoSchemaDB
}

// infoSchemaRows answers a SELECT on information_schema: the whole table
// is built from the catalog in memory, then the query's filter,
// aggregation, projection and ordering run over it as over any scan.
func (s *Stmt) infoSchemaRows(ctx context.Context, sp *sqlplan.SelectPlan) (*Rows, error) {
	rows, err := s.infoSchemaData(ctx, sp.Table.Path.Table)
	if err != nil {
		return nil, err
	}
	rec, err := buildRecord(schemaColumns(&sp.Table), rows)
	if err != nil {
		return nil, err
	}
	all := make([]int, len(sp.Table.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	q := queryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	op, err := exec.Build(&staticOp{rec: rec}, q, exec.NewLayout(len(all), all), s.execOptions())
	if err != nil {
		rec.Release()
		return nil, err
	}
	return newRows(ctx, resultColumns(sp), op, s.converter()), nil
}

// infoSchemaData lists the rows of one information_schema table. A table
// dropped while it is listed is skipped.
func (s *Stmt) infoSchemaData(ctx context.Context, table string) ([][]any, error) {
	eng := s.engine()
	dbs, err := eng.ListDatabases(ctx)
	if err != nil {
		return nil, err
	}
	const catalog = "def"
	var rows [][]any
	if table == "schemata" {
		rows = append(rows, []any{catalog, infoSchemaDB})
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
			for i, c := range info.Schema.Columns {
				rows = append(rows, columnRow(catalog, &info, i, c))
			}
		}
	}
	return rows, nil
}

// columnRow is one row of information_schema.columns.
func columnRow(catalog string, info *metadata.TableInfo, i int, c metadata.Column) []any {
	nullable, key := "YES", ""
	if c.NotNull {
		nullable = "NO"
	}
	for _, k := range info.Schema.PrimaryKey {
		if strings.EqualFold(k, c.Name) {
			key = "PRI"
		}
	}
	var length, precision, scale, dtPrecision any
	t := c.Type
	switch {
	case t.Root == metadata.Char || t.Root == metadata.Binary:
		length = int64(t.Length)
	case t.Root == metadata.Decimal:
		precision, scale = int64(t.Precision), int64(t.Scale)
	case t.Root == metadata.Time || t.Root == metadata.Timestamp || t.Root == metadata.TimestampLTZ:
		dtPrecision = int64(t.Precision)
	}
	dataType := "null"
	if t.Root != 0 {
		dataType = strings.ToLower(t.Root.String())
	}
	return []any{catalog, info.Path.Database, info.Path.Table, c.Name, int64(i + 1), nil, nullable,
		dataType, strings.ToLower(t.String()), length, precision, scale, dtPrecision, key, "", c.Comment}
}
