package logformat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
)

// A batch stores its rows as one encapsulated IPC RecordBatch message and
// no Schema message. arrow-go can write such a message on its own
// (ipc.GetRecordBatchPayload) but only reads record batches from a stream
// that starts with a Schema message, so RecordDecoder feeds its ipc.Reader
// a Schema message built once from the table schema, then one stored
// message per Decode call.
//
// Projection happens inside the decode, as Fluss's FileLogProjection does
// on the server: the message's flatbuffer metadata is copied and its field
// node and buffer lists are cut down to the projected columns (buffer
// offsets still point into the untouched body), so arrays for the other
// columns are never built and their buffers never touched. Only the small
// metadata is copied; the body is used in place.

// Compression codecs of table.log.arrow.compression.type.
const (
	CompressionNone = "NONE"
	CompressionZstd = "ZSTD"
	CompressionLZ4  = "LZ4_FRAME"
)

const ipcContinuation = 0xFFFFFFFF

// AppendRecordMessage appends rec to dst as one encapsulated Arrow IPC
// RecordBatch message, its buffers compressed with the given codec ("" or
// NONE: uncompressed).
func AppendRecordMessage(dst []byte, rec arrow.RecordBatch, compression string, mem memory.Allocator) ([]byte, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	opts := []ipc.Option{ipc.WithAllocator(mem)}
	switch compression {
	case "", CompressionNone:
	case CompressionZstd:
		opts = append(opts, ipc.WithZstd())
	case CompressionLZ4:
		opts = append(opts, ipc.WithLZ4())
	default:
		return dst, fmt.Errorf("%w: arrow compression %q", metadata.ErrInvalidOption, compression)
	}
	p, err := ipc.GetRecordBatchPayload(rec, opts...)
	if err != nil {
		return dst, fmt.Errorf("encode arrow record batch: %w", err)
	}
	defer p.Release()
	w := appendWriter{b: dst}
	if _, err := p.WritePayload(&w); err != nil {
		return dst, fmt.Errorf("encode arrow record batch: %w", err)
	}
	return w.b, nil
}

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// fieldLayout is where one top-level column's field nodes and buffers sit
// in a RecordBatch message's flat lists.
type fieldLayout struct {
	node, nodes int
	buf, bufs   int
}

// layoutOf counts the field nodes and buffers the IPC format writes for an
// array of type dt (metadata version 5: every type here has a validity
// buffer slot). ok is false for types the projection rewrite does not know.
func layoutOf(dt arrow.DataType) (nodes, bufs int, ok bool) {
	switch dt := dt.(type) {
	case *arrow.BooleanType,
		*arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float32Type, *arrow.Float64Type,
		*arrow.Decimal128Type, *arrow.Decimal256Type,
		*arrow.Date32Type, *arrow.Date64Type,
		*arrow.Time32Type, *arrow.Time64Type, *arrow.TimestampType,
		*arrow.FixedSizeBinaryType:
		return 1, 2, true
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType:
		return 1, 3, true
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		n, b, ok := layoutOf(dt.(arrow.ListLikeType).Elem())
		return 1 + n, 2 + b, ok
	case *arrow.FixedSizeListType:
		n, b, ok := layoutOf(dt.Elem())
		return 1 + n, 1 + b, ok
	case *arrow.StructType:
		nodes, bufs = 1, 1
		for _, f := range dt.Fields() {
			n, b, ok := layoutOf(f.Type)
			if !ok {
				return 0, 0, false
			}
			nodes, bufs = nodes+n, bufs+b
		}
		return nodes, bufs, true
	}
	return 0, 0, false
}

