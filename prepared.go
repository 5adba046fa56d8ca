package fluss

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/flusslite/fluss/query"
	"github.com/flusslite/fluss/sqlplan"
	"github.com/flusslite/fluss/storage"
)

// A prepared statement runs many times with new arguments. Two of its
// shapes are worth binding only once: the point lookup (by the primary
// key, or by all columns of a UNIQUE index) and the INSERT ... VALUES. The statement keeps the argument-independent part of
// its binding (sqlplan's templates) for the current database, and each
// execution checks that the table is still the one it was bound to (same
// table id and schema), binds only its arguments, and goes straight to
// the engine. Whatever a template does not cover, or a table that
// changed, takes the full path, so the results and errors are those of a
// fresh binding. A connection keeps the point-lookup bindings of the
// statements run on it, by their text (Conn.lookups), so a SELECT run
// through Query, as database/sql's QueryRow does, keeps its binding like
// a prepared statement.

// preparedLookup is the point-lookup shape of a SELECT, with what its
// result needs: the output columns and where each is in the table's row.
type preparedLookup struct {
	db   string                  // the current database it was bound in
	tmpl *sqlplan.LookupTemplate // nil: the statement has not the shape
	key  *storage.KeyLookup
	ix   *storage.IndexKeyLookup // by a UNIQUE index: tmpl.Index() is set
	cols []query.Column
	out  []int // schema index of each output column
	// empty is set by LIMIT 0 or an OFFSET: the row found is not returned.
	empty bool
}

// preparedInsert is the bound part of an INSERT ... VALUES.
type preparedInsert struct {
	db   string
	tmpl *sqlplan.InsertTemplate
}

// lookupRows answers a SELECT through the statement's point-lookup
// template; ok is false when it has none that applies to args, and the
// caller runs the full path.
func (s *Stmt) lookupRows(ctx context.Context, args []sqlplan.Arg) (rows *Rows, ok bool, err error) {
	pl := s.prepLookup
	if pl == nil || pl.tmpl == nil || pl.db != s.conn.database {
		return nil, false, nil
	}
	key, ok := pl.tmpl.KeyRow(args)
	if !ok {
		return nil, false, nil
	}
	if pl.tmpl.Index() != nil {
		return s.indexRows(ctx, pl, key)
	}
	if tx := s.conn.tx; tx != nil && tx.buf != nil && tx.buf.Wrote(pl.key.Path()) {
		// The transaction's own writes to the table are read by the
		// full path, which lays them over its view.
		return nil, false, nil
	}
	lookup := s.conn.engine().LookupKey
	if v := s.conn.readView(); v != nil {
		// In a transaction the key is read in its view.
		lookup = v.LookupKey
	}
	row, found, err := lookup(ctx, pl.key, key)
	if errors.Is(err, storage.ErrLookupInLake) {
		return nil, false, nil // the full path reads the lake
	}
	if err != nil {
		// The table changed, went, or its name is a view's now; or the
		// read failed, which the full path reports as a fresh binding
		// would.
		s.prepLookup = nil
		return nil, false, nil
	}
	if sel, _ := s.parsed.(*sqlplan.Select); found && sel != nil && sel.Lock != sqlplan.LockNone {
		// SELECT ... FOR UPDATE: the key found joins the transaction's
		// conflict check, as the full path's key read adds it.
		if tx := s.conn.tx; tx != nil && tx.buf != nil {
			if err := tx.buf.Lock(ctx, pl.key.Path(), [][]any{key}); err != nil {
				return nil, true, err
			}
		}
	}
	return s.lookupResult(ctx, pl, row, found), true, nil
}

// lookupResult is the result of a kept lookup that found row (or not).
func (s *Stmt) lookupResult(ctx context.Context, pl *preparedLookup, row []any, found bool) *Rows {
	var vals []driver.Value
	if found && !pl.empty {
		conv := converter{loc: s.conn.location()}
		vals = make([]driver.Value, len(pl.out))
		for i, c := range pl.out {
			vals[i] = conv.value(pl.cols[i].Type, row[c])
		}
	}
	return newValueRows(ctx, pl.cols, vals)
}

