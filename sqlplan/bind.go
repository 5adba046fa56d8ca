package sqlplan

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// Catalog is what binding needs from the engine: the description of a
// table. An unknown table is an error matching metadata.ErrNotFound.
type Catalog interface {
	TableInfo(ctx context.Context, path metadata.TablePath) (metadata.TableInfo, error)
}

// OutputColumn is one column of a query's result.
type OutputColumn struct {
	Name string
	Expr Expr
}

// SelectPlan is a SELECT bound to its table: every column reference
// resolved, every placeholder replaced by a typed literal, every literal
// compared with a column converted to the column's type when nothing is
// lost. It is inert and safe to share.
type SelectPlan struct {
	Table metadata.TableInfo
	// From is false for a query without FROM; Table is then zero.
	From   bool
	Output []OutputColumn
	Where  Expr
	// Columns are the sorted, distinct indexes of the table columns the
	// query reads anywhere (output, WHERE, GROUP BY, HAVING, ORDER BY).
	Columns  []int
	GroupBy  []Expr
	Having   Expr
	OrderBy  []OrderItem
	Distinct bool
	// Limit is -1 without LIMIT; Offset is 0 without OFFSET.
	Limit  int64
	Offset int64
	Hints  map[string]string
	// Virtual names the virtual table read, VirtualChangelog for
	// `t$changelog`; "" for a real table. Table is then the virtual table
	// (ChangelogTable of Base), whose schema the column indexes of the
	// plan refer to.
	Virtual string
	// Base is the table a virtual table reads; zero when Virtual is "".
	Base metadata.TableInfo
}

// InsertPlan is an INSERT bound to its table. For VALUES, Rows are full
// rows in schema order (columns not listed are nil), each value converted
// to its column's type; for INSERT ... SELECT, Select is set and the driver
// runs it and converts its rows.
type InsertPlan struct {
	Table metadata.TableInfo
	// Columns are the schema indexes of the listed columns, in list order
	// (every column in schema order when the statement lists none).
	Columns []int
	Rows    [][]any
	Select  *SelectPlan
	// Partial is true for a primary-key table whose column list leaves
	// some column out: a partial update, where the unlisted columns keep
	// their stored values (NULL for a new key). The driver passes Columns
	// as the engine's target columns. Every primary-key column is listed.
	Partial bool
}

func resolveTable(ctx context.Context, cat Catalog, path metadata.TablePath, currentDB string) (metadata.TableInfo, error) {
	if path.Database == "" {
		path.Database = currentDB
		if path.Database == "" {
			path.Database = metadata.DefaultDatabase
		}
	}
	info, err := cat.TableInfo(ctx, path)
	if err != nil {
		if errors.Is(err, metadata.ErrNotFound) {
			return info, atName(path.Table, errorf(metadata.ErrNotFound, "table %s does not exist", path))
		}
		return info, fmt.Errorf("table %s: %w", path, err)
	}
	return info, nil
}

// clause says where an expression sits, which decides what it may contain
// and how unqualified names resolve.
type clause uint8

const (
	inSelect clause = iota
	inWhere
	inGroupBy
	inHaving
	inOrderBy
	inLimit
	inValues
	inSet
)

func (c clause) String() string {
	return [...]string{"the select list", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "VALUES", "SET"}[c]
}

// binder binds the expressions of one statement. It never mutates the
// parsed statement, which a prepared statement shares between executions.
type binder struct {
	table   *metadata.TableInfo // nil without FROM
	alias   string
	args    []Arg
	outputs []OutputColumn // bound select list, for aliases and positions
	clause  clause
	inAgg   bool
	// currentDB is what DATABASE() returns.
	currentDB string
}

// Version is what VERSION() returns: a MySQL-style version (clients such
// as GORM's MySQL dialector parse its leading numbers) naming this engine.
const Version = "8.0.0-fluss-0.1"

// BindSelect resolves s against the catalog; currentDB qualifies an
// unqualified table name ("" means metadata.DefaultDatabase). A name with a
// '$' suffix reads a virtual table of the table before it (see
// ChangelogTable).
func BindSelect(ctx context.Context, s *Select, cat Catalog, currentDB string, args []Arg) (*SelectPlan, error) {
	plan := &SelectPlan{From: s.From, Distinct: s.Distinct, Limit: -1, Hints: s.Hints}
	if s.From {
		if err := resolveRead(ctx, cat, s.Table, currentDB, plan); err != nil {
			return nil, err
		}
	}
	if currentDB == "" {
		currentDB = metadata.DefaultDatabase
	}
	if err := bindQuery(plan, s, args, currentDB); err != nil {
		return nil, err
	}
	return plan, nil
}