// RecordDecoder decodes the Arrow part of batches written with one schema,
// keeping only the projected columns. It is not safe for concurrent use;
// Release it when done.
type RecordDecoder struct {
	mem     memory.Allocator
	full    *arrow.Schema
	proj    []int         // nil: every column, in order
	out     *arrow.Schema // the schema of decoded records
	layouts []fieldLayout // per column of full
	rewrite bool          // project by rewriting the metadata
	// wantNodes and wantBufs are the list lengths of the metadata arrow-go
	// reads (after any rewrite).
	wantNodes, wantBufs int
	src                 *messageSource
	rdr                 *ipc.Reader
	rdrOut              *arrow.Schema // the schema rdr decodes into
}

// NewRecordDecoder returns a decoder for records of schema whose output
// holds the columns of projection in that order (nil: all columns).
func NewRecordDecoder(schema *arrow.Schema, projection []int, mem memory.Allocator) (*RecordDecoder, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	d := &RecordDecoder{mem: mem, full: schema, out: schema}
	identity := projection == nil
	if projection != nil {
		if len(projection) == 0 {
			return nil, fmt.Errorf("%w: empty projection", metadata.ErrInvalidValue)
		}
		fields := make([]arrow.Field, len(projection))
		identity = len(projection) == schema.NumFields()
		seen := make(map[int]bool, len(projection))
		dup := false
		for i, c := range projection {
			if c < 0 || c >= schema.NumFields() {
				return nil, fmt.Errorf("%w: projected column %d of %d", metadata.ErrNotFound, c, schema.NumFields())
			}
			if c != i {
				identity = false
			}
			dup = dup || seen[c]
			seen[c] = true
			fields[i] = schema.Field(c)
		}
		if !identity {
			d.proj = append([]int(nil), projection...)
			d.out = arrow.NewSchema(fields, nil)
			d.rewrite = !dup
		}
	}
	// The layouts serve the projection and the checks Decode makes before
	// arrow-go reads the metadata (it does not bound list indexes).
	d.layouts = make([]fieldLayout, schema.NumFields())
	node, buf := 0, 0
	for i := range schema.NumFields() {
		n, b, ok := layoutOf(schema.Field(i).Type)
		if !ok {
			return nil, fmt.Errorf("%w: arrow type %s in a log batch", metadata.ErrUnsupported, schema.Field(i).Type)
		}
		d.layouts[i] = fieldLayout{node: node, nodes: n, buf: buf, bufs: b}
		node, buf = node+n, buf+b
	}
	d.wantNodes, d.wantBufs = node, buf
	if d.rewrite {
		d.wantNodes, d.wantBufs = 0, 0
		for _, c := range d.proj {
			d.wantNodes += d.layouts[c].nodes
			d.wantBufs += d.layouts[c].bufs
		}
	}
	return d, nil
}

// Projects reports whether the decoder reads only some of the columns
// (without repeating any), so that a caller can read only their buffers
// (BodyRanges).
func (d *RecordDecoder) Projects() bool { return d.rewrite }

// MessagePrefix returns how many bytes of an encapsulated RecordBatch
// message precede its body (marker, length, metadata), given at least its
// first 8 bytes.
func MessagePrefix(msg []byte) (int, error) {
	if len(msg) < 8 || binary.LittleEndian.Uint32(msg) != ipcContinuation {
		return 0, fmt.Errorf("%w: arrow message lacks its continuation marker", metadata.ErrCorrupt)
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(msg[4:])))
	if metaLen < 8 || metaLen > MaxUncompressedBody {
		return 0, fmt.Errorf("%w: arrow metadata length %d", metadata.ErrCorrupt, metaLen)
	}
	return 8 + int(metaLen), nil
}

