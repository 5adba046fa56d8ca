package planner

import (
	"context"
	"fmt"
	"time"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/predicate"
)

// ChangelogSystemColumns is the number of system columns the virtual
// table t$changelog puts before the table's own columns: _change_type,
// _log_offset and _commit_timestamp. Column i of the table is column
// ChangelogSystemColumns+i of the virtual table.
const ChangelogSystemColumns = 3

// WithWholeBucketSplits makes a ChangelogPlanner plan one split per
// bucket, never cut by scan.max-records-per-split: for t$binlog, whose
// reader pairs each update's -U with the +U after it, a pair two splits
// cut apart could not be joined. The caller refuses an explicit
// scan.max-records-per-split hint rather than ignore it.
func WithWholeBucketSplits() Option {
	return func(o *plannerOptions) { o.wholeLog = true }
}

// ChangelogPlanner plans a batch scan of the virtual table t$changelog:
// the log of a log table or of a primary-key table, change by change. It
// never reads the lake, so it never probes it. It holds no resources, but
// should be closed by its creator; Close is idempotent. Not safe for
// concurrent use.
type ChangelogPlanner struct {
	planBase
	maxRecordsPerSplit int64
	startup            Startup
}

var _ SplitPlanner = (*ChangelogPlanner)(nil)

// NewChangelogPlanner returns the planner of a scan of t$changelog, where
// table is the base table t. The column indexes in spec (its partition
// filter in particular) are those of the virtual table: the system
// columns first, then t's columns. scan.max-records-per-split cuts long
// log ranges as for a log table. scan.startup.mode (and
// scan.startup.timestamp) choose where the read starts (ParseStartup, in
// the zone of WithLocation). Of the other options only WithReadView
// applies.
func NewChangelogPlanner(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, opts ...Option) (*ChangelogPlanner, error) {
	var o plannerOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	admin = atView(admin, o.view)
	if err := checkNotIncremental(spec.Options); err != nil {
		return nil, err
	}
	maxRecords, err := maxRecordsPerSplit(spec.Options)
	if err != nil {
		return nil, err
	}
	if o.wholeLog {
		maxRecords = 0
	}
	startup, err := ParseStartup(spec.Options, o.loc)
	if err != nil {
		return nil, err
	}
	if spec.PartitionFilter != nil {
		if spec.PartitionFilter, err = shiftColumns(spec.PartitionFilter, -ChangelogSystemColumns); err != nil {
			return nil, fmt.Errorf("partition filter on %s$changelog: %w", table.Path, err)
		}
	}
	// The pushed predicate is not the planner's business, and the one given
	// reads virtual columns: drop it rather than keep a wrong index.
	spec.PushedPredicate = nil
	return &ChangelogPlanner{planBase: planBase{admin: admin, table: table, spec: spec}, maxRecordsPerSplit: maxRecords, startup: startup}, nil
}

// ScanType is Append: the changelog is read as a log.
func (p *ChangelogPlanner) ScanType() ScanType { return TypeAppend }

// Startup is where the read starts.
func (p *ChangelogPlanner) Startup() Startup { return p.startup }

// Plan returns, per matching partition and non-empty bucket, one log split
// [start, high watermark), cut into ranges by scan.max-records-per-split,
// as Fluss's docs describe a batch read of t$changelog: [start, latest
// captured at planning). The start is the log start offset (full,
// earliest), the first offset committed at or after the startup
// timestamp, or the high watermark itself (latest: nothing to read). A
// startup timestamp in the future is ErrInvalidOption, as Fluss's server
// refuses it.
func (p *ChangelogPlanner) Plan(ctx context.Context) ([]Split, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	switch p.startup.Mode {
	case StartupLatest:
		return nil, nil
	case StartupTimestamp:
		if now := time.Now().UnixMilli(); p.startup.Timestamp > now {
			return nil, fmt.Errorf("%w: '%s' %d is in the future: no change was committed then yet",
				metadata.ErrInvalidOption, OptScanStartupTimestamp, p.startup.Timestamp)
		}
		ts := p.startup.Timestamp
		return p.dropSplitsOfDropped(p.planLogFrom(ctx, p.maxRecordsPerSplit, func(buckets []metadata.TableBucket) (map[metadata.TableBucket]int64, error) {
			return p.timestampOffsets(ctx, buckets, ts)
		}))
	}
	return p.dropSplitsOfDropped(p.planLog(ctx, p.maxRecordsPerSplit))
}

