// Package lakeunion reads planned splits into Arrow record batches: log
// splits from a bucket's log, and (in later steps) KV snapshots merged with
// their log tail, lake files, and lake files merged with their log tail.
//
// Rules every reader keeps:
//   - columns are projected inside the decode: a column not asked for is
//     never materialised;
//   - a split never yields a row outside its [start, stop) offsets;
//   - a record batch is valid until the next call to Next or Close;
//   - readers are not safe for concurrent use; the Scan that owns them
//     closes them.
package lakeunion

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage"
)

// Options say what a split reader reads.
type Options struct {
	// Projection lists the table columns to read, in output order.
	Projection []int
	// Filter is the pushed data predicate, used only to skip whole batches
	// by their statistics; rows are never filtered by it.
	Filter predicate.P
}

// OpenSplit opens the reader of one split. The caller must Release it.
func OpenSplit(ctx context.Context, eng *storage.Engine, table *metadata.TableInfo, s planner.Split, opts Options) (array.RecordReader, error) {
	switch sp := s.(type) {
	case *planner.LogSplit:
		lr, err := eng.ReadLog(ctx, sp.TableBucket, sp.StartOffset, sp.StopOffset,
			storage.ReadOptions{Projection: opts.Projection, Filter: opts.Filter})
		if err != nil {
			return nil, err
		}
		r := &logSplitReader{lr: lr, schema: projectedSchema(table, opts.Projection)}
		r.refs.Store(1)
		return r, nil
	}
	return nil, fmt.Errorf("split kind %q: %w", s.Kind(), metadata.ErrUnsupported)
}

func projectedSchema(table *metadata.TableInfo, proj []int) *arrow.Schema {
	cols := make([]metadata.Column, len(proj))
	for i, c := range proj {
		cols[i] = table.Schema.Columns[c]
	}
	return metadata.ArrowSchema(cols)
}

// logSplitReader adapts a storage.LogReader to array.RecordReader.
type logSplitReader struct {
	refs   atomic.Int64
	lr     *storage.LogReader
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
}

func (r *logSplitReader) Retain() { r.refs.Add(1) }

func (r *logSplitReader) Release() {
	if r.refs.Add(-1) == 0 {
		if err := r.lr.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
}

func (r *logSplitReader) Schema() *arrow.Schema { return r.schema }

func (r *logSplitReader) Next() bool {
	r.cur = nil
	if r.err != nil {
		return false
	}
	if !r.lr.Next() {
		r.err = r.lr.Err()
		return false
	}
	r.cur = r.lr.Batch().Record
	return true
}

func (r *logSplitReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for array.RecordReader.
func (r *logSplitReader) Record() arrow.RecordBatch { return r.cur }

func (r *logSplitReader) Err() error { return r.err }

// Scan reads a list of splits one after another. It satisfies exec.Source.
// Splits are opened lazily: a split is not opened until the one before it
// is exhausted, so a consumer that stops early (LIMIT) opens no more.
type Scan struct {
	eng    *storage.Engine
	table  *metadata.TableInfo
	splits []planner.Split
	opts   Options
	next   int
	cur    array.RecordReader
	closed bool
}

// NewScan returns a Scan over splits. It must be closed.
func NewScan(eng *storage.Engine, table *metadata.TableInfo, splits []planner.Split, opts Options) *Scan {
	return &Scan{eng: eng, table: table, splits: splits, opts: opts}
}

// Next returns the next non-empty record batch, or io.EOF.
func (s *Scan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.cur == nil {
			if s.closed || s.next >= len(s.splits) {
				return nil, io.EOF
			}
			r, err := OpenSplit(ctx, s.eng, s.table, s.splits[s.next], s.opts)
			if err != nil {
				return nil, err
			}
			s.next++
			s.cur = r
		}
		if s.cur.Next() {
			rec := s.cur.RecordBatch()
			if rec.NumRows() == 0 {
				continue
			}
			return rec, nil
		}
		err := s.cur.Err()
		s.cur.Release()
		s.cur = nil
		if err != nil {
			return nil, err
		}
	}
}

// Close releases the open split reader. Idempotent.
func (s *Scan) Close() error {
	s.closed = true
	if s.cur != nil {
		err := s.cur.Err()
		s.cur.Release()
		s.cur = nil
		return err
	}
	return nil
}
