package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// Batches are cut at this many rows, or when their estimated size passes
// maxBatchBytes, whichever comes first; both keep a batch far below what
// a reader accepts (logformat.MaxUncompressedBody).
const (
	maxBatchRows  = 1 << 16
	maxBatchBytes = 32 << 20
)

// routedRows are a statement's rows, checked and coerced, with where each
// goes.
type routedRows struct {
	values     [][]any
	partitions []string // per row: partition name; nil when unpartitioned
	partValues map[string][]string
	buckets    []int // per row: bucket, or -1 for round-robin
}

// Append appends full rows (schema column order) to a log table and
// returns how many were written. Every row is checked and coerced before
// anything is written. Per bucket the statement is one record batch (or a
// few, when very large), and it becomes visible in every bucket at once:
// the batches are written (and fsynced when Sync) before any high
// watermark moves.
func (e *Engine) Append(ctx context.Context, path metadata.TablePath, rows [][]any) (int64, error) {
	if f := e.failed.Load(); f != nil {
		return 0, fmt.Errorf("%w: an earlier write failed: %w", metadata.ErrReadOnly, *f)
	}
	for attempt := 0; ; attempt++ {
		cat, err := e.readLock()
		if err != nil {
			return 0, err
		}
		entry, err := cat.table(path)
		e.mu.RUnlock()
		if err != nil {
			return 0, err
		}
		if entry.Info.HasPrimaryKey() {
			return 0, fmt.Errorf("%w: table %s has a primary key: appends are for log tables", metadata.ErrUnsupported, path)
		}
		routed, err := routeRows(&entry.Info, rows, nil)
		if err != nil {
			return 0, err
		}
		n, retry, err := e.appendRouted(ctx, path, entry.Info.TableID, entry.Info.SchemaID, routed)
		if !retry || attempt >= 5 {
			return n, err
		}
	}
}

// appendRouted writes routed rows, creating missing partitions first.
// retry is true when the table changed under it (dropped, recreated,
// altered, or a new partition dropped at once).
func (e *Engine) appendRouted(ctx context.Context, path metadata.TablePath, tableID int64, schemaID int32, routed routedRows) (n int64, retry bool, err error) {
	retry, err = e.withPartitions(ctx, path, tableID, schemaID, routed.partValues, true, func(entry *tableEntry) error {
		n, err = e.writeLocked(entry, routed)
		return err
	})
	return n, retry, err
}

// withPartitions runs write with the shared lock held, once the table
// still is the one the rows were routed for and, when create, every
// partition of partValues exists (missing ones are created and persisted
// first). retry is true when the table changed under it.
func (e *Engine) withPartitions(ctx context.Context, path metadata.TablePath, tableID int64, schemaID int32, partValues map[string][]string, create bool, write func(*tableEntry) error) (retry bool, err error) {
	for range 3 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		cat, err := e.readLock()
		if err != nil {
			return false, err
		}
		entry, err := cat.table(path)
		if err != nil || entry.Info.TableID != tableID || entry.Info.SchemaID != schemaID {
			e.mu.RUnlock()
			return err == nil, err
		}
		var missing [][]string
		if create {
			for name, vals := range partValues {
				if _, ok := entry.partitionByName(name); !ok {
					missing = append(missing, vals)
				}
			}
		}
		if len(missing) == 0 {
			err := write(entry)
			e.mu.RUnlock()
			return false, err
		}
		e.mu.RUnlock()
		// Dynamic partitions: created (and persisted) before the write.
		slices.SortFunc(missing, func(a, b []string) int { return slices.Compare(a, b) })
		if err := e.writeLock(); err != nil {
			return false, err
		}
		if t, err := e.mu.cat.table(path); err != nil || t.Info.TableID != tableID {
			e.mu.Unlock()
			return err == nil, err
		}
		_, err = e.addPartitionsLocked(tableID, missing)
		e.mu.Unlock()
		if err != nil {
			return false, err
		}
	}
	return true, fmt.Errorf("partitions of %s keep changing under the write", path)
}

