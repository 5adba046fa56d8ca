package sqlplan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// The golden files print each parsed statement in a stable form: DDL as
// its canonical SQL (which must parse back to an equal statement), queries
// as a tree whose literals show their types.

func TestParseDDL(t *testing.T)    { runParseGolden(t, "testdata/ddl") }
func TestParseSelect(t *testing.T) { runParseGolden(t, "testdata/select") }
func TestParseInsert(t *testing.T) { runParseGolden(t, "testdata/insert") }
func TestParseUpdate(t *testing.T) { runParseGolden(t, "testdata/update") }
func TestParseDelete(t *testing.T) { runParseGolden(t, "testdata/delete") }
func TestParseSet(t *testing.T)    { runParseGolden(t, "testdata/set") }

func runParseGolden(t *testing.T, path string) {
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "parse":
			st, err := Parse(d.Input)
			if err != nil {
				return errText(err) + "\n"
			}
			switch st.(type) {
			case *Select, *Insert, *Explain:
			case *Update, *Delete:
				// The canonical form parses back to a statement that
				// prints the same: it is a fixed point.
				again, err := Parse(st.String())
				require.NoError(t, err, "canonical form %q must parse", st.String())
				require.Equal(t, st.String(), again.String(), "canonical form %q must be stable", st.String())
				require.Equal(t, st.NumInput(), again.NumInput())
			default:
				again, err := Parse(st.String())
				require.NoError(t, err, "canonical form %q must parse", st.String())
				require.Equal(t, withoutNotes(st), withoutNotes(again), "canonical form %q must parse back to the same statement", st.String())
			}
			return dumpStatement(st)
		case "type":
			typ, err := ParseDataType(d.Input)
			if err != nil {
				return errText(err) + "\n"
			}
			return typ.String() + "\n"
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

var sentinels = []struct {
	name string
	err  error
}{
	{"syntax", metadata.ErrSyntax},
	{"not found", metadata.ErrNotFound},
	{"exists", metadata.ErrExists},
	{"invalid type", metadata.ErrInvalidType},
	{"invalid value", metadata.ErrInvalidValue},
	{"constraint", metadata.ErrConstraint},
	{"unsupported", metadata.ErrUnsupported},
	{"invalid option", metadata.ErrInvalidOption},
	{"invalid table", metadata.ErrInvalidTable},
}

// errText prints an error with the sentinels it matches and the position
// it carries, if any.
func errText(err error) string {
	var kinds []string
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			kinds = append(kinds, s.name)
		}
	}
	pos := ""
	var p interface{ Position() int }
	if errors.As(err, &p) {
		pos = fmt.Sprintf(" @%d", p.Position())
	}
	return fmt.Sprintf("error [%s]%s: %v", strings.Join(kinds, ","), pos, err)
}

