package fluss_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkIndexLookup measures a prepared SELECT by a UNIQUE secondary
// index (byIndex) and, on the same table, by the primary key (byKey): the
// shape of the bench harness's T2, ux (id, email, v) of FLUSS_BENCH_ROWS
// rows (default 100,000) in 4 buckets.
//
//	go test -run X -bench BenchmarkIndexLookup -benchtime 200000x .
func BenchmarkIndexLookup(b *testing.B) {
	n := benchRows(b, 100_000)
	db, err := sql.Open("fluss", filepath.Join(b.TempDir(), "db")+"?sync=off&tiering=off")
	require.NoError(b, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE ux (id BIGINT, email STRING, v DOUBLE, PRIMARY KEY (id) NOT ENFORCED, UNIQUE KEY ux_email (email)) WITH ('bucket.num' = '4')`)
	require.NoError(b, err)
	email := func(i int64) string { return fmt.Sprintf("user%07d@example.com", i) }
	const per = 1000
	tx, err := db.Begin()
	require.NoError(b, err)
	ins, err := tx.Prepare("INSERT INTO ux VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", per), ", "))
	require.NoError(b, err)
	args := make([]any, 0, 3*per)
	for lo := int64(0); lo < int64(n); lo += per {
		args = args[:0]
		for i := lo; i < lo+per; i++ {
			args = append(args, i, email(i), float64(i)*0.5)
		}
		_, err := ins.Exec(args...)
		require.NoError(b, err)
	}
	require.NoError(b, ins.Close())
	require.NoError(b, tx.Commit())
	_, err = db.Exec(`CALL sys.kv_snapshot('ux')`)
	require.NoError(b, err)
	for _, c := range []struct {
		name, q string
		arg     func(int64) any
	}{
		{"byIndex", `SELECT v FROM ux WHERE email = ?`, func(i int64) any { return email(i) }},
		{"byKey", `SELECT v FROM ux WHERE id = ?`, func(i int64) any { return i }},
	} {
		b.Run(c.name, func(b *testing.B) {
			st, err := db.Prepare(c.q)
			require.NoError(b, err)
			defer st.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			keys := make([]int64, 1024)
			vals := make([]any, len(keys))
			for i := range keys {
				keys[i] = rng.Int64N(int64(n))
				vals[i] = c.arg(keys[i])
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			b.ResetTimer()
			var v float64
			for i := 0; i < b.N; i++ {
				k := i % len(keys)
				if err := st.QueryRow(vals[k]).Scan(&v); err != nil {
					b.Fatal(err)
				}
				if v != float64(keys[k])*0.5 {
					b.Fatalf("lookup of %v: v = %v", vals[k], v)
				}
			}
			b.StopTimer()
			reportCPU(b, cpu0)
		})
	}
}