// bindQuery binds the clauses of s into plan, whose table (if any) is
// already resolved.
func bindQuery(plan *SelectPlan, s *Select, args []Arg, currentDB string) error {
	b := &binder{args: args, alias: s.Alias, currentDB: currentDB}
	if plan.From {
		b.table = &plan.Table
	}
	var err error
	b.clause = inSelect
	for _, it := range s.Items {
		if it.Star {
			if err := b.expandStar(it, plan); err != nil {
				return err
			}
			continue
		}
		e, err := b.bindTop(it.Expr)
		if err != nil {
			return err
		}
		name := it.Alias
		if name == "" {
			if c, ok := e.(*ColumnRef); ok {
				name = c.Name
			} else {
				name = it.Text
			}
		}
		plan.Output = append(plan.Output, OutputColumn{Name: name, Expr: e})
	}
	b.outputs = plan.Output
	if s.Where != nil {
		b.clause = inWhere
		if plan.Where, err = b.bindCondition(s.Where); err != nil {
			return err
		}
	}
	b.clause = inGroupBy
	for _, g := range s.GroupBy {
		e, err := b.bindKey(g)
		if err != nil {
			return err
		}
		plan.GroupBy = append(plan.GroupBy, e)
	}
	if s.Having != nil {
		b.clause = inHaving
		if plan.Having, err = b.bindCondition(s.Having); err != nil {
			return err
		}
	}
	b.clause = inOrderBy
	for _, o := range s.OrderBy {
		e, err := b.bindKey(o.Expr)
		if err != nil {
			return err
		}
		plan.OrderBy = append(plan.OrderBy, OrderItem{Expr: e, Desc: o.Desc})
	}
	b.clause = inLimit
	if s.Limit != nil {
		if plan.Limit, err = b.count(s.Limit, "LIMIT"); err != nil {
			return err
		}
	}
	if s.Offset != nil {
		if plan.Offset, err = b.count(s.Offset, "OFFSET"); err != nil {
			return err
		}
	}
	plan.Columns = columnsRead(plan)
	return nil
}

func (b *binder) expandStar(it SelectItem, plan *SelectPlan) error {
	if b.table == nil {
		return errorf(metadata.ErrNotFound, "SELECT * needs a table to read (no FROM clause)")
	}
	if it.Qualifier != "" && !b.matchesTable(it.Qualifier) {
		return errorf(metadata.ErrNotFound, "table %s in %s.* is not in FROM", it.Qualifier, it.Qualifier)
	}
	for i, c := range b.table.Schema.Columns {
		plan.Output = append(plan.Output, OutputColumn{Name: c.Name, Expr: &ColumnRef{Name: c.Name, Index: i, T: c.Type}})
	}
	return nil
}

func (b *binder) matchesTable(q string) bool {
	p := b.table.Path
	return strings.EqualFold(q, b.alias) && b.alias != "" ||
		b.alias == "" && strings.EqualFold(q, p.Table) ||
		strings.EqualFold(q, p.Database+"."+p.Table)
}

// bindTop binds a whole expression and checks that no placeholder's value
// was left without a type.
func (b *binder) bindTop(e Expr) (Expr, error) {
	out, err := b.bind(e)
	if err != nil {
		return nil, err
	}
	var bad error
	Walk(out, func(x Expr) bool {
		if l, ok := x.(*Literal); ok && l.T.Root == 0 && l.arg != nil && bad == nil {
			bad = errorf(metadata.ErrInvalidValue, "cannot tell the type of argument %T here; compare it with a column", l.arg)
		}
		return bad == nil
	})
	return out, bad
}

// bindCondition binds a WHERE or HAVING condition, which must be BOOLEAN.
func (b *binder) bindCondition(e Expr) (Expr, error) {
	out, err := b.bindTop(e)
	if err != nil {
		return nil, err
	}
	if err := wantBool(out, b.clause.String()); err != nil {
		return nil, err
	}
	return out, nil
}

