package lakeunion

import (
	"github.com/flusslite/fluss/lake"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/planner"
	"github.com/flusslite/fluss/storage"
)

// ReadStats counts what a storage or lake reader read and skipped:
// record batches (log batches, KV snapshot batches), Parquet row groups,
// and the rows it returned. It is storage.ReadStats; lake.ReadStats has
// its shape and is converted.
type ReadStats = storage.ReadStats

// statsOf returns the counts of a reader (a storage or lake reader, a
// split reader of this package), or zero when it keeps none.
func statsOf(r any) ReadStats {
	switch sr := r.(type) {
	case interface{ Stats() ReadStats }:
		return sr.Stats()
	case interface{ Stats() lake.ReadStats }:
		return ReadStats(sr.Stats())
	}
	return ReadStats{}
}

// SplitStats is what a Scan read for one split. The counts of batches and
// row groups come from the split's storage and lake readers (zero where
// they keep none); Rows counts the rows the split's reader yielded to the
// scan, after any merge.
type SplitStats struct {
	Split  planner.Split
	Kind   string // Split.Kind(): "log", "kv+log", "lake", "lake+log"
	Bucket metadata.TableBucket
	// Opened: the split was opened. With a limit, or after an error or
	// an early Close, later splits may never be.
	Opened bool
	// Batches and BatchesSkipped are the record batches read and skipped
	// by their statistics (log batches, KV snapshot batches).
	Batches, BatchesSkipped int64
	// RowGroups and RowGroupsSkipped are the lake's Parquet row groups
	// read and skipped.
	RowGroups, RowGroupsSkipped int64
	// RowsRead is the rows the storage readers decoded; Rows is the rows
	// the split yielded.
	RowsRead, Rows int64
}

func (s *SplitStats) addRead(r ReadStats) {
	s.Batches += r.Batches
	s.BatchesSkipped += r.BatchesSkipped
	s.RowGroups += r.RowGroups
	s.RowGroupsSkipped += r.RowGroupsSkipped
	s.RowsRead += r.Rows
}

// Stats of the split readers: each sums the storage readers it owns,
// open or already closed.

// Stats sums the counts of the stream's storage reader.
func (r *streamReader) Stats() ReadStats {
	if r.in == nil {
		return ReadStats{}
	}
	return statsOf(unwrapStream(r.in))
}

// unwrapStream returns the storage reader behind a recordStream adapter.
func unwrapStream(in recordStream) any {
	switch s := in.(type) {
	case logStream:
		return s.LogBatchReader
	case kvStream:
		return s.KvBatchReader
	}
	return in
}

// Stats sums the counts of the merge's base and of its tail's log reads.
func (r *mergeReader) Stats() ReadStats {
	s := r.baseStats.Add(r.tailStats)
	if r.snap != nil {
		s = s.Add(statsOf(r.snap))
	}
	return s
}

// Stats is the counts of the changelog's log read.
func (r *changelogReader) Stats() ReadStats { return statsOf(r.lr) }

// Stats forwards the lake's counts.
func (s sortedLakeReader) Stats() ReadStats { return statsOf(s.r) }
