package lake

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/flusslite/fluss/metadata"
)

// Keys of the Parquet key-value metadata the lake writes. Other engines
// ignore them; the lake reads them back.
const (
	kvTableID    = "fluss.table_id"
	kvSnapshotID = "fluss.snapshot_id"
	kvBucket     = "fluss.bucket"
	kvPartition  = "fluss.partition"
	// kvSchemaID is the table's schema id the file was written with; a
	// file of an earlier schema lacks the columns added since. Files
	// written before it was recorded have the data columns they have.
	kvSchemaID = "fluss.schema_id"
	// kvNaNColumns lists (comma-separated table column indexes) the FLOAT
	// and DOUBLE columns holding a NaN: Parquet statistics leave NaN out of
	// max, while NaN sorts above every number here, so their max must not
	// be trusted.
	kvNaNColumns = "fluss.nan_columns"
	// kvEmptyColumns lists (as kvNaNColumns) the STRING, CHAR and binary
	// columns holding an empty value, which arrow-go's statistics can
	// leave out of a chunk's min (a chunk of '' and 'dog' says min 'dog').
	// A file without the key comes from a writer that did not track them:
	// none of its string minimums is trusted.
	kvEmptyColumns = "fluss.empty_columns"
	// kvKeyMin and kvKeyMax are the hex encoded physical keys of the first
	// and last row of a primary-key table's file.
	kvKeyMin = "fluss.key_min"
	kvKeyMax = "fluss.key_max"
)

// FileWriter writes one Parquet file of a table's lake: the rows of one
// bucket of one partition. It is not safe for concurrent use; the caller
// must end it with Close or Abort.
//
// For a primary-key table the rows must arrive sorted by their encoded
// physical key, each key once; Write refuses rows out of order.
type FileWriter struct {
	lake   *Lake
	table  *metadata.TableInfo
	file   metadata.LakeFile
	name   string // file-system name
	f      WritableFile
	sink   *countingWriter
	pw     *pqarrow.FileWriter
	schema *arrow.Schema
	// inTypes are the Arrow types Write expects, per file column.
	inTypes  []arrow.DataType
	keyCols  []int
	keyTypes []metadata.DataType
	minKey   []byte
	lastKey  []byte
	nanCols  map[int]bool
	// emptyCols are the string and binary columns written an empty value.
	emptyCols map[int]bool
	done      bool
}

// countingWriter is the Parquet writer's sink.
type countingWriter struct {
	w WritableFile
	n int64
	// err is the first write error. The Parquet writer is not told: on
	// an error it stops closing its column writers and never releases
	// their buffers, so the sink drops later bytes instead and the
	// FileWriter reports err once the Parquet writer has finished (the
	// file is removed then).
	err error
}

// Write counts; the sink deliberately has no Close, so that closing the
// Parquet writer leaves syncing and closing the file to FileWriter.
func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return len(p), nil
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return len(p), nil
}

// NewFileWriter starts a new data file for the given bucket of a table
// (partitionName "" and partitionValues nil without partitions), named
// <table id>/data/<partition name or "-">/b<bucket>/<snapshot id>-<n>.parquet
// with the first free n.
func (l *Lake) NewFileWriter(table *metadata.TableInfo, partitionName string, partitionValues []string, bucket int32, snapshotID int64) (*FileWriter, error) {
	return l.newFileWriter(table, partitionName, partitionValues, bucket, snapshotID, false)
}

// NewUndoFileWriter starts a new undo file (see Manifest.Undo) for the
// given bucket of a primary-key table, named
// <snapshot id>-undo-<n>.parquet beside the bucket's data files. Its rows
// are written as a data file's are, sorted by key, with UndoSameColumn
// after the system columns (UndoSchema); a row whose __offset is
// UndoAbsent marks a key the bucket did not hold before the round.
func (l *Lake) NewUndoFileWriter(table *metadata.TableInfo, partitionName string, partitionValues []string, bucket int32, snapshotID int64) (*FileWriter, error) {
	if !table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: lake: undo file for %s, which has no primary key", metadata.ErrUnsupported, table.Path)
	}
	return l.newFileWriter(table, partitionName, partitionValues, bucket, snapshotID, true)
}