// bindKey binds a GROUP BY or ORDER BY key: a position in the select list
// (ORDER BY 2), an output alias, or an expression over the table.
func (b *binder) bindKey(e Expr) (Expr, error) {
	if l, ok := e.(*Literal); ok {
		if n, isInt := l.Value.(int64); isInt {
			if n < 1 || int(n) > len(b.outputs) {
				return nil, errorf(metadata.ErrNotFound, "%s position %d is not in the select list (1 to %d)", b.clause, n, len(b.outputs))
			}
			return b.outputs[n-1].Expr, nil
		}
	}
	return b.bindTop(e)
}

// count binds LIMIT or OFFSET: a non-negative integer literal or argument.
func (b *binder) count(e Expr, what string) (int64, error) {
	out, err := b.bind(e)
	if err != nil {
		return 0, err
	}
	if l, ok := out.(*Literal); ok {
		if n, ok := l.Value.(int64); ok && n >= 0 {
			return n, nil
		}
		return 0, errorf(metadata.ErrInvalidValue, "%s must be a non-negative integer, not %s", what, l)
	}
	return 0, errorf(metadata.ErrInvalidValue, "%s must be a non-negative integer, not %s", what, out)
}

func columnsRead(p *SelectPlan) []int {
	seen := map[int]bool{}
	visit := func(e Expr) {
		Walk(e, func(x Expr) bool {
			if c, ok := x.(*ColumnRef); ok && c.Index >= 0 {
				seen[c.Index] = true
			}
			return true
		})
	}
	for _, o := range p.Output {
		visit(o.Expr)
	}
	visit(p.Where)
	for _, g := range p.GroupBy {
		visit(g)
	}
	visit(p.Having)
	for _, o := range p.OrderBy {
		visit(o.Expr)
	}
	cols := make([]int, 0, len(seen))
	for i := range seen {
		cols = append(cols, i)
	}
	sort.Ints(cols)
	return cols
}

// column resolves a column reference. GROUP BY and HAVING look at the
// table first and then at output aliases, ORDER BY the other way round,
// as MySQL does.
func (b *binder) column(c *ColumnRef) (Expr, error) {
	alias := func() Expr {
		if c.Qualifier != "" {
			return nil
		}
		for _, o := range b.outputs {
			if strings.EqualFold(o.Name, c.Name) {
				return o.Expr
			}
		}
		return nil
	}
	if b.clause == inOrderBy {
		if e := alias(); e != nil {
			return e, nil
		}
	}
	if b.table == nil {
		if b.clause == inGroupBy || b.clause == inHaving {
			if e := alias(); e != nil {
				return e, nil
			}
		}
		return nil, errorf(metadata.ErrNotFound, "column %s does not exist (the query reads no table)", quoteIdent(c.Name))
	}
	if c.Qualifier != "" && !b.matchesTable(c.Qualifier) {
		return nil, errorf(metadata.ErrNotFound, "table %s of column %s.%s is not in FROM", c.Qualifier, c.Qualifier, c.Name)
	}
	if i := b.table.Schema.ColumnIndex(c.Name); i >= 0 {
		col := b.table.Schema.Columns[i]
		return &ColumnRef{Name: col.Name, Qualifier: c.Qualifier, Index: i, T: col.Type}, nil
	}
	if b.clause == inGroupBy || b.clause == inHaving {
		if e := alias(); e != nil {
			return e, nil
		}
	}
	return nil, unknownColumn(c.Name, b.table.Path)
}

