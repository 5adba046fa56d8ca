package lake

import (
	"fmt"
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
)

// Options configure a Lake.
type Options struct {
	// Dir is the lake root (the engine's <dir>/lake); ignored when InMemory.
	Dir string
	// InMemory keeps every lake file and manifest in memory; they are gone
	// after Close.
	InMemory bool
	// Sync makes files and manifests durable (fsync of the file and of its
	// directory) before Close and Commit return.
	Sync bool
	// Logger receives notes (leftover temporary manifests removed); nil
	// discards them.
	Logger *slog.Logger
	// MaxRowsPerFile is the row count at which FileWriter.Full reports true,
	// so the writer's owner starts a new file. Default DefaultMaxRowsPerFile.
	MaxRowsPerFile int
	// RowGroupRows is the most rows of one Parquet row group. Default
	// DefaultRowGroupRows; tests lower it to get several row groups.
	RowGroupRows int

	// Allocator backs the Arrow memory of FileWriters and, unless
	// ReadOptions names another, of readers; nil: the default allocator.
	Allocator memory.Allocator

	// FS overrides the file system: fault injection (FaultFS), or a lake
	// in memory (NewMemFS) that outlives a Lake, so that a test can
	// reopen it. With it, Dir is the lake root inside FS (default
	// "lake") and InMemory is ignored; nil: the disk, or memory when
	// InMemory.
	FS FS
}

// Defaults.
const (
	DefaultMaxRowsPerFile = 1 << 20
	DefaultRowGroupRows   = 128 * 1024
	// readBatchRows is the row count of the record batches readers return.
	readBatchRows = 8 * 1024
)

// Validate checks the options, filling zero values with the defaults.
func (o *Options) Validate() error {
	if !o.InMemory && o.Dir == "" && o.FS == nil {
		return fmt.Errorf("%w: lake: no directory", metadata.ErrInvalidOption)
	}
	if o.MaxRowsPerFile == 0 {
		o.MaxRowsPerFile = DefaultMaxRowsPerFile
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.MaxRowsPerFile < 1 {
		return fmt.Errorf("%w: lake: max rows per file %d must be positive", metadata.ErrInvalidOption, o.MaxRowsPerFile)
	}
	if o.RowGroupRows < 1 {
		return fmt.Errorf("%w: lake: row group rows %d must be positive", metadata.ErrInvalidOption, o.RowGroupRows)
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
