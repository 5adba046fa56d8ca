package fluss

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/sqlplan"
)

// StartupMode is where a subscription starts (Fluss's scan.startup.mode).
type StartupMode string

const (
	// StartupFull, the default, reads a primary-key table's current state
	// as +I rows, then every change after it; a log table from its
	// earliest offset (through its lake first when tiered).
	StartupFull StartupMode = "full"
	// StartupEarliest reads the changelog from each bucket's log start.
	StartupEarliest StartupMode = "earliest"
	// StartupLatest reads the changes committed after the subscription
	// starts; with none it waits.
	StartupLatest StartupMode = "latest"
	// StartupTimestamp reads the changelog from the first batch of each
	// bucket committed at or after SubscribeOptions.StartupTimestamp,
	// found through the log's time index; a time in the future is an
	// error.
	StartupTimestamp StartupMode = "timestamp"
)

// BoundedMode is where a subscription stops (Fluss's scan.bounded.mode).
type BoundedMode string

const (
	// BoundedUnbounded, the default (also ""), never stops.
	BoundedUnbounded BoundedMode = "unbounded"
	// BoundedLatestOffset stops at the high watermarks of every bucket
	// pinned when the subscription starts.
	BoundedLatestOffset BoundedMode = "latest-offset"
	// BoundedTimestamp stops each bucket before its first batch
	// committed at or after SubscribeOptions.BoundedTimestamp, which
	// must not be in the future.
	BoundedTimestamp BoundedMode = "timestamp"
)

// SubscribeOptions say what a subscription reads and where it starts.
type SubscribeOptions struct {
	// Columns are the columns to read, in order; nil reads every column.
	Columns []string
	// Where, when set, is a condition over the table's columns, written
	// as after WHERE, with ? placeholders bound to Args. Its conjuncts on
	// partition keys choose the partitions read (also those created
	// later), the others skip batches by their statistics and filter the
	// rows, as a batch query's WHERE does.
	Where string
	Args  []any
	// StartupTimestamp is where StartupTimestamp starts; it is refused
	// with any other mode.
	StartupTimestamp time.Time
	// StartupMode is where to start; "" is StartupFull. It must be
	// empty when Offsets is set.
	StartupMode StartupMode
	// Offsets resumes a subscription of the same table exactly after the
	// rows it returned: what Subscription.Offsets gave, kept by the
	// caller (as JSON, for one).
	Offsets *Offsets
	// Bounded makes the subscription end, Next returning false with a
	// nil Err, once every bucket is read to its stop; "" is
	// BoundedUnbounded. A primary-key table's full start and a
	// lake-enabled table's are never bounded.
	Bounded BoundedMode
	// BoundedTimestamp is where BoundedTimestamp stops; it is refused
	// with any other bounded mode.
	BoundedTimestamp time.Time
	// Allocator backs the record batches; nil is memory.DefaultAllocator.
	Allocator memory.Allocator
}

// Offsets are the next log offset of each bucket a subscription reads:
// a subscription resumed at them returns every change after the rows the
// first one returned, exactly once. They marshal to JSON as they are.
type Offsets struct {
	TableID int64          `json:"table_id"`
	Buckets []BucketOffset `json:"buckets"`
}

// BucketOffset is the next offset of one bucket.
type BucketOffset struct {
	PartitionID int64  `json:"partition_id"`
	Partition   string `json:"partition,omitempty"`
	Bucket      int32  `json:"bucket"`
	Offset      int64  `json:"offset"`
}

// ParseOffsets reads offsets marshalled as JSON.
func ParseOffsets(data []byte) (*Offsets, error) {
	var o Offsets
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, wrapErr(fmt.Errorf("subscription offsets: %v: %w", err, metadata.ErrInvalidValue))
	}
	return &o, nil
}

// Names of the columns every subscription's batches start with.
const (
	ColumnChangeType      = "_change_type"
	ColumnPartition       = "_partition"
	ColumnBucket          = "_bucket"
	ColumnLogOffset       = "_log_offset"
	ColumnCommitTimestamp = "_commit_timestamp"
)

