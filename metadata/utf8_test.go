package metadata

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

// column builds an array of type t from canonical values without
// checking them: AppendValue copies text as it is.
func column(t *testing.T, typ DataType, vals ...any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, typ.ArrowType())
	defer b.Release()
	for _, v := range vals {
		require.NoError(t, AppendValue(b, typ, v))
	}
	return b.NewArray()
}

func TestCheckUTF8(t *testing.T) {
	str := StringType()
	list := ArrayType(StringType())
	row := RowType(Field{Name: "n", Type: IntType()}, Field{Name: "s", Type: StringType()})
	mp := MapType(StringType(), StringType())
	for _, tc := range []struct {
		name string
		typ  DataType
		vals []any
		row  int // -1: all valid
	}{
		{"valid text of every width", str, []any{"", "a", "é", "日本", "𝄞", nil}, -1},
		{"two bad bytes", str, []any{"ok", "\xff\xfe"}, 1},
		{"a character cut between two values", str, []any{"x", "a\xc3", "\xa9b"}, 1},
		{"a lone continuation byte first", str, []any{"\x80", "ok"}, 0},
		{"a truncated character last", str, []any{"ok", "caf\xc3"}, 1},
		{"a surrogate", str, []any{"ok", "\xed\xa0\x80"}, 1},
		{"inside an array", list, []any{[]any{"a"}, nil, []any{"b", "\xff"}}, 2},
		{"arrays of valid text", list, []any{[]any{"a", "é"}, nil, []any{}}, -1},
		{"inside a row", row, []any{[]any{int64(1), "a"}, []any{int64(2), "\xfe"}}, 1},
		{"a map key", mp, []any{MapValue{Keys: []any{"k"}, Values: []any{"v"}}, MapValue{Keys: []any{"\xff"}, Values: []any{"v"}}}, 1},
		{"a map value", mp, []any{MapValue{Keys: []any{"k"}, Values: []any{"v\xc3"}}}, 0},
		{"no text at all", IntType(), []any{int64(1), nil}, -1},
	} {
		arr := column(t, tc.typ, tc.vals...)
		r, err := CheckUTF8(arr, tc.typ)
		require.Equal(t, tc.row, r, tc.name)
		if tc.row < 0 {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorIs(t, err, ErrInvalidValue, tc.name)
			require.ErrorContains(t, err, "not valid UTF-8", tc.name)
		}
		// A slice is checked over its own rows, counted from its start.
		if tc.row > 0 {
			s := array.NewSlice(arr, 1, int64(arr.Len()))
			r, _ := CheckUTF8(s, tc.typ)
			require.Equal(t, tc.row-1, r, "%s, sliced", tc.name)
			s.Release()
			s = array.NewSlice(arr, 0, int64(tc.row))
			r, err := CheckUTF8(s, tc.typ)
			require.Equal(t, -1, r, "%s, sliced before the row", tc.name)
			require.NoError(t, err)
			s.Release()
		}
		arr.Release()
	}
}

// TestCheckUTF8SkipsNullRows pins that bytes under a NULL row, which
// Arrow allows to be anything, are nobody's text.
func TestCheckUTF8SkipsNullRows(t *testing.T) {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.AppendValues([]string{"ok", "\xff", "fine"}, nil)
	valid := sb.NewStringArray()
	defer valid.Release()
	// The same buffers, the second row marked NULL.
	bitmap := memory.NewBufferBytes([]byte{0b101})
	d := array.NewData(arrow.BinaryTypes.String, 3, []*memory.Buffer{bitmap, valid.Data().Buffers()[1], valid.Data().Buffers()[2]}, nil, 1, 0)
	defer d.Release()
	withNull := array.MakeFromData(d)
	defer withNull.Release()
	r, err := CheckUTF8(withNull, StringType())
	require.NoError(t, err)
	require.Equal(t, -1, r)
	r, _ = CheckUTF8(valid, StringType())
	require.Equal(t, 1, r)

	// Text under a NULL row of a ROW: the field's own row is valid.
	st := RowType(Field{Name: "s", Type: StringType()})
	sd := array.NewData(st.ArrowType(), 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101})}, []arrow.ArrayData{valid.Data()}, 1, 0)
	defer sd.Release()
	rows := array.MakeFromData(sd)
	defer rows.Release()
	r, err = CheckUTF8(rows, st)
	require.NoError(t, err)
	require.Equal(t, -1, r)
}

// BenchmarkCheckUTF8 measures the check on a column of 1M short strings,
// all valid: the cost AppendArrow's record path pays per STRING column.
func BenchmarkCheckUTF8(b *testing.B) {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := range 1 << 20 {
		sb.Append(fmt.Sprintf("s-%x", i*7919))
	}
	arr := sb.NewStringArray()
	sb.Release()
	defer arr.Release()
	b.SetBytes(int64(len(arr.ValueBytes())))
	for b.Loop() {
		if r, _ := CheckUTF8(arr, StringType()); r >= 0 {
			b.Fatal(r)
		}
	}
}
