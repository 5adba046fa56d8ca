package lake

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
)

// The lake system columns follow the table's columns in every file.
var systemColumns = []metadata.Column{
	{Name: metadata.LakeBucketColumn, Type: metadata.IntType(), NotNull: true},
	{Name: metadata.LakeOffsetColumn, Type: metadata.BigIntType(), NotNull: true},
	{Name: metadata.LakeTimestampColumn, Type: metadata.TimestampLTZType(3), NotNull: true},
}

// numSystemColumns is the count of systemColumns.
const numSystemColumns = 3

// offsetSystemColumn is the position of __offset among the system columns.
const offsetSystemColumn = 1

// UndoSameColumn is the last column of an undo file (Manifest.Undo): per
// row, a bitmap of the table columns (bit i, LSB first in byte i/8, for
// column i) the row leaves unchanged. Such a column is NULL in the row,
// and its value is the key's next newer version's: the row of the next
// undo file holding the key, else of the data files. Undo files store
// the rows of an update that changed a few columns of a wide row in
// little more than the key and those columns.
const UndoSameColumn = "__undo_same"

// undoColumns are the columns of an undo file: the table's columns, all
// but the key nullable, the system columns, then UndoSameColumn.
func undoColumns(table *metadata.TableInfo) []metadata.Column {
	cols := fileColumns(table)
	key := table.PhysicalKeyIndexes()
	for i := range table.Schema.Columns {
		if !slices.Contains(key, i) {
			cols[i].NotNull = false
		}
	}
	return append(cols, metadata.Column{Name: UndoSameColumn, Type: metadata.BytesType(), NotNull: true})
}

// UndoSchema is the Arrow schema of the records an undo file's
// FileWriter takes (engine types, as metadata.DataType.ArrowType gives).
func UndoSchema(table *metadata.TableInfo) *arrow.Schema {
	return metadata.ArrowSchema(undoColumns(table))
}

// UndoSame reports whether bitmap same marks table column i unchanged.
func UndoSame(same []byte, i int) bool {
	return i/8 < len(same) && same[i/8]&(1<<(i%8)) != 0
}

// fileColumns are the columns of a table's lake files: the table's columns,
// then the system columns.
func fileColumns(table *metadata.TableInfo) []metadata.Column {
	cols := make([]metadata.Column, 0, len(table.Schema.Columns)+numSystemColumns)
	cols = append(cols, table.Schema.Columns...)
	return append(cols, systemColumns...)
}

// fileType is the Arrow type a column of type t has in a lake file. It is
// t.ArrowType() except that TIMESTAMP_LTZ, an instant, carries the time
// zone "UTC": Parquet then marks it isAdjustedToUTC, so other engines read
// an instant, while TIMESTAMP (a wall clock) stays zone-less.
func fileType(t metadata.DataType) arrow.DataType {
	switch t.Root {
	case metadata.TimestampLTZ:
		at := t.ArrowType().(*arrow.TimestampType)
		return &arrow.TimestampType{Unit: at.Unit, TimeZone: "UTC"}
	case metadata.Array:
		return arrow.ListOf(fileType(*t.Elem))
	case metadata.Map:
		return arrow.MapOf(fileType(*t.Elem), fileType(*t.Value))
	case metadata.Row:
		fields := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = arrow.Field{Name: f.Name, Type: fileType(f.Type), Nullable: true}
		}
		return arrow.StructOf(fields...)
	}
	return t.ArrowType()
}

// fileSchema is the Arrow schema written to the table's lake files.
func fileSchema(table *metadata.TableInfo) *arrow.Schema {
	return fileSchemaOf(fileColumns(table))
}

func fileSchemaOf(cols []metadata.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: fileType(c.Type), Nullable: !c.NotNull}
	}
	return arrow.NewSchema(fields, nil)
}

// retype returns arr with the same buffers viewed as type to, which must
// have the same physical layout (only time zones differ between file and
// engine types). The result must be released.
func retype(arr arrow.Array, to arrow.DataType) arrow.Array {
	if arrow.TypeEqual(arr.DataType(), to) {
		arr.Retain()
		return arr
	}
	data := retypeData(arr.Data(), to)
	defer data.Release()
	return array.MakeFromData(data)
}

func retypeData(d arrow.ArrayData, to arrow.DataType) arrow.ArrayData {
	children := d.Children()
	var out []arrow.ArrayData
	if len(children) > 0 {
		childTypes := childTypesOf(to)
		out = make([]arrow.ArrayData, len(children))
		for i, c := range children {
			if i < len(childTypes) {
				out[i] = retypeData(c, childTypes[i])
			} else {
				c.Retain()
				out[i] = c
			}
		}
		defer func() {
			for _, c := range out {
				c.Release()
			}
		}()
	}
	return array.NewData(to, d.Len(), d.Buffers(), out, d.NullN(), d.Offset())
}

// childTypesOf lists the types of the child arrays of a nested type.
func childTypesOf(t arrow.DataType) []arrow.DataType {
	switch t := t.(type) {
	case *arrow.MapType:
		return []arrow.DataType{t.Elem()}
	case *arrow.ListType:
		return []arrow.DataType{t.Elem()}
	case *arrow.StructType:
		out := make([]arrow.DataType, t.NumFields())
		for i, f := range t.Fields() {
			out[i] = f.Type
		}
		return out
	}
	return nil
}

