package logformat

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// testSchema covers every layout the projection rewrite knows: fixed
// width, variable width, list, map and struct.
func testSchema() (*arrow.Schema, []metadata.DataType) {
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "pt", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "raw", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
	}
	types := []metadata.DataType{
		metadata.BigIntType(), metadata.StringType(),
		metadata.ArrayType(metadata.IntType()),
		metadata.MapType(metadata.StringType(), metadata.IntType()),
		metadata.RowType(metadata.Field{Name: "a", Type: metadata.IntType()}, metadata.Field{Name: "b", Type: metadata.StringType()}),
		metadata.DecimalType(20, 2), metadata.BooleanType(), metadata.BinaryType(2),
	}
	return arrow.NewSchema(fields, nil), types
}

func testRecord(t testing.TB, mem memory.Allocator, rows int) arrow.RecordBatch {
	schema, _ := testSchema()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range rows {
		if i%5 == 4 {
			for f := range b.Fields() {
				b.Field(f).AppendNull()
			}
			continue
		}
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i))
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		for j := range i % 3 {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i + j))
		}
		mb := b.Field(3).(*array.MapBuilder)
		mb.Append(true)
		mb.KeyBuilder().(*array.StringBuilder).Append("k")
		mb.ItemBuilder().(*array.Int32Builder).Append(int32(i))
		sb := b.Field(4).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(-i))
		sb.FieldBuilder(1).(*array.StringBuilder).Append("s")
		b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i * 100)))
		b.Field(6).(*array.BooleanBuilder).Append(i%2 == 0)
		b.Field(7).(*array.FixedSizeBinaryBuilder).Append([]byte{byte(i), 1})
	}
	return b.NewRecordBatch()
}

func encodeTest(t testing.TB, mem memory.Allocator, rec arrow.RecordBatch, compression string, changeTypes []metadata.ChangeType) []byte {
	_, types := testSchema()
	stats := []ColumnStats{
		{Column: 0, NullCount: 1, Min: int64(0), Max: int64(3)},
		{Column: 1, NullCount: 1, Min: "name-0", Max: "name-3"},
		{Column: 5, NullCount: 1},
	}
	out, err := EncodeBatch([]byte("prefix"), Batch{
		BaseOffset: 100, CommitTimestamp: 1700000000000, SchemaID: 3,
		ChangeTypes: changeTypes, Stats: stats, Record: rec,
	}, EncodeOptions{Types: types, Compression: compression, Allocator: mem})
	require.NoError(t, err)
	require.Equal(t, "prefix", string(out[:6]))
	return out[6:]
}

func TestBatchRoundTripWithProjection(t *testing.T) {
	for _, compression := range []string{CompressionNone, CompressionZstd, CompressionLZ4} {
		t.Run(compression, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema, types := testSchema()
			rec := testRecord(t, mem, 12)
			defer rec.Release()
			batch := encodeTest(t, mem, rec, compression, nil)

			d, err := DecodeBatch(batch)
			require.NoError(t, err)
			require.Equal(t, int64(100), d.Header.BaseOffset)
			require.Equal(t, int64(111), d.Header.LastOffset())
			require.Equal(t, int32(12), d.Header.RecordCount)
			require.Equal(t, int16(3), d.Header.SchemaID)
			require.True(t, d.Header.AppendOnly())
			require.Nil(t, d.ChangeTypes)
			require.Equal(t, int64(1700000000000), d.Header.CommitTimestamp)
			stats, err := DecodeStats(d.Stats, types)
			require.NoError(t, err)
			require.Equal(t, []ColumnStats{
				{Column: 0, NullCount: 1, Min: int64(0), Max: int64(3)},
				{Column: 1, NullCount: 1, Min: "name-0", Max: "name-3"},
				{Column: 5, NullCount: 1},
			}, stats)

			buf := memory.NewResizableBuffer(mem)
			buf.Resize(len(batch))
			copy(buf.Bytes(), batch)
			defer buf.Release()
			msg := memory.SliceBuffer(buf, d.RecordsOffset, len(d.Records))
			defer msg.Release()

			projections := [][]int{nil, {0, 1, 2, 3, 4, 5, 6, 7}, {1}, {4, 0}, {7, 3, 2}, {5, 6}, {2, 2}, {3}}
			for _, proj := range projections {
				dec, err := NewRecordDecoder(schema, proj, mem)
				require.NoError(t, err)
				// Decode twice with one decoder: the reader is reused.
				for range 2 {
					got, err := dec.Decode(msg)
					require.NoError(t, err, "projection %v", proj)
					want := proj
					if want == nil {
						want = []int{0, 1, 2, 3, 4, 5, 6, 7}
					}
					require.Equal(t, len(want), int(got.NumCols()))
					for i, c := range want {
						require.Equal(t, schema.Field(c).Name, got.Schema().Field(i).Name)
						require.True(t, array.Equal(rec.Column(c), got.Column(i)), "projection %v column %d:\n%v\n%v", proj, c, rec.Column(c), got.Column(i))
					}
					got.Release()
				}
				dec.Release()
			}
		})
	}
}

func TestProjectionSkipsOtherColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, _ := testSchema()
	rec := testRecord(t, mem, 8)
	defer rec.Release()
	batch := encodeTest(t, mem, rec, CompressionZstd, nil)
	d, err := DecodeBatch(batch)
	require.NoError(t, err)
	// Zstd buffers are decompressed into allocator memory: a projection of
	// one BIGINT column must allocate only what that column needs.
	dec, err := NewRecordDecoder(schema, []int{0}, mem)
	require.NoError(t, err)
	defer dec.Release()
	before := mem.CurrentAlloc()
	got, err := dec.Decode(memory.NewBufferBytes(d.Records))
	require.NoError(t, err)
	oneColumn := mem.CurrentAlloc() - before
	got.Release()

	all, err := NewRecordDecoder(schema, nil, mem)
	require.NoError(t, err)
	defer all.Release()
	before = mem.CurrentAlloc()
	got, err = all.Decode(memory.NewBufferBytes(d.Records))
	require.NoError(t, err)
	allColumns := mem.CurrentAlloc() - before
	got.Release()
	require.Less(t, oneColumn*3, allColumns, "one column %d bytes, all %d", oneColumn, allColumns)
}

func TestChangeTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem, 3)
	defer rec.Release()
	batch := encodeTest(t, mem, rec, CompressionNone, []metadata.ChangeType{metadata.ChangeInsert, metadata.ChangeUpdateBefore, metadata.ChangeUpdateAfter})
	d, err := DecodeBatch(batch)
	require.NoError(t, err)
	require.False(t, d.Header.AppendOnly())
	require.Equal(t, []byte{1, 2, 3}, d.ChangeTypes)

	batch[HeaderSize+int(d.Header.StatisticsLength)+1] = 9
	SetBaseOffset(batch, 5) // outside the CRC
	_, err = DecodeBatch(batch)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, "CRC")
}

func TestCorruptionIsDetected(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testRecord(t, mem, 4)
	defer rec.Release()
	batch := encodeTest(t, mem, rec, CompressionNone, nil)
	for i := LengthFieldEnd; i < len(batch); i++ {
		if i >= offCommitTimestamp && i < crcStart {
			// The commit timestamp and the CRC itself sit outside the
			// CRC, as in Fluss (the server stamps the time afterwards).
			continue
		}
		c := append([]byte(nil), batch...)
		c[i] ^= 0x10
		_, err := DecodeBatch(c)
		require.ErrorIs(t, err, metadata.ErrCorrupt, "flipped byte %d", i)
	}
	_, err := DecodeBatch(batch[:len(batch)-1])
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	_, err = DecodeBatch(batch[:10])
	require.ErrorIs(t, err, metadata.ErrCorrupt)
}

