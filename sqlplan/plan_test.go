package sqlplan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// joinCatalog holds the tables of the plan goldens: log tables t1, t2,
// t3, a primary-key table pk and a table in another database.
func joinCatalog() fakeCatalog {
	table := func(db, name string, pk []string, cols ...metadata.Column) metadata.TableInfo {
		return metadata.TableInfo{Path: metadata.TablePath{Database: db, Table: name},
			Schema: metadata.Schema{Columns: cols, PrimaryKey: pk}}
	}
	notNull := func(name string, t metadata.DataType) metadata.Column {
		return metadata.Column{Name: name, Type: t, NotNull: true}
	}
	ts := []metadata.TableInfo{
		table("fluss", "t1", nil, col("a", metadata.IntType()), col("b", metadata.IntType()), col("s", metadata.StringType())),
		table("fluss", "t2", nil, col("a", metadata.IntType()), col("c", metadata.BigIntType()), col("s", metadata.StringType())),
		table("fluss", "t3", nil, col("c", metadata.BigIntType()), col("d", metadata.DoubleType())),
		table("fluss", "pk", []string{"id"}, notNull("id", metadata.IntType()), col("v", metadata.StringType())),
		table("db2", "t1", nil, col("x", metadata.IntType())),
	}
	cat := fakeCatalog{}
	for _, t := range ts {
		cat[t.Path] = t
	}
	return cat
}

// leafLines renders the read of one table in the goldens: the table, the
// columns it produces and the conjuncts pushed to it.
func leafLines(sp *SelectPlan) []string {
	line := "Scan: " + sp.Table.Path.String()
	if !sp.From {
		line = "Values: 1 row"
	}
	var cols []string
	for _, o := range sp.Output {
		cols = append(cols, o.Expr.String())
	}
	line += " [Columns: " + strings.Join(cols, ", ") + "]"
	if sp.Where != nil {
		line += " [Where: " + sp.Where.String() + "]"
	}
	if sp.Limit >= 0 {
		line += fmt.Sprintf(" [Limit: %d]", sp.Limit)
	}
	return []string{line}
}

// TestPlanGolden binds queries over several tables and prints their plan
// trees. "plan" runs every optimizer rule; "rules" prints the tree after
// binding and after each rule in turn, so each rule's own effect shows.
func TestPlanGolden(t *testing.T) {
	cat := joinCatalog()
	datadriven.RunTest(t, "testdata/plan", func(t *testing.T, d *datadriven.TestData) string {
		st, err := Parse(d.Input)
		if err != nil {
			return errText(err) + "\n"
		}
		sel, ok := st.(*Select)
		require.True(t, ok, "%T", st)
		switch d.Cmd {
		case "plan":
			sp, err := BindSelect(context.Background(), sel, cat, "", nil)
			if err != nil {
				return bindErrText(d.Input, err)
			}
			return strings.Join(FormatTree(sp, leafLines), "\n") + "\n"
		case "rules":
			var out strings.Builder
			for n := 0; n <= len(rules); n++ {
				sp, err := bindSelectRules(context.Background(), sel, cat, "", nil, rules[:n])
				if err != nil {
					return bindErrText(d.Input, err)
				}
				name := "bound"
				if n > 0 {
					name = rules[n-1].name
				}
				fmt.Fprintf(&out, "%s:\n", name)
				for _, l := range FormatTree(sp, leafLines) {
					out.WriteString("  " + l + "\n")
				}
			}
			return out.String()
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// bindErrText prints a binding error with the line and column its name
// is found at, as the driver reports it.
func bindErrText(sql string, err error) string {
	var ne interface{ LocatedName() string }
	if errors.As(err, &ne) {
		if pos := IdentPosition(sql, ne.LocatedName()); pos >= 0 {
			line, col := 1, 1
			for _, c := range sql[:pos] {
				if c == '\n' {
					line, col = line+1, 1
				} else {
					col++
				}
			}
			return fmt.Sprintf("%s (line %d, column %d)\n", errText(err), line, col)
		}
	}
	return errText(err) + "\n"
}
