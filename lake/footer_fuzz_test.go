package lake

import (
	"errors"
	"testing"

	"github.com/flusslite/fluss/metadata"
)

// FuzzLakeFile feeds arbitrary bytes, starting from a small valid lake
// file, to the reader as a file listed without a footer checksum (a
// format 2 manifest's), so that every decoder sees them: a read must
// return rows or an error wrapping ErrCorrupt, never panic, and never
// allocate more than a bound far above what the valid file needs: a
// length taken from damaged bytes must not size an allocation.
func FuzzLakeFile(f *testing.F) {
	seed, err := Open(Options{InMemory: true})
	if err != nil {
		f.Fatal(err)
	}
	table := footerTable()
	lf := writeRows(f, seed, table, "", nil, 1, footerRows())
	f.Add(getBytes(seed, lf.Path))
	if err := seed.Close(); err != nil {
		f.Fatal(err)
	}
	lf.FooterCRC32C = ""
	types := []metadata.DataType{table.Schema.Columns[0].Type, table.Schema.Columns[1].Type}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Open(Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		setBytes(l, lf.Path, b)
		n := allocated(func() { _, err = readRows(l, table, lf, types) })
		if err != nil && !errors.Is(err, metadata.ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		if n > flipAllocBound {
			t.Fatalf("reading %d bytes allocated %d", len(b), n)
		}
	})
}
