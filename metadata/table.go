package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultDatabase is the database a connection starts in.
const DefaultDatabase = "fluss"

// TablePath names a table: database and table name.
type TablePath struct {
	Database string `json:"database"`
	Table    string `json:"table"`
}

func (p TablePath) String() string { return p.Database + "." + p.Table }

// NonPartitioned is the PartitionID of a bucket of a table without
// partitions.
const NonPartitioned int64 = -1

// TableBucket identifies one bucket: of a table, or of one partition of a
// partitioned table. It is comparable and used as a map key.
type TableBucket struct {
	TableID int64 `json:"table_id"`
	// PartitionID is NonPartitioned for tables without partitions.
	PartitionID int64 `json:"partition_id"`
	Bucket      int32 `json:"bucket"`
}

func (b TableBucket) String() string {
	if b.PartitionID == NonPartitioned {
		return fmt.Sprintf("TableBucket{table=%d, bucket=%d}", b.TableID, b.Bucket)
	}
	return fmt.Sprintf("TableBucket{table=%d, partition=%d, bucket=%d}", b.TableID, b.PartitionID, b.Bucket)
}

// PartitionInfo describes one partition of a table.
type PartitionInfo struct {
	ID int64 `json:"id"`
	// Name is the partition values rendered and joined by "$", in
	// partition-key order (e.g. "2026-01-01$US").
	Name string `json:"name"`
	// Values are the rendered partition values in partition-key order.
	Values []string `json:"values"`
}

// TableDescriptor is what CREATE TABLE asks for, before the catalog assigns
// ids and resolves defaults.
type TableDescriptor struct {
	Path          TablePath
	Schema        Schema
	PartitionKeys []string
	// Options are the raw WITH options; validated by NewTableInfo.
	Options map[string]string
	Comment string
	// Indexes are the secondary indexes a MySQL-dialect CREATE TABLE
	// declared (see CheckIndex): kept in the KV store next to the rows of
	// a primary-key table, a UNIQUE one enforced.
	Indexes []DeclaredIndex
	// ForeignKeys are the FOREIGN KEY clauses a MySQL-dialect CREATE
	// TABLE declared: recorded, not enforced (see ForeignKey).
	ForeignKeys []ForeignKey
}

// DeclaredIndex is a secondary index (INDEX, KEY, UNIQUE) of a
// primary-key table.
type DeclaredIndex struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Unique  bool     `json:"unique,omitempty"`
	// ID keys the index's entries in the KV store; unique within its
	// table, assigned by NewTableInfo and WithIndex.
	ID int32 `json:"id,omitempty"`
}

// MaxIndexes bounds the secondary indexes of one table.
const MaxIndexes = 64

// CheckIndex checks a secondary index against its table and returns it
// with its columns spelled as the table spells them: a primary-key table
// only (a log table has no key state and is always scanned), a name not
// taken by another index or by PRIMARY, distinct existing columns that
// are not ARRAY, MAP or ROW, and, on a partitioned table, a UNIQUE index
// holding every partition key, as MySQL requires (so a value is unique
// within its partition and, since the partition keys are part of it,
// across the table). [ErrInvalidTable, ErrExists]
func (t *TableInfo) CheckIndex(ix DeclaredIndex) (DeclaredIndex, error) {
	if !t.HasPrimaryKey() {
		what := "an index"
		if ix.Unique {
			what = "a UNIQUE index"
		}
		return ix, fmt.Errorf("%w: %s (%s) needs a primary-key table: %s is a log table, which keeps no key state and is always scanned", ErrInvalidTable, what, ix.Name, t.Path)
	}
	if ix.Name == "" {
		return ix, fmt.Errorf("%w: an index of %s has no name", ErrInvalidTable, t.Path)
	}
	if strings.EqualFold(ix.Name, "PRIMARY") {
		return ix, fmt.Errorf("%w: index name PRIMARY is the primary key's", ErrInvalidTable)
	}
	for _, o := range t.Indexes {
		if strings.EqualFold(o.Name, ix.Name) {
			return ix, fmt.Errorf("%w: index %s of %s", ErrExists, ix.Name, t.Path)
		}
	}
	if len(t.Indexes) >= MaxIndexes {
		return ix, fmt.Errorf("%w: table %s has %d indexes, the most a table may have", ErrInvalidTable, t.Path, MaxIndexes)
	}
	cols, err := resolveKeyColumns(t.Schema, "index "+ix.Name, ix.Columns)
	if err != nil {
		return ix, err
	}
	if len(cols) == 0 {
		return ix, fmt.Errorf("%w: index %s has no columns", ErrInvalidTable, ix.Name)
	}
	for _, name := range cols {
		if c := t.Schema.Columns[t.Schema.ColumnIndex(name)]; c.Type.IsNested() {
			return ix, fmt.Errorf("%w: index %s: column %q has type %s; ARRAY, MAP and ROW cannot be indexed", ErrInvalidTable, ix.Name, c.Name, c.Type)
		}
	}
	if ix.Unique {
		for _, k := range t.PartitionKeys {
			if !containsFold(cols, k) {
				return ix, fmt.Errorf("%w: UNIQUE index %s must include every partition key of %s (%s), as in MySQL", ErrInvalidTable, ix.Name, t.Path, strings.Join(t.PartitionKeys, ", "))
			}
		}
	}
	ix.Columns = cols
	return ix, nil
}

