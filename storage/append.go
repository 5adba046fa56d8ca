package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
// returns how many were written: a Commit of one write. Every row is
// checked and coerced before anything is written. Per bucket the
// statement is one record batch (or a few, when very large), and it
// becomes visible in every bucket at once, or not at all, also across a
// crash.
func (e *Engine) Append(ctx context.Context, path metadata.TablePath, rows [][]any) (int64, error) {
	res, err := e.Commit(ctx, []Write{{Path: path, Kind: WriteAppend, Rows: rows}})
	if err != nil {
		return 0, err
	}
	return res[0].RowsAffected, nil
}

// routeRows checks and coerces every row and computes its partition and
// bucket. Errors name the row (1-based), the column and the value. only,
// when not nil, lists the columns to read: the others are set to NULL
// unchecked (a partial update, or the key of a delete). trusted rows are
// full rows already checked against this table version (Write.Checked):
// they are routed as they are.
func routeRows(entry *tableEntry, rows [][]any, only []int, trusted bool) (routedRows, error) {
	info := &entry.Info
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
	partIdx, bucketIdx, bucketTypes := entry.partKey, entry.bucketKey, entry.bucketTypes
	if len(partIdx) > 0 {
		out.partitions = make([]string, len(rows))
		out.partValues = map[string][]string{}
	}
	// Scratch for the bucket key of each row: on the stack for the usual
	// short keys.
	var (
		keyArr  [4]any
		keyBuf  [64]byte
		keyVals = keyArr[:0]
	)
	if len(bucketIdx) > len(keyArr) {
		keyVals = make([]any, 0, len(bucketIdx))
	}
	keyVals = keyVals[:len(bucketIdx)]
	for r, row := range rows {
		if len(row) != len(cols) && !(len(row) < len(cols) && info.HadWidth(len(row))) {
			return routedRows{}, fmt.Errorf("%w: row %d has %d values, table %s has %d columns", metadata.ErrInvalidValue, r+1, len(row), info.Path, len(cols))
		}
		vals := make([]any, len(cols))
		for c, col := range cols {
			if skip != nil && skip[c] {
				continue
			}
			if c >= len(row) {
				// A row of an earlier schema (a write prepared before
				// ADD COLUMN) lacks the columns added since: NULL there,
				// as Fluss pads it, or the column's default.
				vals[c] = col.PadValue()
				continue
			}
			if trusted && (row[c] != nil || !col.NotNull) && canonicalKind(col.Type, row[c]) {
				vals[c] = row[c]
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
			key, err := metadata.AppendKey(keyBuf[:0], bucketTypes, keyVals)
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

// canonicalKind reports whether v (nil included) has the Go type that
// metadata.CoerceValue gives a scalar of type t: a value of a checked row
// (Write.Checked) of that kind is taken as it is; anything else, and every
// nested value, is coerced as usual, so a row that is not as promised
// still gets its error.
func canonicalKind(t metadata.DataType, v any) bool {
	switch v.(type) {
	case nil:
		return true
	case int64:
		return t.Root == metadata.BigInt // narrower integers need their range checked
	case float64:
		return t.Root == metadata.Double
	case string:
		return t.Root == metadata.String
	case bool:
		return t.Root == metadata.Boolean
	case metadata.DateValue:
		return t.Root == metadata.Date
	}
	return false
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

// encodeBatches encodes rows (and their change types, for a changelog)
// as one batch, or several when there are too many rows or bytes for one.
func (e *Engine) encodeBatches(entry *tableEntry, rows [][]any, changes []metadata.ChangeType) ([][]byte, error) {
	var out [][]byte
	for start := 0; start < len(rows); {
		end, size := start, 0
		for end < len(rows) && end-start < maxBatchRows && (end == start || size < maxBatchBytes) {
			size += estimateRow(rows[end])
			end++
		}
		var ct []metadata.ChangeType
		if changes != nil {
			ct = changes[start:end]
		}
		b, err := e.encodeRows(entry, rows[start:end], ct)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		start = end
	}
	return out, nil
}

// encodeRows encodes rows (full-schema, canonical values) as one record
// batch with statistics; changes, when not nil, holds a change type per
// row (a changelog batch of a primary-key table).
func (e *Engine) encodeRows(entry *tableEntry, rows [][]any, changes []metadata.ChangeType) ([]byte, error) {
	info := &entry.Info
	batch := logformat.Batch{SchemaID: int16(info.SchemaID), ChangeTypes: changes, Stats: columnStats(entry, rows)}
	opts := logformat.EncodeOptions{Types: entry.types, Compression: info.Config.Compression, Allocator: e.opts.Allocator}
	if entry.rowEnc != nil {
		// Straight from the rows; a value the encoder does not take
		// goes the Arrow way, which reports it.
		if out, ok, err := logformat.EncodeRowBatch(nil, batch, entry.rowEnc, rows, opts); ok || err != nil {
			return out, err
		}
	}
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
	batch.Record = rec
	return logformat.EncodeBatch(nil, batch, opts)
}

// columnStats computes the statistics a batch of rows carries: min, max
// and null count of each statistics column of the table, ordered by
// metadata.Compare (the order predicates test them in).
func columnStats(entry *tableEntry, rows [][]any) []logformat.ColumnStats {
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
	return stats
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
