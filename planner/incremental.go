package planner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/flusslite/fluss/metadata"
)

// Option keys of a time-range incremental batch read (Fluss #3883). They
// are read from a query's hints only, never from the DSN, so a window
// cannot leak into another query.
const (
	OptIncrementalStart = "scan.incremental.start.timestamp"
	OptIncrementalEnd   = "scan.incremental.end.timestamp"
)

// timestampLayout is Fluss's 'yyyy-MM-dd HH:mm:ss'.
const timestampLayout = "2006-01-02 15:04:05"

// TimeRange is the window [Start, End) of an incremental read, on the
// commit timestamps of log batches, in milliseconds since the epoch. End
// is math.MaxInt64 when the read names no end: it then reads up to the
// high watermark pinned at planning. A TimeRange is a plain value.
type TimeRange struct {
	Start, End int64
}

// Bounded reports whether the window has an end of its own.
func (r TimeRange) Bounded() bool { return r.End != math.MaxInt64 }

// String renders the window as EXPLAIN does: "[s, e)" or "[s, latest)".
func (r TimeRange) String() string {
	if !r.Bounded() {
		return fmt.Sprintf("[%d, latest)", r.Start)
	}
	return fmt.Sprintf("[%d, %d)", r.Start, r.End)
}

// PredatesRetention reports whether the window starts before what a
// table whose log lives ttl is sure to keep at now: the changes committed
// before now-ttl may be gone, so the read may return part of the window.
// A ttl of 0 or less keeps the log forever.
func (r TimeRange) PredatesRetention(now time.Time, ttl time.Duration) bool {
	return ttl > 0 && r.Start < now.Add(-ttl).UnixMilli()
}

// IncrementalRange reads the window of an incremental read from a scan's
// options, with Fluss's fail-fast rules: a blank start, an end without a
// start, and a start not strictly before the end are errors
// (ErrInvalidOption), as is a value that is neither epoch milliseconds
// (digits) nor 'yyyy-MM-dd HH:mm:ss' in loc (nil: UTC). ok is false when
// the options ask for no incremental read. A blank end is no end.
func IncrementalRange(opts map[string]string, loc *time.Location) (r TimeRange, ok bool, err error) {
	rawStart, hasStart := opts[OptIncrementalStart]
	rawEnd, hasEnd := opts[OptIncrementalEnd]
	if hasStart && strings.TrimSpace(rawStart) == "" {
		return TimeRange{}, false, fmt.Errorf("%w: '%s' must not be blank. Provide epoch milliseconds or a "+
			"'yyyy-MM-dd HH:mm:ss' timestamp, or omit the option for a full-table batch read.",
			metadata.ErrInvalidOption, OptIncrementalStart)
	}
	if !hasStart {
		if hasEnd {
			return TimeRange{}, false, fmt.Errorf("%w: '%s' is set but '%s' is missing. An end timestamp alone "+
				"cannot truncate a batch read; set a start timestamp for an incremental read, or remove the end option.",
				metadata.ErrInvalidOption, OptIncrementalEnd, OptIncrementalStart)
		}
		return TimeRange{}, false, nil
	}
	start := strings.TrimSpace(rawStart)
	if r.Start, err = parseTimestampOption(OptIncrementalStart, start, loc); err != nil {
		return TimeRange{}, false, err
	}
	r.End = math.MaxInt64
	if end := strings.TrimSpace(rawEnd); end != "" {
		if r.End, err = parseTimestampOption(OptIncrementalEnd, end, loc); err != nil {
			return TimeRange{}, false, err
		}
		if r.Start >= r.End {
			return TimeRange{}, false, fmt.Errorf("%w: Invalid incremental time range: the start timestamp '%s' must be "+
				"strictly before the end timestamp '%s'. The window is left-closed right-open '[start, end)'.",
				metadata.ErrInvalidOption, start, end)
		}
	}
	return r, true, nil
}

// parseTimestampOption reads a timestamp option: digits are epoch
// milliseconds, anything else 'yyyy-MM-dd HH:mm:ss' in loc.
func parseTimestampOption(key, v string, loc *time.Location) (int64, error) {
	bad := func() error {
		return fmt.Errorf("%w: Invalid value for '%s': '%s'. It should be epoch milliseconds or follow the format "+
			"'yyyy-MM-dd HH:mm:ss', e.g. '2023-12-09 23:09:12' or '1678883047356'.", metadata.ErrInvalidOption, key, v)
	}
	if isDigits(v) {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, bad()
		}
		return ms, nil
	}
	if loc == nil {
		loc = time.UTC
	}
	t, err := time.ParseInLocation(timestampLayout, v, loc)
	if err != nil {
		return 0, bad()
	}
	return t.UnixMilli(), nil
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// checkNotIncremental refuses, in the planners of full-table reads, the
// options of an incremental read: its window would otherwise be ignored.
func checkNotIncremental(opts map[string]string) error {
	if _, ok, err := IncrementalRange(opts, nil); err != nil || ok {
		if err == nil {
			err = fmt.Errorf("%w: a read with '%s' is planned by the incremental planner", metadata.ErrUnsupported, OptIncrementalStart)
		}
		return err
	}
	return nil
}

