package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
)

// Pebble keys. Every primary-key bucket owns two key ranges of the one
// Pebble store, both starting with the bucket's 20-byte id (table id,
// partition id with its sign bit flipped so that NonPartitioned sorts
// first, bucket; all big-endian):
//
//	'd' <bucket id> <metadata.EncodeOrderedKey of the physical key>   a live row
//	'm' <bucket id>                                                    the bucket's flushed offset
//
// The flushed offset (uint64 big-endian) is the log offset up to which the
// rows reflect the bucket's changelog; it is written in the same Pebble
// batch as the rows it covers.
const (
	kvDataTag    = 'd'
	kvMetaTag    = 'm'
	bucketIDSize = 20
	kvPrefixSize = 1 + bucketIDSize
)

func appendBucketID(dst []byte, tb metadata.TableBucket) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(tb.TableID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(tb.PartitionID)^signBit)
	return binary.BigEndian.AppendUint32(dst, uint32(tb.Bucket))
}

const signBit = uint64(1) << 63

func parseBucketID(b []byte) (metadata.TableBucket, bool) {
	if len(b) != bucketIDSize {
		return metadata.TableBucket{}, false
	}
	return metadata.TableBucket{
		TableID:     int64(binary.BigEndian.Uint64(b)),
		PartitionID: int64(binary.BigEndian.Uint64(b[8:]) ^ signBit),
		Bucket:      int32(binary.BigEndian.Uint32(b[16:])),
	}, true
}

// kvDataPrefix is the prefix of a bucket's rows.
func kvDataPrefix(tb metadata.TableBucket) []byte {
	return appendBucketID(append(make([]byte, 0, kvPrefixSize+16), kvDataTag), tb)
}

func kvMetaKey(tb metadata.TableBucket) []byte {
	return appendBucketID(append(make([]byte, 0, kvPrefixSize), kvMetaTag), tb)
}

// tableRange returns [start, end) of the keys with tag of one table, or of
// one partition of it when partition != nil.
func tableRange(tag byte, tableID int64, partition *int64) (start, end []byte) {
	start = binary.BigEndian.AppendUint64([]byte{tag}, uint64(tableID))
	if partition == nil {
		end = binary.BigEndian.AppendUint64([]byte{tag}, uint64(tableID)+1)
		return start, end
	}
	p := uint64(*partition) ^ signBit
	end = binary.BigEndian.AppendUint64(start[:9:9], p+1)
	start = binary.BigEndian.AppendUint64(start, p)
	return start, end
}

// prefixEnd is the smallest key greater than every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Row values in Pebble. A value is one row of the table in a compact
// encoding of our own:
//
//	uvarint  schema id
//	bitmap   one bit per column (LSB first), set when the column is NULL
//	fields   each non-NULL column in schema order:
//	  BOOLEAN                   1 byte
//	  TINYINT..BIGINT           zig-zag varint
//	  FLOAT, DOUBLE             IEEE bits, 4 or 8 bytes little-endian
//	  DECIMAL(p<=18)            zig-zag varint of the unscaled value
//	  DECIMAL(p>18)             unscaled value: low then high 64 bits, little-endian
//	  CHAR STRING BINARY BYTES  uvarint length, bytes
//	  DATE                      zig-zag varint of days
//	  TIME                      zig-zag varint of nanoseconds of the day
//	  TIMESTAMP[_LTZ]           zig-zag varint of Unix seconds, uvarint nanoseconds
//	  ARRAY                     uvarint n, bitmap of NULL elements, the elements
//	  MAP                       uvarint n, the keys, bitmap of NULL values, the values
//	  ROW                       bitmap of NULL fields, the fields
//
// Decoding treats the bytes as untrusted: anything malformed is an error
// wrapping metadata.ErrCorrupt.

func encodeRowValue(dst []byte, schemaID int32, types []metadata.DataType, row []any) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(schemaID))
	dst = appendNullBitmap(dst, row)
	var err error
	for i, v := range row {
		if v == nil {
			continue
		}
		if dst, err = appendFieldValue(dst, types[i], v); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func appendNullBitmap(dst []byte, vals []any) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, (len(vals)+7)/8)...)
	for i, v := range vals {
		if v == nil {
			dst[start+i/8] |= 1 << (i % 8)
		}
	}
	return dst
}

