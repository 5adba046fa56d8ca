package lake

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// footerTable has the layout of the table in which the corruption suite
// found the stored-schema flip (TestCorruptFilesNeverReadAsData with
// -corrupt.flips 96): the vtable offsets of the schema message depend on
// the columns.
func footerTable() *metadata.TableInfo {
	return testTable(1, []metadata.Column{
		col("id", metadata.BigIntType()),
		col("s", metadata.StringType()),
	}, nil, nil)
}

func footerRows() [][]any {
	var rows [][]any
	for i := range 20 {
		rows = append(rows, []any{int64(i), fmt.Sprintf("s%d", i)})
	}
	return rows
}

// storedSchemaSpan returns where the base64 value of the ARROW:schema
// key sits in a Parquet file's bytes.
func storedSchemaSpan(t *testing.T, b []byte) (start, end int) {
	t.Helper()
	pr, err := file.NewParquetReader(bytes.NewReader(b))
	require.NoError(t, err)
	v := pr.MetaData().KeyValueMetadata().FindValue(arrowSchemaKey)
	require.NotNil(t, v)
	start = bytes.Index(b, []byte(*v))
	require.GreaterOrEqual(t, start, 0)
	return start, start + len(*v)
}

// schemaFlip is the flip the suite found: byte 1266 of a 1877-byte file
// whose stored schema starts at 1245, ^= 0x2c, turns an 'A' of the base64
// into 'm' and the schema message's body length into 0x800080004, which
// arrow-go's IPC reader allocated (32 GiB) before reading anything.
const (
	schemaFlipAt   = 1266 - 1245
	schemaFlipMask = 0x2c
)

// allocated returns the bytes f allocates; the bound tests set on it
// turns an allocation sized by a damaged length (which may not even
// fail on a machine that overcommits) into a failure.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const flipAllocBound = 64 << 20

func TestStoredSchemaFlipIsCorrupt(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := footerTable()
	lf := writeRows(t, l, table, "", nil, 1, footerRows())
	require.NotEmpty(t, lf.FooterCRC32C)
	good := getBytes(l, lf.Path)
	start, _ := storedSchemaSpan(t, good)
	bad := bytes.Clone(good)
	bad[start+schemaFlipAt] ^= schemaFlipMask
	setBytes(l, lf.Path, bad)

	// The manifest's footer checksum catches it before any decoding; a
	// file of a format 2 manifest, listed without one, is caught by the
	// bound on the stored schema.
	unchecked := lf
	unchecked.FooterCRC32C = ""
	for what, c := range map[string]struct {
		lf   metadata.LakeFile
		says string
	}{
		"listed with a footer checksum":    {lf, "footer checksum"},
		"listed without a footer checksum": {unchecked, "stored Arrow schema"},
	} {
		var err error
		n := allocated(func() { err = readErr(l, table, []metadata.LakeFile{c.lf}, ReadOptions{Projection: []int{0, 1}}) })
		require.ErrorIs(t, err, metadata.ErrCorrupt, what)
		require.ErrorContains(t, err, lf.Path, what)
		require.ErrorContains(t, err, c.says, what)
		require.Less(t, n, uint64(flipAllocBound), "%s: bytes allocated reading the damaged file", what)
	}
}

// TestFooterFlipsAreCorrupt flips every byte of a file's footer, with
// several masks: each is ErrCorrupt naming the file, found by the
// checksum before the footer is decoded.
func TestFooterFlipsAreCorrupt(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := footerTable()
	lf := writeRows(t, l, table, "", nil, 1, footerRows())
	good := getBytes(l, lf.Path)
	n := int(binary.LittleEndian.Uint32(good[len(good)-footerTailLen:]))
	footerStart := len(good) - footerTailLen - n
	for pos := footerStart; pos < len(good); pos++ {
		for _, mask := range []byte{0x01, 0x2c, 0x80, 0xff} {
			bad := bytes.Clone(good)
			bad[pos] ^= mask
			setBytes(l, lf.Path, bad)
			what := fmt.Sprintf("byte %d ^= %#x", pos, mask)
			var err error
			alloc := allocated(func() { err = readErr(l, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0, 1}}) })
			require.ErrorIs(t, err, metadata.ErrCorrupt, what)
			require.ErrorContains(t, err, lf.Path, what)
			require.ErrorContains(t, err, "footer", what)
			require.Less(t, alloc, uint64(flipAllocBound), what)
		}
	}
}

// TestStoredSchemaFlipsWithoutChecksum flips every byte of the stored
// schema of a file listed without a footer checksum (a format 2
// manifest's): each read returns the rows or ErrCorrupt naming the file,
// and none allocates more than the bound.
func TestStoredSchemaFlipsWithoutChecksum(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := footerTable()
	lf := writeRows(t, l, table, "", nil, 1, footerRows())
	lf.FooterCRC32C = ""
	good := getBytes(l, lf.Path)
	start, end := storedSchemaSpan(t, good)
	want := footerRows()
	types := []metadata.DataType{table.Schema.Columns[0].Type, table.Schema.Columns[1].Type}
	caught := 0
	for pos := start; pos < end; pos++ {
		for _, mask := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x2c} {
			bad := bytes.Clone(good)
			bad[pos] ^= mask
			setBytes(l, lf.Path, bad)
			what := fmt.Sprintf("byte %d ^= %#x", pos, mask)
			var got [][]any
			var err error
			alloc := allocated(func() { got, err = readRows(l, table, lf, types) })
			require.Less(t, alloc, uint64(flipAllocBound), what)
			if err != nil {
				require.ErrorIs(t, err, metadata.ErrCorrupt, what)
				require.ErrorContains(t, err, lf.Path, what)
				caught++
				continue
			}
			require.Equal(t, want, got, what)
		}
	}
	t.Logf("%d of %d flips reported as corruption", caught, (end-start)*7)
}

