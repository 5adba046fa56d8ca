package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/storage/internal/logformat"
)

// CanAppendRecord reports whether AppendRecord takes records for the
// table: a log table without partition or bucket keys whose every column
// has a type whose Arrow values need no checking (no CHAR/VARCHAR length,
// DECIMAL precision or nested type). Other tables take rows (Append).
func CanAppendRecord(info *metadata.TableInfo) bool {
	if info.HasPrimaryKey() || len(info.PartitionKeys) > 0 || len(info.BucketKeys) > 0 {
		return false
	}
	for _, c := range info.Schema.Columns {
		switch c.Type.Root {
		case metadata.Boolean, metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt,
			metadata.Float, metadata.Double, metadata.String, metadata.Bytes, metadata.Date,
			metadata.Timestamp, metadata.TimestampLTZ:
		default:
			return false
		}
	}
	return true
}

// AppendRecord appends the rows of rec to a log table that
// CanAppendRecord accepts, without turning them into rows: rec's columns
// must be the table's, in order, with their Arrow types. The record is cut
// into contiguous slices that go to the buckets in turn (where Append
// deals rows out one by one), each slice written as it is. Like Append it
// is one commit: visible in every bucket at once or not at all, also
// across a crash. The caller keeps ownership of rec.
func (e *Engine) AppendRecord(ctx context.Context, path metadata.TablePath, rec arrow.RecordBatch) (int64, error) {
	n, err := e.appendRecord(ctx, path, rec)
	if err == nil {
		// Counted after the engine's lock is released, as Commit's are:
		// the checkpoint it may write takes the lock again.
		e.noteCommit()
	}
	return n, err
}

func (e *Engine) appendRecord(ctx context.Context, path metadata.TablePath, rec arrow.RecordBatch) (int64, error) {
	if err := e.readOnlyErr(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cat, err := e.readLock()
	if err != nil {
		return 0, err
	}
	defer e.mu.RUnlock()
	entry, err := cat.table(path)
	if err != nil {
		return 0, err
	}
	info := &entry.Info
	if !CanAppendRecord(info) {
		return 0, fmt.Errorf("%w: table %s takes rows, not records (a key, a partition or a column type that needs checking)", metadata.ErrUnsupported, path)
	}
	if err := checkRecord(entry, rec); err != nil {
		return 0, err
	}
	n := rec.NumRows()
	if n == 0 {
		return 0, nil
	}
	chunks := recordChunks(rec, info.NumBuckets)
	rr := entry.roundRobin.Add(uint64(len(chunks))) - uint64(len(chunks))
	byBucket := map[metadata.TableBucket]*commitBucket{}
	var order []*commitBucket
	encoded, err := e.encodeChunks(entry, rec, chunks)
	if err != nil {
		return 0, err
	}
	for i := range chunks {
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned,
			Bucket: int32((rr + uint64(i)) % uint64(info.NumBuckets))}
		cb := byBucket[tb]
		if cb == nil {
			t, err := e.tabletForWrite(tb)
			if err != nil {
				return 0, err
			}
			cb = &commitBucket{bucketWrite: bucketWrite{tb: tb, t: t}, entry: entry}
			byBucket[tb] = cb
			order = append(order, cb)
		}
		cb.batches = append(cb.batches, encoded[i])
	}
	slices.SortFunc(order, func(a, b *commitBucket) int { return cmp.Compare(a.tb.Bucket, b.tb.Bucket) })
	for _, cb := range order {
		cb.t.mu.Lock()
	}
	defer func() {
		for _, cb := range order {
			cb.t.mu.Unlock()
		}
	}()
	if err := e.readOnlyErr(); err != nil {
		return 0, err
	}
	if err := e.applyLocked(path.String(), order, len(chunks), nil); err != nil {
		return 0, err
	}
	return n, nil
}

// checkRecord checks that rec has the table's columns, in order, with
// their Arrow types, and no NULL in a NOT NULL column.
func checkRecord(entry *tableEntry, rec arrow.RecordBatch) error {
	cols := entry.Info.Schema.Columns
	fields := rec.Schema().Fields()
	if len(fields) != len(cols) {
		return fmt.Errorf("%w: the record has %d columns, table %s has %d", metadata.ErrInvalidValue, len(fields), entry.Info.Path, len(cols))
	}
	for i, c := range cols {
		f := fields[i]
		if !strings.EqualFold(f.Name, c.Name) {
			return fmt.Errorf("%w: record column %d is %s, table %s's is %s", metadata.ErrInvalidValue, i+1, f.Name, entry.Info.Path, c.Name)
		}
		if want := entry.arrow.Field(i).Type; !arrow.TypeEqual(f.Type, want) {
			return fmt.Errorf("%w: column %s is %s in the record but %s in table %s", metadata.ErrInvalidValue, c.Name, f.Type, want, entry.Info.Path)
		}
		if c.NotNull && rec.Column(i).NullN() > 0 {
			return fmt.Errorf("%w: column %s: NULL in a NOT NULL column", metadata.ErrConstraint, c.Name)
		}
		if err := checkRange(rec.Column(i), c); err != nil {
			return err
		}
		// The row path refuses invalid UTF-8 value by value; a record is
		// checked whole, and the Parquet files it is tiered into must hold
		// UTF-8 for every engine that reads them.
		if r, err := metadata.CheckUTF8(rec.Column(i), c.Type); err != nil {
			return fmt.Errorf("row %d, column %s: %w", r+1, c.Name, err)
		}
	}
	return nil
}