// BodyRanges returns the byte ranges [start, end) of a RecordBatch
// message (relative to its start) that Decode reads for the projected
// columns, given the message up to its body (MessagePrefix bytes). Adjacent
// ranges are merged. Decode checks the rest as always.
func (d *RecordDecoder) BodyRanges(prefix []byte) ([][2]int64, error) {
	n, err := MessagePrefix(prefix)
	if err != nil {
		return nil, err
	}
	if len(prefix) < n {
		return nil, fmt.Errorf("%w: arrow message prefix cut short", metadata.ErrCorrupt)
	}
	meta := prefix[8:n]
	info, err := parseRecordBatchMeta(meta)
	if err != nil {
		return nil, err
	}
	last := d.layouts[len(d.layouts)-1]
	if info.buffers.n != last.buf+last.bufs {
		return nil, fmt.Errorf("%w: arrow record batch has %d buffers, schema needs %d", metadata.ErrCorrupt, info.buffers.n, last.buf+last.bufs)
	}
	cols := d.proj
	if cols == nil {
		cols = make([]int, len(d.layouts))
		for i := range cols {
			cols[i] = i
		}
	}
	var out [][2]int64
	for _, c := range cols {
		l := d.layouts[c]
		for b := l.buf; b < l.buf+l.bufs; b++ {
			p := info.buffers.pos + 16*b
			off := int64(binary.LittleEndian.Uint64(meta[p:]))
			size := int64(binary.LittleEndian.Uint64(meta[p+8:]))
			if off < 0 || size < 0 || off > info.bodyLen || size > info.bodyLen-off {
				return nil, fmt.Errorf("%w: arrow buffer %d at %d+%d outside a %d-byte body", metadata.ErrCorrupt, b, off, size, info.bodyLen)
			}
			if size == 0 {
				continue
			}
			start, end := int64(n)+off, int64(n)+off+size
			if k := len(out); k > 0 && out[k-1][1] == start {
				out[k-1][1] = end
				continue
			}
			out = append(out, [2]int64{start, end})
		}
	}
	return out, nil
}

// Schema is the schema of the records Decode returns.
func (d *RecordDecoder) Schema() *arrow.Schema { return d.out }

// Release frees the decoder's reader. Idempotent.
func (d *RecordDecoder) Release() {
	if d.rdr != nil {
		d.rdr.Release()
		d.rdr = nil
	}
	if d.src != nil {
		d.src.Release()
		d.src = nil
	}
}

// Decode decodes one encapsulated RecordBatch message. The record it
// returns references msg's memory (msg stays retained as long as the
// record lives) and must be released by the caller.
func (d *RecordDecoder) Decode(msg *memory.Buffer) (arrow.RecordBatch, error) {
	b := msg.Bytes()
	if len(b) < 8 || binary.LittleEndian.Uint32(b) != ipcContinuation {
		return nil, fmt.Errorf("%w: arrow message lacks its continuation marker", metadata.ErrCorrupt)
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(b[4:])))
	if metaLen < 8 || 8+metaLen > int64(len(b)) {
		return nil, fmt.Errorf("%w: arrow metadata length %d in a %d-byte message", metadata.ErrCorrupt, metaLen, len(b))
	}
	meta := append([]byte(nil), b[8:8+metaLen]...)
	info, err := parseRecordBatchMeta(meta)
	if err != nil {
		return nil, err
	}
	if info.bodyLen != int64(len(b))-8-metaLen {
		return nil, fmt.Errorf("%w: arrow body length %d, message has %d bytes after the metadata", metadata.ErrCorrupt, info.bodyLen, int64(len(b))-8-metaLen)
	}
	if d.rewrite {
		if err := d.project(meta, info); err != nil {
			return nil, err
		}
		// Parse again: what arrow-go reads is the rewritten metadata
		// (corrupt metadata may even overlap its two lists).
		if info, err = parseRecordBatchMeta(meta); err != nil {
			return nil, err
		}
	}
	if info.nodes.n != d.wantNodes || info.buffers.n != d.wantBufs {
		return nil, fmt.Errorf("%w: arrow record batch has %d field nodes and %d buffers, schema needs %d and %d",
			metadata.ErrCorrupt, info.nodes.n, info.buffers.n, d.wantNodes, d.wantBufs)
	}
	if err := checkBuffers(meta, info, b[8+metaLen:]); err != nil {
		return nil, err
	}
	body := memory.SliceBuffer(msg, int(8+metaLen), int(info.bodyLen))
	defer body.Release()
	metaBuf := memory.NewBufferBytes(meta)
	m := ipc.NewMessage(metaBuf, body)

	readSchema := d.full
	if d.rewrite || d.proj == nil {
		readSchema = d.out
	}
	if d.rdr == nil || d.rdrOut != readSchema {
		d.Release()
		d.src = newMessageSource(readSchema, d.mem)
		rdr, err := ipc.NewReaderFromMessageReader(d.src, ipc.WithAllocator(d.mem))
		if err != nil {
			m.Release()
			d.Release()
			return nil, fmt.Errorf("%w: arrow schema: %v", metadata.ErrCorrupt, err)
		}
		d.rdr, d.rdrOut = rdr, readSchema
	}
	d.src.push(m)
	if !d.rdr.Next() {
		err := d.rdr.Err()
		d.Release()
		if err == nil {
			err = errors.New("no record")
		}
		return nil, fmt.Errorf("%w: arrow record batch: %v", metadata.ErrCorrupt, err)
	}
	rec := d.rdr.RecordBatch()
	if rec.NumRows() != info.length {
		d.Release()
		return nil, fmt.Errorf("%w: arrow record batch has %d rows, metadata says %d", metadata.ErrCorrupt, rec.NumRows(), info.length)
	}
	if d.proj != nil && !d.rewrite {
		// Duplicate columns in the projection: decode all, then pick.
		cols := make([]arrow.Array, len(d.proj))
		for i, c := range d.proj {
			cols[i] = rec.Column(c)
		}
		return array.NewRecordBatch(d.out, cols, rec.NumRows()), nil
	}
	rec.Retain()
	return rec, nil
}

