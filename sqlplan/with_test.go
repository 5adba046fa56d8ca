package sqlplan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestParseWith prints each common table expression and the main query;
// the canonical text of the statement must parse back to itself.
func TestParseWith(t *testing.T) {
	datadriven.RunTest(t, "testdata/with", func(t *testing.T, d *datadriven.TestData) string {
		st, err := Parse(d.Input)
		if err != nil {
			return errText(err) + "\n"
		}
		var b strings.Builder
		var sel *Select
		switch s := st.(type) {
		case *Select:
			sel = s
		case *Explain:
			b.WriteString("explain\n")
			sel = s.Select
		case *Compound:
			for _, c := range s.With {
				fmt.Fprintf(&b, "cte %s: %s\n", c.Name, c.query())
			}
			fmt.Fprintf(&b, "compound: %s\ninputs: %d\n", s, s.NumInput())
			again, err := Parse(st.String())
			require.NoError(t, err)
			require.Equal(t, st.String(), again.String())
			return b.String()
		case *Insert:
			// INSERT ... WITH ... SELECT: the WITH belongs to the query.
			fmt.Fprintf(&b, "insert: %s\ninputs: %d\n", s, s.NumInput())
			again, err := Parse(st.String())
			require.NoError(t, err, "canonical form %q must parse", st.String())
			require.Equal(t, st.String(), again.String())
			require.Equal(t, st.NumInput(), again.NumInput())
			return b.String()
		default:
			t.Fatalf("parsed %T", st)
		}
		for _, c := range sel.With {
			fmt.Fprintf(&b, "cte %s", c.Name)
			if c.Columns != nil {
				fmt.Fprintf(&b, " (%s)", strings.Join(c.Columns, ", "))
			}
			fmt.Fprintf(&b, ": %s\n", c.query())
		}
		dumpSelect(&b, sel)
		fmt.Fprintf(&b, "inputs: %d\n", st.NumInput())
		fmt.Fprintf(&b, "sql: %s\n", st)
		again, err := Parse(st.String())
		require.NoError(t, err, "canonical form %q must parse", st.String())
		require.Equal(t, st.String(), again.String())
		require.Equal(t, st.NumInput(), again.NumInput())
		return b.String()
	})
}