// planLog is the log-only plan of an append scan: per matching partition
// and bucket, the ranges of [log start, high watermark).
func (b *planBase) planLog(ctx context.Context, maxRecords int64) ([]Split, error) {
	return b.planLogFrom(ctx, maxRecords, func(buckets []metadata.TableBucket) (map[metadata.TableBucket]int64, error) {
		return b.offsets(ctx, buckets, metadata.OffsetEarliest)
	})
}

// planLogFrom is planLog with the start offsets starts gives: the ranges
// of [start, high watermark) of every matching bucket, the high
// watermarks pinned after the starts were found.
func (b *planBase) planLogFrom(ctx context.Context, maxRecords int64,
	starts func([]metadata.TableBucket) (map[metadata.TableBucket]int64, error)) ([]Split, error) {
	parts, err := b.matchingPartitions(ctx)
	if err != nil {
		return nil, err
	}
	buckets := b.buckets(parts)
	startOffsets, err := starts(buckets)
	if err != nil {
		return nil, err
	}
	stops, err := b.offsets(ctx, buckets, metadata.OffsetLatest)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(parts))
	for _, part := range parts {
		names[part.id] = part.name
	}
	// buckets is already in partition order, then bucket order, and the
	// ranges of one bucket come out ascending: the splits need no sort.
	var splits []Split
	for _, tb := range buckets {
		for _, r := range splitRange(startOffsets[tb], stops[tb], maxRecords) {
			splits = append(splits, &LogSplit{
				TableBucket: tb,
				Partition:   names[tb.PartitionID],
				StartOffset: r[0],
				StopOffset:  r[1],
			})
		}
	}
	return splits, nil
}

// ChangelogBaseFilter returns a partition filter of t$changelog over t's
// own columns, as a subscription of t reads it.
func ChangelogBaseFilter(p predicate.P) (predicate.P, error) {
	if p == nil {
		return nil, nil
	}
	return shiftColumns(p, -ChangelogSystemColumns)
}

// shiftColumns returns p with every column index moved by delta; an index
// that would fall below 0 (a system column) is ErrUnsupported.
func shiftColumns(p predicate.P, delta int) (predicate.P, error) {
	switch p := p.(type) {
	case *predicate.Leaf:
		l := *p
		l.Column += delta
		if l.Column < 0 {
			return nil, fmt.Errorf("%w: %s reads a system column", metadata.ErrUnsupported, p)
		}
		return &l, nil
	case *predicate.And:
		kids, err := shiftAll(p.Children, delta)
		if err != nil {
			return nil, err
		}
		return &predicate.And{Children: kids}, nil
	case *predicate.Or:
		kids, err := shiftAll(p.Children, delta)
		if err != nil {
			return nil, err
		}
		return &predicate.Or{Children: kids}, nil
	case *predicate.Not:
		kid, err := shiftColumns(p.Child, delta)
		if err != nil {
			return nil, err
		}
		return &predicate.Not{Child: kid}, nil
	}
	return nil, fmt.Errorf("%w: predicate %T", metadata.ErrUnsupported, p)
}

func shiftAll(ps []predicate.P, delta int) ([]predicate.P, error) {
	out := make([]predicate.P, len(ps))
	for i, c := range ps {
		var err error
		if out[i], err = shiftColumns(c, delta); err != nil {
			return nil, err
		}
	}
	return out, nil
}
