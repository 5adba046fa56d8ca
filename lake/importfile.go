package lake

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// OpenParquetFile opens any Parquet file, one the lake did not write (a
// file a user loads into a table), and returns a reader of all its rows
// as Arrow record batches, with the Arrow schema the file's own schema
// maps to (the stored Arrow schema when the writer recorded one), and the
// number of rows the footer declares, for progress reports.
//
// Ownership: the caller must Release the reader, which closes the file;
// a reader returned with an error is nil and nothing is left open. Each
// batch from RecordBatch is valid until the following Next or Release;
// Retain it to keep it. Batches are allocated from mem (the default
// allocator when nil). The reader is not safe for concurrent use.
//
// Bytes that are not a readable Parquet file are ErrCorrupt naming the
// file, from OpenParquetFile or, for a damaged page, from Err after Next
// returns false; the Parquet library's panics on such bytes are caught.
func OpenParquetFile(ctx context.Context, path string, mem memory.Allocator) (rr array.RecordReader, rows int64, err error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("lake: %w", err)
	}
	var pr *file.Reader
	defer func() {
		if r := recover(); r != nil {
			err = corrupt(path, r)
		}
		if err != nil {
			if pr != nil {
				pr.Close() // closes f
			} else {
				f.Close()
			}
			rr = nil
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("lake: %w", err)
	}
	if err := checkForeignFooter(f, st.Size()); err != nil {
		return nil, 0, corrupt(path, err)
	}
	// Page buffers come from Go's collected allocator for the reason
	// openParquet gives: a damaged page may leak them otherwise.
	props := parquet.NewReaderProperties(memory.NewGoAllocator())
	pr, err = file.NewParquetReader(f, file.WithReadProps(props))
	if err != nil {
		return nil, 0, corrupt(path, err)
	}
	// The stored schema is another writer's bytes: bounded before pqarrow
	// decodes it.
	if err := checkStoredSchema(pr.MetaData().KeyValueMetadata()); err != nil {
		return nil, 0, corrupt(path, err)
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, mem)
	if err != nil {
		return nil, 0, corrupt(path, err)
	}
	inner, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return nil, 0, corrupt(path, err)
	}
	r := &importReader{path: path, rr: inner, pr: pr}
	r.refs.Store(1)
	return r, pr.NumRows(), nil
}

// importReader is OpenParquetFile's reader: pqarrow's record reader plus
// the file it reads, closed with the last reference.
type importReader struct {
	path string
	rr   pqarrow.RecordReader
	pr   *file.Reader
	refs atomic.Int64
	err  error
	done bool
}

var _ array.RecordReader = (*importReader)(nil)

func (r *importReader) Retain() { r.refs.Add(1) }

func (r *importReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.rr.Release()
	r.pr.Close()
}

func (r *importReader) Schema() *arrow.Schema { return r.rr.Schema() }

func (r *importReader) RecordBatch() arrow.RecordBatch {
	if r.done {
		return nil
	}
	return r.rr.RecordBatch()
}

// Record is RecordBatch.
//
// Deprecated: use RecordBatch.
func (r *importReader) Record() arrow.RecordBatch { return r.RecordBatch() }

func (r *importReader) Next() (ok bool) {
	if r.done {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			r.err, r.done, ok = corrupt(r.path, p), true, false
		}
	}()
	if r.rr.Next() {
		return true
	}
	r.done = true
	if err := r.rr.Err(); err != nil {
		r.err = corrupt(r.path, err)
	}
	return false
}

func (r *importReader) Err() error { return r.err }
