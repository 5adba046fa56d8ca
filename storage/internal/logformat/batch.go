package logformat

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
)

// Batch is a record batch to encode.
type Batch struct {
	BaseOffset      int64
	CommitTimestamp int64 // ms
	SchemaID        int16
	// ChangeTypes has one change type per row, stored as its byte; nil
	// for an append-only batch.
	ChangeTypes []metadata.ChangeType
	// Stats are the column statistics to carry (may be empty).
	Stats []ColumnStats
	// Record holds the rows in the table schema.
	Record arrow.RecordBatch
}

// EncodeOptions say how to encode a batch.
type EncodeOptions struct {
	// Types are the table schema's column types, for the statistics.
	Types []metadata.DataType
	// Compression is the Arrow buffer codec: NONE (or ""), ZSTD, LZ4_FRAME.
	Compression string
	// Allocator is used for scratch buffers; nil: the default.
	Allocator memory.Allocator
}

// EncodeBatch appends the encoded batch to dst.
func EncodeBatch(dst []byte, b Batch, opts EncodeOptions) ([]byte, error) {
	out, _, err := encodeBatch(dst, b, b.Record.NumRows(), opts, func(dst []byte) ([]byte, bool, error) {
		dst, err := AppendRecordMessage(dst, b.Record, opts.Compression, opts.Allocator)
		return dst, true, err
	})
	return out, err
}

// EncodeRowBatch is EncodeBatch of rows given as Go values (b.Record
// unused), encoded by enc: ok is false, and dst returned as it was, when
// enc does not take one of the values (RowEncoder.Append). enc writes
// uncompressed messages only.
func EncodeRowBatch(dst []byte, b Batch, enc *RowEncoder, rows [][]any, opts EncodeOptions) ([]byte, bool, error) {
	if c := opts.Compression; c != "" && c != CompressionNone {
		return dst, false, nil
	}
	return encodeBatch(dst, b, int64(len(rows)), opts, func(dst []byte) ([]byte, bool, error) {
		dst, ok := enc.Append(dst, rows)
		return dst, ok, nil
	})
}

func encodeBatch(dst []byte, b Batch, rows int64, opts EncodeOptions, appendRecords func([]byte) ([]byte, bool, error)) ([]byte, bool, error) {
	if rows > math.MaxInt32 {
		return dst, false, fmt.Errorf("batch of %d rows is too large", rows)
	}
	if b.ChangeTypes != nil && int64(len(b.ChangeTypes)) != rows {
		return dst, false, fmt.Errorf("batch of %d rows has %d change types", rows, len(b.ChangeTypes))
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	var err error
	if dst, err = AppendStats(dst, b.Stats, opts.Types); err != nil {
		return dst[:start], false, err
	}
	statsLen := len(dst) - start - HeaderSize
	if len(b.Stats) == 0 {
		// No statistics: no blob at all rather than an empty count.
		dst = dst[:start+HeaderSize]
		statsLen = 0
	}
	for _, c := range b.ChangeTypes {
		dst = append(dst, byte(c))
	}
	var ok bool
	if dst, ok, err = appendRecords(dst); err != nil || !ok {
		return dst[:start], false, err
	}
	size := len(dst) - start
	if size-LengthFieldEnd > math.MaxInt32 {
		return dst[:start], false, fmt.Errorf("batch of %d bytes is too large", size)
	}
	h := Header{
		BaseOffset:       b.BaseOffset,
		Length:           int32(size - LengthFieldEnd),
		Magic:            Magic,
		CommitTimestamp:  b.CommitTimestamp,
		SchemaID:         b.SchemaID,
		RecordCount:      int32(rows),
		StatisticsLength: int32(statsLen),
	}
	if b.ChangeTypes == nil {
		h.Attributes |= AttrAppendOnly
	}
	if rows > 0 {
		h.LastOffsetDelta = int32(rows - 1)
	}
	out := dst[start:]
	putHeader(out, h)
	h.CRC = Checksum(out)
	putHeader(out, h)
	return dst, true, nil
}

// Decoded is an encoded batch split into its parts. The slices alias the
// bytes given to DecodeBatch.
type Decoded struct {
	Header Header
	// Stats is the raw statistics blob (DecodeStats parses it).
	Stats []byte
	// ChangeTypes has one metadata.ChangeType byte per record, each
	// checked to be valid; nil for append-only batches.
	ChangeTypes []byte
	// Records is the Arrow IPC RecordBatch message (RecordDecoder).
	Records []byte
	// RecordsOffset is where Records starts in the batch.
	RecordsOffset int
}

// DecodeBatch checks one whole batch (header, CRC, section lengths, change
// types) and splits it into its parts. Errors wrap metadata.ErrCorrupt.
func DecodeBatch(batch []byte) (Decoded, error) {
	return decodeBatch(batch, true)
}

// DecodeVerifiedBatch is DecodeBatch without the CRC check, for a batch
// whose bytes were checked before (the caller knows they have not changed
// since) and of which only a part was read again: the header, statistics,
// change types and Arrow metadata must be in batch, the body only where
// it is decoded.
func DecodeVerifiedBatch(batch []byte) (Decoded, error) {
	return decodeBatch(batch, false)
}

func decodeBatch(batch []byte, checkCRC bool) (Decoded, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return Decoded{}, err
	}
	if checkCRC {
		if err := CheckCRC(h, batch); err != nil {
			return Decoded{}, err
		}
	}
	d := Decoded{Header: h}
	pos := HeaderSize
	d.Stats = batch[pos : pos+int(h.StatisticsLength)]
	pos += int(h.StatisticsLength)
	if !h.AppendOnly() {
		if int64(h.RecordCount) > int64(len(batch)-pos) {
			return Decoded{}, fmt.Errorf("%w: %d change types do not fit the batch", metadata.ErrCorrupt, h.RecordCount)
		}
		d.ChangeTypes = batch[pos : pos+int(h.RecordCount)]
		pos += int(h.RecordCount)
		for i, c := range d.ChangeTypes {
			if !metadata.ChangeType(c).Valid() {
				return Decoded{}, fmt.Errorf("%w: change type %d of record %d", metadata.ErrCorrupt, c, i)
			}
		}
	}
	d.Records = batch[pos:]
	d.RecordsOffset = pos
	return d, nil
}
