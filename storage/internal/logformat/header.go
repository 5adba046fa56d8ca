// Package logformat is the on-disk codec of one log record batch: the fixed
// little-endian header, the column statistics blob, the change-type vector
// and the rows as one encapsulated Arrow IPC RecordBatch message.
//
// The layout follows Fluss's LogRecordBatchFormat (V1, the variant with
// statistics) without the writer id and batch sequence, which only matter
// to idempotent network producers:
//
//	offset size field
//	     0    8 BaseOffset       int64  log offset of the first record
//	     8    4 Length           int32  bytes after this field
//	    12    1 Magic            int8   format version (Magic)
//	    13    8 CommitTimestamp  int64  milliseconds since the epoch
//	    21    4 CRC              uint32 CRC-32C (Castagnoli) of bytes [25, end)
//	    25    2 SchemaID         int16
//	    27    1 Attributes       int8   bit 0: append only
//	    28    4 LastOffsetDelta  int32  last offset = BaseOffset + delta
//	    32    4 RecordCount      int32
//	    36    4 StatisticsLength int32  length of the statistics blob
//	    40      statistics blob (see stats.go)
//	            change types: RecordCount bytes, only when not append only
//	            Arrow IPC RecordBatch message (continuation marker, metadata
//	            length, flatbuffer metadata, body); no Schema message: the
//	            schema is the table's schema for SchemaID
//
// Every function here treats its input as untrusted: malformed bytes give
// an error wrapping metadata.ErrCorrupt, never a panic.
package logformat

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/flusslite/fluss/metadata"
)

// Magic is the format version written in every batch.
const Magic int8 = 1

// HeaderSize is the size of the fixed header.
const HeaderSize = 40

// Field positions inside the header.
const (
	offBaseOffset      = 0
	offLength          = 8
	offMagic           = 12
	offCommitTimestamp = 13
	offCRC             = 21
	offSchemaID        = 25
	offAttributes      = 27
	offLastOffsetDelta = 28
	offRecordCount     = 32
	offStatsLength     = 36

	// LengthFieldEnd is where the bytes counted by Length start.
	LengthFieldEnd = offMagic
	// crcStart is the first byte covered by the CRC.
	crcStart = offSchemaID
)

// AttrAppendOnly marks a batch whose records are all +A: it carries no
// change-type vector.
const AttrAppendOnly int8 = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the fixed header of a batch.
type Header struct {
	BaseOffset       int64
	Length           int32
	Magic            int8
	CommitTimestamp  int64
	CRC              uint32
	SchemaID         int16
	Attributes       int8
	LastOffsetDelta  int32
	RecordCount      int32
	StatisticsLength int32
}

// AppendOnly reports whether the batch holds only +A records.
func (h Header) AppendOnly() bool { return h.Attributes&AttrAppendOnly != 0 }

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset that follows the batch.
func (h Header) NextOffset() int64 { return h.LastOffset() + 1 }

// Size is the size of the whole batch in bytes.
func (h Header) Size() int64 { return LengthFieldEnd + int64(h.Length) }

// ParseHeader reads and sanity-checks the fixed header at the start of b.
// It does not check the CRC (the body may not have been read yet).
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: batch header is %d bytes, want %d", metadata.ErrCorrupt, len(b), HeaderSize)
	}
	le := binary.LittleEndian
	h := Header{
		BaseOffset:       int64(le.Uint64(b[offBaseOffset:])),
		Length:           int32(le.Uint32(b[offLength:])),
		Magic:            int8(b[offMagic]),
		CommitTimestamp:  int64(le.Uint64(b[offCommitTimestamp:])),
		CRC:              le.Uint32(b[offCRC:]),
		SchemaID:         int16(le.Uint16(b[offSchemaID:])),
		Attributes:       int8(b[offAttributes]),
		LastOffsetDelta:  int32(le.Uint32(b[offLastOffsetDelta:])),
		RecordCount:      int32(le.Uint32(b[offRecordCount:])),
		StatisticsLength: int32(le.Uint32(b[offStatsLength:])),
	}
	switch {
	case h.Magic != Magic:
		return h, fmt.Errorf("%w: batch magic %d, want %d", metadata.ErrCorrupt, h.Magic, Magic)
	case int64(h.Length) < HeaderSize-LengthFieldEnd:
		return h, fmt.Errorf("%w: batch length %d is shorter than its header", metadata.ErrCorrupt, h.Length)
	case h.BaseOffset < 0:
		return h, fmt.Errorf("%w: negative base offset %d", metadata.ErrCorrupt, h.BaseOffset)
	case h.RecordCount < 0 || h.LastOffsetDelta < 0:
		return h, fmt.Errorf("%w: bad record count %d or last offset delta %d", metadata.ErrCorrupt, h.RecordCount, h.LastOffsetDelta)
	case h.StatisticsLength < 0 || int64(h.StatisticsLength) > int64(h.Length)-(HeaderSize-LengthFieldEnd):
		return h, fmt.Errorf("%w: statistics length %d does not fit batch length %d", metadata.ErrCorrupt, h.StatisticsLength, h.Length)
	case h.AppendOnly() && h.RecordCount > 0 && h.LastOffsetDelta != h.RecordCount-1:
		// An append-only batch has exactly one offset per record.
		return h, fmt.Errorf("%w: append-only batch with %d records has last offset delta %d", metadata.ErrCorrupt, h.RecordCount, h.LastOffsetDelta)
	}
	return h, nil
}

// Checksum computes the CRC a whole batch should carry.
func Checksum(batch []byte) uint32 {
	return crc32.Checksum(batch[crcStart:], castagnoli)
}

// CheckCRC verifies the CRC of a whole batch (header included). The header
// must have been parsed from batch.
func CheckCRC(h Header, batch []byte) error {
	if int64(len(batch)) != h.Size() {
		return fmt.Errorf("%w: batch is %d bytes, header says %d", metadata.ErrCorrupt, len(batch), h.Size())
	}
	if got := Checksum(batch); got != h.CRC {
		return fmt.Errorf("%w: batch CRC %08x, computed %08x", metadata.ErrCorrupt, h.CRC, got)
	}
	return nil
}

func putHeader(b []byte, h Header) {
	le := binary.LittleEndian
	le.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	le.PutUint32(b[offLength:], uint32(h.Length))
	b[offMagic] = byte(h.Magic)
	le.PutUint64(b[offCommitTimestamp:], uint64(h.CommitTimestamp))
	le.PutUint32(b[offCRC:], h.CRC)
	le.PutUint16(b[offSchemaID:], uint16(h.SchemaID))
	b[offAttributes] = byte(h.Attributes)
	le.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	le.PutUint32(b[offRecordCount:], uint32(h.RecordCount))
	le.PutUint32(b[offStatsLength:], uint32(h.StatisticsLength))
}

// SetBaseOffset rewrites the base offset of an encoded batch. The base
// offset sits before the CRC, so the CRC stays valid; the writer uses this
// to encode a batch before it knows where it lands.
func SetBaseOffset(batch []byte, base int64) {
	binary.LittleEndian.PutUint64(batch[offBaseOffset:], uint64(base))
}

// SetCommitTimestamp rewrites the commit timestamp of an encoded batch;
// like the base offset it sits before the CRC, so the log stamps it when
// the batch lands, as Fluss's server does.
func SetCommitTimestamp(batch []byte, ms int64) {
	binary.LittleEndian.PutUint64(batch[offCommitTimestamp:], uint64(ms))
}
