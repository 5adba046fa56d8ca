package logformat

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
)

// ColumnStats are the statistics of one column over one batch.
type ColumnStats struct {
	// Column is the column's index in the table schema.
	Column int
	// NullCount is the number of NULLs in the column.
	NullCount int64
	// Min and Max are canonical values of the column's type (metadata's
	// value forms); nil when unknown (every value NULL, or a bound too long
	// to store). Long strings and byte strings are stored as bounds, not
	// exact values: Min a prefix of the true minimum, Max a value at least
	// as large as the true maximum.
	Min, Max any
}

// MaxBoundLength is the longest string or byte-string bound stored.
const MaxBoundLength = 64

const (
	flagMin = 1 << 0
	flagMax = 1 << 1
)

// The statistics blob:
//
//	uint16 LE   number of columns
//	per column:
//	  uint16 LE column index in the table schema
//	  uvarint   null count
//	  byte      flags: bit 0 min present, bit 1 max present
//	  min value when present, then max value when present
//
// Values are encoded by the column's type, which the reader knows from the
// schema, so they carry no type tag:
//
//	BOOLEAN                          1 byte (0 or 1)
//	TINYINT SMALLINT INT BIGINT      zigzag varint
//	DATE                             zigzag varint of days
//	TIME                             zigzag varint of nanoseconds of day
//	TIMESTAMP TIMESTAMP_LTZ          zigzag varint of Unix seconds, uvarint of nanoseconds
//	FLOAT                            4 bytes LE IEEE 754
//	DOUBLE                           8 bytes LE IEEE 754
//	DECIMAL(p<=18)                   zigzag varint of the unscaled value
//	DECIMAL(p>18)                    16 bytes LE: low 64 bits, then high 64 bits
//	CHAR STRING BINARY BYTES         uvarint length, bytes (at most MaxBoundLength)
//
// Nested types carry no statistics.

// SupportsStats reports whether columns of type t can carry statistics.
func SupportsStats(t metadata.DataType) bool { return t.HasOrder() }

// AppendStats appends the statistics blob for stats to dst. types are the
// types of the table schema's columns, indexed by ColumnStats.Column.
func AppendStats(dst []byte, stats []ColumnStats, types []metadata.DataType) ([]byte, error) {
	if len(stats) > math.MaxUint16 {
		return dst, fmt.Errorf("too many statistics columns: %d", len(stats))
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(stats)))
	for _, s := range stats {
		if s.Column < 0 || s.Column >= len(types) || s.Column > math.MaxUint16 {
			return dst, fmt.Errorf("statistics for column %d of %d", s.Column, len(types))
		}
		t := types[s.Column]
		if !SupportsStats(t) {
			return dst, fmt.Errorf("column %d of type %s cannot carry statistics", s.Column, t)
		}
		minV, maxV := s.Min, s.Max
		if t.IsString() || t.IsBinary() {
			minV, maxV = lowerBound(minV), upperBound(maxV)
		}
		var flags byte
		if minV != nil {
			flags |= flagMin
		}
		if maxV != nil {
			flags |= flagMax
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(s.Column))
		dst = binary.AppendUvarint(dst, uint64(s.NullCount))
		dst = append(dst, flags)
		var err error
		if minV != nil {
			if dst, err = appendValue(dst, t, minV); err != nil {
				return dst, fmt.Errorf("min of column %d: %w", s.Column, err)
			}
		}
		if maxV != nil {
			if dst, err = appendValue(dst, t, maxV); err != nil {
				return dst, fmt.Errorf("max of column %d: %w", s.Column, err)
			}
		}
	}
	return dst, nil
}

// lowerBound shortens a string or byte-string minimum to a prefix, which
// is never greater than the value itself.
func lowerBound(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > MaxBoundLength {
			return x[:MaxBoundLength]
		}
	case []byte:
		if len(x) > MaxBoundLength {
			return x[:MaxBoundLength]
		}
	}
	return v
}