// sameLayout reports whether a and b differ at most in time zones, so
// retype may view one as the other.
func sameLayout(a, b arrow.DataType) bool {
	if ta, ok := a.(*arrow.TimestampType); ok {
		tb, ok := b.(*arrow.TimestampType)
		return ok && ta.Unit == tb.Unit
	}
	if a.ID() != b.ID() {
		return false
	}
	ca, cb := childTypesOf(a), childTypesOf(b)
	if len(ca) == 0 && len(cb) == 0 {
		return arrow.TypeEqual(a, b)
	}
	if len(ca) != len(cb) {
		return false
	}
	if ma, ok := a.(*arrow.MapType); ok && ma.KeysSorted != b.(*arrow.MapType).KeysSorted {
		return false
	}
	for i := range ca {
		if !sameLayout(ca[i], cb[i]) {
			return false
		}
	}
	return true
}

func checkLayout(what string, got, want arrow.DataType) error {
	if !sameLayout(got, want) {
		return fmt.Errorf("%s has Arrow type %s, want %s", what, got, want)
	}
	return nil
}

// convertible reports whether convert can turn arrays of type a into type
// b: the layouts match except for time zones and the units of TIME and
// TIMESTAMP values. Parquet has no second unit, so a TIME(0) or
// TIMESTAMP(0) column comes back from a file in milliseconds.
func convertible(a, b arrow.DataType) bool {
	if unitNanosOf(a) != 0 && unitNanosOf(b) != 0 {
		return a.ID() == b.ID() || isTime(a) && isTime(b)
	}
	if a.ID() != b.ID() {
		return false
	}
	ca, cb := childTypesOf(a), childTypesOf(b)
	if len(ca) == 0 && len(cb) == 0 {
		return arrow.TypeEqual(a, b)
	}
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if !convertible(ca[i], cb[i]) {
			return false
		}
	}
	return true
}

func isTime(t arrow.DataType) bool { return t.ID() == arrow.TIME32 || t.ID() == arrow.TIME64 }

// unitNanosOf is the length in nanoseconds of the unit of a TIME or
// TIMESTAMP type, 0 for other types.
func unitNanosOf(t arrow.DataType) int64 {
	var u arrow.TimeUnit
	switch t := t.(type) {
	case *arrow.Time32Type:
		u = t.Unit
	case *arrow.Time64Type:
		u = t.Unit
	case *arrow.TimestampType:
		u = t.Unit
	default:
		return 0
	}
	return int64(u.Multiplier())
}

// convert returns arr as type to (convertible(arr.DataType(), to) must
// hold), sharing arr's buffers except where time values change unit. The
// result must be released.
func convert(mem memory.Allocator, arr arrow.Array, to arrow.DataType) arrow.Array {
	if arrow.TypeEqual(arr.DataType(), to) {
		arr.Retain()
		return arr
	}
	data := convertData(mem, arr.Data(), to)
	defer data.Release()
	return array.MakeFromData(data)
}

func convertData(mem memory.Allocator, d arrow.ArrayData, to arrow.DataType) arrow.ArrayData {
	from, want := unitNanosOf(d.DataType()), unitNanosOf(to)
	if from != 0 && want != 0 && (from != want || d.DataType().ID() != to.ID()) {
		return convertTimes(mem, d, to, from, want)
	}
	children := d.Children()
	var out []arrow.ArrayData
	if len(children) > 0 {
		childTypes := childTypesOf(to)
		out = make([]arrow.ArrayData, len(children))
		for i, c := range children {
			if i < len(childTypes) {
				out[i] = convertData(mem, c, childTypes[i])
			} else {
				c.Retain()
				out[i] = c
			}
		}
		defer func() {
			for _, c := range out {
				c.Release()
			}
		}()
	}
	return array.NewData(to, d.Len(), d.Buffers(), out, d.NullN(), d.Offset())
}

// convertTimes rewrites TIME or TIMESTAMP values from one unit to another,
// rounding toward the past as the engine does.
func convertTimes(mem memory.Allocator, d arrow.ArrayData, to arrow.DataType, from, want int64) arrow.ArrayData {
	n := d.Offset() + d.Len()
	read := func(i int) int64 {
		b := d.Buffers()[1].Bytes()
		if d.DataType().ID() == arrow.TIME32 {
			return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	width := 8
	if to.ID() == arrow.TIME32 {
		width = 4
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * width)
	out := buf.Bytes()
	for i := d.Offset(); i < n; i++ {
		v := read(i)
		if from < want {
			r := want / from
			q := v / r
			if v%r < 0 {
				q--
			}
			v = q
		} else {
			v *= from / want
		}
		if width == 4 {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(v)))
		} else {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		}
	}
	defer buf.Release()
	return array.NewData(to, d.Len(), []*memory.Buffer{d.Buffers()[0], buf}, nil, d.NullN(), d.Offset())
}