// subscriptionColumns are the columns before the table's: the change
// type (+A, +I, -U, +U, -D), the partition (NULL for a table without
// partitions), the bucket, and the log offset and commit time (NULL for
// the state a full start reads).
func subscriptionColumns() []metadata.Column {
	return []metadata.Column{
		{Name: ColumnChangeType, Type: metadata.StringType(), NotNull: true},
		{Name: ColumnPartition, Type: metadata.StringType()},
		{Name: ColumnBucket, Type: metadata.IntType(), NotNull: true},
		{Name: ColumnLogOffset, Type: metadata.BigIntType()},
		{Name: ColumnCommitTimestamp, Type: metadata.TimestampLTZType(3)},
	}
}

// Subscription is a streaming read of a table: Arrow record batches of
// every change committed to it after its start, waiting for commits (it
// never polls). Each batch holds the rows of one bucket, in offset order;
// its columns are _change_type, _partition, _bucket, _log_offset and
// _commit_timestamp, then the columns asked for.
//
// Ownership: the caller must Close it. Each batch from RecordBatch is
// valid until the following Next or Close; Retain it to keep it longer.
// A subscription is not safe for concurrent use; it reads through the
// engine, not through the connection it was opened on.
type Subscription struct {
	ctx     context.Context
	sub     *query.Subscription
	schema  *arrow.Schema
	cols    []query.Column
	mem     memory.Allocator
	logRows bool // a log table: its state rows are +A
	consts  constColumns
	fill    *fillPool // the offset and timestamp columns' buffers
	cur     arrow.RecordBatch
	err     error
	closed  bool
	done    bool // a bounded subscription reached its stops
}

// Subscribe opens a subscription of table (qualified or in conn's current
// database; t$changelog reads the changelog as its columns too) on
// conn's engine. Cancelling ctx ends it: Next then returns false and Err
// returns ctx.Err().
func Subscribe(ctx context.Context, conn *sql.Conn, table string, opts SubscribeOptions) (*Subscription, error) {
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	req := query.StreamRequest{Mode: query.StartupMode(opts.StartupMode)}
	switch opts.StartupMode {
	case "", StartupFull, StartupEarliest, StartupLatest:
		if !opts.StartupTimestamp.IsZero() {
			return nil, wrapErr(fmt.Errorf("%w: StartupTimestamp is set but the startup mode is %q, not %q", metadata.ErrInvalidOption, opts.StartupMode, StartupTimestamp))
		}
	case StartupTimestamp:
		if opts.StartupTimestamp.IsZero() {
			return nil, wrapErr(fmt.Errorf("%w: startup mode %q needs StartupTimestamp", metadata.ErrInvalidOption, StartupTimestamp))
		}
		req.Timestamp = opts.StartupTimestamp.UnixMilli()
	default:
		return nil, wrapErr(fmt.Errorf("%w: startup mode %q; use %q, %q, %q or %q, or Offsets to resume", metadata.ErrInvalidOption, opts.StartupMode, StartupFull, StartupEarliest, StartupLatest, StartupTimestamp))
	}
	switch opts.Bounded {
	case "", BoundedUnbounded, BoundedLatestOffset:
		if !opts.BoundedTimestamp.IsZero() {
			return nil, wrapErr(fmt.Errorf("%w: BoundedTimestamp is set but the bounded mode is %q, not %q", metadata.ErrInvalidOption, opts.Bounded, BoundedTimestamp))
		}
		req.Bounded.Mode = query.BoundedMode(opts.Bounded)
	case BoundedTimestamp:
		if opts.BoundedTimestamp.IsZero() {
			return nil, wrapErr(fmt.Errorf("%w: 'BoundedTimestamp' is required in %q bounded mode but missing", metadata.ErrInvalidOption, BoundedTimestamp))
		}
		req.Bounded = query.Bounded{Mode: query.BoundedTimestamp, Timestamp: opts.BoundedTimestamp.UnixMilli()}
	default:
		return nil, wrapErr(fmt.Errorf("%w: bounded mode %q; use %q, %q or %q", metadata.ErrInvalidOption, opts.Bounded, BoundedUnbounded, BoundedLatestOffset, BoundedTimestamp))
	}
	if opts.Offsets != nil {
		if opts.StartupMode != "" {
			return nil, wrapErr(fmt.Errorf("%w: a subscription resumed from offsets has no startup mode, and %q is set", metadata.ErrInvalidOption, opts.StartupMode))
		}
		req.Mode = query.StartupOffsets
		req.Offsets = map[metadata.TableBucket]int64{}
		for _, b := range opts.Offsets.Buckets {
			req.Offsets[metadata.TableBucket{TableID: opts.Offsets.TableID, PartitionID: b.PartitionID, Bucket: b.Bucket}] = b.Offset
		}
	}
	text, err := subscriptionQuery(table, opts)
	if err != nil {
		return nil, wrapErr(err)
	}
	var qs *query.Subscription
	err = withStmt(ctx, conn, "Subscribe", text, opts.Args, func(c *Conn, s *Stmt, named []driver.NamedValue) error {
		sel, ok := s.parsed.(*sqlplan.Select)
		if !ok {
			return wrapErr(fmt.Errorf("%w: subscription of %s: %T", metadata.ErrUnsupported, table, s.parsed))
		}
		qs, err = c.session().Subscribe(ctx, sel, toArgs(named), req)
		return s.wrapErr(err)
	})
	if err != nil {
		return nil, err
	}
	cols := subscriptionColumns()
	for _, c := range qs.Columns {
		cols = append(cols, metadata.Column{Name: c.Name, Type: c.Type, NotNull: !c.Nullable})
	}
	return &Subscription{ctx: ctx, sub: qs, schema: metadata.ArrowSchema(cols), cols: qs.Columns, mem: mem, consts: constColumns{mem: mem}, fill: &fillPool{base: mem},
		logRows: !qs.Table().HasPrimaryKey()}, nil
}