// MaxUncompressedBody bounds the decompressed size of one record batch's
// buffers (arrow-go's own default body limit). arrow-go allocates whatever
// a compressed buffer's size prefix claims, so the prefixes are checked
// first: a corrupt prefix must give an error, not exhaust memory. Writers
// keep batches well below it.
const MaxUncompressedBody = 256 << 20

// checkBuffers verifies that every buffer of the message lies inside body
// and that the decompressed sizes stay within MaxUncompressedBody, and
// that every field node's counts are sane.
func checkBuffers(meta []byte, info batchMeta, body []byte) error {
	var total int64
	for i := range info.buffers.n {
		p := info.buffers.pos + 16*i
		off := int64(binary.LittleEndian.Uint64(meta[p:]))
		n := int64(binary.LittleEndian.Uint64(meta[p+8:]))
		if off < 0 || n < 0 || off > int64(len(body)) || n > int64(len(body))-off {
			return fmt.Errorf("%w: arrow buffer %d at %d+%d outside a %d-byte body", metadata.ErrCorrupt, i, off, n, len(body))
		}
		size := n
		if info.compressed && n > 0 {
			if n < 8 {
				return fmt.Errorf("%w: compressed arrow buffer %d is %d bytes", metadata.ErrCorrupt, i, n)
			}
			if u := int64(binary.LittleEndian.Uint64(body[off:])); u != -1 {
				size = u
				if err := checkCompressed(info.codec, int(i), size, body[off+8:off+n]); err != nil {
					return err
				}
			}
		}
		if size < 0 || size > MaxUncompressedBody-total {
			return fmt.Errorf("%w: arrow buffers exceed %d bytes uncompressed", metadata.ErrCorrupt, MaxUncompressedBody)
		}
		total += size
	}
	for i := range info.nodes.n {
		p := info.nodes.pos + 16*i
		length := int64(binary.LittleEndian.Uint64(meta[p:]))
		nulls := int64(binary.LittleEndian.Uint64(meta[p+8:]))
		if length < 0 || nulls < 0 || nulls > length || length > 8*MaxUncompressedBody {
			return fmt.Errorf("%w: arrow field node %d has length %d and %d nulls", metadata.ErrCorrupt, i, length, nulls)
		}
	}
	return nil
}