// readRows reads the table columns of one file.
func readRows(l *Lake, table *metadata.TableInfo, lf metadata.LakeFile, types []metadata.DataType) ([][]any, error) {
	rr, err := l.OpenFiles(bg, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0, 1}})
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	var out [][]any
	for rr.Next() {
		rec := rr.Record()
		for i := range int(rec.NumRows()) {
			row := make([]any, len(types))
			for c := range types {
				row[c] = metadata.ValueAt(rec.Column(c), types[c], i)
			}
			out = append(out, row)
		}
	}
	return out, rr.Err()
}

// TestFormat2ManifestIsRead: a lake written before footer checksums reads
// as before, its files without a footer checksum.
func TestFormat2ManifestIsRead(t *testing.T) {
	fs := NewMemFS()
	l, err := Open(Options{FS: fs, Dir: "lake"})
	require.NoError(t, err)
	table := footerTable()
	lf := writeRows(t, l, table, "", nil, 1, footerRows())
	lf.FooterCRC32C = ""
	m := Manifest{SnapshotID: 1, TableID: table.TableID, Files: []metadata.LakeFile{lf},
		TieredOffsets: []TieredOffset{{PartitionID: metadata.NonPartitioned, Offset: 20}}, CommittedAt: time.Unix(1, 0).UTC()}
	body, err := encodeManifestFormat(m, manifestFormatNoFooter)
	require.NoError(t, err)
	require.NotContains(t, string(body), "footer_crc32c")
	require.NoError(t, fs.MkdirAll(l.abs(snapshotsDir(table.TableID))))
	require.NoError(t, l.writeFile(l.abs(path.Join(snapshotsDir(table.TableID), manifestName(1))), body))
	require.NoError(t, l.Close())

	l, err = Open(Options{FS: fs, Dir: "lake"})
	require.NoError(t, err)
	defer l.Close()
	got, ok, err := l.LatestManifest(bg, table.TableID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []metadata.LakeFile{lf}, got.Files)
	types := []metadata.DataType{table.Schema.Columns[0].Type, table.Schema.Columns[1].Type}
	rows, err := readRows(l, table, got.Files[0], types)
	require.NoError(t, err)
	require.Equal(t, footerRows(), rows)

	// A footer checksum that is not 8 hex digits is a damaged manifest.
	lf.FooterCRC32C = "xyz"
	m.SnapshotID, m.Files = 2, []metadata.LakeFile{lf}
	body, err = encodeManifestFormat(m, manifestFormat)
	require.NoError(t, err)
	require.NoError(t, l.writeFile(l.abs(path.Join(snapshotsDir(table.TableID), manifestName(2))), body))
	_, err = l.Manifest(bg, table.TableID, 2)
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, "footer checksum")
}

// TestImportedStoredSchemaFlipIsCorrupt: a file loaded into a table has
// no manifest entry to check it against, so the stored schema itself must
// be bounded before arrow-go decodes it.
func TestImportedStoredSchemaFlipIsCorrupt(t *testing.T) {
	l, _ := testLake(t, true, nil)
	lf := writeRows(t, l, footerTable(), "", nil, 1, footerRows())
	bad := getBytes(l, lf.Path)
	start, _ := storedSchemaSpan(t, bad)
	bad[start+schemaFlipAt] ^= schemaFlipMask
	path := filepath.Join(t.TempDir(), "flipped.parquet")
	require.NoError(t, os.WriteFile(path, bad, 0o644))

	var err error
	n := allocated(func() {
		rr, _, openErr := OpenParquetFile(bg, path, nil)
		if openErr == nil {
			rr.Release()
		}
		err = openErr
	})
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, path)
	require.Less(t, n, uint64(flipAllocBound), "bytes allocated opening the damaged file")
}

// craftedFooterFile is a Parquet file whose 17-byte footer declares a
// schema of 100 million elements: the thrift decoder made that slice,
// 800 MB, before finding the footer ends.
func craftedFooterFile() []byte {
	// FileMetaData: field 1 (version, i32) = 1; field 2 (schema) a list
	// of structs, its length in the varint after the 0xfc header.
	footer := []byte{0x15, 0x02, 0x19, 0xfc}
	footer = binary.AppendUvarint(footer, 100_000_000)
	footer = append(footer, 0x00, 0x00)
	b := append([]byte(parquetMagic), footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	return append(b, parquetMagic...)
}

func TestCraftedFooterIsCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crafted.parquet")
	require.NoError(t, os.WriteFile(path, craftedFooterFile(), 0o644))
	var err error
	n := allocated(func() {
		rr, _, openErr := OpenParquetFile(bg, path, nil)
		if openErr == nil {
			rr.Release()
		}
		err = openErr
	})
	require.Less(t, n, uint64(flipAllocBound), "bytes allocated opening the crafted file")
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, "100000000 elements")

	// A lake file listed without a footer checksum is bounded the same way.
	l, _ := testLake(t, true, nil)
	table := footerTable()
	lf := writeRows(t, l, table, "", nil, 1, footerRows())
	lf.FooterCRC32C = ""
	setBytes(l, lf.Path, craftedFooterFile())
	n = allocated(func() { err = readErr(l, table, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0, 1}}) })
	require.ErrorIs(t, err, metadata.ErrCorrupt)
	require.ErrorContains(t, err, lf.Path)
	require.Less(t, n, uint64(flipAllocBound), "bytes allocated reading the crafted file")
}