// subscriptionQuery writes the SELECT a subscription binds.
func subscriptionQuery(table string, opts SubscribeOptions) (string, error) {
	if strings.TrimSpace(table) == "" {
		return "", fmt.Errorf("%w: subscription of no table", metadata.ErrInvalidValue)
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	if opts.Columns == nil {
		b.WriteString("*")
	} else if len(opts.Columns) == 0 {
		return "", fmt.Errorf("%w: subscription of %s reads no column (nil reads them all)", metadata.ErrInvalidValue, table)
	}
	for i, c := range opts.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(metadata.QuoteIdent(c))
	}
	b.WriteString(" FROM ")
	for i, part := range strings.Split(table, ".") {
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(metadata.QuoteIdent(part))
	}
	if w := strings.TrimSpace(opts.Where); w != "" {
		b.WriteString(" WHERE ")
		b.WriteString(w)
	}
	return b.String(), nil
}

// Schema is the schema of every batch.
func (s *Subscription) Schema() *arrow.Schema { return s.schema }

// RecordBatch is the current batch; valid until the following Next or
// Close.
func (s *Subscription) RecordBatch() arrow.RecordBatch { return s.cur }

// Err returns the error that ended the subscription: ctx.Err() once its
// context ended.
func (s *Subscription) Err() error { return s.err }

// Next waits for the next batch of rows. It returns false when the
// context ends, on an error (see Err), after Close, and, with a nil Err,
// once a bounded subscription read every bucket to its stop.
func (s *Subscription) Next() bool {
	s.release()
	for !s.closed && !s.done && s.err == nil {
		b, meta, err := s.sub.Next(s.ctx)
		if errors.Is(err, io.EOF) {
			s.done = true
			return false
		}
		if err != nil {
			if cerr := s.ctx.Err(); cerr != nil {
				err = cerr
			} else {
				err = wrapErr(err)
			}
			s.err = err
			return false
		}
		if b.NumRows() == 0 {
			continue
		}
		rec, err := s.build(b, meta)
		if err != nil {
			s.err = wrapErr(err)
			return false
		}
		s.cur = rec
		return true
	}
	return false
}

