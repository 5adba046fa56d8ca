package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pruningTable is a table of the bucket-pruning test with the columns its
// WHERE clauses pin: the bucket key's, and their values' generators.
type pruningTable struct {
	name string
	ddl  string
	// pins are the bucket-key columns, each with a random literal of it.
	pins []pruningPin
	row  func(rng *rand.Rand, i int) string // the VALUES tuple of row i
}

type pruningPin struct {
	col string
	lit func(rng *rand.Rand) string
}

func intLit(n int) func(*rand.Rand) string {
	return func(rng *rand.Rand) string { return fmt.Sprint(rng.IntN(n)) }
}

func strLit(n int) func(*rand.Rand) string {
	return func(rng *rand.Rand) string { return fmt.Sprintf("'s%d'", rng.IntN(n)) }
}

// pruningWhere returns a random WHERE pinning some or all of t's bucket
// key (= or IN, NULLs among the values now and then), maybe with another
// conjunct, and the same WHERE with every pin made an OR that no row's v
// satisfies, which reads every bucket.
func pruningWhere(rng *rand.Rand, t pruningTable) (pruned, whole string) {
	var a, b []string
	for _, p := range t.pins {
		if rng.IntN(8) == 0 {
			continue // not pinned: every bucket
		}
		var c string
		if rng.IntN(2) == 0 {
			c = p.col + " = " + p.lit(rng)
		} else {
			vals := make([]string, 1+rng.IntN(4))
			for i := range vals {
				vals[i] = p.lit(rng)
				if rng.IntN(10) == 0 {
					vals[i] = "NULL"
				}
			}
			c = p.col + " IN (" + strings.Join(vals, ", ") + ")"
		}
		a = append(a, c)
		b = append(b, "("+c+" OR v < -1000000)")
	}
	if rng.IntN(2) == 0 {
		c := fmt.Sprintf("v >= %d", rng.IntN(50))
		a, b = append(a, c), append(b, c)
	}
	if len(a) == 0 {
		a, b = []string{"v >= 0"}, []string{"v >= 0"}
	}
	return strings.Join(a, " AND "), strings.Join(b, " AND ")
}

