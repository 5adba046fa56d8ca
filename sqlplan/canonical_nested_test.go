package sqlplan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCanonicalFormOfNestedPredicates: a predicate used as an operand of
// another (a comparison, IN, ANY, ALL, IS NULL) keeps its parentheses in
// the canonical form, which parses back to itself. The quantified
// comparison once printed `(0<0)>ANY(SELECT 0)` as `0 < 0 > ANY (SELECT
// 0)`, which does not parse.
func TestCanonicalFormOfNestedPredicates(t *testing.T) {
	inner := []string{"a = b", "a IN (1, 2)", "a IS NULL", "a BETWEEN 1 AND 2", "a LIKE 'x'", "NOT a",
		"a > ANY (SELECT 1)", "a IN (SELECT 1)", "EXISTS (SELECT 1)", "a = ALL (SELECT 1)", "a NOT IN (SELECT 1)"}
	outer := []string{"(%s) = 1", "1 < (%s)", "(%s) > ANY (SELECT 0)", "(%s) <= ALL (SELECT 0)", "(%s) IN (SELECT 0)",
		"(%s) IS NULL", "(%s) IN (1, 2)", "(%s) NOT IN (SELECT 0)", "(%s) BETWEEN 0 AND 1", "1 BETWEEN (%s) AND 2",
		"(%s) LIKE 'y'", "NOT (%s)"}
	for _, o := range outer {
		for _, i := range inner {
			for _, form := range []string{"DELETE FROM t WHERE %s", "UPDATE t SET x = %s"} {
				sql := fmt.Sprintf(form, fmt.Sprintf(o, i))
				st, err := Parse(sql)
				require.NoError(t, err, sql)
				text := st.String()
				again, err := Parse(text)
				require.NoError(t, err, "canonical form %q of %q", text, sql)
				require.Equal(t, text, again.String(), "canonical form %q of %q", text, sql)
			}
		}
	}
}