// checkRange checks that a date or time column holds no value outside the
// range of its type: values order like the integers that hold them, so
// checking the smallest and the largest checks them all.
func checkRange(arr arrow.Array, c metadata.Column) error {
	var lo, hi int
	switch a := arr.(type) {
	case *array.Date32:
		lo, hi = orderedExtremes(a, a.Date32Values())
	case *array.Timestamp:
		lo, hi = orderedExtremes(a, a.TimestampValues())
	default:
		return nil
	}
	for _, r := range []int{lo, hi} {
		if r < 0 {
			continue
		}
		if _, err := metadata.CoerceValue(c.Type, metadata.ValueAt(arr, c.Type, r)); err != nil {
			return fmt.Errorf("row %d, column %s: %w", r+1, c.Name, err)
		}
	}
	return nil
}

// recordChunks cuts rec's rows into contiguous [start, end) ranges: at
// most one per bucket when they fit a batch, more when a slice would pass
// maxBatchRows or, by its average row size, maxBatchBytes. The cut is
// by rows, so a record that mixes very large and small rows can give a
// batch above maxBatchBytes; it stays far below what a reader accepts.
func recordChunks(rec arrow.RecordBatch, buckets int) [][2]int64 {
	n := rec.NumRows()
	size := recordBytes(rec)
	perRow := max(size/max(n, 1), 1)
	limit := min(int64(maxBatchRows), max(int64(maxBatchBytes)/perRow, 1))
	// Small records stay whole: a batch per bucket for a few rows costs
	// more than it spreads.
	const minChunk = 4096
	per := max(min((n+int64(buckets)-1)/int64(buckets), limit), min(minChunk, limit))
	var out [][2]int64
	for lo := int64(0); lo < n; lo += per {
		out = append(out, [2]int64{lo, min(lo+per, n)})
	}
	return out
}

// recordBytes approximates the bytes of rec's values.
func recordBytes(rec arrow.RecordBatch) int64 {
	var total int64
	for _, col := range rec.Columns() {
		switch a := col.(type) {
		case *array.String:
			total += int64(len(a.ValueBytes())) + 4*int64(a.Len())
		case *array.Binary:
			total += int64(len(a.ValueBytes())) + 4*int64(a.Len())
		default:
			total += 8 * int64(col.Len())
		}
	}
	return total
}

