package fluss

import (
	"context"
	"errors"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// Lookup reads the rows of sp's primary-key table whose key columns cols
// hold one of keys, from the live KV state or the transaction's read
// view, and runs sp's WHERE and outputs over them as a read of the table
// would: the held side of a lookup join. A key in a partition that only
// the lake still holds makes it read the table through its planner
// instead, which the join's keys then filter.
func (r tableReader) Lookup(ctx context.Context, sp *sqlplan.SelectPlan, cols []int, keys [][]any) (exec.Operator, error) {
	s := r.s
	table := &sp.Table
	// One prepared lookup for every key, decoding only the columns the
	// query reads.
	prepared, err := storage.NewKeyLookup(table, sp.Columns)
	if err != nil {
		return nil, err
	}
	lookup := s.engine().LookupKey
	if v := s.conn.readView(); v != nil {
		lookup = v.LookupKey
	}
	var rows [][]any
	key := make([]any, len(table.Schema.Columns))
tuples:
	for i, tuple := range keys {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for k, c := range cols {
			v, ok := exec.KeyValue(table.Schema.Columns[c].Type, tuple[k])
			if !ok {
				continue tuples
			}
			key[c] = v
		}
		row, found, err := lookup(ctx, prepared, key)
		if errors.Is(err, storage.ErrLookupInLake) || errors.Is(err, storage.ErrTableChanged) {
			// The lake holds the partition, or the table changed since
			// the query was planned: a read of the table answers.
			return s.openSelect(ctx, sp, nil)
		}
		if err != nil {
			return nil, err
		}
		if found {
			rows = append(rows, row)
		}
	}
	rec, err := buildRecord(schemaColumns(table), rows)
	if err != nil {
		return nil, err
	}
	all := make([]int, len(table.Schema.Columns))
	for i := range all {
		all[i] = i
	}
	q := exec.QueryOf(sp)
	q.Filter = sqlplan.Conjuncts(sp.Where)
	op, err := exec.Build(&staticOp{rec: rec}, q, exec.NewLayout(len(all), all), s.execOptions())
	if err != nil {
		rec.Release()
		return nil, err
	}
	return op, nil
}
