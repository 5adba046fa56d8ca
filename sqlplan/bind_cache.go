package sqlplan

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/flusslite/fluss/metadata"
)

// A prepared statement runs many times with new arguments against a
// catalog that rarely changes. The templates below keep the part of a
// binding that depends only on the statement and its table, so that an
// execution binds just its arguments. They are built from, and agree
// exactly with, the full binding: where the arguments could make the
// result differ (an error, a NULL key, a value that is not exactly one of
// the key column's), a template declines and the caller binds in full.
// A template is valid for one table (TableID and SchemaID of Table) and
// one current database; checking that the catalog still has that table
// is the caller's part. Templates are immutable and safe to share.

// LookupTemplate is a SELECT whose WHERE is nothing but `key_col = ?`
// (or `? = key_col`, or <=>) for every primary-key column, whose select
// list reads plain columns, and which has no GROUP BY, HAVING, DISTINCT,
// ORDER BY, and no placeholder in LIMIT or OFFSET: the shape of a point
// lookup by a prepared statement. Everything but the key comes from the
// plan it was built from.
type LookupTemplate struct {
	plan *SelectPlan
	keys []lookupParam
	// index and indexCols (schema indexes, in index order) are set for
	// a lookup by a UNIQUE index (NewIndexLookupTemplate).
	index     *metadata.DeclaredIndex
	indexCols []int
}

// lookupParam is one key conjunct: the bound column and its placeholder.
type lookupParam struct {
	ref   *ColumnRef
	param *Param
}

// NewLookupTemplate returns the template of s, given plan, its binding
// with some arguments; ok is false when s does not have the shape above
// or plan is not a point lookup with nothing left to filter.
func NewLookupTemplate(s *Select, plan *SelectPlan) (*LookupTemplate, bool) {
	if s == nil || plan == nil || !s.From || s.Distinct || len(s.GroupBy) > 0 || s.Having != nil || len(s.OrderBy) > 0 ||
		hasParam(s.Limit) || hasParam(s.Offset) {
		return nil, false
	}
	if _, residual, ok := PointLookup(plan); !ok || len(residual) > 0 {
		return nil, false
	}
	for _, o := range plan.Output {
		if _, ok := o.Expr.(*ColumnRef); !ok {
			return nil, false
		}
	}
	return newLookupTemplate(s, plan, len(plan.Table.Schema.PrimaryKey))
}

// NewIndexLookupTemplate is NewLookupTemplate for a SELECT whose WHERE is
// nothing but `col = ?` (or `? = col`) for every column of a UNIQUE
// secondary index, which plan reads through that index: KeyRow then
// fills the index's columns, and IndexKey gives them in index order. At
// most one row holds non-NULL values of a UNIQUE index, and KeyRow
// declines a NULL.
func NewIndexLookupTemplate(s *Select, plan *SelectPlan) (*LookupTemplate, bool) {
	if s == nil || plan == nil || !s.From || s.Distinct || len(s.GroupBy) > 0 || s.Having != nil || len(s.OrderBy) > 0 ||
		hasParam(s.Limit) || hasParam(s.Offset) {
		return nil, false
	}
	ix, keys, ok := IndexLookup(plan)
	if !ok || !ix.Unique || len(keys) != 1 || len(keys[0]) != len(ix.Columns) {
		return nil, false
	}
	for _, o := range plan.Output {
		if _, ok := o.Expr.(*ColumnRef); !ok {
			return nil, false
		}
	}
	t, ok := newLookupTemplate(s, plan, len(ix.Columns))
	if !ok {
		return nil, false
	}
	cols := plan.Table.IndexColumns(ix)
	seen := map[int]bool{}
	for _, k := range t.keys {
		seen[k.ref.Index] = true
	}
	for _, c := range cols {
		if !seen[c] {
			return nil, false
		}
	}
	t.index, t.indexCols = &ix, cols
	return t, true
}

// Index is the UNIQUE index the template reads by, nil for one by the
// primary key.
func (t *LookupTemplate) Index() *metadata.DeclaredIndex { return t.index }

// IndexKey is the index key of row, a KeyRow of an index template: the
// values of the index's columns in index order.
func (t *LookupTemplate) IndexKey(row []any) []any {
	key := make([]any, len(t.indexCols))
	for i, c := range t.indexCols {
		key[i] = row[c]
	}
	return key
}