// bind returns a bound copy of e.
func (b *binder) bind(e Expr) (Expr, error) {
	switch x := e.(type) {
	case nil:
		return nil, nil
	case *ColumnRef:
		return b.column(x)
	case *Literal:
		return x, nil
	case *Param:
		v, err := lookupArg(x, b.args)
		if err != nil {
			return nil, err
		}
		return argLiteral(v)
	case *Compare:
		l, r, err := b.bindPair(x.L, x.R)
		if err != nil {
			return nil, err
		}
		if l, r, err = coercePair(l, r); err != nil {
			return nil, err
		}
		if err := checkComparable(l, r); err != nil {
			return nil, err
		}
		return &Compare{Op: x.Op, L: l, R: r}, nil
	case *And:
		l, r, err := b.bindPair(x.L, x.R)
		if err != nil {
			return nil, err
		}
		if err := wantBool(l, "AND"); err != nil {
			return nil, err
		}
		if err := wantBool(r, "AND"); err != nil {
			return nil, err
		}
		return &And{L: l, R: r}, nil
	case *Or:
		l, r, err := b.bindPair(x.L, x.R)
		if err != nil {
			return nil, err
		}
		if err := wantBool(l, "OR"); err != nil {
			return nil, err
		}
		if err := wantBool(r, "OR"); err != nil {
			return nil, err
		}
		return &Or{L: l, R: r}, nil
	case *Not:
		in, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		if err := wantBool(in, "NOT"); err != nil {
			return nil, err
		}
		return &Not{E: in}, nil
	case *IsNull:
		in, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		return &IsNull{E: in, Not: x.Not}, nil
	case *In:
		in, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		out := &In{E: in, Not: x.Not, List: make([]Expr, len(x.List))}
		for i, item := range x.List {
			v, err := b.bind(item)
			if err != nil {
				return nil, err
			}
			if v, err = coerceTo(v, in); err != nil {
				return nil, err
			}
			if err := checkComparable(in, v); err != nil {
				return nil, err
			}
			out.List[i] = v
		}
		return out, nil
	case *Between:
		in, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		lo, hi, err := b.bindPair(x.Lo, x.Hi)
		if err != nil {
			return nil, err
		}
		if lo, err = coerceTo(lo, in); err != nil {
			return nil, err
		}
		if hi, err = coerceTo(hi, in); err != nil {
			return nil, err
		}
		if err := checkComparable(in, lo); err != nil {
			return nil, err
		}
		if err := checkComparable(in, hi); err != nil {
			return nil, err
		}
		return &Between{E: in, Lo: lo, Hi: hi, Not: x.Not}, nil
	case *Like:
		in, pat, err := b.bindPair(x.E, x.Pattern)
		if err != nil {
			return nil, err
		}
		for _, side := range []Expr{in, pat} {
			if t := side.Type(); t.Root != 0 && !t.IsString() {
				return nil, atName(firstColumn(side), errorf(metadata.ErrUnsupported, "LIKE compares strings, not %s (%s)", t, side))
			}
		}
		return &Like{E: in, Pattern: pat, Escape: x.Escape, Not: x.Not}, nil
	case *Arith:
		l, r, err := b.bindPair(x.L, x.R)
		if err != nil {
			return nil, err
		}
		t, err := arithType(x.Op, l.Type(), r.Type())
		if err != nil {
			e := &Arith{Op: x.Op, L: l, R: r}
			return nil, atName(firstColumn(e), fmt.Errorf("%w in %s", err, e))
		}
		return &Arith{Op: x.Op, L: l, R: r, T: t}, nil
	case *Neg:
		in, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		if t := in.Type(); t.Root != 0 && !t.IsNumeric() {
			return nil, errorf(metadata.ErrUnsupported, "unary minus on %s (%s)", t, in)
		}
		if l, ok := in.(*Literal); ok {
			return negate(l)
		}
		return &Neg{E: in}, nil
	case *Func:
		return b.bindFunc(x)
	case *Case:
		return b.bindCase(x)
	case *Cast:
		in, err := b.bind(x.E)
		if err != nil {
			return nil, err
		}
		if l, ok := in.(*Literal); ok {
			// A constant folds when it converts; otherwise the executor
			// applies MySQL's rules ('12abc' as SIGNED is 12, 'nope' as
			// DATE is NULL).
			if v, err := metadata.CoerceValue(x.T, l.source()); err == nil {
				return &Literal{Value: v, T: x.T}, nil
			}
			if l.T.Root == 0 && l.arg != nil {
				return nil, errorf(metadata.ErrInvalidValue, "cannot tell the type of argument %T in CAST(%s AS %s)", l.arg, l.describe(), x.T)
			}
		}
		return &Cast{E: in, T: x.T}, nil
	}
	return nil, unsupported("expression %s", e)
}

func (b *binder) bindPair(l, r Expr) (Expr, Expr, error) {
	bl, err := b.bind(l)
	if err != nil {
		return nil, nil, err
	}
	br, err := b.bind(r)
	if err != nil {
		return nil, nil, err
	}
	return bl, br, nil
}

func wantBool(e Expr, where string) error {
	if t := e.Type(); t.Root != 0 && t.Root != metadata.Boolean {
		return errorf(metadata.ErrUnsupported, "%s needs a BOOLEAN condition, not %s (%s)", where, t, e)
	}
	return nil
}

var aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

