package storage

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/flusslite/fluss/metadata"
)

// Options configure an Engine. Start from DefaultOptions.
type Options struct {
	// Dir is the data directory; ignored when InMemory.
	Dir string
	// InMemory runs the engine on an in-memory file system: nothing
	// touches disk and everything is gone after Close.
	InMemory bool
	// Sync makes the log and the catalog durable (fsync) before a write
	// returns. Without it a crash may lose the most recent writes, never
	// corrupt earlier ones.
	Sync bool
	// DefaultBucketNumber is the bucket count of tables without bucket.num.
	DefaultBucketNumber int
	// SegmentBytes rolls a log segment when it reaches this size.
	SegmentBytes int64
	// IndexIntervalBytes is the spacing of the sparse offset index.
	IndexIntervalBytes int
	// Logger receives recovery notes and warnings; nil discards them.
	Logger *slog.Logger
	// FS overrides the file system (fault injection); nil: the disk, or
	// a fresh in-memory one when InMemory.
	FS FS
	// KvSnapshotInterval is how often the engine snapshots the KV state
	// of primary-key buckets that changed; 0 takes no background
	// snapshots.
	KvSnapshotInterval time.Duration
	// TestingSkipKvApply is for tests: a write to a primary-key table
	// reaches the log but not the KV store, as if the process had died
	// between the two. The engine then refuses further writes; reopening
	// it replays the log and restores the state.
	TestingSkipKvApply bool
	// TestingCrashCommit is for tests: it is asked before each batch of a
	// commit is written (batches counts those already written) and once
	// after the last; recorded says whether the commit point is behind.
	// A commit that takes the journal's intent way (or none) reaches its
	// commit point once every batch is written and fsynced, so it is
	// asked with recorded false before each batch and true once at the
	// end; a redo commit is asked (0, false) before its journal record,
	// then with recorded true before each batch and after the last.
	// Returning true stops the commit there as if the process had died:
	// nothing is rolled back, the commit returns an error and the engine
	// refuses further writes; reopening it recovers (none of the commit
	// before its commit point, all of it after).
	TestingCrashCommit func(batches int, recorded bool) bool
	// MaxOpenSegments bounds the log segment files the engine holds open
	// at once; the others are opened when read or written, closing the
	// least recently used. 0: DefaultMaxOpenSegments, or a quarter of the
	// process's open-file limit when that is lower, leaving room for the
	// KV store, the lake and the application.
	MaxOpenSegments int
	// CloseTimeout bounds each wait of Close on the KV store: for its
	// memtables to flush, then for it to close. A flush that cannot
	// complete (a full disk) loses nothing, since Open replays the log
	// into the KV store; Close returns the error. 0: DefaultCloseTimeout.
	CloseTimeout time.Duration
	// Clock gives the commit timestamps of log batches and the time
	// auto-partitioning creates and drops partitions by; nil: time.Now.
	// Tests set it to step time, also backwards.
	Clock func() time.Time
	// AutoPartitionInterval is how often the engine creates the time
	// partitions auto-partitioned tables need ahead and drops those past
	// their retention (it also does at Open and on CALL
	// sys.auto_partition); 0: only then.
	AutoPartitionInterval time.Duration
	// Allocator backs the Arrow memory of writes and of what reads
	// build (decompressed buffers, KV snapshot batches); nil: the default
	// allocator. The raw bytes of the log batches a read decodes in place
	// come from the engine's own pool of buffers instead (bufpool.go).
	Allocator memory.Allocator

	// segmentFiles is the engine's cache of open segment files, set by
	// Open; tablets reach it through their *Options.
	segmentFiles *fileCache

	// testingKvFS, for tests, wraps the file system of the KV store.
	testingKvFS func(vfs.FS) vfs.FS
}

// Defaults.
const (
	DefaultSegmentBytes       = 64 << 20
	DefaultIndexIntervalBytes = 4096
	DefaultCloseTimeout       = 5 * time.Second
	DefaultMaxOpenSegments    = 1024
	// MinOpenSegments is the smallest segment file cache: a commit
	// holds the files of the buckets it writes only while it writes each.
	MinOpenSegments = 8
	// maxSegmentBytes keeps positions inside a segment within the uint32
	// of an index entry, with room for the batch that overshoots.
	maxSegmentBytes = 1 << 30
)

// DefaultOptions are the options of a durable on-disk engine.
func DefaultOptions() Options {
	return Options{
		Sync:                true,
		DefaultBucketNumber: 1,
		SegmentBytes:        DefaultSegmentBytes,
		IndexIntervalBytes:  DefaultIndexIntervalBytes,
	}
}

// Validate checks the options, filling zero values with the defaults.
func (o *Options) Validate() error {
	if !o.InMemory && o.Dir == "" && o.FS == nil {
		return fmt.Errorf("%w: no data directory", metadata.ErrInvalidOption)
	}
	if o.DefaultBucketNumber == 0 {
		o.DefaultBucketNumber = 1
	}
	if o.DefaultBucketNumber < 1 || o.DefaultBucketNumber > metadata.MaxBuckets {
		return fmt.Errorf("%w: default bucket number %d is out of range [1, %d]", metadata.ErrInvalidOption, o.DefaultBucketNumber, metadata.MaxBuckets)
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.SegmentBytes < 1 || o.SegmentBytes > maxSegmentBytes {
		return fmt.Errorf("%w: segment size %d is out of range [1, %d]", metadata.ErrInvalidOption, o.SegmentBytes, maxSegmentBytes)
	}
	if o.IndexIntervalBytes == 0 {
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if o.IndexIntervalBytes < 1 {
		return fmt.Errorf("%w: index interval %d must be positive", metadata.ErrInvalidOption, o.IndexIntervalBytes)
	}
	if o.MaxOpenSegments == 0 {
		o.MaxOpenSegments = DefaultMaxOpenSegments
		if n := descriptorLimit() / 4; n > 0 {
			o.MaxOpenSegments = max(min(o.MaxOpenSegments, n), MinOpenSegments)
		}
	}
	if o.MaxOpenSegments < MinOpenSegments {
		return fmt.Errorf("%w: max open segments %d is below %d", metadata.ErrInvalidOption, o.MaxOpenSegments, MinOpenSegments)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.AutoPartitionInterval < 0 {
		return fmt.Errorf("%w: auto-partition check interval %s is negative", metadata.ErrInvalidOption, o.AutoPartitionInterval)
	}
	if o.CloseTimeout < 0 {
		return fmt.Errorf("%w: close timeout %s is negative", metadata.ErrInvalidOption, o.CloseTimeout)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	return nil
}
