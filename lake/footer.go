package lake

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"regexp"

	"github.com/flusslite/fluss/metadata"
)

// parquetMagic ends every unencrypted Parquet file, after the footer's
// length.
const parquetMagic = "PAR1"

// footerTailLen is the footer's length (4 bytes, little-endian) plus the
// magic.
const footerTailLen = 8

// readFooter returns a Parquet file's footer: the thrift metadata, its
// length and the magic, the bytes a reader decodes before any page. It
// reads only those bytes and trusts the length only as far as the file's
// size allows, so damage costs a read of at most the file.
func readFooter(f io.ReaderAt, size int64) ([]byte, error) {
	if size < int64(len(parquetMagic)+footerTailLen) {
		return nil, fmt.Errorf("%d bytes are too few for a Parquet file", size)
	}
	var tail [footerTailLen]byte
	if err := readAt(f, tail[:], size-footerTailLen); err != nil {
		return nil, err
	}
	if string(tail[4:]) != parquetMagic {
		return nil, fmt.Errorf("no Parquet magic at its end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-int64(len(parquetMagic)+footerTailLen) {
		return nil, fmt.Errorf("footer length %d exceeds the file's %d bytes", n, size)
	}
	footer := make([]byte, n+footerTailLen)
	if err := readAt(f, footer, size-int64(len(footer))); err != nil {
		return nil, err
	}
	return footer, nil
}

// footerChecksum returns the CRC-32C of f's Parquet footer.
func footerChecksum(f ReadableFile) (string, error) {
	footer, err := readFooter(f, f.Size())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x", crc32.Checksum(footer, castagnoli)), nil
}

// checkForeignFooter bounds the footer of a file the lake cannot vouch
// for before the Parquet library decodes it (see checkFooterThrift).
func checkForeignFooter(f io.ReaderAt, size int64) error {
	footer, err := readFooter(f, size)
	if err != nil {
		return err
	}
	return checkFooterThrift(footer[:len(footer)-footerTailLen])
}

func readAt(f io.ReaderAt, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read: %w", err)
}

var footerCRCSyntax = regexp.MustCompile(`^[0-9a-f]{8}$`)

// checkFooter compares f's footer with the checksum the manifest lists
// for it; the footer of a file listed without one is bounded as a foreign
// file's is.
func checkFooter(lf metadata.LakeFile, f ReadableFile) error {
	if lf.FooterCRC32C == "" {
		if err := checkForeignFooter(f, f.Size()); err != nil {
			return corrupt(lf.Path, err)
		}
		return nil
	}
	got, err := footerChecksum(f)
	if err != nil {
		return corrupt(lf.Path, fmt.Errorf("footer: %w", err))
	}
	if got != lf.FooterCRC32C {
		return corrupt(lf.Path, fmt.Sprintf("footer checksum %s, the manifest lists %s", got, lf.FooterCRC32C))
	}
	return nil
}

// fileFooterChecksum reads back the footer of a file the lake just
// wrote, as stored.
func (l *Lake) fileFooterChecksum(name string) (string, error) {
	f, err := l.fs.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return footerChecksum(f)
}
