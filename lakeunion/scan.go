package lakeunion

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
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
	// Filter is the pushed data predicate over table columns, used to
	// skip whole batches, files and row groups by their statistics. A
	// kv+log split applies it to its snapshot only, and a lake+log split
	// to its lake files only: skipping a tail batch could drop the change
	// that supersedes a row. A lake+log split also drops the lake rows it
	// does not keep before the merge; no other reader filters rows, so
	// the caller still filters what it gets. Changelog reads ignore it.
	Filter predicate.P
	// Changelog reads log splits as the virtual table t$changelog: each
	// change as a row, with its change type, offset and commit time
	// before the table's columns.
	Changelog bool
	// Binlog, with Changelog, reads log splits as the virtual table
	// t$binlog of a primary-key table instead: _change_type ('insert',
	// 'update', 'delete'), _log_offset, _commit_timestamp, then the
	// before and after images as ROW values; a -U and the +U after it
	// are one 'update' row, at the -U's offset and time. Projection
	// indexes are then t$binlog's.
	Binlog bool
	// Allocator backs the batches readers build; nil is
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// BatchSize is the most rows in a batch the merge builds; 0 is
	// DefaultBatchSize.
	BatchSize int
	// Threads bounds the splits a Scan reads at once: up to Threads
	// workers each read one split at a time. 0 (or less) is GOMAXPROCS.
	// With 1, or a single split, the scan reads in the caller's
	// goroutine, split after split in the order given. Split readers
	// ignore it.
	Threads int
	// Limit, when positive, is the most rows a Scan yields: once Limit
	// rows are produced no further split is opened and the open readers
	// stop. 0 or negative (-1 by convention) is no limit, so the zero
	// Options read everything; a LIMIT 0 is answered above the scan.
	// Only a caller that keeps every row the scan yields (no filter,
	// ORDER BY, aggregate or DISTINCT above it) may set it. Split
	// readers ignore it.
	Limit int64
}

// withDefaults fills the zero fields and validates the projection.
func (o Options) withDefaults(table *metadata.TableInfo) (Options, error) {
	width := len(table.Schema.Columns)
	if o.Changelog {
		width += planner.ChangelogSystemColumns
	}
	if o.Binlog {
		if !o.Changelog {
			return o, fmt.Errorf("%w: a binlog read of %s is a changelog read", metadata.ErrInvalidValue, table.Path)
		}
		width = numBinlogColumns
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

// OpenSplit opens the reader of one split over the engine, without a
// lake (lake splits fail with ErrUnsupported). The caller must Release
// it. See OpenSplitFrom.
func OpenSplit(ctx context.Context, eng *storage.Engine, table *metadata.TableInfo, s planner.Split, opts Options) (array.RecordReader, error) {
	return OpenSplitFrom(ctx, EngineSource(eng, nil), table, s, opts)
}

// OpenSplitFrom opens the reader of one split, dispatched on its type: a
// *planner.LogSplit reads the log range (as change rows when
// opts.Changelog), a *planner.KvLogSplit merges the KV snapshot with its
// folded tail, a *planner.LakeSplit reads its lake files as they are, a
// *planner.LakeLogSplit merges the bucket's key-sorted lake files with
// its folded tail. The reader's batches have the projected columns only.
// The caller must Release it; ctx is watched while it reads.
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
			return nil, fmt.Errorf("open %s of %s: %w", sp, table.Path, err)
		}
		return newStreamReader(ctx, logStream{lr}, projectedSchema(table, opts.Projection), "log batch", fmt.Sprintf("%s of %s", sp, table.Path)), nil
	case *planner.KvLogSplit:
		if opts.Changelog {
			return nil, fmt.Errorf("%w: %s read as a changelog", metadata.ErrUnsupported, sp)
		}
		return openKvLog(ctx, src, table, sp, opts)
	case *planner.LakeSplit:
		if opts.Changelog {
			return nil, fmt.Errorf("%w: %s read as a changelog", metadata.ErrUnsupported, sp)
		}
		return openLake(ctx, src, table, sp, opts)
	case *planner.LakeLogSplit:
		if opts.Changelog {
			return nil, fmt.Errorf("%w: %s read as a changelog", metadata.ErrUnsupported, sp)
		}
		return openLakeLog(ctx, src, table, sp, opts)
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

// readerState is what every split reader exposes to array.RecordReader:
// its schema, the current batch and the error that ended the read.
type readerState struct {
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
}

func (r *readerState) Schema() *arrow.Schema { return r.schema }

// RecordBatch returns the current batch; valid until the next Next or
// Release.
func (r *readerState) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for array.RecordReader.
func (r *readerState) Record() arrow.RecordBatch { return r.cur }

func (r *readerState) Err() error { return r.err }

// releaseCur releases the current batch of a reader that owns it.
func (r *readerState) releaseCur() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

// Retain adds a reference to the reader.
func (r *refCount) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one closes the reader.
func (r *refCount) Release() {
	if r.refs.Add(-1) == 0 {
		r.release()
	}
}

// recordStream is a stream of record batches: a lake read, or a log read
// through logStream. A Record is valid until the next Next or Close.
type recordStream interface {
	Next() bool
	Record() arrow.RecordBatch
	Err() error
	Close() error
}

// logStream presents a LogBatchReader as a recordStream.
type logStream struct{ LogBatchReader }

func (l logStream) Record() arrow.RecordBatch { return l.Batch().Record }

// streamReader adapts a recordStream whose batches already hold the
// projected columns to array.RecordReader. Each batch is checked against
// the schema (a lake file is bytes from disk), and ctx is watched between
// batches.
type streamReader struct {
	refCount
	readerState
	ctx context.Context
	in  recordStream // nil for an empty stream
	// batchWhat and what name the batches and the split in errors.
	batchWhat, what string
}

func newStreamReader(ctx context.Context, in recordStream, schema *arrow.Schema, batchWhat, what string) *streamReader {
	r := &streamReader{readerState: readerState{schema: schema}, ctx: ctx, in: in, batchWhat: batchWhat, what: what}
	r.init(func() {
		r.cur = nil
		if r.in == nil {
			return
		}
		if err := r.in.Close(); err != nil && r.err == nil {
			r.err = fmt.Errorf("close %s: %w", r.what, err)
		}
	})
	return r
}

func (r *streamReader) Next() bool {
	r.cur = nil
	if r.err != nil || r.in == nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return false
	}
	if !r.in.Next() {
		if err := r.in.Err(); err != nil {
			r.err = fmt.Errorf("read %s: %w", r.what, err)
		}
		return false
	}
	rec := r.in.Record()
	if err := checkColumns(rec, r.schema, r.batchWhat); err != nil {
		r.err = fmt.Errorf("read %s: %w", r.what, err)
		return false
	}
	r.cur = rec
	return true
}

