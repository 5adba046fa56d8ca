package sqlplan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestParseView covers CREATE VIEW, DROP VIEW, SHOW CREATE VIEW and
// CREATE TABLE ... AS: each prints its parts and its canonical text,
// which must parse back to itself.
func TestParseView(t *testing.T) {
	datadriven.RunTest(t, "testdata/view", func(t *testing.T, d *datadriven.TestData) string {
		st, err := Parse(d.Input)
		if err != nil {
			return errText(err) + "\n"
		}
		var b strings.Builder
		switch s := st.(type) {
		case *CreateView:
			fmt.Fprintf(&b, "view %s or-replace=%v if-not-exists=%v\n", pathText(s.View), s.OrReplace, s.IfNotExists)
			if s.Columns != nil {
				fmt.Fprintf(&b, "columns: %s\n", strings.Join(s.Columns, ", "))
			}
			fmt.Fprintf(&b, "text: %s\n", s.Query)
			again, err := Parse(s.Query)
			require.NoError(t, err, "the stored text %q must parse", s.Query)
			var q Statement = s.Select
			if s.Compound != nil {
				q = s.Compound
			}
			require.Equal(t, q.String(), again.String(), "the stored text is the query")
		case *CreateTableAs:
			fmt.Fprintf(&b, "table %s if-not-exists=%v\n", pathText(s.Table.Path), s.IfNotExists)
			if pk := s.Table.Schema.PrimaryKey; pk != nil {
				fmt.Fprintf(&b, "primary key: %s\n", strings.Join(pk, ", "))
			}
			if s.Table.PartitionKeys != nil {
				fmt.Fprintf(&b, "partitioned by: %s\n", strings.Join(s.Table.PartitionKeys, ", "))
			}
			if s.Table.Options != nil {
				fmt.Fprintf(&b, "options: %s\n", formatOptions(s.Table.Options))
			}
			if s.Table.Comment != "" {
				fmt.Fprintf(&b, "comment: %s\n", s.Table.Comment)
			}
			fmt.Fprintf(&b, "inputs: %d\n", s.NumInput())
		}
		fmt.Fprintf(&b, "sql: %s\n", st)
		again, err := Parse(st.String())
		require.NoError(t, err, "canonical form %q must parse", st.String())
		require.Equal(t, st.String(), again.String())
		return b.String()
	})
}
