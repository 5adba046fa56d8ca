package fluss_test

import (
	"database/sql"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// limitsHeap is the most live heap a limits case may leave behind: far
// more than any case needs, far less than a case that holds its input
// many times over.
const limitsHeap = 1 << 30

// inlRows is the row count of the table the long IN lists and deep
// expressions filter.
const inlRows = 1000

// limitsPartitions is the partition count of TestLimits. The README's
// limit is 10,000, which passes, but takes a minute under -race on two
// cores (creating the partitions' logs and planning a scan of them all
// each take about half), so CI runs a fifth of it.
var limitsPartitions = flag.Int("limits.partitions", 2000, "partitions TestLimits creates (10000 for the full size)")

// TestLimits takes the engine to the sizes the README promises and past
// them: each case works, or fails with an error that says what was too
// big; none panics, overflows its stack or holds unbounded memory.
func TestLimits(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off")
	count := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		require.NoError(t, db.QueryRow(q, args...).Scan(&n), q)
		return n
	}
	values := func(n int, row func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row(i))
		}
		return b.String()
	}
	checkHeap := func(t *testing.T) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		require.Less(t, ms.HeapAlloc, uint64(limitsHeap), "live heap after the case")
	}

	t.Run("4096 buckets", func(t *testing.T) {
		mustExec(t, db, `CREATE TABLE b4096 (id BIGINT, s STRING) WITH ('bucket.num' = '4096', 'bucket.key' = 'id')`)
		mustExec(t, db, `INSERT INTO b4096 VALUES `+values(10000, func(i int) string { return fmt.Sprintf("(%d, 'x')", i) }))
		require.Equal(t, int64(10000), count(`SELECT COUNT(*) FROM b4096`))
		require.Equal(t, int64(1), count(`SELECT COUNT(*) FROM b4096 WHERE id = 4242`))
		_, err := db.Exec(`CREATE TABLE b4097 (id BIGINT) WITH ('bucket.num' = '4097')`)
		require.ErrorIs(t, err, fluss.ErrInvalidOption)
		require.ErrorContains(t, err, "4097")
		checkHeap(t)
	})

	t.Run("10000 partitions", func(t *testing.T) {
		n := *limitsPartitions
		mustExec(t, db, `CREATE TABLE p10k (id BIGINT, p INT) PARTITIONED BY (p)`)
		mustExec(t, db, `INSERT INTO p10k VALUES `+values(n, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i) }))
		require.Len(t, queryAll(t, db, `SHOW PARTITIONS p10k`), n)
		require.Equal(t, int64(n), count(`SELECT COUNT(*) FROM p10k`))
		require.Equal(t, int64(10), count(`SELECT COUNT(*) FROM p10k WHERE p >= ?`, n-10))
		mustExec(t, db, `ALTER TABLE p10k DROP PARTITION (p = '5')`)
		require.Equal(t, int64(n-1), count(`SELECT COUNT(*) FROM p10k`))
		checkHeap(t)
	})

	t.Run("1000 columns", func(t *testing.T) {
		cols := values(1000, func(i int) string { return fmt.Sprintf("c%d BIGINT", i) })
		mustExec(t, db, `CREATE TABLE c1000 (`+cols+`)`)
		row := "(" + values(1000, func(i int) string { return fmt.Sprint(i) }) + ")"
		mustExec(t, db, `INSERT INTO c1000 VALUES `+row+`, `+row)
		got := queryAll(t, db, `SELECT * FROM c1000`)
		require.Len(t, got, 2)
		require.Len(t, got[0], 1000)
		require.Equal(t, int64(999), got[1][999])
		require.Equal(t, int64(2*998), count(`SELECT SUM(c998) FROM c1000`))
		checkHeap(t)
	})

	t.Run("1 MiB strings", func(t *testing.T) {
		big := strings.Repeat("0123456789abcdef", 1<<16)
		mustExec(t, db, `CREATE TABLE s1m (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true')`)
		for i := range 3 {
			mustExec(t, db, `INSERT INTO s1m VALUES (?, ?)`, i, big[:len(big)-i])
		}
		mustExec(t, db, `CALL sys.tier('s1m')`)
		mustExec(t, db, `CALL sys.kv_snapshot('s1m')`)
		var s string
		require.NoError(t, db.QueryRow(`SELECT s FROM s1m WHERE id = 2`).Scan(&s))
		require.Equal(t, big[:len(big)-2], s)
		require.Equal(t, int64(3), count(`SELECT COUNT(*) FROM s1m WHERE s LIKE '0123%' AND LENGTH(s) > 1000000`))
		checkHeap(t)
	})

	t.Run("10000-item IN list", func(t *testing.T) {
		mustExec(t, db, `CREATE TABLE inl (id BIGINT)`)
		// The table is small: the list is what is large.
		mustExec(t, db, `INSERT INTO inl VALUES `+values(inlRows, func(i int) string { return fmt.Sprintf("(%d)", i) }))
		list := values(10000, func(i int) string { return fmt.Sprint(2 * i) })
		require.Equal(t, int64(inlRows/2), count(`SELECT COUNT(*) FROM inl WHERE id IN (`+list+`)`))
		require.Equal(t, int64(inlRows/2), count(`SELECT COUNT(*) FROM inl WHERE id NOT IN (`+list+`)`))
		args := make([]any, 10000)
		for i := range args {
			args[i] = 2*i + 1
		}
		require.Equal(t, int64(inlRows/2), count(`SELECT COUNT(*) FROM inl WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(args)), ", ")+`)`, args...))
		checkHeap(t)
	})

	t.Run("deep nesting", func(t *testing.T) {
		// Each works or fails with a syntax error saying it is too deep;
		// neither panics nor overflows the stack.
		for _, depth := range []int{100, 10000} {
			q := `SELECT ` + strings.Repeat("(", depth) + "1" + strings.Repeat(")", depth)
			limitsWorksOrRefused(t, db, q, []any{int64(1)}, "parentheses nested more than")
			q = `SELECT COUNT(*) FROM inl WHERE ` + strings.Repeat("NOT ", depth) + "id = 1"
			want := int64(1)
			if depth%2 == 1 {
				want = inlRows - 1
			}
			limitsWorksOrRefused(t, db, q, []any{want}, "too deep")
			q = `SELECT ` + strings.Repeat("1 + ", depth) + "1"
			limitsWorksOrRefused(t, db, q, []any{int64(depth + 1)}, "too deep")
		}
		for _, terms := range []int{5000} {
			or := values(terms, func(i int) string { return fmt.Sprintf("id = %d", i) })
			q := `SELECT COUNT(*) FROM inl WHERE ` + strings.ReplaceAll(or, ", ", " OR ")
			limitsWorksOrRefused(t, db, q, []any{int64(min(terms, inlRows))}, "too deep")
			and := values(terms, func(i int) string { return fmt.Sprintf("id <> %d", inlRows+i) })
			q = `SELECT COUNT(*) FROM inl WHERE ` + strings.ReplaceAll(and, ", ", " AND ")
			limitsWorksOrRefused(t, db, q, []any{int64(inlRows)}, "too deep")
		}
		checkHeap(t)
	})

	t.Run("1 MB of SQL", func(t *testing.T) {
		mustExec(t, db, `CREATE TABLE sql1m (id BIGINT, s STRING)`)
		q := `INSERT INTO sql1m VALUES ` + values(20000, func(i int) string { return fmt.Sprintf("(%d, '%040d')", i, i) })
		require.Greater(t, len(q), 1<<20)
		mustExec(t, db, q)
		require.Equal(t, int64(20000), count(`SELECT COUNT(*) FROM sql1m`))
		lit := strings.Repeat("y", 1<<20)
		var s string
		require.NoError(t, db.QueryRow(`SELECT '`+lit+`'`).Scan(&s))
		require.Equal(t, lit, s)
		checkHeap(t)
	})
}

// limitsWorksOrRefused runs q: it returns want, or fails with an error
// that contains what (and never panics, which would end the test binary).
func limitsWorksOrRefused(t *testing.T, db *sql.DB, q string, want []any, what string) {
	t.Helper()
	rows, err := db.Query(q)
	if err == nil {
		defer rows.Close()
		var got []any
		if rows.Next() {
			got = make([]any, len(want))
			ptrs := make([]any, len(want))
			for i := range got {
				ptrs[i] = &got[i]
			}
			err = rows.Scan(ptrs...)
		}
		if err == nil {
			err = rows.Err()
		}
		if err == nil {
			require.Equal(t, want, got, "%.60s... (%d bytes)", q, len(q))
			return
		}
	}
	require.ErrorContains(t, err, what, "%.60s... (%d bytes)", q, len(q))
}
