package logformat

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flusslite/fluss/metadata"
)

// RowEncoder writes rows of Go values straight into an uncompressed IPC
// RecordBatch message, the one AppendRecordMessage writes for the same
// rows built into an Arrow record (buffer for buffer; the flatbuffer
// metadata is laid out by hand rather than by the flatbuffers runtime).
// It skips the builders, arrays and payload of that way, which is most of
// the cost of a commit of a few rows. It knows the flat column types; a
// schema with another (a list, a map, a row) has no RowEncoder, and a
// value it would not append as metadata.AppendValue does makes Append
// report ok false, so the caller builds the record and gets
// AppendValue's error.
type RowEncoder struct {
	cols  []rowColumn
	nbufs int // IPC buffers of all columns
}

type rowKind uint8

const (
	rowBool rowKind = iota
	rowInt8
	rowInt16
	rowInt32
	rowInt64
	rowFloat32
	rowFloat64
	rowDate32
	rowTime32
	rowTime64
	rowTimestamp
	rowDecimal128
	rowString
	rowBinary
	rowFixed
)

type rowColumn struct {
	kind  rowKind
	width int            // bytes per value of a fixed-width kind
	unit  arrow.TimeUnit // of a time or timestamp kind
	prec  int32          // of a decimal
	scale int32
}

// NewRowEncoder returns the encoder of schema's columns, or nil when one
// has a type it does not encode.
func NewRowEncoder(schema *arrow.Schema) *RowEncoder {
	e := &RowEncoder{cols: make([]rowColumn, schema.NumFields())}
	for i, f := range schema.Fields() {
		c := &e.cols[i]
		switch dt := f.Type.(type) {
		case *arrow.BooleanType:
			c.kind = rowBool
		case *arrow.Int8Type:
			c.kind, c.width = rowInt8, 1
		case *arrow.Int16Type:
			c.kind, c.width = rowInt16, 2
		case *arrow.Int32Type:
			c.kind, c.width = rowInt32, 4
		case *arrow.Int64Type:
			c.kind, c.width = rowInt64, 8
		case *arrow.Float32Type:
			c.kind, c.width = rowFloat32, 4
		case *arrow.Float64Type:
			c.kind, c.width = rowFloat64, 8
		case *arrow.Date32Type:
			c.kind, c.width = rowDate32, 4
		case *arrow.Time32Type:
			c.kind, c.width, c.unit = rowTime32, 4, dt.Unit
		case *arrow.Time64Type:
			c.kind, c.width, c.unit = rowTime64, 8, dt.Unit
		case *arrow.TimestampType:
			if dt.TimeZone != "" {
				return nil
			}
			c.kind, c.width, c.unit = rowTimestamp, 8, dt.Unit
		case *arrow.Decimal128Type:
			c.kind, c.width, c.prec, c.scale = rowDecimal128, 16, dt.Precision, dt.Scale
		case *arrow.StringType:
			c.kind = rowString
		case *arrow.BinaryType:
			c.kind = rowBinary
		case *arrow.FixedSizeBinaryType:
			c.kind, c.width = rowFixed, dt.ByteWidth
		default:
			return nil
		}
		e.nbufs += c.bufs()
	}
	return e
}

// bufs is the IPC buffer count of a column: validity, then
// values, or offsets and data for a string or binary column.
func (c *rowColumn) bufs() int {
	if c.kind == rowString || c.kind == rowBinary {
		return 3
	}
	return 2
}

