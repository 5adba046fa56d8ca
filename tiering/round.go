package tiering

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage"
)

// bucketKey names a bucket in the lake: by partition name, as manifests
// do ("" without partitions).
type bucketKey struct {
	partition string
	bucket    int32
}

// part is a live partition of the engine (the whole table when it has no
// partitions).
type part struct {
	info metadata.PartitionInfo // ID NonPartitioned and no name without partitions
}

// round is one tiering round of a table.
type round struct {
	s       *Service
	ctx     context.Context
	info    *metadata.TableInfo
	prev    lake.Manifest
	id      int64     // the snapshot id this round commits
	started time.Time // the round's start, for rows without a commit time

	prevFiles   map[bucketKey][]metadata.LakeFile
	prevOffsets map[bucketKey]lake.TieredOffset

	// Written by the round: the files to abandon when it fails.
	written []metadata.LakeFile
}

// bucketResult is what a round decided for one live bucket.
type bucketResult struct {
	files   []metadata.LakeFile
	undo    []metadata.LakeFile // a primary-key bucket's undo files
	offset  int64
	changed bool
}

// round runs one round of the table; the caller holds its lock.
func (s *Service) round(ctx context.Context, info *metadata.TableInfo) (int64, error) {
	if h := s.hooks.beforeRound; h != nil {
		h(info)
	}
	prev, err := s.reconcile(ctx, info)
	if err != nil {
		return 0, err
	}
	r := &round{
		s: s, ctx: ctx, info: info, prev: prev, id: prev.SnapshotID + 1, started: s.opts.Now(),
		prevFiles:   map[bucketKey][]metadata.LakeFile{},
		prevOffsets: map[bucketKey]lake.TieredOffset{},
	}
	for _, f := range prev.Files {
		k := bucketKey{f.PartitionName, f.Bucket}
		r.prevFiles[k] = append(r.prevFiles[k], f)
	}
	for _, t := range prev.TieredOffsets {
		r.prevOffsets[bucketKey{t.PartitionName, t.Bucket}] = t
	}
	id, err := r.run()
	if err != nil {
		return 0, fmt.Errorf("tier %s: %w", info.Path, err)
	}
	return id, nil
}

// plan lists the live partitions and each bucket's log start offset and
// high watermark, the round's stop offsets. A partition dropped between
// the calls makes it list again.
func (r *round) plan() (parts []part, earliest, latest map[metadata.TableBucket]int64, err error) {
	for attempt := 0; ; attempt++ {
		parts = parts[:0]
		if r.info.IsPartitioned() {
			ps, err := r.s.eng.ListPartitions(r.ctx, r.info.Path)
			if err != nil {
				return nil, nil, nil, err
			}
			for _, p := range ps {
				parts = append(parts, part{info: p})
			}
		} else {
			parts = append(parts, part{info: metadata.PartitionInfo{ID: metadata.NonPartitioned}})
		}
		var tbs []metadata.TableBucket
		for _, p := range parts {
			for b := range r.info.NumBuckets {
				tbs = append(tbs, metadata.TableBucket{TableID: r.info.TableID, PartitionID: p.info.ID, Bucket: int32(b)})
			}
		}
		latest, err = r.s.eng.ListOffsets(r.ctx, tbs, metadata.OffsetLatest)
		if err == nil {
			earliest, err = r.s.eng.ListOffsets(r.ctx, tbs, metadata.OffsetEarliest)
		}
		if err == nil || !errors.Is(err, metadata.ErrNotFound) || attempt >= 3 {
			return parts, earliest, latest, err
		}
	}
}

