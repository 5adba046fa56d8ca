package query

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// showCreateTable answers SHOW CREATE TABLE t with one row (table,
// statement): the CREATE TABLE that makes the table as it is now, in
// fluss's own dialect, with the bucket count the table was given by
// default written out so that the statement recreates it exactly, and
// its foreign keys.
func (s *Session) showCreateTable(ctx context.Context, path metadata.TablePath) (*Result, error) {
	info, err := s.Engine.TableInfo(ctx, path)
	if err != nil {
		return nil, err
	}
	opts := maps.Clone(info.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	if _, ok := opts[metadata.OptBucketNum]; !ok {
		opts[metadata.OptBucketNum] = strconv.Itoa(info.NumBuckets)
	}
	ct := &sqlplan.CreateTable{Table: metadata.TableDescriptor{
		Path:          info.Path,
		Schema:        info.Schema,
		PartitionKeys: info.PartitionKeys,
		Options:       opts,
		Comment:       info.Comment,
		Indexes:       info.Indexes,
		ForeignKeys:   info.ForeignKeys,
	}}
	return staticResult([]Column{
		{Name: "table", Type: metadata.StringType()},
		{Name: "create_table", Type: metadata.StringType()},
	}, [][]any{{info.Path.Table, ct.Pretty()}})
}

// showIndex lists a table's indexes (the primary key as PRIMARY) as
// MySQL's SHOW INDEX does, from the rows of information_schema.statistics.
func (s *Session) showIndex(ctx context.Context, path metadata.TablePath) (*Result, error) {
	info, err := s.Engine.TableInfo(ctx, path)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for _, r := range statisticsRows("def", &info) {
		// table, non_unique, index name, seq, column, nullable, type
		rows = append(rows, []any{r[2], r[3], r[5], r[6], r[7], r[8], r[9]})
	}
	str, num := metadata.StringType(), metadata.BigIntType()
	return staticResult([]Column{
		{Name: "Table", Type: str}, {Name: "Non_unique", Type: num}, {Name: "Key_name", Type: str},
		{Name: "Seq_in_index", Type: num}, {Name: "Column_name", Type: str}, {Name: "Null", Type: str},
		{Name: "Index_type", Type: str},
	}, rows)
}

func (s *Session) showPartitions(ctx context.Context, path metadata.TablePath) (*Result, error) {
	eng := s.Engine
	info, err := eng.TableInfo(ctx, path)
	if err != nil {
		return nil, err
	}
	if !info.IsPartitioned() {
		return nil, fmt.Errorf("table %s is not partitioned", path)
	}
	parts, err := eng.ListPartitions(ctx, path)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(parts))
	for i, p := range parts {
		spec := make([]string, len(p.Values))
		for j, v := range p.Values {
			spec[j] = info.PartitionKeys[j] + "=" + v
		}
		rows[i] = []any{p.Name, strings.Join(spec, "/"), p.ID}
	}
	return staticResult([]Column{
		{Name: "partition_name", Type: metadata.StringType()},
		{Name: "partition_spec", Type: metadata.StringType()},
		{Name: "partition_id", Type: metadata.BigIntType()},
	}, rows)
}

func (s *Session) describe(ctx context.Context, path metadata.TablePath) (*Result, error) {
	info, err := s.Engine.TableInfo(ctx, path)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(info.Schema.Columns))
	for i, c := range info.Schema.Columns {
		var key []string
		for _, k := range info.Schema.PrimaryKey {
			if strings.EqualFold(k, c.Name) {
				key = append(key, "PRI")
			}
		}
		if info.IsPartitionKey(c.Name) {
			key = append(key, "PART")
		}
		for _, k := range info.BucketKeys {
			if strings.EqualFold(k, c.Name) {
				key = append(key, "BUCKET")
			}
		}
		var comment any
		if c.Comment != "" {
			comment = c.Comment
		}
		var def any
		if c.Default != nil {
			def = c.Default.SQL()
		}
		rows[i] = []any{c.Name, c.Type.String(), !c.NotNull, strings.Join(key, ","), def, comment}
	}
	return staticResult(describeColumns, rows)
}

// describeColumns are the columns of DESCRIBE's result.
var describeColumns = []Column{
	{Name: "name", Type: metadata.StringType()},
	{Name: "type", Type: metadata.StringType()},
	{Name: "null", Type: metadata.BooleanType()},
	{Name: "key", Type: metadata.StringType()},
	// default is the column's DEFAULT as CREATE TABLE writes it
	// ('x', 5, TRUE, CURRENT_TIMESTAMP); NULL when it has none.
	{Name: "default", Type: metadata.StringType(), Nullable: true},
	{Name: "comment", Type: metadata.StringType(), Nullable: true},
}

// showTables lists a database's tables and views, sorted, as MySQL's
// SHOW TABLES does.
func (s *Session) showTables(ctx context.Context, db string) ([]string, error) {
	eng := s.Engine
	tables, err := eng.ListTables(ctx, db)
	if err != nil {
		return nil, err
	}
	views, err := eng.ListViews(ctx, db)
	if err != nil {
		return nil, err
	}
	names := append(tables, views...)
	sort.Strings(names)
	return names, nil
}
