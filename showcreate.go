package fluss

import (
	"context"
	"maps"
	"strconv"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// showCreateTable answers SHOW CREATE TABLE t with one row (table,
// statement): the CREATE TABLE that makes the table as it is now, in
// fluss's own dialect, with the bucket count the table was given by
// default written out so that the statement recreates it exactly.
func (s *Stmt) showCreateTable(ctx context.Context, path metadata.TablePath) (*Rows, error) {
	info, err := s.engine().TableInfo(ctx, path)
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
	}}
	return s.static(ctx, []resultColumn{
		{name: "table", typ: metadata.StringType()},
		{name: "create_table", typ: metadata.StringType()},
	}, [][]any{{info.Path.Table, ct.Pretty()}})
}