func appendFieldValue(dst []byte, t metadata.DataType, v any) ([]byte, error) {
	bad := func() ([]byte, error) {
		return nil, fmt.Errorf("%w: value %T does not fit type %s", metadata.ErrInvalidValue, v, t)
	}
	switch t.Root {
	case metadata.Boolean:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		n, ok := v.(int64)
		if !ok {
			return bad()
		}
		return binary.AppendVarint(dst, n), nil
	case metadata.Float:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
	case metadata.Double:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case metadata.Decimal:
		d, ok := v.(metadata.DecimalValue)
		if !ok {
			return bad()
		}
		if t.Precision <= 18 {
			return binary.AppendVarint(dst, int64(d.Num.LowBits())), nil
		}
		dst = binary.LittleEndian.AppendUint64(dst, d.Num.LowBits())
		return binary.LittleEndian.AppendUint64(dst, uint64(d.Num.HighBits())), nil
	case metadata.Char, metadata.String:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...), nil
	case metadata.Binary, metadata.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...), nil
	case metadata.Date:
		d, ok := v.(metadata.DateValue)
		if !ok {
			return bad()
		}
		return binary.AppendVarint(dst, int64(d)), nil
	case metadata.Time:
		d, ok := v.(metadata.TimeValue)
		if !ok {
			return bad()
		}
		return binary.AppendVarint(dst, int64(d)), nil
	case metadata.Timestamp, metadata.TimestampLTZ:
		ts, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		dst = binary.AppendVarint(dst, ts.Unix())
		return binary.AppendUvarint(dst, uint64(ts.Nanosecond())), nil
	case metadata.Array:
		elems, ok := v.([]any)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(elems)))
		dst = appendNullBitmap(dst, elems)
		var err error
		for _, e := range elems {
			if e != nil {
				if dst, err = appendFieldValue(dst, *t.Elem, e); err != nil {
					return nil, err
				}
			}
		}
		return dst, nil
	case metadata.Map:
		m, ok := v.(metadata.MapValue)
		if !ok || len(m.Keys) != len(m.Values) {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(m.Keys)))
		var err error
		for _, k := range m.Keys {
			if k == nil {
				return nil, fmt.Errorf("%w: NULL map key", metadata.ErrInvalidValue)
			}
			if dst, err = appendFieldValue(dst, *t.Elem, k); err != nil {
				return nil, err
			}
		}
		dst = appendNullBitmap(dst, m.Values)
		for _, x := range m.Values {
			if x != nil {
				if dst, err = appendFieldValue(dst, *t.Value, x); err != nil {
					return nil, err
				}
			}
		}
		return dst, nil
	case metadata.Row:
		fields, ok := v.([]any)
		if !ok || len(fields) != len(t.Fields) {
			return bad()
		}
		dst = appendNullBitmap(dst, fields)
		var err error
		for i, f := range fields {
			if f != nil {
				if dst, err = appendFieldValue(dst, t.Fields[i].Type, f); err != nil {
					return nil, err
				}
			}
		}
		return dst, nil
	}
	return bad()
}

// rowDecoder reads the encoding above; the first failure sticks.
type rowDecoder struct {
	b   []byte
	err error
}

func (d *rowDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: row value: %s", metadata.ErrCorrupt, what)
	}
	d.b = nil
}

