package fluss_test

import (
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLakeKeepsDroppedPartition is issue 15's item 4 as reported: the rows
// a dropped partition left in the lake stay readable, and a partition
// re-created under the same name adds to them, before and after the next
// tiering round alike.
func TestLakeKeepsDroppedPartition(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off")
	mustExec(t, db, `CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'x'), (2, 'x'), (3, 'x'), (4, 'x'), (5, 'x')`)
	mustExec(t, db, `CALL sys.tier('t')`)
	mustExec(t, db, `ALTER TABLE t DROP PARTITION (p = 'x')`)
	mustExec(t, db, `INSERT INTO t VALUES (6, 'x'), (7, 'x'), (8, 'x')`)
	count := func() int64 {
		var n int64
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM t WHERE p = 'x'`).Scan(&n))
		return n
	}
	require.Equal(t, int64(8), count())
	mustExec(t, db, `CALL sys.tier('t')`)
	require.Equal(t, int64(8), count())
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, idsOf(t, db, `SELECT id FROM t WHERE p = 'x'`))
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, idsOf(t, db, "SELECT id FROM `t$lake`"))
}

// lakeModel is what a partitioned lake-enabled table must answer: per
// partition name, the rows the lake holds (kept when the partition is
// dropped) and the changes of the live partition since its last tiering
// round. For a key table a change is an upsert (v >= 0) or an emitted
// delete (v < 0); the live partition's own state decides whether a delete
// emits anything (a delete of a key it never held emits nothing).
type lakeModel struct {
	keyed   bool
	lake    map[string]map[int64]int64   // name -> id -> v
	pending map[string][][2]int64        // name -> changes since the last round
	live    map[string]map[int64]int64   // name -> the live partition's state
	logRows map[string]map[int64][]int64 // log table: name -> id -> values (ids repeat)
}

func newLakeModel(keyed bool) *lakeModel {
	return &lakeModel{keyed: keyed, lake: map[string]map[int64]int64{}, pending: map[string][][2]int64{},
		live: map[string]map[int64]int64{}, logRows: map[string]map[int64][]int64{}}
}

func (m *lakeModel) write(name string, id, v int64) {
	if m.live[name] == nil {
		m.live[name] = map[int64]int64{}
	}
	m.live[name][id] = v
	m.pending[name] = append(m.pending[name], [2]int64{id, v})
}

func (m *lakeModel) delete(name string, id int64) {
	if _, ok := m.live[name][id]; !ok {
		return
	}
	delete(m.live[name], id)
	m.pending[name] = append(m.pending[name], [2]int64{id, -1})
}

func (m *lakeModel) drop(name string) {
	delete(m.live, name)
	delete(m.pending, name)
}

func (m *lakeModel) tier() {
	for name, changes := range m.pending {
		if m.lake[name] == nil {
			m.lake[name] = map[int64]int64{}
			m.logRows[name] = map[int64][]int64{}
		}
		for _, c := range changes {
			m.apply(m.lake[name], m.logRows[name], c)
		}
	}
	m.pending = map[string][][2]int64{}
}

func (m *lakeModel) apply(state map[int64]int64, rows map[int64][]int64, c [2]int64) {
	if !m.keyed {
		rows[c[0]] = append(rows[c[0]], c[1])
		return
	}
	if c[1] < 0 {
		delete(state, c[0])
	} else {
		state[c[0]] = c[1]
	}
}

// rows returns "id:v" of every row of partition name, sorted.
func (m *lakeModel) rows(name string) []string {
	state := maps.Clone(m.lake[name])
	if state == nil {
		state = map[int64]int64{}
	}
	rows := map[int64][]int64{}
	for id, vs := range m.logRows[name] {
		rows[id] = slices.Clone(vs)
	}
	for _, c := range m.pending[name] {
		m.apply(state, rows, c)
	}
	out := []string{}
	if m.keyed {
		for id, v := range state {
			out = append(out, fmt.Sprintf("%d:%d", id, v))
		}
	}
	for id, vs := range rows {
		for _, v := range vs {
			out = append(out, fmt.Sprintf("%d:%d", id, v))
		}
	}
	slices.Sort(out)
	return out
}

// TestLakePartitionLifecycleProperty interleaves writes, deletes, drops
// and re-creations of partitions and tiering rounds on a log table and a
// key table, and checks every partition's rows after every step against
// the model: no tiering round changes an answer, and a dropped
// partition's tiered rows stay readable under its name.
func TestLakePartitionLifecycleProperty(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		name := map[bool]string{false: "log", true: "key"}[keyed]
		t.Run(name, func(t *testing.T) {
			const seed = 4
			r := rand.New(rand.NewPCG(seed, uint64(len(name))))
			db, _ := openDB(t, "sync=off&tiering=off")
			ddl := `CREATE TABLE t (id INT, v INT, p STRING) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`
			if keyed {
				ddl = `CREATE TABLE t (id INT, v INT, p STRING, PRIMARY KEY (p, id) NOT ENFORCED) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '2')`
			}
			mustExec(t, db, ddl)
			m := newLakeModel(keyed)
			lookup, err := db.Prepare(`SELECT id, v FROM t WHERE p = ? AND id = ?`)
			require.NoError(t, err)
			defer lookup.Close()
			parts := []string{"x", "y", "z"}
			steps := 160
			if testing.Short() {
				steps = 50
			}
			var history []string
			check := func() {
				for _, p := range parts {
					var got []string
					for _, row := range queryAll(t, db, `SELECT id, v FROM t WHERE p = ?`, p) {
						got = append(got, fmt.Sprintf("%d:%d", row[0], row[1]))
					}
					slices.Sort(got)
					if got == nil {
						got = []string{}
					}
					require.Equal(t, m.rows(p), got, "partition %s after:\n%s", p, strings.Join(history, "\n"))
				}
				if keyed {
					// A point lookup answers as the scan does, also in a
					// partition that is only in the lake or that was
					// created again over lake rows; and so does a
					// prepared one, whose plan is kept between calls.
					for _, p := range parts {
						want := map[string]bool{}
						for _, row := range m.rows(p) {
							want[row] = true
						}
						for id := range int64(8) {
							var got []string
							for _, row := range queryAll(t, db, `SELECT id, v FROM t WHERE p = ? AND id = ?`, p, id) {
								got = append(got, fmt.Sprintf("%d:%d", row[0], row[1]))
							}
							var prepared []string
							rows, err := lookup.Query(p, id)
							require.NoError(t, err)
							for rows.Next() {
								var gid, gv int64
								require.NoError(t, rows.Scan(&gid, &gv))
								prepared = append(prepared, fmt.Sprintf("%d:%d", gid, gv))
							}
							require.NoError(t, rows.Err())
							rows.Close()
							var expect []string
							for row := range want {
								if strings.HasPrefix(row, fmt.Sprintf("%d:", id)) {
									expect = append(expect, row)
								}
							}
							require.Equal(t, expect, got, "lookup of %d in %s after:\n%s", id, p, strings.Join(history, "\n"))
							require.Equal(t, expect, prepared, "prepared lookup of %d in %s after:\n%s", id, p, strings.Join(history, "\n"))
						}
					}
				}
				var total int64
				require.NoError(t, db.QueryRow(`SELECT count(*) FROM t`).Scan(&total))
				want := 0
				for _, p := range parts {
					want += len(m.rows(p))
				}
				require.Equal(t, int64(want), total, "count(*) after:\n%s", strings.Join(history, "\n"))
			}
			for step := range steps {
				p := parts[r.IntN(len(parts))]
				switch k := r.IntN(10); {
				case k < 5:
					id, v := int64(r.IntN(8)), int64(step)
					mustExec(t, db, `INSERT INTO t VALUES (?, ?, ?)`, id, v, p)
					m.write(p, id, v)
					history = append(history, fmt.Sprintf("insert (%d, %d, %s)", id, v, p))
				case k < 6 && keyed:
					id := int64(r.IntN(8))
					mustExec(t, db, `DELETE FROM t WHERE p = ? AND id = ?`, p, id)
					m.delete(p, id)
					history = append(history, fmt.Sprintf("delete %d of %s", id, p))
				case k < 8:
					mustExec(t, db, `CALL sys.tier('t')`)
					m.tier()
					history = append(history, "tier")
				default:
					mustExec(t, db, fmt.Sprintf(`ALTER TABLE t DROP IF EXISTS PARTITION (p = '%s')`, p))
					m.drop(p)
					history = append(history, "drop "+p)
				}
				check()
			}
		})
	}
}

// TestPartitionNamedDashTiers: "-" is a valid partition value, and the
// lake's directory of no partition does not keep it from being tiered.
func TestPartitionNamedDashTiers(t *testing.T) {
	db, _ := openDB(t, "sync=off&tiering=off")
	mustExec(t, db, `CREATE TABLE d (id INT, p STRING) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO d VALUES (1, '-'), (2, '_'), (3, '-')`)
	mustExec(t, db, `CALL sys.tier('d')`)
	require.Equal(t, []int64{1, 3}, idsOf(t, db, "SELECT id FROM `d$lake` WHERE p = '-'"))
	require.Equal(t, []int64{1, 3}, idsOf(t, db, `SELECT id FROM d WHERE p = '-'`))
}

// A point lookup of a key in a partition dropped after it was tiered
// reads the lake, as a scan of the partition does, instead of answering
// "no row": in a transaction's view, through a prepared statement, and
// after a reopen (the catalog remembers which dropped partitions the lake
// still holds).
func TestLookupOfLakeOnlyPartition(t *testing.T) {
	db, dsn := openDB(t, "sync=off&tiering=off")
	mustExec(t, db, `CREATE TABLE t (id INT, p STRING, v STRING, PRIMARY KEY (p, id) NOT ENFORCED) PARTITIONED BY (p) WITH ('table.datalake.enabled' = 'true')`)
	mustExec(t, db, `INSERT INTO t VALUES (1, 'x', 'a'), (2, 'x', 'b')`)
	mustExec(t, db, `CALL sys.tier('t')`)
	mustExec(t, db, `ALTER TABLE t DROP PARTITION (p = 'x')`)
	want := [][]any{{int64(1), "x", "a"}}
	check := func(db *sql.DB) {
		t.Helper()
		require.Equal(t, want, queryAll(t, db, `SELECT * FROM t WHERE p = 'x' AND id = 1`))
		require.Equal(t, want, queryAll(t, db, `SELECT * FROM t WHERE p = ? AND id = ?`, "x", 1))
		tx, err := db.Begin()
		require.NoError(t, err)
		var v string
		require.NoError(t, tx.QueryRow(`SELECT v FROM t WHERE p = 'x' AND id = 1`).Scan(&v))
		require.Equal(t, "a", v)
		require.NoError(t, tx.Rollback())
		require.Empty(t, queryAll(t, db, `SELECT * FROM t WHERE p = 'x' AND id = 3`))
		require.Empty(t, queryAll(t, db, `SELECT * FROM t WHERE p = 'never' AND id = 1`))
	}
	check(db)
	require.NoError(t, db.Close())
	db, err := sql.Open("fluss", dsn)
	require.NoError(t, err)
	defer db.Close()
	check(db)
}
