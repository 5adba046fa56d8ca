package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Option keys and values of streaming reads.
const (
	// OptScanMode is "batch" (the default) or "streaming".
	OptScanMode = "scan.mode"

	ScanModeBatch     = "batch"
	ScanModeStreaming = "streaming"
)

// StartupMode is where a streaming read starts (scan.startup.mode).
type StartupMode string

const (
	// StartupFull reads a primary-key table's state as inserts, then its
	// changelog from the offsets that state reflects; a log table from
	// the earliest offset (its lake first, when tiered). The default.
	StartupFull StartupMode = "full"
	// StartupEarliest reads the changelog from each bucket's log start.
	StartupEarliest StartupMode = "earliest"
	// StartupLatest reads the changelog from each bucket's high watermark
	// at subscription time.
	StartupLatest StartupMode = "latest"
	// StartupTimestamp reads from the first batch committed at or after
	// scan.startup.timestamp.
	StartupTimestamp StartupMode = "timestamp"
	// StartupOffsets resumes from offsets an earlier subscription handed
	// out.
	StartupOffsets StartupMode = "offsets"
)

// StreamOptions reads the streaming options of a scan's hints: whether
// it streams, and from where. The startup mode is refused on a batch
// read, where it would be silently ignored, and timestamp starts are not
// yet supported.
func StreamOptions(opts map[string]string) (streaming bool, mode StartupMode, err error) {
	switch v := strings.ToLower(opts[OptScanMode]); v {
	case "", ScanModeBatch:
	case ScanModeStreaming:
		streaming = true
	default:
		return false, "", fmt.Errorf("%w: '%s' = '%s'; use 'batch' or 'streaming'", metadata.ErrInvalidOption, OptScanMode, opts[OptScanMode])
	}
	raw, set := opts[OptScanStartupMode]
	_, hasTS := opts[OptScanStartupTimestamp]
	if !streaming {
		if set || hasTS {
			return false, "", fmt.Errorf("%w: '%s' applies to streaming reads only ('%s' = 'streaming')", metadata.ErrInvalidOption, OptScanStartupMode, OptScanMode)
		}
		return false, "", nil
	}
	mode = StartupFull
	if set {
		mode = StartupMode(strings.ToLower(raw))
	}
	switch mode {
	case StartupFull, StartupEarliest, StartupLatest:
	case StartupTimestamp:
		return false, "", fmt.Errorf("%w: '%s' = 'timestamp' is not yet supported: finding the first offset at a commit time needs the log's time index", metadata.ErrUnsupported, OptScanStartupMode)
	case StartupOffsets:
		// Only the Go API carries the offsets to resume from.
		return false, "", fmt.Errorf("%w: '%s' = 'offsets' needs the offsets a subscription handed out: use fluss.Subscribe with SubscribeOptions.Offsets", metadata.ErrInvalidOption, OptScanStartupMode)
	default:
		return false, "", fmt.Errorf("%w: '%s' = '%s'; use 'full', 'earliest', 'latest' or 'timestamp'", metadata.ErrInvalidOption, OptScanStartupMode, raw)
	}
	if hasTS {
		return false, "", fmt.Errorf("%w: '%s' is set but '%s' is not 'timestamp'", metadata.ErrInvalidOption, OptScanStartupTimestamp, OptScanStartupMode)
	}
	return true, mode, nil
}

// StreamStart returns the start offset of every bucket of table's
// partitions that spec's partition filter keeps, for a changelog read
// from the log start (StartupEarliest) or from the high watermarks, one
// cut (StartupLatest). A partition created later is not in the map: a
// subscription reads it from its log start.
func StreamStart(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, mode StartupMode) (map[metadata.TableBucket]int64, error) {
	var at metadata.OffsetSpec
	switch mode {
	case StartupEarliest:
		at = metadata.OffsetEarliest
	case StartupLatest:
		at = metadata.OffsetLatest
	default:
		return nil, fmt.Errorf("%w: start offsets of startup mode %q", metadata.ErrUnsupported, mode)
	}
	b := planBase{admin: admin, table: table, spec: spec}
	parts, err := b.matchingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	out, err := b.offsets(ctx, b.buckets(parts), at)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[metadata.TableBucket]int64{}
	}
	return out, nil
}