// Append appends rows (row[c] the value of column c, as AppendValue
// takes it) to dst as one encapsulated IPC RecordBatch message. ok is
// false, and dst is returned as it was, when a value is not one the
// column's type takes.
func (e *RowEncoder) Append(dst []byte, rows [][]any) ([]byte, bool) {
	n, nbufs := len(rows), e.nbufs
	// The metadata (see appendRecordBatchMeta) comes first; its size
	// depends on the column and buffer counts alone.
	metaLen := recordBatchMetaLen(len(e.cols), nbufs)
	start := len(dst)
	dst = append(dst, make([]byte, 8+metaLen)...)
	bodyStart := len(dst)
	nodes := make([][2]int64, len(e.cols)) // length, null count
	buffers := make([][2]int64, 0, nbufs)  // offset, length in the body
	addBuf := func(from int) {
		buffers = append(buffers, [2]int64{int64(from - bodyStart), int64(len(dst) - from)})
		for (len(dst)-bodyStart)%8 != 0 {
			dst = append(dst, 0)
		}
	}
	for ci := range e.cols {
		c := &e.cols[ci]
		nulls := 0
		for _, row := range rows {
			if row[ci] == nil {
				nulls++
			}
		}
		nodes[ci] = [2]int64{int64(n), int64(nulls)}
		// Validity: none when nothing is NULL, as arrow-go writes it.
		from := len(dst)
		if nulls > 0 {
			dst = appendBitmap(dst, rows, func(v any) bool { return v != nil }, ci)
		}
		addBuf(from)
		from = len(dst)
		var ok bool
		switch c.kind {
		case rowBool:
			ok = true
			for _, row := range rows {
				if v := row[ci]; v != nil {
					if _, isBool := v.(bool); !isBool {
						ok = false
					}
				}
			}
			if ok {
				dst = appendBitmap(dst, rows, func(v any) bool { b, _ := v.(bool); return b }, ci)
			}
		case rowString, rowBinary:
			// The offsets buffer, then the data from.
			dst, ok = c.appendOffsets(dst, rows, ci)
			if ok {
				addBuf(from)
				from = len(dst)
				dst = appendData(dst, rows, ci)
			}
		default:
			dst, ok = c.appendFixed(dst, rows, ci)
		}
		if !ok {
			return dst[:start], false
		}
		addBuf(from)
	}
	body := len(dst) - bodyStart
	out := dst[start:]
	binary.LittleEndian.PutUint32(out, ipcContinuation)
	binary.LittleEndian.PutUint32(out[4:], uint32(metaLen))
	appendRecordBatchMeta(out[8:8:8+metaLen], int64(n), int64(body), nodes, buffers)
	return dst, true
}

// appendBitmap appends one bit per row, set where bit(row[ci]) holds.
func appendBitmap(dst []byte, rows [][]any, bit func(any) bool, ci int) []byte {
	from := len(dst)
	dst = append(dst, make([]byte, (len(rows)+7)/8)...)
	for r, row := range rows {
		if bit(row[ci]) {
			dst[from+r/8] |= 1 << (r % 8)
		}
	}
	return dst
}

// appendFixed appends the values buffer of a fixed-width column; a NULL
// takes zeros.
func (c *rowColumn) appendFixed(dst []byte, rows [][]any, ci int) ([]byte, bool) {
	le := binary.LittleEndian
	for _, row := range rows {
		v := row[ci]
		at := len(dst)
		dst = append(dst, make([]byte, c.width)...)
		if v == nil {
			continue
		}
		b := dst[at:]
		switch c.kind {
		case rowInt8, rowInt16, rowInt32, rowInt64:
			x, ok := v.(int64)
			if !ok {
				return dst, false
			}
			switch c.kind {
			case rowInt8:
				if x < math.MinInt8 || x > math.MaxInt8 {
					return dst, false
				}
				b[0] = byte(int8(x))
			case rowInt16:
				if x < math.MinInt16 || x > math.MaxInt16 {
					return dst, false
				}
				le.PutUint16(b, uint16(int16(x)))
			case rowInt32:
				if x < math.MinInt32 || x > math.MaxInt32 {
					return dst, false
				}
				le.PutUint32(b, uint32(int32(x)))
			default:
				le.PutUint64(b, uint64(x))
			}
		case rowFloat32, rowFloat64:
			x, ok := v.(float64)
			if !ok {
				return dst, false
			}
			if c.kind == rowFloat32 {
				le.PutUint32(b, math.Float32bits(float32(x)))
			} else {
				le.PutUint64(b, math.Float64bits(x))
			}
		case rowDate32:
			x, ok := v.(metadata.DateValue)
			if !ok {
				return dst, false
			}
			le.PutUint32(b, uint32(int32(x)))
		case rowTime32, rowTime64:
			x, ok := v.(metadata.TimeValue)
			t, in := metadata.TimeIn(x, c.unit)
			if !ok || !in {
				return dst, false
			}
			if c.kind == rowTime32 {
				le.PutUint32(b, uint32(int32(t)))
			} else {
				le.PutUint64(b, uint64(t))
			}
		case rowTimestamp:
			x, ok := v.(time.Time)
			if !ok {
				return dst, false
			}
			t, ok := metadata.TimestampIn(x, c.unit)
			if !ok {
				return dst, false
			}
			le.PutUint64(b, uint64(t))
		case rowDecimal128:
			x, ok := v.(metadata.DecimalValue)
			if !ok {
				return dst, false
			}
			r, ok := x.Rescale(c.scale)
			if !ok || !r.Num.FitsInPrecision(c.prec) {
				return dst, false
			}
			le.PutUint64(b, r.Num.LowBits())
			le.PutUint64(b[8:], uint64(r.Num.HighBits()))
		case rowFixed:
			x, ok := v.([]byte)
			if !ok || len(x) != c.width {
				return dst, false
			}
			copy(b, x)
		default:
			return dst, false
		}
	}
	return dst, true
}

