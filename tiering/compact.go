package tiering

import (
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
)

// Compaction of a log table's lake. Each round adds a file per bucket it
// tiers, so a table tiered often collects many small files. Files below
// the table's table.datalake.compaction.target-file-size are grouped in
// size classes, each four times the one below (class 0 holds files up to
// compactBase); when a class holds compactMinFiles files, the round that
// tiers the bucket rewrites them into one, so a row is rewritten about
// once per class on its way to the target, not once per round. The new
// file holds the same rows with the same __offset and __timestamp; the
// round's manifest lists it instead of the files it replaces, which the
// snapshots before still list until they expire.
const (
	compactMinFiles = 4
	compactBase     = 64 << 10
)

// sizeClass is the compaction class of a file of size bytes.
func sizeClass(size int64) int {
	c := 0
	for limit := int64(compactBase); size > limit; limit *= 4 {
		c++
	}
	return c
}

// compactLog returns the files of a log table's bucket after compacting
// the smallest size class that has compactMinFiles files below the
// target, if any; compacted reports whether it did.
func (r *round) compactLog(p part, bucket int32, files []metadata.LakeFile) (out []metadata.LakeFile, compacted bool, err error) {
	target := r.info.Config.LakeTargetFileSize
	classes := map[int][]metadata.LakeFile{}
	for _, f := range files {
		if f.SizeBytes < target {
			c := sizeClass(f.SizeBytes)
			classes[c] = append(classes[c], f)
		}
	}
	var pick []metadata.LakeFile
	for _, c := range slices.Sorted(maps.Keys(classes)) {
		if len(classes[c]) >= compactMinFiles {
			pick = classes[c]
			break
		}
	}
	if pick == nil {
		return files, false, nil
	}
	// In offset order: files are named <snapshot id>-<n>.
	slices.SortFunc(pick, func(a, b metadata.LakeFile) int { return lake.CompareDataFiles(a.Path, b.Path) })
	all := make([]int, len(r.info.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	rd, err := r.s.lk.OpenFiles(r.ctx, r.info, pick, lake.ReadOptions{Projection: all, WithSystemColumns: true, Allocator: r.s.opts.Allocator})
	if err != nil {
		return nil, false, err
	}
	defer rd.Close()
	sink := r.newSink(p, bucket)
	schema := sysSchema(r.info)
	for rd.Next() {
		src := rd.Record()
		rec := array.NewRecordBatch(schema, src.Columns(), src.NumRows())
		err := sink.write(rec)
		rec.Release()
		if err != nil {
			sink.abort()
			return nil, false, err
		}
	}
	if err := rd.Err(); err != nil {
		sink.abort()
		return nil, false, err
	}
	written, err := sink.finish()
	if err != nil {
		return nil, false, err
	}
	gone := map[string]bool{}
	for _, f := range pick {
		gone[f.Path] = true
	}
	for _, f := range files {
		if !gone[f.Path] {
			out = append(out, f)
		}
	}
	return append(out, written...), true, nil
}