// WithIndex returns a copy of t with the index added (checked by
// CheckIndex) under a new ID.
func (t *TableInfo) WithIndex(ix DeclaredIndex) (TableInfo, error) {
	ix, err := t.CheckIndex(ix)
	if err != nil {
		return TableInfo{}, err
	}
	out := *t
	for _, o := range t.Indexes {
		ix.ID = max(ix.ID, o.ID)
	}
	ix.ID++
	out.Indexes = append(slices.Clone(t.Indexes), ix)
	return out, nil
}

// WithoutIndex returns a copy of t without the named index and the index
// removed. [ErrNotFound]
func (t *TableInfo) WithoutIndex(name string) (TableInfo, DeclaredIndex, error) {
	i := slices.IndexFunc(t.Indexes, func(ix DeclaredIndex) bool { return strings.EqualFold(ix.Name, name) })
	if i < 0 {
		return TableInfo{}, DeclaredIndex{}, fmt.Errorf("%w: index %s of %s", ErrNotFound, name, t.Path)
	}
	out := *t
	out.Indexes = slices.Delete(slices.Clone(t.Indexes), i, i+1)
	return out, t.Indexes[i], nil
}

// IndexColumns returns the column indexes of a secondary index.
func (t *TableInfo) IndexColumns(ix DeclaredIndex) []int {
	idx, _ := t.Schema.Indexes(ix.Columns)
	return idx
}

// TableInfo is a created table: its descriptor with ids and every default
// resolved. It is immutable; ALTER TABLE produces a new TableInfo.
type TableInfo struct {
	Path     TablePath `json:"path"`
	TableID  int64     `json:"table_id"`
	SchemaID int32     `json:"schema_id"`
	Schema   Schema    `json:"schema"`
	// PastSchemas are the table's earlier schemas, oldest first; empty
	// for a table whose schema never changed (and in a catalog written
	// before schemas could change).
	PastSchemas   []PastSchema      `json:"past_schemas,omitempty"`
	PartitionKeys []string          `json:"partition_keys,omitempty"`
	BucketKeys    []string          `json:"bucket_keys,omitempty"`
	NumBuckets    int               `json:"num_buckets"`
	Options       map[string]string `json:"options,omitempty"`
	Comment       string            `json:"comment,omitempty"`
	Indexes       []DeclaredIndex   `json:"indexes,omitempty"`
	// ForeignKeys are recorded, never enforced; a catalog written before
	// they were recorded has none.
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
	// Config is the parsed form of Options.
	Config TableConfig `json:"-"`
}

// PastSchema is one of a table's earlier schemas: its id and how many of
// the current schema's columns it had. A schema changes only by columns
// added at the end (ADD COLUMN, nullable), so every earlier schema is a
// prefix of the current one and a column's position is its column id:
// a row written under an earlier schema reads the columns it lacks as
// NULL.
type PastSchema struct {
	ID      int32 `json:"id"`
	Columns int   `json:"columns"`
}

