package sqlplan

import (
	"sort"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Statement is one parsed SQL statement: inert data, safe to share between
// goroutines once built (nothing mutates it; binding builds new plans).
type Statement interface {
	// NumInput is the number of placeholders the statement takes: the
	// number of positional placeholders (? or $N, the highest N for $N), or
	// of distinct :names.
	NumInput() int
	// String renders the statement in a canonical SQL form. Parse reads
	// it back: DDL to an equal statement, queries to an equivalent one.
	String() string
	isStatement()
}

// CreateDatabase is CREATE DATABASE [IF NOT EXISTS] name.
type CreateDatabase struct {
	Name        string
	IfNotExists bool
}

// DropDatabase is DROP DATABASE [IF EXISTS] name [CASCADE|RESTRICT].
type DropDatabase struct {
	Name     string
	IfExists bool
	// Cascade drops the database's tables too; without it (RESTRICT, the
	// default) a database that still has tables is not dropped.
	Cascade bool
}

// CreateTable is CREATE TABLE. Table.Path.Database is "" when the name is
// unqualified: the session fills in its current database.
// Primary-key columns are marked NotNull, as Fluss does.
type CreateTable struct {
	Table       metadata.TableDescriptor
	IfNotExists bool
	// Notes name the clauses of a MySQL-dialect statement that were
	// accepted without effect (secondary indexes, UNIQUE, ENGINE,
	// character sets) or recorded without being enforced (FOREIGN KEY),
	// one sentence each, for the session to log. They are not part of
	// the canonical form.
	Notes []string
}

// DropTable is DROP TABLE [IF EXISTS] [db.]t.
type DropTable struct {
	Table    metadata.TablePath
	IfExists bool
}

// PartitionValue is one key = 'value' pair of a partition spec. Value is
// the text as written (a quoted string, or a number or TRUE/FALSE without
// quotes); the catalog converts it to the key's type.
type PartitionValue struct {
	Key   string
	Value string
}

// AddPartition is ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (k = 'v', ...).
type AddPartition struct {
	Table       metadata.TablePath
	IfNotExists bool
	Spec        []PartitionValue
}

// DropPartition is ALTER TABLE t DROP [IF EXISTS] PARTITION (k = 'v', ...).
type DropPartition struct {
	Table    metadata.TablePath
	IfExists bool
	Spec     []PartitionValue
}

// SetOptions is ALTER TABLE t SET ('k' = 'v', ...).
type SetOptions struct {
	Table   metadata.TablePath
	Options map[string]string
}

// AddColumn is ALTER TABLE t ADD [COLUMN] col TYPE [COMMENT '...'][,
// ADD ...]: nullable columns appended at the end of the schema.
type AddColumn struct {
	Table   metadata.TablePath
	Columns []metadata.Column
}

// CreateIndex is CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON t (col,
// ...), and ALTER TABLE t ADD [UNIQUE] INDEX | KEY [name] (col, ...).
type CreateIndex struct {
	Table       metadata.TablePath
	Index       metadata.DeclaredIndex
	IfNotExists bool
}

// DropIndex is DROP INDEX [IF EXISTS] name ON t, and ALTER TABLE t DROP
// INDEX | KEY name.
type DropIndex struct {
	Table    metadata.TablePath
	Name     string
	IfExists bool
}

// ShowDatabases is SHOW DATABASES.
type ShowDatabases struct{}

// ShowTables is SHOW TABLES [FROM|IN db]; Database is "" for the current one.
type ShowTables struct {
	Database string
}

// ShowIndex is SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN}
// db]: the table's indexes, one row per column, as MySQL lists them.
type ShowIndex struct {
	Table metadata.TablePath
}

// ShowPartitions is SHOW PARTITIONS t.
type ShowPartitions struct {
	Table metadata.TablePath
}

// Describe is DESCRIBE t or DESC t.
type Describe struct {
	Table metadata.TablePath
}

// ShowCreateTable is SHOW CREATE TABLE t or SHOW CREATE VIEW v: the
// statement that creates the table or view as it is now.
type ShowCreateTable struct {
	Table metadata.TablePath
	// View is set for SHOW CREATE VIEW, which refuses a table.
	View bool
}

// SavepointKind is the statement a Savepoint is.
type SavepointKind uint8

const (
	// SavepointSet is SAVEPOINT name.
	SavepointSet SavepointKind = iota
	// SavepointRollbackTo is ROLLBACK [WORK] TO [SAVEPOINT] name.
	SavepointRollbackTo
	// SavepointRelease is RELEASE SAVEPOINT name.
	SavepointRelease
)

// Savepoint is SAVEPOINT name, ROLLBACK [WORK] TO [SAVEPOINT] name or
// RELEASE SAVEPOINT name: the connection's transaction acts on it.
type Savepoint struct {
	Kind SavepointKind
	Name string
}

// Use is USE db.
type Use struct {
	Database string
}

// Call is CALL namespace.procedure(arg, ...). Args are literals or
// placeholders; Values binds them.
type Call struct {
	// Procedure is the lower-case qualified name, e.g. "sys.tier".
	Procedure string
	Args      []Expr
}

// Explain is EXPLAIN [PLAN FOR] SELECT ... or EXPLAIN ANALYZE SELECT ...;
// one of Select and Compound (a query with set operations) is set.
type Explain struct {
	Select   *Select
	Compound *Compound
	// Analyze: run the query to its end and report what it read.
	Analyze bool
}

func (*CreateDatabase) isStatement()  {}
func (*DropDatabase) isStatement()    {}
func (*CreateTable) isStatement()     {}
func (*DropTable) isStatement()       {}
func (*AddPartition) isStatement()    {}
func (*DropPartition) isStatement()   {}
func (*SetOptions) isStatement()      {}
func (*AddColumn) isStatement()       {}
func (*CreateIndex) isStatement()     {}
func (*DropIndex) isStatement()       {}
func (*ShowDatabases) isStatement()   {}
func (*ShowTables) isStatement()      {}
func (*ShowPartitions) isStatement()  {}
func (*ShowIndex) isStatement()       {}
func (*Describe) isStatement()        {}
func (*ShowCreateTable) isStatement() {}
func (*Use) isStatement()             {}
func (*Savepoint) isStatement()       {}
func (*Call) isStatement()            {}
func (*Explain) isStatement()         {}
func (*Select) isStatement()          {}
func (*Insert) isStatement()          {}

func (*CreateDatabase) NumInput() int  { return 0 }
func (*DropDatabase) NumInput() int    { return 0 }
func (*CreateTable) NumInput() int     { return 0 }
func (*DropTable) NumInput() int       { return 0 }
func (*AddPartition) NumInput() int    { return 0 }
func (*DropPartition) NumInput() int   { return 0 }
func (*SetOptions) NumInput() int      { return 0 }
func (*AddColumn) NumInput() int       { return 0 }
func (*CreateIndex) NumInput() int     { return 0 }
func (*DropIndex) NumInput() int       { return 0 }
func (*ShowDatabases) NumInput() int   { return 0 }
func (*ShowTables) NumInput() int      { return 0 }
func (*ShowPartitions) NumInput() int  { return 0 }
func (*ShowIndex) NumInput() int       { return 0 }
func (*Describe) NumInput() int        { return 0 }
func (*ShowCreateTable) NumInput() int { return 0 }
func (*Use) NumInput() int             { return 0 }
func (*Savepoint) NumInput() int       { return 0 }
func (s *Call) NumInput() int          { return countInputs(s.Args...) }
func (s *Explain) NumInput() int       { return s.query().NumInput() }

// query is the statement explained.
func (s *Explain) query() Statement {
	if s.Compound != nil {
		return s.Compound
	}
	return s.Select
}

// Values binds the procedure's arguments: literals become their canonical
// values, placeholders the matching argument's Go value.
func (s *Call) Values(args []Arg) ([]any, error) {
	out := make([]any, len(s.Args))
	for i, a := range s.Args {
		switch x := a.(type) {
		case *Literal:
			out[i] = x.Value
		case *Param:
			v, err := lookupArg(x, args)
			if err != nil {
				return nil, err
			}
			out[i] = v
		default:
			return nil, unsupported("argument %s of %s", a, s.Procedure)
		}
	}
	return out, nil
}

func quotePath(p metadata.TablePath) string {
	if p.Database == "" {
		return quoteIdent(p.Table)
	}
	return quoteIdent(p.Database) + "." + quoteIdent(p.Table)
}

func quoteString(s string) string { return metadata.QuoteString(s) }

func formatOptions(opts map[string]string) string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = quoteString(k) + " = " + quoteString(opts[k])
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func formatSpec(spec []PartitionValue) string {
	parts := make([]string, len(spec))
	for i, kv := range spec {
		parts[i] = quoteIdent(kv.Key) + " = " + quoteString(kv.Value)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func quoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

func formatColumn(c metadata.Column) string {
	s := quoteIdent(c.Name) + " " + c.Type.String()
	if c.NotNull {
		s += " NOT NULL"
	}
	if c.Default != nil {
		s += " DEFAULT " + c.Default.SQL()
	}
	if c.Comment != "" {
		s += " COMMENT " + quoteString(c.Comment)
	}
	return s
}

func (s *CreateDatabase) String() string {
	if s.IfNotExists {
		return "CREATE DATABASE IF NOT EXISTS " + quoteIdent(s.Name)
	}
	return "CREATE DATABASE " + quoteIdent(s.Name)
}

func (s *DropDatabase) String() string {
	out := "DROP DATABASE "
	if s.IfExists {
		out += "IF EXISTS "
	}
	out += quoteIdent(s.Name)
	if s.Cascade {
		return out + " CASCADE"
	}
	return out + " RESTRICT"
}

func (s *CreateTable) String() string { return s.format(" ", ", ", "") }

// Pretty is String over several lines, one column per line, as SHOW
// CREATE TABLE shows it.
func (s *CreateTable) Pretty() string { return s.format("\n  ", ",\n  ", "\n") }

// format writes the statement with open after the opening parenthesis,
// sep between the columns and close before the closing one.
func (s *CreateTable) format(open, sep, close string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	d := &s.Table
	b.WriteString(quotePath(d.Path))
	b.WriteString(" (")
	if open != " " {
		b.WriteString(open)
	}
	for i, c := range d.Schema.Columns {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(formatColumn(c))
	}
	if len(d.Schema.PrimaryKey) > 0 {
		b.WriteString(sep + "PRIMARY KEY (" + quoteIdents(d.Schema.PrimaryKey) + ") NOT ENFORCED")
	}
	for _, ix := range d.Indexes {
		kind := "KEY "
		if ix.Unique {
			kind = "UNIQUE KEY "
		}
		b.WriteString(sep + kind + quoteIdent(ix.Name) + " (" + quoteIdents(ix.Columns) + ")")
	}
	for _, fk := range d.ForeignKeys {
		b.WriteString(sep + formatForeignKey(fk))
	}
	b.WriteString(close + ")")
	if d.Comment != "" {
		b.WriteString(" COMMENT " + quoteString(d.Comment))
	}
	if len(d.PartitionKeys) > 0 {
		b.WriteString(" PARTITIONED BY (" + quoteIdents(d.PartitionKeys) + ")")
	}
	if len(d.Options) > 0 {
		b.WriteString(" WITH " + formatOptions(d.Options))
	}
	return b.String()
}

func (s *DropTable) String() string {
	if s.IfExists {
		return "DROP TABLE IF EXISTS " + quotePath(s.Table)
	}
	return "DROP TABLE " + quotePath(s.Table)
}

func (s *AddPartition) String() string {
	ine := ""
	if s.IfNotExists {
		ine = "IF NOT EXISTS "
	}
	return "ALTER TABLE " + quotePath(s.Table) + " ADD " + ine + "PARTITION " + formatSpec(s.Spec)
}

func (s *DropPartition) String() string {
	ie := ""
	if s.IfExists {
		ie = "IF EXISTS "
	}
	return "ALTER TABLE " + quotePath(s.Table) + " DROP " + ie + "PARTITION " + formatSpec(s.Spec)
}

func (s *SetOptions) String() string {
	return "ALTER TABLE " + quotePath(s.Table) + " SET " + formatOptions(s.Options)
}

func (s *AddColumn) String() string {
	parts := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		parts[i] = "ADD COLUMN " + formatColumn(c)
	}
	return "ALTER TABLE " + quotePath(s.Table) + " " + strings.Join(parts, ", ")
}

func (s *CreateIndex) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if s.Index.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(quoteIdent(s.Index.Name) + " ON " + quotePath(s.Table) + " (")
	for i, c := range s.Index.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c))
	}
	b.WriteString(")")
	return b.String()
}

