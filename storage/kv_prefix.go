package storage

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/flusslite/fluss/metadata"
)

// Prefix lookups (Fluss's lookupBy). A primary-key table whose bucket key
// is a proper prefix of its physical primary key keeps every row of one
// bucket-key value in one bucket, and, the key's fields being encoded one
// after another, self-delimiting (metadata.AppendOrderedKey), under one
// prefix of the bucket's key range: a read of that range finds them all.

// PrefixLookup returns the live rows (full schema, canonical values) of a
// primary-key table that answers prefix lookups (metadata.TableInfo.HasPrefixLookup) whose
// partition keys and bucket key hold the values of one of keyRows (rows
// of the table's width; the other columns are not read), each row once
// however often its prefix is given. A NULL value, or a partition that
// does not exist, finds nothing. It reads the KV store, which holds only
// committed statements. ErrLookupInLake when dropped partitions the lake
// still holds may hold rows (a scan answers then).
func (e *Engine) PrefixLookup(ctx context.Context, path metadata.TablePath, keyRows [][]any) ([][]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cat, err := e.readLock()
	if err != nil {
		return nil, err
	}
	defer e.mu.RUnlock()
	return e.prefixLookup(cat, e.kv, e.brokenBucket, path, keyRows)
}

// PrefixLookup is Engine.PrefixLookup in the view: the rows as they were
// when the view was taken.
func (v *ReadView) PrefixLookup(ctx context.Context, path metadata.TablePath, keyRows [][]any) (rows [][]any, err error) {
	err = v.reading(ctx, path, func(cat *catalog, src pebble.Reader) error {
		rows, err = v.e.prefixLookup(cat, src, func(tb metadata.TableBucket) error { return v.broken[tb] }, path, keyRows)
		return err
	})
	return rows, err
}

func (e *Engine) prefixLookup(cat *catalog, src pebble.Reader, brokenOf func(metadata.TableBucket) error, path metadata.TablePath, keyRows [][]any) ([][]any, error) {
	entry, err := cat.table(path)
	if err != nil {
		return nil, err
	}
	info := &entry.Info
	if !info.HasPrefixLookup() {
		return nil, fmt.Errorf("%w: prefix lookup in %s: its bucket key is not a proper prefix of its primary key", metadata.ErrUnsupported, path)
	}
	cols := info.Schema.Columns
	part, bucket := info.PartitionKeyIndexes(), info.BucketKeyIndexes()
	btypes := make([]metadata.DataType, len(bucket))
	for k, c := range bucket {
		btypes[k] = cols[c].Type
	}
	var (
		out  [][]any
		seen = map[string]bool{}
	)
rows:
	for _, row := range keyRows {
		if len(row) != len(cols) {
			return nil, fmt.Errorf("%w: prefix lookup row has %d values, table %s has %d columns", metadata.ErrInvalidValue, len(row), path, len(cols))
		}
		tb := metadata.TableBucket{TableID: info.TableID, PartitionID: metadata.NonPartitioned}
		if len(part) > 0 {
			id, found, err := partitionOf(entry, part, row)
			if err != nil || !found {
				if err != nil {
					return nil, fmt.Errorf("prefix lookup in %s: %w", path, err)
				}
				continue
			}
			tb.PartitionID = id
		}
		vals := make([]any, len(bucket))
		for k, c := range bucket {
			if row[c] == nil {
				continue rows
			}
			if vals[k], err = metadata.CoerceValue(btypes[k], row[c]); err != nil {
				return nil, fmt.Errorf("prefix lookup in %s: column %s, value %s: %w", path, cols[c].Name, showValue(row[c]), err)
			}
		}
		bkey, err := metadata.EncodeKey(btypes, vals)
		if err != nil {
			return nil, fmt.Errorf("prefix lookup in %s: bucket key: %w", path, err)
		}
		tb.Bucket = int32(metadata.BucketOf(bkey, info.NumBuckets))
		if err := brokenOf(tb); err != nil {
			return nil, err
		}
		if lakeShadows(entry, tb) {
			return nil, fmt.Errorf("prefix lookup in %s: %w", path, ErrLookupInLake)
		}
		prefix, err := metadata.AppendOrderedKey(kvDataPrefix(tb), btypes, vals)
		if err != nil {
			return nil, fmt.Errorf("prefix lookup in %s: %w", path, err)
		}
		if seen[string(prefix)] {
			continue
		}
		seen[string(prefix)] = true
		it, err := src.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		if err != nil {
			return nil, fmt.Errorf("prefix lookup in %s: KV store: %w", path, err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			r, err := decodeRowValue(it.Value(), &entry.Info, entry.types)
			if err != nil {
				it.Close()
				return nil, fmt.Errorf("prefix lookup in %s: %w", path, err)
			}
			out = append(out, r)
		}
		if err := it.Close(); err != nil {
			return nil, fmt.Errorf("prefix lookup in %s: KV store: %w", path, err)
		}
	}
	return out, nil
}
