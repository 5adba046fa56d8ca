package sqlplan

import (
	"strings"

	"github.com/xwb1989/sqlparser"

	"github.com/flusslite/fluss/metadata"
)

// Update is UPDATE [db.]t [AS x] SET col = expr, ... [WHERE ...]. Names
// are not resolved yet; BindUpdate resolves them into an UpdatePlan.
type Update struct {
	// Table is the table written; Database is "" when the name is unqualified.
	Table metadata.TablePath
	// Alias is the table's alias in UPDATE t AS x; "" if none.
	Alias string
	Set   []Assignment
	// Where is nil without WHERE: every row is updated.
	Where Expr
}

// Assignment is one col = expr of a SET clause.
type Assignment struct {
	Column string
	Expr   Expr
}

// Delete is DELETE FROM [db.]t [WHERE ...]. Names are not resolved yet;
// BindDelete resolves them into a DeletePlan.
type Delete struct {
	// Table is the table written; Database is "" when the name is unqualified.
	Table metadata.TablePath
	// Where is nil without WHERE: every row is deleted.
	Where Expr
}

func (*Update) isStatement() {}
func (*Delete) isStatement() {}

// NumInput counts the placeholders of the SET expressions and the WHERE.
func (s *Update) NumInput() int {
	es := make([]Expr, 0, len(s.Set)+1)
	for _, a := range s.Set {
		es = append(es, a.Expr)
	}
	return countInputs(append(es, s.Where)...)
}

// NumInput counts the placeholders of the WHERE.
func (s *Delete) NumInput() int { return countInputs(s.Where) }

func (s *Update) String() string {
	var b strings.Builder
	b.WriteString("UPDATE " + quotePath(s.Table))
	if s.Alias != "" {
		b.WriteString(" AS " + quoteIdent(s.Alias))
	}
	b.WriteString(" SET ")
	for i, a := range s.Set {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(a.Column) + " = " + a.Expr.String())
	}
	if s.Where != nil {
		b.WriteString(" WHERE " + s.Where.String())
	}
	return b.String()
}

func (s *Delete) String() string {
	if s.Where == nil {
		return "DELETE FROM " + quotePath(s.Table)
	}
	return "DELETE FROM " + quotePath(s.Table) + " WHERE " + s.Where.String()
}

// singleTable returns the one table an UPDATE or DELETE names, refusing
// joins, subqueries and partition selection.
func (c *converter) singleTable(verb string, from sqlparser.TableExprs) (metadata.TablePath, string, error) {
	if len(from) != 1 {
		return metadata.TablePath{}, "", unsupported("%s of several tables", verb)
	}
	switch t := from[0].(type) {
	case *sqlparser.AliasedTableExpr:
		if len(t.Partitions) > 0 {
			return metadata.TablePath{}, "", unsupported("PARTITION selection in %s", verb)
		}
		if t.Hints != nil {
			return metadata.TablePath{}, "", unsupported("index hints")
		}
		name, ok := t.Expr.(sqlparser.TableName)
		if !ok {
			return metadata.TablePath{}, "", unsupported("%s of a subquery", verb)
		}
		return c.tablePath(name), t.As.String(), nil
	case *sqlparser.JoinTableExpr:
		return metadata.TablePath{}, "", unsupported("%s with a JOIN", verb)
	}
	return metadata.TablePath{}, "", unsupported("%s of a parenthesized table list", verb)
}

func (c *converter) update(u *sqlparser.Update) (*Update, error) {
	switch {
	case len(u.OrderBy) > 0:
		return nil, unsupported("ORDER BY in UPDATE")
	case u.Limit != nil:
		return nil, unsupported("LIMIT in UPDATE")
	}
	path, alias, err := c.singleTable("UPDATE", u.TableExprs)
	if err != nil {
		return nil, err
	}
	out := &Update{Table: path, Alias: alias}
	for _, ue := range u.Exprs {
		name := ue.Name.Name.String()
		// A qualified target (SET t.v = 1, SET db.t.v = 1) must name the
		// updated table; the plan keeps only the column.
		if q := ue.Name.Qualifier; !q.IsEmpty() {
			if !targetMatches(q, path, alias) {
				return nil, errorf(metadata.ErrNotFound, "table %s of column %s is not the updated table", sqlparser.String(q), sqlparser.String(ue.Name))
			}
		}
		var e Expr = &Default{}
		if d, ok := ue.Expr.(*sqlparser.Default); !ok || d.ColName != "" {
			if e, err = c.expr(ue.Expr); err != nil {
				return nil, err
			}
		}
		out.Set = append(out.Set, Assignment{Column: name, Expr: e})
	}
	if u.Where != nil {
		if out.Where, err = c.expr(u.Where.Expr); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// targetMatches reports whether the qualifier of a SET target names the
// table of UPDATE path [AS alias]: the alias when there is one, else the
// table name, or the qualified name either way.
func targetMatches(q sqlparser.TableName, path metadata.TablePath, alias string) bool {
	name := q.Name.String()
	if !q.Qualifier.IsEmpty() {
		db := q.Qualifier.String()
		return strings.EqualFold(name, path.Table) && (path.Database == "" || strings.EqualFold(db, path.Database))
	}
	if alias != "" {
		return strings.EqualFold(name, alias)
	}
	return strings.EqualFold(name, path.Table)
}

func (c *converter) delete(d *sqlparser.Delete) (*Delete, error) {
	switch {
	case len(d.Targets) > 0:
		return nil, unsupported("DELETE of several tables")
	case len(d.Partitions) > 0:
		return nil, unsupported("PARTITION selection in DELETE")
	case len(d.OrderBy) > 0:
		return nil, unsupported("ORDER BY in DELETE")
	case d.Limit != nil:
		return nil, unsupported("LIMIT in DELETE")
	}
	path, alias, err := c.singleTable("DELETE", d.TableExprs)
	if err != nil {
		return nil, err
	}
	if alias != "" {
		return nil, unsupported("an alias in DELETE")
	}
	out := &Delete{Table: path}
	if d.Where != nil {
		if out.Where, err = c.expr(d.Where.Expr); err != nil {
			return nil, err
		}
	}
	return out, nil
}