func (s *DropIndex) String() string {
	ie := ""
	if s.IfExists {
		ie = "IF EXISTS "
	}
	return "DROP INDEX " + ie + quoteIdent(s.Name) + " ON " + quotePath(s.Table)
}

func (s *ShowDatabases) String() string { return "SHOW DATABASES" }

func (s *ShowTables) String() string {
	if s.Database == "" {
		return "SHOW TABLES"
	}
	return "SHOW TABLES FROM " + quoteIdent(s.Database)
}

func (s *ShowPartitions) String() string { return "SHOW PARTITIONS " + quotePath(s.Table) }

func (s *ShowIndex) String() string { return "SHOW INDEX FROM " + quotePath(s.Table) }
func (s *Describe) String() string  { return "DESCRIBE " + quotePath(s.Table) }
func (s *ShowCreateTable) String() string {
	if s.View {
		return "SHOW CREATE VIEW " + quotePath(s.Table)
	}
	return "SHOW CREATE TABLE " + quotePath(s.Table)
}
func (s *Use) String() string { return "USE " + quoteIdent(s.Database) }

func (s *Savepoint) String() string {
	switch s.Kind {
	case SavepointRollbackTo:
		return "ROLLBACK TO SAVEPOINT " + quoteIdent(s.Name)
	case SavepointRelease:
		return "RELEASE SAVEPOINT " + quoteIdent(s.Name)
	}
	return "SAVEPOINT " + quoteIdent(s.Name)
}

func (s *Call) String() string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = a.String()
	}
	return "CALL " + s.Procedure + "(" + strings.Join(args, ", ") + ")"
}

func (s *Explain) String() string {
	if s.Analyze {
		return "EXPLAIN ANALYZE " + s.query().String()
	}
	return "EXPLAIN " + s.query().String()
}
