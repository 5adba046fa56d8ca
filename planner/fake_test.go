package planner_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/predicate"
)

// fakeAdmin is an in-memory Admin over one table. It counts the calls the
// planner makes, so tests can prove one lake probe and one batched
// ListOffsets call per offset kind.
type fakeAdmin struct {
	table      metadata.TableInfo
	partitions []metadata.PartitionInfo
	// start and hw are the log start offsets and high watermarks; a bucket
	// without an entry is empty (0, 0).
	start, hw map[metadata.TableBucket]int64
	// lake is returned by the probe when non-nil.
	lake     *metadata.LakeSnapshot
	probeErr error
	// drop lists buckets ListOffsets leaves out of its answer.
	drop map[metadata.TableBucket]bool
	// kv holds the latest KV snapshot of each bucket that has one.
	kv    map[metadata.TableBucket]metadata.KvSnapshot
	kvErr error
	// batches holds, per bucket, the base offset and commit timestamp of
	// its batches in log order, for OffsetsForTimestamp.
	batches map[metadata.TableBucket][]fakeBatch

	// dropAfterListing are partitions dropped right after the first
	// ListPartitions returned them: later calls about them are
	// ErrNotFound, and later listings leave them out. missing are
	// partitions whose offsets are ErrNotFound although they stay listed.
	dropAfterListing, missing []int64
	gone                      map[int64]bool

	probes, listPartitions, listOffsets, kvSnapshots, timestampOffsets int
}

// fakeBatch is a batch of a fake log: its base offset and commit time.
type fakeBatch struct{ offset, ts int64 }

var _ planner.Admin = (*fakeAdmin)(nil)

func newFakeAdmin(table metadata.TableInfo) *fakeAdmin {
	return &fakeAdmin{
		table: table,
		start: map[metadata.TableBucket]int64{},
		hw:    map[metadata.TableBucket]int64{},
		drop:  map[metadata.TableBucket]bool{},
		kv:    map[metadata.TableBucket]metadata.KvSnapshot{},

		batches: map[metadata.TableBucket][]fakeBatch{},
	}
}

func (f *fakeAdmin) TableInfo(_ context.Context, t metadata.TablePath) (metadata.TableInfo, error) {
	if t != f.table.Path {
		return metadata.TableInfo{}, fmt.Errorf("table %s: %w", t, metadata.ErrNotFound)
	}
	return f.table, nil
}

func (f *fakeAdmin) ListPartitions(_ context.Context, t metadata.TablePath) ([]metadata.PartitionInfo, error) {
	f.listPartitions++
	out := append([]metadata.PartitionInfo(nil), f.partitions...)
	if len(f.dropAfterListing) > 0 {
		f.gone = map[int64]bool{}
		for _, id := range f.dropAfterListing {
			f.gone[id] = true
		}
		f.partitions = slices.DeleteFunc(f.partitions, func(p metadata.PartitionInfo) bool { return f.gone[p.ID] })
		f.dropAfterListing = nil
	}
	return out, nil
}

func (f *fakeAdmin) notFound(tb metadata.TableBucket) error {
	if f.gone[tb.PartitionID] || slices.Contains(f.missing, tb.PartitionID) {
		return fmt.Errorf("%s: partition %d: %w", tb, tb.PartitionID, metadata.ErrNotFound)
	}
	return nil
}

func (f *fakeAdmin) ListOffsets(_ context.Context, buckets []metadata.TableBucket, spec metadata.OffsetSpec) (map[metadata.TableBucket]int64, error) {
	f.listOffsets++
	src := f.start
	if spec == metadata.OffsetLatest {
		src = f.hw
	}
	out := make(map[metadata.TableBucket]int64, len(buckets))
	for _, b := range buckets {
		if err := f.notFound(b); err != nil {
			return nil, err
		}
		if !f.drop[b] {
			out[b] = src[b]
		}
	}
	return out, nil
}

// OffsetsForTimestamp answers by a scan of the fake batches: the first
// below the high watermark committed at or after ts, else the high
// watermark.
func (f *fakeAdmin) OffsetsForTimestamp(_ context.Context, buckets []metadata.TableBucket, ts int64) (map[metadata.TableBucket]int64, error) {
	f.timestampOffsets++
	out := make(map[metadata.TableBucket]int64, len(buckets))
	for _, b := range buckets {
		if err := f.notFound(b); err != nil {
			return nil, err
		}
		if f.drop[b] {
			continue
		}
		out[b] = f.hw[b]
		for _, bt := range f.batches[b] {
			if bt.offset >= f.hw[b] {
				break
			}
			if bt.offset >= f.start[b] && bt.ts >= ts {
				out[b] = bt.offset
				break
			}
		}
	}
	return out, nil
}