func (b *binder) bindFunc(f *Func) (Expr, error) {
	agg := aggregates[f.Name]
	if agg {
		switch {
		case b.clause == inWhere || b.clause == inGroupBy || b.clause == inValues || b.clause == inLimit || b.clause == inSet:
			return nil, atName(f.Name, errorf(metadata.ErrUnsupported, "aggregate function %s is not allowed in %s", strings.ToUpper(f.Name), b.clause))
		case b.inAgg:
			return nil, atName(f.Name, errorf(metadata.ErrUnsupported, "aggregate function %s inside another aggregate", strings.ToUpper(f.Name)))
		}
		b.inAgg = true
		defer func() { b.inAgg = false }()
	} else if f.Distinct {
		return nil, errorf(metadata.ErrUnsupported, "DISTINCT in %s", strings.ToUpper(f.Name))
	}
	out := &Func{Name: f.Name, Distinct: f.Distinct, Star: f.Star, Args: make([]Expr, len(f.Args))}
	types := make([]metadata.DataType, len(f.Args))
	for i, a := range f.Args {
		e, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		out.Args[i], types[i] = e, e.Type()
	}
	t, err := funcType(out, types)
	err = atName(f.Name, err)
	if err != nil {
		return nil, err
	}
	out.T = t
	// The connection's state and the engine's identity are constants of
	// the statement.
	switch f.Name {
	case "version":
		return &Literal{Value: Version, T: t}, nil
	case "database", "schema":
		return &Literal{Value: b.currentDB, T: t}, nil
	}
	return out, nil
}

func (b *binder) bindCase(c *Case) (Expr, error) {
	out := &Case{}
	var err error
	if c.Operand != nil {
		if out.Operand, err = b.bind(c.Operand); err != nil {
			return nil, err
		}
	}
	var results []metadata.DataType
	for _, w := range c.Whens {
		cond, res, err := b.bindPair(w.Cond, w.Result)
		if err != nil {
			return nil, err
		}
		if out.Operand != nil {
			if cond, err = coerceTo(cond, out.Operand); err != nil {
				return nil, err
			}
			if err := checkComparable(out.Operand, cond); err != nil {
				return nil, err
			}
		} else if err := wantBool(cond, "WHEN"); err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, When{Cond: cond, Result: res})
		results = append(results, res.Type())
	}
	if c.Else != nil {
		if out.Else, err = b.bind(c.Else); err != nil {
			return nil, err
		}
		results = append(results, out.Else.Type())
	}
	t, ok := commonType(results)
	if !ok {
		return nil, errorf(metadata.ErrUnsupported, "CASE results of different types (%s)", typeList(results))
	}
	out.T = t
	return out, nil
}

