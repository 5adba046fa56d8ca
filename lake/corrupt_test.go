package lake

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// setBytes replaces a file of an in-memory lake.
func setBytes(l *Lake, rel string, b []byte) {
	m := l.fs.(*memFS)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[l.abs(rel)] = b
}

func getBytes(l *Lake, rel string) []byte {
	m := l.fs.(*memFS)
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.files[l.abs(rel)]...)
}

// readErr reads every row of files with a plain and a sorted reader and
// returns the first error.
func readErr(l *Lake, table *metadata.TableInfo, files []metadata.LakeFile, opts ReadOptions) error {
	rr, err := l.OpenFiles(bg, table, files, opts)
	if err != nil {
		return err
	}
	for rr.Next() {
	}
	err = rr.Err()
	rr.Close()
	if err != nil || !table.HasPrimaryKey() {
		return err
	}
	sr, err := l.OpenSorted(bg, table, files, opts)
	if err != nil {
		return err
	}
	defer sr.Close()
	for sr.Next() {
	}
	return sr.Err()
}

func TestCorruptFiles(t *testing.T) {
	l, _ := testLake(t, true, func(o *Options) { o.RowGroupRows = 50 })
	table := pkTable()
	var rows [][]any
	for k := 0; k < 300; k++ {
		rows = append(rows, pkRow(k, "v"))
	}
	lf := writeRows(t, l, table, "", nil, 1, rows)
	good := getBytes(l, lf.Path)
	opts := ReadOptions{Projection: []int{0, 1, 2}, WithSystemColumns: true}
	require.NoError(t, readErr(l, table, []metadata.LakeFile{lf}, opts))

	for name, b := range map[string][]byte{
		"empty":     {},
		"garbage":   []byte("this is not a parquet file at all, just words"),
		"truncated": good[:len(good)/2],
		"no footer": good[:len(good)-8],
		"bad magic": append(append([]byte(nil), good[:len(good)-4]...), 'X', 'X', 'X', 'X'),
	} {
		setBytes(l, lf.Path, b)
		err := readErr(l, table, []metadata.LakeFile{lf}, opts)
		require.ErrorIs(t, err, metadata.ErrCorrupt, name)
		require.Contains(t, err.Error(), lf.Path, name)
	}

	// A file of another table's layout is corrupt for this one.
	setBytes(l, lf.Path, good)
	other := simpleTable()
	err := readErr(l, other, []metadata.LakeFile{lf}, ReadOptions{Projection: []int{0}})
	require.ErrorIs(t, err, metadata.ErrCorrupt)

	// A missing file too.
	err = readErr(l, table, []metadata.LakeFile{{Path: "11/data/-/b0/9-0.parquet"}}, opts)
	require.ErrorIs(t, err, metadata.ErrCorrupt)

	// Flipping any single byte never panics or leaks; it is either caught
	// or lands in bytes that do not matter to the values.
	for pos := 0; pos < len(good); pos += max(1, len(good)/80) {
		b := append([]byte(nil), good...)
		b[pos] ^= 0x5A
		setBytes(l, lf.Path, b)
		err := readErr(l, table, []metadata.LakeFile{lf}, opts)
		if err != nil && !errors.Is(err, metadata.ErrCorrupt) {
			t.Fatalf("byte %d: error %v is not ErrCorrupt", pos, err)
		}
	}
}

func TestWriterChecksBatches(t *testing.T) {
	l, _ := testLake(t, true, nil)
	table := simpleTable()
	w, err := l.NewFileWriter(table, "", nil, 0, 1)
	require.NoError(t, err)
	defer w.Abort()
	// The wrong table's batch: a column type mismatch.
	rec := record(t, l.opts.Allocator, pkTable(), 0, [][]any{pkRow(1, "x")})
	require.ErrorIs(t, w.Write(rec), metadata.ErrInvalidValue)
	rec.Release()

	_, err = l.NewFileWriter(table, "p", []string{"p"}, 0, 1)
	require.ErrorIs(t, err, metadata.ErrInvalidValue, "partition for a table without partitions")
	_, err = l.NewFileWriter(table, "", nil, 0, 0)
	require.ErrorIs(t, err, metadata.ErrInvalidValue, "snapshot id 0")
}
