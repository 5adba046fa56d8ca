package fluss

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"math"
	"reflect"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
)

// batches is what Rows reads: a query.Result, or the batches of none.
type batches interface {
	Next(ctx context.Context) (query.Batch, error)
	Close() error
}

// Rows streams a result batch by batch. It is not safe for concurrent use
// (database/sql serialises access); Close is idempotent and releases the
// scan under it.
type Rows struct {
	ctx   context.Context
	cols  []query.Column
	op    batches
	conv  *converter
	types []metadata.DataType // of cols
	// cur is the batch Next reads, converted (nil: none), pos its next
	// row; pipe converts the batches after it, once started.
	cur  *driverBatch
	pipe *pipeline
	// one is the row of a point lookup answered without operators
	// (prepared.go), yielded by the first Next; nil otherwise.
	one       []driver.Value
	pos       int
	converted int64 // rows converted before the pipeline started
	done      bool
	closed    bool
	// count is the rows yielded so far and err the error that ended the
	// read, for the query hook; onClose runs once, at Close.
	count   int64
	err     error
	onClose func(*Rows)
}

var (
	_ driver.Rows                           = (*Rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*Rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*Rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*Rows)(nil)
	_ driver.RowsColumnTypeLength           = (*Rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*Rows)(nil)
)

func newRows(ctx context.Context, cols []query.Column, op batches, conv *converter) *Rows {
	types := make([]metadata.DataType, len(cols))
	for i, c := range cols {
		types[i] = c.Type
	}
	return &Rows{ctx: ctx, cols: cols, op: op, conv: conv, types: types}
}

// newValueRows returns the rows of one row of driver values, or of none
// when row is nil.
func newValueRows(ctx context.Context, cols []query.Column, row []driver.Value) *Rows {
	return &Rows{ctx: ctx, cols: cols, op: noRows{}, one: row}
}

// noRows is a result without batches.
type noRows struct{}

func (noRows) Next(context.Context) (query.Batch, error) { return query.Batch{}, io.EOF }
func (noRows) Close() error                              { return nil }

// Columns returns the result's column names.
func (r *Rows) Columns() []string {
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = c.Name
	}
	return names
}

// Next writes the next row into dest. The query's context is checked
// between batches, and the operators below return as soon as it is done,
// even while the scan's workers are still reading: a cancelled query
// returns ctx.Err(), never driver.ErrBadConn, and the connection stays
// usable.
func (r *Rows) Next(dest []driver.Value) error {
	for r.pos >= r.cur.len() {
		if r.done || r.closed {
			return io.EOF
		}
		if r.one != nil {
			copy(dest, r.one)
			r.one, r.done = nil, true
			r.count++
			return nil
		}
		if err := r.ctx.Err(); err != nil {
			r.err = err
			return err
		}
		b, err := r.nextBatch()
		if errors.Is(err, io.EOF) {
			r.done = true
			r.cur = nil
			return io.EOF
		}
		if err != nil {
			r.done = true
			// A cancelled query fails with ctx.Err() itself, whatever
			// the operators made of it, so callers comparing with it
			// (and database/sql) see the context's error.
			if cerr := r.ctx.Err(); cerr != nil {
				r.err = cerr
				return cerr
			}
			r.err = wrapErr(err)
			return r.err
		}
		r.cur, r.pos = b, 0
	}
	r.cur.row(r.pos, dest)
	r.pos++
	r.count++
	return nil
}

// pipelineAfter is how many rows Rows converts in the caller's goroutine
// before it hands the operators and the conversion to a goroutine of their
// own: a result that small (a point lookup, a LIMIT, an aggregate) is done
// before a goroutine would pay for itself.
const pipelineAfter = 4096

// nextBatch returns the next batch of the result, converted: from the
// pipeline once it runs, otherwise read and converted here, starting the
// pipeline once pipelineAfter rows have been.
func (r *Rows) nextBatch() (*driverBatch, error) {
	if r.pipe != nil {
		return r.pipe.next(r.ctx)
	}
	for {
		b, err := r.op.Next(r.ctx)
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			continue
		}
		db := r.conv.convertBatch(b, r.types)
		r.converted += int64(db.n)
		if r.converted >= pipelineAfter {
			// db holds no Arrow memory: the operators may move on.
			r.pipe = startPipeline(r.ctx, r.op, r.conv, r.types)
		}
		return db, nil
	}
}

