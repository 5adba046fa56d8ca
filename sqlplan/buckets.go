package sqlplan

import (
	"slices"

	"github.com/flusslite/fluss/metadata"
)

// maxBucketKeys bounds the bucket-key values a WHERE may pin for its read
// to be pruned to their buckets: an IN list (or the product of several)
// longer than that reads every bucket.
const maxBucketKeys = 256

// BucketFilter returns the buckets a read of p's table needs when its
// WHERE pins every bucket-key column to values (col = literal or col IN
// (literal, ...), conjuncts of the WHERE, each value exactly one of the
// column's type): the buckets those values hash to, as writes route rows,
// sorted. ok is false when the table has no bucket key (a log table
// without bucket.key spreads its rows over every bucket), a column is not
// pinned, or the values are too many; the read then takes every bucket.
// A row of another bucket holds other bucket-key values, which the WHERE
// refuses: the whole WHERE still applies to the rows read.
func BucketFilter(p *SelectPlan) (buckets []int32, ok bool) {
	if p == nil || !p.From || p.Virtual != "" || p.Where == nil || p.Table.NumBuckets <= 1 {
		return nil, false
	}
	keyCols := p.Table.BucketKeyIndexes()
	if len(keyCols) == 0 {
		return nil, false
	}
	cols := p.Table.Schema.Columns
	pinned := map[int][]any{}
	for _, c := range Conjuncts(p.Where) {
		if i, vals, found := pinningValues(c, cols); found && slices.Contains(keyCols, i) {
			if _, seen := pinned[i]; !seen {
				pinned[i] = vals
			}
		}
	}
	keys := [][]any{nil}
	for _, c := range keyCols {
		vals, ok := pinned[c]
		if !ok || len(keys)*len(vals) > maxBucketKeys {
			return nil, false
		}
		next := make([][]any, 0, len(keys)*len(vals))
		for _, k := range keys {
			for _, v := range vals {
				next = append(next, append(k[:len(k):len(k)], v))
			}
		}
		keys = next
	}
	types := make([]metadata.DataType, len(keyCols))
	for k, c := range keyCols {
		types[k] = cols[c].Type
	}
	buckets = []int32{}
	for _, key := range keys {
		enc, err := metadata.EncodeKey(types, key)
		if err != nil {
			return nil, false
		}
		b := int32(metadata.BucketOf(enc, p.Table.NumBuckets))
		if !slices.Contains(buckets, b) {
			buckets = append(buckets, b)
		}
	}
	slices.Sort(buckets)
	return buckets, true
}

// PrefixLookup matches a read of a table that answers prefix lookups
// (metadata.TableInfo.HasPrefixLookup) whose WHERE pins every partition
// key and bucket-key column (= or IN of constants, at most 1,024
// combinations): the key rows to look up, of the table's width with those
// columns set. Every WHERE conjunct stays to be evaluated over the rows
// found. ok is false for any other read.
func PrefixLookup(p *SelectPlan) (keyRows [][]any, ok bool) {
	if p == nil || !p.From || p.Virtual != "" || p.Where == nil || !p.Table.HasPrefixLookup() {
		return nil, false
	}
	cols := p.Table.Schema.Columns
	need := append(slices.Clone(p.Table.PartitionKeyIndexes()), p.Table.BucketKeyIndexes()...)
	pinned := map[int][]any{}
	for _, c := range Conjuncts(p.Where) {
		if i, vals, found := pinningValues(c, cols); found && slices.Contains(need, i) {
			if _, seen := pinned[i]; !seen {
				pinned[i] = vals
			}
		}
	}
	keyRows = [][]any{make([]any, len(cols))}
	for _, c := range need {
		vals, ok := pinned[c]
		if !ok || len(keyRows)*len(vals) > maxIndexKeys {
			return nil, false
		}
		next := make([][]any, 0, len(keyRows)*len(vals))
		for _, r := range keyRows {
			for _, v := range vals {
				row := slices.Clone(r)
				row[c] = v
				next = append(next, row)
			}
		}
		keyRows = next
	}
	return keyRows, true
}