func (f *fakeAdmin) LatestKvSnapshots(_ context.Context, t metadata.TablePath, part *metadata.PartitionInfo) (metadata.KvSnapshots, error) {
	f.kvSnapshots++
	if !f.table.HasPrimaryKey() {
		return metadata.KvSnapshots{}, fmt.Errorf("%w: kv snapshots of a log table", metadata.ErrUnsupported)
	}
	if f.kvErr != nil {
		return metadata.KvSnapshots{}, f.kvErr
	}
	if f.table.IsPartitioned() != (part != nil) {
		return metadata.KvSnapshots{}, fmt.Errorf("%w: partition %v of %s", metadata.ErrInvalidValue, part, t)
	}
	out := metadata.KvSnapshots{TableID: f.table.TableID, PartitionID: metadata.NonPartitioned,
		NumBuckets: f.table.NumBuckets, Buckets: map[int32]metadata.KvSnapshot{}}
	if part != nil {
		out.PartitionID = part.ID
		if err := f.notFound(metadata.TableBucket{TableID: f.table.TableID, PartitionID: part.ID}); err != nil {
			return metadata.KvSnapshots{}, err
		}
	}
	for tb, s := range f.kv {
		if tb.PartitionID == out.PartitionID {
			out.Buckets[tb.Bucket] = s
		}
	}
	return out, nil
}

func (f *fakeAdmin) ReadableLakeSnapshot(context.Context, metadata.TablePath) (metadata.LakeSnapshot, bool, error) {
	f.probes++
	if f.probeErr != nil {
		return metadata.LakeSnapshot{}, false, f.probeErr
	}
	if f.lake == nil {
		return metadata.LakeSnapshot{}, false, nil
	}
	s := *f.lake
	s.TieredOffsets = maps.Clone(s.TieredOffsets)
	return s, true, nil
}

// bucket returns the TableBucket of a bucket of the named partition ("-"
// or "" for a table without partitions).
func (f *fakeAdmin) bucket(partition string, b int32) (metadata.TableBucket, error) {
	tb := metadata.TableBucket{TableID: f.table.TableID, PartitionID: metadata.NonPartitioned, Bucket: b}
	if partition == "-" || partition == "" {
		return tb, nil
	}
	for _, p := range f.partitions {
		if p.Name == partition {
			tb.PartitionID = p.ID
			return tb, nil
		}
	}
	return tb, fmt.Errorf("unknown partition %q", partition)
}

func (f *fakeAdmin) resetCalls() {
	f.probes, f.listPartitions, f.listOffsets, f.kvSnapshots, f.timestampOffsets = 0, 0, 0, 0, 0
}

// fakeLakeFile is a lake file of the fake lake, with the range of its
// amount column (the only column its statistics cover).
type fakeLakeFile struct {
	file           metadata.LakeFile
	minAmt, maxAmt float64
	hasStats       bool
}

// fakeLake is an in-memory planner.LakeSource. It accepts the predicates
// that read the amount column only, prunes files by their amount range,
// and ignores the partition filter, so tests prove the planner's own
// partition pruning. It records what it was asked.
type fakeLake struct {
	table *metadata.TableInfo
	files []fakeLakeFile
	// calls
	plans      int
	snapshotID int64
	accepted   []predicate.P
}

var _ planner.LakeSource = (*fakeLake)(nil)

func (f *fakeLake) WithFilters(ps []predicate.P) (accepted, remaining []predicate.P) {
	amount := f.table.Schema.ColumnIndex("amount")
	for _, p := range ps {
		if cols := predicate.Columns(p); len(cols) == 1 && cols[0] == amount {
			accepted = append(accepted, p)
		} else {
			remaining = append(remaining, p)
		}
	}
	return accepted, remaining
}

func (f *fakeLake) Plan(_ context.Context, snapshotID int64, _ predicate.P, filters []predicate.P) ([]metadata.LakeFile, error) {
	f.plans++
	f.snapshotID, f.accepted = snapshotID, filters
	var out []metadata.LakeFile
	for _, lf := range f.files {
		st := fakeStats{rows: lf.file.RowCount, col: f.table.Schema.ColumnIndex("amount"), min: lf.minAmt, max: lf.maxAmt, ok: lf.hasStats}
		if predicate.MaybeTest(predicate.AndOf(filters...), st) {
			out = append(out, lf.file)
		}
	}
	return out, nil
}

// fakeStats are the statistics of one fake lake file.
type fakeStats struct {
	rows     int64
	col      int
	min, max float64
	ok       bool
}

func (s fakeStats) RowCount() int64 { return s.rows }
func (s fakeStats) Min(c int) (any, bool) {
	return s.min, s.ok && c == s.col
}
func (s fakeStats) Max(c int) (any, bool) {
	return s.max, s.ok && c == s.col
}
func (s fakeStats) NullCount(c int) (int64, bool) { return 0, s.ok && c == s.col }