// appendOffsets appends the offsets buffer of a string or binary column.
func (c *rowColumn) appendOffsets(dst []byte, rows [][]any, ci int) ([]byte, bool) {
	from := len(dst)
	dst = append(dst, make([]byte, 4*(len(rows)+1))...)
	total := 0
	for r, row := range rows {
		switch x := row[ci].(type) {
		case nil:
		case string:
			if c.kind != rowString {
				return dst, false
			}
			total += len(x)
		case []byte:
			if c.kind != rowBinary {
				return dst, false
			}
			total += len(x)
		default:
			return dst, false
		}
		if total > math.MaxInt32 {
			return dst, false
		}
		binary.LittleEndian.PutUint32(dst[from+4*(r+1):], uint32(total))
	}
	return dst, true
}

// appendData appends the data buffer of a string or binary column.
func appendData(dst []byte, rows [][]any, ci int) []byte {
	for _, row := range rows {
		switch x := row[ci].(type) {
		case string:
			dst = append(dst, x...)
		case []byte:
			dst = append(dst, x...)
		}
	}
	return dst
}

// The RecordBatch message's flatbuffer metadata, laid out by hand: the
// root offset; Message's vtable and table {version V5, header_type
// RecordBatch, header, bodyLength}; RecordBatch's vtable and table
// {length, nodes, buffers}; the FieldNode vector; the Buffer vector; zero
// padding to a multiple of 8. Every int64 and every struct vector's data
// is 8-byte aligned, and every offset points forward, as flatbuffers
// require.
const (
	fbMsgVtable = 4  // 6 u16: vtable size, table size, 4 field offsets
	fbMsgTable  = 16 // soffset, header, bodyLength, version, header type
	fbRBVtable  = 40 // 5 u16: vtable size, table size, 3 field offsets
	fbRBTable   = 56 // soffset, nodes, length, buffers
	fbNodesLen  = 84 // u32 count, then the 16-byte FieldNodes from 88
)

func recordBatchMetaLen(nodes, buffers int) int {
	bufsLen := fbNodesLen + 4 + 16*nodes + 4 // the Buffer vector's count
	return bufsLen + 4 + 16*buffers
}

func appendRecordBatchMeta(b []byte, length, bodyLen int64, nodes, buffers [][2]int64) {
	le := binary.LittleEndian
	b = b[:recordBatchMetaLen(len(nodes), len(buffers))]
	clear(b)
	le.PutUint32(b[0:], fbMsgTable)
	// Message's vtable: fields version (0), header_type (1), header (2),
	// bodyLength (3).
	putU16s(b[fbMsgVtable:], 12, 24, 16, 18, 4, 8)
	le.PutUint32(b[fbMsgTable:], uint32(fbMsgTable-fbMsgVtable))
	le.PutUint32(b[fbMsgTable+4:], uint32(fbRBTable-(fbMsgTable+4)))
	le.PutUint64(b[fbMsgTable+8:], uint64(bodyLen))
	const metadataV5, headerRecordBatch = 4, 3
	le.PutUint16(b[fbMsgTable+16:], metadataV5)
	b[fbMsgTable+18] = headerRecordBatch
	// RecordBatch's vtable: fields length (0), nodes (1), buffers (2).
	putU16s(b[fbRBVtable:], 10, 24, 8, 4, 16)
	le.PutUint32(b[fbRBTable:], uint32(fbRBTable-fbRBVtable))
	le.PutUint32(b[fbRBTable+4:], uint32(fbNodesLen-(fbRBTable+4)))
	le.PutUint64(b[fbRBTable+8:], uint64(length))
	bufsLen := fbNodesLen + 4 + 16*len(nodes) + 4
	le.PutUint32(b[fbRBTable+16:], uint32(bufsLen-(fbRBTable+16)))
	le.PutUint32(b[fbNodesLen:], uint32(len(nodes)))
	for i, nd := range nodes {
		p := fbNodesLen + 4 + 16*i
		le.PutUint64(b[p:], uint64(nd[0]))
		le.PutUint64(b[p+8:], uint64(nd[1]))
	}
	le.PutUint32(b[bufsLen:], uint32(len(buffers)))
	for i, bf := range buffers {
		p := bufsLen + 4 + 16*i
		le.PutUint64(b[p:], uint64(bf[0]))
		le.PutUint64(b[p+8:], uint64(bf[1]))
	}
}

func putU16s(b []byte, vs ...uint16) {
	for i, v := range vs {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
}