// routeRows checks and coerces every row and computes its partition and
// bucket. Errors name the row (1-based), the column and the value. only,
// when not nil, lists the columns to read: the others are set to NULL
// unchecked (a partial update, or the key of a delete).
func routeRows(info *metadata.TableInfo, rows [][]any, only []int) (routedRows, error) {
	cols := info.Schema.Columns
	var skip []bool
	if only != nil {
		skip = make([]bool, len(cols))
		for i := range skip {
			skip[i] = true
		}
		for _, c := range only {
			skip[c] = false
		}
	}
	out := routedRows{values: make([][]any, len(rows)), buckets: make([]int, len(rows))}
	partIdx := info.PartitionKeyIndexes()
	bucketIdx := info.BucketKeyIndexes()
	var bucketTypes []metadata.DataType
	for _, i := range bucketIdx {
		bucketTypes = append(bucketTypes, cols[i].Type)
	}
	if len(partIdx) > 0 {
		out.partitions = make([]string, len(rows))
		out.partValues = map[string][]string{}
	}
	keyVals := make([]any, len(bucketIdx))
	for r, row := range rows {
		if len(row) != len(cols) {
			return routedRows{}, fmt.Errorf("%w: row %d has %d values, table %s has %d columns", metadata.ErrInvalidValue, r+1, len(row), info.Path, len(cols))
		}
		vals := make([]any, len(cols))
		for c, col := range cols {
			if skip != nil && skip[c] {
				continue
			}
			v, err := metadata.CoerceValue(col.Type, row[c])
			if err != nil {
				return routedRows{}, fmt.Errorf("row %d, column %s, value %s: %w", r+1, col.Name, showValue(row[c]), err)
			}
			if v == nil && col.NotNull {
				return routedRows{}, fmt.Errorf("%w: row %d, column %s: NULL in a NOT NULL column", metadata.ErrConstraint, r+1, col.Name)
			}
			vals[c] = v
		}
		out.values[r] = vals
		if len(partIdx) > 0 {
			pv := make([]string, len(partIdx))
			for k, c := range partIdx {
				s, err := metadata.PartitionValueString(cols[c].Type, vals[c])
				if err != nil {
					if vals[c] == nil {
						err = fmt.Errorf("%w: %w", metadata.ErrConstraint, err)
					}
					return routedRows{}, fmt.Errorf("row %d, partition key %s, value %s: %w", r+1, cols[c].Name, showValue(row[c]), err)
				}
				pv[k] = s
			}
			name := metadata.PartitionName(pv)
			out.partitions[r] = name
			if _, ok := out.partValues[name]; !ok {
				out.partValues[name] = pv
			}
		}
		out.buckets[r] = -1
		if len(bucketIdx) > 0 {
			for k, c := range bucketIdx {
				keyVals[k] = vals[c]
			}
			key, err := metadata.EncodeKey(bucketTypes, keyVals)
			if err != nil {
				if slices.Contains(keyVals, nil) {
					err = fmt.Errorf("%w: %w", metadata.ErrConstraint, err)
				}
				return routedRows{}, fmt.Errorf("row %d, bucket key %s: %w", r+1, strings.Join(info.BucketKeys, ", "), err)
			}
			out.buckets[r] = metadata.BucketOf(key, info.NumBuckets)
		}
	}
	return out, nil
}

// showValue renders a user value for an error message, shortened.
func showValue(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		s = fmt.Sprintf("%q", x)
	case []byte:
		s = fmt.Sprintf("x'%x'", x)
	default:
		s = fmt.Sprintf("%v", x)
	}
	if len(s) > 64 {
		s = s[:61] + "..."
	}
	return s
}

// bucketWrite is one bucket's share of a statement.
type bucketWrite struct {
	tb      metadata.TableBucket
	rows    []int
	t       *logTablet
	batches [][]byte
	mark    tabletMark
}

