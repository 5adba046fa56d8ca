package logformat

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// rowTypes is a column of every type RowEncoder encodes.
func rowTypes() []metadata.DataType {
	return []metadata.DataType{
		{Root: metadata.Boolean},
		{Root: metadata.TinyInt},
		{Root: metadata.SmallInt},
		{Root: metadata.Int},
		{Root: metadata.BigInt},
		{Root: metadata.Float},
		{Root: metadata.Double},
		{Root: metadata.Date},
		{Root: metadata.Time, Precision: 0},
		{Root: metadata.Time, Precision: 3},
		{Root: metadata.Time, Precision: 6},
		{Root: metadata.Time, Precision: 9},
		{Root: metadata.Timestamp, Precision: 0},
		{Root: metadata.Timestamp, Precision: 3},
		{Root: metadata.Timestamp, Precision: 6},
		{Root: metadata.TimestampLTZ, Precision: 9},
		{Root: metadata.Decimal, Precision: 10, Scale: 2},
		{Root: metadata.Decimal, Precision: 38, Scale: 0},
		{Root: metadata.String},
		{Root: metadata.Char, Length: 3},
		{Root: metadata.Bytes},
		{Root: metadata.Binary, Length: 4},
	}
}

func rowSchema(types []metadata.DataType) *arrow.Schema {
	fields := make([]arrow.Field, len(types))
	for i, t := range types {
		fields[i] = arrow.Field{Name: string(rune('a' + i)), Type: t.ArrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// randomValue is a value of t as AppendValue takes it, NULL a fifth of
// the time.
func randomValue(rng *rand.Rand, t metadata.DataType) any {
	if rng.IntN(5) == 0 {
		return nil
	}
	switch t.Root {
	case metadata.Boolean:
		return rng.IntN(2) == 0
	case metadata.TinyInt:
		return int64(rng.IntN(256) - 128)
	case metadata.SmallInt:
		return int64(rng.IntN(1<<16) - 1<<15)
	case metadata.Int:
		return int64(rng.Int32()) - int64(rng.Int32())
	case metadata.BigInt:
		return []int64{math.MinInt64, math.MaxInt64, 0, rng.Int64(), -rng.Int64()}[rng.IntN(5)]
	case metadata.Float, metadata.Double:
		return []float64{math.Inf(-1), math.NaN(), -0.0, rng.NormFloat64() * 1e6}[rng.IntN(4)]
	case metadata.Date:
		return metadata.DateValue(rng.IntN(100000) - 50000)
	case metadata.Time:
		return metadata.TimeValue(rng.Int64N(86400 * int64(time.Second)))
	case metadata.Timestamp, metadata.TimestampLTZ:
		return time.Unix(rng.Int64N(4e9)-2e9, rng.Int64N(1e9)).UTC()
	case metadata.Decimal:
		n := decimal128.FromI64(rng.Int64N(1e10) - 5e9)
		if t.Precision == 38 {
			n = decimal128.New(rng.Int64N(1<<40)-1<<39, rng.Uint64())
		}
		return metadata.DecimalValue{Num: n, Scale: int32(t.Scale)}
	case metadata.String, metadata.Char:
		return strings.Repeat("é", rng.IntN(4))
	case metadata.Bytes:
		return []byte(strings.Repeat("x", rng.IntN(9)))
	case metadata.Binary:
		b := make([]byte, t.Length)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	panic(t.Root)
}

// arrowMessage is the message AppendRecordMessage writes for rows.
func arrowMessage(t *testing.T, mem memory.Allocator, schema *arrow.Schema, types []metadata.DataType, rows [][]any) []byte {
	t.Helper()
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for _, row := range rows {
		for c, v := range row {
			require.NoError(t, metadata.AppendValue(rb.Field(c), types[c], v))
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	msg, err := AppendRecordMessage(nil, rec, CompressionNone, mem)
	require.NoError(t, err)
	return msg
}

func decodeRowMessage(t *testing.T, mem memory.Allocator, schema *arrow.Schema, proj []int, msg []byte) arrow.RecordBatch {
	t.Helper()
	dec, err := NewRecordDecoder(schema, proj, mem)
	require.NoError(t, err)
	defer dec.Release()
	buf := memory.NewBufferBytes(msg)
	rec, err := dec.Decode(buf)
	require.NoError(t, err)
	return rec
}

// TestRowEncoderMatchesArrow: for random rows of every type it encodes,
// RowEncoder's message decodes (whole and projected) to the record the
// Arrow way's does, and its body holds the same buffers.
func TestRowEncoderMatchesArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := rowTypes()
	schema := rowSchema(types)
	enc := NewRowEncoder(schema)
	require.NotNil(t, enc)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 8, 9, 64, 200} {
		for range 20 {
			rows := make([][]any, n)
			allNull := rng.IntN(4) == 0
			for r := range rows {
				rows[r] = make([]any, len(types))
				for c, typ := range types {
					if !allNull || c%2 == 0 {
						rows[r][c] = randomValue(rng, typ)
					}
				}
			}
			got, ok := enc.Append([]byte("prefix"), rows)
			require.True(t, ok)
			require.Equal(t, "prefix", string(got[:6]))
			got = got[6:]
			want := arrowMessage(t, mem, schema, types, rows)
			for _, proj := range [][]int{nil, {4, 0}, {18, 20, 21}, {16, 3}} {
				a := decodeRowMessage(t, mem, schema, proj, want)
				b := decodeRowMessage(t, mem, schema, proj, got)
				require.True(t, array.RecordApproxEqual(a, b, array.WithNaNsEqual(true)), "%d rows, projection %v:\n%v\n%v", n, proj, a, b)
				a.Release()
				b.Release()
			}
			wantBufs, gotBufs := messageBuffers(t, enc, want), messageBuffers(t, enc, got)
			require.Equal(t, wantBufs, gotBufs, "%d rows: the buffers are byte for byte the same", n)
		}
	}
}

// messageBuffers lists the field nodes and the bytes of every buffer of
// an IPC RecordBatch message of enc's schema. (arrow-go pads its buffers
// to 64 bytes and RowEncoder to 8, so the lists compare where the bodies
// would not.)
func messageBuffers(t *testing.T, enc *RowEncoder, msg []byte) []string {
	t.Helper()
	le := binary.LittleEndian
	metaLen := int(int32(le.Uint32(msg[4:])))
	meta := msg[8 : 8+metaLen]
	info, err := parseRecordBatchMeta(meta)
	require.NoError(t, err)
	body := msg[8+metaLen:]
	require.Len(t, body, int(info.bodyLen))
	out := []string{fmt.Sprintf("rows %d", info.length)}
	for i := range info.nodes.n {
		p := info.nodes.pos + 16*i
		out = append(out, fmt.Sprintf("node %d: %d, %d nulls", i, le.Uint64(meta[p:]), le.Uint64(meta[p+8:])))
	}
	validity := map[int]bool{} // the first buffer of every column
	for i, c := 0, 0; c < int(info.nodes.n); c++ {
		validity[i] = true
		i += enc.cols[c].bufs()
	}
	for i := range info.buffers.n {
		p := info.buffers.pos + 16*i
		off, n := le.Uint64(meta[p:]), le.Uint64(meta[p+8:])
		b := body[off : off+n]
		if validity[i] && len(b) > 0 {
			// arrow-go's bitmaps are as long as the builder's buffer.
			bits := (info.length + 7) / 8
			require.Equal(t, make([]byte, len(b)-int(bits)), b[bits:], "validity bitmap padding")
			b = b[:bits]
		}
		out = append(out, fmt.Sprintf("buffer %d: %x", i, b))
	}
	return out
}

// TestRowEncoderRefuses: a value AppendValue refuses makes Append report
// ok false and leave dst as it was; a type it does not encode has no
// encoder.
func TestRowEncoderRefuses(t *testing.T) {
	types := rowTypes()
	schema := rowSchema(types)
	enc := NewRowEncoder(schema)
	good := make([]any, len(types))
	for c, bad := range map[int]any{
		0:  int64(1),
		1:  int64(128),
		2:  int64(-1<<15 - 1),
		3:  int64(math.MaxInt32 + 1),
		4:  "1",
		6:  float32(1),
		7:  int64(3),
		8:  metadata.TimeValue(86400 * int64(time.Second)),
		12: "2024-01-01",
		15: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), // past int64 nanoseconds
		16: metadata.DecimalValue{Num: decimal128.FromI64(1e10), Scale: 2},
		18: []byte("x"),
		20: "x",
		21: []byte("xyz"),
	} {
		row := append([]any(nil), good...)
		row[c] = bad
		out, ok := enc.Append([]byte("dst"), [][]any{good, row})
		require.False(t, ok, "column %d value %v", c, bad)
		require.Equal(t, "dst", string(out))
	}
	nested := rowSchema([]metadata.DataType{{Root: metadata.BigInt}, {Root: metadata.Array, Elem: &metadata.DataType{Root: metadata.Int}}})
	require.Nil(t, NewRowEncoder(nested))
}

// FuzzRowEncoder: rows drawn from the fuzzer's seed, with strings and
// bytes cut from its data (any bytes, not only UTF-8), encode as the Arrow
// way does, buffer for buffer.
func FuzzRowEncoder(f *testing.F) {
	f.Add(uint64(1), uint8(3), []byte("abc\xff"))
	f.Add(uint64(7), uint8(64), []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		types := rowTypes()
		schema := rowSchema(types)
		enc := NewRowEncoder(schema)
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		rows := make([][]any, int(n)+1)
		for r := range rows {
			rows[r] = make([]any, len(types))
			for c, typ := range types {
				v := randomValue(rng, typ)
				if v != nil && len(data) > 0 {
					cut := data[rng.IntN(len(data)):]
					cut = cut[:rng.IntN(len(cut)+1)]
					switch typ.Root {
					case metadata.String:
						v = string(cut)
					case metadata.Bytes:
						v = cut
					}
				}
				rows[r][c] = v
			}
		}
		got, ok := enc.Append(nil, rows)
		require.True(t, ok)
		want := arrowMessage(t, mem, schema, types, rows)
		require.Equal(t, messageBuffers(t, enc, want), messageBuffers(t, enc, got))
		a := decodeRowMessage(t, mem, schema, nil, want)
		b := decodeRowMessage(t, mem, schema, nil, got)
		defer a.Release()
		defer b.Release()
		require.True(t, array.RecordApproxEqual(a, b, array.WithNaNsEqual(true)))
	})
}
