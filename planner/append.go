package planner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// AppendPlanner plans a batch scan of a log table. It is created with
// NewAppendPlanner, which probes the lake once; Plan may then be called
// any number of times, each reading the current high watermarks. It holds
// no resources, but should be closed by its creator; Close is idempotent.
// Not safe for concurrent use.
type AppendPlanner struct {
	planBase
	// maxRecordsPerSplit cuts long log ranges; 0 leaves them whole.
	maxRecordsPerSplit int64
	// readOptimized reads the lake files alone in the lake-union branch.
	readOptimized bool
}

var _ SplitPlanner = (*AppendPlanner)(nil)

// NewAppendPlanner returns the planner of a scan of the log table table.
// When the table has the lake enabled it asks admin for the readable lake
// snapshot, once; finding none is not an error. Its lake-union branch
// needs the lake source given by WithLake. A bad
// scan.max-records-per-split or read.optimized in spec.Options is
// ErrInvalidOption naming it.
func NewAppendPlanner(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec, opts ...Option) (*AppendPlanner, error) {
	if table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: append planner for primary-key table %s", metadata.ErrUnsupported, table.Path)
	}
	if err := checkNotIncremental(spec.Options); err != nil {
		return nil, err
	}
	if err := checkNoStartup(spec.Options, "a batch read of "+table.Path.String()+" reads the whole table"); err != nil {
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
	base, err := newPlanBase(ctx, admin, table, spec, opts)
	if err != nil {
		return nil, err
	}
	return &AppendPlanner{planBase: base, maxRecordsPerSplit: maxRecords, readOptimized: ro}, nil
}

// maxRecordsPerSplit reads scan.max-records-per-split: a non-negative
// integer, 0 (or absent) for no limit.
func maxRecordsPerSplit(opts map[string]string) (int64, error) {
	v, ok := opts[OptMaxRecordsPerSplit]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s = %q: want a non-negative integer", metadata.ErrInvalidOption, OptMaxRecordsPerSplit, v)
	}
	return n, nil
}

// ScanType is LakeAppend when the probe found a readable lake snapshot,
// else Append.
func (p *AppendPlanner) ScanType() ScanType {
	if p.hasLake {
		return TypeLakeAppend
	}
	return TypeAppend
}

// Plan returns the splits of the scan. With WithLakeOnly (t$lake): the
// lake splits of the probed snapshot alone, or none.
//
// Log-only: per matching partition and non-empty bucket, one log split
// [log start, high watermark), cut into ranges by
// scan.max-records-per-split.
//
// Lake-union: per partition and bucket, one lake split of its lake files
// (if the lake source planned any) and one log split of its tail
// [tiered offset, high watermark) when that is not empty; a bucket without
// a tiered offset (in a partition created after the snapshot, say) reads
// its log from the log start. The tail starts at the tiered offset even
// when pushdown pruned every lake file of the bucket: the rows below it
// are in the lake, and the pruned files held none that match (Fluss
// issue #4325 restarted such partitions from the log start). Partitions
// only in the lake (dropped in the engine) that match the partition filter
// are read from the lake alone, with synthetic ids
// (FirstLakeOnlyPartitionID down). scan.max-records-per-split does not
// cut tails. With read.optimized the lake files are read alone, without
// tails. The order: partitions in typed value order, then bucket, the
// lake split before the tail.
func (p *AppendPlanner) Plan(ctx context.Context) ([]Split, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if p.lakeOnly {
		return p.planLakeOnly(ctx)
	}
	if p.hasLake {
		return p.dropSplitsOfDropped(p.planLakeUnion(ctx))
	}
	return p.dropSplitsOfDropped(p.planLog(ctx, p.maxRecordsPerSplit))
}

func (p *AppendPlanner) planLakeUnion(ctx context.Context) ([]Split, error) {
	lp, err := p.planLake(ctx)
	if err != nil {
		return nil, err
	}
	var starts, stops map[metadata.TableBucket]int64
	if !p.readOptimized {
		live := p.liveBuckets(&lp)
		if stops, err = p.offsets(ctx, live, metadata.OffsetLatest); err != nil {
			return nil, err
		}
		var fromStart []metadata.TableBucket
		for _, tb := range live {
			if _, ok := p.tiered(tb); !ok {
				fromStart = append(fromStart, tb)
			}
		}
		if starts, err = p.offsets(ctx, fromStart, metadata.OffsetEarliest); err != nil {
			return nil, err
		}
	}
	var splits []Split
	for _, part := range lp.parts {
		for _, bk := range lp.bucketIDs(part, p.table.NumBuckets, p.readsBucket) {
			tb := metadata.TableBucket{TableID: p.table.TableID, PartitionID: part.id, Bucket: bk}
			if files := lp.files[lakeKey{part.name, bk}]; len(files) > 0 {
				splits = append(splits, &LakeSplit{TableBucket: tb, Partition: part.name, Files: files})
			}
			if part.lakeOnly || p.readOptimized {
				continue
			}
			start, ok := p.tiered(tb)
			if !ok {
				start = starts[tb]
			}
			if start < stops[tb] {
				splits = append(splits, &LogSplit{TableBucket: tb, Partition: part.name, StartOffset: start, StopOffset: stops[tb]})
			}
		}
	}
	return splits, nil
}

// splitRange cuts [start, stop) into ranges of at most maxRecords records:
// a range of R > maxRecords records becomes n = ceil(R/maxRecords) ranges
// of ceil(R/n) records (the last one shorter), which spreads the records
// more evenly than cutting maxRecords at a time. An empty range gives
// nothing; maxRecords <= 0 leaves the range whole.
func splitRange(start, stop, maxRecords int64) [][2]int64 {
	if start >= stop {
		return nil
	}
	r := stop - start
	if maxRecords <= 0 || r <= maxRecords {
		return [][2]int64{{start, stop}}
	}
	n := ceilDiv(r, maxRecords)
	step := ceilDiv(r, n)
	out := make([][2]int64, 0, n)
	for s := start; s < stop; {
		e := stop
		if stop-s > step {
			e = s + step
		}
		out = append(out, [2]int64{s, e})
		s = e
	}
	return out
}

// ceilDiv is ceil(a/b) for a, b > 0, without overflowing near MaxInt64.
func ceilDiv(a, b int64) int64 { return (a-1)/b + 1 }