// BindInsert resolves an INSERT against the catalog and, for VALUES,
// converts every value to its column's type. Bad input is refused before
// anything is written: wrong arity, a value that does not fit, NULL in a
// NOT NULL or primary-key column, an unknown or repeated column, a column
// list without every primary-key column, a partial update of a table whose
// merge engine is first_row or versioned (as in Fluss), a virtual table.
func BindInsert(ctx context.Context, ins *Insert, cat Catalog, currentDB string, args []Arg) (*InsertPlan, error) {
	if err := refuseVirtualWrite("INSERT INTO", ins.Table, currentDB); err != nil {
		return nil, err
	}
	info, err := resolveTable(ctx, cat, ins.Table, currentDB)
	if err != nil {
		return nil, err
	}
	plan := &InsertPlan{Table: info}
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
		// A log table gets NULL in every column not listed; a primary-key
		// table keeps the stored values (partial update), but its key,
		// partition keys included, must be given.
		for i, c := range cols {
			if seen[i] {
				continue
			}
			switch {
			case isKeyColumn(&info, c.Name):
				return nil, errorf(metadata.ErrConstraint, "primary-key column %s is not listed: an INSERT into primary-key table %s must give every key column", quoteIdent(c.Name), info.Path)
			case info.HasPrimaryKey():
				plan.Partial = true
			case c.NotNull:
				return nil, errorf(metadata.ErrConstraint, "column %s is NOT NULL and the INSERT gives it no value", quoteIdent(c.Name))
			}
		}
		// As in Fluss, only the default merge engine merges partial rows.
		if plan.Partial && info.Config.MergeEngine != metadata.MergeLastRow {
			return nil, errorf(metadata.ErrUnsupported, "partial update of table %s is not supported: its %s merge engine takes whole rows (list every column)", info.Path, info.Config.MergeEngine)
		}
	}
	if ins.Select != nil {
		sel, err := BindSelect(ctx, ins.Select, cat, currentDB, args)
		if err != nil {
			return nil, err
		}
		if len(sel.Output) != len(plan.Columns) {
			return nil, errorf(metadata.ErrInvalidValue, "INSERT has %d target columns but the SELECT returns %d", len(plan.Columns), len(sel.Output))
		}
		plan.Select = sel
		return plan, nil
	}
	b := &binder{args: args, clause: inValues}
	for r, row := range ins.Rows {
		if len(row) != len(plan.Columns) {
			return nil, errorf(metadata.ErrInvalidValue, "row %d has %d values, expected %d", r+1, len(row), len(plan.Columns))
		}
		full := make([]any, len(cols))
		for j, e := range row {
			ci := plan.Columns[j]
			col := cols[ci]
			raw, err := b.constant(e, col.Type)
			if err != nil {
				return nil, fmt.Errorf("row %d, column %s: %w", r+1, quoteIdent(col.Name), err)
			}
			v, err := metadata.CoerceValue(col.Type, raw)
			if err != nil {
				return nil, fmt.Errorf("row %d, column %s: %w", r+1, quoteIdent(col.Name), err)
			}
			if v == nil && isKeyColumn(&info, col.Name) {
				return nil, errorf(metadata.ErrConstraint, "row %d, column %s: NULL in a primary-key column", r+1, quoteIdent(col.Name))
			}
			if v == nil && col.NotNull {
				return nil, errorf(metadata.ErrConstraint, "row %d, column %s: NULL in a NOT NULL column", r+1, quoteIdent(col.Name))
			}
			full[ci] = v
		}
		plan.Rows = append(plan.Rows, full)
	}
	return plan, nil
}

// isKeyColumn reports whether the named column is part of the table's
// primary key (partition keys of a primary-key table always are).
func isKeyColumn(info *metadata.TableInfo, name string) bool {
	return containsFold(info.Schema.PrimaryKey, name)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// constant evaluates a VALUES expression to a Go value for
// metadata.CoerceValue; t is the type it is headed for, which guides the
// elements of ARRAY(...), MAP(...) and ROW(...).
func (b *binder) constant(e Expr, t metadata.DataType) (any, error) {
	switch x := e.(type) {
	case *Literal:
		return x.Value, nil
	case *Param:
		return lookupArg(x, b.args)
	case *Neg:
		v, err := b.constant(x.E, t)
		if err != nil {
			return nil, err
		}
		l, err := argLiteral(v)
		if err != nil {
			return nil, err
		}
		n, err := negate(l)
		if err != nil {
			return nil, err
		}
		return n.Value, nil
	case *Cast:
		v, err := b.constant(x.E, x.T)
		if err != nil {
			return nil, err
		}
		return metadata.CoerceValue(x.T, v)
	case *Func:
		return b.constructor(x, t)
	}
	return nil, unsupported("expression %s in VALUES", e)
}

func (b *binder) constructor(f *Func, t metadata.DataType) (any, error) {
	elem := func(dt *metadata.DataType) metadata.DataType {
		if dt == nil {
			return metadata.DataType{}
		}
		return *dt
	}
	switch f.Name {
	case "array":
		out := make([]any, len(f.Args))
		for i, a := range f.Args {
			v, err := b.constant(a, elem(t.Elem))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case "map":
		if len(f.Args)%2 != 0 {
			return nil, errorf(metadata.ErrInvalidValue, "MAP(...) takes key, value pairs, not %d arguments", len(f.Args))
		}
		m := metadata.MapValue{}
		for i := 0; i < len(f.Args); i += 2 {
			k, err := b.constant(f.Args[i], elem(t.Elem))
			if err != nil {
				return nil, err
			}
			v, err := b.constant(f.Args[i+1], elem(t.Value))
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, k)
			m.Values = append(m.Values, v)
		}
		return m, nil
	case "row":
		out := make([]any, len(f.Args))
		for i, a := range f.Args {
			var ft metadata.DataType
			if i < len(t.Fields) {
				ft = t.Fields[i].Type
			}
			v, err := b.constant(a, ft)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, unsupported("function %s in VALUES", strings.ToUpper(f.Name))
}