// project cuts the node and buffer lists of meta (in place) down to the
// projected columns, in projection order.
func (d *RecordDecoder) project(meta []byte, info batchMeta) error {
	last := d.layouts[len(d.layouts)-1]
	if info.nodes.n != last.node+last.nodes || info.buffers.n != last.buf+last.bufs {
		return fmt.Errorf("%w: arrow record batch has %d field nodes and %d buffers, schema needs %d and %d",
			metadata.ErrCorrupt, info.nodes.n, info.buffers.n, last.node+last.nodes, last.buf+last.bufs)
	}
	var nodes, bufs []byte
	for _, c := range d.proj {
		l := d.layouts[c]
		nodes = append(nodes, meta[info.nodes.pos+16*l.node:info.nodes.pos+16*(l.node+l.nodes)]...)
		bufs = append(bufs, meta[info.buffers.pos+16*l.buf:info.buffers.pos+16*(l.buf+l.bufs)]...)
	}
	copy(meta[info.nodes.pos:], nodes)
	binary.LittleEndian.PutUint32(meta[info.nodes.pos-4:], uint32(len(nodes)/16))
	copy(meta[info.buffers.pos:], bufs)
	binary.LittleEndian.PutUint32(meta[info.buffers.pos-4:], uint32(len(bufs)/16))
	return nil
}

// messageSource is the ipc.MessageReader behind a RecordDecoder: the
// Schema message first, then whatever message was pushed last.
type messageSource struct {
	refs    atomic.Int64
	schema  *ipc.Message
	pending *ipc.Message
	cur     *ipc.Message
}

func newMessageSource(schema *arrow.Schema, mem memory.Allocator) *messageSource {
	p := ipc.GetSchemaPayload(schema, mem)
	meta := p.Meta()
	s := &messageSource{schema: ipc.NewMessage(meta, memory.NewBufferBytes(nil))}
	meta.Release()
	p.Release()
	s.refs.Add(1)
	return s
}

func (s *messageSource) push(m *ipc.Message) {
	if s.pending != nil {
		s.pending.Release()
	}
	s.pending = m
}

func (s *messageSource) Message() (*ipc.Message, error) {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	switch {
	case s.schema != nil:
		s.cur, s.schema = s.schema, nil
	case s.pending != nil:
		s.cur, s.pending = s.pending, nil
	default:
		return nil, io.EOF
	}
	return s.cur, nil
}

func (s *messageSource) Retain() { s.refs.Add(1) }

func (s *messageSource) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	for _, m := range []*ipc.Message{s.schema, s.pending, s.cur} {
		if m != nil {
			m.Release()
		}
	}
	s.schema, s.pending, s.cur = nil, nil, nil
}

// vec is a flatbuffer vector of 16-byte structs: its first element's
// position and its length.
type vec struct{ pos, n int }

// batchMeta is what Decode needs from a RecordBatch message's metadata.
type batchMeta struct {
	length     int64
	bodyLen    int64
	nodes      vec
	buffers    vec
	compressed bool
	codec      int // codecLZ4Frame or codecZstd, when compressed
}