func (l *Lake) newFileWriter(table *metadata.TableInfo, partitionName string, partitionValues []string, bucket int32, snapshotID int64, undo bool) (*FileWriter, error) {
	if err := l.checkOpen(); err != nil {
		return nil, err
	}
	switch {
	case snapshotID < 1:
		return nil, fmt.Errorf("%w: lake: snapshot id %d must be at least 1", metadata.ErrInvalidValue, snapshotID)
	case bucket < 0:
		return nil, fmt.Errorf("%w: lake: bucket %d is negative", metadata.ErrInvalidValue, bucket)
	case table.IsPartitioned() != (partitionName != ""):
		return nil, fmt.Errorf("%w: lake: partition %q does not fit table %s", metadata.ErrInvalidValue, partitionName, table.Path)
	// "-", a valid Fluss partition value, may name a partition's
	// directory: a partitioned table has no directory of no partition.
	case partitionName != "" && (!validRelPath(partitionName) || strings.Contains(partitionName, "/")):
		return nil, fmt.Errorf("%w: lake: partition name %q cannot name a directory", metadata.ErrInvalidValue, partitionName)
	case len(partitionValues) != len(table.PartitionKeys):
		return nil, fmt.Errorf("%w: lake: %d partition values for %d partition keys of %s", metadata.ErrInvalidValue, len(partitionValues), len(table.PartitionKeys), table.Path)
	}
	cols := fileColumns(table)
	if undo {
		cols = undoColumns(table)
	}
	schema := fileSchemaOf(cols)
	w := &FileWriter{lake: l, table: table, schema: schema, nanCols: map[int]bool{}, emptyCols: map[int]bool{}}
	for _, c := range cols {
		w.inTypes = append(w.inTypes, c.Type.ArrowType())
	}
	if table.HasPrimaryKey() {
		w.keyCols = table.PhysicalKeyIndexes()
		for _, c := range w.keyCols {
			w.keyTypes = append(w.keyTypes, table.Schema.Columns[c].Type)
		}
	}

	dir := bucketDir(table.TableID, partitionName, bucket)
	if err := l.fs.MkdirAll(l.abs(dir)); err != nil {
		return nil, fmt.Errorf("lake: create %s: %w", dir, err)
	}
	name := dataFileName
	seqKey := dir + "@" + strconv.FormatInt(snapshotID, 10)
	if undo {
		name = undoFileName
		seqKey += "u"
	}
	l.mu.Lock()
	n := l.mu.fileSeq[seqKey]
	l.mu.Unlock()
	var rel string
	for {
		rel = path.Join(dir, name(snapshotID, n))
		f, err := l.fs.Create(l.abs(rel))
		if err == nil {
			w.f = f
			break
		}
		if !isExist(err) {
			return nil, fmt.Errorf("lake: create %s: %w", rel, err)
		}
		// A file of an earlier attempt (a crashed or aborted round) keeps
		// its name; it is garbage no manifest lists.
		n++
	}
	l.mu.Lock()
	l.mu.fileSeq[seqKey] = max(l.mu.fileSeq[seqKey], n+1)
	l.mu.Unlock()

	w.name = l.abs(rel)
	w.file = metadata.LakeFile{Path: rel, PartitionName: partitionName, PartitionValues: append([]string(nil), partitionValues...), Bucket: bucket}
	w.sink = &countingWriter{w: w.f}
	popts := []parquet.WriterProperty{
		parquet.WithAllocator(l.opts.Allocator),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(int64(l.opts.RowGroupRows)),
		// A column whose dictionary passes 64 KiB (nearly unique values)
		// falls back to plain pages: decoding a large dictionary costs
		// readers far more than the bytes it saves. Low-cardinality
		// columns keep their dictionaries.
		parquet.WithDictionaryPageSizeLimit(64 * 1024),
		parquet.WithCreatedBy("fluss lake"),
	}
	props := parquet.NewWriterProperties(append(popts, columnEncodings(table)...)...)
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(l.opts.Allocator))
	pw, err := pqarrow.NewFileWriter(schema, w.sink, props, arrowProps)
	if err != nil {
		w.f.Close()
		l.fs.Remove(w.name)
		return nil, fmt.Errorf("lake: start %s: %w", rel, err)
	}
	w.pw = pw
	for k, v := range map[string]string{
		kvTableID:    strconv.FormatInt(table.TableID, 10),
		kvSnapshotID: strconv.FormatInt(snapshotID, 10),
		kvBucket:     strconv.Itoa(int(bucket)),
		kvPartition:  partitionName,
		kvSchemaID:   strconv.FormatInt(int64(table.SchemaID), 10),
	} {
		if err := pw.AppendKeyValueMetadata(k, v); err != nil {
			w.Abort()
			return nil, fmt.Errorf("lake: start %s: %w", rel, err)
		}
	}
	return w, nil
}

// Path is the file's path relative to the lake root.
func (w *FileWriter) Path() string { return w.file.Path }

