package query

import (
	"context"
	"errors"
	"maps"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// Kept holds the bindings a connection keeps between executions of its
// statements: today the UPDATE of one row by its whole primary key with
// placeholders and literals in SET (sqlplan.UpdateTemplate), what a
// transfer runs twice per transaction. A binding is kept after a full
// binding read its row by the key, for the statement's parsed form (the
// connector shares one per text) and the current database; each
// execution checks that the table is still the one it was bound to (same
// id, schema and options) and otherwise binds in full, so results and
// errors are those of a fresh binding. Not safe for concurrent use: one
// per connection.
type Kept struct {
	updates map[*sqlplan.Update]*keptUpdate
}

// maxKeptUpdates bounds Kept.updates; past it the map starts over.
const maxKeptUpdates = 256

type keptUpdate struct {
	db   string
	tmpl *sqlplan.UpdateTemplate // nil: the statement has not the shape
}

// keepUpdate remembers the template of u, whose full binding plan has
// just read its row by the key. A nil k keeps nothing.
func (k *Kept) keepUpdate(u *sqlplan.Update, db string, plan *sqlplan.UpdatePlan) {
	if k == nil {
		return
	}
	if ku := k.updates[u]; ku != nil && ku.db == db {
		return
	}
	tmpl, _ := sqlplan.NewUpdateTemplate(u, plan)
	if k.updates == nil || len(k.updates) >= maxKeptUpdates {
		k.updates = map[*sqlplan.Update]*keptUpdate{}
	}
	k.updates[u] = &keptUpdate{db: db, tmpl: tmpl}
}

// updateKept runs u through its kept template; ok is false when it has
// none that applies to args, and the caller binds in full.
func (s *Session) updateKept(ctx context.Context, u *sqlplan.Update, args []sqlplan.Arg) (n int64, ok bool, err error) {
	if s.Kept == nil {
		return 0, false, nil
	}
	ku := s.Kept.updates[u]
	if ku == nil || ku.tmpl == nil || ku.db != s.Database {
		return 0, false, nil
	}
	plan := ku.tmpl.Plan()
	t := &plan.Table
	// A table dropped and created again has a new id; one whose columns
	// changed, a new schema id; ALTER TABLE SET changes its options.
	info, err := s.Engine.TableInfo(ctx, t.Path)
	if err != nil || info.TableID != t.TableID || info.SchemaID != t.SchemaID || !maps.Equal(info.Options, t.Options) {
		delete(s.Kept.updates, u)
		return 0, false, nil
	}
	key, set, ok := ku.tmpl.Bind(args)
	if !ok {
		return 0, false, nil
	}
	if err := s.checkTxWrite("UPDATE", t.Path); err != nil {
		return 0, true, err
	}
	delta, err := s.tableDelta(t)
	if err != nil {
		return 0, true, err
	}
	old, found, err := s.lookupKey(ctx, t, delta, key)
	if errors.Is(err, storage.ErrLookupInLake) {
		return 0, false, nil // the full path reads the lake
	}
	if err != nil || !found {
		return 0, true, err
	}
	cols := t.Schema.Columns
	row := make([]any, len(cols))
	copy(row, old)
	for i, a := range plan.Set {
		// The conversions of the full path: the bound literal's, then
		// the assigned column's.
		c := cols[a.Column]
		v, err := metadata.CoerceValue(c.Type, set[i])
		if err == nil {
			v, err = metadata.CoerceValue(c.Type, v)
		}
		if err != nil {
			return 0, true, err
		}
		row[a.Column] = v
	}
	n, err = s.apply(ctx, storage.Write{Path: t.Path, Kind: storage.WriteUpsert, Rows: [][]any{row}})
	return n, true, err
}