// Bucket pruning is differential against reads of every bucket: over log
// and key tables (partitioned, lake-enabled and tiered, a bucket key of
// several columns, and one that is a prefix of the key), after upserts
// and deletes, in a transaction's read view and in a transaction with its
// own writes, a WHERE that pins the bucket key reads the rows the same
// WHERE reads from every bucket, also where it is a prefix lookup of the
// key-value state; and EXPLAIN names only the buckets the values hash to.
func TestBucketPruningDifferential(t *testing.T) {
	db, _ := openDB(t, "tiering=off")
	ctx := context.Background()
	tables := []pruningTable{
		{
			name: "lg",
			ddl: `CREATE TABLE lg (k INT, s STRING, v BIGINT) WITH ('bucket.num' = '8', 'bucket.key' = 'k,s',
				'table.datalake.enabled' = 'true')`,
			pins: []pruningPin{{"k", intLit(6)}, {"s", strLit(4)}},
			row: func(rng *rand.Rand, i int) string {
				return fmt.Sprintf("(%d, 's%d', %d)", rng.IntN(6), rng.IntN(4), rng.IntN(100))
			},
		},
		{
			name: "kt",
			ddl: `CREATE TABLE kt (p STRING, id BIGINT, v BIGINT, PRIMARY KEY (p, id) NOT ENFORCED) PARTITIONED BY (p)
				WITH ('bucket.num' = '16', 'table.datalake.enabled' = 'true')`,
			pins: []pruningPin{{"id", intLit(60)}, {"p", func(rng *rand.Rand) string { return fmt.Sprintf("'p%d'", rng.IntN(3)) }}},
			row: func(rng *rand.Rand, i int) string {
				return fmt.Sprintf("('p%d', %d, %d)", rng.IntN(3), rng.IntN(60), rng.IntN(100))
			},
		},
		{
			name: "kp",
			ddl: `CREATE TABLE kp (p STRING, a INT, b INT, v BIGINT, PRIMARY KEY (p, a, b) NOT ENFORCED) PARTITIONED BY (p)
				WITH ('bucket.num' = '4', 'bucket.key' = 'a', 'table.datalake.enabled' = 'true')`,
			pins: []pruningPin{{"a", intLit(10)}, {"p", func(rng *rand.Rand) string { return fmt.Sprintf("'p%d'", rng.IntN(3)) }}},
			row: func(rng *rand.Rand, i int) string {
				return fmt.Sprintf("('p%d', %d, %d, %d)", rng.IntN(3), rng.IntN(10), rng.IntN(30), rng.IntN(100))
			},
		},
		{
			name: "kb",
			ddl: `CREATE TABLE kb (a INT, b INT, v BIGINT, PRIMARY KEY (a, b) NOT ENFORCED)
				WITH ('bucket.num' = '5', 'bucket.key' = 'a')`,
			pins: []pruningPin{{"a", intLit(12)}},
			row: func(rng *rand.Rand, i int) string {
				return fmt.Sprintf("(%d, %d, %d)", rng.IntN(12), rng.IntN(20), rng.IntN(100))
			},
		},
	}
	rng := rand.New(rand.NewPCG(7, 11))
	insert := func(tb pruningTable, n int) {
		vals := make([]string, n)
		for i := range vals {
			vals[i] = tb.row(rng, i)
		}
		mustExec(t, db, "INSERT INTO "+tb.name+" VALUES "+strings.Join(vals, ", "))
	}
	check := func(q querier, tb pruningTable, what string) {
		for range 60 {
			pruned, whole := pruningWhere(rng, tb)
			want := txRows(t, q, "SELECT * FROM "+tb.name+" WHERE "+whole)
			got := txRows(t, q, "SELECT * FROM "+tb.name+" WHERE "+pruned)
			require.Equal(t, want, got, "%s: %s", what, pruned)
			require.Equal(t, []string{fmt.Sprint(len(want))}, txRows(t, q, "SELECT COUNT(*) FROM "+tb.name+" WHERE "+pruned), "%s: %s", what, pruned)
		}
	}
	for _, tb := range tables {
		mustExec(t, db, tb.ddl)
		insert(tb, 300)
		check(db, tb, tb.name+" written")
		if strings.Contains(tb.ddl, "datalake") {
			mustExec(t, db, "CALL sys.tier('"+tb.name+"')")
			insert(tb, 100)
			check(db, tb, tb.name+" tiered, and written after")
		}
		if tb.name != "lg" {
			mustExec(t, db, "DELETE FROM "+tb.name+" WHERE v < 20")
			insert(tb, 50)
			check(db, tb, tb.name+" after deletes and upserts")
		}
		ro, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		insert(tb, 20) // after the read view: not seen by ro
		check(ro, tb, tb.name+" in a transaction's read view")
		require.NoError(t, ro.Rollback())
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		vals := make([]string, 40)
		for i := range vals {
			vals[i] = tb.row(rng, i)
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO "+tb.name+" VALUES "+strings.Join(vals, ", "))
		require.NoError(t, err)
		if tb.name != "lg" {
			_, err = tx.ExecContext(ctx, "DELETE FROM "+tb.name+" WHERE v > 90")
			require.NoError(t, err)
		}
		check(tx, tb, tb.name+" in a transaction that wrote it")
		require.NoError(t, tx.Rollback())
	}

	// A table whose bucket key is a proper prefix of its key reads the
	// rows of the pinned values from their bucket's key range; one whose
	// bucket key is its whole key looks keys up one by one.
	plan := strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM kp WHERE a IN (1, 2) AND p = 'p1' AND v > 3`), "\n")
	require.Contains(t, plan, "PrefixLookup: [fluss.kp] [Key: p, a] keys=2")
	require.NotContains(t, strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM kp WHERE a = 1`), "\n"), "PrefixLookup", "the partition is not pinned")
	require.NotContains(t, strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM kt WHERE id = 1`), "\n"), "PrefixLookup")

	// EXPLAIN: the pinned values' buckets only, and every bucket when
	// the key is not pinned whole.
	plan = strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM kt WHERE id IN (3, 4) AND v > 1`), "\n")
	require.Contains(t, plan, "Buckets: ")
	require.Contains(t, plan, " of 16")
	require.LessOrEqual(t, strings.Count(plan, "bucket="), 2*3, "two buckets of each of three partitions")
	plan = strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM lg WHERE k = 1`), "\n")
	require.NotContains(t, plan, "Buckets: ")
	many := make([]string, 300)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	plan = strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM lg WHERE s = 's1' AND k IN (`+strings.Join(many, ", ")+`)`), "\n")
	require.NotContains(t, plan, "Buckets: ", "too many values to hash: every bucket")
	plan = strings.Join(explainLines(t, db, `EXPLAIN SELECT * FROM lg WHERE k = 1 AND s = NULL`), "\n")
	require.Contains(t, plan, "Buckets:  of 8", "a NULL pins no bucket")
	require.NotContains(t, plan, "Split:")
}

// explainLines returns EXPLAIN's rows.
func explainLines(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	return renderRows(t, db, true, q)
}
