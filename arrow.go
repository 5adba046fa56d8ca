package fluss

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
)

// QueryArrow runs query on conn and returns its result as Arrow record
// batches: the same plan Query runs, without converting each value to Go.
//
// Ownership: the caller must Release the reader (also after an error from
// Next), which stops the scan and releases its resources. Each batch from
// RecordBatch is valid until the following Next or Release; Retain it to
// keep it longer, and Release what you retained. The reader is not safe
// for concurrent use.
//
// The reader reads through the engine, not through conn: conn may run
// other statements while the reader is open. Cancelling ctx stops the
// read; Next then returns false and Err returns ctx.Err().
func QueryArrow(ctx context.Context, conn *sql.Conn, query string, args ...any) (array.RecordReader, error) {
	return queryArrow(ctx, conn, memory.DefaultAllocator, query, args...)
}

func queryArrow(ctx context.Context, conn *sql.Conn, mem memory.Allocator, query string, args ...any) (array.RecordReader, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	var rows *Rows
	err := withStmt(ctx, conn, "QueryArrow", query, args, func(c *Conn, s *Stmt, named []driver.NamedValue) error {
		start := time.Now()
		r, err := s.query(ctx, toArgs(named))
		if err != nil {
			err = wrapErr(err)
			if c.connector.observed() {
				c.connector.observe(ctx, QueryInfo{SQL: query, Args: len(named), Duration: time.Since(start), Err: err})
			}
			return err
		}
		s.observeRows(ctx, r, len(named), start)
		rows = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	mcols := make([]metadata.Column, len(rows.cols))
	for i, c := range rows.cols {
		mcols[i] = metadata.Column{Name: c.Name, Type: c.Type, NotNull: !c.Nullable}
	}
	r := &arrowReader{ctx: ctx, rows: rows, schema: metadata.ArrowSchema(mcols), mem: mem}
	r.refs.Store(1)
	return r, nil
}

// namedArgs converts Go arguments the way database/sql would, through the
// connection's CheckNamedValue.
// withStmt runs f on conn's fluss connection with text prepared on it
// and args converted and counted against its placeholders: what the Arrow
// API and subscriptions, which take a *sql.Conn, share. api names the
// caller in the error for a connection of another driver.
func withStmt(ctx context.Context, conn *sql.Conn, api, text string, args []any, f func(c *Conn, s *Stmt, named []driver.NamedValue) error) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*Conn)
		if !ok {
			return fmt.Errorf("fluss: %s needs a fluss connection, not %T", api, dc)
		}
		named, err := c.namedArgs(args)
		if err != nil {
			return err
		}
		st, err := c.PrepareContext(ctx, text)
		if err != nil {
			return err
		}
		s := st.(*Stmt)
		if err := s.check(ctx); err != nil {
			return err
		}
		if err := s.checkArgs(named); err != nil {
			return err
		}
		return f(c, s, named)
	})
}

func (c *Conn) namedArgs(args []any) ([]driver.NamedValue, error) {
	out := make([]driver.NamedValue, 0, len(args))
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1, Value: a}
		if n, ok := a.(sql.NamedArg); ok {
			nv.Name, nv.Value = n.Name, n.Value
		}
		if err := c.CheckNamedValue(&nv); err != nil {
			return nil, wrapErr(fmt.Errorf("argument %d: %v: %w", i+1, err, metadata.ErrInvalidValue))
		}
		out = append(out, nv)
	}
	return out, nil
}

// arrowReader adapts a result's operator chain to array.RecordReader.
type arrowReader struct {
	ctx    context.Context
	rows   *Rows
	schema *arrow.Schema
	mem    memory.Allocator
	refs   atomic.Int64
	cur    arrow.RecordBatch
	err    error
	done   bool
}

var _ array.RecordReader = (*arrowReader)(nil)

func (r *arrowReader) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one closes the scan.
func (r *arrowReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.releaseCur()
	if err := r.rows.Close(); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *arrowReader) Schema() *arrow.Schema { return r.schema }

func (r *arrowReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch.
func (r *arrowReader) Record() arrow.RecordBatch { return r.cur }

func (r *arrowReader) Err() error { return r.err }

func (r *arrowReader) releaseCur() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

// Next advances to the next non-empty batch.
func (r *arrowReader) Next() bool {
	r.releaseCur()
	for !r.done {
		if err := r.ctx.Err(); err != nil {
			r.fail(err)
			return false
		}
		b, err := r.rows.op.Next(r.ctx)
		if errors.Is(err, io.EOF) {
			r.done = true
			return false
		}
		if err != nil {
			if cerr := r.ctx.Err(); cerr != nil {
				err = cerr
			}
			r.fail(wrapErr(err))
			return false
		}
		if b.NumRows() == 0 {
			continue
		}
		rec, err := r.materialise(b)
		if err != nil {
			r.fail(wrapErr(err))
			return false
		}
		r.rows.count += int64(rec.NumRows())
		r.cur = rec
		return true
	}
	return false
}

func (r *arrowReader) fail(err error) {
	r.err = err
	r.done = true
	r.rows.err = err
}

// materialise turns a batch into a record of the result schema. A batch
// without a selection vector whose columns already have the schema's types
// is shared without copying; otherwise the visible rows are copied.
func (r *arrowReader) materialise(b query.Batch) (arrow.RecordBatch, error) {
	n := len(r.rows.cols)
	if int(b.Rec.NumCols()) < n {
		return nil, fmt.Errorf("result batch has %d columns, want %d", b.Rec.NumCols(), n)
	}
	if b.Sel == nil {
		cols := make([]arrow.Array, n)
		same := true
		for i := range n {
			cols[i] = b.Rec.Column(i)
			if !arrow.TypeEqual(cols[i].DataType(), r.schema.Field(i).Type) {
				same = false
				break
			}
		}
		if same {
			return array.NewRecordBatch(r.schema, cols, b.Rec.NumRows()), nil
		}
	}
	bld := array.NewRecordBuilder(r.mem, r.schema)
	defer bld.Release()
	for i, c := range r.rows.cols {
		arr, fb := b.Rec.Column(i), bld.Field(i)
		fb.Reserve(b.NumRows())
		for k := 0; k < b.NumRows(); k++ {
			if err := metadata.AppendValue(fb, c.Type, metadata.ValueAt(arr, c.Type, b.Row(k))); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
		}
	}
	return bld.NewRecordBatch(), nil
}

// AppendArrow writes the rows of rec into table (qualified, or in conn's
// current database): appended to a log table, upserted into a primary-key
// table. rec's columns are matched to the table's by name; a nullable
// table column rec lacks is written as NULL, and one with a DEFAULT is
// refused (defaults are an INSERT's). Each column must have the
// Arrow type of its table column. It returns the rows written. Inside a
// transaction begun on conn the rows are buffered like an INSERT's and
// written at Commit.
//
// The caller keeps ownership of rec: AppendArrow neither retains nor
// releases it, and is done with it when it returns.
func AppendArrow(ctx context.Context, conn *sql.Conn, table string, rec arrow.RecordBatch) (int64, error) {
	var n int64
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*Conn)
		if !ok {
			return fmt.Errorf("fluss: AppendArrow needs a fluss connection, not %T", dc)
		}
		if err := c.check(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		n, err = c.session().AppendRecord(ctx, table, rec)
		return wrapErr(err)
	})
	return n, err
}