// SchemaColumns returns how many columns the table's schema id had: the
// current schema's count for SchemaID, an earlier one's for a past id;
// ok is false for an id the table never had.
func (t *TableInfo) SchemaColumns(id int32) (n int, ok bool) {
	if id == t.SchemaID {
		return len(t.Schema.Columns), true
	}
	for _, p := range t.PastSchemas {
		if p.ID == id {
			return p.Columns, true
		}
	}
	return 0, false
}

// HasSchema reports whether id is the table's schema id or one of its
// earlier ones.
func (t *TableInfo) HasSchema(id int32) bool {
	_, ok := t.SchemaColumns(id)
	return ok
}

// HadWidth reports whether one of the table's earlier schemas had n
// columns: a row, key row or file of that many columns is of one.
func (t *TableInfo) HadWidth(n int) bool {
	for _, p := range t.PastSchemas {
		if p.Columns == n {
			return true
		}
	}
	return false
}

// AutoIncrementIndex returns the column index of the table's
// auto-increment column (auto-increment.fields), or -1 when it has none.
func (t *TableInfo) AutoIncrementIndex() int {
	if len(t.Config.AutoIncrement) == 0 {
		return -1
	}
	return t.Schema.ColumnIndex(t.Config.AutoIncrement[0])
}

// HasPrimaryKey reports whether the table is a primary-key table.
func (t *TableInfo) HasPrimaryKey() bool { return len(t.Schema.PrimaryKey) > 0 }

// IsPartitioned reports whether the table has partition keys.
func (t *TableInfo) IsPartitioned() bool { return len(t.PartitionKeys) > 0 }

// PhysicalPrimaryKey is the primary key minus the partition keys.
func (t *TableInfo) PhysicalPrimaryKey() []string {
	var out []string
	for _, k := range t.Schema.PrimaryKey {
		if !containsFold(t.PartitionKeys, k) {
			out = append(out, k)
		}
	}
	return out
}

// PrimaryKeyIndexes returns the column indexes of the primary key, in key
// order (nil for a log table).
func (t *TableInfo) PrimaryKeyIndexes() []int {
	if len(t.Schema.PrimaryKey) == 0 {
		return nil
	}
	idx, _ := t.Schema.Indexes(t.Schema.PrimaryKey)
	return idx
}

// PhysicalKeyIndexes returns the column indexes of the physical primary
// key (the primary key minus the partition keys), in key order: the
// columns that identify a row inside one partition's bucket.
func (t *TableInfo) PhysicalKeyIndexes() []int {
	phys := t.PhysicalPrimaryKey()
	if len(phys) == 0 {
		return nil
	}
	idx, _ := t.Schema.Indexes(phys)
	return idx
}

// PartitionKeyIndexes returns the column indexes of the partition keys.
func (t *TableInfo) PartitionKeyIndexes() []int {
	idx, _ := t.Schema.Indexes(t.PartitionKeys)
	return idx
}

// HasPrefixLookup reports whether the table answers prefix lookups
// (Fluss's lookupBy): a primary-key table whose bucket key is the leading
// columns, and not all, of its physical primary key, so that the rows of
// one bucket-key value sit together in one bucket's key range.
func (t *TableInfo) HasPrefixLookup() bool {
	if !t.HasPrimaryKey() {
		return false
	}
	phys, bucket := t.PhysicalKeyIndexes(), t.BucketKeyIndexes()
	if len(bucket) == 0 || len(bucket) >= len(phys) {
		return false
	}
	for i, c := range bucket {
		if phys[i] != c {
			return false
		}
	}
	return true
}

// BucketKeyIndexes returns the column indexes of the bucket keys.
func (t *TableInfo) BucketKeyIndexes() []int {
	idx, _ := t.Schema.Indexes(t.BucketKeys)
	return idx
}

// IsPartitionKey reports whether the named column is a partition key.
func (t *TableInfo) IsPartitionKey(name string) bool { return containsFold(t.PartitionKeys, name) }

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// OffsetSpec chooses which offset ListOffsets returns per bucket.
type OffsetSpec int

const (
	// OffsetEarliest is the log start offset.
	OffsetEarliest OffsetSpec = iota
	// OffsetLatest is the high watermark.
	OffsetLatest
)

