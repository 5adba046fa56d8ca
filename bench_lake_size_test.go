package fluss_test

import (
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkKeyTableLakeSize tiers a key table of FLUSS_BENCH_ROWS rows
// (default 100,000) in 4 buckets 100 times, 10% of the rows updated
// before each round, with the default snapshot retention (10) and with 1,
// and reports the size of the lake on disk at the end against the size of
// the readable snapshot (MB-lake, MB-snapshot, and their ratio,
// x-snapshot): without expiry the lake would hold every round's files.
// Older snapshots are kept as undo files, the changed column of each
// updated row, so the lake holds the table plus about retention-1 rounds'
// changes. The rows a round updates are a contiguous run of ids or, in
// the random variant, a tenth of the ids spread over the key space (a
// residue class of a random offset each round); docs/lake-retention.md
// compares layouts on both.
//
//	go test -run X -bench BenchmarkKeyTableLakeSize -benchtime 1x .
func BenchmarkKeyTableLakeSize(b *testing.B) {
	n := benchRows(b, 100_000)
	for _, random := range []bool{false, true} {
		for _, retention := range []int{10, 1} {
			name := fmt.Sprintf("retention=%d", retention)
			if random {
				name = "random/" + name
			}
			b.Run(name, func(b *testing.B) { benchLakeSize(b, n, retention, random) })
		}
	}
}

func benchLakeSize(b *testing.B, n, retention int, random bool) {
	for range b.N {
		dir := filepath.Join(b.TempDir(), "db")
		db, err := sql.Open("fluss", dir+"?tiering=off&sync=off")
		require.NoError(b, err)
		_, err = db.Exec(`CREATE TABLE kv (id BIGINT, v BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.datalake.enabled' = 'true', 'bucket.num' = '4', 'table.datalake.snapshot.retention' = '` + fmt.Sprint(retention) + `')`)
		require.NoError(b, err)
		for lo := 0; lo < n; lo += 1000 {
			var vals []string
			for i := lo; i < min(lo+1000, n); i++ {
				vals = append(vals, fmt.Sprintf("(%d, 0, 'row %d of the benchmark')", i, i))
			}
			_, err := db.Exec(`INSERT INTO kv VALUES ` + strings.Join(vals, ", "))
			require.NoError(b, err)
		}
		tenth := max(n/10, 1)
		rng := rand.New(rand.NewPCG(1, 2))
		for r := 1; r <= 100; r++ {
			lo := (r * tenth) % n
			q, args := `UPDATE kv SET v = ? WHERE id >= ? AND id < ?`, []any{r, lo, lo + tenth}
			if random {
				// 101 of the 1,009 residues of id + lo (1,009 a prime,
				// lo drawn anew each round): a tenth of the rows, spread
				// over the key space.
				q, args = `UPDATE kv SET v = ? WHERE (id + ?) % 1009 < 101`, []any{r, rng.Int64N(1009)}
			}
			_, err := db.Exec(q, args...)
			require.NoError(b, err)
			_, err = db.Exec(`CALL sys.tier('kv')`)
			require.NoError(b, err)
		}
		var onDisk int64
		require.NoError(b, filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
				info, ierr := d.Info()
				if ierr != nil {
					return ierr
				}
				onDisk += info.Size()
			}
			return err
		}))
		var snapshot int64
		require.NoError(b, db.QueryRow("SELECT bytes FROM `kv$lake$snapshots` WHERE readable").Scan(&snapshot))
		require.NoError(b, db.Close())
		b.ReportMetric(float64(onDisk)/1e6, "MB-lake")
		b.ReportMetric(float64(snapshot)/1e6, "MB-snapshot")
		b.ReportMetric(float64(onDisk)/float64(snapshot), "x-snapshot")
	}
}