// kvStream presents a KvBatchReader as a recordStream, dropping the keys.
type kvStream struct{ KvBatchReader }

func (k kvStream) Record() arrow.RecordBatch { return k.Batch().Record }

// openLake opens the reader of a lake split: its files projected, files
// and row groups skipped by the pushed predicate's statistics, rows never
// filtered. A log table's files are read as they are, file after file. A
// primary-key table's files hold the bucket's merged state, so nothing is
// merged with them; they are still read through the sorted reader, whose
// k-way merge keeps one row per key even where two files of the bucket
// overlap (the newer file's row wins), which a plain concatenation would
// not.
func openLake(ctx context.Context, src Source, table *metadata.TableInfo, sp *planner.LakeSplit, opts Options) (*streamReader, error) {
	what := fmt.Sprintf("%s of %s", sp, table.Path)
	schema := projectedSchema(table, opts.Projection)
	if len(sp.Files) == 0 {
		return newStreamReader(ctx, nil, schema, "lake batch", what), nil
	}
	ro := LakeReadOptions{Projection: opts.Projection, Filter: opts.Filter, Allocator: opts.Allocator}
	var in recordStream
	if table.HasPrimaryKey() {
		kr, err := src.ReadLakeSorted(ctx, table, sp.Files, ro)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		in = kvStream{kr}
	} else {
		lr, err := src.ReadLake(ctx, table, sp.Files, ro)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		in = lr
	}
	return newStreamReader(ctx, in, schema, "lake batch", what), nil
}

// Scan reads a list of splits; it satisfies exec.Source.
//
// A bounded pool of workers (Options.Threads) reads the splits: each
// worker takes the next split nobody has taken, opens it, and streams its
// batches to Next through a channel that holds at most one batch per
// worker, so a scan holds about two batches per worker (the one being
// sent, the one queued) plus the one Next returned, whatever the size of
// the table. Rows keep their order within a split; the order of rows
// across splits is not defined when more than one worker reads. With one
// worker (Threads = 1, or a single split) no goroutine is started: the
// scan reads in the caller's goroutine, split after split, in the order
// given.
//
// Splits are opened lazily either way: a split is opened only when a
// worker takes it, and none is taken once Options.Limit rows are produced,
// an error has occurred or the scan is closed.
//
// The workers run under the context of the first call to Next, so
// cancelling it stops them; every Next also returns ctx.Err() as soon as
// its own ctx is done, even while it waits for a batch. The first error —
// a reader's, the context's, or a panic in a reader, recovered into a
// *PanicError — stops every worker and is what Next returns from then on.
// Close cancels the workers, waits for every one of them to exit and
// releases every batch still queued: no goroutine outlives the scan. A
// Scan is not safe for concurrent use; it must be closed.
type Scan struct {
	src     Source
	table   *metadata.TableInfo
	splits  []planner.Split
	opts    Options
	workers int

	// held is the batch Next returned last when the scan holds a
	// reference to it (a worker's batch, a slice at the limit); the next
	// Next or Close releases it.
	held    arrow.RecordBatch
	yielded int64 // rows Next returned
	err     error // sticky: the error Next returned
	eof     bool
	closed  bool

	// One worker: the split reader open in the caller's goroutine.
	next   int
	cur    array.RecordReader
	curIdx int

	// Several workers: started by the first Next.
	pool *pool

	mu    sync.Mutex // guards stats, which workers update
	stats []SplitStats
}