func (r *round) run() (id int64, err error) {
	defer func() {
		if err != nil {
			r.abandon()
		}
	}()
	parts, earliest, latest, err := r.plan()
	if err != nil {
		return 0, err
	}
	next := lake.Manifest{SnapshotID: r.id, TableID: r.info.TableID}
	if r.info.HasPrimaryKey() {
		next.Layout = lake.LayoutUndo
	}
	changed := false
	liveNames := map[string]bool{}
	for _, p := range parts {
		liveNames[p.info.Name] = true
	}
	// Partitions only the lake still has (dropped in the engine) keep
	// their files and tiered offsets: readers find them by name.
	for k, files := range r.prevFiles {
		if !liveNames[k.partition] {
			next.Files = append(next.Files, files...)
		}
	}
	for k, t := range r.prevOffsets {
		if !liveNames[k.partition] {
			next.TieredOffsets = append(next.TieredOffsets, t)
		}
	}
	for _, p := range parts {
		for b := range r.info.NumBuckets {
			if err := r.ctx.Err(); err != nil {
				return 0, err
			}
			tb := metadata.TableBucket{TableID: r.info.TableID, PartitionID: p.info.ID, Bucket: int32(b)}
			res, err := r.tierBucket(p, tb, earliest[tb], latest[tb])
			if err != nil {
				return 0, fmt.Errorf("%s: %w", describeBucket(p, tb), err)
			}
			changed = changed || res.changed
			next.Files = append(next.Files, res.files...)
			next.Undo = append(next.Undo, res.undo...)
			next.TieredOffsets = append(next.TieredOffsets, lake.TieredOffset{PartitionID: p.info.ID, PartitionName: p.info.Name, Bucket: tb.Bucket, Offset: res.offset})
		}
	}
	if !changed {
		return r.prev.SnapshotID, nil
	}
	slices.SortFunc(next.TieredOffsets, func(a, b lake.TieredOffset) int {
		return cmp.Or(cmp.Compare(a.PartitionName, b.PartitionName), cmp.Compare(a.Bucket, b.Bucket))
	})
	next.CommittedAt = r.s.opts.Now()
	// Phase 1: the lake's manifest. From here the snapshot exists; a
	// crash before phase 2 is repaired by Recover (or the next round).
	if err := r.s.lk.Commit(r.ctx, next); err != nil {
		return 0, fmt.Errorf("commit lake snapshot %d: %w", r.id, err)
	}
	r.written = nil
	if r.s.hooks.skipPhase2 {
		return r.id, nil
	}
	// Phase 2: the engine's record. Not bound to the round's context: a
	// committed manifest should be recorded even when the caller gave up.
	if h := r.s.hooks.beforeRecord; h != nil {
		h(r.info)
	}
	if err := r.s.eng.CommitLakeSnapshot(context.WithoutCancel(r.ctx), r.info.Path, engineSnapshot(r.info.TableID, next)); err != nil {
		if r.s.eng.DroppedTable(r.info.TableID) {
			// No recovery records a snapshot of a dropped table; the
			// caller removes its lake (droppedDuringRound).
			return 0, fmt.Errorf("record lake snapshot %d: %w", r.id, err)
		}
		return 0, fmt.Errorf("record lake snapshot %d (committed to the lake; recovery records it): %w", r.id, err)
	}
	r.s.expire(r.ctx, r.info, r.id)
	return r.id, nil
}

func describeBucket(p part, tb metadata.TableBucket) string {
	if p.info.Name == "" {
		return fmt.Sprintf("bucket %d", tb.Bucket)
	}
	return fmt.Sprintf("partition %s bucket %d", p.info.Name, tb.Bucket)
}

// abandon logs the files of a failed round: no manifest lists them, so
// they are garbage (the lake names later files around them).
func (r *round) abandon() {
	for _, f := range r.written {
		r.s.opts.Logger.Warn("abandoned a lake file of a failed tiering round", "table", r.info.Path.String(), "file", f.Path)
	}
	r.written = nil
}

// previous returns a bucket's tiered offset and files in the previous
// snapshot. A tiered offset recorded for another partition of the same
// name (dropped and re-created since) does not count: the live partition
// is tiered from its log start. That older partition's files stay, as
// readers see them: the lake keeps what it was given, under the
// partition's name, and the new partition adds to it.
func (r *round) previous(p part, b int32) (lake.TieredOffset, []metadata.LakeFile, bool) {
	k := bucketKey{p.info.Name, b}
	t, ok := r.prevOffsets[k]
	if !ok || t.PartitionID != p.info.ID {
		return lake.TieredOffset{}, r.prevFiles[k], false
	}
	return t, r.prevFiles[k], true
}

