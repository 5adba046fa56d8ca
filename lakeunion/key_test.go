package lakeunion

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// TestKeyEncoderMatchesMetadata holds the in-place encodings of the key
// encoder equal to metadata.EncodeOrderedKey, which the KV store and the
// snapshots use: a difference would mis-merge rows silently.
func TestKeyEncoderMatchesMetadata(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols := []struct {
		typ  metadata.DataType
		vals []any
	}{
		{metadata.TinyIntType(), []any{int64(math.MinInt8), int64(-1), int64(0), int64(1), int64(math.MaxInt8)}},
		{metadata.SmallIntType(), []any{int64(math.MinInt16), int64(-2), int64(0), int64(300), int64(math.MaxInt16)}},
		{metadata.IntType(), []any{int64(math.MinInt32), int64(-70000), int64(0), int64(1), int64(math.MaxInt32)}},
		{metadata.BigIntType(), []any{int64(math.MinInt64), int64(-1), int64(0), int64(1 << 40), int64(math.MaxInt64)}},
		{metadata.DateType(), []any{metadata.DateValue(-1), metadata.DateValue(0), metadata.DateValue(1), metadata.DateValue(20000), metadata.DateValue(-20000)}},
		{metadata.StringType(), []any{"", "a", "a\x00", "a\x00b", "é"}},
		{metadata.CharType(3), []any{"", "a", "ab", "abc", "b"}},
		{metadata.DoubleType(), []any{-1.5, 0.0, math.Inf(1), math.NaN(), 2.25}},
		{metadata.BytesType(), []any{[]byte{}, []byte{0}, []byte{0, 1}, []byte{0xff}, []byte("x")}},
		{metadata.DecimalType(20, 2), []any{"-1.25", "0", "1.00", "123456789012345678.99", "-0.01"}},
	}
	types := make([]metadata.DataType, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		types[i] = c.typ
		b := array.NewBuilder(mem, c.typ.ArrowType())
		for _, v := range c.vals {
			cv, err := metadata.CoerceValue(c.typ, v)
			require.NoError(t, err)
			require.NoError(t, metadata.AppendValue(b, c.typ, cv))
		}
		arrs[i] = b.NewArray()
		b.Release()
		defer arrs[i].Release()
	}
	enc := newKeyEncoder(types)
	for row := range len(cols[0].vals) {
		vals := make([]any, len(cols))
		for i, c := range cols {
			vals[i] = metadata.ValueAt(arrs[i], c.typ, row)
		}
		want, err := metadata.EncodeOrderedKey(types, vals)
		require.NoError(t, err)
		got, err := enc.appendKey(nil, arrs, row)
		require.NoError(t, err)
		require.Equal(t, want, got, "row %d", row)
	}
}

func TestKeyEncoderRefusesNull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	b.AppendNull()
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	_, err := newKeyEncoder([]metadata.DataType{metadata.BigIntType()}).appendKey(nil, []arrow.Array{arr}, 0)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
}