// Rows is the number of rows written so far.
func (w *FileWriter) Rows() int64 { return w.file.RowCount }

// Full reports whether the file reached Options.MaxRowsPerFile rows; the
// caller then closes it and continues in a new file.
func (w *FileWriter) Full() bool { return w.file.RowCount >= int64(w.lake.opts.MaxRowsPerFile) }

// Write appends rec: the table's columns in schema order, then __bucket
// INT, __offset BIGINT and __timestamp TIMESTAMP_LTZ(3), with the Arrow
// types metadata.DataType.ArrowType gives. rec is not retained.
func (w *FileWriter) Write(rec arrow.RecordBatch) (err error) {
	if w.done {
		return fmt.Errorf("lake: write to %s after close", w.file.Path)
	}
	if int(rec.NumCols()) != len(w.inTypes) {
		return fmt.Errorf("%w: lake: a batch of %d columns for %s, which has %d with the system columns",
			metadata.ErrInvalidValue, rec.NumCols(), w.file.Path, len(w.inTypes))
	}
	cols := make([]arrow.Array, len(w.inTypes))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, want := range w.inTypes {
		got := rec.Column(i).DataType()
		if err := checkLayout("column "+w.schema.Field(i).Name, got, want); err != nil {
			return fmt.Errorf("%w: lake: %s", metadata.ErrInvalidValue, err)
		}
		cols[i] = retype(rec.Column(i), w.schema.Field(i).Type)
	}
	// The last guard before Parquet, which every engine reads STRING of as
	// UTF-8: the write paths refuse invalid text, so none may reach here.
	for i, c := range w.table.Schema.Columns {
		if r, err := metadata.CheckUTF8(rec.Column(i), c.Type); err != nil {
			return fmt.Errorf("lake: %s row %d, column %s: %w", w.file.Path, w.file.RowCount+int64(r)+1, c.Name, err)
		}
	}
	for i, c := range cols[:len(w.table.Schema.Columns)] {
		if !w.nanCols[i] && hasNaN(c) {
			w.nanCols[i] = true
		}
		if !w.emptyCols[i] && hasEmpty(c) {
			w.emptyCols[i] = true
		}
	}
	if w.keyCols != nil {
		if err := w.checkKeys(rec); err != nil {
			return err
		}
	}
	out := array.NewRecordBatch(w.schema, cols, rec.NumRows())
	defer out.Release()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lake: write %s: %v", w.file.Path, r)
		}
	}()
	if err := w.pw.WriteBuffered(out); err != nil {
		return fmt.Errorf("lake: write %s: %w", w.file.Path, err)
	}
	if err := w.sink.err; err != nil {
		return fmt.Errorf("lake: write %s: %w", w.file.Path, err)
	}
	w.file.RowCount += rec.NumRows()
	return nil
}

// columnList renders the set columns of n as kvNaNColumns does.
func columnList(set map[int]bool, n int) string {
	var idx []string
	for i := range n {
		if set[i] {
			idx = append(idx, strconv.Itoa(i))
		}
	}
	return strings.Join(idx, ",")
}

// hasEmpty reports whether a string or binary array holds an empty,
// non-null value.
func hasEmpty(a arrow.Array) bool {
	type lengths interface {
		ValueLen(i int) int
	}
	l, ok := a.(lengths)
	if !ok {
		return false
	}
	for i := range a.Len() {
		if a.IsValid(i) && l.ValueLen(i) == 0 {
			return true
		}
	}
	return false
}

func hasNaN(a arrow.Array) bool {
	switch a := a.(type) {
	case *array.Float32:
		for i, v := range a.Float32Values() {
			if v != v && a.IsValid(i) {
				return true
			}
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			if math.IsNaN(v) && a.IsValid(i) {
				return true
			}
		}
	}
	return false
}

// checkKeys verifies that rec continues the file's strictly ascending key
// order; a lake file of a primary-key table is read by a merge that relies
// on it.
func (w *FileWriter) checkKeys(rec arrow.RecordBatch) error {
	vals := make([]any, len(w.keyCols))
	for row := 0; row < int(rec.NumRows()); row++ {
		for i, c := range w.keyCols {
			vals[i] = metadata.ValueAt(rec.Column(c), w.keyTypes[i], row)
		}
		key, err := metadata.EncodeOrderedKey(w.keyTypes, vals)
		if err != nil {
			return fmt.Errorf("lake: %s row %d: %w", w.file.Path, w.file.RowCount+int64(row), err)
		}
		if w.lastKey != nil && bytes.Compare(key, w.lastKey) <= 0 {
			return fmt.Errorf("%w: lake: rows of %s are not in ascending key order at row %d",
				metadata.ErrInvalidValue, w.file.Path, w.file.RowCount+int64(row))
		}
		if w.minKey == nil {
			w.minKey = key
		}
		w.lastKey = key
	}
	return nil
}

