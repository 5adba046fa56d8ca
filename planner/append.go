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
}

var _ SplitPlanner = (*AppendPlanner)(nil)

// NewAppendPlanner returns the planner of a scan of the log table table.
// When the table has the lake enabled it asks admin for the readable lake
// snapshot, once; finding none is not an error. A bad
// scan.max-records-per-split in spec.Options is ErrInvalidOption naming it.
func NewAppendPlanner(ctx context.Context, admin Admin, table metadata.TableInfo, spec ScanSpec) (*AppendPlanner, error) {
	if table.HasPrimaryKey() {
		return nil, fmt.Errorf("%w: append planner for primary-key table %s", metadata.ErrUnsupported, table.Path)
	}
	maxRecords, err := maxRecordsPerSplit(spec.Options)
	if err != nil {
		return nil, err
	}
	base, err := newPlanBase(ctx, admin, table, spec)
	if err != nil {
		return nil, err
	}
	return &AppendPlanner{planBase: base, maxRecordsPerSplit: maxRecords}, nil
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

// Plan returns the splits of the scan. Log-only: per matching partition
// and non-empty bucket, one log split [log start, high watermark), cut
// into ranges by scan.max-records-per-split. The lake-union branch is not
// implemented yet and is ErrUnsupported.
func (p *AppendPlanner) Plan(ctx context.Context) ([]Split, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	if p.hasLake {
		return nil, fmt.Errorf("plan %s: %w: lake-union read is not implemented yet (lake snapshot %d)",
			p.table.Path, metadata.ErrUnsupported, p.lake.SnapshotID)
	}
	return p.planLog(ctx, p.maxRecordsPerSplit)
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
