package lake

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	pqmeta "github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/flusslite/fluss/metadata"
)

// parquetFile is an open lake file: its footer read and checked against
// the table. It must be closed.
type parquetFile struct {
	rel  string
	f    ReadableFile
	pr   *file.Reader
	md   *pqmeta.FileMetaData
	cols []metadata.Column // the file's columns: table columns + system columns
	// leaves are the Parquet leaf columns of each file column.
	leaves [][]int
	// leaf is the single leaf of a flat file column, -1 for nested ones;
	// statistics are read from it.
	leaf []int
	// missing marks the table columns added after the file was written
	// (see metadata.PastSchema): the file has none of their data, and
	// they read as NULL.
	missing []bool
	nanCols map[int]bool
	// emptyCols are the string and binary columns whose minimum is not
	// trusted (see kvEmptyColumns); allEmpty: none is (an older file).
	emptyCols map[int]bool
	allEmpty  bool
	// minKey and maxKey bound the physical keys of a primary-key table's
	// file; nil when the file does not say.
	minKey, maxKey []byte
}

// corrupt wraps a failure to read a lake file as ErrCorrupt naming it.
func corrupt(rel string, err any) error {
	return fmt.Errorf("%w: lake file %s: %v", metadata.ErrCorrupt, rel, err)
}