// KvSnapshot is the latest KV snapshot of one bucket of a primary-key table.
type KvSnapshot struct {
	SnapshotID int64 `json:"snapshot_id"`
	// LogOffset is the log offset to read after the snapshot: the
	// inclusive start of the tail the snapshot does not contain.
	LogOffset int64 `json:"log_offset"`
}

// KvSnapshots are the latest KV snapshots of the buckets of a table or of
// one partition; a bucket without a snapshot has no entry.
type KvSnapshots struct {
	TableID     int64
	PartitionID int64
	Buckets     map[int32]KvSnapshot
	NumBuckets  int
}

// LakeSnapshot is a committed state of a table's lake.
type LakeSnapshot struct {
	SnapshotID int64
	// TieredOffsets maps each tiered bucket to its tiered offset: every
	// record with a smaller offset is in the lake.
	TieredOffsets map[TableBucket]int64
	// PartitionNames maps the partition ids of TieredOffsets to names.
	PartitionNames map[int64]string
}

// MaxNameLength is the longest database, table or partition name, as in
// Fluss.
const MaxNameLength = 200

// reservedColumns are Fluss's system column names (the changelog virtual
// table adds the last three in front of the columns).
var reservedColumns = []string{"__offset", "__timestamp", "__bucket", "_change_type", "_log_offset", "_commit_timestamp"}

// ValidateName checks a database or table name as Fluss does: 1 to 200
// ASCII letters, digits, '_' or '-', not starting with "__" (reserved for
// system names). what names the kind of name in the error.
func ValidateName(what, name string) error {
	if err := validatePartitionValue(name); err != nil {
		return fmt.Errorf("%w: %s name %q is invalid: %s", ErrInvalidTable, what, name, err)
	}
	return nil
}

// Validate checks both names of p.
func (p TablePath) Validate() error {
	if err := ValidateName("database", p.Database); err != nil {
		return err
	}
	return ValidateName("table", p.Table)
}