// indexRows answers a SELECT through the statement's lookup template by
// a UNIQUE index, key being its KeyRow. It declines (ok false) what the
// full path answers otherwise: FOR UPDATE, a transaction that wrote the
// table (its own writes are read as scans read them), a table or index
// that changed since the template was made, a lake read.
func (s *Stmt) indexRows(ctx context.Context, pl *preparedLookup, key []any) (rows *Rows, ok bool, err error) {
	t := &pl.tmpl.Plan().Table
	if sel, _ := s.parsed.(*sqlplan.Select); sel == nil || sel.Lock != sqlplan.LockNone {
		return nil, false, nil
	}
	if tx := s.conn.tx; tx != nil && tx.buf != nil && tx.buf.Wrote(t.Path) {
		return nil, false, nil
	}
	lookup := s.conn.engine().LookupIndexKey
	if v := s.conn.readView(); v != nil {
		lookup = v.LookupIndexKey
	}
	row, found, err := lookup(ctx, pl.ix, pl.tmpl.IndexKey(key))
	if errors.Is(err, storage.ErrTableChanged) {
		s.prepLookup = nil
		return nil, false, nil
	}
	if errors.Is(err, storage.ErrLookupInLake) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return s.lookupResult(ctx, pl, row, found), true, nil
}

// prepareLookup keeps the point-lookup template of sel, whose binding sp
// the full path has just planned as a point lookup.
func (s *Stmt) prepareLookup(sel *sqlplan.Select, sp *sqlplan.SelectPlan) {
	db := s.conn.database
	if s.prepLookup != nil && s.prepLookup.db == db {
		return
	}
	pl := &preparedLookup{db: db}
	s.prepLookup = pl
	// Kept once complete: a later statement of the same text on the
	// connection starts from it.
	defer s.conn.keepLookup(s.text, pl)
	tmpl, ok := sqlplan.NewLookupTemplate(sel, sp)
	if !ok {
		tmpl, ok = sqlplan.NewIndexLookupTemplate(sel, sp)
	}
	if !ok {
		return // remembered: the shape does not change with the arguments
	}
	out := make([]int, len(sp.Output))
	for i, o := range sp.Output {
		out[i] = o.Expr.(*sqlplan.ColumnRef).Index // NewLookupTemplate checked
	}
	if ix := tmpl.Index(); ix != nil {
		l, err := storage.NewIndexKeyLookup(&sp.Table, ix.Name, out)
		if err != nil {
			return
		}
		pl.ix = l
	} else {
		key, err := storage.NewKeyLookup(&sp.Table, out)
		if err != nil {
			return
		}
		pl.key = key
	}
	pl.out = out
	pl.tmpl, pl.cols = tmpl, query.ResultColumns(sp)
	pl.empty = sp.Limit == 0 || sp.Offset > 0
}

// bindInsert binds an INSERT for one execution. plan may be the
// statement's template, shared by its executions: it is read, never
// changed; rows are this execution's.
func (s *Stmt) bindInsert(ctx context.Context, ins *sqlplan.Insert, args []sqlplan.Arg) (plan *sqlplan.InsertPlan, rows [][]any, err error) {
	eng := s.conn.engine()
	db := s.conn.database
	pi := s.prepInsert
	if pi != nil && pi.db == db {
		// A table dropped and created again has a new id; one whose
		// schema changed has a new schema id.
		t := pi.tmpl.Plan().Table
		info, err := eng.TableInfo(ctx, t.Path)
		if err != nil || info.TableID != t.TableID || info.SchemaID != t.SchemaID {
			pi = nil
		}
	} else {
		pi = nil
	}
	if pi == nil {
		s.prepInsert = nil
		tmpl, ok, err := sqlplan.PrepareInsert(ctx, ins, eng, db)
		if err != nil || !ok {
			plan, err := sqlplan.BindInsert(ctx, ins, eng, db, args)
			if err != nil {
				return nil, nil, err
			}
			return plan, plan.Rows, nil
		}
		pi = &preparedInsert{db: db, tmpl: tmpl}
		s.prepInsert = pi
	}
	if rows, err = pi.tmpl.Rows(args); err != nil {
		return nil, nil, err
	}
	return pi.tmpl.Plan(), rows, nil
}
