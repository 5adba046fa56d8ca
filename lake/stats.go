package lake

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet"
	pqmeta "github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// colStats are the statistics of one column over a set of rows, as
// canonical values of the column's type.
type colStats struct {
	min, max   any // nil: unknown
	nulls      int64
	nullsKnown bool
}

// statsSet is a predicate.Stats over one row group or one whole file,
// indexed by table column. Columns it holds nothing for answer "unknown".
type statsSet struct {
	rows int64
	cols map[int]colStats
}

var _ predicate.Stats = (*statsSet)(nil)

func (s *statsSet) RowCount() int64 { return s.rows }

func (s *statsSet) Min(col int) (any, bool) {
	c, ok := s.cols[col]
	return c.min, ok && c.min != nil
}

func (s *statsSet) Max(col int) (any, bool) {
	c, ok := s.cols[col]
	return c.max, ok && c.max != nil
}

func (s *statsSet) NullCount(col int) (int64, bool) {
	c, ok := s.cols[col]
	return c.nulls, ok && c.nullsKnown
}

// statsFor builds the statistics of row group rg for the given table
// columns. leaf maps a table column to its Parquet leaf column (-1: none,
// e.g. nested); noMax lists columns whose max is unusable (NaN written);
// emptyMin tells the string and binary columns whose min may leave out an
// empty value, for which ” bounds the chunk instead.
func statsFor(md *pqmeta.FileMetaData, rg int, table *metadata.TableInfo, cols []int, leaf []int, noMax map[int]bool, emptyMin func(col int) bool) *statsSet {
	g := md.RowGroup(rg)
	s := &statsSet{rows: g.NumRows(), cols: make(map[int]colStats, len(cols))}
	for _, col := range cols {
		if col < 0 || col >= len(table.Schema.Columns) || col >= len(leaf) || leaf[col] < 0 {
			continue
		}
		typ := table.Schema.Columns[col].Type
		if !typ.StatsSupported() {
			continue
		}
		cc, err := g.ColumnChunk(leaf[col])
		if err != nil {
			continue
		}
		st, err := cc.Statistics()
		if err != nil || st == nil {
			continue
		}
		var c colStats
		if st.HasNullCount() {
			c.nulls, c.nullsKnown = st.NullCount(), true
		}
		if st.HasMinMax() {
			descr := md.Schema.Column(leaf[col])
			lo, loOK := statValue(st, typ, descr, true)
			hi, hiOK := statValue(st, typ, descr, false)
			// Both or neither: a side that fails to convert means a
			// physical form we do not understand.
			if loOK && hiOK {
				if (typ.IsString() || typ.IsBinary()) && emptyMin(col) {
					lo = leastValue(typ)
				}
				c.min = lo
				if !noMax[col] {
					c.max = hi
				}
			}
		}
		s.cols[col] = c
	}
	return s
}

// mergeStats combines row-group statistics into file statistics: the least
// min, the greatest max and the sum of null counts, each known only when
// every row group knows it.
func mergeStats(groups []*statsSet, cols []int) *statsSet {
	out := &statsSet{cols: make(map[int]colStats, len(cols))}
	for _, g := range groups {
		out.rows += g.rows
	}
	for _, col := range cols {
		var c colStats
		minOK, maxOK, nullsOK := true, true, true
		for _, g := range groups {
			gc, ok := g.cols[col]
			if !ok {
				minOK, maxOK, nullsOK = false, false, false
				break
			}
			allNull := gc.nullsKnown && gc.nulls == g.rows
			switch {
			case allNull:
				// An all-null group has no min or max and bounds nothing.
			case gc.min == nil:
				minOK = false
			case c.min == nil || metadata.Compare(gc.min, c.min) < 0:
				c.min = gc.min
			}
			switch {
			case allNull:
			case gc.max == nil:
				maxOK = false
			case c.max == nil || metadata.Compare(gc.max, c.max) > 0:
				c.max = gc.max
			}
			if !gc.nullsKnown {
				nullsOK = false
			} else {
				c.nulls += gc.nulls
			}
		}
		if !minOK {
			c.min = nil
		}
		if !maxOK {
			c.max = nil
		}
		c.nullsKnown = nullsOK
		if !nullsOK {
			c.nulls = 0
		}
		out.cols[col] = c
	}
	return out
}

