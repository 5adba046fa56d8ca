package logformat

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// zstdMessage encodes rec as a zstd-compressed record message.
func zstdMessage(t *testing.T, rec arrow.RecordBatch) []byte {
	t.Helper()
	msg, err := AppendRecordMessage(nil, rec, CompressionZstd, memory.NewGoAllocator())
	require.NoError(t, err)
	return msg
}

func decodeMessage(t *testing.T, schema *arrow.Schema, msg []byte) (arrow.RecordBatch, error) {
	t.Helper()
	dec, err := NewRecordDecoder(schema, nil, memory.NewGoAllocator())
	require.NoError(t, err)
	defer dec.Release()
	return dec.Decode(memory.NewBufferBytes(msg))
}

// firstZstdFrame finds the first zstd frame of msg: the position of its
// magic number (its buffer's claimed uncompressed size is the 8 bytes
// before).
func firstZstdFrame(t *testing.T, msg []byte) int {
	t.Helper()
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], zstdMagic)
	at := bytes.Index(msg, magic[:])
	require.Greater(t, at, 8, "a zstd frame in the message")
	return at
}

// TestCompressedBufferClaims: a compressed buffer's claimed uncompressed
// size and a zstd frame's window are checked before arrow-go and the codec
// allocate them, so corrupt claims fail fast with ErrCorrupt.
func TestCompressedBufferClaims(t *testing.T) {
	schema, _ := testSchema()
	rec := testRecord(t, memory.NewGoAllocator(), 6)
	defer rec.Release()
	msg := zstdMessage(t, rec)
	got, err := decodeMessage(t, schema, msg)
	require.NoError(t, err)
	got.Release()
	frame := firstZstdFrame(t, msg)

	t.Run("claimed size", func(t *testing.T) {
		bad := bytes.Clone(msg)
		// 200 MiB is under MaxUncompressedBody but no codec makes it from
		// a few dozen bytes.
		binary.LittleEndian.PutUint64(bad[frame-8:], 200<<20)
		_, err := decodeMessage(t, schema, bad)
		require.ErrorIs(t, err, metadata.ErrCorrupt)
		require.ErrorContains(t, err, "claims 209715200 bytes uncompressed")
	})

	t.Run("zstd window", func(t *testing.T) {
		bad := bytes.Clone(msg)
		require.Equal(t, byte(0), bad[frame+4]&0xE3, "a frame with a window descriptor, no content size and no dictionary")
		// A window of 2^(10+19) = 512 MiB, which the decoder would
		// allocate twice over.
		bad[frame+5] = 19 << 3
		_, err := decodeMessage(t, schema, bad)
		require.ErrorIs(t, err, metadata.ErrCorrupt)
		require.ErrorContains(t, err, "declares a 536870912-byte window")
	})
}

// TestLargeCompressedBuffersDecode: the bounds never refuse what the
// writer makes: buffers past one zstd block (the encoder then streams,
// declaring an 8 MiB window) and buffers of zeros compressed close to the
// codec's limit.
func TestLargeCompressedBuffersDecode(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "zero", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	const rows = 1 << 15 // 256 KiB a column: two zstd blocks
	for _, compression := range []string{CompressionZstd, CompressionLZ4} {
		t.Run(compression, func(t *testing.T) {
			mem := memory.NewGoAllocator()
			column := func(v func(i int) int64) arrow.Array {
				vals := make([]int64, rows)
				for i := range vals {
					vals[i] = v(i)
				}
				data := array.NewData(arrow.PrimitiveTypes.Int64, rows,
					[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, 0, 0)
				defer data.Release()
				return array.MakeFromData(data)
			}
			a := column(func(i int) int64 { return int64(i) * 7919 })
			b := column(func(int) int64 { return 0 })
			defer a.Release()
			defer b.Release()
			rec := array.NewRecordBatch(schema, []arrow.Array{a, b}, rows)
			defer rec.Release()
			msg, err := AppendRecordMessage(nil, rec, compression, mem)
			require.NoError(t, err)
			require.Less(t, len(msg), rows*8, "compressed")
			if compression == CompressionZstd {
				f, ok := parseZstdFrameHeader(msg[firstZstdFrame(t, msg)+4:])
				require.True(t, ok)
				require.Equal(t, uint64(maxStreamWindow), f.window, "the streaming encoder's window")
			}
			got, err := decodeMessage(t, schema, msg)
			require.NoError(t, err)
			defer got.Release()
			require.Equal(t, int64(rows), got.NumRows())
			require.Equal(t, int64(rows-1)*7919, got.Column(0).(*array.Int64).Value(rows-1))
			require.Equal(t, int64(0), got.Column(1).(*array.Int64).Value(rows-1))
		})
	}
}