func (d *rowDecoder) take(n uint64, what string) []byte {
	if n > uint64(len(d.b)) {
		d.fail(what + " runs past the end")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *rowDecoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad " + what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *rowDecoder) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad " + what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *rowDecoder) count(what string) int {
	n := d.uvarint(what)
	// Every element takes at least one bit of a bitmap or a byte.
	if n > uint64(len(d.b))*8+8 {
		d.fail(what + " too large")
		return 0
	}
	return int(n)
}

func (d *rowDecoder) bitmap(n int) []byte {
	return d.take(uint64((n+7)/8), "null bitmap")
}

func isNull(bitmap []byte, i int) bool { return bitmap[i/8]&(1<<(i%8)) != 0 }

// decodeRowValue decodes a row value of the table info describes (types
// are its columns' types), checking its schema id.
func decodeRowValue(b []byte, info *metadata.TableInfo, types []metadata.DataType) ([]any, error) {
	return decodeRowColumns(b, info, types, nil)
}

// decodeRowColumns is decodeRowValue that decodes only the columns need
// marks (nil: all) and leaves the others nil; the whole value is checked
// all the same.
func decodeRowColumns(b []byte, info *metadata.TableInfo, types []metadata.DataType, need []bool) ([]any, error) {
	row := make([]any, len(types))
	// decodeColumns's loop, without its callback: the decoder stays on
	// the stack (this is every point read's decode).
	d := rowDecoder{b: b}
	have, nulls, err := d.columns(info, len(types))
	if err != nil {
		return nil, err
	}
	for i := range have {
		if d.err != nil {
			return nil, d.err
		}
		switch {
		case isNull(nulls, i):
		case need == nil || need[i]:
			row[i] = d.value(types[i], 0)
		default:
			d.skip(types[i])
		}
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	for i := have; i < len(types); i++ {
		if need == nil || need[i] {
			row[i] = padValue(info, i)
		}
	}
	return row, nil
}

// appendRowColumns is decodeRowColumns that appends the row to rb, whose
// fields are the Arrow types of types, instead of building values: the
// columns need does not mark are appended as NULL. The common scalar
// types go straight into their builders. On an error rb holds part of
// the row and must be discarded.
func appendRowColumns(rb *array.RecordBuilder, b []byte, info *metadata.TableInfo, types []metadata.DataType, need []bool) error {
	have, err := decodeColumns(b, info, len(types), func(d *rowDecoder, i int, null bool) {
		fb := rb.Field(i)
		switch {
		case null:
			fb.AppendNull()
		case need == nil || need[i]:
			if err := d.appendValue(fb, types[i]); err != nil && d.err == nil {
				d.err = err
			}
		default:
			d.skip(types[i])
			fb.AppendNull()
		}
	})
	if err != nil {
		return err
	}
	for i := have; i < len(types); i++ {
		v := any(nil)
		if need == nil || need[i] {
			v = padValue(info, i)
		}
		if err := metadata.AppendValue(rb.Field(i), types[i], v); err != nil {
			return err
		}
	}
	return nil
}

// decodeColumns reads the header of a row value of the table info
// describes, of n columns, checking its schema id, and calls col for each
// column, which reads the column's value unless it is NULL; then it
// checks that nothing follows. A value written under an earlier schema
// holds its first columns only (see metadata.PastSchema): have is how
// many it holds, col is called for those, and the caller gives the others
// their metadata.Column.PadValue.
func decodeColumns(b []byte, info *metadata.TableInfo, n int, col func(d *rowDecoder, i int, null bool)) (have int, err error) {
	d := &rowDecoder{b: b}
	have, nulls, err := d.columns(info, n)
	if err != nil {
		return 0, err
	}
	for i := range have {
		if d.err != nil {
			return 0, d.err
		}
		col(d, i, isNull(nulls, i))
	}
	return have, d.end()
}

// columns reads a row value's schema id and null bitmap: have is the
// number of columns the value holds (fewer than n for a row stored before
// columns were added).
func (d *rowDecoder) columns(info *metadata.TableInfo, n int) (have int, nulls []byte, err error) {
	sid := d.uvarint("schema id")
	if d.err != nil {
		return 0, nil, d.err
	}
	have = n
	if sid != uint64(info.SchemaID) {
		k, ok := 0, false
		if sid <= math.MaxInt32 {
			k, ok = info.SchemaColumns(int32(sid))
		}
		if !ok || k > n {
			return 0, nil, fmt.Errorf("%w: row value has schema id %d, which table %s (schema id %d) never had", metadata.ErrCorrupt, sid, info.Path, info.SchemaID)
		}
		have = k
	}
	nulls = d.bitmap(have)
	return have, nulls, d.err
}

// end fails when bytes follow the last column, and returns the first
// error of the decode.
func (d *rowDecoder) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d bytes after the last column", len(d.b)))
	}
	return d.err
}

// padValue is what column i reads in a row stored before it was added.
func padValue(info *metadata.TableInfo, i int) any {
	if i < len(info.Schema.Columns) {
		return info.Schema.Columns[i].PadValue()
	}
	return nil
}

// appendValue reads one value of type t and appends it to fb, a builder
// of t's Arrow type: integers, doubles and strings without building a Go
// value, the others through metadata.AppendValue.
func (d *rowDecoder) appendValue(fb array.Builder, t metadata.DataType) error {
	switch t.Root {
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		x := d.varint("integer")
		if d.err != nil {
			return d.err
		}
		switch bb := fb.(type) {
		case *array.Int64Builder:
			bb.Append(x)
			return nil
		case *array.Int32Builder:
			if x >= math.MinInt32 && x <= math.MaxInt32 {
				bb.Append(int32(x))
				return nil
			}
		}
		return metadata.AppendValue(fb, t, x)
	case metadata.Double:
		b := d.take(8, "double")
		if d.err != nil {
			return d.err
		}
		x := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if bb, ok := fb.(*array.Float64Builder); ok {
			bb.Append(x)
			return nil
		}
		return metadata.AppendValue(fb, t, x)
	case metadata.Char, metadata.String:
		b := d.take(d.uvarint("string length"), "string")
		if d.err != nil {
			return d.err
		}
		if bb, ok := fb.(*array.StringBuilder); ok {
			bb.BinaryBuilder.Append(b)
			return nil
		}
		return metadata.AppendValue(fb, t, string(b))
	}
	v := d.value(t, 0)
	if d.err != nil {
		return d.err
	}
	return metadata.AppendValue(fb, t, v)
}

