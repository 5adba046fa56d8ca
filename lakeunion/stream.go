package lakeunion

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage"
)

// ErrSnapshotPhase is returned by Stream.Offsets while the stream still
// reads the state it started from: offsets taken then would resume after
// that state and lose the rest of it.
var ErrSnapshotPhase = errors.New("the subscription is still reading the table's state; its offsets resume only once it reads the log")

// StreamOptions say what a Stream reads.
type StreamOptions struct {
	// Projection, Filter, Changelog and Allocator are as in Options.
	Options
	// PartitionFilter keeps the partitions to read, over table (not
	// t$changelog) column indexes; nil keeps every one.
	PartitionFilter predicate.P
	// Snapshot are the splits of the state a `full` start reads first,
	// planned at the cut whose high watermarks Start holds.
	Snapshot []planner.Split
	// Start is the first log offset of each bucket; buckets it does not
	// name are read from their log start (storage.SubscribeOptions).
	Start map[metadata.TableBucket]int64
	// Bounded and Stop make the stream end (io.EOF) once every bucket
	// is read up to its stop, as storage.SubscribeOptions says; a
	// bounded stream has no snapshot splits.
	Bounded bool
	Stop    map[metadata.TableBucket]int64
	// StateRead, when set, runs once the snapshot splits are read (or at
	// the first Next without any), before the stream reads the log: what
	// pins their state can let go then.
	StateRead func()
	// Dropped, when set, reports whether a partition of the table was
	// dropped. A state split of one that fails with ErrNotFound ends
	// there, with the rows it returned, and its buckets leave the stream,
	// as the log read of a dropped partition's bucket does.
	Dropped func(partitionID int64) bool
}

// Stream is a subscription read as a scan's output: the records have the
// columns of the projection (of t$changelog when Changelog), first of the
// snapshot splits, one split after the other, then of the log after the
// start offsets, waiting for commits. It is the same readers as a batch
// scan's (OpenSplitFrom, storage.LogReader), without a stop. It is not
// safe for concurrent use and must be closed; it starts no goroutine.
type Stream struct {
	src   Source
	table *metadata.TableInfo
	opts  StreamOptions
	sub   *storage.Subscription
	shape logShape // for Changelog

	snapshot []planner.Split // the splits left to open
	split    planner.Split   // the split being read
	reader   array.RecordReader

	cur  arrow.RecordBatch // built here (changelog); nil when borrowed
	meta StreamMeta
	err  error
}

// StreamMeta describes the rows of a Stream's current record.
type StreamMeta struct {
	TableBucket metadata.TableBucket
	Partition   string
	// Snapshot marks rows of the state a `full` start reads first: they
	// are inserts (+I, or +A for a log table) with no log offset.
	Snapshot bool
	// BaseOffset is the log offset of the first row; row i has
	// BaseOffset+i. -1 for snapshot rows.
	BaseOffset int64
	// ChangeTypes has one per row (storage.LogBatch's); nil for
	// append-only rows.
	ChangeTypes []metadata.ChangeType
	// CommitTimestamp is when the rows were committed, in milliseconds;
	// 0 for snapshot rows.
	CommitTimestamp int64
	// RowOffsets, when set, is the log offset of each row, which are then
	// not one per offset from BaseOffset: a t$binlog row is an update's
	// two changes, at its -U's offset (ChangeTypes then says +I, +U or
	// -D per row).
	RowOffsets []int64
}

// OpenStream opens a stream of table over eng, whose snapshot splits src
// reads.
func OpenStream(ctx context.Context, eng *storage.Engine, src Source, table *metadata.TableInfo, opts StreamOptions) (*Stream, error) {
	var err error
	if opts.Options, err = opts.Options.withDefaults(table); err != nil {
		return nil, err
	}
	if opts.Changelog && len(opts.Snapshot) > 0 {
		return nil, fmt.Errorf("%w: t$changelog read with a snapshot", metadata.ErrUnsupported)
	}
	if opts.Bounded && len(opts.Snapshot) > 0 {
		return nil, fmt.Errorf("%w: a bounded stream of %s with a snapshot to read first", metadata.ErrUnsupported, table.Path)
	}
	read := storage.ReadOptions{Projection: opts.Projection, Filter: opts.Filter}
	s := &Stream{src: src, table: table, opts: opts, snapshot: opts.Snapshot}
	if opts.Changelog {
		s.shape = newLogShape(table, opts.Options)
		// The filter's statistics are over table columns, which the
		// changelog's own columns shift: it is not applied, as in batch
		// reads of t$changelog.
		read = storage.ReadOptions{Projection: s.shape.readProjection()}
	}
	if s.sub, err = eng.Subscribe(ctx, table.Path, storage.SubscribeOptions{ReadOptions: read, PartitionFilter: opts.PartitionFilter, Start: opts.Start,
		Bounded: opts.Bounded, Stop: opts.Stop}); err != nil {
		return nil, err
	}
	return s, nil
}

