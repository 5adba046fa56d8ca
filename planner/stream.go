package planner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// Option keys and values of streaming reads.
const (
	// OptScanMode is "batch" (the default) or "streaming".
	OptScanMode = "scan.mode"

	ScanModeBatch     = "batch"
	ScanModeStreaming = "streaming"
)

// StreamOptions reads the streaming options of a scan's hints: whether
// it streams, from where (scan.startup.mode and scan.startup.timestamp as
// ParseStartup reads them, a 'yyyy-MM-dd HH:mm:ss' value in loc) and
// where it stops (scan.bounded.*, as ParseBounded reads them). The
// startup options of a batch read are left to its planner: t$changelog
// honours them, the others refuse them; the bounded options are refused
// on a batch read (CheckOptions), which always stops.
func StreamOptions(opts map[string]string, loc *time.Location) (streaming bool, start Startup, bounded Bounded, err error) {
	switch v := strings.ToLower(opts[OptScanMode]); v {
	case "", ScanModeBatch:
		return false, Startup{}, Bounded{}, nil
	case ScanModeStreaming:
	default:
		return false, Startup{}, Bounded{}, fmt.Errorf("%w: '%s' = '%s'; use 'batch' or 'streaming'", metadata.ErrInvalidOption, OptScanMode, opts[OptScanMode])
	}
	if strings.EqualFold(strings.TrimSpace(opts[OptScanStartupMode]), string(StartupOffsets)) {
		// Only the Go API carries the offsets to resume from.
		return false, Startup{}, Bounded{}, fmt.Errorf("%w: '%s' = 'offsets' needs the offsets a subscription handed out: use fluss.Subscribe with SubscribeOptions.Offsets", metadata.ErrInvalidOption, OptScanStartupMode)
	}
	start, err = ParseStartup(opts, loc)
	if err != nil {
		return false, Startup{}, Bounded{}, err
	}
	bounded, err = ParseBounded(opts, loc)
	if err != nil {
		return false, Startup{}, Bounded{}, err
	}
	return true, start, bounded, nil
}

// StreamStart returns the start offset of every bucket of table's
// partitions that spec's partition filter keeps, for a changelog read
// from the log start (StartupEarliest) or from the high watermarks, one
// cut (StartupLatest). A partition created later is not in the map: a
// subscription reads it from its log start.
func StreamStart(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, start Startup) (map[metadata.TableBucket]int64, error) {
	var at metadata.OffsetSpec
	switch start.Mode {
	case StartupEarliest:
		at = metadata.OffsetEarliest
	case StartupLatest:
		at = metadata.OffsetLatest
	case StartupTimestamp:
		if now := time.Now().UnixMilli(); start.Timestamp > now {
			return nil, fmt.Errorf("%w: '%s' %d is in the future: no change was committed then yet",
				metadata.ErrInvalidOption, OptScanStartupTimestamp, start.Timestamp)
		}
	default:
		return nil, fmt.Errorf("%w: start offsets of startup mode %q", metadata.ErrUnsupported, start.Mode)
	}
	b := planBase{admin: admin, table: table, spec: spec}
	parts, err := b.matchingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	var out map[metadata.TableBucket]int64
	if start.Mode == StartupTimestamp {
		out, err = admin.OffsetsForTimestamp(ctx, b.buckets(parts), start.Timestamp)
	} else {
		out, err = b.offsets(ctx, b.buckets(parts), at)
	}
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[metadata.TableBucket]int64{}
	}
	return out, nil
}