func TestStatsBounds(t *testing.T) {
	types := []metadata.DataType{
		metadata.StringType(), metadata.BytesType(), metadata.TimestampType(9),
		metadata.DateType(), metadata.TimeType(3), metadata.FloatType(), metadata.DoubleType(),
		metadata.DecimalType(38, 4), metadata.DecimalType(10, 2), metadata.BooleanType(), metadata.TinyIntType(),
	}
	long := string(make([]byte, 100))
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	in := []ColumnStats{
		{Column: 0, Min: "a" + long, Max: "b" + long},
		{Column: 1, Min: []byte{1}, Max: append([]byte{0xff, 0xff}, make([]byte, 100)...)},
		{Column: 2, Min: ts, Max: ts.Add(time.Hour), NullCount: 7},
		{Column: 3, Min: metadata.DateValue(-5), Max: metadata.DateValue(20000)},
		{Column: 4, Min: metadata.TimeValue(0), Max: metadata.TimeValue(86399999000000)},
		{Column: 5, Min: float64(-1.5), Max: float64(2.25)},
		{Column: 6, Min: -1e300, Max: 1e300},
		{Column: 7, Min: metadata.DecimalValue{Num: decimal128.New(-3, 5), Scale: 4}, Max: metadata.DecimalValue{Num: decimal128.FromI64(1), Scale: 4}},
		{Column: 8, Min: metadata.DecimalValue{Num: decimal128.FromI64(-12345), Scale: 2}, Max: metadata.DecimalValue{Num: decimal128.FromI64(99), Scale: 2}},
		{Column: 9, Min: false, Max: true},
		{Column: 10, Min: int64(-128), Max: int64(127)},
	}
	b, err := AppendStats(nil, in, types)
	require.NoError(t, err)
	out, err := DecodeStats(b, types)
	require.NoError(t, err)
	require.Len(t, out, len(in))
	// Long strings become bounds: min a prefix, max a larger short value.
	require.Equal(t, ("a" + long)[:MaxBoundLength], out[0].Min)
	require.Less(t, "b"+long, out[0].Max.(string))
	require.Equal(t, ("b" + long)[:MaxBoundLength-1]+"\x01", out[0].Max)
	require.Equal(t, append(append([]byte{0xff, 0xff}, make([]byte, MaxBoundLength-3)...), 1), out[1].Max)
	for i := 2; i < len(in); i++ {
		require.Equal(t, in[i], out[i], "column %d", i)
	}
	// All 0xff: no short upper bound exists.
	b, err = AppendStats(nil, []ColumnStats{{Column: 1, Min: []byte{}, Max: []byte(string(make([]byte, 0)) + string(bytesOf(0xff, 80)))}}, types)
	require.NoError(t, err)
	out, err = DecodeStats(b, types)
	require.NoError(t, err)
	require.Nil(t, out[0].Max)
	require.Equal(t, []byte{}, out[0].Min)

	for i := 1; i < len(b); i++ {
		_, err := DecodeStats(b[:i], types)
		require.ErrorIs(t, err, metadata.ErrCorrupt, "truncated at %d", i)
	}
}

func bytesOf(c byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// FuzzDecodeBatch: corrupt bytes give an error, never a panic, and a
// batch that passes its checks decodes to its own rows.
func FuzzDecodeBatch(f *testing.F) {
	mem := memory.NewGoAllocator()
	rec := testRecord(f, mem, 6)
	defer rec.Release()
	f.Add(encodeTest(f, mem, rec, CompressionNone, nil), true)
	f.Add(encodeTest(f, mem, rec, CompressionZstd, []metadata.ChangeType{1, 1, 2, 3, 4, 1}), true)
	schema, types := testSchema()
	f.Fuzz(func(t *testing.T, b []byte, fixCRC bool) {
		if fixCRC && len(b) >= HeaderSize {
			// Let mutations reach the decoders behind the framing checks:
			// the length says where the batch ends and the CRC matches,
			// so bytes inserted or cut (and the minimizer's cuts) are
			// decoded rather than refused at once.
			b = append([]byte(nil), b...)
			binary.LittleEndian.PutUint32(b[offLength:], uint32(len(b)-LengthFieldEnd))
			binary.LittleEndian.PutUint32(b[offCRC:], Checksum(b))
		}
		d, err := DecodeBatch(b)
		if err != nil {
			require.ErrorIs(t, err, metadata.ErrCorrupt)
			return
		}
		if _, err := DecodeStats(d.Stats, types); err != nil {
			require.ErrorIs(t, err, metadata.ErrCorrupt)
		}
		for _, proj := range [][]int{nil, {3, 1}} {
			dec, err := NewRecordDecoder(schema, proj, mem)
			require.NoError(t, err)
			got, err := dec.Decode(memory.NewBufferBytes(d.Records))
			if err == nil {
				got.Release()
			}
			dec.Release()
		}
	})
}
