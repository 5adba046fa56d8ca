package logformat

import (
	"encoding/binary"
	"fmt"

	"github.com/flusslite/fluss/metadata"
)

// Codecs of an IPC BodyCompression table.
const (
	codecLZ4Frame = 0
	codecZstd     = 1
)

// maxExpansion bounds how many bytes one compressed byte can decode to,
// for both codecs: a zstd block regenerates at most 128 KiB and takes at
// least 4 bytes (3 of header, 1 of an RLE byte), and an LZ4 sequence
// spends a byte per 255 bytes of match length.
const maxExpansion = 128 << 10 / 4

// maxStreamWindow is the largest zstd window accepted beyond a buffer's
// own size: the window a streaming encoder declares when it does not know
// the content size (klauspost/compress's default, zstd's windowLog 23).
const maxStreamWindow = 8 << 20

// Zstd frame format (RFC 8878).
const (
	zstdMagic         = 0xFD2FB528
	zstdSkippableMask = 0xFFFFFFF0
	zstdSkippable     = 0x184D2A50
	zstdBlockRaw      = 0
	zstdBlockRLE      = 1
	zstdBlockReserved = 3
)

// checkCompressed checks what a compressed buffer declares before arrow-go
// and the codec allocate for it: its claimed uncompressed size (arrow-go
// allocates that much at once) must be one its compressed bytes can
// produce, and a zstd frame's window (the decoder allocates up to twice
// the window for history) must fit the buffer. Bytes the codec would
// refuse anyway (a bad magic, a cut frame) are left to it.
func checkCompressed(codec int, i int, claimed int64, data []byte) error {
	if claimed > maxExpansion*int64(len(data)) {
		return fmt.Errorf("%w: compressed arrow buffer %d of %d bytes claims %d bytes uncompressed",
			metadata.ErrCorrupt, i, len(data), claimed)
	}
	if codec != codecZstd {
		// LZ4 frames declare a block size of at most 4 MiB; nothing
		// larger is allocated from them.
		return nil
	}
	limit := max(claimed, maxStreamWindow)
	le := binary.LittleEndian
	for pos := 0; pos+4 <= len(data); {
		magic := le.Uint32(data[pos:])
		if magic&zstdSkippableMask == zstdSkippable {
			if pos+8 > len(data) {
				return nil
			}
			pos += 8 + int(min(int64(le.Uint32(data[pos+4:])), int64(len(data))))
			continue
		}
		if magic != zstdMagic || pos+5 > len(data) {
			return nil
		}
		f, ok := parseZstdFrameHeader(data[pos+4:])
		if !ok {
			return nil
		}
		if f.window > uint64(limit) {
			return fmt.Errorf("%w: zstd frame at %d of compressed arrow buffer %d declares a %d-byte window for %d bytes",
				metadata.ErrCorrupt, pos, i, f.window, claimed)
		}
		pos += 4 + f.headerLen
		// Skip the frame's blocks to reach the next frame, if any.
		for last := false; !last; {
			if pos+3 > len(data) {
				return nil
			}
			b := uint32(data[pos]) | uint32(data[pos+1])<<8 | uint32(data[pos+2])<<16
			typ, size := (b>>1)&3, int(b>>3)
			last = b&1 == 1
			pos += 3
			switch typ {
			case zstdBlockRLE:
				pos++
			case zstdBlockReserved:
				return nil
			default:
				pos += size
			}
		}
		if f.checksum {
			pos += 4
		}
	}
	return nil
}

// zstdFrame is what a zstd frame header declares.
type zstdFrame struct {
	// window is the history the decoder keeps: the Window_Descriptor's
	// size, or the content size of a single-segment frame.
	window    uint64
	headerLen int // bytes after the magic number
	checksum  bool
}

// parseZstdFrameHeader reads the frame header that follows a frame's magic
// number; ok is false when b is too short for it.
func parseZstdFrameHeader(b []byte) (f zstdFrame, ok bool) {
	if len(b) < 1 {
		return f, false
	}
	fhd := b[0]
	fcsFlag, single, dictFlag := fhd>>6, fhd>>5&1 == 1, fhd&3
	f.checksum = fhd>>2&1 == 1
	pos := 1
	if !single {
		if len(b) < 2 {
			return f, false
		}
		exp, mantissa := uint64(b[1]>>3), uint64(b[1]&7)
		base := uint64(1) << (10 + exp)
		f.window = base + base/8*mantissa
		pos++
	}
	pos += [4]int{0, 1, 2, 4}[dictFlag]
	fcsLen := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single {
		fcsLen = 1
	}
	if len(b) < pos+fcsLen {
		return f, false
	}
	if single {
		var fcs uint64
		switch fcsLen {
		case 1:
			fcs = uint64(b[pos])
		case 2:
			fcs = uint64(binary.LittleEndian.Uint16(b[pos:])) + 256
		case 4:
			fcs = uint64(binary.LittleEndian.Uint32(b[pos:]))
		case 8:
			fcs = binary.LittleEndian.Uint64(b[pos:])
		}
		f.window = fcs
	}
	f.headerLen = pos + fcsLen
	return f, true
}