// NewScan returns a Scan of splits over the engine, without a lake: a
// lake or lake+log split fails with ErrUnsupported. It must be closed. A
// scan that reads the lake is NewSourceScan(EngineSource(eng, lk), ...).
func NewScan(eng *storage.Engine, table *metadata.TableInfo, splits []planner.Split, opts Options) *Scan {
	return NewSourceScan(EngineSource(eng, nil), table, splits, opts)
}

// NewSourceScan returns a Scan of splits read from src. table is the
// table the splits were planned on (the base table t for a changelog
// scan, with opts.Changelog set). It must be closed.
func NewSourceScan(src Source, table *metadata.TableInfo, splits []planner.Split, opts Options) *Scan {
	workers := opts.Threads
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(splits)))
	s := &Scan{src: src, table: table, splits: slices.Clone(splits), opts: opts, workers: workers}
	s.stats = make([]SplitStats, len(splits))
	for i, sp := range splits {
		s.stats[i] = SplitStats{Split: sp, Kind: sp.Kind(), Bucket: sp.Bucket()}
	}
	return s
}

// Workers returns the number of workers the scan reads with: 1 means it
// reads in the caller's goroutine.
func (s *Scan) Workers() int { return s.workers }

// Stats returns what the scan read so far, per split, in the order of the
// splits given. The counts are final once the scan is closed (Close waits
// for every worker to record its split's).
func (s *Scan) Stats() []SplitStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stats)
}

// Next returns the next non-empty record batch, or io.EOF. The batch is
// valid until the next call to Next or Close.
func (s *Scan) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s.releaseHeld()
	if s.closed || s.eof {
		return nil, io.EOF
	}
	if s.err != nil {
		return nil, s.err
	}
	if err := ctx.Err(); err != nil {
		return nil, s.fail(err)
	}
	var (
		rec arrow.RecordBatch
		err error
	)
	if s.workers <= 1 {
		rec, err = s.nextSequential(ctx)
	} else {
		rec, err = s.nextParallel(ctx)
		s.held = rec
	}
	if err == io.EOF {
		s.eof = true
		return nil, io.EOF
	}
	if err != nil {
		return nil, s.fail(err)
	}
	n := rec.NumRows()
	if lim := s.opts.Limit; lim > 0 && s.yielded+n >= lim {
		if rest := lim - s.yielded; n > rest {
			cut := rec.NewSlice(0, rest)
			s.releaseHeld()
			s.held, rec, n = cut, cut, rest
		}
		// The limit is reached: the next Next ends the scan, and the
		// workers stop reading now. The sequential reader stays open,
		// as rec may be its batch, until Close.
		s.eof = true
		if s.pool != nil {
			s.pool.cancel(errLimitReached)
		}
	}
	s.yielded += n
	return rec, nil
}

// fail records err as the scan's error and stops the workers.
func (s *Scan) fail(err error) error {
	s.err = err
	if s.pool != nil {
		s.pool.cancel(err)
	}
	return err
}

func (s *Scan) releaseHeld() {
	if s.held != nil {
		s.held.Release()
		s.held = nil
	}
}

// nextSequential reads the splits one after another in the caller's
// goroutine, opening each once the one before it is exhausted.
func (s *Scan) nextSequential(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.cur == nil {
			if s.next >= len(s.splits) {
				return nil, io.EOF
			}
			i := s.next
			s.next++
			r, err := s.open(ctx, i)
			if err != nil {
				return nil, err
			}
			s.cur, s.curIdx = r, i
		}
		ok, err := s.advance(s.cur, s.curIdx)
		if ok {
			rec := s.cur.RecordBatch()
			if rec.NumRows() == 0 {
				continue
			}
			s.countRows(s.curIdx, rec.NumRows())
			return rec, nil
		}
		cerr := s.closeReader(s.cur, s.curIdx)
		s.cur = nil
		if err != nil {
			return nil, err
		}
		if cerr != nil {
			return nil, cerr
		}
	}
}

// Close stops the scan: it cancels the workers, waits for all of them to
// exit, and releases every batch and reader. Idempotent. It returns the
// error closing the open reader returned, unless Next already returned an
// error.
func (s *Scan) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.releaseHeld()
	var err error
	if s.cur != nil {
		err = s.closeReader(s.cur, s.curIdx)
		s.cur = nil
	}
	if p := s.pool; p != nil {
		p.cancel(errScanClosed)
		for rec := range p.out {
			rec.Release()
		}
		p.wg.Wait()
	}
	if s.err != nil {
		return nil
	}
	return err
}