// openParquet opens a lake file and reads its footer. Bytes that do not
// form a Parquet file of the table's layout are ErrCorrupt naming the
// file; the Parquet library's panics on such bytes are caught here.
func (l *Lake) openParquet(table *metadata.TableInfo, lf metadata.LakeFile) (pf *parquetFile, err error) {
	if !validRelPath(lf.Path) {
		return nil, fmt.Errorf("%w: lake file path %q", metadata.ErrCorrupt, lf.Path)
	}
	f, err := l.fs.Open(l.abs(lf.Path))
	if isNotExist(err) {
		return nil, fmt.Errorf("%w: lake file %s is missing: %w", metadata.ErrCorrupt, lf.Path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("lake: open %s: %w", lf.Path, err)
	}
	pf = &parquetFile{rel: lf.Path, f: f}
	defer func() {
		if r := recover(); r != nil {
			err = corrupt(lf.Path, r)
		}
		if err != nil {
			pf.Close()
			pf = nil
		}
	}()
	if err := checkFooter(lf, f); err != nil {
		return nil, err
	}
	// Page buffers come from Go's collected allocator, not mem: on some
	// corrupt pages the Parquet library drops a page reader without
	// releasing its buffers, which would otherwise leak from mem. Arrays
	// handed to callers still come from mem.
	props := parquet.NewReaderProperties(memory.NewGoAllocator())
	pr, err := file.NewParquetReader(f, file.WithReadProps(props))
	if err != nil {
		return nil, corrupt(lf.Path, err)
	}
	pf.pr = pr
	pf.md = pr.MetaData()
	if lf.FooterCRC32C == "" {
		// A footer the manifest's checksum matched holds the stored
		// schema the lake wrote; only one it cannot vouch for is walked.
		if err := checkStoredSchema(pf.md.KeyValueMetadata()); err != nil {
			return nil, corrupt(lf.Path, err)
		}
	}
	if err := pf.checkLayout(table); err != nil {
		return nil, corrupt(lf.Path, err)
	}
	kv := pf.md.KeyValueMetadata()
	if err := checkIdentity(table, lf, kv, pf.md.NumRows); err != nil {
		return nil, corrupt(lf.Path, err)
	}
	if v := kv.FindValue(kvNaNColumns); v != nil && *v != "" {
		pf.nanCols = map[int]bool{}
		for _, s := range strings.Split(*v, ",") {
			i, err := strconv.Atoi(s)
			if err != nil {
				return nil, corrupt(lf.Path, fmt.Errorf("bad %s %q", kvNaNColumns, *v))
			}
			pf.nanCols[i] = true
		}
	}
	switch v := kv.FindValue(kvEmptyColumns); {
	case v == nil:
		pf.allEmpty = true
	case *v != "":
		pf.emptyCols = map[int]bool{}
		for _, s := range strings.Split(*v, ",") {
			i, err := strconv.Atoi(s)
			if err != nil {
				return nil, corrupt(lf.Path, fmt.Errorf("bad %s %q", kvEmptyColumns, *v))
			}
			pf.emptyCols[i] = true
		}
	}
	lo, hi := kv.FindValue(kvKeyMin), kv.FindValue(kvKeyMax)
	if lo != nil && hi != nil {
		pf.minKey, err = hex.DecodeString(*lo)
		if err == nil {
			pf.maxKey, err = hex.DecodeString(*hi)
		}
		if err != nil {
			return nil, corrupt(lf.Path, fmt.Errorf("bad key range: %v", err))
		}
	}
	return pf, nil
}

// checkLayout maps the Parquet schema onto the table's file columns and
// checks every column's type, so that readers never meet an array of a
// type they do not expect.
func (pf *parquetFile) checkLayout(table *metadata.TableInfo) error {
	sc := pf.md.Schema
	pf.cols = fileColumns(table)
	trailing := numSystemColumns
	if IsUndoFile(pf.rel) {
		pf.cols = undoColumns(table)
		trailing++
	}
	root := sc.Root()
	// A file written under an earlier schema has that schema's data
	// columns, a prefix of the table's, then the system columns (and an
	// undo file UndoSameColumn).
	n := len(table.Schema.Columns)
	k := root.NumFields() - trailing
	if k != n && !table.HadWidth(k) {
		return fmt.Errorf("%d columns, the table's lake files have %d", root.NumFields(), len(pf.cols))
	}
	if v := pf.md.KeyValueMetadata().FindValue(kvSchemaID); v != nil {
		id, err := strconv.ParseInt(*v, 10, 32)
		if err != nil {
			return fmt.Errorf("bad %s %q", kvSchemaID, *v)
		}
		if want, ok := table.SchemaColumns(int32(id)); !ok || want != k {
			return fmt.Errorf("written under schema %d with %d data columns, which the table's schemas do not match", id, k)
		}
	}
	// col maps a field of the file to its table column.
	col := func(fi int) int {
		if fi < k {
			return fi
		}
		return fi - k + n
	}
	pf.leaves = make([][]int, len(pf.cols))
	pf.leaf = make([]int, len(pf.cols))
	pf.missing = make([]bool, len(pf.cols))
	for i := 0; i < sc.NumColumns(); i++ {
		fi := root.FieldIndexByField(sc.ColumnRoot(i))
		if fi < 0 || fi >= root.NumFields() {
			return fmt.Errorf("leaf column %d has no top-level field", i)
		}
		pf.leaves[col(fi)] = append(pf.leaves[col(fi)], i)
	}
	for fi := range root.NumFields() {
		i := col(fi)
		c := pf.cols[i]
		if !strings.EqualFold(root.Field(fi).Name(), c.Name) {
			return fmt.Errorf("column %d is %q, want %q", fi, root.Field(fi).Name(), c.Name)
		}
		if len(pf.leaves[i]) == 0 {
			return fmt.Errorf("column %q has no data", c.Name)
		}
		pf.leaf[i] = -1
		if !c.Type.IsNested() && len(pf.leaves[i]) == 1 {
			pf.leaf[i] = pf.leaves[i][0]
		}
	}
	for i := k; i < n; i++ {
		pf.missing[i], pf.leaf[i] = true, -1
	}
	return nil
}

// Close releases the file. Idempotent.
func (pf *parquetFile) Close() error {
	if pf == nil || pf.f == nil {
		return nil
	}
	f := pf.f
	pf.f = nil
	return f.Close()
}

// groupStats are the statistics of row group rg for the given table
// columns.
func (pf *parquetFile) groupStats(table *metadata.TableInfo, rg int, cols []int) *statsSet {
	s := statsFor(pf.md, rg, table, cols, pf.leaf, pf.nanCols, func(col int) bool { return pf.allEmpty || pf.emptyCols[col] })
	for _, c := range cols {
		if c >= 0 && c < len(pf.missing) && pf.missing[c] {
			if v := pf.cols[c].PadValue(); v != nil && pf.cols[c].Type.StatsSupported() {
				s.cols[c] = colStats{min: v, max: v, nullsKnown: true}
			} else {
				s.cols[c] = colStats{nulls: s.rows, nullsKnown: true}
			}
		}
	}
	return s
}

// fileStats are the statistics of the whole file.
func (pf *parquetFile) fileStats(table *metadata.TableInfo, cols []int) *statsSet {
	groups := make([]*statsSet, pf.md.NumRowGroups())
	for i := range groups {
		groups[i] = pf.groupStats(table, i, cols)
	}
	return mergeStats(groups, cols)
}

// checkIdentity compares what the writer recorded in a file's key-value
// metadata (table, partition, bucket, snapshot) and its footer's row
// count with the manifest's entry: a file moved or swapped in from
// elsewhere, even one of the same size and layout, holds another
// bucket's rows and must not be read as this one's.
func checkIdentity(table *metadata.TableInfo, lf metadata.LakeFile, kv pqmeta.KeyValueMetadata, rows int64) error {
	want := []struct{ key, value string }{
		{kvTableID, strconv.FormatInt(table.TableID, 10)},
		{kvPartition, lf.PartitionName},
		{kvBucket, strconv.Itoa(int(lf.Bucket))},
	}
	if snap, _, ok := fileSnapshotID(lf.Path); ok {
		want = append(want, struct{ key, value string }{kvSnapshotID, strconv.FormatInt(snap, 10)})
	}
	for _, w := range want {
		got := kv.FindValue(w.key)
		if got == nil {
			return fmt.Errorf("no %s in its metadata: not a file the lake wrote", w.key)
		}
		if *got != w.value {
			return fmt.Errorf("its metadata says %s %q, the manifest lists it as %q: the file is not the one the manifest names", w.key, *got, w.value)
		}
	}
	if rows != lf.RowCount {
		return fmt.Errorf("it holds %d rows, the manifest lists %d", rows, lf.RowCount)
	}
	return nil
}
