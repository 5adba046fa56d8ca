package query

import (
	"context"
	"errors"
	"math"
	"slices"
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
	// table_constraints lists each table's primary key (PRIMARY), its
	// UNIQUE indexes and its foreign keys, as MySQL does: GORM's
	// HasConstraint asks it. enforced is NO for a foreign key, which
	// fluss records but never checks, and for a UNIQUE index an older
	// release recorded on a log table; YES for the primary key and a
	// built UNIQUE index.
	"table_constraints": {
		{Name: "constraint_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_name", Type: metadata.StringType(), NotNull: true},
		{Name: "table_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_type", Type: metadata.StringType(), NotNull: true},
		{Name: "enforced", Type: metadata.StringType(), NotNull: true},
	},
	// key_column_usage lists the columns of those constraints, a foreign
	// key's with the parent column each references.
	"key_column_usage": {
		{Name: "constraint_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_name", Type: metadata.StringType(), NotNull: true},
		{Name: "table_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "table_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "column_name", Type: metadata.StringType(), NotNull: true},
		{Name: "ordinal_position", Type: metadata.BigIntType(), NotNull: true},
		{Name: "position_in_unique_constraint", Type: metadata.BigIntType()},
		{Name: "referenced_table_schema", Type: metadata.StringType()},
		{Name: "referenced_table_name", Type: metadata.StringType()},
		{Name: "referenced_column_name", Type: metadata.StringType()},
	},
	// referential_constraints lists the foreign keys with their actions
	// as declared (none is applied).
	"referential_constraints": {
		{Name: "constraint_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "constraint_name", Type: metadata.StringType(), NotNull: true},
		{Name: "unique_constraint_catalog", Type: metadata.StringType(), NotNull: true},
		{Name: "unique_constraint_schema", Type: metadata.StringType(), NotNull: true},
		{Name: "unique_constraint_name", Type: metadata.StringType()},
		{Name: "match_option", Type: metadata.StringType(), NotNull: true},
		{Name: "update_rule", Type: metadata.StringType(), NotNull: true},
		{Name: "delete_rule", Type: metadata.StringType(), NotNull: true},
		{Name: "table_name", Type: metadata.StringType(), NotNull: true},
		{Name: "referenced_table_name", Type: metadata.StringType(), NotNull: true},
	},
	// session_variables lists the connection's system variables, as
	// SHOW VARIABLES shows them (it is a query over this table).
	"session_variables": {
		{Name: "variable_name", Type: metadata.StringType(), NotNull: true},
		{Name: "variable_value", Type: metadata.StringType(), NotNull: true},
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
	var rows [][]any
	var err error
	if sp.Virtual == sqlplan.VirtualLakeSnapshots {
		rows, err = s.lakeSnapshotRows(ctx, &sp.Base)
	} else {
		rows, err = s.infoSchemaData(ctx, sp.Table.Path.Table)
	}
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
	if table == "session_variables" {
		for _, v := range s.variables().list() {
			rows = append(rows, []any{v.name, v.show})
		}
		return rows, nil
	}
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
			switch table {
			case "statistics":
				rows = append(rows, statisticsRows(catalog, &info)...)
				continue
			case "table_constraints", "key_column_usage", "referential_constraints":
				rows = append(rows, constraintRows(ctx, s, table, catalog, &info)...)
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
	// MySQL's column_key below PRI: UNI for the column of a one-column
	// UNIQUE index, MUL for the first column of any other index. GORM's
	// AutoMigrate reads UNI to know a unique tag is in place already.
	for _, ix := range info.Indexes {
		if key == "PRI" || len(ix.Columns) == 0 || !strings.EqualFold(ix.Columns[0], c.Name) {
			continue
		}
		if ix.Unique && len(ix.Columns) == 1 {
			key = "UNI"
		} else if key == "" {
			key = "MUL"
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

// constraintRows are the rows of information_schema.table_constraints,
// key_column_usage or referential_constraints for one table: its
// primary key (PRIMARY), its UNIQUE indexes (from the same recorded
// index list statistics lists) and its foreign keys.
func constraintRows(ctx context.Context, s *Session, table, catalog string, info *metadata.TableInfo) [][]any {
	db, name := info.Path.Database, info.Path.Table
	var rows [][]any
	unique := info.Indexes
	if info.HasPrimaryKey() {
		unique = append([]metadata.DeclaredIndex{{Name: "PRIMARY", Columns: info.Schema.PrimaryKey, Unique: true}}, unique...)
	}
	for _, ix := range unique {
		if !ix.Unique {
			continue
		}
		// A built UNIQUE index (it has an id) is enforced; one an older
		// release recorded on a log table is not.
		typ, enforced := "UNIQUE", "NO"
		if ix.ID > 0 {
			enforced = "YES"
		}
		if ix.Name == "PRIMARY" {
			typ, enforced = "PRIMARY KEY", "YES"
		}
		switch table {
		case "table_constraints":
			rows = append(rows, []any{catalog, db, ix.Name, db, name, typ, enforced})
		case "key_column_usage":
			for i, c := range ix.Columns {
				rows = append(rows, []any{catalog, db, ix.Name, catalog, db, name, c, int64(i + 1), nil, nil, nil, nil})
			}
		}
	}
	for _, fk := range info.ForeignKeys {
		switch table {
		case "table_constraints":
			rows = append(rows, []any{catalog, db, fk.Name, db, name, "FOREIGN KEY", "NO"})
		case "key_column_usage":
			for i, c := range fk.Columns {
				rows = append(rows, []any{catalog, db, fk.Name, catalog, db, name, c, int64(i + 1), int64(i + 1),
					fk.RefTable.Database, fk.RefTable.Table, fk.RefColumns[i]})
			}
		case "referential_constraints":
			rows = append(rows, []any{catalog, db, fk.Name, catalog, fk.RefTable.Database, referencedKey(ctx, s, fk),
				"NONE", metadata.Action(fk.OnUpdate), metadata.Action(fk.OnDelete), name, fk.RefTable.Table})
		}
	}
	return rows
}

// referencedKey names the parent's primary key or UNIQUE index whose
// columns a foreign key references, as referential_constraints'
// unique_constraint_name; nil when the parent has none (or is gone).
func referencedKey(ctx context.Context, s *Session, fk metadata.ForeignKey) any {
	parent, err := s.Engine.TableInfo(ctx, fk.RefTable)
	if err != nil {
		return nil
	}
	same := func(cols []string) bool {
		return len(cols) == len(fk.RefColumns) && !slices.ContainsFunc(cols, func(c string) bool {
			return !slices.ContainsFunc(fk.RefColumns, func(r string) bool { return strings.EqualFold(r, c) })
		})
	}
	if parent.HasPrimaryKey() && same(parent.Schema.PrimaryKey) {
		return "PRIMARY"
	}
	for _, ix := range parent.Indexes {
		if ix.Unique && same(ix.Columns) {
			return ix.Name
		}
	}
	return nil
}

// lakeSnapshotRows are the rows of `t$lake$snapshots` (see
// sqlplan.LakeSnapshotsTable): the snapshots the lake keeps, oldest
// first.
func (s *Session) lakeSnapshotRows(ctx context.Context, table *metadata.TableInfo) ([][]any, error) {
	if s.Lake == nil {
		return nil, nil
	}
	readable, hasReadable, err := s.Engine.ReadableLakeSnapshot(ctx, table.Path)
	if err != nil {
		return nil, err
	}
	ms, err := s.Lake.Manifests(ctx, table.TableID)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, 0, len(ms))
	for _, m := range ms {
		var n, size int64
		for _, f := range m.Files {
			n += f.RowCount
			size += f.SizeBytes
		}
		offsets := make([]string, len(m.TieredOffsets))
		for i, o := range m.TieredOffsets {
			if o.PartitionName != "" {
				offsets[i] = o.PartitionName + "/" + strconv.Itoa(int(o.Bucket)) + ":" + strconv.FormatInt(o.Offset, 10)
			} else {
				offsets[i] = strconv.Itoa(int(o.Bucket)) + ":" + strconv.FormatInt(o.Offset, 10)
			}
		}
		rows = append(rows, []any{m.SnapshotID, m.CommittedAt.UTC(), int64(len(m.Files)), n, size,
			strings.Join(offsets, ", "), hasReadable && readable.SnapshotID == m.SnapshotID})
	}
	return rows, nil
}