// skip steps over one value of type t, as value would read it, without
// building it.
func (d *rowDecoder) skip(t metadata.DataType) {
	switch t.Root {
	case metadata.Boolean:
		d.take(1, "boolean")
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt, metadata.Date, metadata.Time:
		d.varint("integer")
	case metadata.Float:
		d.take(4, "float")
	case metadata.Double:
		d.take(8, "double")
	case metadata.Decimal:
		if t.Precision <= 18 {
			d.varint("decimal")
		} else {
			d.take(16, "decimal")
		}
	case metadata.Char, metadata.String, metadata.Binary, metadata.Bytes:
		d.take(d.uvarint("length"), "string")
	case metadata.Timestamp, metadata.TimestampLTZ:
		d.varint("timestamp")
		if ns := d.uvarint("timestamp nanoseconds"); ns >= 1e9 {
			d.fail("timestamp nanoseconds out of range")
		}
	default:
		d.value(t, 0)
	}
}

func (d *rowDecoder) value(t metadata.DataType, depth int) any {
	if depth > 64 {
		d.fail("nesting too deep")
		return nil
	}
	switch t.Root {
	case metadata.Boolean:
		b := d.take(1, "boolean")
		return d.err == nil && b[0] != 0
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		return d.varint("integer")
	case metadata.Float:
		b := d.take(4, "float")
		if d.err != nil {
			return nil
		}
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case metadata.Double:
		b := d.take(8, "double")
		if d.err != nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case metadata.Decimal:
		if t.Precision <= 18 {
			return metadata.NewDecimal(d.varint("decimal"), int32(t.Scale))
		}
		b := d.take(16, "decimal")
		if d.err != nil {
			return nil
		}
		num := decimal128.New(int64(binary.LittleEndian.Uint64(b[8:])), binary.LittleEndian.Uint64(b))
		return metadata.DecimalValue{Num: num, Scale: int32(t.Scale)}
	case metadata.Char, metadata.String:
		return string(d.take(d.uvarint("string length"), "string"))
	case metadata.Binary, metadata.Bytes:
		return append([]byte{}, d.take(d.uvarint("bytes length"), "bytes")...)
	case metadata.Date:
		return metadata.DateValue(d.varint("date"))
	case metadata.Time:
		return metadata.TimeValue(d.varint("time"))
	case metadata.Timestamp, metadata.TimestampLTZ:
		sec := d.varint("timestamp")
		ns := d.uvarint("timestamp nanoseconds")
		if ns >= 1e9 {
			d.fail("timestamp nanoseconds out of range")
		}
		return time.Unix(sec, int64(ns)).UTC()
	case metadata.Array:
		n := d.count("array length")
		nulls := d.bitmap(n)
		out := make([]any, n)
		for i := range out {
			if d.err != nil {
				return nil
			}
			if !isNull(nulls, i) {
				out[i] = d.value(*t.Elem, depth+1)
			}
		}
		return out
	case metadata.Map:
		n := d.count("map size")
		m := metadata.MapValue{Keys: make([]any, n), Values: make([]any, n)}
		for i := range m.Keys {
			m.Keys[i] = d.value(*t.Elem, depth+1)
			if d.err != nil {
				return nil
			}
		}
		nulls := d.bitmap(n)
		for i := range m.Values {
			if d.err != nil {
				return nil
			}
			if !isNull(nulls, i) {
				m.Values[i] = d.value(*t.Value, depth+1)
			}
		}
		return m
	case metadata.Row:
		nulls := d.bitmap(len(t.Fields))
		out := make([]any, len(t.Fields))
		for i, f := range t.Fields {
			if d.err != nil {
				return nil
			}
			if !isNull(nulls, i) {
				out[i] = d.value(f.Type, depth+1)
			}
		}
		return out
	}
	d.fail("unknown type " + t.String())
	return nil
}
