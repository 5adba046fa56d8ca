package fluss_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// binlogRows reads q's rows of t$binlog as "kind offset before after",
// the images as database/sql scans a ROW (a map) or <nil>.
func binlogRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err, q)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind string
		var off int64
		var ts time.Time
		var before, after any
		require.NoError(t, rows.Scan(&kind, &off, &ts, &before, &after))
		require.False(t, ts.IsZero())
		out = append(out, fmt.Sprintf("%s %d %v %v", kind, off, before, after))
	}
	require.NoError(t, rows.Err())
	return out
}

// Inserts, updates and deletes, each an update's -U and +U in one row at
// the -U's offset; the columns as Fluss has them; startup modes honoured.
func TestBinlogBatch(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=1")
	mustExec(t, db, `CREATE TABLE u (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO u VALUES (1, 'a'), (2, 'b')`)
	mustExec(t, db, `INSERT INTO u VALUES (1, 'c')`)
	time.Sleep(5 * time.Millisecond)
	from := time.Now()
	time.Sleep(5 * time.Millisecond)
	mustExec(t, db, `DELETE FROM u WHERE id = 2`)

	all := binlogRows(t, db, "SELECT * FROM `u$binlog`")
	require.Equal(t, []string{
		"insert 0 <nil> map[id:1 name:a]",
		"insert 1 <nil> map[id:2 name:b]",
		"update 2 map[id:1 name:a] map[id:1 name:c]",
		"delete 4 map[id:2 name:b] <nil>",
	}, all)

	cols, err := db.Query("SELECT * FROM `u$binlog` LIMIT 0")
	require.NoError(t, err)
	types, err := cols.ColumnTypes()
	require.NoError(t, err)
	var names []string
	for _, c := range types {
		names = append(names, c.Name()+" "+c.DatabaseTypeName())
	}
	require.NoError(t, cols.Close())
	require.Equal(t, []string{"_change_type STRING", "_log_offset BIGINT", "_commit_timestamp TIMESTAMP_LTZ", "before ROW<id BIGINT, name STRING>", "after ROW<id BIGINT, name STRING>"}, names)

	got := binlogRows(t, db, fmt.Sprintf("SELECT /*+ OPTIONS('scan.startup.mode' = 'timestamp', 'scan.startup.timestamp' = '%d') */ * FROM `u$binlog`", from.UnixMilli()))
	require.Equal(t, []string{"delete 4 map[id:2 name:b] <nil>"}, got)
	require.Empty(t, binlogRows(t, db, "SELECT /*+ OPTIONS('scan.startup.mode' = 'latest') */ * FROM `u$binlog`"))
	require.Equal(t, all, binlogRows(t, db, "SELECT /*+ OPTIONS('scan.startup.mode' = 'earliest') */ * FROM `u$binlog`"))

	// A projection and a WHERE over the binlog's own columns.
	rows, err := db.Query("SELECT _log_offset FROM `u$binlog` WHERE _change_type = 'update'")
	require.NoError(t, err)
	var offs []int64
	for rows.Next() {
		var o int64
		require.NoError(t, rows.Scan(&o))
		offs = append(offs, o)
	}
	require.NoError(t, rows.Close())
	require.Equal(t, []int64{2}, offs)

	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM `u$binlog`").Scan(&n))
	require.Equal(t, 4, n, "a read of no column counts the binlog's rows")
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM `u$binlog` WHERE before IS NOT NULL").Scan(&n))
	require.Equal(t, 2, n)

	// first_row tables are insert-only.
	mustExec(t, db, `CREATE TABLE fr (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row')`)
	mustExec(t, db, `INSERT INTO fr VALUES (1, 1), (2, 2)`)
	mustExec(t, db, `INSERT INTO fr VALUES (1, 9)`)
	require.Equal(t, []string{"insert 0 <nil> map[id:1 v:1]", "insert 1 <nil> map[id:2 v:2]"}, binlogRows(t, db, "SELECT * FROM `fr$binlog`"))
}

// Refusals: log tables, the WAL image, a split size hint (a binlog
// bucket is one split), writes.
func TestBinlogRefusals(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, `CREATE TABLE ev (id BIGINT NOT NULL)`)
	mustExec(t, db, `CREATE TABLE w (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.changelog.image' = 'WAL')`)
	mustExec(t, db, `CREATE TABLE u (id BIGINT NOT NULL, v INT, PRIMARY KEY (id) NOT ENFORCED)`)
	for q, want := range map[string]string{
		"SELECT * FROM `ev$binlog`": "$binlog is only supported for primary-key tables, and fluss.ev is a log table (read ev$changelog)",
		"SELECT * FROM `w$binlog`":  "writes the 'WAL' changelog image ('table.changelog.image'), whose updates have no update_before image to pair with",
		"SELECT /*+ OPTIONS('scan.max-records-per-split' = '10') */ * FROM `u$binlog`": "a binlog read reads each bucket as one split",
		"SELECT * FROM `u$binlogs`": "$binlogs is no virtual table (known: $changelog, $binlog, $lake, $lake$snapshots)",
	} {
		rows, err := db.Query(q)
		if err == nil {
			err = rows.Close()
		}
		require.ErrorContains(t, err, want, q)
	}
	_, err := db.Exec("INSERT INTO `u$binlog` VALUES ('insert', 0, NOW(), NULL, NULL)")
	require.ErrorContains(t, err, "virtual tables are read-only")
}

