package fluss_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// A batch read of t$changelog honours scan.startup.mode as Fluss's docs
// describe it: [start, latest captured at planning).
func TestChangelogStartupModes(t *testing.T) {
	db, _ := openDB(t, "log.segment.file-size=1kb")
	mustExec(t, db, `CREATE TABLE kv (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket.num' = '2')`)
	var stmts []string
	for i := range 8 {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO kv VALUES (%d, 'a'), (%d, 'b%d')`, i, i%3, i))
	}
	commitSlowly(t, db, append(stmts, `DELETE FROM kv WHERE k = 1`)...)
	changes := changelogOf(t, db, "kv")
	offsets := func(hint string) []string {
		var out []string
		for _, r := range queryAll(t, db, "SELECT "+hint+" _change_type, _log_offset, k, v FROM `kv$changelog`") {
			out = append(out, fmt.Sprint(r...))
		}
		return out
	}
	var all []string
	for _, c := range changes {
		all = append(all, fmt.Sprint(append([]any{c.kind, c.offset}, c.row...)...))
	}
	require.ElementsMatch(t, all, offsets(""))
	require.ElementsMatch(t, all, offsets("/*+ OPTIONS('scan.startup.mode' = 'full') */"))
	require.ElementsMatch(t, all, offsets("/*+ OPTIONS('scan.startup.mode' = 'earliest') */"))
	require.Empty(t, offsets("/*+ OPTIONS('scan.startup.mode' = 'latest') */"))
	for _, ts := range commitTimes(changes) {
		for _, at := range []int64{ts - 1, ts, ts + 1} {
			var want []string
			for _, c := range changes {
				if c.ts >= at {
					want = append(want, fmt.Sprint(append([]any{c.kind, c.offset}, c.row...)...))
				}
			}
			got := offsets(fmt.Sprintf("/*+ OPTIONS('scan.startup.mode' = 'timestamp', 'scan.startup.timestamp' = '%d') */", at))
			require.ElementsMatch(t, want, got, "timestamp %d", at)
		}
	}

	_, err := db.Query("SELECT /*+ OPTIONS('scan.startup.mode' = 'timestamp') */ * FROM `kv$changelog`")
	require.ErrorIs(t, err, fluss.ErrInvalidOption)
	require.ErrorContains(t, err, "'scan.startup.timestamp' is required int 'TIMESTAMP' startup mode but missing.")
	future := time.Now().Add(time.Hour).UnixMilli()
	_, err = db.Query(fmt.Sprintf("SELECT /*+ OPTIONS('scan.startup.mode' = 'timestamp', 'scan.startup.timestamp' = '%d') */ * FROM `kv$changelog`", future))
	require.ErrorIs(t, err, fluss.ErrInvalidOption)
	require.ErrorContains(t, err, "is in the future")
	// A batch read of the table itself reads all of it: the options are
	// refused there, not ignored.
	_, err = db.Query("SELECT /*+ OPTIONS('scan.startup.mode' = 'latest') */ * FROM kv")
	require.ErrorIs(t, err, fluss.ErrUnsupported)
	require.ErrorContains(t, err, "'scan.startup.mode' applies to t$changelog; a batch read of fluss.kv reads the whole table")
	_, err = db.Query("SELECT /*+ OPTIONS('scan.startup.mode' = 'latest') */ * FROM kv WHERE k = 2")
	require.ErrorIs(t, err, fluss.ErrUnsupported, "a point lookup does not ignore it either")
}