// Close releases the result. Idempotent. It stops the pipeline, waiting
// for its goroutine to exit, before it closes the operators.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.cur = nil
	if r.pipe != nil {
		r.pipe.stop()
	}
	err := wrapErr(r.op.Close())
	if r.onClose != nil {
		if err != nil && r.err == nil {
			r.err = err
		}
		r.onClose(r)
	}
	return err
}

var (
	typeBool        = reflect.TypeFor[bool]()
	typeInt64       = reflect.TypeFor[int64]()
	typeFloat64     = reflect.TypeFor[float64]()
	typeString      = reflect.TypeFor[string]()
	typeBytes       = reflect.TypeFor[[]byte]()
	typeTime        = reflect.TypeFor[time.Time]()
	typeNullBool    = reflect.TypeFor[sql.NullBool]()
	typeNullInt64   = reflect.TypeFor[sql.NullInt64]()
	typeNullFloat64 = reflect.TypeFor[sql.NullFloat64]()
	typeNullString  = reflect.TypeFor[sql.NullString]()
	typeNullTime    = reflect.TypeFor[sql.NullTime]()
	typeSlice       = reflect.TypeFor[[]any]()
	typeMap         = reflect.TypeFor[map[any]any]()
	typeStruct      = reflect.TypeFor[map[string]any]()
	typeAny         = reflect.TypeFor[any]()
)

// ColumnTypeScanType is the Go type a column scans into without loss:
// the plain type for NOT NULL columns, the sql.Null* type otherwise, as
// the MySQL driver does. Never nil.
func (r *Rows) ColumnTypeScanType(i int) reflect.Type {
	c := r.cols[i]
	t := c.Type
	pick := func(plain, null reflect.Type) reflect.Type {
		if c.Nullable {
			return null
		}
		return plain
	}
	switch {
	case t.Root == metadata.Boolean:
		return pick(typeBool, typeNullBool)
	case t.IsInteger():
		return pick(typeInt64, typeNullInt64)
	case t.Root == metadata.Float || t.Root == metadata.Double:
		return pick(typeFloat64, typeNullFloat64)
	case t.IsString() || t.Root == metadata.Decimal:
		return pick(typeString, typeNullString)
	case t.IsBinary():
		return typeBytes
	case t.IsTemporal():
		return pick(typeTime, typeNullTime)
	// database/sql stores NULL only into pointers, interfaces and
	// []byte: a nullable nested column scans into an any.
	case t.Root == metadata.Array:
		return pick(typeSlice, typeAny)
	case t.Root == metadata.Map:
		return pick(typeMap, typeAny)
	case t.Root == metadata.Row:
		return pick(typeStruct, typeAny)
	}
	return pick(typeString, typeNullString)
}

// ColumnTypeDatabaseTypeName is the upper-case type name: the root name for
// scalar types (BIGINT, DECIMAL, TIMESTAMP_LTZ) and the full type for
// nested ones (ARRAY<INT>).
func (r *Rows) ColumnTypeDatabaseTypeName(i int) string {
	t := r.cols[i].Type
	if t.IsNested() {
		return t.String()
	}
	if t.Root == 0 {
		return "NULL"
	}
	return t.Root.String()
}

// ColumnTypeNullable reports the column's nullability from the schema.
func (r *Rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	return r.cols[i].Nullable, true
}

// ColumnTypeLength is n for CHAR(n) and BINARY(n) and unbounded for
// STRING and BYTES.
func (r *Rows) ColumnTypeLength(i int) (length int64, ok bool) {
	t := r.cols[i].Type
	switch t.Root {
	case metadata.Char, metadata.Binary:
		return int64(t.Length), true
	case metadata.String, metadata.Bytes:
		return math.MaxInt64, true
	}
	return 0, false
}

// ColumnTypePrecisionScale is (p, s) for DECIMAL and (p, 0) for TIME,
// TIMESTAMP and TIMESTAMP_LTZ, whose precision is their fractional digits.
func (r *Rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	t := r.cols[i].Type
	switch t.Root {
	case metadata.Decimal:
		return int64(t.Precision), int64(t.Scale), true
	case metadata.Time, metadata.Timestamp, metadata.TimestampLTZ:
		return int64(t.Precision), 0, true
	}
	return 0, 0, false
}
