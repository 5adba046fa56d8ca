package lakeunion

import (
	"context"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// Source is what the split readers read from: a bucket's log and its KV
// snapshots. EngineSource adapts *storage.Engine; tests use fakes.
type Source interface {
	// ReadLog opens a reader over [start, stop) of a bucket's log.
	ReadLog(ctx context.Context, tb metadata.TableBucket, start, stop int64, opts storage.ReadOptions) (LogBatchReader, error)
	// ReadKvSnapshot opens a reader of one KV snapshot of a bucket, in
	// ascending key order.
	ReadKvSnapshot(ctx context.Context, tb metadata.TableBucket, snapshotID int64, opts storage.ReadOptions) (KvBatchReader, error)
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

// KvBatchReader reads a KV snapshot batch by batch, in ascending key
// order; *storage.KvSnapshotReader satisfies it. A batch's Record is valid
// until the next Next or Close and may be retained to keep it longer (the
// merge passes untouched runs of snapshot rows on without copying them).
// Close is idempotent.
type KvBatchReader interface {
	Next() bool
	Batch() storage.KvBatch
	Err() error
	Close() error
}

// EngineSource returns the Source that reads eng.
func EngineSource(eng *storage.Engine) Source { return engineSource{eng} }

type engineSource struct{ eng *storage.Engine }

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