// NewTableInfo validates a CREATE TABLE descriptor and resolves it into a
// TableInfo: column ids 0..n-1, primary key columns made NOT NULL, the
// bucket count (bucket.num, else defaultBuckets), the bucket key
// (bucket.key, else the physical primary key of a primary-key table, none
// for a log table) and the parsed Config. It refuses, with the sentinel in
// brackets: bad names, no columns, duplicate column names
// (case-insensitive) or reserved ones [ErrInvalidTable]; bad types
// [ErrInvalidType]; key columns that do not exist [ErrInvalidTable and
// ErrNotFound]; nested key columns, partition keys of a type Fluss cannot
// partition by, partition keys outside the primary key, a bucket key
// outside the physical primary key [ErrInvalidTable]; a DEFAULT on a
// primary-key column [ErrInvalidTable] or one that does not fit its
// column [ErrInvalidValue]; an index CheckIndex refuses [ErrInvalidTable,
// ErrExists]; and every bad option [ErrInvalidOption, or ErrUnsupported
// for features fluss lacks]. The indexes get ids 1..n.
func NewTableInfo(desc TableDescriptor, tableID int64, defaultBuckets int, now time.Time) (TableInfo, error) {
	if err := desc.Path.Validate(); err != nil {
		return TableInfo{}, err
	}
	cols := slices.Clone(desc.Schema.Columns)
	if len(cols) == 0 {
		return TableInfo{}, fmt.Errorf("%w: table %s has no columns", ErrInvalidTable, desc.Path)
	}
	seen := make(map[string]bool, len(cols))
	for i := range cols {
		c := &cols[i]
		if c.Name == "" {
			return TableInfo{}, fmt.Errorf("%w: column %d has no name", ErrInvalidTable, i+1)
		}
		k := strings.ToLower(c.Name)
		if seen[k] {
			return TableInfo{}, fmt.Errorf("%w: column %q is declared twice", ErrInvalidTable, c.Name)
		}
		seen[k] = true
		if slices.Contains(reservedColumns, k) {
			return TableInfo{}, fmt.Errorf("%w: column name %q is reserved for system columns (%s)", ErrInvalidTable, c.Name, strings.Join(reservedColumns, ", "))
		}
		if err := c.Type.Validate(); err != nil {
			return TableInfo{}, fmt.Errorf("column %q: %w", c.Name, err)
		}
		c.ID = int32(i)
	}
	schema := Schema{Columns: cols}

	// Key names are stored as the columns spell them.
	pk, err := resolveKeyColumns(schema, "primary key", desc.Schema.PrimaryKey)
	if err != nil {
		return TableInfo{}, err
	}
	for _, name := range pk {
		c := &schema.Columns[schema.ColumnIndex(name)]
		c.NotNull = true
		if c.Default != nil {
			return TableInfo{}, fmt.Errorf("%w: primary-key column %q takes no DEFAULT: an INSERT into a primary-key table gives every key column", ErrInvalidTable, c.Name)
		}
	}
	for _, c := range schema.Columns {
		if err := validateDefault(c); err != nil {
			return TableInfo{}, err
		}
	}
	schema.PrimaryKey = pk
	partKeys, err := resolveKeyColumns(schema, "partition key", desc.PartitionKeys)
	if err != nil {
		return TableInfo{}, err
	}
	for _, name := range partKeys {
		c := schema.Columns[schema.ColumnIndex(name)]
		if !PartitionTypeAllowed(c.Type) {
			return TableInfo{}, fmt.Errorf("%w: partition key %q has type %s; partition keys must be CHAR, STRING, BOOLEAN, BINARY, BYTES, an integer, FLOAT, DOUBLE, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ", ErrInvalidTable, c.Name, c.Type)
		}
		if len(pk) > 0 && !containsFold(pk, name) {
			return TableInfo{}, fmt.Errorf("%w: partition key %q must be part of the primary key (%s)", ErrInvalidTable, name, strings.Join(pk, ", "))
		}
	}

	info := TableInfo{
		Path:          desc.Path,
		TableID:       tableID,
		SchemaID:      1,
		Schema:        schema,
		PartitionKeys: partKeys,
		Options:       maps.Clone(desc.Options),
		Comment:       desc.Comment,
		ForeignKeys:   slices.Clone(desc.ForeignKeys),
		CreatedAt:     now.UTC(),
	}
	for _, ix := range desc.Indexes {
		if info, err = info.WithIndex(ix); err != nil {
			return TableInfo{}, err
		}
	}
	if err := checkForeignKeys(&info); err != nil {
		return TableInfo{}, err
	}
	if len(pk) > 0 && len(info.PhysicalPrimaryKey()) == 0 {
		return TableInfo{}, fmt.Errorf("%w: the primary key (%s) must have a column that is not a partition key", ErrInvalidTable, strings.Join(pk, ", "))
	}

	// bucket.num and bucket.key are resolved once, here: they decide where
	// rows live and never change afterwards.
	info.NumBuckets = max(defaultBuckets, 1)
	if s, ok := desc.Options[OptBucketNum]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > MaxBuckets {
			return TableInfo{}, fmt.Errorf("%w: %s = %q: must be an integer in [1, %d]", ErrInvalidOption, OptBucketNum, s, MaxBuckets)
		}
		info.NumBuckets = n
	}
	if info.NumBuckets > MaxBuckets {
		return TableInfo{}, fmt.Errorf("%w: default bucket number %d exceeds %d", ErrInvalidOption, info.NumBuckets, MaxBuckets)
	}
	if s := strings.TrimSpace(desc.Options[OptBucketKey]); s != "" {
		bk, err := resolveKeyColumns(schema, "bucket key", splitList(s))
		if err != nil {
			return TableInfo{}, fmt.Errorf("%s: %w", OptBucketKey, err)
		}
		if len(pk) > 0 {
			phys := info.PhysicalPrimaryKey()
			for _, k := range bk {
				if !containsFold(phys, k) {
					return TableInfo{}, fmt.Errorf("%w: bucket key %q must be part of the primary key without the partition keys (%s)", ErrInvalidTable, k, strings.Join(phys, ", "))
				}
			}
		}
		info.BucketKeys = bk
	} else if len(pk) > 0 {
		info.BucketKeys = info.PhysicalPrimaryKey()
	}
	for _, k := range slices.Concat(pk, info.BucketKeys) {
		c := schema.Columns[schema.ColumnIndex(k)]
		if c.Type.IsNested() {
			return TableInfo{}, fmt.Errorf("%w: key column %q has type %s; ARRAY, MAP and ROW cannot be keys", ErrInvalidTable, c.Name, c.Type)
		}
	}
	if err := info.Resolve(); err != nil {
		return TableInfo{}, err
	}
	return info, nil
}

