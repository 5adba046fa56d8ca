package lakeunion

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/storage"
)

// Column indexes of t$changelog's system columns.
const (
	ColChangeType      = 0 // _change_type STRING NOT NULL
	ColLogOffset       = 1 // _log_offset BIGINT NOT NULL
	ColCommitTimestamp = 2 // _commit_timestamp TIMESTAMP_LTZ(3) NOT NULL
)

// ChangelogColumns returns the columns of the virtual table t$changelog of
// table: _change_type, _log_offset and _commit_timestamp, then the
// table's columns.
func ChangelogColumns(table *metadata.TableInfo) []metadata.Column {
	cols := make([]metadata.Column, 0, planner.ChangelogSystemColumns+len(table.Schema.Columns))
	cols = append(cols,
		metadata.Column{Name: "_change_type", Type: metadata.StringType(), NotNull: true},
		metadata.Column{Name: "_log_offset", Type: metadata.BigIntType(), NotNull: true},
		metadata.Column{Name: "_commit_timestamp", Type: metadata.TimestampLTZType(3), NotNull: true},
	)
	return append(cols, table.Schema.Columns...)
}

// changelogShape turns log batches into rows of t$changelog: the system
// columns a projection asks for, then its table columns, each decoded
// once however often it is asked for.
type changelogShape struct {
	schema *arrow.Schema
	proj   []int // t$changelog column indexes
	// readProj are the table columns to decode; basePos maps a projected
	// table column (proj[i] >= system columns) to its position there.
	readProj   []int
	basePos    []int
	readSchema *arrow.Schema
	mem        memory.Allocator
}

func newChangelogShape(table *metadata.TableInfo, proj []int, mem memory.Allocator) changelogShape {
	cols := ChangelogColumns(table)
	sh := changelogShape{
		schema:  metadata.ArrowSchema(projectedColumns(cols, proj)),
		proj:    proj,
		basePos: make([]int, len(proj)),
		mem:     mem,
		// An empty (non-nil) projection decodes no column at all.
		readProj: []int{},
	}
	for i, c := range proj {
		sh.basePos[i] = -1
		if c < planner.ChangelogSystemColumns {
			continue
		}
		base := c - planner.ChangelogSystemColumns
		pos := -1
		for j, x := range sh.readProj {
			if x == base {
				pos = j
			}
		}
		if pos < 0 {
			pos = len(sh.readProj)
			sh.readProj = append(sh.readProj, base)
		}
		sh.basePos[i] = pos
	}
	sh.readSchema = projectedSchema(table, sh.readProj)
	return sh
}

// logShape turns the log batches of a table into rows of one of its
// virtual tables (t$changelog, t$binlog).
type logShape interface {
	// build returns the rows of a batch of bucket tb, read with
	// readProjection; it may hold rows back for the next batch of tb.
	build(tb metadata.TableBucket, b storage.LogBatch) (arrow.RecordBatch, error)
	// finish says whether a bucket's read may end here: an error when
	// rows are still held back.
	finish(tb metadata.TableBucket) error
	outSchema() *arrow.Schema
	readProjection() []int
}

// newLogShape is the shape of opts' virtual table (Changelog or Binlog).
func newLogShape(table *metadata.TableInfo, opts Options) logShape {
	if opts.Binlog {
		return newBinlogShape(table, opts.Projection, opts.Allocator)
	}
	sh := newChangelogShape(table, opts.Projection, opts.Allocator)
	return &sh
}

func (r *changelogShape) finish(metadata.TableBucket) error { return nil }
func (r *changelogShape) outSchema() *arrow.Schema          { return r.schema }
func (r *changelogShape) readProjection() []int             { return r.readProj }

// changelogReader reads a log split as rows of t$changelog (every change,
// in log order, with its change type, offset and commit time) or of
// t$binlog.
type changelogReader struct {
	refCount
	readerState
	shape logShape
	tb    metadata.TableBucket
	lr    LogBatchReader
}

func openChangelog(ctx context.Context, src Source, table *metadata.TableInfo, sp *planner.LogSplit, opts Options) (*changelogReader, error) {
	sh := newLogShape(table, opts)
	r := &changelogReader{readerState: readerState{schema: sh.outSchema()}, shape: sh, tb: sp.TableBucket}
	lr, err := src.ReadLog(ctx, sp.TableBucket, sp.StartOffset, sp.StopOffset, storage.ReadOptions{Projection: sh.readProjection()})
	if err != nil {
		return nil, err
	}
	r.lr = lr
	r.init(func() {
		r.releaseCur()
		if err := r.lr.Close(); err != nil && r.err == nil {
			r.err = err
		}
	})
	return r, nil
}

func (r *changelogReader) Next() bool {
	r.releaseCur()
	if r.err != nil {
		return false
	}
	if !r.lr.Next() {
		r.err = r.lr.Err()
		if r.err == nil {
			r.err = r.shape.finish(r.tb)
		}
		return false
	}
	rec, err := r.shape.build(r.tb, r.lr.Batch())
	if err != nil {
		r.err = err
		return false
	}
	r.cur = rec
	return true
}

// build puts the system columns before the log batch's table columns.
func (r *changelogShape) build(_ metadata.TableBucket, b storage.LogBatch) (arrow.RecordBatch, error) {
	if err := checkColumns(b.Record, r.readSchema, "log batch"); err != nil {
		return nil, err
	}
	n := int(b.Record.NumRows())
	if b.ChangeTypes != nil && len(b.ChangeTypes) != n {
		return nil, fmt.Errorf("%w: log batch at offset %d has %d change types for %d rows",
			metadata.ErrCorrupt, b.BaseOffset, len(b.ChangeTypes), n)
	}
	cols := make([]arrow.Array, len(r.proj))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range r.proj {
		switch c {
		case ColChangeType:
			bld := array.NewStringBuilder(r.mem)
			bld.Reserve(n)
			for j := range n {
				ct := metadata.ChangeAppendOnly
				if b.ChangeTypes != nil {
					ct = b.ChangeTypes[j]
				}
				if !ct.Valid() {
					bld.Release()
					return nil, fmt.Errorf("%w: log offset %d has change type %d", metadata.ErrCorrupt, b.BaseOffset+int64(j), ct)
				}
				bld.Append(ct.ChangelogName())
			}
			cols[i] = bld.NewArray()
			bld.Release()
		case ColLogOffset:
			bld := array.NewInt64Builder(r.mem)
			bld.Reserve(n)
			for j := range n {
				bld.UnsafeAppend(b.BaseOffset + int64(j))
			}
			cols[i] = bld.NewArray()
			bld.Release()
		case ColCommitTimestamp:
			bld := array.NewTimestampBuilder(r.mem, r.schema.Field(i).Type.(*arrow.TimestampType))
			bld.Reserve(n)
			for range n {
				bld.UnsafeAppend(arrow.Timestamp(b.CommitTimestamp))
			}
			cols[i] = bld.NewArray()
			bld.Release()
		default:
			col := b.Record.Column(r.basePos[i])
			col.Retain()
			cols[i] = col
		}
	}
	return array.NewRecordBatch(r.schema, cols, int64(n)), nil
}
