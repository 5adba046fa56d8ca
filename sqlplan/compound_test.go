package sqlplan

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestCompound pins how set operations are split, parsed and bound:
//
//	parse: the operation tree, then the canonical SQL, which must parse
//	back to the same tree;
//	bind [args=1,2]: the bound plan against newCatalog(), each SELECT
//	with the conversion of its outputs to the common types.
func TestCompound(t *testing.T) {
	datadriven.RunTest(t, "testdata/compound", func(t *testing.T, d *datadriven.TestData) string {
		st, err := Parse(d.Input)
		if err != nil {
			return errText(err) + "\n"
		}
		switch d.Cmd {
		case "parse":
			var b strings.Builder
			dumpSetOperand(&b, st, "")
			if _, ok := st.(*Select); !ok {
				again, err := Parse(st.String())
				require.NoError(t, err, "canonical form %q must parse", st.String())
				require.Equal(t, st.String(), again.String(), "canonical form %q must be stable", st.String())
				require.Equal(t, st.NumInput(), again.NumInput())
			}
			fmt.Fprintf(&b, "sql: %s\n", st)
			if n := st.NumInput(); n > 0 {
				fmt.Fprintf(&b, "inputs: %d\n", n)
			}
			return b.String()
		case "bind":
			var args []Arg
			for _, a := range d.CmdArgs {
				if a.Key != "args" {
					continue
				}
				for i, v := range a.Vals {
					n, err := strconv.ParseInt(v, 10, 64)
					require.NoError(t, err)
					args = append(args, Arg{Ordinal: i + 1, Value: n})
				}
			}
			var c *Compound
			switch x := st.(type) {
			case *Compound:
				c = x
			case *Insert:
				p, err := BindInsert(context.Background(), x, newCatalog(), "fluss", args)
				if err != nil {
					return errText(err) + "\n"
				}
				var b strings.Builder
				fmt.Fprintf(&b, "insert into %s columns %v\n", p.Table.Path, p.Columns)
				dumpCompoundPlan(&b, p.Compound, "")
				return b.String()
			default:
				t.Fatalf("bind takes a set operation, not %T", st)
			}
			p, err := BindCompound(context.Background(), c, newCatalog(), "fluss", args)
			if err != nil {
				return errText(err) + "\n"
			}
			var b strings.Builder
			dumpCompoundPlan(&b, p, "")
			return b.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func dumpSetOperand(b *strings.Builder, st Statement, indent string) {
	switch x := st.(type) {
	case *Compound:
		fmt.Fprintf(b, "%s%s", indent, strings.ToLower(x.Kind.String()))
		if x.All {
			b.WriteString(" all")
		}
		b.WriteString("\n")
		dumpSetOperand(b, x.Left, indent+"  ")
		dumpSetOperand(b, x.Right, indent+"  ")
		dumpTail(b, indent, x.OrderBy, x.Limit, x.Offset)
	case *Select:
		fmt.Fprintf(b, "%sselect: %s\n", indent, x)
	case *Insert:
		fmt.Fprintf(b, "insert into %s\n", pathText(x.Table))
		if len(x.Columns) > 0 {
			fmt.Fprintf(b, "columns: %s\n", strings.Join(x.Columns, ", "))
		}
		if x.Compound != nil {
			dumpSetOperand(b, x.Compound, indent)
		} else {
			dumpSetOperand(b, x.Select, indent)
		}
	case *Explain:
		b.WriteString("explain")
		if x.Analyze {
			b.WriteString(" analyze")
		}
		b.WriteString("\n")
		dumpSetOperand(b, x.query(), indent+"  ")
	default:
		fmt.Fprintf(b, "%s%T\n", indent, st)
	}
}

func dumpTail(b *strings.Builder, indent string, order []OrderItem, limit, offset Expr) {
	for _, o := range order {
		dir := "asc"
		if o.Desc {
			dir = "desc"
		}
		fmt.Fprintf(b, "%sorder by: %s %s\n", indent, dumpExpr(o.Expr), dir)
	}
	if limit != nil {
		fmt.Fprintf(b, "%slimit: %s\n", indent, dumpExpr(limit))
	}
	if offset != nil {
		fmt.Fprintf(b, "%soffset: %s\n", indent, dumpExpr(offset))
	}
}

func dumpCompoundPlan(b *strings.Builder, p *CompoundPlan, indent string) {
	fmt.Fprintf(b, "%s%s", indent, strings.ToLower(p.Kind.String()))
	if p.All {
		b.WriteString(" all")
	}
	cols := make([]string, len(p.Output))
	for i, o := range p.Output {
		cols[i] = o.Name + ":" + o.Expr.Type().String()
	}
	fmt.Fprintf(b, " -> %s\n", strings.Join(cols, ", "))
	for _, br := range []CompoundBranch{p.Left, p.Right} {
		if br.Compound != nil {
			dumpCompoundPlan(b, br.Compound, indent+"  ")
			continue
		}
		outs := make([]string, len(br.Select.Output))
		for i, o := range br.Select.Output {
			outs[i] = o.Expr.String()
		}
		conv := make([]string, len(br.Convert))
		for i, e := range br.Convert {
			conv[i] = e.String() + ":" + e.Type().String()
		}
		from := "(no FROM)"
		if br.Select.From {
			from = br.Select.Table.Path.String()
		}
		fmt.Fprintf(b, "%s  select %s from %s as %s\n", indent, strings.Join(outs, ", "), from, strings.Join(conv, ", "))
	}
	for _, o := range p.OrderBy {
		dir := "asc"
		if o.Desc {
			dir = "desc"
		}
		c := o.Expr.(*ColumnRef)
		fmt.Fprintf(b, "%sorder by: column %d (%s) %s\n", indent, c.Index+1, c.Name, dir)
	}
	if p.Limit >= 0 {
		fmt.Fprintf(b, "%slimit: %d\n", indent, p.Limit)
	}
	if p.Offset > 0 {
		fmt.Fprintf(b, "%soffset: %d\n", indent, p.Offset)
	}
}