// build puts the system columns before the visible rows of b. A batch
// without a selection vector shares its columns that already have the
// schema's types, as QueryArrow does; otherwise the visible rows are
// copied. The system columns are written straight into their buffers:
// through builders, one call per cell, they cost more than reading the
// batch.
func (s *Subscription) build(b query.Batch, meta query.StreamMeta) (arrow.RecordBatch, error) {
	sys := len(subscriptionColumns())
	n := b.NumRows()
	cols := make([]arrow.Array, 0, sys+len(s.cols))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	state := "+I"
	if s.logRows {
		state = "+A"
	}
	switch {
	case meta.Snapshot:
		cols = append(cols, s.consts.str(state, n))
	case meta.ChangeTypes == nil:
		cols = append(cols, s.consts.str(metadata.ChangeAppendOnly.String(), n))
	default:
		for k := range n {
			row := b.Row(k)
			if row >= len(meta.ChangeTypes) {
				return nil, fmt.Errorf("%w: %s: row %d of a batch of %d change types", metadata.ErrCorrupt, meta.TableBucket, row, len(meta.ChangeTypes))
			}
			if c := meta.ChangeTypes[row]; !c.Valid() {
				return nil, fmt.Errorf("%w: %s offset %d has change type %d", metadata.ErrCorrupt, meta.TableBucket, meta.BaseOffset+int64(row), c)
			}
		}
		cols = append(cols, changeTypeColumn(s.mem, b, meta.ChangeTypes))
	}
	if meta.TableBucket.PartitionID == metadata.NonPartitioned {
		cols = append(cols, s.consts.null(arrow.BinaryTypes.String, n))
	} else {
		cols = append(cols, s.consts.str(meta.Partition, n))
	}
	cols = append(cols, s.consts.int32(meta.TableBucket.Bucket, n))
	if meta.Snapshot {
		cols = append(cols, s.consts.null(arrow.PrimitiveTypes.Int64, n), s.consts.null(s.schema.Field(4).Type, n))
	} else {
		cols = append(cols, offsetColumn(s.fill, b, meta), fillInt64Column(s.fill, s.schema.Field(4).Type, n, meta.CommitTimestamp))
	}
	var bld *array.RecordBuilder
	for i, c := range s.cols {
		arr := b.Rec.Column(s.sub.Positions[i])
		if b.Sel == nil && arrow.TypeEqual(arr.DataType(), s.schema.Field(sys+i).Type) {
			arr.Retain()
			cols = append(cols, arr)
			continue
		}
		if bld == nil {
			bld = array.NewRecordBuilder(s.mem, s.schema)
			defer bld.Release()
		}
		fb := bld.Field(sys + i)
		fb.Reserve(n)
		for k := range n {
			if err := metadata.AppendValue(fb, c.Type, metadata.ValueAt(arr, c.Type, b.Row(k))); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
		}
		cols = append(cols, fb.NewArray())
	}
	return array.NewRecordBatch(s.schema, cols, int64(n)), nil
}

// int64Buffer returns a buffer of n 64-bit values to fill, whose bytes
// past them are zero.
func int64Buffer(mem memory.Allocator, n int) (*memory.Buffer, []int64) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * arrow.Int64SizeBytes)
	clear(buf.Buf()[buf.Len():])
	return buf, arrow.Int64Traits.CastFromBytes(buf.Bytes())
}

// fillPool is the allocator of the columns a subscription fills whole
// for every batch (offsets, commit timestamps): the memory of a batch the
// caller released is handed out again, not zeroed (every value is
// written), instead of new memory the runtime zeroes and the kernel
// faults in, which was most of the cost of those columns. It keeps a few
// free buffers of each size and gives the rest, and all of them once the
// subscription is closed, back to the caller's allocator. Safe for
// concurrent use: a batch may be released from any goroutine.
type fillPool struct {
	base   memory.Allocator
	mu     sync.Mutex
	free   map[int][][]byte
	closed bool
}