// writeLocked encodes and appends a statement's rows. The caller holds
// mu shared and has made sure every partition exists.
func (e *Engine) writeLocked(entry *tableEntry, routed routedRows) (int64, error) {
	info := &entry.Info
	// Group the rows by bucket; keyless rows go round-robin, continuing
	// where the table's previous statement stopped.
	groups := map[metadata.TableBucket][]int{}
	var rr uint64
	if len(info.BucketKeys) == 0 && len(routed.values) > 0 {
		n := uint64(len(routed.values))
		rr = entry.roundRobin.Add(n) - n
	}
	for r := range routed.values {
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
		if routed.partitions != nil {
			p, _ := entry.partitionByName(routed.partitions[r])
			tb.PartitionID = p.ID
		}
		b := routed.buckets[r]
		if b < 0 {
			b = int((rr + uint64(r)) % uint64(info.NumBuckets))
		}
		tb.Bucket = int32(b)
		groups[tb] = append(groups[tb], r)
	}
	writes := make([]*bucketWrite, 0, len(groups))
	for tb, rows := range groups {
		writes = append(writes, &bucketWrite{tb: tb, rows: rows})
	}
	// One lock order for every writer: no deadlock between statements
	// touching the same buckets.
	slices.SortFunc(writes, func(a, b *bucketWrite) int {
		return cmp.Or(cmp.Compare(a.tb.PartitionID, b.tb.PartitionID), cmp.Compare(a.tb.Bucket, b.tb.Bucket))
	})
	for _, w := range writes {
		var err error
		if w.batches, err = e.encodeBatches(entry, routed.values, w.rows); err != nil {
			return 0, err
		}
		if w.t, err = e.tabletForWrite(w.tb); err != nil {
			return 0, err
		}
	}

	locked := slices.Clone(writes)
	for _, w := range locked {
		w.t.mu.Lock()
	}
	defer func() {
		for _, w := range locked {
			w.t.mu.Unlock()
		}
	}()
	if f := e.failed.Load(); f != nil {
		return 0, fmt.Errorf("%w: an earlier write failed: %w", metadata.ErrReadOnly, *f)
	}
	if err := e.appendAndSyncLocked(info, writes); err != nil {
		return 0, err
	}
	for _, w := range writes {
		w.t.hw.Store(w.t.mu.leo)
	}
	return int64(len(routed.values)), nil
}

// appendAndSyncLocked appends every write's batches and, with Sync,
// fsyncs them; the caller holds every write's tablet lock and advances
// the high watermarks afterwards. On failure everything written is rolled
// back; when the roll back or an fsync fails the engine refuses further
// writes.
func (e *Engine) appendAndSyncLocked(info *metadata.TableInfo, writes []*bucketWrite) error {
	now := time.Now().UnixMilli()
	written := map[*segment]bool{}
	rolled := map[*logTablet]bool{}
	var werr error
	for i, w := range writes {
		if w.t.mu.closed {
			werr = fmt.Errorf("log of %s: %w", w.tb, metadata.ErrClosed)
		}
		if werr != nil {
			writes = writes[:i]
			break
		}
		w.mark = w.t.markLocked()
		for _, b := range w.batches {
			logformat.SetCommitTimestamp(b, now)
			seg, err := w.t.appendLocked(b)
			if err != nil {
				werr = err
				break
			}
			written[seg] = true
			if seg.base >= w.mark.leo && seg.base > 0 {
				rolled[w.t] = true
			}
		}
	}
	durable := true
	if werr == nil && e.opts.Sync {
		for seg := range written {
			if err := seg.f.Sync(); err != nil {
				werr, durable = fmt.Errorf("sync %s: %w", seg.rel, err), false
				break
			}
		}
		for t := range rolled {
			if werr != nil {
				break
			}
			if err := e.fs.SyncDir(t.dir); err != nil {
				werr, durable = fmt.Errorf("sync %s: %w", t.rel, err), false
			}
		}
	}
	if werr != nil {
		e.rollbackLocked(info, writes, werr, !durable)
		return fmt.Errorf("append to %s: %w", info.Path, werr)
	}
	return nil
}