// newLookupTemplate matches the n conjuncts of s's WHERE, each a column
// compared with a placeholder by = or <=>, with those of plan's.
func newLookupTemplate(s *Select, plan *SelectPlan, n int) (*LookupTemplate, bool) {
	parsed, bound := Conjuncts(s.Where), Conjuncts(plan.Where)
	if len(parsed) != len(bound) || len(parsed) != n {
		return nil, false
	}
	t := &LookupTemplate{plan: plan, keys: make([]lookupParam, len(parsed))}
	for i, c := range parsed {
		pc, ok := c.(*Compare)
		if !ok || pc.Op != OpEq && pc.Op != OpNullSafeEq {
			return nil, false
		}
		param, ok := pc.R.(*Param)
		if !ok {
			if param, ok = pc.L.(*Param); !ok {
				return nil, false
			}
		}
		bc, ok := bound[i].(*Compare)
		if !ok {
			return nil, false
		}
		ref, ok := bc.L.(*ColumnRef)
		if !ok {
			if ref, ok = bc.R.(*ColumnRef); !ok {
				return nil, false
			}
		}
		t.keys[i] = lookupParam{ref: ref, param: param}
	}
	return t, true
}

func hasParam(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*Param); ok {
			found = true
		}
		return !found
	})
	return found
}

// Plan is the plan the template was built from. Its WHERE holds the key
// of that binding; everything else holds for every execution.
func (t *LookupTemplate) Plan() *SelectPlan { return t.plan }

// KeyRow binds the arguments of one execution and returns the key row
// PointLookup would return for the full binding with them. ok is false
// when the full binding could end otherwise (an error, a NULL, a value
// that does not convert exactly): the caller then binds in full.
func (t *LookupTemplate) KeyRow(args []Arg) (row []any, ok bool) {
	cols := t.plan.Table.Schema.Columns
	row = make([]any, len(cols))
	for _, k := range t.keys {
		v, err := lookupArg(k.param, args)
		if err != nil || row[k.ref.Index] != nil {
			return nil, false
		}
		t := cols[k.ref.Index].Type
		if x, isInt := v.(int64); isInt && t.IsInteger() {
			// What the steps below come to for an integer argument and
			// an integer key: the value when it is in the column's
			// range, else no lookup.
			key, err := metadata.CoerceValue(t, x)
			if err != nil {
				return nil, false
			}
			row[k.ref.Index] = key
			continue
		}
		if x, isStr := v.(string); isStr && t.Root == metadata.String && k.ref.T.Equal(t) {
			// What the steps below come to for a string argument and a
			// STRING key: the string itself. One that is not UTF-8
			// text, which no row holds, goes the full path.
			if !utf8.ValidString(x) {
				return nil, false
			}
			row[k.ref.Index] = v
			continue
		}
		lit, err := argLiteral(v)
		if err != nil || lit.Value == nil {
			return nil, false
		}
		// As binding a comparison of a column with a placeholder does
		// (coerceTo), without the words of an error nobody will read.
		blit, err := coerceLiteral(lit, k.ref.T, "")
		if err != nil || blit.T.Root == 0 || checkComparable(k.ref, blit) != nil {
			return nil, false
		}
		key, exact := exactValue(blit, t)
		if !exact {
			return nil, false
		}
		row[k.ref.Index] = key
	}
	return row, true
}

// InsertTemplate is an INSERT ... VALUES without ON DUPLICATE KEY UPDATE,
// bound to its table: the target columns, the auto-increment column, the
// partial-update flag, the values that take their column's default. Rows
// binds the VALUES of one execution.
type InsertTemplate struct {
	ins  *Insert
	plan *InsertPlan // without Rows
	// given is the number of values each VALUES row must have.
	given int
}

// PrepareInsert binds the argument-independent part of an INSERT: what
// BindInsert checks before it reads a value. ok is false for statements
// it does not cover (INSERT ... SELECT, ON DUPLICATE KEY UPDATE); the
// caller then uses BindInsert. Errors are BindInsert's.
func PrepareInsert(ctx context.Context, ins *Insert, cat Catalog, currentDB string) (t *InsertTemplate, ok bool, err error) {
	if ins.Select != nil || ins.Compound != nil || ins.OnDup != nil {
		return nil, false, nil
	}
	t, err = prepareInsert(ctx, ins, cat, currentDB)
	return t, err == nil, err
}