// parseRecordBatchMeta reads the flatbuffer metadata of a RecordBatch
// message (Message{version, header_type, header, bodyLength} with header
// RecordBatch{length, nodes, buffers, compression, variadicBufferCounts}),
// checking every position against the buffer's bounds.
func parseRecordBatchMeta(b []byte) (batchMeta, error) {
	fb := flatbuf{b: b}
	msg := fb.root()
	const messageHeaderRecordBatch = 3
	if ht := fb.fieldU8(msg, 1); ht != messageHeaderRecordBatch {
		if fb.err == nil {
			fb.err = fmt.Errorf("message header type %d is not a record batch", ht)
		}
	}
	rb := fb.fieldTable(msg, 2)
	out := batchMeta{
		bodyLen: fb.fieldI64(msg, 3),
		length:  fb.fieldI64(rb, 0),
		nodes:   fb.fieldVec(rb, 1, 16),
		buffers: fb.fieldVec(rb, 2, 16),
	}
	if out.compressed = fb.field(rb, 3) >= 0; out.compressed {
		// BodyCompression{codec, method}; an absent codec is LZ4_FRAME.
		out.codec = fb.fieldU8(fb.fieldTable(rb, 3), 0)
	}
	if v := fb.fieldVec(rb, 4, 8); v.n != 0 && fb.err == nil {
		fb.err = errors.New("variadic buffers are not supported")
	}
	if fb.err == nil && (out.bodyLen < 0 || out.length < 0) {
		fb.err = fmt.Errorf("negative body length %d or row count %d", out.bodyLen, out.length)
	}
	if fb.err != nil {
		return batchMeta{}, fmt.Errorf("%w: arrow metadata: %v", metadata.ErrCorrupt, fb.err)
	}
	return out, nil
}

// flatbuf reads a flatbuffer defensively; the first out-of-bounds access
// sets err and later reads return zero values.
type flatbuf struct {
	b   []byte
	err error
}

func (f *flatbuf) ok(pos, n int) bool {
	if f.err != nil {
		return false
	}
	if pos < 0 || n < 0 || pos > len(f.b)-n {
		f.err = fmt.Errorf("offset %d+%d out of bounds (%d bytes)", pos, n, len(f.b))
		return false
	}
	return true
}

func (f *flatbuf) u16(pos int) int {
	if !f.ok(pos, 2) {
		return 0
	}
	return int(binary.LittleEndian.Uint16(f.b[pos:]))
}

func (f *flatbuf) u32(pos int) int64 {
	if !f.ok(pos, 4) {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(f.b[pos:]))
}

func (f *flatbuf) root() int { return int(f.u32(0)) }

// field returns the position of a table's field, or -1 when absent.
func (f *flatbuf) field(table, slot int) int {
	if !f.ok(table, 4) {
		return -1
	}
	vt := int64(table) - int64(int32(binary.LittleEndian.Uint32(f.b[table:])))
	if vt < 0 || vt > int64(len(f.b)) {
		f.err = fmt.Errorf("vtable offset %d out of bounds", vt)
		return -1
	}
	// Present when its vtable entry starts inside the vtable, exactly as
	// the flatbuffers runtime decides, so this parser and arrow-go's never
	// disagree about a field.
	size := f.u16(int(vt))
	if 4+2*slot >= size {
		return -1
	}
	off := f.u16(int(vt) + 4 + 2*slot)
	if f.err != nil || off == 0 {
		return -1
	}
	return table + off
}

func (f *flatbuf) fieldU8(table, slot int) int {
	p := f.field(table, slot)
	if p < 0 || !f.ok(p, 1) {
		return 0
	}
	return int(f.b[p])
}

func (f *flatbuf) fieldI64(table, slot int) int64 {
	p := f.field(table, slot)
	if p < 0 || !f.ok(p, 8) {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(f.b[p:]))
}

func (f *flatbuf) fieldTable(table, slot int) int {
	p := f.field(table, slot)
	if p < 0 {
		if f.err == nil {
			f.err = fmt.Errorf("missing table in slot %d", slot)
		}
		return 0
	}
	return p + int(f.u32(p))
}

func (f *flatbuf) fieldVec(table, slot, elem int) vec {
	p := f.field(table, slot)
	if p < 0 {
		return vec{}
	}
	at := int64(p) + f.u32(p)
	n := f.u32(int(min(at, int64(len(f.b)))))
	if f.err == nil && at+4+n*int64(elem) > int64(len(f.b)) {
		f.err = fmt.Errorf("vector of %d elements at %d out of bounds", n, at)
	}
	if f.err != nil {
		return vec{}
	}
	return vec{pos: int(at) + 4, n: int(n)}
}