func dumpStatement(st Statement) string {
	var b strings.Builder
	switch s := st.(type) {
	case *Select:
		dumpSelect(&b, s)
	case *Explain:
		b.WriteString("explain\n")
		dumpSelect(&b, s.Select)
	case *Insert:
		fmt.Fprintf(&b, "insert into %s\n", pathText(s.Table))
		if len(s.Columns) > 0 {
			fmt.Fprintf(&b, "columns: %s\n", strings.Join(s.Columns, ", "))
		}
		for i, r := range s.Rows {
			parts := make([]string, len(r))
			for j, e := range r {
				parts[j] = dumpExpr(e)
			}
			fmt.Fprintf(&b, "row %d: %s\n", i+1, strings.Join(parts, ", "))
		}
		if s.Select != nil {
			b.WriteString("from query:\n")
			dumpSelect(&b, s.Select)
		}
		if s.OnDup != nil {
			fmt.Fprintf(&b, "on duplicate: update %v, keep %v\n", s.OnDup.Update, s.OnDup.Keep)
			for _, a := range s.OnDup.Set {
				fmt.Fprintf(&b, "on duplicate: set %s = %s\n", a.Column, dumpExpr(a.Expr))
			}
		}
	case *Update:
		fmt.Fprintf(&b, "update %s", pathText(s.Table))
		if s.Alias != "" {
			fmt.Fprintf(&b, " as %s", s.Alias)
		}
		b.WriteString("\n")
		for _, a := range s.Set {
			fmt.Fprintf(&b, "set: %s = %s\n", a.Column, dumpExpr(a.Expr))
		}
		if s.Where != nil {
			fmt.Fprintf(&b, "where: %s\n", dumpExpr(s.Where))
		}
		fmt.Fprintf(&b, "sql: %s\n", s)
	case *Delete:
		fmt.Fprintf(&b, "delete from %s\n", pathText(s.Table))
		if s.Where != nil {
			fmt.Fprintf(&b, "where: %s\n", dumpExpr(s.Where))
		}
		fmt.Fprintf(&b, "sql: %s\n", s)
	case *Call:
		fmt.Fprintf(&b, "call %s\n", s.Procedure)
		for _, a := range s.Args {
			fmt.Fprintf(&b, "arg: %s\n", dumpExpr(a))
		}
	case *CreateTable:
		b.WriteString(st.String() + "\n")
		var declared []string
		for _, c := range s.Table.Schema.Columns {
			if c.DeclaredType != "" {
				declared = append(declared, c.Name+" "+c.DeclaredType)
			}
		}
		if len(declared) > 0 {
			fmt.Fprintf(&b, "declared: %s\n", strings.Join(declared, ", "))
		}
		for _, ix := range s.Table.Indexes {
			fmt.Fprintf(&b, "index: %s (%s) unique=%t\n", ix.Name, strings.Join(ix.Columns, ", "), ix.Unique)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
	default:
		b.WriteString(st.String() + "\n")
	}
	if n := st.NumInput(); n > 0 {
		fmt.Fprintf(&b, "inputs: %d\n", n)
	}
	return b.String()
}

// withoutNotes drops the notes and declared MySQL types of a CREATE
// TABLE, which its canonical form does not carry.
func withoutNotes(st Statement) Statement {
	if ct, ok := st.(*CreateTable); ok {
		c := *ct
		c.Notes = nil
		c.Table.Indexes = nil
		c.Table.Schema.Columns = slices.Clone(c.Table.Schema.Columns)
		for i := range c.Table.Schema.Columns {
			c.Table.Schema.Columns[i].DeclaredType = ""
		}
		return &c
	}
	return st
}

func pathText(p metadata.TablePath) string {
	if p.Database == "" {
		return p.Table
	}
	return p.Database + "." + p.Table
}

func dumpSelect(b *strings.Builder, s *Select) {
	if s.FromTree != nil {
		fmt.Fprintf(b, "from %s\n", s.FromTree)
	} else if s.From {
		fmt.Fprintf(b, "from %s", pathText(s.Table))
		if s.Alias != "" {
			fmt.Fprintf(b, " as %s", s.Alias)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("no from\n")
	}
	if s.Distinct {
		b.WriteString("distinct\n")
	}
	for _, it := range s.Items {
		switch {
		case it.Star && it.Qualifier != "":
			fmt.Fprintf(b, "item: %s.*\n", it.Qualifier)
		case it.Star:
			b.WriteString("item: *\n")
		default:
			fmt.Fprintf(b, "item: %s", dumpExpr(it.Expr))
			if it.Alias != "" {
				fmt.Fprintf(b, " as %s", it.Alias)
			}
			fmt.Fprintf(b, " text=%q\n", it.Text)
		}
	}
	if s.Where != nil {
		fmt.Fprintf(b, "where: %s\n", dumpExpr(s.Where))
	}
	for _, g := range s.GroupBy {
		fmt.Fprintf(b, "group by: %s\n", dumpExpr(g))
	}
	if s.Having != nil {
		fmt.Fprintf(b, "having: %s\n", dumpExpr(s.Having))
	}
	for _, o := range s.OrderBy {
		dir := "asc"
		if o.Desc {
			dir = "desc"
		}
		fmt.Fprintf(b, "order by: %s %s\n", dumpExpr(o.Expr), dir)
	}
	if s.Limit != nil {
		fmt.Fprintf(b, "limit: %s\n", dumpExpr(s.Limit))
	}
	if s.Offset != nil {
		fmt.Fprintf(b, "offset: %s\n", dumpExpr(s.Offset))
	}
	if len(s.Hints) > 0 {
		keys := make([]string, 0, len(s.Hints))
		for k := range s.Hints {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "hint: %s = %s\n", k, s.Hints[k])
		}
	}
}

// dumpExpr prints an expression fully parenthesised, literals with their
// type and bound column references with their index and type.
func dumpExpr(e Expr) string {
	list := func(es []Expr) string {
		parts := make([]string, len(es))
		for i, x := range es {
			parts[i] = dumpExpr(x)
		}
		return strings.Join(parts, ", ")
	}
	not := func(b bool) string {
		if b {
			return "NOT "
		}
		return ""
	}
	switch x := e.(type) {
	case nil:
		return "<nil>"
	case *ColumnRef:
		s := x.Name
		if x.Qualifier != "" {
			s = x.Qualifier + "." + s
		}
		if x.Index >= 0 {
			s += fmt.Sprintf("#%d:%s", x.Index, x.T)
		}
		return s
	case *Literal:
		if x.Value == nil {
			if x.T.Root == 0 {
				return "NULL"
			}
			return "NULL:" + x.T.String()
		}
		return x.String() + ":" + x.T.String()
	case *Param:
		return x.String()
	case *OuterRef:
		return fmt.Sprintf("outer#%d(%s):%s", x.Slot, x.Name, x.T)
	case *Subquery:
		return dumpSubquery(x)
	case *Compare:
		return "(" + dumpExpr(x.L) + " " + x.Op.String() + " " + dumpExpr(x.R) + ")"
	case *And:
		return "(" + dumpExpr(x.L) + " AND " + dumpExpr(x.R) + ")"
	case *Or:
		return "(" + dumpExpr(x.L) + " OR " + dumpExpr(x.R) + ")"
	case *Not:
		return "(NOT " + dumpExpr(x.E) + ")"
	case *IsNull:
		return "(" + dumpExpr(x.E) + " IS " + not(x.Not) + "NULL)"
	case *In:
		return "(" + dumpExpr(x.E) + " " + not(x.Not) + "IN (" + list(x.List) + "))"
	case *Between:
		return "(" + dumpExpr(x.E) + " " + not(x.Not) + "BETWEEN " + dumpExpr(x.Lo) + " AND " + dumpExpr(x.Hi) + ")"
	case *Like:
		s := "(" + dumpExpr(x.E) + " " + not(x.Not) + "LIKE " + dumpExpr(x.Pattern)
		if x.Escape != 0 {
			s += " ESCAPE " + string(x.Escape)
		}
		return s + ")"
	case *Arith:
		op := string(x.Op)
		if x.Op == 'd' {
			op = "DIV"
		}
		s := "(" + dumpExpr(x.L) + " " + op + " " + dumpExpr(x.R) + ")"
		if x.T.Root != 0 {
			s += ":" + x.T.String()
		}
		return s
	case *Neg:
		return "(-" + dumpExpr(x.E) + ")"
	case *Func:
		args := list(x.Args)
		if x.Star {
			args = "*"
		}
		if x.Distinct {
			args = "DISTINCT " + args
		}
		s := x.Name + "(" + args + ")"
		if x.T.Root != 0 {
			s += ":" + x.T.String()
		}
		return s
	case *Case:
		s := "(CASE"
		if x.Operand != nil {
			s += " " + dumpExpr(x.Operand)
		}
		for _, w := range x.Whens {
			s += " WHEN " + dumpExpr(w.Cond) + " THEN " + dumpExpr(w.Result)
		}
		if x.Else != nil {
			s += " ELSE " + dumpExpr(x.Else)
		}
		s += " END)"
		if x.T.Root != 0 {
			s += ":" + x.T.String()
		}
		return s
	case *Cast:
		return "CAST(" + dumpExpr(x.E) + " AS " + x.T.String() + ")"
	}
	if _, ok := e.(*Default); ok {
		return "DEFAULT"
	}
	return fmt.Sprintf("<%T>", e)
}

// dumpSubquery prints a subquery's form and inner query; once bound, also
// the inner WHERE and the correlation.
func dumpSubquery(x *Subquery) string {
	var b strings.Builder
	b.WriteString("(")
	if x.E != nil {
		b.WriteString(dumpExpr(x.E) + " ")
	}
	switch x.Kind {
	case SubScalar:
		b.WriteString("SCALAR")
	case SubExists:
		b.WriteString("EXISTS")
	case SubIn:
		b.WriteString("IN")
	case SubAny:
		b.WriteString(x.Op.String() + " ANY")
	case SubAll:
		b.WriteString(x.Op.String() + " ALL")
	case SubSemi:
		parts := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			parts[i] = dumpExpr(k)
		}
		b.WriteString("SEMI (" + strings.Join(parts, ", ") + ")")
	}
	if x.Not {
		b.WriteString(" NOT")
	}
	b.WriteString(" [" + x.Text + "]")
	if x.Plan != nil {
		b.WriteString(" where " + dumpExpr(x.Plan.Where))
		if x.Kind == SubScalar {
			b.WriteString(" type " + x.T.String())
		}
		if len(x.Outer) > 0 {
			parts := make([]string, len(x.Outer))
			for i, o := range x.Outer {
				parts[i] = dumpExpr(o)
			}
			b.WriteString(" outer " + strings.Join(parts, ", "))
		}
	}
	b.WriteString(")")
	return b.String()
}