// upperBound shortens a string or byte-string maximum to a value that is
// still at least as large (byte-wise): a prefix whose last byte is
// incremented. It returns nil when no such short bound exists.
func upperBound(v any) any {
	var b []byte
	switch x := v.(type) {
	case string:
		if len(x) <= MaxBoundLength {
			return v
		}
		b = []byte(x[:MaxBoundLength])
	case []byte:
		if len(x) <= MaxBoundLength {
			return v
		}
		b = append([]byte(nil), x[:MaxBoundLength]...)
	default:
		return v
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			b = b[:i+1]
			if _, ok := v.(string); ok {
				return string(b)
			}
			return b
		}
	}
	return nil
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func appendValue(dst []byte, t metadata.DataType, v any) ([]byte, error) {
	bad := func() ([]byte, error) {
		return dst, fmt.Errorf("value %v (%T) is not a canonical %s", v, v, t)
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
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		return binary.AppendUvarint(dst, zigzag(x)), nil
	case metadata.Date:
		x, ok := v.(metadata.DateValue)
		if !ok {
			return bad()
		}
		return binary.AppendUvarint(dst, zigzag(int64(x))), nil
	case metadata.Time:
		x, ok := v.(metadata.TimeValue)
		if !ok {
			return bad()
		}
		return binary.AppendUvarint(dst, zigzag(int64(x))), nil
	case metadata.Timestamp, metadata.TimestampLTZ:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, zigzag(x.Unix()))
		return binary.AppendUvarint(dst, uint64(x.Nanosecond())), nil
	case metadata.Float:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(x))), nil
	case metadata.Double:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x)), nil
	case metadata.Decimal:
		x, ok := v.(metadata.DecimalValue)
		if !ok {
			return bad()
		}
		if t.Precision <= 18 {
			return binary.AppendUvarint(dst, zigzag(int64(x.Num.LowBits()))), nil
		}
		dst = binary.LittleEndian.AppendUint64(dst, x.Num.LowBits())
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Num.HighBits())), nil
	case metadata.Char, metadata.String:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...), nil
	case metadata.Binary, metadata.Bytes:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		dst = binary.AppendUvarint(dst, uint64(len(x)))
		return append(dst, x...), nil
	}
	return bad()
}

// DecodeStats parses a statistics blob. types are the table schema's
// column types.
func DecodeStats(b []byte, types []metadata.DataType) ([]ColumnStats, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := decoder{b: b}
	n := int(d.u16())
	if d.err != nil {
		return nil, d.err
	}
	// Each column takes at least 4 bytes: a bound on n before allocating.
	if n > len(b)/4 {
		return nil, fmt.Errorf("%w: statistics claim %d columns in %d bytes", metadata.ErrCorrupt, n, len(b))
	}
	out := make([]ColumnStats, 0, n)
	for range n {
		col := int(d.u16())
		nulls := d.uvarint()
		flags := d.byte()
		if d.err != nil {
			return nil, d.err
		}
		if col >= len(types) || !SupportsStats(types[col]) {
			return nil, fmt.Errorf("%w: statistics for column %d, which cannot carry them", metadata.ErrCorrupt, col)
		}
		if nulls > math.MaxInt64 {
			return nil, fmt.Errorf("%w: null count %d out of range", metadata.ErrCorrupt, nulls)
		}
		s := ColumnStats{Column: col, NullCount: int64(nulls)}
		if flags&flagMin != 0 {
			s.Min = d.value(types[col])
		}
		if flags&flagMax != 0 {
			s.Max = d.value(types[col])
		}
		if d.err != nil {
			return nil, d.err
		}
		out = append(out, s)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes after statistics", metadata.ErrCorrupt, len(d.b))
	}
	return out, nil
}

// decoder reads from b and remembers the first error; reads after an
// error return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: statistics truncated reading %s", metadata.ErrCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil || n < 0 || len(d.b) < n {
		d.fail(what)
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) byte() byte {
	b := d.take(1, "a byte")
	if b == nil {
		return 0
	}
	return b[0]
}

func (d *decoder) u16() uint16 {
	b := d.take(2, "a uint16")
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *decoder) u32() uint32 {
	b := d.take(4, "a uint32")
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *decoder) u64() uint64 {
	b := d.take(8, "a uint64")
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) value(t metadata.DataType) any {
	switch t.Root {
	case metadata.Boolean:
		return d.byte() != 0
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		return d.varint()
	case metadata.Date:
		v := d.varint()
		if v < math.MinInt32 || v > math.MaxInt32 {
			d.err = fmt.Errorf("%w: DATE statistic %d out of range", metadata.ErrCorrupt, v)
		}
		return metadata.DateValue(v)
	case metadata.Time:
		return metadata.TimeValue(d.varint())
	case metadata.Timestamp, metadata.TimestampLTZ:
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			d.err = fmt.Errorf("%w: timestamp statistic nanoseconds %d out of range", metadata.ErrCorrupt, nsec)
		}
		return time.Unix(sec, int64(nsec)).UTC()
	case metadata.Float:
		return float64(math.Float32frombits(d.u32()))
	case metadata.Double:
		return math.Float64frombits(d.u64())
	case metadata.Decimal:
		if t.Precision <= 18 {
			return metadata.DecimalValue{Num: decimal128.FromI64(d.varint()), Scale: int32(t.Scale)}
		}
		lo := d.u64()
		hi := d.u64()
		return metadata.DecimalValue{Num: decimal128.New(int64(hi), lo), Scale: int32(t.Scale)}
	case metadata.Char, metadata.String, metadata.Binary, metadata.Bytes:
		n := d.uvarint()
		if n > MaxBoundLength {
			d.err = fmt.Errorf("%w: string statistic of %d bytes", metadata.ErrCorrupt, n)
			return nil
		}
		b := d.take(int(n), "a string")
		if t.IsString() {
			return string(b)
		}
		return append([]byte{}, b...)
	}
	d.err = fmt.Errorf("%w: statistics for type %s", metadata.ErrCorrupt, t)
	return nil
}
