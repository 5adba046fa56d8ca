package sqlplan

import (
	"context"
	"fmt"

	"github.com/flusslite/fluss/metadata"
)

// UpdatePlan is an UPDATE bound to its primary-key table. query.Session runs
// Read, computes each new row from the old one by evaluating the Set
// expressions over it, and upserts the rows that changed.
type UpdatePlan struct {
	Table metadata.TableInfo
	// Set are the assignments in statement order, each to a distinct
	// column that is not part of the primary key.
	Set []BoundAssignment
	// Read is SELECT * FROM t WHERE ... bound to Table (Where is nil
	// without WHERE): the rows to update, full rows in schema order.
	Read *SelectPlan
}

// BoundAssignment is one bound col = expr.
type BoundAssignment struct {
	// Column is the schema index of the assigned column.
	Column int
	// Expr is bound over the old row. A constant (literals, placeholders,
	// ARRAY/MAP/ROW of them) is folded into a Literal of the column's type,
	// converted like an INSERT value. Any other expression keeps its own
	// type, which binding has checked the column can take (numbers for a
	// numeric column, strings for a string column, ...); the executor
	// converts each result with metadata.CoerceValue, so that an overflow
	// or a too long CHAR is an error, never a silent change, and refuses a
	// NULL result in a NOT NULL column.
	Expr Expr
	// Default is true for SET col = DEFAULT of a column that has a
	// default: Expr is a NULL Literal, which query replaces with the
	// column's default for the statement before it reads a row. For a
	// column without one, SET col = DEFAULT is SET col = NULL.
	Default bool
}

// DeletePlan is a DELETE bound to its primary-key table. query.Session runs
// Read and deletes the keys of the rows it returns.
type DeletePlan struct {
	Table metadata.TableInfo
	// Read is SELECT * FROM t WHERE ... bound to Table (Where is nil
	// without WHERE): the rows to delete.
	Read *SelectPlan
}

// BindUpdate resolves an UPDATE against the catalog. It refuses, before
// anything is read: a virtual table, a log table and a table whose merge
// engine is first_row or versioned [ErrUnsupported]; an unknown column
// [ErrNotFound]; a column assigned twice [ErrInvalidValue]; an assignment
// to a primary-key or partition-key column [ErrUnsupported]; a constant
// that does not fit its column [ErrInvalidValue] or NULL in a NOT NULL
// column [ErrConstraint]; an expression of a type the column cannot take
// [ErrUnsupported].
func BindUpdate(ctx context.Context, u *Update, cat Catalog, currentDB string, args []Arg) (*UpdatePlan, error) {
	info, err := resolveWrite(ctx, "UPDATE", u.Table, cat, currentDB)
	if err != nil {
		return nil, err
	}
	plan := &UpdatePlan{Table: info}
	cols := info.Schema.Columns
	seen := make(map[int]bool, len(u.Set))
	for _, a := range u.Set {
		i := info.Schema.ColumnIndex(a.Column)
		if i < 0 {
			return nil, unknownColumn(a.Column, info.Path)
		}
		name := quoteIdent(cols[i].Name)
		if seen[i] {
			return nil, errorf(metadata.ErrInvalidValue, "column %s is assigned twice in the UPDATE", name)
		}
		seen[i] = true
		switch {
		case info.IsPartitionKey(cols[i].Name):
			return nil, errorf(metadata.ErrUnsupported, "UPDATE of partition key column %s is not supported: delete the row and insert it with the new key", name)
		case isKeyColumn(&info, cols[i].Name):
			return nil, errorf(metadata.ErrUnsupported, "UPDATE of primary-key column %s is not supported: delete the row and insert it with the new key", name)
		}
	}
	// The assignments see the row through the same name and alias as the
	// WHERE does.
	b := &binder{table: &plan.Table, alias: u.Alias, args: args, clause: inSet, ctx: ctx, cat: cat, currentDB: orDefault(currentDB)}
	for _, a := range u.Set {
		i := info.Schema.ColumnIndex(a.Column)
		if _, ok := a.Expr.(*Default); ok {
			c := cols[i]
			if c.Default == nil && c.NotNull {
				return nil, errorf(metadata.ErrConstraint, "UPDATE sets NOT NULL column %s to DEFAULT, and the column has no default", quoteIdent(c.Name))
			}
			plan.Set = append(plan.Set, BoundAssignment{Column: i, Expr: &Literal{}, Default: c.Default != nil})
			continue
		}
		e, err := b.assignment(a.Expr, cols[i])
		if err != nil {
			return nil, err
		}
		plan.Set = append(plan.Set, BoundAssignment{Column: i, Expr: e})
	}
	if plan.Read, err = bindRead(ctx, cat, info, u.Alias, u.Where, args); err != nil {
		return nil, err
	}
	return plan, nil
}

