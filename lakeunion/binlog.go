package lakeunion

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// Column indexes of t$binlog.
const (
	BinlogChangeType      = 0 // _change_type STRING NOT NULL
	BinlogLogOffset       = 1 // _log_offset BIGINT NOT NULL
	BinlogCommitTimestamp = 2 // _commit_timestamp TIMESTAMP_LTZ(3) NOT NULL
	BinlogBefore          = 3 // before ROW<table's columns>
	BinlogAfter           = 4 // after ROW<table's columns>
	numBinlogColumns      = 5
)

// The values of t$binlog's _change_type (Fluss's).
const (
	BinlogInsert = "insert"
	BinlogUpdate = "update"
	BinlogDelete = "delete"
)

// BinlogColumns returns the columns of the virtual table t$binlog of
// table, a primary-key table: the system columns, then before and after,
// ROW values of the table's columns.
func BinlogColumns(table *metadata.TableInfo) []metadata.Column {
	fields := make([]metadata.Field, len(table.Schema.Columns))
	for i, c := range table.Schema.Columns {
		fields[i] = metadata.Field{Name: c.Name, Type: c.Type}
	}
	row := metadata.RowType(fields...)
	return []metadata.Column{
		{Name: "_change_type", Type: metadata.StringType(), NotNull: true},
		{Name: "_log_offset", Type: metadata.BigIntType(), NotNull: true},
		{Name: "_commit_timestamp", Type: metadata.TimestampLTZType(3), NotNull: true},
		{Name: "before", Type: row},
		{Name: "after", Type: row},
	}
}

// binlogShape turns log batches into rows of t$binlog. An update's -U is
// held back, per bucket, until its +U: the pair becomes one row at the
// -U's offset and commit time, as Fluss's binlog converter does; a +U
// without a -U before it is an error (a corrupt log, or the WAL image,
// which t$binlog refuses when it binds).
type binlogShape struct {
	table    *metadata.TableInfo
	cols     []metadata.Column
	schema   *arrow.Schema
	proj     []int
	readProj []int
	mem      memory.Allocator
	pending  map[metadata.TableBucket]*heldBefore
	// kinds and offsets describe the rows of the last batch built: +I,
	// +U (an update) or -D, and the log offset of each.
	kinds   []metadata.ChangeType
	offsets []int64
}

// heldBefore is a -U waiting for its +U.
type heldBefore struct {
	offset, ts int64
	row        []any
}

func newBinlogShape(table *metadata.TableInfo, proj []int, mem memory.Allocator) *binlogShape {
	cols := BinlogColumns(table)
	sh := &binlogShape{table: table, cols: cols, schema: metadata.ArrowSchema(projectedColumns(cols, proj)), proj: proj, mem: mem,
		pending: map[metadata.TableBucket]*heldBefore{}}
	// The images are whole rows: every column is decoded.
	sh.readProj = make([]int, len(table.Schema.Columns))
	for i := range sh.readProj {
		sh.readProj[i] = i
	}
	return sh
}

func (sh *binlogShape) outSchema() *arrow.Schema { return sh.schema }
func (sh *binlogShape) readProjection() []int    { return sh.readProj }

func (sh *binlogShape) finish(tb metadata.TableBucket) error {
	if h := sh.pending[tb]; h != nil {
		delete(sh.pending, tb)
		return fmt.Errorf("%w: %s of %s: update_before (-U) at offset %d has no update_after (+U) after it",
			metadata.ErrCorrupt, tb, sh.table.Path, h.offset)
	}
	return nil
}

// binlogRow is one row of t$binlog.
type binlogRow struct {
	kind          string
	offset, ts    int64
	before, after []any // nil: NULL
}

func (sh *binlogShape) rowAt(rec arrow.RecordBatch, i int) []any {
	out := make([]any, len(sh.table.Schema.Columns))
	for c, col := range sh.table.Schema.Columns {
		out[c] = metadata.ValueAt(rec.Column(c), col.Type, i)
	}
	return out
}

