package planner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// Option keys of bounded streaming reads (Fluss's Flink source).
const (
	// OptScanBoundedMode is "unbounded" (the default), "latest-offset"
	// or "timestamp".
	OptScanBoundedMode = "scan.bounded.mode"
	// OptScanBoundedTimestamp is where a "timestamp" bounded read stops:
	// epoch milliseconds or 'yyyy-MM-dd HH:mm:ss' in the session's zone.
	OptScanBoundedTimestamp = "scan.bounded.timestamp"
)

// BoundedMode is where a streaming read stops, Fluss's scan.bounded.mode.
type BoundedMode string

// The bounded modes.
const (
	// BoundedUnbounded, the default, never stops.
	BoundedUnbounded BoundedMode = "unbounded"
	// BoundedLatestOffset stops at the high watermarks of the read's
	// start.
	BoundedLatestOffset BoundedMode = "latest-offset"
	// BoundedTimestamp stops before the first batch of each bucket
	// committed at or after Bounded.Timestamp.
	BoundedTimestamp BoundedMode = "timestamp"
)

// Bounded is a bounded mode with its timestamp (ms since the epoch; for
// BoundedTimestamp only). The zero value is unbounded.
type Bounded struct {
	Mode      BoundedMode
	Timestamp int64
}

// IsBounded reports whether the read stops.
func (b Bounded) IsBounded() bool { return b.Mode != "" && b.Mode != BoundedUnbounded }

// String renders the mode: "latest-offset", "timestamp 1700000000000".
func (b Bounded) String() string {
	switch b.Mode {
	case "":
		return string(BoundedUnbounded)
	case BoundedTimestamp:
		return fmt.Sprintf("%s %d", b.Mode, b.Timestamp)
	}
	return string(b.Mode)
}

// ParseBounded reads scan.bounded.mode (unbounded when absent; any case)
// and scan.bounded.timestamp (epoch milliseconds, or 'yyyy-MM-dd
// HH:mm:ss' in loc; nil: UTC). The timestamp mode without a timestamp is
// Fluss's error; a timestamp with another mode is refused rather than
// ignored. Errors wrap ErrInvalidOption.
func ParseBounded(opts map[string]string, loc *time.Location) (Bounded, error) {
	b := Bounded{Mode: BoundedUnbounded}
	if v, ok := opts[OptScanBoundedMode]; ok {
		switch m := BoundedMode(strings.ToLower(strings.TrimSpace(v))); m {
		case BoundedUnbounded, BoundedLatestOffset, BoundedTimestamp:
			b.Mode = m
		default:
			return Bounded{}, fmt.Errorf("%w: '%s' = '%s': want 'unbounded', 'latest-offset' or 'timestamp'",
				metadata.ErrInvalidOption, OptScanBoundedMode, v)
		}
	}
	v, hasTS := opts[OptScanBoundedTimestamp]
	switch {
	case b.Mode == BoundedTimestamp && (!hasTS || strings.TrimSpace(v) == ""):
		return Bounded{}, fmt.Errorf("%w: '%s' is required in '%s' bounded mode but missing.",
			metadata.ErrInvalidOption, OptScanBoundedTimestamp, BoundedTimestamp)
	case b.Mode != BoundedTimestamp && hasTS:
		return Bounded{}, fmt.Errorf("%w: '%s' is set but '%s' is '%s'; it is read only in 'timestamp' bounded mode",
			metadata.ErrInvalidOption, OptScanBoundedTimestamp, OptScanBoundedMode, b.Mode)
	case hasTS:
		ts, err := parseTimestampOption(OptScanBoundedTimestamp, strings.TrimSpace(v), loc)
		if err != nil {
			return Bounded{}, err
		}
		b.Timestamp = ts
	}
	return b, nil
}

// CheckBounded applies Fluss's rules on which reads may be bounded: a log
// table, a primary-key table's changelog (startup earliest, latest,
// timestamp, or resumed offsets) and its virtual changelogs are; a
// primary-key table's `full` start (its state has no stop offset) and a
// lake-enabled log table's `full` start (a lake union read) are not.
// virtual is the read's virtual table ("" for the table itself).
func CheckBounded(table *metadata.TableInfo, virtual string, start StartupMode, b Bounded) error {
	if !b.IsBounded() || virtual != "" || (start != "" && start != StartupFull) {
		return nil
	}
	switch {
	case table.HasPrimaryKey():
		return fmt.Errorf("%w: '%s' = '%s' on primary-key table %s needs startup mode 'earliest', 'latest' or 'timestamp' "+
			"(or its $changelog or $binlog): its 'full' startup reads the table's state, which has no stop offset",
			metadata.ErrUnsupported, OptScanBoundedMode, b.Mode, table.Path)
	case table.Config.DatalakeEnabled:
		return fmt.Errorf("%w: '%s' = '%s' on lake-enabled table %s needs startup mode 'earliest', 'latest' or 'timestamp': "+
			"its 'full' startup is a lake union read, which is never bounded",
			metadata.ErrUnsupported, OptScanBoundedMode, b.Mode, table.Path)
	}
	return nil
}

// StreamStop returns the stop offset (exclusive) of every bucket of
// table's partitions that spec's partition filter keeps, for a bounded
// read: the high watermarks now (BoundedLatestOffset, one cut), or the
// first offset committed at or after the bounded timestamp, through the
// time index (BoundedTimestamp; a time in the future is an error). A
// partition created later is not in the map: a bounded read does not read
// it. Unbounded is nil.
func StreamStop(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, b Bounded) (map[metadata.TableBucket]int64, error) {
	if !b.IsBounded() {
		return nil, nil
	}
	if b.Mode == BoundedTimestamp {
		if now := time.Now().UnixMilli(); b.Timestamp > now {
			return nil, fmt.Errorf("%w: '%s' %d is in the future: a bounded read stops at a time already passed",
				metadata.ErrInvalidOption, OptScanBoundedTimestamp, b.Timestamp)
		}
	}
	pb := planBase{admin: admin, table: table, spec: spec}
	parts, err := pb.matchingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	var out map[metadata.TableBucket]int64
	if b.Mode == BoundedTimestamp {
		out, err = admin.OffsetsForTimestamp(ctx, pb.buckets(parts), b.Timestamp)
	} else {
		out, err = pb.offsets(ctx, pb.buckets(parts), metadata.OffsetLatest)
	}
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[metadata.TableBucket]int64{}
	}
	return out, nil
}