// IncrementalPlanner plans a time-range incremental batch read of a log
// table or a primary-key table: the changes committed in its window, read
// from the log alone (Fluss #3883). It never probes the lake and never
// reads a KV snapshot. It holds no resources, but should be closed by its
// creator; Close is idempotent. Not safe for concurrent use.
type IncrementalPlanner struct {
	planBase
	window             TimeRange
	maxRecordsPerSplit int64
}

var _ SplitPlanner = (*IncrementalPlanner)(nil)

// NewIncrementalPlanner returns the planner of the incremental read of
// table over window (from IncrementalRange of spec.Options). read.optimized
// = true is refused (ErrInvalidOption): the read has no snapshot to read
// alone. scan.max-records-per-split cuts a log table's ranges. Of the
// options only WithReadView applies.
func NewIncrementalPlanner(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, window TimeRange, opts ...Option) (*IncrementalPlanner, error) {
	var o plannerOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if window.Start >= window.End {
		return nil, fmt.Errorf("%w: empty incremental time range %s", metadata.ErrInvalidOption, window)
	}
	if err := checkNoStartup(spec.Options, "an incremental read starts at its window's start"); err != nil {
		return nil, err
	}
	maxRecords, err := maxRecordsPerSplit(spec.Options)
	if err != nil {
		return nil, err
	}
	ro, err := readOptimized(spec.Options)
	if err != nil {
		return nil, err
	}
	if ro {
		return nil, fmt.Errorf("%w: '%s' = 'true' cannot be combined with '%s' on %s: an incremental read "+
			"folds the changelog of its window and has no snapshot to read alone",
			metadata.ErrInvalidOption, OptReadOptimized, OptIncrementalStart, table.Path)
	}
	return &IncrementalPlanner{
		planBase:           planBase{admin: atView(admin, o.view), table: table, spec: spec},
		window:             window,
		maxRecordsPerSplit: maxRecords,
	}, nil
}

// ScanType is Upsert for a primary-key table, else Append: never a lake
// type, as the read never unions the lake.
func (p *IncrementalPlanner) ScanType() ScanType {
	if p.table.HasPrimaryKey() {
		return TypeUpsert
	}
	return TypeAppend
}

// TimeRange is the window the planner reads.
func (p *IncrementalPlanner) TimeRange() TimeRange { return p.window }

// Plan returns, per matching partition and bucket, the log range of the
// window: from the first offset committed at or after its start (the
// time index's answer) to the high watermark pinned now or, for a window
// with an end, to the first offset committed at or after the end when
// that comes first, which is where a reader checking each batch's commit
// timestamp would stop. Buckets whose range is empty give no split. A log
// table gets log splits, cut by scan.max-records-per-split; a primary-key
// table a kv+log split without a KV snapshot per bucket, whose reader
// folds the window per key: the last change wins, and a key whose last
// change is -D is left out.
func (p *IncrementalPlanner) Plan(ctx context.Context) ([]Split, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	return p.dropSplitsOfDropped(p.planWindow(ctx))
}

func (p *IncrementalPlanner) planWindow(ctx context.Context) ([]Split, error) {
	parts, err := p.matchingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	buckets := p.buckets(parts)
	stops, err := p.offsets(ctx, buckets, metadata.OffsetLatest)
	if err != nil {
		return nil, err
	}
	starts, err := p.timestampOffsets(ctx, buckets, p.window.Start)
	if err != nil {
		return nil, err
	}
	if p.window.Bounded() {
		ends, err := p.timestampOffsets(ctx, buckets, p.window.End)
		if err != nil {
			return nil, err
		}
		for tb, end := range ends {
			stops[tb] = min(stops[tb], end)
		}
	}
	names := make(map[int64]string, len(parts))
	for _, part := range parts {
		names[part.id] = part.name
	}
	var splits []Split
	for _, tb := range p.withoutDropped(buckets) {
		start, stop := starts[tb], stops[tb]
		if start >= stop {
			continue
		}
		if p.table.HasPrimaryKey() {
			splits = append(splits, &KvLogSplit{TableBucket: tb, Partition: names[tb.PartitionID],
				SnapshotID: NoKvSnapshot, LogStart: start, LogStop: stop})
			continue
		}
		for _, r := range splitRange(start, stop, p.maxRecordsPerSplit) {
			splits = append(splits, &LogSplit{TableBucket: tb, Partition: names[tb.PartitionID], StartOffset: r[0], StopOffset: r[1]})
		}
	}
	return splits, nil
}

// timestampOffsets asks, in one call, for every bucket's first offset
// committed at or after ts, and checks that each bucket has one.
func (b *planBase) timestampOffsets(ctx context.Context, buckets []metadata.TableBucket, ts int64) (map[metadata.TableBucket]int64, error) {
	if len(buckets) == 0 {
		return nil, nil
	}
	buckets = b.withoutDropped(buckets)
	got, err := b.admin.OffsetsForTimestamp(ctx, buckets, ts)
	for err != nil && b.noteDropped(ctx, err, partitionIDs(buckets)) {
		buckets = b.withoutDropped(buckets)
		got, err = b.admin.OffsetsForTimestamp(ctx, buckets, ts)
	}
	if err != nil {
		return nil, fmt.Errorf("list offsets at timestamp %d of %s: %w", ts, b.table.Path, err)
	}
	for _, tb := range buckets {
		if _, ok := got[tb]; !ok {
			return nil, fmt.Errorf("list offsets at timestamp %d of %s: %w: no offset for %s", ts, b.table.Path, metadata.ErrNotFound, tb)
		}
	}
	return got, nil
}