func (sh *binlogShape) build(tb metadata.TableBucket, b storage.LogBatch) (arrow.RecordBatch, error) {
	if err := checkColumns(b.Record, projectedSchema(sh.table, sh.readProj), "log batch"); err != nil {
		return nil, err
	}
	n := int(b.Record.NumRows())
	if len(b.ChangeTypes) != n {
		return nil, fmt.Errorf("%w: log batch of %s at offset %d has %d change types for %d rows: t$binlog reads a primary-key table's changes",
			metadata.ErrCorrupt, tb, b.BaseOffset, len(b.ChangeTypes), n)
	}
	rows := make([]binlogRow, 0, n)
	for j := range n {
		off := b.BaseOffset + int64(j)
		switch ct := b.ChangeTypes[j]; ct {
		case metadata.ChangeInsert:
			rows = append(rows, binlogRow{kind: BinlogInsert, offset: off, ts: b.CommitTimestamp, after: sh.rowAt(b.Record, j)})
		case metadata.ChangeUpdateBefore:
			if h := sh.pending[tb]; h != nil {
				return nil, fmt.Errorf("%w: %s of %s: update_before (-U) at offset %d follows the one at %d with no update_after (+U) between",
					metadata.ErrCorrupt, tb, sh.table.Path, off, h.offset)
			}
			sh.pending[tb] = &heldBefore{offset: off, ts: b.CommitTimestamp, row: sh.rowAt(b.Record, j)}
		case metadata.ChangeUpdateAfter:
			h := sh.pending[tb]
			if h == nil {
				return nil, fmt.Errorf("%w: %s of %s: update_after (+U) at offset %d without a preceding update_before (-U)",
					metadata.ErrCorrupt, tb, sh.table.Path, off)
			}
			delete(sh.pending, tb)
			rows = append(rows, binlogRow{kind: BinlogUpdate, offset: h.offset, ts: h.ts, before: h.row, after: sh.rowAt(b.Record, j)})
		case metadata.ChangeDelete:
			rows = append(rows, binlogRow{kind: BinlogDelete, offset: off, ts: b.CommitTimestamp, before: sh.rowAt(b.Record, j)})
		default:
			return nil, fmt.Errorf("%w: %s of %s offset %d has change type %s: t$binlog reads a primary-key table's changes",
				metadata.ErrCorrupt, tb, sh.table.Path, off, ct)
		}
	}
	sh.kinds, sh.offsets = sh.kinds[:0], sh.offsets[:0]
	for _, r := range rows {
		k := metadata.ChangeInsert
		switch r.kind {
		case BinlogUpdate:
			k = metadata.ChangeUpdateAfter
		case BinlogDelete:
			k = metadata.ChangeDelete
		}
		sh.kinds, sh.offsets = append(sh.kinds, k), append(sh.offsets, r.offset)
	}
	if len(sh.proj) == 0 {
		// COUNT(*) and the like read no column, only the rows.
		return array.NewRecordBatch(sh.schema, nil, int64(len(rows))), nil
	}
	bld := array.NewRecordBuilder(sh.mem, sh.schema)
	defer bld.Release()
	for i, c := range sh.proj {
		fb := bld.Field(i)
		fb.Reserve(len(rows))
		for _, r := range rows {
			var v any
			switch c {
			case BinlogChangeType:
				v = r.kind
			case BinlogLogOffset:
				v = r.offset
			case BinlogCommitTimestamp:
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts))
				continue
			case BinlogBefore:
				if r.before != nil {
					v = r.before
				}
			case BinlogAfter:
				if r.after != nil {
					v = r.after
				}
			}
			if err := metadata.AppendValue(fb, sh.cols[c].Type, v); err != nil {
				return nil, fmt.Errorf("%s of t$binlog: %w", sh.cols[c].Name, err)
			}
		}
	}
	return bld.NewRecordBatch(), nil
}