// prepareInsert binds the table and target columns of ins.
func prepareInsert(ctx context.Context, ins *Insert, cat Catalog, currentDB string) (*InsertTemplate, error) {
	if err := refuseVirtualWrite("INSERT INTO", ins.Table, currentDB); err != nil {
		return nil, err
	}
	info, err := resolveTable(ctx, cat, ins.Table, currentDB)
	if err != nil {
		return nil, err
	}
	plan := &InsertPlan{Table: info, AutoIncrement: info.AutoIncrementIndex()}
	ai := plan.AutoIncrement
	t := &InsertTemplate{ins: ins, plan: plan}
	cols := info.Schema.Columns
	if len(ins.Columns) == 0 {
		for i := range cols {
			plan.Columns = append(plan.Columns, i)
		}
	} else {
		seen := map[int]bool{}
		for _, name := range ins.Columns {
			i := info.Schema.ColumnIndex(name)
			if i < 0 {
				return nil, unknownColumn(name, info.Path)
			}
			if seen[i] {
				return nil, errorf(metadata.ErrInvalidValue, "column %s is listed twice in the INSERT", quoteIdent(cols[i].Name))
			}
			seen[i] = true
			plan.Columns = append(plan.Columns, i)
		}
		// A log table gets its default, else NULL, in every column not
		// listed; a primary-key table keeps the stored values of an
		// existing key (partial update) and gives a new one the defaults,
		// which the engine decides as it reads the key. The key,
		// partition keys included, must be given.
		for i, c := range cols {
			if seen[i] {
				continue
			}
			switch {
			case i == ai:
				// Generated: written like a listed column.
				plan.Columns = append(plan.Columns, i)
			case isKeyColumn(&info, c.Name):
				return nil, errorf(metadata.ErrConstraint, "primary-key column %s is not listed: an INSERT into primary-key table %s must give every key column", quoteIdent(c.Name), info.Path)
			case info.HasPrimaryKey():
				plan.Partial = true
			case c.Default != nil:
				plan.DefaultColumns = append(plan.DefaultColumns, i)
			case c.NotNull:
				return nil, errorf(metadata.ErrConstraint, "column %s is NOT NULL, has no default, and the INSERT gives it no value", quoteIdent(c.Name))
			}
		}
		// As in Fluss, only the default and aggregation merge engines
		// merge partial rows.
		if me := info.Config.MergeEngine; plan.Partial && me != metadata.MergeLastRow && me != metadata.MergeAggregation {
			return nil, errorf(metadata.ErrUnsupported, "partial update of table %s is not supported: its %s merge engine takes whole rows (list every column)", info.Path, info.Config.MergeEngine)
		}
	}
	t.given = len(plan.Columns)
	if ai >= 0 && len(ins.Columns) > 0 && plan.Columns[len(plan.Columns)-1] == ai && !containsFold(ins.Columns, cols[ai].Name) {
		t.given-- // the generated column appended above
	}
	for r, row := range ins.Rows {
		for j, e := range row {
			if _, ok := e.(*Default); ok && j < t.given {
				if ci := plan.Columns[j]; ci != ai && cols[ci].Default != nil {
					plan.DefaultCells = append(plan.DefaultCells, Cell{Row: r, Column: ci})
				}
			}
		}
	}
	return t, nil
}

// Plan is the bound INSERT without its rows: the table, target columns,
// auto-increment column and partial-update flag. It is shared; do not
// modify it.
func (t *InsertTemplate) Plan() *InsertPlan { return t.plan }

// Rows binds the VALUES of one execution: full rows in schema order, each
// value converted to its column's type, exactly as BindInsert does.
func (t *InsertTemplate) Rows(args []Arg) ([][]any, error) {
	cols := t.plan.Table.Schema.Columns
	b := binder{args: args, clause: inValues}
	var rows [][]any
	for r, row := range t.ins.Rows {
		if len(row) != t.given {
			return nil, errorf(metadata.ErrInvalidValue, "row %d has %d values, expected %d", r+1, len(row), t.given)
		}
		full := make([]any, len(cols))
		for j, e := range row {
			ci := t.plan.Columns[j]
			col := cols[ci]
			if _, ok := e.(*Default); ok {
				switch {
				case ci == t.plan.AutoIncrement:
					// NULL asks for a generated value.
				case col.Default != nil:
					continue // a DefaultCell, filled in by query
				case col.NotNull:
					return nil, errorf(metadata.ErrConstraint, "row %d, column %s: DEFAULT, but the column is NOT NULL and has no default", r+1, quoteIdent(col.Name))
				}
				e = &Literal{}
			}
			raw, err := b.constant(e, col.Type)
			if err != nil {
				return nil, atColumn(r, col, err)
			}
			if err := t.plan.setValue(full, r, ci, raw); err != nil {
				return nil, err
			}
		}
		rows = append(rows, full)
	}
	return rows, nil
}

// SelectRow converts row r (from 0) of the query of an INSERT ... SELECT,
// one value per target column the statement gives, in list order, to a
// full row in schema order: the same conversions and errors as Rows gives
// a row of VALUES. A generated column the list leaves out stays nil, for
// query to fill.
func (p *InsertPlan) SelectRow(r int, vals []any) ([]any, error) {
	cols := p.Table.Schema.Columns
	if len(vals) > len(p.Columns) {
		return nil, errorf(metadata.ErrInvalidValue, "row %d has %d values, expected %d", r+1, len(vals), len(p.Columns))
	}
	full := make([]any, len(cols))
	for j, v := range vals {
		if err := p.setValue(full, r, p.Columns[j], v); err != nil {
			return nil, err
		}
	}
	return full, nil
}