// resolveKeyColumns checks that names are distinct existing columns and
// returns them spelled as the columns are.
func resolveKeyColumns(s Schema, what string, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		i := s.ColumnIndex(n)
		if i < 0 {
			return nil, fmt.Errorf("%w: %s column %q: %w", ErrInvalidTable, what, n, ErrNotFound)
		}
		name := s.Columns[i].Name
		if slices.Contains(out, name) {
			return nil, fmt.Errorf("%w: %s column %q is listed twice", ErrInvalidTable, what, n)
		}
		out = append(out, name)
	}
	return out, nil
}

// Resolve parses Options into Config and checks the options that name
// columns against the schema. NewTableInfo and AlterOptions call it; call
// it after decoding a TableInfo from JSON, where Config is not stored.
func (t *TableInfo) Resolve() error {
	cfg, err := ParseTableConfig(t.Options)
	if err != nil {
		return err
	}
	pkTable := t.HasPrimaryKey()
	column := func(opt, name string) (Column, error) {
		i := t.Schema.ColumnIndex(name)
		if i < 0 {
			return Column{}, fmt.Errorf("%w: %s names column %q: %w", ErrInvalidOption, opt, name, ErrNotFound)
		}
		return t.Schema.Columns[i], nil
	}

	if cfg.MergeEngine != MergeLastRow && !pkTable {
		return fmt.Errorf("%w: %s = %q needs a primary-key table", ErrInvalidOption, OptMergeEngine, t.Options[OptMergeEngine])
	}
	switch {
	case cfg.MergeEngine == MergeVersioned:
		if cfg.VersionColumn == "" {
			return fmt.Errorf("%w: the versioned merge engine needs %s", ErrInvalidOption, OptVersionColumn)
		}
		c, err := column(OptVersionColumn, cfg.VersionColumn)
		if err != nil {
			return err
		}
		switch c.Type.Root {
		case Int, BigInt, Timestamp, TimestampLTZ:
		default:
			return fmt.Errorf("%w: %s column %q has type %s; it must be INT, BIGINT, TIMESTAMP or TIMESTAMP_LTZ", ErrInvalidOption, OptVersionColumn, c.Name, c.Type)
		}
		cfg.VersionColumn = c.Name
	case cfg.VersionColumn != "":
		return fmt.Errorf("%w: %s is only meaningful with %s = 'versioned'", ErrInvalidOption, OptVersionColumn, OptMergeEngine)
	}
	if cfg.MergeEngine == MergeAggregation {
		aggs := make(map[string]AggFunc, len(cfg.Aggs))
		for name, f := range cfg.Aggs {
			opt := "fields." + name + ".agg"
			c, err := column(opt, name)
			if err != nil {
				return err
			}
			if containsFold(t.Schema.PrimaryKey, c.Name) {
				return fmt.Errorf("%w: %s: %s is a primary-key column; the aggregation merge engine aggregates the other columns", ErrInvalidOption, opt, c.Name)
			}
			if err := f.CheckType(c.Type); err != nil {
				return fmt.Errorf("%s: %w", opt, err)
			}
			aggs[c.Name] = f
		}
		delims := make(map[string]string, len(cfg.ListaggDelimiters))
		for name, d := range cfg.ListaggDelimiters {
			opt := "fields." + name + ".listagg.delimiter"
			c, err := column(opt, name)
			if err != nil {
				return err
			}
			if f := aggs[c.Name]; f != AggListagg && f != AggStringAgg {
				return fmt.Errorf("%w: %s: column %s is not aggregated by listagg", ErrInvalidOption, opt, c.Name)
			}
			delims[c.Name] = d
		}
		cfg.Aggs, cfg.ListaggDelimiters = aggs, delims
	} else if len(cfg.Aggs)+len(cfg.ListaggDelimiters) > 0 {
		return fmt.Errorf("%w: fields.<column>.agg and fields.<column>.listagg.delimiter are only meaningful with %s = 'aggregation'", ErrInvalidOption, OptMergeEngine)
	}
	switch {
	case !pkTable:
		if cfg.DeleteBehavior != "" {
			return fmt.Errorf("%w: The option '%s' is only supported for primary key tables.", ErrInvalidOption, OptDeleteBehavior)
		}
	case cfg.DeleteBehavior == "":
		cfg.DeleteBehavior = DeleteAllow
		if cfg.MergeEngine != MergeLastRow {
			cfg.DeleteBehavior = DeleteIgnore
		}
	case cfg.DeleteBehavior == DeleteAllow && (cfg.MergeEngine == MergeFirstRow || cfg.MergeEngine == MergeVersioned):
		return fmt.Errorf("%w: Table with '%s' merge engine does not support delete operations. The '%s' config must be set to 'ignore' or 'disable', but got 'allow'.",
			ErrInvalidOption, strings.ToUpper(string(cfg.MergeEngine)), OptDeleteBehavior)
	}

	if cfg.StatisticsColumns != nil {
		names := make([]string, 0, len(cfg.StatisticsColumns))
		for _, n := range cfg.StatisticsColumns {
			c, err := column(OptStatisticsColumns, n)
			if err != nil {
				return err
			}
			if !c.Type.StatsSupported() {
				return fmt.Errorf("%w: %s: column %q of type %s has no statistics", ErrInvalidOption, OptStatisticsColumns, c.Name, c.Type)
			}
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
		cfg.StatisticsColumns = names
	}

	if len(cfg.AutoIncrement) > 0 {
		if !pkTable {
			return fmt.Errorf("%w: %s needs a primary-key table", ErrInvalidOption, OptAutoIncrementFields)
		}
		c, err := column(OptAutoIncrementFields, cfg.AutoIncrement[0])
		if err != nil {
			return err
		}
		if c.Type.Root != Int && c.Type.Root != BigInt {
			return fmt.Errorf("%w: %s column %q has type %s; it must be INT or BIGINT", ErrInvalidOption, OptAutoIncrementFields, c.Name, c.Type)
		}
		// Fluss keeps the column out of the key and nullable (a write
		// never gives it, so a partial update leaves it out). fluss also
		// takes it as a key column, MySQL's AUTO_INCREMENT key, which the
		// ORMs need; a partition key it cannot be, as a generated value
		// would pick the partition.
		switch {
		case t.IsPartitionKey(c.Name):
			return fmt.Errorf("%w: %s column %q is a partition key; an auto-increment column must not decide the partition", ErrInvalidOption, OptAutoIncrementFields, c.Name)
		case !containsFold(t.Schema.PrimaryKey, c.Name) && c.NotNull:
			return fmt.Errorf("%w: %s column %q is NOT NULL; outside the primary key an auto-increment column must be nullable, as in Fluss", ErrInvalidOption, OptAutoIncrementFields, c.Name)
		}
		cfg.AutoIncrement = []string{c.Name}
	}

	ap := &cfg.AutoPartition
	if ap.Enabled || ap.Key != "" {
		if !t.IsPartitioned() {
			return fmt.Errorf("%w: %s needs a partitioned table", ErrInvalidOption, OptAutoPartitionEnabled)
		}
		switch {
		case ap.Key != "":
			i := slices.IndexFunc(t.PartitionKeys, func(k string) bool { return strings.EqualFold(k, ap.Key) })
			if i < 0 {
				return fmt.Errorf("%w: %s = %q is not a partition key", ErrInvalidOption, OptAutoPartitionKey, ap.Key)
			}
			ap.Key = t.PartitionKeys[i]
		case len(t.PartitionKeys) == 1:
			ap.Key = t.PartitionKeys[0]
		default:
			return fmt.Errorf("%w: %s must name the time partition key of a table with several partition keys", ErrInvalidOption, OptAutoPartitionKey)
		}
		if len(t.PartitionKeys) > 1 {
			// As in Fluss: only the time key is known in advance.
			if ap.PrecreateSet && ap.NumPrecreate > 0 {
				return fmt.Errorf("%w: For a partitioned table with multiple partition keys, auto pre-create is unsupported and this value must be set to 0, but is %d", ErrInvalidOption, ap.NumPrecreate)
			}
			ap.NumPrecreate = 0
		}
	}
	t.Config = cfg
	return nil
}

// AlterOptions applies ALTER TABLE ... SET options to t and returns the new
// TableInfo; t is not modified. Only options that do not change how
// existing data is laid out may change (see alterableOptions): the lake
// switch, format and freshness, the log TTL, the statistics columns, the
// auto-partition counts and the KV snapshot interval. A known option that
// cannot change (bucket.num, bucket.key, the merge engine, ...) is
// ErrUnsupported; an unknown one ErrInvalidOption.
func AlterOptions(t TableInfo, set map[string]string) (TableInfo, error) {
	keys := slices.Sorted(maps.Keys(set))
	for _, k := range keys {
		switch {
		case slices.Contains(alterableOptions, k):
		case slices.Contains(knownOptions, k):
			return TableInfo{}, fmt.Errorf("%w: table option %q cannot be changed after CREATE TABLE (changeable: %s)", ErrUnsupported, k, strings.Join(alterableOptions, ", "))
		default:
			return TableInfo{}, fmt.Errorf("%w: unknown table option %q (known: %s)", ErrInvalidOption, k, strings.Join(knownOptions, ", "))
		}
	}
	out := t
	out.Options = maps.Clone(t.Options)
	if out.Options == nil {
		out.Options = make(map[string]string, len(set))
	}
	maps.Copy(out.Options, set)
	if err := out.Resolve(); err != nil {
		return TableInfo{}, err
	}
	return out, nil
}

// AddColumns returns t with cols added at the end of its schema under a
// new schema id, the old schema kept in PastSchemas, as Fluss evolves a
// schema: only nullable columns, only at the end, under names the table
// does not have (Fluss's error texts). A column may have a constant
// DEFAULT, which the rows stored before read (Column.PadValue), and may
// then be NOT NULL, as MySQL allows. Each column gets the next column
// id.
func AddColumns(t TableInfo, cols []Column) (TableInfo, error) {
	if len(cols) == 0 {
		return TableInfo{}, fmt.Errorf("%w: ALTER TABLE %s adds no column", ErrInvalidValue, t.Path)
	}
	next := int32(0)
	for _, c := range t.Schema.Columns {
		next = max(next, c.ID+1)
	}
	out := t
	out.Schema.Columns = slices.Clone(t.Schema.Columns)
	for _, c := range cols {
		if out.Schema.ColumnIndex(c.Name) >= 0 {
			return TableInfo{}, fmt.Errorf("%w: Column %s already exists.", ErrExists, c.Name)
		}
		if c.Default.IsCurrentTimestamp() {
			return TableInfo{}, fmt.Errorf("%w: column %s added by ALTER TABLE cannot default to %s: the rows stored have no time of their own to take", ErrUnsupported, c.Name, c.Default.Expr)
		}
		if c.NotNull && c.Default == nil {
			// Fluss's rule; a constant default gives the rows stored a
			// value, so NOT NULL holds for them too, as MySQL allows.
			return TableInfo{}, fmt.Errorf("%w: Column %s must be nullable.", ErrUnsupported, c.Name)
		}
		if err := validateDefault(c); err != nil {
			return TableInfo{}, err
		}
		if c.Name == "" {
			return TableInfo{}, fmt.Errorf("%w: ALTER TABLE %s adds a column with no name", ErrInvalidTable, t.Path)
		}
		if slices.Contains(reservedColumns, strings.ToLower(c.Name)) {
			return TableInfo{}, fmt.Errorf("%w: column name %q is reserved for system columns (%s)", ErrInvalidTable, c.Name, strings.Join(reservedColumns, ", "))
		}
		if err := c.Type.Validate(); err != nil {
			return TableInfo{}, fmt.Errorf("column %q: %w", c.Name, err)
		}
		c.ID = next
		next++
		out.Schema.Columns = append(out.Schema.Columns, c)
	}
	out.PastSchemas = append(slices.Clone(t.PastSchemas), PastSchema{ID: t.SchemaID, Columns: len(t.Schema.Columns)})
	out.SchemaID = t.SchemaID + 1
	return out, nil
}
