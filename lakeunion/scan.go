package lakeunion

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage"
)

// DefaultBatchSize is the number of rows in a batch the merge builds.
const DefaultBatchSize = 8192

// Options say what a split reader reads.
type Options struct {
	// Projection lists the columns to read, in output order: table column
	// indexes, or for Changelog the indexes of t$changelog (the system
	// columns, then the table's). Nil reads every column.
	Projection []int
	// Filter is the pushed data predicate over table columns, used only
	// to skip whole batches by their statistics; rows are never filtered
	// by it. A kv+log split applies it to its snapshot only: skipping a
	// tail batch could drop the change that supersedes a row. Changelog
	// reads ignore it.
	Filter predicate.P
	// Changelog reads log splits as the virtual table t$changelog: each
	// change as a row, with its change type, offset and commit time
	// before the table's columns.
	Changelog bool
	// Allocator backs the batches readers build; nil is
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// BatchSize is the most rows in a batch the merge builds; 0 is
	// DefaultBatchSize.
	BatchSize int
}

// withDefaults fills the zero fields and validates the projection.
func (o Options) withDefaults(table *metadata.TableInfo) (Options, error) {
	width := len(table.Schema.Columns)
	if o.Changelog {
		width += planner.ChangelogSystemColumns
	}
	if o.Projection == nil {
		o.Projection = make([]int, width)
		for i := range o.Projection {
			o.Projection[i] = i
		}
	}
	for _, c := range o.Projection {
		if c < 0 || c >= width {
			return o, fmt.Errorf("%w: projection of %s reads column %d of %d", metadata.ErrInvalidValue, table.Path, c, width)
		}
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	return o, nil
}

// OpenSplit opens the reader of one split over the engine. The caller
// must Release it. See OpenSplitFrom.
func OpenSplit(ctx context.Context, eng *storage.Engine, table *metadata.TableInfo, s planner.Split, opts Options) (array.RecordReader, error) {
	return OpenSplitFrom(ctx, EngineSource(eng), table, s, opts)
}

// OpenSplitFrom opens the reader of one split, dispatched on its type: a
// *planner.LogSplit reads the log range (as change rows when
// opts.Changelog), a *planner.KvLogSplit merges the KV snapshot with its
// folded tail. The reader's batches have the projected columns only. The
// caller must Release it; ctx is watched while it reads.
func OpenSplitFrom(ctx context.Context, src Source, table *metadata.TableInfo, s planner.Split, opts Options) (array.RecordReader, error) {
	opts, err := opts.withDefaults(table)
	if err != nil {
		return nil, err
	}
	switch sp := s.(type) {
	case *planner.LogSplit:
		if opts.Changelog {
			return openChangelog(ctx, src, table, sp, opts)
		}
		lr, err := src.ReadLog(ctx, sp.TableBucket, sp.StartOffset, sp.StopOffset,
			storage.ReadOptions{Projection: opts.Projection, Filter: opts.Filter})
		if err != nil {
			return nil, err
		}
		return newLogSplitReader(lr, projectedSchema(table, opts.Projection)), nil
	case *planner.KvLogSplit:
		if opts.Changelog {
			return nil, fmt.Errorf("%w: %s read as a changelog", metadata.ErrUnsupported, sp)
		}
		return openKvLog(ctx, src, table, sp, opts)
	}
	return nil, fmt.Errorf("split kind %q: %w", s.Kind(), metadata.ErrUnsupported)
}

func projectedSchema(table *metadata.TableInfo, proj []int) *arrow.Schema {
	return metadata.ArrowSchema(projectedColumns(table.Schema.Columns, proj))
}

func projectedColumns(cols []metadata.Column, proj []int) []metadata.Column {
	out := make([]metadata.Column, len(proj))
	for i, c := range proj {
		out[i] = cols[c]
	}
	return out
}

// refCount implements Retain and Release for a reader; the last Release
// calls release.
type refCount struct {
	refs    atomic.Int64
	release func()
}

func (r *refCount) init(release func()) { r.refs.Store(1); r.release = release }

// Retain adds a reference to the reader.
func (r *refCount) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one closes the reader.
func (r *refCount) Release() {
	if r.refs.Add(-1) == 0 {
		r.release()
	}
}

// logSplitReader adapts a LogBatchReader to array.RecordReader.
type logSplitReader struct {
	refCount
	lr     LogBatchReader
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
}

func newLogSplitReader(lr LogBatchReader, schema *arrow.Schema) *logSplitReader {
	r := &logSplitReader{lr: lr, schema: schema}
	r.init(func() {
		r.cur = nil
		if err := r.lr.Close(); err != nil && r.err == nil {
			r.err = err
		}
	})
	return r
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

// Scan reads a list of splits one after another, in the order given. It
// satisfies exec.Source. Splits are opened lazily: a split is not opened
// until the one before it is exhausted, so a consumer that stops early
// (LIMIT) opens no more. Not safe for concurrent use; must be closed.
type Scan struct {
	src    Source
	table  *metadata.TableInfo
	splits []planner.Split
	opts   Options
	next   int
	cur    array.RecordReader
	closed bool
}

// NewScan returns a Scan of splits over the engine. It must be closed.
// See NewSourceScan.
func NewScan(eng *storage.Engine, table *metadata.TableInfo, splits []planner.Split, opts Options) *Scan {
	return NewSourceScan(EngineSource(eng), table, splits, opts)
}

// NewSourceScan returns a Scan of splits read from src. table is the
// table the splits were planned on (the base table t for a changelog
// scan, with opts.Changelog set). It must be closed.
func NewSourceScan(src Source, table *metadata.TableInfo, splits []planner.Split, opts Options) *Scan {
	return &Scan{src: src, table: table, splits: slices.Clone(splits), opts: opts}
}

// Next returns the next non-empty record batch, or io.EOF. The batch is
// valid until the next call to Next or Close.
func (s *Scan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.cur == nil {
			if s.closed || s.next >= len(s.splits) {
				return nil, io.EOF
			}
			r, err := OpenSplitFrom(ctx, s.src, s.table, s.splits[s.next], s.opts)
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
		// Err after Release: closing the reader may fail too.
		s.cur.Release()
		err := s.cur.Err()
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
		s.cur.Release()
		err := s.cur.Err()
		s.cur = nil
		return err
	}
	return nil
}