// maxFillFree is how many free buffers of one size a fillPool keeps.
const maxFillFree = 8

func (p *fillPool) Allocate(size int) []byte {
	p.mu.Lock()
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return p.base.Allocate(size)
}

func (p *fillPool) Reallocate(size int, b []byte) []byte {
	return p.base.Reallocate(size, b)
}

func (p *fillPool) Free(b []byte) {
	p.mu.Lock()
	if !p.closed && len(p.free[len(b)]) < maxFillFree {
		if p.free == nil {
			p.free = map[int][][]byte{}
		}
		p.free[len(b)] = append(p.free[len(b)], b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.base.Free(b)
}

// close gives every free buffer back; buffers freed later go back at once.
func (p *fillPool) close() {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	for _, l := range free {
		for _, b := range l {
			p.base.Free(b)
		}
	}
}

// fromBuffers is the array of n values without nulls of type dt over
// bufs (after the validity bitmap), which it takes over.
func fromBuffers(dt arrow.DataType, n int, bufs ...*memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, append([]*memory.Buffer{nil}, bufs...), nil, 0, 0)
	for _, b := range bufs {
		b.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// offsetColumn is the log offset of each row of b: the batch's base
// offset and the row's place, or a binlog row's own (an update's -U).
func offsetColumn(mem memory.Allocator, b query.Batch, meta query.StreamMeta) arrow.Array {
	n := b.NumRows()
	buf, vals := int64Buffer(mem, n)
	switch {
	case meta.RowOffsets != nil:
		for k := range vals {
			vals[k] = meta.RowOffsets[b.Row(k)]
		}
	case b.Sel != nil:
		for k := range vals {
			vals[k] = meta.BaseOffset + int64(b.Row(k))
		}
	default:
		for k := range vals {
			vals[k] = meta.BaseOffset + int64(k)
		}
	}
	return fromBuffers(arrow.PrimitiveTypes.Int64, n, buf)
}

// fillInt64Column is a column of n copies of v, of type dt (BIGINT, or a
// timestamp's).
func fillInt64Column(mem memory.Allocator, dt arrow.DataType, n int, v int64) arrow.Array {
	buf, vals := int64Buffer(mem, n)
	for k := range vals {
		vals[k] = v
	}
	return fromBuffers(dt, n, buf)
}

// changeTypeColumn is the change type of each row of b, in its short form
// (two bytes each: +I, -U, +U, -D, +A), as a STRING column.
func changeTypeColumn(mem memory.Allocator, b query.Batch, types []metadata.ChangeType) arrow.Array {
	n := b.NumRows()
	offsets := memory.NewResizableBuffer(mem)
	offsets.Resize((n + 1) * arrow.Int32SizeBytes)
	values := memory.NewResizableBuffer(mem)
	values.Resize(2 * n)
	off := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	dst := values.Bytes()[:0]
	for k := range n {
		off[k] = int32(len(dst))
		dst = append(dst, types[b.Row(k)].String()...)
	}
	off[n] = int32(len(dst))
	values.Resize(len(dst))
	return fromBuffers(arrow.BinaryTypes.String, n, offsets, values)
}

// constColumns keeps, for the values a subscription repeats on every row
// of a batch (its change type while it reads a state, a partition's name,
// a bucket, the NULLs of a state's offsets), one column of that value at
// least as long as the longest batch so far, and hands out slices of it:
// a batch's column then costs no copy. Its columns are released by
// release.
type constColumns struct {
	mem   memory.Allocator
	strs  map[string]arrow.Array
	ints  map[int32]arrow.Array
	nulls map[string]arrow.Array // by data type
}

// maxConstColumns bounds each map: past it (a subscription of many
// partitions) the map is emptied and refilled as batches need.
const maxConstColumns = 64

// get returns a slice of n values of the cached column under key, making
// it (at least twice as long as before) with mk when it is missing or
// short.
func constColumn[K comparable](c *constColumns, m *map[K]arrow.Array, key K, n int, mk func(n int) arrow.Array) arrow.Array {
	if *m == nil {
		*m = map[K]arrow.Array{}
	}
	arr, ok := (*m)[key]
	if !ok || arr.Len() < n {
		if !ok && len(*m) >= maxConstColumns {
			for _, a := range *m {
				a.Release()
			}
			clear(*m)
		}
		size := max(n, 1024)
		if ok {
			size = max(n, 2*arr.Len())
			arr.Release()
		}
		arr = mk(size)
		(*m)[key] = arr
	}
	return array.NewSlice(arr, 0, int64(n))
}

func (c *constColumns) str(v string, n int) arrow.Array {
	return constColumn(c, &c.strs, v, n, func(n int) arrow.Array {
		offsets := memory.NewResizableBuffer(c.mem)
		offsets.Resize((n + 1) * arrow.Int32SizeBytes)
		values := memory.NewResizableBuffer(c.mem)
		values.Resize(n * len(v))
		off := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
		dst := values.Bytes()[:0]
		for k := range n {
			off[k] = int32(len(dst))
			dst = append(dst, v...)
		}
		off[n] = int32(len(dst))
		return fromBuffers(arrow.BinaryTypes.String, n, offsets, values)
	})
}

func (c *constColumns) int32(v int32, n int) arrow.Array {
	return constColumn(c, &c.ints, v, n, func(n int) arrow.Array {
		buf := memory.NewResizableBuffer(c.mem)
		buf.Resize(n * arrow.Int32SizeBytes)
		vals := arrow.Int32Traits.CastFromBytes(buf.Bytes())
		for k := range vals {
			vals[k] = v
		}
		return fromBuffers(arrow.PrimitiveTypes.Int32, n, buf)
	})
}

func (c *constColumns) null(dt arrow.DataType, n int) arrow.Array {
	return constColumn(c, &c.nulls, dt.Fingerprint(), n, func(n int) arrow.Array {
		return array.MakeArrayOfNull(c.mem, dt, n)
	})
}

// release releases every cached column.
func (c *constColumns) release() {
	for _, m := range []map[string]arrow.Array{c.strs, c.nulls} {
		for _, a := range m {
			a.Release()
		}
	}
	for _, a := range c.ints {
		a.Release()
	}
	c.strs, c.ints, c.nulls = nil, nil, nil
}

func (s *Subscription) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// Offsets returns where the subscription stands: the next offset of
// every bucket it reads, after the rows of every batch Next returned
// (the current one included). Store them with what you derived from
// those rows, in one transaction, and resume from them
// (SubscribeOptions.Offsets) for exactly-once processing. While a full
// start still reads the table's state there are none yet: an error says
// so.
func (s *Subscription) Offsets() (*Offsets, error) {
	m, err := s.sub.Offsets()
	if err != nil {
		if errors.Is(err, query.ErrSnapshotPhase) {
			return nil, wrapErr(fmt.Errorf("%w: %v", metadata.ErrUnsupported, err))
		}
		return nil, wrapErr(err)
	}
	o := &Offsets{TableID: s.sub.Table().TableID, Buckets: make([]BucketOffset, 0, len(m))}
	for tb, off := range m {
		p, _ := s.sub.Partition(tb)
		o.Buckets = append(o.Buckets, BucketOffset{PartitionID: tb.PartitionID, Partition: p, Bucket: tb.Bucket, Offset: off})
	}
	slices.SortFunc(o.Buckets, func(a, b BucketOffset) int {
		if a.PartitionID != b.PartitionID {
			return int(a.PartitionID - b.PartitionID)
		}
		return int(a.Bucket - b.Bucket)
	})
	return o, nil
}

// Close ends the subscription and releases what it holds. Idempotent.
func (s *Subscription) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.release()
	s.consts.release()
	s.fill.close()
	return wrapErr(s.sub.Close())
}