// encodeChunks encodes each chunk of rec as a batch, on up to GOMAXPROCS
// goroutines: the statistics and the serialisation are most of a bulk
// append's CPU time, and the chunks are independent.
func (e *Engine) encodeChunks(entry *tableEntry, rec arrow.RecordBatch, chunks [][2]int64) ([][]byte, error) {
	out := make([][]byte, len(chunks))
	errs := make([]error, len(chunks))
	workers := min(len(chunks), runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i, c := range chunks {
			if out[i], errs[i] = e.encodeRecord(entry, rec, c[0], c[1]); errs[i] != nil {
				return nil, errs[i]
			}
		}
		return out, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) {
					return
				}
				out[i], errs[i] = e.encodeRecord(entry, rec, chunks[i][0], chunks[i][1])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// encodeRecord encodes rows [lo, hi) of rec as one record batch with the
// statistics the row path would give them.
func (e *Engine) encodeRecord(entry *tableEntry, rec arrow.RecordBatch, lo, hi int64) ([]byte, error) {
	slice := rec.NewSlice(lo, hi)
	defer slice.Release()
	stats := make([]logformat.ColumnStats, len(entry.stats))
	for i, c := range entry.stats {
		stats[i] = arrayStats(slice.Column(c), entry.types[c], c)
	}
	dst := make([]byte, 0, recordBytes(slice)+4096)
	return logformat.EncodeBatch(dst, logformat.Batch{
		SchemaID: int16(entry.Info.SchemaID),
		Stats:    stats,
		Record:   slice,
	}, logformat.EncodeOptions{Types: entry.types, Compression: entry.Info.Config.Compression, Allocator: e.opts.Allocator})
}

// arrayStats is the min, max and null count of a column as columnStats
// computes them from rows: it finds the positions of the extremes with the
// array's own comparison (the order metadata.Compare gives the canonical
// values) and converts only those two.
func arrayStats(arr arrow.Array, t metadata.DataType, column int) logformat.ColumnStats {
	s := logformat.ColumnStats{Column: column, NullCount: int64(arr.NullN())}
	lo, hi := -1, -1
	switch a := arr.(type) {
	case *array.Int8:
		lo, hi = orderedExtremes(a, a.Int8Values())
	case *array.Int16:
		lo, hi = orderedExtremes(a, a.Int16Values())
	case *array.Int32:
		lo, hi = orderedExtremes(a, a.Int32Values())
	case *array.Int64:
		lo, hi = orderedExtremes(a, a.Int64Values())
	case *array.Float32:
		lo, hi = extremes(a, func(i int) float64 { return float64(a.Value(i)) }, metadata.CompareFloat)
	case *array.Float64:
		if a.NullN() == 0 {
			lo, hi = floatExtremes(a.Float64Values())
		} else {
			lo, hi = extremes(a, a.Value, metadata.CompareFloat)
		}
	case *array.String:
		if a.NullN() == 0 {
			lo, hi = stringExtremes(a)
		} else {
			lo, hi = extremes(a, a.Value, strings.Compare)
		}
	case *array.Date32:
		lo, hi = orderedExtremes(a, a.Date32Values())
	case *array.Timestamp:
		lo, hi = orderedExtremes(a, a.TimestampValues())
	default:
		// Booleans, bytes: through the canonical values.
		for i := range arr.Len() {
			v := metadata.ValueAt(arr, t, i)
			if v == nil {
				continue
			}
			if s.Min == nil || metadata.Compare(v, s.Min) < 0 {
				s.Min = v
			}
			if s.Max == nil || metadata.Compare(v, s.Max) > 0 {
				s.Max = v
			}
		}
		return s
	}
	if lo >= 0 {
		s.Min, s.Max = metadata.ValueAt(arr, t, lo), metadata.ValueAt(arr, t, hi)
	}
	return s
}

// extremes returns the positions of the first smallest and first largest
// non-null values of arr, or -1, -1 when all are null.
func extremes[T any](arr arrow.Array, value func(int) T, compare func(a, b T) int) (lo, hi int) {
	lo, hi = -1, -1
	var minV, maxV T
	nulls := arr.NullN() > 0
	for i := range arr.Len() {
		if nulls && arr.IsNull(i) {
			continue
		}
		v := value(i)
		if lo < 0 {
			lo, hi, minV, maxV = i, i, v, v
			continue
		}
		if compare(v, minV) < 0 {
			lo, minV = i, v
		}
		if compare(v, maxV) > 0 {
			hi, maxV = i, v
		}
	}
	return lo, hi
}

// orderedExtremes is extremes over the values of a fixed-width array of
// integers, which compare as Go compares them.
func orderedExtremes[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Timestamp](arr arrow.Array, vals []T) (lo, hi int) {
	if arr.NullN() > 0 {
		return extremes(arr, func(i int) T { return vals[i] }, cmp.Compare[T])
	}
	if len(vals) == 0 {
		return -1, -1
	}
	minV, maxV := vals[0], vals[0]
	lo, hi = 0, 0
	for i, v := range vals {
		if v < minV {
			lo, minV = i, v
		} else if v > maxV {
			hi, maxV = i, v
		}
	}
	return lo, hi
}

// floatExtremes is extremes over float64 values without nulls, in
// metadata.CompareFloat's order (NaN above every number), typed so the
// loop has no call per value.
func floatExtremes(vals []float64) (lo, hi int) {
	if len(vals) == 0 {
		return -1, -1
	}
	minV, maxV := vals[0], vals[0]
	for i, v := range vals {
		if v < minV || minV != minV && v == v {
			lo, minV = i, v
		}
		if v > maxV || v != v && maxV == maxV {
			hi, maxV = i, v
		}
	}
	return lo, hi
}

// stringExtremes is extremes over a string array without nulls.
func stringExtremes(a *array.String) (lo, hi int) {
	n := a.Len()
	if n == 0 {
		return -1, -1
	}
	minV, maxV := a.Value(0), a.Value(0)
	for i := 1; i < n; i++ {
		v := a.Value(i)
		if v < minV {
			lo, minV = i, v
		} else if v > maxV {
			hi, maxV = i, v
		}
	}
	return lo, hi
}