// BindDelete resolves a DELETE against the catalog. It refuses a virtual
// table, a log table, a table whose merge engine is first_row or
// versioned, and one whose table.delete.behavior is not allow
// [ErrUnsupported].
func BindDelete(ctx context.Context, d *Delete, cat Catalog, currentDB string, args []Arg) (*DeletePlan, error) {
	info, err := resolveWrite(ctx, "DELETE", d.Table, cat, currentDB)
	if err != nil {
		return nil, err
	}
	read, err := bindRead(ctx, cat, info, "", d.Where, args)
	if err != nil {
		return nil, err
	}
	return &DeletePlan{Table: info, Read: read}, nil
}

// resolveWrite resolves the table of an UPDATE or DELETE and checks that
// the statement applies to it.
func resolveWrite(ctx context.Context, verb string, path metadata.TablePath, cat Catalog, currentDB string) (metadata.TableInfo, error) {
	prep := verb
	if verb == "DELETE" {
		prep = "DELETE FROM"
	}
	if err := refuseVirtualWrite(prep, path, currentDB); err != nil {
		return metadata.TableInfo{}, err
	}
	info, err := resolveTable(ctx, cat, path, currentDB)
	if err != nil {
		return info, err
	}
	if !info.HasPrimaryKey() {
		return info, errorf(metadata.ErrUnsupported, "%s needs a primary-key table; %s is a log table (append only)", verb, info.Path)
	}
	// As in Fluss: first_row ignores later writes to a key, versioned
	// keeps the highest version and aggregation combines every write
	// with the stored row, so none has a meaning for UPDATE; a DELETE
	// goes where table.delete.behavior allows deletes.
	me := info.Config.MergeEngine
	if verb == "DELETE" && (me == metadata.MergeLastRow || me == metadata.MergeAggregation) {
		switch info.Config.DeleteBehavior {
		case metadata.DeleteDisable:
			return info, errorf(metadata.ErrUnsupported, "Delete operations are disabled for this table. The table.delete.behavior is set to 'disable'.")
		case metadata.DeleteIgnore:
			return info, errorf(metadata.ErrUnsupported, "DELETE on table %s is not supported: its %s is 'ignore', so deletes are ignored", info.Path, metadata.OptDeleteBehavior)
		}
		return info, nil
	}
	if me != metadata.MergeLastRow {
		return info, errorf(metadata.ErrUnsupported, "%s on table %s is not supported: its %s merge engine takes no UPDATE or DELETE statements", verb, info.Path, me)
	}
	return info, nil
}

// bindRead binds SELECT * FROM t [AS alias] WHERE where over the resolved
// table: the rows an UPDATE or DELETE applies to.
func bindRead(ctx context.Context, cat Catalog, info metadata.TableInfo, alias string, where Expr, args []Arg) (*SelectPlan, error) {
	plan := &SelectPlan{Table: info, From: true, Limit: -1}
	sel := &Select{Table: info.Path, Alias: alias, From: true, Items: []SelectItem{{Star: true, Text: "*"}}, Where: where}
	if err := bindQuery(ctx, plan, sel, args, info.Path.Database, subScope{cat: cat}); err != nil {
		return nil, err
	}
	return plan, nil
}

// assignment binds the expression assigned to col and converts it to
// col's type (see BoundAssignment.Expr).
func (b *binder) assignment(e Expr, col metadata.Column) (Expr, error) {
	name := quoteIdent(col.Name)
	if isConstant(e) {
		raw, err := b.constant(e, col.Type)
		if err != nil {
			return nil, fmt.Errorf("SET %s: %w", name, err)
		}
		v, err := metadata.CoerceValue(col.Type, raw)
		if err != nil {
			return nil, wrapf(metadata.ErrInvalidValue, err, "SET %s = %s", name, describeValue(e, raw))
		}
		if v == nil && col.NotNull {
			return nil, errorf(metadata.ErrConstraint, "SET %s = NULL: NULL in a NOT NULL column", name)
		}
		return &Literal{Value: v, T: col.Type}, nil
	}
	out, err := b.bindTop(e)
	if err != nil {
		return nil, err
	}
	// No Cast is added: the executor converts values as INSERT does,
	// which a CAST (lenient by design) would not.
	if t := out.Type(); t.Root != 0 && !comparableTypes(col.Type, t) {
		return nil, errorf(metadata.ErrUnsupported, "SET %s = %s: cannot assign %s to column %s of type %s", name, out, t, name, col.Type)
	}
	return out, nil
}

// isConstant reports whether e is made of literals and placeholders only,
// possibly negated, cast, or inside ARRAY(...), MAP(...) and ROW(...):
// what an INSERT accepts as a value.
func isConstant(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		switch f := x.(type) {
		case *Literal, *Param, *Neg, *Cast:
		case *Func:
			if f.Name != "array" && f.Name != "map" && f.Name != "row" {
				ok = false
			}
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// describeValue renders an assigned constant for an error message: the
// argument's value for a placeholder, else the expression as written.
func describeValue(e Expr, raw any) string {
	if _, ok := e.(*Param); ok {
		if s, isString := raw.(string); isString {
			return quoteString(s)
		}
		return fmt.Sprintf("%v", raw)
	}
	return e.String()
}