// Next returns the next record, waiting for one; its error is ctx.Err()
// once ctx ends, io.EOF once a bounded stream read every bucket to its
// stop. The record is valid until the following Next or Close.
func (s *Stream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s.release()
	if s.err != nil {
		return nil, s.err
	}
	for s.reader != nil || len(s.snapshot) > 0 {
		if s.reader == nil {
			s.split, s.snapshot = s.snapshot[0], s.snapshot[1:]
			r, err := OpenSplitFrom(ctx, s.src, s.table, s.split, s.opts.Options)
			if s.droppedUnder(err) {
				continue
			}
			if err != nil {
				return nil, s.fail(err)
			}
			s.reader = r
		}
		if s.reader.Next() {
			s.meta = StreamMeta{TableBucket: s.split.Bucket(), Partition: s.split.PartitionName(), Snapshot: true, BaseOffset: -1}
			return s.reader.RecordBatch(), nil
		}
		err := s.reader.Err()
		s.reader.Release()
		s.reader = nil
		if err != nil && !s.droppedUnder(err) {
			return nil, s.fail(err)
		}
	}
	if f := s.opts.StateRead; f != nil {
		s.opts.StateRead = nil
		f()
	}
	if !s.sub.Next(ctx) {
		err := s.sub.Err()
		if err == nil && s.sub.Done() {
			return nil, io.EOF
		}
		if err == nil {
			err = fmt.Errorf("subscription of %s: %w", s.table.Path, metadata.ErrClosed)
		}
		return nil, s.fail(err)
	}
	b := s.sub.Batch()
	s.meta = StreamMeta{TableBucket: b.TableBucket, Partition: b.Partition, BaseOffset: b.BaseOffset,
		ChangeTypes: b.ChangeTypes, CommitTimestamp: b.CommitTimestamp}
	if s.shape == nil {
		return b.Record, nil
	}
	rec, err := s.shape.build(b.TableBucket, b.LogBatch)
	if err != nil {
		return nil, s.fail(err)
	}
	if bl, ok := s.shape.(*binlogShape); ok {
		s.meta.ChangeTypes, s.meta.RowOffsets = bl.kinds, bl.offsets
	}
	s.cur = rec
	return rec, nil
}

// droppedUnder reports whether err, from reading the current state
// split, says its partition was dropped meanwhile (see
// StreamOptions.Dropped).
func (s *Stream) droppedUnder(err error) bool {
	if err == nil || s.opts.Dropped == nil || !errors.Is(err, metadata.ErrNotFound) {
		return false
	}
	tb := s.split.Bucket()
	return tb.PartitionID != metadata.NonPartitioned && s.opts.Dropped(tb.PartitionID)
}

func (s *Stream) fail(err error) error {
	s.err = err
	return err
}

func (s *Stream) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	s.meta = StreamMeta{}
}

// Meta describes the current record.
func (s *Stream) Meta() StreamMeta { return s.meta }

// Table is the table the stream reads.
func (s *Stream) Table() *metadata.TableInfo { return s.table }

// Offsets returns the next log offset of every bucket the stream reads:
// a stream started at them reads exactly what this one has not returned.
// ErrSnapshotPhase while snapshot splits are left.
func (s *Stream) Offsets() (map[metadata.TableBucket]int64, error) {
	if s.reader != nil || len(s.snapshot) > 0 {
		return nil, ErrSnapshotPhase
	}
	return s.sub.Offsets(), nil
}

// Partition names the partition of a bucket the stream reads.
func (s *Stream) Partition(tb metadata.TableBucket) (string, bool) { return s.sub.Partition(tb) }

// Wakeups counts the commits that woke the stream while it waited.
func (s *Stream) Wakeups() int64 { return s.sub.Wakeups() }

// Close releases what the stream holds. Idempotent.
func (s *Stream) Close() error {
	s.release()
	if s.reader != nil {
		s.reader.Release()
		s.reader = nil
	}
	s.snapshot = nil
	return s.sub.Close()
}