// rollbackLocked undoes the writes of a failed statement. When the roll
// back fails, or fail is set (the log's durability is unknown), the engine
// refuses further writes: the log may hold bytes no statement committed,
// or a failed fsync may have dropped dirty pages.
func (e *Engine) rollbackLocked(info *metadata.TableInfo, writes []*bucketWrite, cause error, fail bool) {
	var errs []error
	for _, w := range writes {
		if !w.t.mu.closed {
			errs = append(errs, w.t.rollbackLocked(w.mark))
		}
	}
	if rerr := errors.Join(errs...); rerr != nil || fail {
		failure := errors.Join(cause, rerr)
		e.failed.CompareAndSwap(nil, &failure)
		e.opts.Logger.Error("write failed; refusing further writes", "table", info.Path.String(), "err", failure)
	}
}

// encodeBatches encodes the given rows as one batch, or several when
// there are too many rows or bytes for one.
func (e *Engine) encodeBatches(entry *tableEntry, values [][]any, rows []int) ([][]byte, error) {
	var out [][]byte
	for start := 0; start < len(rows); {
		end, size := start, 0
		for end < len(rows) && end-start < maxBatchRows && (end == start || size < maxBatchBytes) {
			size += estimateRow(values[rows[end]])
			end++
		}
		b, err := e.encodeBatch(entry, values, rows[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		start = end
	}
	return out, nil
}

func (e *Engine) encodeBatch(entry *tableEntry, values [][]any, rows []int) ([]byte, error) {
	sel := make([][]any, len(rows))
	for i, r := range rows {
		sel[i] = values[r]
	}
	return e.encodeRows(entry, sel, nil)
}

// encodeRows encodes rows (full-schema, canonical values) as one record
// batch with statistics; changes, when not nil, holds a change type per
// row (a changelog batch of a primary-key table).
func (e *Engine) encodeRows(entry *tableEntry, rows [][]any, changes []byte) ([]byte, error) {
	info := &entry.Info
	rb := array.NewRecordBuilder(e.opts.Allocator, entry.arrow)
	defer rb.Release()
	for _, row := range rows {
		for c, v := range row {
			if err := metadata.AppendValue(rb.Field(c), entry.types[c], v); err != nil {
				return nil, fmt.Errorf("column %s: %w", info.Schema.Columns[c].Name, err)
			}
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	stats := make([]logformat.ColumnStats, len(entry.stats))
	for i, c := range entry.stats {
		s := logformat.ColumnStats{Column: c}
		for _, row := range rows {
			v := row[c]
			switch {
			case v == nil:
				s.NullCount++
			case s.Min == nil:
				s.Min, s.Max = v, v
			default:
				if metadata.Compare(v, s.Min) < 0 {
					s.Min = v
				}
				if metadata.Compare(v, s.Max) > 0 {
					s.Max = v
				}
			}
		}
		stats[i] = s
	}
	return logformat.EncodeBatch(nil, logformat.Batch{
		SchemaID:    int16(info.SchemaID),
		ChangeTypes: changes,
		Stats:       stats,
		Record:      rec,
	}, logformat.EncodeOptions{Types: entry.types, Compression: info.Config.Compression, Allocator: e.opts.Allocator})
}

// estimateRow approximates a row's encoded size, to bound batch sizes.
func estimateRow(row []any) int {
	n := 0
	for _, v := range row {
		n += estimateValue(v)
	}
	return n
}

func estimateValue(v any) int {
	switch x := v.(type) {
	case string:
		return 8 + len(x)
	case []byte:
		return 8 + len(x)
	case []any:
		n := 8
		for _, y := range x {
			n += estimateValue(y)
		}
		return n
	case metadata.MapValue:
		n := 8
		for i := range x.Keys {
			n += estimateValue(x.Keys[i]) + estimateValue(x.Values[i])
		}
		return n
	}
	return 16
}
