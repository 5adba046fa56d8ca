package query

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// fillAutoIncrement completes an INSERT's rows before they are written or
// buffered: it generates the values of the table's auto-increment column
// that the statement left to the engine, and, for ON DUPLICATE KEY
// UPDATE, gives a row whose key exists the stored values of the columns
// the clause does not update.
//
// An auto-increment key (MySQL's AUTO_INCREMENT) takes a new value in
// every row that leaves it out or gives NULL, DEFAULT or 0; a value the
// statement gives moves the counter past it, so that no later generated
// key overwrites that row. An auto-increment column outside the key
// (Fluss's form) takes a new value only for a key not stored yet; an
// existing key keeps its value. Values come from
// storage.Engine.AllocateAutoIncrement: unique for the table, never
// reused after a crash or reopen, with gaps where a statement failed or
// the engine stopped.
//
// lastID is what LastInsertId reports, as MySQL's server does: the first
// value the statement generated (the others follow it consecutively, in
// row order), or, when it generated none, the last value it gave the
// column, else 0. ok is false when the table has no auto-increment
// column; LastInsertId is then an error.
//
// Existing keys are read as the statement's reads see them: inside a
// transaction, its view with its own buffered writes over it.
func (s *Session) fillAutoIncrement(ctx context.Context, plan *sqlplan.InsertPlan) (lastID int64, ok bool, err error) {
	ai := plan.AutoIncrement
	if ai < 0 && len(plan.OnConflict) == 0 {
		return 0, false, nil
	}
	eng := s.Engine
	path := plan.Table.Path
	aiKey := ai >= 0 && slices.Contains(plan.Table.PrimaryKeyIndexes(), ai)
	if len(plan.OnConflict) > 0 || ai >= 0 && !aiKey {
		delta, err := s.tableDelta(&plan.Table)
		if err != nil {
			return 0, false, err
		}
		for _, row := range plan.Rows {
			if aiKey && row[ai] == nil {
				continue // a generated key is a new one
			}
			stored, found, err := s.lookupKey(ctx, &plan.Table, delta, row)
			if errors.Is(err, storage.ErrLookupInLake) {
				// A write creates the partition again: the key is new
				// to it, whatever the lake holds of the dropped one.
				err, found = nil, false
			}
			if err != nil {
				return 0, false, err
			}
			if !found {
				continue
			}
			for _, a := range plan.OnConflict {
				if a.Keep {
					row[a.Column] = stored[a.Column]
				} else {
					row[a.Column] = a.Value
				}
			}
			if ai >= 0 && !aiKey {
				row[ai] = stored[ai]
			}
		}
	}
	if ai < 0 {
		return 0, false, nil
	}

	n := 0
	var last, highest int64
	given := false
	for _, row := range plan.Rows {
		switch v := row[ai].(type) {
		case nil:
			n++
		case int64:
			if aiKey {
				last = v
				if !given || v > highest {
					highest = v
				}
				given = true
			}
		}
	}
	if given {
		if err := eng.AdvanceAutoIncrement(ctx, path, highest); err != nil {
			return 0, false, err
		}
	}
	if n == 0 {
		return last, true, nil
	}
	first, err := eng.AllocateAutoIncrement(ctx, path, n)
	if err != nil {
		return 0, false, err
	}
	col := plan.Table.Schema.Columns[ai]
	next := first
	for _, row := range plan.Rows {
		if row[ai] != nil {
			continue
		}
		v, err := metadata.CoerceValue(col.Type, next)
		if err != nil {
			return 0, false, fmt.Errorf("auto-increment column %s of table %s: generated value %d: %w", col.Name, path, next, err)
		}
		row[ai] = v
		next++
	}
	return first, true, nil
}
