package storage

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// UpsertOptions shape a write to a primary-key table.
type UpsertOptions struct {
	// TargetColumns lists the columns a partial update writes (it must
	// include every primary-key column); nil writes whole rows. Unlisted
	// columns keep the stored values of an existing key; a new key takes
	// their Defaults, and a new key is refused (ErrConstraint naming the
	// column and the table) when an unlisted NOT NULL column has no
	// default.
	TargetColumns []int
	// Defaults are the values a new key of a partial update takes in the
	// columns TargetColumns leaves out, one per schema column (nil:
	// NULL; the listed columns' are not read). When nil, the schema's
	// defaults (metadata.Schema.DefaultRow) as of the write, in UTC.
	Defaults []any
}

// WriteResult is the outcome of one write (of a commit).
type WriteResult struct {
	// RowsAffected counts, for an append, the rows appended; for an
	// upsert or a delete, rows inserted plus rows whose stored value
	// changed: an upsert that changes nothing, an ignored first_row
	// upsert and a delete of a missing key count 0.
	RowsAffected int64
}

// KvSnapshotResult describes one bucket's snapshot taken by
// TakeKvSnapshots.
type KvSnapshotResult struct {
	PartitionName string // "" for a table without partitions
	Bucket        int32
	SnapshotID    int64
	// LogOffset is the log offset to read after the snapshot.
	LogOffset int64
}

// KvBatch is one batch of a KV snapshot read.
type KvBatch struct {
	// Record holds the projected columns (ReadOptions.Projection); valid
	// until the next Next or Close.
	Record arrow.RecordBatch
	// Keys are metadata.EncodeOrderedKey of each row's physical primary
	// key, one per row, ascending.
	Keys [][]byte
}
