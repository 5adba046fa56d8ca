package sqlplan

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
)

// orChain is `id = 1 OR id = 1 OR ...` with n terms.
func orChain(n int) string {
	return strings.Repeat("id = 1 OR ", n-1) + "id = 1"
}

// allocated is the number of bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// cancellingCatalog cancels the statement's context as the table is
// resolved, so whatever binding does after that runs on a done context.
type cancellingCatalog struct {
	fakeCatalog
	cancel context.CancelFunc
}

func (c cancellingCatalog) TableInfo(ctx context.Context, p metadata.TablePath) (metadata.TableInfo, error) {
	c.cancel()
	return c.fakeCatalog.TableInfo(ctx, p)
}

// TestBindChecksContext pins that binding a huge WHERE stops at a done
// context with its error, for every statement that
// binds one (issue 15 item 7: a 1 s deadline returned after 20 s). The
// error is the context's own, as the driver promises.
func TestBindChecksContext(t *testing.T) {
	where := orChain(20000)
	for _, tc := range []struct {
		sql  string
		bind func(ctx context.Context, st Statement, cat Catalog) error
	}{
		{"SELECT count(*) FROM t WHERE " + where, func(ctx context.Context, st Statement, cat Catalog) error {
			_, err := BindSelect(ctx, st.(*Select), cat, "fluss", nil)
			return err
		}},
		{"UPDATE pk SET w = 1 WHERE " + where, func(ctx context.Context, st Statement, cat Catalog) error {
			_, err := BindUpdate(ctx, st.(*Update), cat, "fluss", nil)
			return err
		}},
		{"DELETE FROM pk WHERE " + where, func(ctx context.Context, st Statement, cat Catalog) error {
			_, err := BindDelete(ctx, st.(*Delete), cat, "fluss", nil)
			return err
		}},
	} {
		st := mustParse(t, tc.sql)
		require.NoError(t, tc.bind(context.Background(), st, newCatalog()), "a live context binds")
		ctx, cancel := context.WithCancel(context.Background())
		err := tc.bind(ctx, st, cancellingCatalog{fakeCatalog: newCatalog(), cancel: cancel})
		require.Equal(t, context.Canceled, err, tc.sql[:30])
	}
}

// TestExprStringLinear pins that printing an expression costs in
// proportion to its size: a chain of n ORs is n nodes deep, and printing
// each node by concatenating its children's text copied O(n²) bytes.
func TestExprStringLinear(t *testing.T) {
	printed := func(n int) (string, uint64) {
		sp, err := bindSelect(t, "SELECT id FROM t WHERE "+orChain(n))
		require.NoError(t, err)
		var s string
		return s, allocated(func() { s = sp.Where.String() })
	}
	small, smallBytes := printed(2000)
	large, largeBytes := printed(16000)
	for n, got := range map[int]string{2000: small, 16000: large} {
		want := strings.Repeat("(", n-1) + "id = 1" + strings.Repeat(" OR id = 1)", n-1)
		require.True(t, got == want, "%d terms print as ...%s", n, got[len(got)-60:])
	}
	// 8 times the terms: linear is 8 times the bytes, quadratic 64.
	require.Less(t, largeBytes, 16*smallBytes, "printing 16000 terms took %d bytes, 2000 took %d", largeBytes, smallBytes)
}

// TestExprStringForms pins the text of every composite expression, which
// EXPLAIN prints and error messages quote.
func TestExprStringForms(t *testing.T) {
	sp, err := bindSelect(t, `SELECT CASE WHEN i > 1 THEN Name ELSE CAST(-i AS CHAR) END, COUNT(*), COUNT(DISTINCT i), (i + 2) DIV 3
		FROM t WHERE (i = 1 OR NOT Name IN ('a', 'b')) AND price BETWEEN 1 AND 2 AND Name NOT LIKE 'x!%' ESCAPE '!' AND b IS NOT NULL AND tm IS NULL GROUP BY i`)
	require.NoError(t, err)
	var outs []string
	for _, o := range sp.Output {
		outs = append(outs, o.Expr.String())
	}
	require.Equal(t, []string{"CASE WHEN i > 1 THEN Name ELSE CAST(-i AS STRING) END", "COUNT(*)", "COUNT(DISTINCT i)", "((i + 2) DIV 3)"}, outs)
	require.Equal(t, "(((((i = 1 OR NOT Name IN ('a', 'b')) AND price BETWEEN 1 AND 2) AND Name NOT LIKE 'x!%' ESCAPE '!') AND b IS NOT NULL) AND tm IS NULL)", sp.Where.String())
}