// Close finishes the file (footer, sync) and returns its description for
// the manifest. The file is not part of any snapshot until a manifest
// listing it is committed.
func (w *FileWriter) Close() (lf metadata.LakeFile, err error) {
	if w.done {
		return metadata.LakeFile{}, fmt.Errorf("lake: %s closed twice", w.file.Path)
	}
	w.done = true
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lake: close %s: %v", w.file.Path, r)
		}
		if err != nil {
			w.f.Close()
			w.lake.fs.Remove(w.name)
		}
	}()
	if len(w.nanCols) > 0 {
		if err := w.pw.AppendKeyValueMetadata(kvNaNColumns, columnList(w.nanCols, len(w.table.Schema.Columns))); err != nil {
			return metadata.LakeFile{}, fmt.Errorf("lake: close %s: %w", w.file.Path, err)
		}
	}
	// Always written, also empty: its presence says the list is known.
	if err := w.pw.AppendKeyValueMetadata(kvEmptyColumns, columnList(w.emptyCols, len(w.table.Schema.Columns))); err != nil {
		return metadata.LakeFile{}, fmt.Errorf("lake: close %s: %w", w.file.Path, err)
	}
	if w.minKey != nil {
		if err := w.pw.AppendKeyValueMetadata(kvKeyMin, hex.EncodeToString(w.minKey)); err != nil {
			return metadata.LakeFile{}, fmt.Errorf("lake: close %s: %w", w.file.Path, err)
		}
		if err := w.pw.AppendKeyValueMetadata(kvKeyMax, hex.EncodeToString(w.lastKey)); err != nil {
			return metadata.LakeFile{}, fmt.Errorf("lake: close %s: %w", w.file.Path, err)
		}
	}
	if err := w.pw.Close(); err != nil {
		return metadata.LakeFile{}, fmt.Errorf("lake: close %s: %w", w.file.Path, err)
	}
	if err := w.sink.err; err != nil {
		return metadata.LakeFile{}, fmt.Errorf("lake: write %s: %w", w.file.Path, err)
	}
	if w.lake.opts.Sync {
		if err := w.f.Sync(); err != nil {
			return metadata.LakeFile{}, fmt.Errorf("lake: sync %s: %w", w.file.Path, err)
		}
	}
	if err := w.f.Close(); err != nil {
		return metadata.LakeFile{}, fmt.Errorf("lake: close %s: %w", w.file.Path, err)
	}
	if w.lake.opts.Sync {
		if err := w.lake.fs.SyncDir(filepath.Dir(w.name)); err != nil {
			return metadata.LakeFile{}, fmt.Errorf("lake: sync directory of %s: %w", w.file.Path, err)
		}
	}
	if w.file.FooterCRC32C, err = w.lake.fileFooterChecksum(w.name); err != nil {
		return metadata.LakeFile{}, fmt.Errorf("lake: checksum footer of %s: %w", w.file.Path, err)
	}
	w.file.SizeBytes = w.sink.n
	return w.file, nil
}

// Abort drops the file. Calling it after Close or a second time does
// nothing.
func (w *FileWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	func() {
		defer func() { recover() }()
		w.pw.Close()
	}()
	w.f.Close()
	if err := w.lake.fs.Remove(w.name); err != nil && !isNotExist(err) {
		return fmt.Errorf("lake: abort %s: %w", w.file.Path, err)
	}
	return nil
}

// columnEncodings picks encodings where the defaults (a dictionary, else
// plain values) waste space: the first column of a primary-key table's
// key when it is an integer, which ascends in every file, and __offset,
// which ascends in a log table's files and mostly in a key table's, are
// written as deltas (DELTA_BINARY_PACKED) without a dictionary. For a key
// table that halves the files, and its undo files more.
func columnEncodings(table *metadata.TableInfo) []parquet.WriterProperty {
	var out []parquet.WriterProperty
	delta := func(name string) {
		out = append(out, parquet.WithDictionaryFor(name, false), parquet.WithEncodingFor(name, parquet.Encodings.DeltaBinaryPacked))
	}
	if key := table.PhysicalKeyIndexes(); len(key) > 0 {
		switch col := table.Schema.Columns[key[0]]; col.Type.Root {
		case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt, metadata.Date:
			delta(col.Name)
		}
	}
	delta(metadata.LakeOffsetColumn)
	return out
}