// setValue converts raw, the value row r gives column ci, to the column's
// type and puts it in full. An auto-increment column in the key takes 0
// as a request for a generated value, as NULL is.
func (p *InsertPlan) setValue(full []any, r, ci int, raw any) error {
	info := &p.Table
	col := info.Schema.Columns[ci]
	v, err := metadata.CoerceValue(col.Type, raw)
	if err != nil {
		return atColumn(r, col, err)
	}
	if ci == p.AutoIncrement {
		aiKey := isKeyColumn(info, col.Name)
		switch {
		case aiKey && v == int64(0):
			v = nil
		case !aiKey && v != nil:
			return errorf(metadata.ErrConstraint, "row %d, column %s: an auto-increment column outside the primary key takes no explicit value, as in Fluss: leave it out of the INSERT", r+1, quoteIdent(col.Name))
		}
		full[ci] = v
		return nil
	}
	if v == nil && isKeyColumn(info, col.Name) {
		return errorf(metadata.ErrConstraint, "row %d, column %s: NULL in a primary-key column", r+1, quoteIdent(col.Name))
	}
	if v == nil && col.NotNull {
		return errorf(metadata.ErrConstraint, "row %d, column %s: NULL in a NOT NULL column", r+1, quoteIdent(col.Name))
	}
	full[ci] = v
	return nil
}

// atColumn names the row and column of a value that failed to bind.
func atColumn(r int, col metadata.Column, err error) error {
	return fmt.Errorf("row %d, column %s: %w", r+1, quoteIdent(col.Name), err)
}

// UpdateTemplate is an UPDATE whose SET gives each column a placeholder or
// a literal and whose WHERE is nothing but `key_col = ?` (or `? =
// key_col`, or <=>) for every primary-key column: the shape of a
// prepared update of one row by its key, such as a transfer's
// `UPDATE acct SET balance = ? WHERE id = ?`.
type UpdateTemplate struct {
	plan *UpdatePlan
	key  *LookupTemplate
	// params[i] is the placeholder of plan.Set[i]; nil for a literal,
	// whose bound value plan.Set[i] holds for every execution.
	params []*Param
}

// NewUpdateTemplate returns the template of u, given plan, its binding
// with some arguments; ok is false when u does not have the shape above,
// assigns DEFAULT (a time taken per execution), or plan does not read
// one row by its key with nothing left to filter.
func NewUpdateTemplate(u *Update, plan *UpdatePlan) (*UpdateTemplate, bool) {
	if u == nil || plan == nil || plan.Read == nil || len(u.Set) != len(plan.Set) || !plan.Table.HasPrimaryKey() {
		return nil, false
	}
	if _, residual, ok := PointLookup(plan.Read); !ok || len(residual) > 0 {
		return nil, false
	}
	key, ok := newLookupTemplate(&Select{Where: u.Where}, plan.Read, len(plan.Table.Schema.PrimaryKey))
	if !ok {
		return nil, false
	}
	t := &UpdateTemplate{plan: plan, key: key, params: make([]*Param, len(u.Set))}
	for i, a := range u.Set {
		if plan.Set[i].Default {
			return nil, false
		}
		switch x := a.Expr.(type) {
		case *Param:
			t.params[i] = x
		case *Literal:
			if _, ok := plan.Set[i].Expr.(*Literal); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return t, true
}

// Plan is the binding the template was built from: its table, and the
// read whose WHERE holds the key of that binding.
func (t *UpdateTemplate) Plan() *UpdatePlan { return t.plan }

// Bind binds the arguments of one execution: the key row PointLookup
// would return for the full binding's read, and the value of each
// assignment (in plan.Set order) as the full binding folds it. ok is
// false when the full binding could end otherwise (an error, a NULL key
// or a NULL for a NOT NULL column, a key that does not convert
// exactly): the caller then binds in full.
func (t *UpdateTemplate) Bind(args []Arg) (key, set []any, ok bool) {
	if key, ok = t.key.KeyRow(args); !ok {
		return nil, nil, false
	}
	cols := t.plan.Table.Schema.Columns
	set = make([]any, len(t.params))
	for i, p := range t.params {
		a := t.plan.Set[i]
		if p == nil {
			set[i] = a.Expr.(*Literal).Value // NewUpdateTemplate checked
			continue
		}
		// What binder.assignment does with a placeholder.
		raw, err := lookupArg(p, args)
		if err != nil {
			return nil, nil, false
		}
		col := cols[a.Column]
		v, err := metadata.CoerceValue(col.Type, raw)
		if err != nil || v == nil && col.NotNull {
			return nil, nil, false
		}
		set[i] = v
	}
	return key, set, true
}
