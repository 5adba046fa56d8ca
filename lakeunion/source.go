package lakeunion

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
	"github.com/flusslite/fluss/storage"
)

// Source is what the split readers read from: a bucket's log, its KV
// snapshots, and lake files. EngineSource adapts *storage.Engine and
// *lake.Lake; tests use fakes. A Source must be safe for concurrent use:
// a Scan's workers open readers from several goroutines (each reader is
// then used by one goroutine only). A reader may implement
// Stats() storage.ReadStats (or lake.ReadStats) for Scan.Stats.
type Source interface {
	// ReadLog opens a reader over [start, stop) of a bucket's log.
	ReadLog(ctx context.Context, tb metadata.TableBucket, start, stop int64, opts storage.ReadOptions) (LogBatchReader, error)
	// ReadKvSnapshot opens a reader of one KV snapshot of a bucket, in
	// ascending key order.
	ReadKvSnapshot(ctx context.Context, tb metadata.TableBucket, snapshotID int64, opts storage.ReadOptions) (KvBatchReader, error)
	// ReadLake opens a plain read of lake files of table, file after file,
	// the rows as they are stored.
	ReadLake(ctx context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts LakeReadOptions) (LakeRecordReader, error)
	// ReadLakeSorted opens the read of one bucket's lake files of a
	// primary-key table in ascending key order, several files merged
	// k-way (never concatenated); each batch carries the encoded keys of
	// its rows.
	ReadLakeSorted(ctx context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts LakeReadOptions) (KvBatchReader, error)
}

// LakeReadOptions say what a lake read decodes.
type LakeReadOptions struct {
	// Projection lists the table columns to decode, in output order;
	// the lake's system columns are never returned.
	Projection []int
	// Filter lets the reader skip files and row groups whose statistics
	// prove that no row matches. It may read columns outside Projection.
	Filter predicate.P
	// FilterRows also drops the rows Filter does not keep, exactly.
	FilterRows bool
	// Allocator backs the batches the reader builds.
	Allocator memory.Allocator
}

// LogBatchReader reads a log range batch by batch; *storage.LogReader
// satisfies it. A batch's Record is valid until the next Next or Close
// and may be retained to keep it longer. Close is idempotent.
type LogBatchReader interface {
	Next() bool
	Batch() storage.LogBatch
	Err() error
	Close() error
}

// KvBatchReader reads a KV snapshot (or a bucket's sorted lake files)
// batch by batch, in ascending key order; *storage.KvSnapshotReader
// satisfies it. A batch's Record is valid until the next Next or Close
// and may be retained to keep it longer (the merge passes untouched runs
// of rows on without copying them). Close is idempotent.
type KvBatchReader interface {
	Next() bool
	Batch() storage.KvBatch
	Err() error
	Close() error
}

// LakeRecordReader reads lake rows batch by batch; lake.RecordReader
// satisfies it. A Record is valid until the next Next or Close and may be
// retained to keep it longer. Close is idempotent.
type LakeRecordReader interface {
	Next() bool
	Record() arrow.RecordBatch
	Err() error
	Close() error
}

// EngineSource returns the Source that reads eng's logs and KV snapshots
// and lk's lake files. lk may be nil when there is no lake; a lake split
// then fails with ErrUnsupported.
func EngineSource(eng *storage.Engine, lk *lake.Lake) Source { return engineSource{eng, lk} }

type engineSource struct {
	eng *storage.Engine
	lk  *lake.Lake
}

func (s engineSource) ReadLog(ctx context.Context, tb metadata.TableBucket, start, stop int64, opts storage.ReadOptions) (LogBatchReader, error) {
	r, err := s.eng.ReadLog(ctx, tb, start, stop, opts)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s engineSource) ReadKvSnapshot(ctx context.Context, tb metadata.TableBucket, snapshotID int64, opts storage.ReadOptions) (KvBatchReader, error) {
	r, err := s.eng.ReadKvSnapshot(ctx, tb, snapshotID, opts)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s engineSource) lake(table *metadata.TableInfo) error {
	if s.lk == nil {
		return fmt.Errorf("%w: read the lake of %s: the engine has no lake", metadata.ErrUnsupported, table.Path)
	}
	return nil
}

func lakeOptions(o LakeReadOptions) lake.ReadOptions {
	return lake.ReadOptions{Projection: o.Projection, Filter: o.Filter, FilterRows: o.FilterRows, Allocator: o.Allocator}
}

func (s engineSource) ReadLake(ctx context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts LakeReadOptions) (LakeRecordReader, error) {
	if err := s.lake(table); err != nil {
		return nil, err
	}
	r, err := s.lk.OpenFiles(ctx, table, files, lakeOptions(opts))
	if err != nil {
		return nil, s.droppedErr(table, err)
	}
	return droppedLakeReader{r, s, table}, nil
}

func (s engineSource) ReadLakeSorted(ctx context.Context, table *metadata.TableInfo, files []metadata.LakeFile, opts LakeReadOptions) (KvBatchReader, error) {
	if err := s.lake(table); err != nil {
		return nil, err
	}
	r, err := s.lk.OpenSorted(ctx, table, files, lakeOptions(opts))
	if err != nil {
		return nil, s.droppedErr(table, err)
	}
	return sortedLakeReader{r, func(err error) error { return s.droppedErr(table, err) }}, nil
}

// droppedErr tells a lake read that failed because its table was dropped
// under it (DROP TABLE removes the table's lake, and a scan opens its
// files as it reaches them) from damage: the reader is told what was
// dropped, as a log read of a dropped bucket is, instead of being told a
// planned file is missing.
func (s engineSource) droppedErr(table *metadata.TableInfo, err error) error {
	if err == nil || !s.eng.DroppedTable(table.TableID) {
		return err
	}
	return fmt.Errorf("table %s was dropped during the read: %w", table.Path, metadata.ErrNotFound)
}

// droppedLakeReader reports the errors of a lake read through droppedErr.
type droppedLakeReader struct {
	lake.RecordReader
	src   engineSource
	table *metadata.TableInfo
}

func (r droppedLakeReader) Err() error { return r.src.droppedErr(r.table, r.RecordReader.Err()) }

// Stats forwards the lake's counts.
func (r droppedLakeReader) Stats() ReadStats { return statsOf(r.RecordReader) }

// sortedLakeReader adapts lake.SortedReader to KvBatchReader.
type sortedLakeReader struct {
	r lake.SortedReader
	// mapErr rewrites the reader's error; see engineSource.droppedErr.
	mapErr func(error) error
}

func (s sortedLakeReader) Next() bool { return s.r.Next() }
func (s sortedLakeReader) Err() error { return s.mapErr(s.r.Err()) }
func (s sortedLakeReader) Close() error {
	return s.r.Close()
}

func (s sortedLakeReader) Batch() storage.KvBatch {
	rec, keys := s.r.Batch()
	return storage.KvBatch{Record: rec, Keys: keys}
}