// tierBucket tiers one live bucket: [start, stop) of its log, where stop
// is the high watermark the round started with.
func (r *round) tierBucket(p part, tb metadata.TableBucket, logStart, stop int64) (bucketResult, error) {
	prev, files, tiered := r.previous(p, tb.Bucket)
	start := logStart
	if tiered {
		if prev.Offset >= stop {
			// Nothing new (an offset past the high watermark means the log
			// lost a tail the lake holds: keep the lake's word).
			return bucketResult{files: files, offset: prev.Offset}, nil
		}
		start = prev.Offset
		if start < logStart {
			r.s.opts.Logger.Error("log below the tiered offset was removed before it was tiered", "table", r.info.Path.String(), "bucket", tb.String(), "tiered", start, "log_start", logStart)
			start = logStart
		}
	}
	if r.info.HasPrimaryKey() {
		return r.tierKeyBucket(p, tb, files, tiered, start, stop)
	}
	// A bucket not tiered before gets its first tiered offset: a change
	// even without rows.
	res := bucketResult{files: files, offset: stop, changed: !tiered}
	if start >= stop {
		return res, nil
	}
	sink := r.newSink(p, tb.Bucket)
	if err := r.copyLog(sink, tb, start, stop); err != nil {
		sink.abort()
		return bucketResult{}, err
	}
	added, err := sink.finish()
	if err != nil {
		return bucketResult{}, err
	}
	res.files = append(slices.Clone(files), added...)
	res.changed = true
	if res.files, _, err = r.compactLog(p, tb.Bucket, res.files); err != nil {
		return bucketResult{}, err
	}
	return res, nil
}

// sysSchema returns the schema of the records FileWriter takes: the table's
// columns, then the lake system columns.
func sysSchema(info *metadata.TableInfo) *arrow.Schema {
	cols := append(slices.Clone(info.Schema.Columns), systemColumns...)
	return metadata.ArrowSchema(cols)
}

var systemColumns = []metadata.Column{
	{Name: metadata.LakeBucketColumn, Type: metadata.IntType(), NotNull: true},
	{Name: metadata.LakeOffsetColumn, Type: metadata.BigIntType(), NotNull: true},
	{Name: metadata.LakeTimestampColumn, Type: metadata.TimestampLTZType(3), NotNull: true},
}

// copyLog writes the rows of [start, stop) of a log table's bucket with
// their system columns: the bucket, the row's log offset, and its batch's
// commit time.
func (r *round) copyLog(sink *sink, tb metadata.TableBucket, start, stop int64) error {
	lr, err := r.s.eng.ReadLog(r.ctx, tb, start, stop, storage.ReadOptions{})
	if err != nil {
		return err
	}
	defer lr.Close()
	schema := sysSchema(r.info)
	mem := r.s.opts.Allocator
	tsType := systemColumns[2].Type.ArrowType().(*arrow.TimestampType)
	for lr.Next() {
		b := lr.Batch()
		n := int(b.Record.NumRows())
		bb := array.NewInt32Builder(mem)
		ob := array.NewInt64Builder(mem)
		tsb := array.NewTimestampBuilder(mem, tsType)
		for i := range n {
			bb.Append(tb.Bucket)
			ob.Append(b.BaseOffset + int64(i))
			tsb.Append(arrow.Timestamp(b.CommitTimestamp))
		}
		sys := []arrow.Array{bb.NewArray(), ob.NewArray(), tsb.NewArray()}
		bb.Release()
		ob.Release()
		tsb.Release()
		cols := append(slices.Clone(b.Record.Columns()), sys...)
		rec := array.NewRecordBatch(schema, cols, int64(n))
		for _, a := range sys {
			a.Release()
		}
		err := sink.write(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return lr.Err()
}

// sink writes one bucket's new files, starting a new file whenever the
// current one is full.
type sink struct {
	r      *round
	p      part
	bucket int32
	undo   bool // writes undo files (lake.Manifest.Undo)
	w      *lake.FileWriter
	files  []metadata.LakeFile
}

func (r *round) newSink(p part, bucket int32) *sink { return &sink{r: r, p: p, bucket: bucket} }

func (s *sink) write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if s.w == nil {
		open := s.r.s.lk.NewFileWriter
		if s.undo {
			open = s.r.s.lk.NewUndoFileWriter
		}
		w, err := open(s.r.info, s.p.info.Name, s.p.info.Values, s.bucket, s.r.id)
		if err != nil {
			return err
		}
		s.w = w
	}
	if err := s.w.Write(rec); err != nil {
		return err
	}
	if s.w.Full() {
		return s.closeFile()
	}
	return nil
}

func (s *sink) closeFile() error {
	w := s.w
	s.w = nil
	f, err := w.Close()
	if err != nil {
		return err
	}
	s.files = append(s.files, f)
	s.r.written = append(s.r.written, f)
	return nil
}

// finish closes the open file and returns every file written. A nil
// sink wrote none.
func (s *sink) finish() ([]metadata.LakeFile, error) {
	if s == nil {
		return nil, nil
	}
	if s.w != nil {
		if err := s.closeFile(); err != nil {
			return nil, err
		}
	}
	return s.files, nil
}

func (s *sink) abort() {
	if s != nil && s.w != nil {
		s.w.Abort()
		s.w = nil
	}
}