// timeUnitOf reads the unit of a Parquet TIME or TIMESTAMP column.
func timeUnitOf(descr *schema.Column) (int64, bool) {
	lt, ok := descr.LogicalType().(interface{ TimeUnit() schema.TimeUnitType })
	if !ok {
		return 0, false
	}
	switch lt.TimeUnit() {
	case schema.TimeUnitMillis:
		return 1e6, true
	case schema.TimeUnitMicros:
		return 1e3, true
	case schema.TimeUnitNanos:
		return 1, true
	}
	return 0, false
}

// statValue converts a Parquet min (or max) to the canonical value of the
// column's type. ok is false when the physical form is not one the lake
// writes for typ; the caller then treats the statistic as unknown.
func statValue(st pqmeta.TypedStatistics, typ metadata.DataType, descr *schema.Column, wantMin bool) (any, bool) {
	switch s := st.(type) {
	case *pqmeta.BooleanStatistics:
		if typ.Root != metadata.Boolean {
			return nil, false
		}
		return pick(wantMin, s.Min(), s.Max()), true
	case *pqmeta.Int32Statistics:
		v := int64(pick(wantMin, s.Min(), s.Max()))
		return intStat(typ, descr, v)
	case *pqmeta.Int64Statistics:
		v := pick(wantMin, s.Min(), s.Max())
		return intStat(typ, descr, v)
	case *pqmeta.Float32Statistics:
		v := float64(pick(wantMin, s.Min(), s.Max()))
		if (typ.Root != metadata.Float && typ.Root != metadata.Double) || math.IsNaN(v) {
			return nil, false
		}
		return v, true
	case *pqmeta.Float64Statistics:
		v := pick(wantMin, s.Min(), s.Max())
		if typ.Root != metadata.Double || math.IsNaN(v) {
			return nil, false
		}
		return v, true
	case *pqmeta.ByteArrayStatistics:
		b := pick(wantMin, s.Min(), s.Max())
		return bytesStat(typ, b)
	case *pqmeta.FixedLenByteArrayStatistics:
		b := pick(wantMin, s.Min(), s.Max())
		return bytesStat(typ, b)
	}
	return nil, false
}

func pick[T any](wantMin bool, lo, hi T) T {
	if wantMin {
		return lo
	}
	return hi
}

func intStat(typ metadata.DataType, descr *schema.Column, v int64) (any, bool) {
	switch typ.Root {
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		return v, true
	case metadata.Decimal:
		return metadata.DecimalValue{Num: decimal128.FromI64(v), Scale: int32(typ.Scale)}, true
	case metadata.Date:
		if descr.PhysicalType() != parquet.Types.Int32 {
			return nil, false
		}
		return metadata.DateValue(v), true
	case metadata.Time:
		unit, ok := timeUnitOf(descr)
		if !ok {
			return nil, false
		}
		return metadata.TimeValue(v * unit), true
	case metadata.Timestamp, metadata.TimestampLTZ:
		unit, ok := timeUnitOf(descr)
		if !ok || descr.PhysicalType() != parquet.Types.Int64 {
			return nil, false
		}
		switch unit {
		case 1e6:
			return time.UnixMilli(v).UTC(), true
		case 1e3:
			return time.UnixMicro(v).UTC(), true
		}
		return time.Unix(0, v).UTC(), true
	}
	return nil, false
}

func bytesStat(typ metadata.DataType, b []byte) (any, bool) {
	switch typ.Root {
	case metadata.Char, metadata.String:
		return string(b), true
	case metadata.Decimal:
		n, ok := decimalFromBigEndian(b)
		if !ok {
			return nil, false
		}
		return metadata.DecimalValue{Num: n, Scale: int32(typ.Scale)}, true
	}
	return nil, false
}

// decimalFromBigEndian reads Parquet's big-endian two's complement decimal
// bytes (at most 16).
func decimalFromBigEndian(b []byte) (decimal128.Num, bool) {
	if len(b) == 0 || len(b) > 16 {
		return decimal128.Num{}, false
	}
	var buf [16]byte
	fill := byte(0)
	if b[0]&0x80 != 0 {
		fill = 0xff
	}
	for i := 0; i < 16-len(b); i++ {
		buf[i] = fill
	}
	copy(buf[16-len(b):], b)
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(buf[i])
		lo = lo<<8 | uint64(buf[8+i])
	}
	return decimal128.New(int64(hi), lo), true
}

// leastValue is the smallest value of a string or binary type.
func leastValue(t metadata.DataType) any {
	if t.IsBinary() {
		return []byte{}
	}
	return ""
}