// Differential: random inserts, upserts and deletes; t$binlog equals
// t$changelog with each -U and the +U after it folded into one update.
func TestBinlogMatchesChangelog(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=1")
	mustExec(t, db, `CREATE TABLE u (id BIGINT NOT NULL, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)`)
	r := rand.New(rand.NewPCG(18, 7))
	for range 200 {
		id := r.IntN(20)
		switch r.IntN(4) {
		case 0:
			mustExec(t, db, `DELETE FROM u WHERE id = ?`, id)
		case 1:
			mustExec(t, db, `INSERT INTO u VALUES (?, ?), (?, ?)`, id, r.IntN(100), (id+1)%20, r.IntN(100))
		default:
			mustExec(t, db, `INSERT INTO u VALUES (?, ?)`, id, r.IntN(100))
		}
	}
	rows, err := db.Query("SELECT _change_type, _log_offset, id, v FROM `u$changelog`")
	require.NoError(t, err)
	type change struct {
		kind  string
		off   int64
		image string
	}
	var cl []change
	for rows.Next() {
		var c change
		var id int64
		var v sql.NullInt64
		require.NoError(t, rows.Scan(&c.kind, &c.off, &id, &v))
		img := fmt.Sprintf("map[id:%d v:%v]", id, v.Int64)
		if !v.Valid {
			img = fmt.Sprintf("map[id:%d v:<nil>]", id)
		}
		c.image = img
		cl = append(cl, c)
	}
	require.NoError(t, rows.Close())
	sort.Slice(cl, func(i, j int) bool { return cl[i].off < cl[j].off })
	var want []string
	for i := 0; i < len(cl); i++ {
		c := cl[i]
		switch c.kind {
		case "insert":
			want = append(want, fmt.Sprintf("insert %d <nil> %s", c.off, c.image))
		case "delete":
			want = append(want, fmt.Sprintf("delete %d %s <nil>", c.off, c.image))
		case "update_before":
			require.Less(t, i+1, len(cl))
			require.Equal(t, "update_after", cl[i+1].kind)
			want = append(want, fmt.Sprintf("update %d %s %s", c.off, c.image, cl[i+1].image))
			i++
		default:
			t.Fatalf("change %+v", c)
		}
	}
	got := binlogRows(t, db, "SELECT * FROM `u$binlog`")
	require.Equal(t, want, got)
	require.Greater(t, len(got), 100)
}

// Streaming: through database/sql and Subscribe, bounded too.
func TestBinlogStreaming(t *testing.T) {
	db, _ := openDB(t, "default.bucket.number=2")
	mustExec(t, db, `CREATE TABLE u (id BIGINT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED)`)
	mustExec(t, db, `INSERT INTO u VALUES (1, 'a')`)
	rows, _ := streamQuery(t, db, "earliest", "_change_type, before, after FROM `u$binlog`")
	require.Equal(t, []string{"insert <nil> map[id:1 name:a]"}, streamRows(t, rows, 1))
	mustExec(t, db, `INSERT INTO u VALUES (1, 'b')`)
	require.Equal(t, []string{"update map[id:1 name:a] map[id:1 name:b]"}, streamRows(t, rows, 1))
	mustExec(t, db, `DELETE FROM u WHERE id = 1`)
	require.Equal(t, []string{"delete map[id:1 name:b] <nil>"}, streamRows(t, rows, 1))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := subscribeT(t, ctx, db, "u$binlog", fluss.SubscribeOptions{Columns: []string{"_change_type", "_log_offset"}, Bounded: fluss.BoundedLatestOffset})
	var got []string
	for s.Next() {
		rec := s.RecordBatch()
		for i := range int(rec.NumRows()) {
			got = append(got, fmt.Sprintf("%s %d %s %d", rec.Column(0).(*array.String).Value(i), rec.Column(3).(*array.Int64).Value(i),
				rec.Column(5).(*array.String).Value(i), rec.Column(6).(*array.Int64).Value(i)))
		}
	}
	require.NoError(t, s.Err())
	require.Equal(t, []string{"+I 0 insert 0", "+U 1 update 1", "-D 3 delete 3"}, got,
		"the subscription's change type and offset follow the binlog row")
}
